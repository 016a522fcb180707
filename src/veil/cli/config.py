"""``veil config``: the configuration files themselves.

``veil config schema`` prints the JSON Schema (draft 2020-12) of veil's YAML configuration,
generated from the option tables the parser reads (:mod:`veil.config.schema`), so that an editor
completes and checks a file: ``veil config schema > veil.schema.json``. The same schema ships with
veil, and ``veil init`` names it on the first line of the file it writes
(``# yaml-language-server: $schema=…``).
"""

from __future__ import annotations

import sys

from veil.cli.console import command_group, fails_cleanly

config_app = command_group(no_args_is_help=True, help="The configuration files: their JSON Schema, for editors.")


@config_app.command("schema")
@fails_cleanly
def schema_command() -> None:
    """Print the JSON Schema of veil's configuration files (draft 2020-12).

    Save it (veil config schema > veil.schema.json) and name it on
    the first line of a YAML file, as veil init does
    (# yaml-language-server: $schema=veil.schema.json), or in the
    editor's settings: the editor then completes and checks the keys.
    """
    from veil.config import schema_text

    sys.stdout.write(schema_text())
