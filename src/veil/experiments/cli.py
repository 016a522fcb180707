"""``veil experiment``: reproductions of the published experiments, each writing a table (CSV and
Markdown) and a figure (PNG)."""

from veil.clitools import command_group
from veil.experiments.composition_cli import composition_command
from veil.experiments.tradeoff_cli import tradeoff_command

experiment_app = command_group(no_args_is_help=True, help="Reproduce the published experiments.")
experiment_app.command("composition")(composition_command)
experiment_app.command("tradeoff")(tradeoff_command)
