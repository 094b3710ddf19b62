"""Default values shared by the library's signatures and the CLI (light: no heavy imports)."""

DEFAULT_PERMUTATIONS = 10_000
"""Resamples of the randomization and bootstrap tests."""

DEFAULT_SEED = 42
"""Seed of the randomization and bootstrap tests."""
