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
``synth``           ``veil synth``: differentially private synthetic data (MST, AIM), its manifest and report
``dp``              ``veil dp count|sum|mean|quantile|histogram|query|budget|stream``
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

with routed_warnings():  # what Typer and Click warn of as they load
    import typer

    from veil.cli.console import command_group

# The commands, each imported (and built by Typer) only when it runs or its help is shown (see
# console.LazyCommand): name → (module, function). ``veil check`` loads no other command's module.
COMMANDS = {
    "check": ("veil.cli.check", "check_command"),
    "anonymize": ("veil.cli.anonymize", "anonymize_command"),
    "init": ("veil.cli.anonymize", "init_command"),
    "demo": ("veil.cli.anonymize", "demo_command"),
    "audit": ("veil.cli.audit", "audit_command"),
    "marginals": ("veil.cli.marginals", "marginals_command"),
    "synth": ("veil.cli.synth", "synth_command"),
    "report": ("veil.cli.report", "report_command"),
    "publish": ("veil.cli.ledger", "publish_command"),
    "serve": ("veil.cli.serve", "serve_command"),
}
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

app = command_group(lazy=GROUPS, commands=COMMANDS, no_args_is_help=True,
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


def main() -> None:
    """Run the ``veil`` command (the console script and ``python -m veil``)."""
    if not debug_mode():
        # The command routes warnings itself while it runs; this also keeps quiet what a package
        # warns of as the process ends (its garbage collected, its exit handlers run).
        warnings.simplefilter("ignore")
    app()


__all__ = ["app", "main"]
