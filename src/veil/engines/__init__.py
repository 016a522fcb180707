"""Engines: where a table's records are read and counted.

* :class:`LocalEngine` (the default): the table in memory, every record counted with NumPy.
* :class:`SparkEngine`: the records stay in Apache Spark; one aggregation collects how many
  records hold each distinct row of the columns a task reads, and the local code measures,
  searches and draws on that summary, so the answers are the local engine's (see
  :mod:`veil.engines.spark`). Needs ``pip install "veil[spark]"``.

``engine=`` in :func:`read_dataset` (and ``engine:`` in a configuration, ``--engine`` on the
command line) picks one.
"""

from __future__ import annotations

from typing import Any, Mapping

from veil.engines.frequency import FrequencyDataset, WeightedColumn
from veil.engines.local import LocalEngine
from veil.errors import ParameterError

ENGINES = ("local", "spark")

__all__ = ["ENGINES", "FrequencyDataset", "LocalEngine", "SparkEngine", "WeightedColumn", "make_engine",
           "read_dataset"]


def __getattr__(name: str):
    # SparkEngine's modules load when it is first asked for: the local engine never needs them.
    if name == "SparkEngine":
        from veil.engines.spark import SparkEngine

        return SparkEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_engine(engine: Any = None, *, master: str = "local[*]", config: Mapping[str, Any] | None = None):
    """The engine ``engine`` names: ``None`` or ``"local"`` → :class:`LocalEngine`; ``"spark"`` →
    :class:`SparkEngine` at ``master`` with the Spark settings ``config``; an engine object as it is.

    Raises:
        ParameterError: an unknown engine name, or Spark asked for without PySpark installed.
    """
    if engine is None or engine == "local":
        return LocalEngine()
    if engine == "spark":
        from veil.engines.spark import SparkEngine

        return SparkEngine(master, config)
    if isinstance(engine, str):
        raise ParameterError(f"unknown engine {engine!r}; use 'local' or 'spark'.")
    return engine


def read_dataset(data, *, engine: Any = None, **roles):
    """Read a table for analysis with an engine.

    Args:
        data: a path or a frame (the local engine), or a path or Spark DataFrame (Spark).
        engine: ``"local"`` (default), ``"spark"`` or an engine object such as
            ``SparkEngine(master="spark://host:7077")``.
        **roles: ``quasi_identifiers``, ``sensitive``, ``identifying``, ``hierarchies``,
            ``orders``, ``missing_values``, ``delimiter``, ``also`` (see
            :meth:`LocalEngine.dataset`).

    Returns:
        A :class:`veil.Dataset` (for Spark, a summary of the records, see :mod:`veil.engines.spark`)
        that :func:`veil.check`, the anonymizers and the DP queries take as they are.

    Raises:
        ParameterError: an unknown engine, or Spark without PySpark.
    """
    return make_engine(engine).dataset(data, **roles)
