"""``python -m rankhouse`` runs the CLI (its help and errors name it ``rankhouse``)."""

from .cli.entry import main

main()
