"""The options of ``veil dp query`` that no other ``veil dp`` command shares (the command is
declared in :mod:`veil.cli.dp`, beside the other queries, and runs in :mod:`veil.cli.dp_query`)."""

from __future__ import annotations

import typer

__all__ = ["QUERY_DATA", "QUERY_ENGINE", "QUERY_MASTER", "QUERY_OUT", "QUERY_SPEC"]

QUERY_DATA = typer.Argument(None, help="CSV or Parquet table to query (default: the specification's table); with "
                                       "the Spark engine, also a folder of part files.")
QUERY_SPEC = typer.Option(..., "--spec", help="The query specification (YAML or JSON; veil dp query-schema prints "
                                              "its JSON Schema).")
QUERY_OUT = typer.Option(..., "--out", help="Folder to write answers.csv (or .parquet) and manifest.json in.")
QUERY_ENGINE = typer.Option(None, "--engine", help="local or spark: where the table is read and the query counted "
                                                   "(default: the specification's engine, else local).")
QUERY_MASTER = typer.Option(None, "--master", help="The Spark master with the Spark engine (default: the "
                                                   "specification's, else local[*]): local[N], spark://HOST:PORT, "
                                                   "yarn.")
