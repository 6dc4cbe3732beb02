"""The kplan command line: typer commands, each thin, and output renderers."""
