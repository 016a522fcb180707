"""The Spark engine against the local engine on Adult resampled to millions of rows (issue 19).

For each size (``--spark-rows``, default 1M, 10M and 30M), Adult is resampled with replacement
(``numpy.random.default_rng(0)``) and written as one Parquet file, untimed. Both engines then run
the same tasks on it, each timed from the Parquet path to its answer or written release:

- **check**: read the table and measure the privacy models and the re-identification risk with
  :func:`veil.check` (threshold k = 5);
- **full-domain k = 5**: read, search the lattice (``FullDomain([KAnonymity(5)])``, no
  suppression), and write the release (shuffled, with the secure source) as CSV;
- **Mondrian k = 5**: read, partition (strict Mondrian) and write the release (shuffled) as CSV.
  On Spark twice: with its rounds on the collected summary of distinct rows (the default below
  ``SparkEngine.rounds_on_spark_above``) and with its rounds run level-synchronously on Spark
  (``rounds_on_spark_above=0``); the local engine once.

The local engine reads the whole table into memory; the Spark engine (``local[2]`` by default,
``--spark-master``) aggregates on Spark and writes the release with Spark as a folder of part
files. The run asserts that both engines give the same measured levels, the same chosen node and
the same Mondrian partitions. Quasi-identifiers: sex, age, race, marital-status, education,
native-country, workclass (ARX's hierarchies); sensitive: occupation. The load average is
recorded before each size, since the machine may be shared.

    python benchmarks/run.py --only spark [--spark-rows 1000000,10000000,30000000]
    python benchmarks/spark.py --rows 30000000 --keep [--tasks check,fulldomain]   # add a size

write ``spark.json`` and ``spark.md``. Needs ``pip install -e ".[spark]"`` and Java 17.
"""

from __future__ import annotations

import argparse
import json
import os
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

from harness import fmt_ratio, fmt_time, machine, read_adult_polars, resample, write_results
from timing import progress

K = 5
QUASI_IDENTIFIERS = list(ADULT_QUASI_IDENTIFIERS)
SENSITIVE = "occupation"
ROWS = (1_000_000, 10_000_000, 30_000_000)
MASTER = "local[2]"
# task → (label, runs on the local engine)
TASKS = {"check": ("check", True), "fulldomain": ("full-domain k = 5", True),
         "mondrian": ("Mondrian k = 5, rounds on the summary", True),
         "mondrian_rounds": ("Mondrian k = 5, rounds on Spark", False)}
RESULTS = Path(__file__).resolve().parent / "results"


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
        engine.write_release(algorithm.transform(ds, shuffle=True), out)
        answer = algorithm.result_.levels if task == "fulldomain" else algorithm.recoding()["partitions"]
    return time.perf_counter() - start, answer


def measure(rows: int, engines: dict, scratch: Path, tasks=tuple(TASKS)) -> dict:
    """The ``tasks`` on ``rows`` records with each engine; the local engine's answers are the reference."""
    path = scratch / f"adult-{rows}.parquet"
    resample(read_adult_polars(), rows).with_columns(pl.col("age").cast(pl.Int64)).write_parquet(path)
    figures = {"load_before": os.getloadavg()[0]}
    reference = {}
    for task, (_, on_local) in TASKS.items():
        if task not in tasks:
            continue
        runs = [("local", engines["local"])] if on_local else []
        runs.append(("spark", engines["rounds" if task == "mondrian_rounds" else "spark"]))
        for name, engine in runs:
            progress(f"{rows:,} rows: {task} on {name}")
            out = scratch / f"{task}-{name}-{rows}.csv"
            seconds, answer = run_task(engine, task, path, out)
            figures[f"{task} {name}"] = seconds
            if out.is_dir():
                shutil.rmtree(out)
            else:
                out.unlink(missing_ok=True)
            kind = "mondrian" if task == "mondrian_rounds" else task
            if kind in reference and reference[kind] != answer:
                raise SystemExit(f"{task} on {rows:,} rows: the engines disagree")
            reference.setdefault(kind, answer)
    path.unlink()
    figures["load_after"] = os.getloadavg()[0]
    return figures


