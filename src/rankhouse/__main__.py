"""``python -m rankhouse`` runs the CLI."""

from .cli import app

app()
