"""``python -m kplan`` runs the CLI."""

from kplan.cli.app import main

main()
