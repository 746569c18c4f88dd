"""What is built on estimates: configuration spaces and rankings (with how sure a ranking is), what-if sweeps
of one device key, cross-GPU projections, and the whole-run time view."""