def run(sizes=ROWS, master: str = MASTER, keep: dict | None = None, tasks=tuple(TASKS)) -> dict:
    """Measure ``tasks`` at every size (after an untimed warm-up on 10,000 rows); ``keep``: sizes
    measured before, carried over unless measured again."""
    import pyspark

    spark = SparkEngine(master, {"spark.ui.enabled": "false", "spark.driver.memory": "6g"})
    engines = {"local": LocalEngine(), "spark": spark,
               "rounds": SparkEngine(session=spark.session, rounds_on_spark_above=0)}
    results = {"meta": {**machine({"veil": veil.__version__, "pyspark": pyspark.__version__}), "master": master},
               "sizes": dict(keep or {})}
    with tempfile.TemporaryDirectory(prefix="veil-spark-bench-") as scratch:
        # Neither the JVM's start nor its first compilations are the engine's time on a table.
        progress("warming up Spark")
        measure(10_000, engines, Path(scratch), tasks)
        for rows in sizes:
            results["sizes"][str(rows)] = measure(rows, engines, Path(scratch), tasks)
    spark.session.stop()
    results["sizes"] = dict(sorted(results["sizes"].items(), key=lambda item: int(item[0])))
    return results


def table_rows(results: dict) -> list[list[str]]:
    """``[rows, task, local, Spark, Spark / local]`` per size and task (the rounds on Spark are
    compared with the local engine's Mondrian)."""
    out = []
    for rows, figures in results["sizes"].items():
        for task, (label, on_local) in TASKS.items():
            here = figures.get(f"{'mondrian' if task == 'mondrian_rounds' else task} local")
            there = figures.get(f"{task} spark")
            if there is None:
                continue
            out.append([f"{int(rows):,}", label, fmt_time(here) if here else "—", fmt_time(there),
                        fmt_ratio(there / here) if here else "—"])
    return out


def loads(results: dict) -> str:
    return "; ".join(f"{int(rows):,} rows {f['load_before']:.1f} before, {f['load_after']:.1f} after"
                     for rows, f in results["sizes"].items())


def terminal_report(results: dict) -> str:
    lines = [f"Spark ({results['meta']['master']}) against the local engine, Adult resampled (Parquet):"]
    lines += ["  " + " | ".join(row) for row in table_rows(results)]
    lines.append(f"  load averages: {loads(results)}")
    return "\n".join(lines)


def markdown_report(results: dict) -> str:
    meta = results["meta"]
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    lines = ["# Spark engine against the local engine", "",
             f"Measured {meta['date']} on {meta['cpu']} ({meta['cores']} cores), Python {meta['python']}; "
             f"{versions}. Spark master {meta['master']}. Adult resampled (Parquet); quasi-identifiers "
             f"{', '.join(QUASI_IDENTIFIERS)}; sensitive {SENSITIVE}. Each figure is one run (after an untimed "
             "warm-up), from the Parquet path to the answer or the written, shuffled CSV release; the engines' "
             f"answers were checked identical. Load averages: {loads(results)}.", "",
             "| rows | task | local | Spark | Spark / local |", "|---:|---|---:|---:|---:|"]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows(results)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(str(r) for r in ROWS),
                        help="comma-separated table sizes (default 1000000,10000000,30000000)")
    parser.add_argument("--master", default=MASTER, help=f"the Spark master (default {MASTER})")
    parser.add_argument("--tasks", default=",".join(TASKS),
                        help=f"comma-separated tasks (default all: {','.join(TASKS)})")
    parser.add_argument("--keep", action="store_true",
                        help="keep the sizes already in OUT/spark.json that this run does not measure")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sizes = [int(part.replace("_", "")) for part in args.rows.split(",") if part.strip()]
    previous = args.out / "spark.json"
    keep = json.loads(previous.read_text(encoding="utf-8")).get("sizes") if args.keep and previous.exists() else None
    tasks = [task for task in args.tasks.split(",") if task.strip()]
    unknown = sorted(set(tasks) - set(TASKS))
    if unknown:
        parser.error(f"unknown task {unknown[0]!r}; the tasks are {', '.join(TASKS)}")
    results = run(sizes, args.master, keep, tasks)
    print(terminal_report(results))
    write_results(args.out, "spark", results, markdown_report(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
