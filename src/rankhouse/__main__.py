"""``python -m rankhouse`` runs the CLI (its help and errors name it ``rankhouse``)."""

from .cli import app

app(prog_name="rankhouse")
