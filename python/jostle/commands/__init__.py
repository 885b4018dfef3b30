"""Subcommands of `jostle`, discovered by jostle.cli: one module per command."""
