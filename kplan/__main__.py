"""``python -m kplan`` runs the CLI."""

from kplan.cli.entry import main

main()
