"""One thread against two (issue 12): where veil's work spreads over the cores, and what it gains.

Each step runs with ``VEIL_THREADS=1`` and then with ``VEIL_THREADS=2`` in this process (the
setting is read at each call), best of ``--repeat`` each, and the two results are compared: they
must be identical.

* **Encoding** ``--threads-rows`` records (Adult resampled, 10,000,000 by default) from a polars
  frame: a column per thread.
* **Reading the same rows from CSV**: Arrow's reader parses blocks on its threads (``use_threads``
  follows the setting), then the columns are encoded a column per thread.
* **Checking** the encoded table (``veil.check``: classes, count matrices, every model): keys,
  class ids and counts by blocks of rows on each thread.
* **Full-domain search** on Adult (8 quasi-identifiers, k = 5, 4 % suppression, loss) and on
  1,000,000 rows with k scaled to 166: the single-column bounds on a thread each, roll-ups of large
  count matrices a column per thread. The search itself (tagging, branch and bound) is a
  sequence of decisions, each depending on the last, so it stays on one thread.
* **OLH aggregation** (1,000,000 users over 1,024 values, ε = 1, seeded reports): blocks of users
  on each thread.

The results go to ``threads.json`` and ``threads.md``.
"""

from __future__ import annotations

import importlib.metadata
import os

import numpy as np

from harness import goal_lines, SEED, adult_rows_csv, fmt_ratio, fmt_time, machine, machine_sentence, read_adult_polars, resample, wrap
from timing import best_of, progress

ROWS = 10_000_000
QUASI_IDENTIFIERS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
SENSITIVE = "occupation"


def _with_threads(threads: int, fn):
    """``fn()`` with ``VEIL_THREADS`` set to ``threads``, the setting restored afterwards."""
    before = os.environ.get("VEIL_THREADS")
    os.environ["VEIL_THREADS"] = str(threads)
    try:
        return fn()
    finally:
        if before is None:
            del os.environ["VEIL_THREADS"]
        else:
            os.environ["VEIL_THREADS"] = before


def _compare(name: str, work, same, repeat: int) -> dict:
    """Time ``work`` on one thread and on two; ``same(a, b)`` says whether the results agree."""
    timings, results = {}, {}
    for threads in (1, 2):
        progress(f"threads: {name}, {threads}")
        timings[threads], results[threads] = _with_threads(threads, lambda: best_of(work, repeat))
    return {"step": name, "one_s": timings[1], "two_s": timings[2], "speedup": timings[1] / timings[2],
            "identical": bool(same(results[1], results[2]))}


def _same_dataset(a, b) -> bool:
    return all(np.array_equal(a.column(q).codes, b.column(q).codes)
               and a.column(q).labels.tolist() == b.column(q).labels.tolist()
               for q in a.quasi_identifiers + a.sensitive)


def run(repeat: int, rows: int = ROWS) -> dict:
    from veil import Dataset, KAnonymity, check
    from veil.anonymize import FullDomain
    from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, adult_csv, adult_hierarchies
    from veil.ldp import make_protocol

    progress(f"threads: building {rows:,} rows")
    frame = resample(read_adult_polars(), rows)
    path = adult_rows_csv(rows)
    steps = [
        _compare(f"encode {rows:,} rows from a frame",
                 lambda: Dataset(frame, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE), _same_dataset,
                 repeat),
        _compare(f"read and encode {rows:,} rows from CSV",
                 lambda: Dataset(path, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE, delimiter=";"),
                 _same_dataset, repeat),
    ]
    dataset = Dataset(frame, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE)
    steps.append(_compare(f"check {rows:,} rows (classes, counts, every model)", lambda: check(dataset).to_dict(),
                          lambda a, b: a == b, repeat))
    del dataset, frame

    qis = list(ADULT_QUASI_IDENTIFIERS) + ["salary-class"]
    hierarchies = adult_hierarchies()
    adult = Dataset(adult_csv(), quasi_identifiers=qis, sensitive=SENSITIVE, hierarchies=hierarchies, delimiter=";")
    large = Dataset(resample(read_adult_polars(), 1_000_000), quasi_identifiers=qis, sensitive=SENSITIVE,
                    hierarchies=hierarchies)
    found = lambda search: (search.result_.levels, search.result_.loss, search.result_.nodes_checked)  # noqa: E731
    for label, ds, k in (("Adult", adult, 5), ("1,000,000 rows", large, 166)):
        steps.append(_compare(f"full-domain search, {label} (k = {k}, 4 %)",
                              lambda ds=ds, k=k: FullDomain([KAnonymity(k)], suppression_limit=0.04).fit(ds),
                              lambda a, b: found(a) == found(b), repeat))

    olh = make_protocol("olh", 1.0, 1024)
    values = np.random.default_rng(SEED).integers(0, 1024, 1_000_000)
    reports = olh.perturb(values, rng=SEED)
    steps.append(_compare("OLH aggregation, 1,000,000 users × 1,024 values", lambda: olh.aggregate(reports),
                          np.array_equal, repeat))
    progress("")
    versions = {name: importlib.metadata.version(name) for name in ("veil", "numpy", "pyarrow")}
    return {"meta": {**machine(versions), "repeat": repeat, "rows": rows, "seed": SEED}, "steps": steps,
            "goals": [{"goal": "results identical on one thread and on two", "measured":
                       f"{sum(s['identical'] for s in steps)} of {len(steps)} steps identical",
                       "met": all(s["identical"] for s in steps)}]}


def terminal_report(results: dict) -> str:
    meta = results["meta"]
    out = [f"veil on one thread and on two, {meta['date']}", *wrap(machine_sentence(meta), ""),
           f"best of {meta['repeat']}", "", f"  {'step':<52}{'1 thread':>9}{'2 threads':>10}{'gain':>7}  same"]
    for s in results["steps"]:
        out.append(f"  {s['step'][:52]:<52}{fmt_time(s['one_s']):>9}{fmt_time(s['two_s']):>10}"
                   f"{fmt_ratio(s['speedup']):>7}  {'yes' if s['identical'] else 'NO'}")
    out += goal_lines(results["goals"])
    return "\n".join(out)


def markdown_report(results: dict) -> str:
    meta = results["meta"]
    out = ["## One thread against two", "", f"{machine_sentence(meta)}. Each step with `VEIL_THREADS=1`, then "
           f"`VEIL_THREADS=2`, best of {meta['repeat']}; the results of the two are compared. Reproduce with "
           "`python benchmarks/run.py --only threads`.", "",
           "| step | 1 thread | 2 threads | speed-up | same results |", "|---|---:|---:|---:|---|"]
    out += [f"| {s['step']} | {fmt_time(s['one_s'])} | {fmt_time(s['two_s'])} | {fmt_ratio(s['speedup'])} | "
            f"{'yes' if s['identical'] else 'NO'} |" for s in results["steps"]]
    out += ["", "Goals:", ""]
    out += [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**" for g in results["goals"]]
    return "\n".join(out) + "\n"
