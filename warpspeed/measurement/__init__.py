"""The measured side: running kernels on a GPU (cupy timings, Nsight Compute counters), the measurement CSV,
measured-run projections, and how the model compares with measurements (validation) and is fitted to them
(calibration)."""
