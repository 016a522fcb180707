"""Benchmark of veil's optimal full-domain search beside ARX's, task by task, in one run.

Run from the repository root with the other benchmarks, or alone::

    python benchmarks/run.py --only arx [--repeat R] [--process-repeat P] [--arx DIR] [--out DIR]

ARX 3.9.2 (the reference Java anonymizer, built from its source) is a peer of its own kind: a Java
process, not a Python package, so it does not live in the peer environment. It is run by
subprocess through the small driver that ships beside its jars (``driver/Driver.java``, see the
README there), found in ``--arx DIR``, else ``$VEIL_ARX_HOME``, else ``shared/peers/arx`` next to
the repository or next to its parent folder. When Java or that folder is missing the report says
so and gives veil's figures alone.

Every task runs on the bundled Adult table (30,162 records) with 8 quasi-identifiers (sex, age,
race, marital-status, education, native-country, workclass, salary-class; ARX's hierarchies, a
lattice of 4,320 nodes) and occupation sensitive, both tools reading the very same files. Per task:

* **the optimal node** of each tool, its metric value and its suppressed records: they must agree
  (a disagreement is printed loudly and fails the goals);
* **nodes checked** by each (veil's ``SearchResult.nodes_checked``; ARX's
  ``getTransformationsChecked``);
* **the search**, in process and warm: veil's best of ``--repeat`` ``FullDomain.fit`` calls on the
  encoded table after one untimed fit (class building included), in a fresh Python process per
  task as ARX gets a fresh JVM per task; ARX's best of ``--repeat`` ``ARXResult.getTime()`` after
  its first (cold) run in the same JVM;
* **the whole process**, cold, best of ``--process-repeat``: ``veil anonymize --config`` (reading
  the CSV and the hierarchies, the search, writing the shuffled release and its manifest) against
  the ARX driver with one run (starting the JVM, reading, the search, writing the release), wall
  time and processor time (user + system, of the process and its threads).

Metrics are those whose definitions agree in both tools: discernibility (ARX's non-monotonic
``DM``: a kept class costs its size squared, a suppressed record the table's size) everywhere, and
non-uniform entropy without suppression (ARX's NUE ignores suppressed records). ARX's Loss is a
geometric mean over the quasi-identifiers with a generalization/suppression factor of 0.5, veil's
an arithmetic mean, so no task uses it. ARX's δ-disclosure takes logarithms to base 2 and veil's
natural ones: ARX's δ = 1.5 is veil's δ = 1.5 · ln 2.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import veil.models
from veil import Dataset
from veil.anonymize import FullDomain
from veil.config.schema import MODELS as MODEL_SCHEMAS
from veil.data.bundled import adult_csv, adult_hierarchies

from harness import fmt_ratio, fmt_time, goal_lines, machine, machine_sentence, wrap
from processes import veil_command
from timing import SAMPLES, progress

QUASI_IDENTIFIERS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
                     "salary-class"]
SENSITIVE = "occupation"
PROCESS_REPEAT = 3
# ARX's driver runs in a JVM with this heap (its README's command).
JAVA_HEAP = "-Xmx4g"
# The metric values of the two tools are sums of the same terms in another order.
VALUE_RTOL = 1e-9
SEARCH_GOAL = 1.0    # veil's search at least as fast as ARX's: ARX's time / veil's ≥ 1
PROCESS_GOAL = 2.0   # veil's whole process at least twice as fast as ARX's
ENVIRONMENT = "VEIL_ARX_HOME"


@dataclass(frozen=True)
class Task:
    """One anonymization both tools run.

    Attributes:
        key: the key in the results.
        label: the row label.
        models: veil's models as the configuration names them: ``(name, options)`` pairs.
        arx_models: the same models in the ARX driver's notation (``--model``).
        limit: the suppression limit, a share of the records.
        metric: veil's metric key.
        arx_metric: the ARX driver's name of the same metric.
    """

    key: str
    label: str
    models: tuple[tuple[str, dict], ...]
    arx_models: tuple[str, ...]
    limit: float
    metric: str = "discernibility"
    arx_metric: str = "dm-nonmono"

    @property
    def needs_sensitive(self) -> bool:
        return any(MODEL_SCHEMAS[name].needs_sensitive for name, _ in self.models)


def _sa(**options) -> dict:
    return {**options, "sensitive": SENSITIVE}


TASKS = (
    Task("k5_0", "k = 5, 0 %", (("k_anonymity", {"k": 5}),), ("k:5",), 0.0),
    Task("k5_4", "k = 5, 4 %", (("k_anonymity", {"k": 5}),), ("k:5",), 0.04),
    Task("entropy5_0", "entropy ℓ = 5, 0 %", (("entropy_l_diversity", _sa(l=5)),), ("entropy-l:5",), 0.0),
    Task("entropy5_4", "entropy ℓ = 5, 4 %", (("entropy_l_diversity", _sa(l=5)),), ("entropy-l:5",), 0.04),
    Task("recursive35_4", "recursive (3,5), 4 %", (("recursive_cl_diversity", _sa(c=3, l=5)),),
         ("recursive:3,5",), 0.04),
    Task("t_hier_0", "t = 0.2 hierarchical, 0 %",
         (("t_closeness", _sa(t=0.2, distance="hierarchical")),), ("t-hier:0.2",), 0.0),
    Task("t_hier_5", "t = 0.2 hierarchical, 5 %",
         (("t_closeness", _sa(t=0.2, distance="hierarchical")),), ("t-hier:0.2",), 0.05),
    Task("t_equal_4", "t = 0.2 equal, 4 %", (("t_closeness", _sa(t=0.2, distance="equal")),),
         ("t-equal:0.2",), 0.04),
    Task("delta_4", "δ = 1.5 bits, 4 %", (("delta_disclosure", _sa(delta=1.5 * math.log(2))),),
         ("delta-disclosure:1.5",), 0.04),
    Task("k5_0_nue", "k = 5, 0 %, NUE", (("k_anonymity", {"k": 5}),), ("k:5",), 0.0, "entropy", "entropy"),
    Task("entropy5_0_nue", "entropy ℓ = 5, 0 %, NUE", (("entropy_l_diversity", _sa(l=5)),),
         ("entropy-l:5",), 0.0, "entropy", "entropy"),
)


# ----------------------------------------------------------------------------------- finding ARX

def find_arx(explicit: Path | None = None) -> tuple[Path | None, str | None]:
    """ARX's folder (with ``driver/Driver.class`` and ``lib/``) and ``None``, or ``None`` and why not.

    Looked for in ``explicit``, else ``$VEIL_ARX_HOME``, else ``shared/peers/arx`` beside the
    repository and beside its parent folder (a worktree kept one level down).
    """
    if shutil.which("java") is None:
        return None, "was not run: no java on the PATH (ARX 3.9.2 needs Java 8 or later; Java 17 is tested)."
    root = Path(__file__).resolve().parents[1]
    if explicit is not None:
        candidates = [explicit]
    elif os.environ.get(ENVIRONMENT):
        candidates = [Path(os.environ[ENVIRONMENT])]
    else:
        candidates = [root.parent / "shared" / "peers" / "arx", root.parent.parent / "shared" / "peers" / "arx"]
    for folder in candidates:
        if (folder / "driver" / "Driver.class").is_file() and any((folder / "lib").glob("libarx-*.jar")):
            return folder.resolve(), None
    where = " or ".join(str(c) for c in candidates)
    return None, (f"was not run: no ARX driver found in {where} (a folder with driver/Driver.class and "
                  f"lib/libarx-*.jar); give --arx DIR or set ${ENVIRONMENT}.")


def arx_command(folder: Path, task: Task, runs: int, out: Path | None = None) -> list[str]:
    """The argument vector of ARX's driver for a task, ``runs`` anonymizations in one JVM."""
    classpath = os.pathsep.join([str(folder / "driver"), str(folder / "lib" / "*")])
    argv = ["java", JAVA_HEAP, "-cp", classpath, "Driver", "--data", str(adult_csv()),
            "--qi", ",".join(QUASI_IDENTIFIERS), "--supp", repr(task.limit), "--metric", task.arx_metric,
            "--repeats", str(runs)]
    for model in task.arx_models:
        argv += ["--model", model]
    if task.needs_sensitive:
        argv += ["--sa", SENSITIVE]
    if out is not None:
        argv += ["--out", str(out)]
    return argv


