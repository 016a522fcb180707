"""The local Spark session the Spark test modules share: started once per module, skipped with the
reason when Spark cannot start here (a failure under ``VEIL_REQUIRE_SERVICES=1``, as CI sets)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from veil.errors import ParameterError


def unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail under ``VEIL_REQUIRE_SERVICES=1`` (as CI sets)."""
    if os.environ.get("VEIL_REQUIRE_SERVICES") == "1":
        pytest.fail(f"VEIL_REQUIRE_SERVICES=1 but Spark is unavailable: {reason}", pytrace=False)
    pytest.skip(reason)


def java() -> str | None:
    """The java program Spark would run: JAVA_HOME's, else the one on PATH, else None."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def classic_session() -> Iterator:
    """Yield a classic local[2] session (the one the run already has, if any), stopped afterwards
    if this started it: the body of a module-scoped ``spark`` fixture."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        unavailable('PySpark is not installed (pip install "veil[spark]")')
    if java() is None:
        unavailable("Java is not installed (Spark needs Java 17 or later on PATH or in JAVA_HOME)")
    from pyspark.sql import SparkSession

    from veil.engines import SparkEngine

    had = SparkSession.getActiveSession()
    try:
        session = SparkEngine("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
                                           "spark.default.parallelism": "2"}).session
    except ParameterError as exc:
        unavailable(f"Spark did not start: {exc}")
    yield session
    if had is None:
        session.stop()
