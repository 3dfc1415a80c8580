"""The single place the package version lives (read by hatchling and the result cache)."""

__version__ = "0.1.0"
