"""``python -m rankhouse`` runs the CLI."""

from .entry import main

main()
