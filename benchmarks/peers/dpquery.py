"""Tumult Analytics, OpenDP's polars front end and PipelineDP answering the grouped-query benchmark.

Each function runs in a fresh process of its peer's environment (``peer_env.py``: Tumult in
``.tumult-venv``, since it pins pandas < 2 and pyspark < 3.6; OpenDP and PipelineDP in
``.peers-venv``). It gets the workload (``spec``, made by ``benchmarks/dpquery.py``: the Parquet
file, the columns, ε, δ and the contribution bounds) and answers one query ``runs`` times, each
run from the Parquet file on disk to the released table in memory, the tool reading the file its
own way. It returns the seconds of each run, each run's cells (``{"key1\\tkey2": [values]}``), the
seconds its imports and its start-up took, and the peak resident memory of the process and its
children (a Spark JVM too). veil's side scores the cells.

The queries (``spec["query"]``): ``"a"`` count and mean of ``spec["value"]`` by ``spec["by"]`` with
the public keys ``spec["domains"]``; ``"b"`` the same with the keys selected privately (δ =
``spec["delta"]``); ``"c"`` the quantiles ``spec["quantiles"]`` of ``spec["qcol"]`` by
``spec["qby"]`` with public keys. Every person contributes at most ``max_rows_per_group`` rows to
at most ``max_groups`` groups.
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import time
import warnings

from treemem import PeakTreeMemory

from peers import versions

SEP = "\t"


def _key(values) -> str:
    return SEP.join(str(v) for v in values)


def _timed_runs(one_run, runs: int) -> list[dict]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        cells = one_run()
        out.append({"seconds": time.perf_counter() - start, "cells": cells})
    return out


# ------------------------------------------------------------------------------- Tumult Analytics

def tumult(spec: dict, runs: int) -> dict:
    """Tumult Analytics on a local Spark session (``local[2]``): ``Session.from_dataframe`` with
    ``AddRowsWithID(id)`` over ``spark.read.parquet``, the bounds as ``MaxGroupsPerID`` on each
    grouping column and ``MaxRowsPerGroupPerID``; one query per aggregate (Tumult answers one
    aggregate per query): count and average at ε/2 each (a), each quantile at ε/q (c); with
    private keys (b), ``get_groups`` at (ε/3, δ) and then count and average at ε/3 each on the
    groups it released."""
    memory = PeakTreeMemory().start()
    # Spark's Python workers must be this environment's Python, which has Tumult.
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    warnings.simplefilter("ignore")  # pyspark's deprecation warnings, once per query
    start = time.perf_counter()
    from pyspark.sql import SparkSession
    from tmlt.analytics import (
        AddRowsWithID,
        ApproxDPBudget,
        KeySet,
        MaxGroupsPerID,
        MaxRowsPerGroupPerID,
        PureDPBudget,
        QueryBuilder,
        Session,
    )
    import_s = time.perf_counter() - start
    start = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "12g")
             .config("spark.sql.shuffle.partitions", "4").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.warehouse.dir", os.path.join(tempfile.gettempdir(), "veil-dpquery-spark-warehouse"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    setup_s = time.perf_counter() - start
    eps, delta, q = spec["epsilon"], spec["delta"], spec["query"]
    by = spec["qby"] if q == "c" else spec["by"]
    lo, hi = spec["qbounds"] if q == "c" else spec["bounds"]

    def base():
        b = QueryBuilder("t")
        for column in by:
            b = b.enforce(MaxGroupsPerID(column, spec["max_groups"]))
        return b.enforce(MaxRowsPerGroupPerID(by[-1], spec["max_rows_per_group"]))

    def collect(frames, names):
        cells: dict[str, list] = {}
        for frame, name in zip(frames, names):
            for row in frame.toPandas().itertuples(index=False):
                d = row._asdict()
                cells.setdefault(_key(d[c] for c in by), [None] * len(names))[names.index(name)] = float(d[name])
        return cells

    def one_run():
        frame = spark.read.parquet(spec["path"])
        budget = ApproxDPBudget(eps, delta) if q == "b" else PureDPBudget(eps)
        session = Session.from_dataframe(privacy_budget=budget, source_id="t", dataframe=frame,
                                         protected_change=AddRowsWithID(spec["id"]))
        if q == "c":
            keys = KeySet.from_dict({c: spec["domains"][c] for c in by})
            share = eps / len(spec["quantiles"])
            names = [f"q{i}" for i in range(len(spec["quantiles"]))]
            frames = [session.evaluate(base().groupby(keys).quantile(spec["qcol"], p, lo, hi, name=n),
                                       PureDPBudget(share)) for p, n in zip(spec["quantiles"], names)]
            return collect(frames, names)
        if q == "b":
            groups = session.evaluate(base().get_groups(by), ApproxDPBudget(eps / 3, delta))
            keys = KeySet.from_dataframe(groups)
            share = ApproxDPBudget(eps / 3, 0)
        else:
            keys = KeySet.from_dict({c: spec["domains"][c] for c in by})
            share = PureDPBudget(eps / 2)
        count = session.evaluate(base().groupby(keys).count(name="count"), share)
        mean = session.evaluate(base().groupby(keys).average(spec["value"], lo, hi, name="mean"), share)
        return collect([count, mean], ["count", "mean"])

    timed = _timed_runs(one_run, runs)
    spark.stop()
    return {"versions": versions("tmlt.analytics", "tmlt.core", "pyspark", "pandas"), "import_s": import_s,
            "setup_s": setup_s, "runs": timed, "peak_bytes": memory.stop()}


# ------------------------------------------------------------------------------- OpenDP (polars)

def opendp(spec: dict, runs: int) -> dict:
    """OpenDP's polars front end: ``Context.compositor`` over ``pl.scan_parquet`` with the unit
    ``unit_of(contributions=1, identifier=id)``, each query truncated by
    ``truncate_num_groups(max_groups + 1, by, keep="first")`` (see the comment there) and
    ``truncate_per_group(max_rows_per_group, by)``.
    (a): two queries at ε/2 each, ``dp.len()`` and ``dp.mean(bounds)`` (a noisy sum over a noisy
    length at one scale), with the public keys (``with_keys``); (b): one query ``dp.len()`` and
    ``dp.mean`` at (ε, δ) whose keys OpenDP selects by thresholding the noisy length; (c): one query
    of ``dp.quantile`` per quantile (the exponential mechanism over the candidates, every whole
    number of the bounds) at ε over their sum."""
    memory = PeakTreeMemory().start()
    start = time.perf_counter()
    import opendp.prelude as dp
    import polars as pl
    dp.enable_features("contrib")
    warnings.simplefilter("ignore")
    import_s = time.perf_counter() - start
    eps, delta, q = spec["epsilon"], spec["delta"], spec["query"]
    by = spec["qby"] if q == "c" else spec["by"]
    lo, hi = spec["qbounds"] if q == "c" else spec["bounds"]
    keys = pl.DataFrame(list(itertools.product(*(spec["domains"][c] for c in by))), schema=by, orient="row")

    def one_run():
        context = dp.Context.compositor(
            data=pl.scan_parquet(spec["path"]), privacy_unit=dp.unit_of(contributions=1, identifier=spec["id"]),
            privacy_loss=dp.loss_of(epsilon=eps, delta=delta if q == "b" else None),
            split_evenly_over=2 if q == "a" else 1,
            # a public bound on a group's rows, which OpenDP needs to sum (10^8 exceeds every table here)
            margins=[dp.polars.Margin(by=by, max_length=10**8)])

        def query():
            # OpenDP 0.16's truncate_num_groups(k) filters on a dense rank, which starts at 1, with
            # "< k": it keeps k - 1 groups (none for k = 1) while its privacy analysis counts k. Asking
            # for max_groups + 1 keeps max_groups groups, and OpenDP calibrates its noise to one more
            # group than kept. keep="sample" fails outright in 0.16 (its ranking struct names a field
            # twice), so the groups kept are the first in key order; the persons here hold one.
            return (context.query().truncate_num_groups(spec["max_groups"] + 1, by=by, keep="first")
                    .truncate_per_group(spec["max_rows_per_group"], by=by).group_by(by))

        value = pl.col(spec["value"])
        if q == "a":
            frames = [query().agg(dp.len(signed=False).alias("count")).with_keys(keys).release().collect(),
                      query().agg(value.dp.mean((lo, hi)).alias("mean")).with_keys(keys).release().collect()]
            names = ["count", "mean"]
        elif q == "b":
            frames = [query().agg(dp.len(signed=False).alias("count"), value.dp.mean((lo, hi)).alias("mean"))
                      .release().collect()]
            names = ["count", "mean"]
        else:
            candidates = list(range(int(lo), int(hi) + 1))
            names = [f"q{i}" for i in range(len(spec["quantiles"]))]
            frames = [query().agg(*(pl.col(spec["qcol"]).dp.quantile(p, candidates).alias(n)
                                    for p, n in zip(spec["quantiles"], names))).with_keys(keys).release().collect()]
        cells: dict[str, list] = {}
        for frame in frames:
            for row in frame.iter_rows(named=True):
                slot = cells.setdefault(_key(row[c] for c in by), [None] * len(names))
                for i, n in enumerate(names):
                    if n in row and row[n] is not None:
                        slot[i] = float(row[n])
        return cells

    timed = _timed_runs(one_run, runs)
    return {"versions": versions("opendp", "polars"), "import_s": import_s, "setup_s": 0.0, "runs": timed,
            "peak_bytes": memory.stop()}


# ------------------------------------------------------------------------------- PipelineDP

def pipelinedp(spec: dict, runs: int) -> dict:
    """PipelineDP on its local backend (plain Python iterables): one ``DPEngine.aggregate`` with
    ``max_partitions_contributed`` and ``max_contributions_per_partition``, Laplace noise. (a) and
    (b): ``COUNT`` and ``MEAN`` together, which PipelineDP answers with two measurements at ε/2
    each (the mean's noisy count is also the count it releases); public partitions (a) or its
    private partition selection (b, ``LAPLACE_THRESHOLDING`` at δ, within the same ε); (c): every
    ``PERCENTILE`` from one quantile tree (Google's library through PyDP) at ε. The rows are read
    with pyarrow and handed over as tuples, which the local backend needs."""
    memory = PeakTreeMemory().start()
    start = time.perf_counter()
    import pipeline_dp
    import pyarrow.parquet as pq
    import_s = time.perf_counter() - start
    eps, delta, q = spec["epsilon"], spec["delta"], spec["query"]
    by = spec["qby"] if q == "c" else spec["by"]
    lo, hi = spec["qbounds"] if q == "c" else spec["bounds"]
    value = spec["qcol"] if q == "c" else spec["value"]
    public = list(itertools.product(*(spec["domains"][c] for c in by)))

    def one_run():
        table = pq.read_table(spec["path"], columns=[spec["id"], *by, value])
        rows = list(zip(*(table.column(c).to_pylist() for c in (spec["id"], *by, value))))
        accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=eps, total_delta=delta if q == "b" else 0)
        engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
        if q == "c":
            metrics = [pipeline_dp.Metrics.PERCENTILE(100 * p) for p in spec["quantiles"]]
        else:
            metrics = [pipeline_dp.Metrics.COUNT, pipeline_dp.Metrics.MEAN]
        params = pipeline_dp.AggregateParams(
            noise_kind=pipeline_dp.NoiseKind.LAPLACE, metrics=metrics, max_partitions_contributed=spec["max_groups"],
            max_contributions_per_partition=spec["max_rows_per_group"], min_value=lo, max_value=hi,
            partition_selection_strategy=pipeline_dp.PartitionSelectionStrategy.LAPLACE_THRESHOLDING)
        n = len(by)
        extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0],
                                                partition_extractor=lambda r: r[1:1 + n],
                                                value_extractor=lambda r: r[1 + n])
        result = engine.aggregate(rows, params, extractors, public_partitions=None if q == "b" else public)
        accountant.compute_budgets()
        cells = {}
        for key, metrics_tuple in result:
            d = metrics_tuple._asdict()
            if q == "c":
                cells[_key(key)] = [float(v) for v in d.values()]
            else:
                cells[_key(key)] = [float(d["count"]), float(d["mean"])]
        return cells

    timed = _timed_runs(one_run, runs)
    return {"versions": versions("pipeline-dp", "python-dp"), "import_s": import_s, "setup_s": 0.0, "runs": timed,
            "peak_bytes": memory.stop()}
