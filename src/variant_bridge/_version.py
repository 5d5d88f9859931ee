"""The package version, in one place (the facade re-exports it; modules import it from here so
that nothing below the facade imports the facade)."""

__version__ = "0.1.0"
