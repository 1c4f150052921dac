"""The package version, in a module of its own so low layers (the manifest) can read it."""

__version__ = "0.1.0"
