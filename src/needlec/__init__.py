"""needlec: a declarative spec compiler and dataset publisher for needle-in-a-haystack benchmarks."""

__version__ = "0.1.0"
