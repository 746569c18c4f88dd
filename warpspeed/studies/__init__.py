"""What is built on estimates: configuration spaces and rankings (with how sure a ranking is), what-if sweeps
of one device key, cross-GPU projections, comparisons of candidate kernels, and the whole-run time view. They
take Kernel and Device objects, as the model does (warpspeed.application resolves names and reads the command
line's texts), and their words name no command-line option."""
