"""The package version (pyproject.toml reads it here; nothing looks up metadata at start-up)."""

__version__ = "0.1.0"
