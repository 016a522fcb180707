"""The ``veil`` command line: one module per command group, the only code in veil that imports
Typer, Click or Rich.

==================  ===========================================================================
module              commands
==================  ===========================================================================
``check``           ``veil check``: every privacy model and the re-identification risk of a table
``anonymize``       ``veil anonymize``, ``veil init`` (a starter configuration), ``veil demo``
``attack``          ``veil attack single``, ``veil attack intersection``
``experiment``      ``veil experiment composition``, ``veil experiment tradeoff``, ``veil experiment alphabeta``
``dp``              ``veil dp count|sum|mean|quantile|histogram|budget|stream``
``alphabeta``       ``veil alphabeta estimate|parameters``: the αβ algorithm's view and parameters
``ldp``             ``veil ldp simulate``
``config``          ``veil config schema``: the JSON Schema of the configuration files
``console``         what every command shares: errors as one sentence, option parsing, progress
==================  ===========================================================================

Every error a user can cause is printed as one sentence on standard error with exit status 2;
no traceback, and no partial output file.
"""

from __future__ import annotations

import typer

from veil.cli.alphabeta import alphabeta_app
from veil.cli.anonymize import anonymize_command, demo_command, init_command
from veil.cli.attack import attack_app
from veil.cli.check import check_command
from veil.cli.config import config_app
from veil.cli.console import command_group
from veil.cli.dp import dp_app
from veil.cli.experiment import experiment_app
from veil.cli.ldp import ldp_app

app = command_group(no_args_is_help=True, help="Privacy-preserving data publishing: check, anonymize, attack, release.")


def _print_version(value: bool) -> None:
    if value:
        from veil import __version__

        typer.echo(f"veil {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print veil's version and exit."),
) -> None:
    """Privacy-preserving data publishing: check, anonymize, attack, release."""


app.command("check")(check_command)
app.command("anonymize")(anonymize_command)
app.command("init")(init_command)
app.command("demo")(demo_command)
app.add_typer(attack_app, name="attack", help="Attack a release as an adversary who knows the algorithm.")
app.add_typer(experiment_app, name="experiment", help="Reproduce the published experiments.")
app.add_typer(dp_app, name="dp", help="Answer queries under differential privacy, charging a budget.")
app.add_typer(ldp_app, name="ldp", help="Local differential privacy: frequency oracles, simulated or for real.")
app.add_typer(alphabeta_app, name="alphabeta",
              help="The αβ algorithm: answer counting queries from a view, choose α and β.")
app.add_typer(config_app, name="config", help="The configuration files: their JSON Schema, for editors.")


def main() -> None:
    """Run the ``veil`` command (the console script and ``python -m veil``)."""
    app()


__all__ = ["app", "main"]
