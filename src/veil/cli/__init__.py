"""The ``veil`` command line: one module per command group, the only code in veil that imports
Typer, Click or Rich.

==================  ===========================================================================
module              commands
==================  ===========================================================================
``check``           ``veil check``: every privacy model and the re-identification risk of a table
``anonymize``       ``veil anonymize``, ``veil init`` (a starter configuration), ``veil demo``
``attack``          ``veil attack single|intersection|minimality|matching|join|correspondence|presence``
``audit``           ``veil audit``: MAX, MIN and SUM queries answered or denied by an auditor
``experiment``      ``veil experiment composition|tradeoff|alphabeta|transparency|marginals|releases``
``marginals``       ``veil marginals``: anonymized marginals of a table, checked and published together
``dp``              ``veil dp count|sum|mean|quantile|histogram|budget|stream``
``alphabeta``       ``veil alphabeta estimate|parameters``: the αβ algorithm's view and parameters
``ldp``             ``veil ldp simulate|encode|collect``
``config``          ``veil config schema``: the JSON Schema of the configuration files
``ledger``          ``veil ledger init|status|history|verify|import``, ``veil publish`` (the gate)
``report``          ``veil report``, ``veil dp report``: a release's report, or DP answers', as one HTML page
``console``         what every command shares: errors as one sentence, option parsing, progress
==================  ===========================================================================

Every error a user can cause is printed as one sentence on standard error with exit status 2;
no traceback, and no partial output file. An error nobody foresaw (a bug) is one sentence too,
with exit status 70; warnings of the packages veil uses are not shown (``VEIL_DEBUG``, see
:mod:`veil.cli.debug`, shows both).
"""

from __future__ import annotations

import warnings

from veil.cli.debug import debug_mode, routed_warnings

with routed_warnings():  # what Typer, Click, Rich and the commands warn of as they load
    import typer

    from veil.cli.anonymize import anonymize_command, demo_command, init_command
    from veil.cli.audit import audit_command
    from veil.cli.check import check_command
    from veil.cli.console import command_group
    from veil.cli.ledger import publish_command
    from veil.cli.marginals import marginals_command
    from veil.cli.report import report_command

# The command groups, each imported only when it runs (see console.LazyGroup): name → (module,
# its Typer application, the help ``veil --help`` shows).
GROUPS = {
    "attack": ("veil.cli.attack", "attack_app", "Attack a release as an adversary who knows the algorithm."),
    "experiment": ("veil.cli.experiment", "experiment_app", "Reproduce the published experiments."),
    "dp": ("veil.cli.dp", "dp_app", "Answer queries under differential privacy, charging a budget."),
    "ldp": ("veil.cli.ldp", "ldp_app", "Local differential privacy: frequency oracles, simulated, or deployed with "
                                       "a client (encode) and a collector (collect)."),
    "alphabeta": ("veil.cli.alphabeta", "alphabeta_app",
                  "The αβ algorithm: answer counting queries from a view, choose α and β."),
    "config": ("veil.cli.config", "config_app", "The configuration files: their JSON Schema, for editors."),
    "ledger": ("veil.cli.ledger", "ledger_app", "The release ledger: what was published and spent, and its proof."),
}

app = command_group(lazy=GROUPS, no_args_is_help=True,
                    help="Privacy-preserving data publishing: check, anonymize, attack, release.")


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
app.command("audit")(audit_command)
app.command("marginals")(marginals_command)
app.command("report")(report_command)
app.command("publish")(publish_command)


def main() -> None:
    """Run the ``veil`` command (the console script and ``python -m veil``)."""
    if not debug_mode():
        # The command routes warnings itself while it runs; this also keeps quiet what a package
        # warns of as the process ends (its garbage collected, its exit handlers run).
        warnings.simplefilter("ignore")
    app()


__all__ = ["app", "main"]