def parse_driver(text: str) -> dict:
    """The ``key=value`` lines the driver prints, as a dict of strings."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def arx_levels(printed: dict) -> list[int] | None:
    """ARX's optimal node as levels in ``QUASI_IDENTIFIERS`` order (``None`` when it found none)."""
    if printed.get("optimum") == "none" or "transformation_arx_order" not in printed:
        return None
    levels_text, names_text = printed["transformation_arx_order"].split("] [")
    levels = [int(v) for v in levels_text.strip("[] ").split(",")]
    names = [n.strip() for n in names_text.strip("[] ").split(",")]
    by_name = dict(zip(names, levels))
    return [by_name[q] for q in QUASI_IDENTIFIERS]


class ProcessFailed(RuntimeError):
    """A process exited with an error (the message quotes its standard error)."""


def timed_process(argv: list[str]) -> tuple[float, float, str]:
    """Run a process to its end: its wall time, its processor time (user + system, every thread
    and child of it) and its standard output.

    Raises:
        ProcessFailed: the process exited with a status other than 0.
    """
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise ProcessFailed(f"{' '.join(argv[:6])}… exited with {proc.returncode}: {proc.stderr.strip()[-600:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def whole_process(argv_of, repeat: int) -> dict:
    """Best, median and worst wall time and the best processor time of ``repeat`` cold runs;
    ``argv_of(folder)`` gives the argument vector writing its output into a fresh folder."""
    walls, cpus, printed = [], [], ""
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="veil-arx-bench-") as folder:
            wall, cpu, printed = timed_process(argv_of(Path(folder)))
        walls.append(wall)
        cpus.append(cpu)
    walls.sort()
    return {"best_s": walls[0], "median_s": walls[len(walls) // 2], "worst_s": walls[-1], "cpu_s": min(cpus),
            "runs": repeat, "_printed": printed}


def measure_arx(folder: Path, task: Task, repeat: int, process_repeat: int) -> dict:
    """ARX on one task: a JVM running ``repeat + 1`` anonymizations (the first cold), then
    ``process_repeat`` whole processes of one anonymization each.

    Raises:
        ProcessFailed: the driver failed.
    """
    progress(f"ARX: {task.label}, in process")
    _, _, stdout = timed_process(arx_command(folder, task, repeat + 1))
    printed = parse_driver(stdout)
    progress(f"ARX: {task.label}, whole process")
    process = whole_process(lambda out: arx_command(folder, task, 1, out / "release.csv"), process_repeat)
    warm = printed.get("arx_internal_time_warm_best_ms", "NA")
    return {"levels": arx_levels(printed),
            "value": float(printed["metric_value"]) if "metric_value" in printed else None,
            "suppressed": int(printed["suppressed"]) if "suppressed" in printed else None,
            "nodes_checked": int(printed["nodes_checked"]), "nodes_total": int(printed["nodes_total"]),
            "search_s": (int(warm) / 1000 if warm != "NA" else int(printed["arx_internal_time_cold_ms"]) / 1000),
            "search_cold_s": int(printed["arx_internal_time_cold_ms"]) / 1000,
            "anonymize_warm_s": (float(printed["anonymize_warm_best_ms"]) / 1000
                                 if printed.get("anonymize_warm_best_ms", "NA") != "NA" else None),
            "process": {k: v for k, v in process.items() if not k.startswith("_")}}


# ----------------------------------------------------------------------------------- veil's side

def make_dataset() -> Dataset:
    """The bundled Adult table with the benchmark's roles and every hierarchy."""
    files = adult_hierarchies()
    return Dataset(adult_csv(), quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE,
                   hierarchies={c: files[c] for c in QUASI_IDENTIFIERS + [SENSITIVE]}, delimiter=";")


def veil_models(task: Task) -> list:
    """veil's model objects for a task, built as the configuration builds them."""
    return [getattr(veil.models, MODEL_SCHEMAS[name].cls)(**options) for name, options in task.models]


def config_text(task: Task) -> str:
    """The YAML configuration of ``veil anonymize`` for a task (absolute paths to the bundled files)."""
    files = adult_hierarchies()

    def plain(value) -> str:
        return repr(value) if isinstance(value, float) else str(value)

    models = "\n".join(f"  - {name}: {{{', '.join(f'{k}: {plain(v)}' for k, v in options.items())}}}"
                       for name, options in task.models)
    hierarchies = "\n".join(f"  {c}: {{file: '{files[c]}'}}" for c in QUASI_IDENTIFIERS + [SENSITIVE])
    return (f"data: '{adult_csv()}'\ndelimiter: ';'\ncolumns:\n  quasi_identifiers: [{', '.join(QUASI_IDENTIFIERS)}]\n"
            f"  sensitive: [{SENSITIVE}]\nhierarchies:\n{hierarchies}\nmodels:\n{models}\n"
            f"suppression_limit: {task.limit!r}\nmetric: {task.metric}\nalgorithm: {{name: fulldomain}}\n")


def search_in_process(key: str, repeat: int) -> dict:
    """veil's search on one task in this process: read and encode Adult, one untimed fit, then
    ``repeat`` timed ones (best wall and processor time), and what the search found."""
    import gc

    task = next(t for t in TASKS if t.key == key)
    dataset = make_dataset()

    def fit() -> FullDomain:
        return FullDomain(veil_models(task), suppression_limit=task.limit, metric=task.metric).fit(dataset)

    fitted = fit()
    walls, cpus = [], []
    for _ in range(repeat):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        fitted = fit()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    result = fitted.result_
    return {"levels": list(result.levels), "value": result.loss, "suppressed": result.suppressed_records,
            "nodes_checked": result.nodes_checked, "nodes_total": result.nodes_total, "rows": dataset.num_rows,
            "proven_optimal": result.proven_optimal, "walls": walls, "search_s": min(walls), "search_cpu_s": min(cpus)}


def measure_veil(task: Task, repeat: int, process_repeat: int) -> dict:
    """veil on one task: the search in a fresh process of its own (as ARX gets a fresh JVM per
    task, so that no task runs in the memory another left), then ``process_repeat`` runs of
    ``veil anonymize`` as a new process."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    progress(f"veil: {task.label}, in process")
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        found = pool.submit(search_in_process, task.key, repeat).result()
    SAMPLES.append(found.pop("walls"))
    progress(f"veil: {task.label}, whole process")
    with tempfile.TemporaryDirectory(prefix="veil-arx-config-") as folder:
        config = Path(folder) / "task.yaml"
        config.write_text(config_text(task), encoding="utf-8")
        process = whole_process(lambda out: veil_command("anonymize", "--config", str(config), "--out",
                                                         str(out / "release.csv")), process_repeat)
    return {**found, "process": {k: v for k, v in process.items() if not k.startswith("_")}}


# ----------------------------------------------------------------------------------- comparing

def agreement(ours: dict, theirs: dict | None) -> str:
    """``"yes"`` when both tools chose the same node with the same value and suppressed records,
    ``"NODE DIFFERS"``, ``"VALUE DIFFERS"`` or ``"SUPPRESSION DIFFERS"`` otherwise, ``"—"``
    without ARX."""
    if not theirs:
        return "—"
    if theirs["levels"] != ours["levels"]:
        return "NODE DIFFERS"
    if theirs["value"] is None or not math.isclose(theirs["value"], ours["value"], rel_tol=VALUE_RTOL):
        return "VALUE DIFFERS"
    if theirs["suppressed"] != ours["suppressed"]:
        return "SUPPRESSION DIFFERS"
    return "yes"


def compare(row: dict) -> dict:
    """The ratios of one task (ARX's figure over veil's: above 1, veil is ahead)."""
    ours, theirs = row["veil"], row.get("arx")
    if not theirs:
        return {}
    return {"search": theirs["search_s"] / ours["search_s"],
            "process": theirs["process"]["best_s"] / ours["process"]["best_s"],
            "process_cpu": theirs["process"]["cpu_s"] / ours["process"]["cpu_s"],
            "nodes": theirs["nodes_checked"] / max(ours["nodes_checked"], 1)}


def goals(rows: list[dict]) -> list[dict]:
    """The audit's goals over every task, when ARX ran."""
    compared = [r for r in rows if r.get("ratios")]
    if not compared:
        return []
    worst_search = min(compared, key=lambda r: r["ratios"]["search"])
    worst_process = min(compared, key=lambda r: r["ratios"]["process"])
    disagreeing = [r["label"] for r in compared if r["agree"] != "yes"]
    return [
        {"goal": "both tools choose the same optimal node on every task",
         "measured": "all agree" if not disagreeing else f"DISAGREE on {', '.join(disagreeing)}",
         "met": not disagreeing},
        {"goal": "veil's search at least as fast as ARX's on every task (in process, warm)",
         "measured": f"worst {fmt_ratio(worst_search['ratios']['search'])} ({worst_search['label']})",
         "met": worst_search["ratios"]["search"] >= SEARCH_GOAL},
        {"goal": f"veil's whole process at least {PROCESS_GOAL:g}× faster than ARX's on every task",
         "measured": f"worst {fmt_ratio(worst_process['ratios']['process'])} ({worst_process['label']})",
         "met": worst_process["ratios"]["process"] >= PROCESS_GOAL},
    ]


def java_version() -> str | None:
    """The first line ``java -version`` prints (``None`` without Java)."""
    try:
        proc = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return lines[0] if lines else None


def run(repeat: int, process_repeat: int = PROCESS_REPEAT, arx: Path | None = None, only: list[str] | None = None) -> dict:
    """Measure every task (or those in ``only``) with both tools and return the results
    (times in seconds)."""
    folder, why_not = find_arx(arx)
    rows = []
    for task in TASKS:
        if only and task.key not in only:
            continue
        row = {"key": task.key, "label": task.label, "limit": task.limit, "metric": task.metric,
               "models": [[name, options] for name, options in task.models], "arx_models": list(task.arx_models),
               "arx_metric": task.arx_metric, "veil": measure_veil(task, repeat, process_repeat)}
        if folder is not None:
            try:
                row["arx"] = measure_arx(folder, task, repeat, process_repeat)
            except ProcessFailed as exc:
                row["arx_failed"] = str(exc)
        row["agree"] = agreement(row["veil"], row.get("arx"))
        row["ratios"] = compare(row)
        rows.append(row)
    progress("")
    versions = {name: importlib.metadata.version(name) for name in ("veil", "numpy")}
    if folder is not None:
        versions["ARX"] = "3.9.2"
        versions["Java"] = java_version() or "unknown"
    meta = {**machine(versions), "repeat": repeat, "process_repeat": process_repeat, "rows": rows[0]["veil"]["rows"] if rows else None,
            "quasi_identifiers": QUASI_IDENTIFIERS,
            "sensitive": SENSITIVE, "arx_folder": str(folder) if folder else None}
    results = {"meta": meta, "tasks": rows, "goals": goals(rows)}
    if why_not:
        results["arx_skipped"] = why_not
    return results


# ------------------------------------------------------------------------------- formatting

def fmt_node(levels) -> str:
    """A node as its levels in quasi-identifier order, run together (every level is below 10)."""
    return "—" if levels is None else "".join(str(v) for v in levels)


def rows_of(results: dict) -> list[dict]:
    """Per task, the cells both reports print."""
    out = []
    for row in results["tasks"]:
        ours, theirs, ratios = row["veil"], row.get("arx") or {}, row.get("ratios") or {}
        out.append({
            "label": row["label"], "node": fmt_node(ours["levels"]),
            "arx_node": fmt_node(theirs.get("levels")) if theirs else "—", "agree": row["agree"],
            "veil_nodes": f"{ours['nodes_checked']:,}",
            "arx_nodes": f"{theirs['nodes_checked']:,}" if theirs else "—",
            "veil_search": fmt_time(ours["search_s"]), "arx_search": fmt_time(theirs.get("search_s")),
            "search_ratio": fmt_ratio(ratios.get("search")),
            "veil_process": fmt_time(ours["process"]["best_s"]),
            "arx_process": fmt_time(theirs["process"]["best_s"]) if theirs else "—",
            "process_ratio": fmt_ratio(ratios.get("process")),
            "process_cpu_ratio": fmt_ratio(ratios.get("process_cpu"))})
    return out


def disagreements(results: dict) -> list[str]:
    """One loud sentence per task where the tools chose different nodes or values."""
    lines = []
    for row in results["tasks"]:
        if row["agree"] not in ("yes", "—"):
            ours, theirs = row["veil"], row["arx"]
            lines.append(f"!!! {row['label']}: {row['agree']}: veil chose {fmt_node(ours['levels'])} (value "
                         f"{ours['value']:.10g}, {ours['suppressed']} suppressed), ARX {fmt_node(theirs['levels'])} "
                         f"(value {theirs['value']}, {theirs['suppressed']} suppressed).")
    return lines


NOTES = [
    "Node: the level of each quasi-identifier in the order sex, age, race, marital-status, education, "
    "native-country, workclass, salary-class. Metric: discernibility (ARX's non-monotonic DM) unless the task "
    "says NUE (non-uniform entropy, both tools' definitions agree without suppression).",
    "Search: in process and warm, best of the repeats; veil's FullDomain.fit on the encoded table (class "
    "building included), ARX's own search time (ARXResult.getTime) after a cold run in the same JVM. Whole "
    "process: cold, best of the runs; veil anonymize --config (read, search, write the shuffled release) "
    "against ARX's driver with one anonymization (JVM start, read, search, write the release). Ratios are "
    "ARX's figure over veil's: above 1, veil is ahead.",
    "ARX's Loss (a geometric mean over the quasi-identifiers, generalization/suppression factor 0.5) and its "
    "NUE with suppression (suppressed records ignored) are defined otherwise than veil's loss and NUE, so no "
    "task uses them. ARX's δ-disclosure takes base-2 logarithms: its δ = 1.5 is veil's δ = 1.5 · ln 2.",
]


def terminal_report(results: dict) -> str:
    """The results as plain text for an 80-column terminal."""
    meta = results["meta"]
    out = [f"veil beside ARX: optimal full-domain search, {meta['date']}",
           f"{meta['cpu']}, {meta['cores']} cores, Python {meta['python']}",
           ", ".join(f"{k} {v}" for k, v in meta["versions"].items()),
           *wrap(f"Adult, {meta['rows']:,} rows; QIs {', '.join(meta['quasi_identifiers'])}; sensitive "
                 f"{meta['sensitive']}; search best of {meta['repeat']}, processes best of "
                 f"{meta['process_repeat']}", "  ")]
    if results.get("arx_skipped"):
        out += [""] + wrap(f"ARX {results['arx_skipped']}", "  ")
    rows = rows_of(results)
    out += ["", f"  {'task':<26}{'veil node':>10}{'ARX node':>10}{'agree':>7}{'checked':>9}{'ARX':>7}",
            "  " + "-" * 69]
    out += [f"  {r['label']:<26}{r['node']:>10}{r['arx_node']:>10}{r['agree'][:6]:>7}{r['veil_nodes']:>9}"
            f"{r['arx_nodes']:>7}" for r in rows]
    out += ["", f"  {'task':<26}{'search':>8}{'ARX':>8}{'×':>6}{'process':>9}{'ARX':>8}{'×':>6}{'cpu ×':>7}",
            "  " + "-" * 76]
    out += [f"  {r['label']:<26}{r['veil_search']:>8}{r['arx_search']:>8}{r['search_ratio']:>6}"
            f"{r['veil_process']:>9}{r['arx_process']:>8}{r['process_ratio']:>6}{r['process_cpu_ratio']:>7}"
            for r in rows]
    loud = disagreements(results)
    if loud:
        out += [""] + [line for text in loud for line in wrap(text, "    ")]
    out += ["", "Notes"] + [line for note in NOTES for line in wrap("  - " + note, "    ")]
    if results["goals"]:
        out += goal_lines(results["goals"])
    return "\n".join(out)


def markdown_report(results: dict) -> str:
    """The results as Markdown."""
    meta = results["meta"]
    out = ["## veil beside ARX: optimal full-domain search", "",
           f"{machine_sentence(meta)}. "
           f"Adult ({meta['rows']:,} rows), quasi-identifiers {', '.join(meta['quasi_identifiers'])} (a lattice of "
           f"4,320 nodes), sensitive {meta['sensitive']}. Search: best of {meta['repeat']}; whole processes: best of "
           f"{meta['process_repeat']}. Reproduce with `python benchmarks/run.py --only arx`."]
    if results.get("arx_skipped"):
        out += ["", f"ARX {results['arx_skipped']}"]
    out += ["", "| task | veil node | ARX node | agree | nodes checked, veil | ARX | search, veil | ARX | ARX / veil "
                "| process, veil | ARX | ARX / veil | processor time, ARX / veil |",
            "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    out += [f"| {r['label']} | {r['node']} | {r['arx_node']} | {r['agree']} | {r['veil_nodes']} | {r['arx_nodes']} | "
            f"{r['veil_search']} | {r['arx_search']} | {r['search_ratio']} | {r['veil_process']} | {r['arx_process']} | "
            f"{r['process_ratio']} | {r['process_cpu_ratio']} |" for r in rows_of(results)]
    loud = disagreements(results)
    if loud:
        out += [""] + [f"**{line}**" for line in loud]
    out += ["", "Notes:", ""] + [f"- {note}" for note in NOTES]
    if results["goals"]:
        out += ["", "Goals:", ""] + [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**"
                                     for g in results["goals"]]
    return "\n".join(out) + "\n"


def for_json(results: dict) -> dict:
    """The results as stored (they hold nothing but JSON already)."""
    return results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's own options, added to the shared command line."""
    parser.add_argument("--arx", type=Path,
                        help=f"ARX benchmark: ARX's folder (driver/ and lib/; default ${ENVIRONMENT}, else "
                             "shared/peers/arx beside the repository or its parent folder)")
    parser.add_argument("--process-repeat", type=int,
                        help=f"ARX benchmark: cold whole processes per tool and task (default {PROCESS_REPEAT})")
    parser.add_argument("--arx-tasks",
                        help="ARX benchmark: comma-separated task keys to run (default: all), "
                             + ", ".join(t.key for t in TASKS))
