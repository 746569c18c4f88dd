"""Bridges between warpspeed and other tools (each one a module that imports its tool only when used).

- :mod:`warpspeed.integrations.kernel_tuner`: rank a kernel_tuner ``tune_params`` space, restrict or order
  kernel_tuner's search by the model, and move rankings and measurements between the two tools' files.
"""
