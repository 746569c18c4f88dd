"""The version of warpspeed (one place: the package metadata and every JSON document read it here)."""

__version__ = "0.1.0"
