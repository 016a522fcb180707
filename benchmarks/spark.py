"""The Spark engine against the local engine on Adult resampled to millions of rows (issue 19).

For each size (``--rows``, default 1M and 10M), Adult is resampled with replacement
(``numpy.random.default_rng(0)``) and written as one Parquet file, untimed. Both engines then run
the same three tasks on it, each task timed from the Parquet path to its answer or written release:

- **check**: read the table and measure every privacy model and the re-identification risk
  with :func:`veil.check` (threshold k = 5);
- **full-domain k = 5**: read, search the lattice (``FullDomain([KAnonymity(5)])``, no
  suppression), and write the release as CSV;
- **Mondrian k = 5**: read, partition (strict Mondrian) and write the release as CSV.

The local engine reads the whole table into memory; the Spark engine (``local[2]`` by default,
``--master``) aggregates the distinct rows on Spark and writes the release with Spark as a folder
of part files. The run also asserts that both engines give the same measured levels, the same
chosen node and the same Mondrian partitions. Quasi-identifiers: sex, age, race,
marital-status, education, native-country, workclass (ARX's hierarchies); sensitive: occupation.

    python benchmarks/spark.py --rows 1000000,10000000 --out benchmarks/results

writes ``spark.json`` and ``spark.md``. Needs ``pip install -e ".[spark]"`` and Java 17.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import polars as pl

import veil
from veil.anonymize import FullDomain, Mondrian
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, adult_hierarchies
from veil.engines import LocalEngine, SparkEngine
from veil.models import KAnonymity

from harness import cpu_model, fmt_ratio, fmt_time, read_adult_polars, resample, write_results
from timing import progress

K = 5
QUASI_IDENTIFIERS = list(ADULT_QUASI_IDENTIFIERS)
SENSITIVE = "occupation"
TASKS = ("check", "fulldomain", "mondrian")


def read(engine, path: Path):
    files = adult_hierarchies()
    return engine.dataset(str(path), quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE,
                          hierarchies={c: files[c] for c in QUASI_IDENTIFIERS + [SENSITIVE]})


def run_task(engine, task: str, path: Path, out: Path) -> tuple[float, object]:
    """Time one task from the Parquet path to its answer; return the seconds and what parity reads."""
    start = time.perf_counter()
    ds = read(engine, path)
    if task == "check":
        answer = veil.check(ds, k=K).to_dict()
    else:
        algorithm = FullDomain([KAnonymity(K)]) if task == "fulldomain" else Mondrian([KAnonymity(K)])
        algorithm.fit(ds)
        # Both engines keep the input order, so the timings compare like with like (Spark cannot shuffle yet).
        engine.write_release(algorithm.transform(ds, shuffle=False), out)
        answer = algorithm.result_.levels if task == "fulldomain" else algorithm.recoding()["partitions"]
    return time.perf_counter() - start, answer


def measure(rows: int, spark: SparkEngine, scratch: Path) -> dict:
    path = scratch / f"adult-{rows}.parquet"
    resample(read_adult_polars(), rows).with_columns(pl.col("age").cast(pl.Int64)).write_parquet(path)
    figures = {}
    for task in TASKS:
        answers = {}
        for name, engine in (("local", LocalEngine()), ("spark", spark)):
            progress(f"{rows:,} rows: {task} on {name}")
            out = scratch / f"{task}-{name}-{rows}.csv"
            seconds, answers[name] = run_task(engine, task, path, out)
            figures[f"{task} {name}"] = seconds
            if out.is_dir():
                shutil.rmtree(out)
            else:
                out.unlink(missing_ok=True)
        if answers["local"] != answers["spark"]:
            raise SystemExit(f"{task} on {rows:,} rows: the engines disagree")
    path.unlink()
    return figures


def markdown(results: dict) -> str:
    lines = ["# Spark engine against the local engine", "",
             f"Machine: {results['machine']}. Spark master {results['master']}, PySpark "
             f"{results['pyspark']}, veil {results['veil']}. Adult resampled (Parquet); quasi-identifiers "
             f"{', '.join(QUASI_IDENTIFIERS)}; sensitive {SENSITIVE}. Load average at the start "
             f"{results['load_average_at_start']:.1f}. Each figure is one run (after an untimed warm-up), from the "
             "Parquet path to the answer or the written CSV release; the engines' answers were checked "
             "identical.", "",
             "| rows | task | local | Spark | Spark / local |", "|---:|---|---:|---:|---:|"]
    for rows, figures in results["sizes"].items():
        for task in TASKS:
            here, there = figures[f"{task} local"], figures[f"{task} spark"]
            lines.append(f"| {int(rows):,} | {task} | {fmt_time(here)} | {fmt_time(there)} | "
                         f"{fmt_ratio(there / here)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000",
                        help="comma-separated table sizes (default 1000000,10000000)")
    parser.add_argument("--master", default="local[2]", help="the Spark master (default local[2])")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args(argv)
    sizes = [int(part.replace("_", "")) for part in args.rows.split(",") if part.strip()]
    spark = SparkEngine(args.master, {"spark.ui.enabled": "false", "spark.driver.memory": "6g"})
    import pyspark

    results = {"machine": f"{cpu_model()}, {platform.machine()}, Python {platform.python_version()}",
               "load_average_at_start": os.getloadavg()[0], "master": args.master, "pyspark": pyspark.__version__, "veil": veil.__version__, "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="veil-spark-bench-") as scratch:
        # Neither the JVM's start nor its first compilations are the engine's time on a table:
        # one untimed round on a small table first.
        progress("warming up Spark")
        measure(10_000, spark, Path(scratch))
        for rows in sizes:
            results["sizes"][str(rows)] = measure(rows, spark, Path(scratch))
            print(f"\n{rows:,} rows: " + ", ".join(f"{k} {fmt_time(v)}" for k, v in results["sizes"][str(rows)].items()))
    spark.session.stop()
    report = markdown(results)
    print(report)
    write_results(args.out, "spark", results, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
