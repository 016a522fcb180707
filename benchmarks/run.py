"""veil's benchmarks, each beside the peers a user would otherwise pick, in one command.

Run from the repository root::

    python benchmarks/run.py [--only checker|fulldomain|arx|local|attacks|dp|dpquery|synth|sdc|ldp|adversary|alphabeta|temporal|ledger|
                                    marginals|report|startup|memory|threads|workbench|spark]
                             [--quick] [--rows N] [--repeat R] [--workbench-rows N]
                             [--skip-pycanon] [--skip-anjana] [--skip-exhaustive] [--skip-anonypy]
                             [--curve-rows N] [--dp-rows N] [--skip-diffprivlib] [--skip-opendp]
                             [--dpquery-rows N] [--dpquery-queries a,b,c] [--dpquery-tools veil,...]
                             [--dpquery-large-tools veil,...]
                             [--synth-seeds N] [--synth-epsilons 0.1,1,10] [--synth-tools veil,smartnoise]
                             [--synth-mechanisms mst,aim] [--synth-cap S] [--synth-peer-aim-seeds N]
                             [--synth-peer-aim-epsilons 0.1,1,10] [--synth-peer-aim-degree 2|3]
                             [--spark-rows N,N,...] [--spark-master URL] [--out DIR]

Without ``--only`` every benchmark runs, in the order below. ``--quick`` checks that a run works
end to end in a few minutes: smaller tables, every veil figure measured once, the peers as in a
full run, and the files written to ``benchmarks/results-quick`` instead.

The peers run in an environment of their own (``peer_env.py``), which the first run that needs
it makes in ``benchmarks/.peers-venv`` from ``peers-requirements.txt``; each is measured by a
function of the ``peers`` package in a subprocess of that environment, and veil in this one, in
the same run.

**checker** (this file): every privacy model is measured on the bundled Adult table
(7 quasi-identifiers, sensitive occupation) and on Adult resampled with replacement to ``--rows``
records. Beside veil's times the same run measures pyCANON (on Adult) and
``polars.DataFrame.group_by(QIs).len()``, the least work any checker must do (the floor), and
prints the ratios; it also asks pyCANON again for every value stored in veil's agreement fixture
(``pycanon_fixture.py``). The results go to ``checker.json`` and ``checker.md`` in the output
folder.

**fulldomain** (``fulldomain.py``): optimal full-domain generalization beside ANJANA; see that
module. The results go to ``fulldomain.json`` and ``fulldomain.md``.

**arx** (``arx.py``): optimal full-domain search beside ARX 3.9.2's, a Java process run by
subprocess (``--arx DIR``, else ``$VEIL_ARX_HOME``, else ``shared/peers/arx`` beside the
repository), on the same tasks: the optimal node of each (they must agree), the nodes each
checks, the search in process and warm, and the whole process cold. The results go to
``arx.json`` and ``arx.md``.

**local** (``local_recoding.py``): Mondrian and MDAV beside AnonyPy's Mondrian, and Mondrian's
growth up to ``--curve-rows`` records (3,000,000 by default); see that module. ``--rows`` does not
apply to it. The results go to ``local_recoding.json`` and ``local_recoding.md``.

**attacks** (``attacks.py``): the intersection attack on pairs of Adult releases over 5,000
targets, and the composition experiment at its default settings. The results go to
``attacks.json`` and ``attacks.md``.

**dp** (``dp.py``): a DP histogram and a 3-way contingency table over ``--dp-rows`` rows
(10,000,000 by default) beside diffprivlib and OpenDP; see that module. The results go to
``dp.json`` and ``dp.md``.

**dpquery** (``dpquery.py``): grouped DP queries at the person level (count and mean by two keys
with public or private keys, five quantiles by one key) beside Tumult Analytics, OpenDP's polars
front end and PipelineDP, on Adult with a synthetic person ID and on ``--dpquery-rows`` rows (10M
by default); Tumult runs in an environment of its own (``.tumult-venv``). The results go to
``dpquery.json`` and ``dpquery.md``.

**synth** (``synth.py``): DP synthetic data, veil's MST and AIM beside smartnoise-synth's on Adult
discretized on public bins (ε 0.1, 1 and 10, δ = 1e-9, ``--synth-seeds`` runs each, every run a
whole process), scored by the total-variation distance on every 2- and 3-way marginal and NIST
SDNist's k-marginal score, with a bootstrap floor, independent columns and the Chow–Liu tree (no
noise) beside them; smartnoise-synth runs in an environment of its own (``.synth-venv``). The
results go to ``synth.json`` and ``synth.md``.

**sdc** (``sdc.py``): statistical disclosure control, veil alone (no peer runs here): sampling-weighted
individual and global risk on Adult and Adult resampled to 1M and 10M rows beside a polars group-by
of the keys, the population uniqueness estimators, SUDA2 with 5–8 key variables, greedy local
suppression to k = 3 and 5 beside record suppression, and the peak memory of ``veil check
--weight``. The results go to ``sdc.json`` and ``sdc.md``.

**ldp** (``ldp.py``): local-DP frequency oracles (OUE and OLH) beside pure-LDP at 100,000 users
over 64 values, secure and seeded, and at 1,000,000 users; see that module. The results go to
``ldp.json`` and ``ldp.md``.

**adversary** (``adversary.py``): query auditing, Ace and the minimality attack; see that module.
The results go to ``adversary.json`` and ``adversary.md``.

**temporal** (``temporal.py``): releases over time: Kellaris et al.'s adaptive w-event budgets
(BD, BA) beside the uniform split on a synthetic histogram stream, and the cost of Cao et al.'s
temporal leakage (the closed-form L(α) beside SciPy's linear program); see that module. The
results go to ``temporal.json`` and ``temporal.md``.

**ledger** (``ledger.py``): charges per second on SQLite from one process, and the publishing
gate's composition check of a new Adult release against 10 earlier ones. The results go to
``ledger.json`` and ``ledger.md``.

**marginals** (``marginals.py``): the max-ent estimate and KL-divergence of five anonymized
marginals, and the greedy search, on Adult. The results go to ``marginals.json`` and
``marginals.md``.

**report** (``report.py``): the HTML report of the ``veil demo`` release of Adult, from its
manifest, from the release in memory, and as a ``veil report`` process. The results go to
``report.json`` and ``report.md``.

**startup** (``startup.py``): ``veil check`` and ``veil --help`` as whole processes beside a bare
polars script and the framework's floor, a one-off check of ``--one-off-rows`` records, and the
encoding of ``--encode-rows`` records. The results go to ``startup.json`` and ``startup.md``.

**memory** (``memory.py``): the peak memory of ``veil check`` and of Mondrian and full-domain
releases on ``--memory-rows`` records, by ``/usr/bin/time -v``. The results go to ``memory.json``
and ``memory.md``.

**threads** (``threads.py``): veil's multithreaded steps on one thread and on two, on
``--threads-rows`` records, with their results compared. The results go to ``threads.json`` and
``threads.md``.

**workbench** (``workbench.py``): the browser workbench, a real ``veil serve`` process driven over
HTTP (urllib, its cookie and CSRF tokens): its cold start beside ``veil --help``, the steward's
path on Adult (upload, confirm, roles, hierarchies, the demo's models) and its runs beside ``veil
anonymize`` on the project's configuration, the pages' latency, the latency of the project page
and of a run's status JSON while runs work on ``--workbench-rows`` records (1,000,000) and when
idle, and the peak memory of the server and its worker beside ``veil anonymize``. No peer can be
driven (ARX's GUI and sdcApp are interactive), so the figures are ratios to veil's command line.
The results go to ``workbench.json`` and ``workbench.md``.

**spark** (``spark.py``): the Spark engine (``local[2]``) against the local engine on Adult
resampled to ``--spark-rows`` records (default 1M, 10M and 30M) in Parquet: check, full-domain
and Mondrian k = 5. Needs PySpark and Java 17. The results go to ``spark.json`` and ``spark.md``.

Run into the default results folder, every benchmark also rewrites its block (on the site's
Benchmarks page, ``docs/benchmarks.md``, or the guide it belongs to) and the README's summary from
its results file (``readme.py``).
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import math
import multiprocessing
import os
import platform
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl

import veil
from veil import (AlphaKAnonymity, BetaLikeness, Dataset, DeltaDisclosure, DistinctLDiversity,
                  EntropyLDiversity, EquivalenceClasses, KAnonymity, PrivacyModel,
                  RecursiveCLDiversity, TCloseness)
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, adult_csv, adult_hierarchies

import adversary
import alphabeta
import arx
import attacks
import dp
import dpquery
import fulldomain
import ldp
import ledger
import local_recoding
import marginals
import memory
import peer_env
import pycanon_fixture
import readme
import report
import sdc
import startup
import synth
import temporal
import spark
import threads
import workbench
from harness import (goal_lines, SEED, cpu_model, fmt_ratio, fmt_time, fmt_value, positive_int, read_adult_polars, resample,
                     with_peer_versions, wrap, write_results)
import timing
from timing import best_of, progress

QUASI_IDENTIFIERS = list(ADULT_QUASI_IDENTIFIERS)
SENSITIVE = "occupation"
BENCHMARKS = ("checker", "fulldomain", "arx", "local", "attacks", "dp", "dpquery", "synth", "sdc", "ldp", "adversary", "alphabeta", "temporal", "ledger",
              "marginals", "report", "startup", "memory", "threads", "workbench", "spark")
# The goals: every model together on Adult, and each model on the large table.
ADULT_GOAL_S = 0.2
FLOOR_GOAL_RATIO = 3.0
RESULTS = Path(__file__).resolve().parent / "results"
# The sizes and repeats of a full run, and of a --quick one.
DEFAULTS = {"rows": 1_000_000, "repeat": 5, "dp_rows": dp.ROWS, "dpquery_rows": dpquery.ROWS,
            "curve_rows": local_recoding.CURVE_ROWS[-1],
            "one_off_rows": startup.ONE_OFF_ROWS, "encode_rows": startup.ENCODE_ROWS, "memory_rows": memory.ROWS,
            "threads_rows": threads.ROWS, "workbench_rows": workbench.ROWS, "spark_rows": ",".join(str(r) for r in spark.ROWS),
            "synth_seeds": synth.SEEDS, "synth_peer_aim_seeds": synth.PEER_AIM_SEEDS,
            "synth_peer_aim_epsilons": ",".join(f"{e:g}" for e in synth.PEER_AIM_EPSILONS), "out": RESULTS}
QUICK = {"rows": 50_000, "repeat": 1, "dp_rows": 500_000, "dpquery_rows": 300_000, "curve_rows": 300_000,
         "one_off_rows": 50_000,
         "encode_rows": 300_000, "memory_rows": 300_000, "threads_rows": 300_000, "workbench_rows": 100_000,
         "spark_rows": "100000",
         "synth_seeds": 1, "synth_peer_aim_seeds": 1, "synth_peer_aim_epsilons": "1", "out": RESULTS.parent / "results-quick"}
# Relative tolerance when veil's and pyCANON's floating-point levels are compared: both sum the
# same fractions in a different order.
AGREEMENT_RTOL = 1e-9


@dataclass(frozen=True)
class ModelSpec:
    """One privacy model as veil and pyCANON each compute it.

    Attributes:
        key: the key used in the JSON results.
        label: the row label (at most 24 characters, for an 80-column terminal).
        make: builds veil's model, measuring only (no threshold).
        peer: the name of pyCANON's function in ``pycanon.anonymity``, or ``None``.
        compare: what pyCANON's value is checked against: ``"same"`` (veil's level, up to
            rounding), ``"truncated"`` (veil's level truncated to an integer), ``"distinct"``
            (pyCANON returns (c, ℓ) whose ℓ is veil's distinct ℓ), ``"formula"`` (pyCANON's own
            formula evaluated on veil's count matrix) or ``"none"`` (no pyCANON function).
        note: a footnote for the values table, or ``""``.
    """

    key: str
    label: str
    make: Callable[[], PrivacyModel]
    peer: str | None
    compare: str = "same"
    note: str = ""


MODELS = (
    ModelSpec("k", "k-anonymity", KAnonymity, "k_anonymity"),
    ModelSpec("alpha", "(α,k)-anonymity", AlphaKAnonymity, "alpha_k_anonymity",
              note="pyCANON returns (α, k); α is compared."),
    ModelSpec("l_distinct", "distinct ℓ-diversity", DistinctLDiversity, "l_diversity"),
    ModelSpec("l_entropy", "entropy ℓ-diversity", EntropyLDiversity, "entropy_l_diversity",
              compare="truncated",
              note="pyCANON truncates entropy ℓ to an integer; veil reports exp(H) itself."),
    ModelSpec("c_l_recursive", "recursive (c,ℓ), c = 2", lambda: RecursiveCLDiversity(c=2),
              "recursive_c_l_diversity", compare="distinct",
              note="pyCANON returns (c, ℓ): ℓ is its distinct ℓ (checked against veil's) and c "
                   "is undefined (nan) when ℓ = 1; veil reports the largest ℓ that c = 2 allows."),
    ModelSpec("t_equal", "t-closeness, equal", lambda: TCloseness(distance="equal"), "t_closeness",
              note="pyCANON uses the equal-distance EMD for a text column such as occupation."),
    ModelSpec("t_hierarchical", "t-closeness, hierarchical", lambda: TCloseness(distance="hierarchical"),
              None, compare="none", note="pyCANON has no hierarchical-distance t-closeness."),
    ModelSpec("delta", "δ-disclosure", DeltaDisclosure, "delta_disclosure"),
    ModelSpec("beta_basic", "basic β-likeness", BetaLikeness, "basic_beta_likeness"),
    ModelSpec("beta_enhanced", "enhanced β-likeness", lambda: BetaLikeness(enhanced=True),
              "enhanced_beta_likeness", compare="formula",
              note="pyCANON's enhanced β is min(basic β, −ln min q), not Cao and Karras's "
                   "definition; 'agree' checks that formula on veil's count matrix."),
)


# ----------------------------------------------------------------------------------- measuring

def make_dataset(source) -> Dataset:
    """veil's Dataset of the benchmark roles over a CSV path or a frame (reads and encodes)."""
    return Dataset(source, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE,
                   hierarchies={SENSITIVE: adult_hierarchies()[SENSITIVE]}, delimiter=";")


def measure_floor(frame: pl.DataFrame, repeat: int) -> float:
    """Best time of the bare polars group-by over the quasi-identifiers."""
    seconds, _ = best_of(lambda: frame.group_by(QUASI_IDENTIFIERS).len(), repeat)
    return seconds


def pycanon_enhanced_formula(classes: EquivalenceClasses, beta_basic: float) -> float:
    """What pyCANON's enhanced β-likeness computes, from veil's counts: min(β, −ln min q).

    pyCANON takes, over the table frequencies q of the values, the largest min(basic β, −ln q);
    the largest −ln q is that of the rarest value.
    """
    reference = classes.sensitive[SENSITIVE].reference
    q = reference[reference > 0] / reference.sum()
    return min(beta_basic, float(-np.log(q.min())))


def measure_veil(source, repeat: int) -> dict:
    """Time veil on one table: loading and encoding, class building, each model, ``veil.check``.

    Each model is timed twice: evaluating prebuilt classes, and end to end (building the
    classes, then evaluating), which is the figure compared with the floor and with pyCANON,
    since both of those group the rows on every call.
    """
    progress("veil: load + encode")
    load_s, dataset = best_of(lambda: make_dataset(source), repeat)
    progress("veil: class building")
    classes_s, classes = best_of(lambda: EquivalenceClasses.from_dataset(dataset), repeat)
    models = {}
    for spec in MODELS:
        progress(f"veil: {spec.label}")
        model = spec.make()
        evaluate_s, result = best_of(lambda: model.evaluate(classes), repeat)
        end_to_end_s, _ = best_of(lambda: model.evaluate(EquivalenceClasses.from_dataset(dataset)),
                                  repeat)
        models[spec.key] = {"evaluate_s": evaluate_s, "end_to_end_s": end_to_end_s, "level": result.level}
    models["beta_enhanced"]["pycanon_formula_level"] = pycanon_enhanced_formula(
        classes, models["beta_basic"]["level"])
    progress("veil: veil.check")
    check_s, _ = best_of(lambda: veil.check(dataset), repeat)
    return {"rows": dataset.num_rows, "classes": classes.n_classes, "load_encode_s": load_s,
            "classes_s": classes_s, "check_s": check_s, "models": models}


def measure_pycanon() -> dict:
    """Time each pyCANON function once on Adult, in the peer environment (``peers/checker.py``),
    on the pandas frame ``pd.read_csv`` makes of the bundled file; return its versions and, per
    model, the function's time and raw value.

    Raises:
        peer_env.PeerError: the peer environment could not be made or pyCANON failed.
    """
    functions = [[spec.key, spec.peer, spec.make().needs_sensitive]  # pyCANON's k-anonymity takes no SA list
                 for spec in MODELS if spec.peer is not None]
    return peer_env.call("checker", "time_on_csv", csv=str(adult_csv()), quasi_identifiers=QUASI_IDENTIFIERS,
                         sensitive=[SENSITIVE], functions=functions)


def _proc_status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def memory_probe(rows: int) -> dict | None:
    """Peak resident memory veil adds on top of the large frame (runs in a fresh process).

    The frame is built first; then the kernel's high-water mark is reset to the current resident
    size (Linux ``/proc/self/clear_refs``), veil builds the Dataset and runs ``veil.check``, and
    the new high-water mark minus the resident size before is what veil needed. ``None`` where
    the mark cannot be reset.
    """
    frame = resample(read_adult_polars(), rows)
    gc.collect()
    try:
        before = _proc_status_kib("VmRSS")
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        return None
    veil.check(make_dataset(frame))
    peak = _proc_status_kib("VmHWM")
    return {"frame_bytes": int(frame.estimated_size()), "veil_peak_bytes": max(peak - before, 0) * 1024}


def measure_memory(rows: int) -> dict | None:
    """Run :func:`memory_probe` in a fresh interpreter so earlier runs do not mask the peak."""
    progress("veil: peak memory (separate process)")
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(memory_probe, rows).result()


# ------------------------------------------------------------------------------- agreement

def agreement(spec: ModelSpec, models: dict, peer_value) -> str:
    """``"yes"`` or ``"NO"``: whether pyCANON's value is what veil's figures predict."""
    level = models[spec.key]["level"]
    if spec.compare == "truncated":
        # The small slack keeps exp(log 3) = 2.9999999999999996 from truncating to 2.
        return "yes" if math.floor(level * (1 + AGREEMENT_RTOL)) == peer_value else "NO"
    if spec.compare == "distinct":
        return "yes" if peer_value[1] == models["l_distinct"]["level"] else "NO"
    if spec.compare == "formula":
        level = models[spec.key]["pycanon_formula_level"]
    if isinstance(peer_value, list):
        peer_value = peer_value[0]  # (α, k): α is the level
    same = level == peer_value or math.isclose(level, peer_value, rel_tol=AGREEMENT_RTOL)
    return "yes" if same else "NO"


# ------------------------------------------------------------------------------- formatting

def fmt_bytes(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def from_frame_s(block: dict) -> float:
    """veil from the unencoded table to every model's level: load + encode plus ``veil.check``
    (the sum of the two best times), the figure that starts where the floor starts."""
    return block["veil"]["load_encode_s"] + block["veil"]["check_s"]


def table_rows(block: dict) -> list[dict]:
    """One row per model plus one for ``veil.check``, with every figure the tables show.

    A row's ``mark`` numbers its footnote (see :func:`footnotes`); the values and the agreement
    are filled in only where pyCANON was run.
    """
    run, floor_s, peers = block["veil"], block["floor_s"], block.get("pycanon")
    rows, marks = [], 0
    for spec in MODELS:
        entry = run["models"][spec.key]
        peer = peers.get(spec.key) if peers else None
        if spec.note:
            marks += 1
        rows.append({
            "label": spec.label, "evaluate": entry["evaluate_s"], "end_to_end": entry["end_to_end_s"],
            "floor_ratio": entry["end_to_end_s"] / floor_s,
            "peer": peer["seconds"] if peer else None,
            "speedup": peer["seconds"] / entry["end_to_end_s"] if peer else None,
            "value": fmt_value(entry["level"]),
            "peer_value": fmt_value(peer["value"]) if peer else "—",
            "agree": agreement(spec, run["models"], peer["value"]) if peer else "—",
            "mark": f"[{marks}]" if spec.note else "",
        })
    peer_total = sum(p["seconds"] for p in peers.values()) if peers else None
    rows.append({"label": "all models (veil.check)", "evaluate": None, "end_to_end": run["check_s"],
                 "floor_ratio": run["check_s"] / floor_s, "peer": peer_total,
                 "speedup": peer_total / run["check_s"] if peers else None,
                 "value": "—", "peer_value": "—", "agree": "", "mark": ""})
    return rows


def footnotes() -> list[str]:
    """The footnotes of the values table, numbered as :func:`table_rows` marks them."""
    return [f"[{i}] {spec.note}" for i, spec in enumerate((s for s in MODELS if s.note), start=1)]


def fixture_summary(fixture: dict) -> str:
    """Whether pyCANON, asked again, still gives every value stored in veil's agreement fixture."""
    where = pycanon_fixture.FIXTURE.relative_to(pycanon_fixture.FIXTURE.parents[2])
    head = (f"pyCANON agreement fixture ({where}, stored by pyCANON {fixture['stored_versions']['pycanon']}): "
            f"pyCANON {fixture['live_versions']['pycanon']} asked again for its {fixture['values']:,} values "
            f"on {fixture['tables']} tables")
    if not fixture["changed"]:
        return f"{head} gives every one again, so veil's tests, which meet those values, hold against it."
    shown = "; ".join(fixture["changed"][:5])
    return (f"{head} gives {len(fixture['changed']):,} of them DIFFERENTLY ({shown}"
            f"{', …' if len(fixture['changed']) > 5 else ''}): run python benchmarks/pycanon_fixture.py "
            "and look at what changed.")


def terminal_report(results: dict) -> str:
    """The results as plain text that fits an 80-column terminal."""
    meta = results["meta"]
    out = [f"veil privacy-model checker benchmark, {meta['date']}",
           f"{meta['cpu']}, {meta['cores']} cores, Python {meta['python']}",
           *wrap(", ".join(f"{k} {v}" for k, v in meta["versions"].items()), ""),
           *wrap(f"QIs: {', '.join(QUASI_IDENTIFIERS)}", "     "),
           f"sensitive: {SENSITIVE} (with its hierarchy); veil: best of {meta['repeat']} "
           f"run{'s' if meta['repeat'] > 1 else ''}"]
    for block in (results["adult"], results["large"]):
        run = block["veil"]
        out += ["", f"{block['name']}: {run['rows']:,} rows, {run['classes']:,} classes",
                f"  load + encode (Dataset)  {fmt_time(run['load_encode_s']):>10}  "
                f"(from the {block['source']})",
                f"  class building           {fmt_time(run['classes_s']):>10}",
                f"  polars group_by (floor)  {fmt_time(block['floor_s']):>10}",
                f"  load + encode + check    {fmt_time(from_frame_s(block)):>10}  "
                f"({fmt_ratio(from_frame_s(block) / block['floor_s'])} the floor)"]
        if block.get("memory"):
            mem = block["memory"]
            out.append(f"  veil peak memory         {fmt_bytes(mem['veil_peak_bytes']):>10}  "
                       f"(above the {fmt_bytes(mem['frame_bytes'])} frame)")
        peers = bool(block.get("pycanon"))
        head = f"  {'model':<25}{'evaluate':>9}{'end-to-end':>11}{'/ floor':>8}"
        out += ["", head + (f"{'pyCANON':>9}{'veil faster':>14}" if peers else ""),
                "  " + "-" * (76 if peers else 53)]
        for row in table_rows(block):
            line = (f"  {row['label']:<25}{fmt_time(row['evaluate']):>9}{fmt_time(row['end_to_end']):>11}"
                    f"{fmt_ratio(row['floor_ratio']):>8}")
            if peers:
                line += f"{fmt_time(row['peer']):>9}{fmt_ratio(row['speedup']):>14}"
            out.append(line)
        if block.get("pycanon_skipped"):
            out += [""] + wrap(f"  pyCANON {block['pycanon_skipped']}", "  ")
    adult = results["adult"]
    if adult.get("pycanon"):
        out += ["", "Values on Adult, veil beside pyCANON",
                f"  {'model':<26}{'veil':>14}{'pyCANON':>16}  agree", "  " + "-" * 66]
        for row in table_rows(adult)[:-1]:
            out.append(f"  {row['label']:<26}{row['value']:>14}{row['peer_value']:>16}  "
                       f"{row['agree']} {row['mark']}".rstrip())
        out += [""] + [line for note in footnotes() for line in wrap("  " + note, "      ")]
    if results["fixture"]:
        out += [""] + wrap(fixture_summary(results["fixture"]), "  ")
    out += ["", "Notes"] + [line for note in results["notes"] for line in wrap("  - " + note, "    ")]
    out += goal_lines(results["goals"])
    return "\n".join(out)


def markdown_report(results: dict) -> str:
    """The results as Markdown tables, ready to paste into the README."""
    meta = results["meta"]
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    out = ["## Privacy-model checker benchmark", "",
           f"Measured {meta['date']} on {meta['cpu']} ({meta['cores']} cores), Python {meta['python']}, "
           f"{versions}. Quasi-identifiers: {', '.join(QUASI_IDENTIFIERS)}; sensitive: {SENSITIVE} "
           f"(with its hierarchy). veil's figures are the best of {meta['repeat']} run"
           f"{'s' if meta['repeat'] > 1 else ''}; pyCANON is "
           f"run once per function. *Evaluate* reads prebuilt classes; *end-to-end* builds the "
           f"classes, then evaluates; */ floor* divides veil's end-to-end time by a bare polars "
           f"`group_by(QIs).len()` over the same rows. Reproduce with `python benchmarks/run.py`."]
    for block in (results["adult"], results["large"]):
        run = block["veil"]
        summary = (f"Load + encode (`Dataset`, from the {block['source']}): "
                   f"{fmt_time(run['load_encode_s'])}; class building: {fmt_time(run['classes_s'])}; "
                   f"polars group-by floor: {fmt_time(block['floor_s'])}. Load + encode + `veil.check`: "
                   f"{fmt_time(from_frame_s(block))}, {fmt_ratio(from_frame_s(block) / block['floor_s'])} "
                   f"the floor.")
        if block.get("memory"):
            mem = block["memory"]
            summary += (f" Peak memory veil adds above the {fmt_bytes(mem['frame_bytes'])} frame: "
                        f"{fmt_bytes(mem['veil_peak_bytes'])}.")
        out += ["", f"### {block['name']}: {run['rows']:,} rows, {run['classes']:,} classes", "", summary]
        peers = bool(block.get("pycanon"))
        header = ["Model", "veil evaluate", "veil end-to-end", "/ floor"]
        if peers:
            header += ["pyCANON", "veil faster by", "veil value", "pyCANON value", "agree"]
        # Numbers are right-aligned; the model names and the agreement verdicts are text.
        align = ["---"] + ["---:"] * (len(header) - 1 - peers) + ["---"] * peers
        out += ["", "| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
        for row in table_rows(block):
            cells = [row["label"], fmt_time(row["evaluate"]), fmt_time(row["end_to_end"]),
                     fmt_ratio(row["floor_ratio"])]
            if peers:
                cells += [fmt_time(row["peer"]), fmt_ratio(row["speedup"]), row["value"], row["peer_value"],
                          f"{row['agree']} {row['mark']}".strip()]
            out.append("| " + " | ".join(cells) + " |")
        if block.get("pycanon_skipped"):
            out += ["", f"pyCANON {block['pycanon_skipped']}"]
    if results["adult"].get("pycanon"):
        out += ["", "Where veil's and pyCANON's values are defined differently:", ""]
        out += [f"- {note}" for note in footnotes()]
    if results["fixture"]:
        out += ["", fixture_summary(results["fixture"])]
    out += ["", "Notes:", ""] + [f"- {note}" for note in results["notes"]]
    out += ["", "Goals:", ""] + [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**"
                                 for g in results["goals"]]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------- the run

def versions(peer: dict[str, str]) -> dict[str, str]:
    """veil's environment's versions, then the peer environment's (``{}`` when pyCANON did not run)."""
    own = {name: importlib.metadata.version(name) for name in ("veil", "numpy", "pandas", "polars", "pyarrow")}
    return with_peer_versions(own, peer)


def goals(adult: dict, large: dict) -> list[dict]:
    """The issue's two goals, checked against this run's figures."""
    check_s = adult["veil"]["check_s"]
    ratios = {spec.label: large["veil"]["models"][spec.key]["end_to_end_s"] / large["floor_s"]
              for spec in MODELS}
    worst = max(ratios, key=ratios.get)
    return [
        {"goal": f"all models together on Adult under {ADULT_GOAL_S} s", "measured": fmt_time(check_s),
         "met": check_s < ADULT_GOAL_S},
        {"goal": f"each model on {large['veil']['rows']:,} rows within {FLOOR_GOAL_RATIO:g}× of the floor",
         "measured": f"worst {fmt_ratio(ratios[worst])} ({worst})", "met": ratios[worst] <= FLOOR_GOAL_RATIO},
    ]


def run(rows: int, repeat: int, skip_pycanon: bool) -> dict:
    """Measure everything and return the results (times in seconds)."""
    adult_polars = read_adult_polars()
    adult = {"name": "Adult", "source": "CSV file", "veil": measure_veil(adult_csv(), repeat),
             "floor_s": measure_floor(adult_polars, repeat)}
    peer_versions, fixture = {}, None
    if skip_pycanon:
        adult["pycanon_skipped"] = "skipped on request (--skip-pycanon)."
    else:
        try:
            timed = measure_pycanon()
            adult["pycanon"], peer_versions = timed["models"], timed["versions"]
            progress("pyCANON: the agreement fixture, again")
            fixture = pycanon_fixture.recheck()
        except peer_env.PeerError as exc:
            adult["pycanon_skipped"] = f"failed in the peer environment: {exc}"
    with_pycanon = "pycanon" in adult

    progress(f"building {rows:,} rows")
    frame = resample(adult_polars, rows)
    large = {"name": "Adult resampled", "source": "polars frame", "seed": SEED,
             "veil": measure_veil(frame, repeat), "floor_s": measure_floor(frame, repeat),
             "memory": measure_memory(rows)}
    progress("")
    same_classes = large["veil"]["classes"] == adult["veil"]["classes"]
    if with_pycanon:
        # Measured apart while this harness was written, on 1,000,000 resampled rows against
        # Adult: t-closeness 24.5 s vs 24.3 s, distinct ℓ 4.0 s vs 1.7 s, k 1.6 s vs 0.2 s. A run
        # here would add minutes and say little the Adult figures do not.
        large["pycanon_skipped"] = (
            "is timed on Adult only, to keep the run short. Its cost follows the number of "
            "classes (a pandas filter per class and sensitive value, in a Python loop) far more "
            "than the number of rows" + (", and this table has the same classes as Adult."
                                         if same_classes else "."))

    notes = [
        "End-to-end starts from the encoded Dataset; load + encode is paid once per table and "
        "shown apart. The floor groups a polars frame of text columns; pyCANON gets the pandas "
        "frame pd.read_csv makes of the same file.",
        "veil.check also measures ordered t-closeness where it applies and the re-identification "
        "risk." + (" pyCANON's total is the sum of its nine functions." if with_pycanon else ""),
    ]
    if same_classes:
        draws = rows / adult["veil"]["rows"]
        notes.append(f"Resampling keeps Adult's {adult['veil']['classes']:,} classes (each record is "
                     f"drawn {draws:,.1f} times on average), so the models evaluate count matrices of "
                     "the same size on both tables; what grows with the rows is loading and class "
                     "building.")
    if large["memory"] is None:
        notes.append("Peak memory was not measured: this system does not let a process reset its "
                     "high-water mark (/proc/self/clear_refs).")
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "cpu": cpu_model(),
            "cores": os.cpu_count(), "python": platform.python_version(), "versions": versions(peer_versions),
            "repeat": repeat, "rows": rows, "quasi_identifiers": QUASI_IDENTIFIERS, "sensitive": SENSITIVE}
    return {"meta": meta, "adult": adult, "large": large, "fixture": fixture, "notes": notes,
            "goals": goals(adult, large)}


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run the chosen benchmarks, print each report and write its result files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=BENCHMARKS, help="run this benchmark only (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="check that the run works: smaller tables (--rows 50,000, --dp-rows 500,000, "
                             "--curve-rows 300,000), every veil figure measured once, the peers as always; "
                             "the files go to benchmarks/results-quick (not for the README)")
    parser.add_argument("--rows", type=positive_int,
                        help="records in the resampled table of the checker and full-domain benchmarks "
                             "(default 1,000,000)")
    parser.add_argument("--repeat", type=positive_int,
                        help="runs per veil and floor figure; the best is kept (default 5)")
    parser.add_argument("--skip-pycanon", action="store_true",
                        help="checker benchmark: do not time pyCANON (the slow peer)")
    fulldomain.add_arguments(parser)
    arx.add_arguments(parser)
    local_recoding.add_arguments(parser)
    dp.add_arguments(parser)
    dpquery.add_arguments(parser)
    synth.add_arguments(parser)
    parser.add_argument("--one-off-rows", type=positive_int,
                        help=f"startup benchmark: records of the one-off check (default {startup.ONE_OFF_ROWS:,})")
    parser.add_argument("--encode-rows", type=positive_int,
                        help=f"startup benchmark: records encoded (default {startup.ENCODE_ROWS:,})")
    parser.add_argument("--memory-rows", type=positive_int,
                        help=f"memory benchmark: records of the table (default {memory.ROWS:,})")
    parser.add_argument("--threads-rows", type=positive_int,
                        help=f"threads benchmark: records of the table (default {threads.ROWS:,})")
    parser.add_argument("--workbench-rows", type=positive_int,
                        help=f"workbench benchmark: records of the large table (default {workbench.ROWS:,})")
    parser.add_argument("--spark-rows",
                        help="spark benchmark: comma-separated table sizes (default 1000000,10000000,30000000)")
    parser.add_argument("--spark-master", default=spark.MASTER,
                        help=f"spark benchmark: the Spark master (default {spark.MASTER})")
    parser.add_argument("--out", type=Path,
                        help="folder for <benchmark>.json and <benchmark>.md (default benchmarks/results)")
    args = parser.parse_args(argv)
    # An option given on the command line wins over both sets of defaults.
    for name, value in (QUICK if args.quick else DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, value)

    # name → (results file, how to run it, the JSON form of its results, its terminal and Markdown reports)
    benchmarks = {
        "checker": ("checker", lambda: run(args.rows, args.repeat, args.skip_pycanon), None,
                    terminal_report, markdown_report),
        "fulldomain": ("fulldomain",
                       lambda: fulldomain.run(args.rows, args.repeat, args.skip_anjana, args.skip_exhaustive),
                       fulldomain.for_json, fulldomain.terminal_report, fulldomain.markdown_report),
        "arx": ("arx", lambda: arx.run(args.repeat, args.process_repeat or (1 if args.quick else arx.PROCESS_REPEAT),
                                       args.arx, args.arx_tasks.split(",") if args.arx_tasks else None),
                arx.for_json, arx.terminal_report, arx.markdown_report),
        "local": ("local_recoding", lambda: local_recoding.run(args.repeat, args.skip_anonypy, args.curve_rows),
                  None, local_recoding.terminal_report, local_recoding.markdown_report),
        "attacks": ("attacks", lambda: attacks.run(args.repeat), None, attacks.terminal_report,
                    attacks.markdown_report),
        "dp": ("dp", lambda: dp.run(args.dp_rows, args.repeat, args.skip_diffprivlib, args.skip_opendp), None,
               dp.terminal_report, dp.markdown_report),
        "dpquery": ("dpquery", lambda: dpquery.run(args.dpquery_rows, args.dpquery_queries.split(","),
                                                    args.dpquery_tools.split(","),
                                                    large_tools=(args.dpquery_large_tools.split(",")
                                                                 if args.dpquery_large_tools else None)), None,
                    dpquery.terminal_report, dpquery.markdown_report),
        "synth": ("synth", lambda: synth.run(args.synth_seeds, [float(e) for e in args.synth_epsilons.split(",")],
                                             args.synth_tools.split(","), args.synth_mechanisms.split(","),
                                             args.synth_cap, args.synth_peer_aim_seeds, args.synth_peer_aim_degree,
                                             [float(e) for e in args.synth_peer_aim_epsilons.split(",")]),
                  None, synth.terminal_report, synth.markdown_report),
        "sdc": ("sdc", lambda: sdc.run(args.repeat, sdc.SIZES if not args.quick else (30_162, 200_000)), None,
                sdc.terminal_report, sdc.markdown_report),
        "ldp": ("ldp", lambda: ldp.run(args.repeat), None, ldp.terminal_report, ldp.markdown_report),
        "adversary": ("adversary", lambda: adversary.run(args.repeat), None, adversary.terminal_report,
                      adversary.markdown_report),
        "alphabeta": ("alphabeta", lambda: alphabeta.run(args.repeat), None, alphabeta.terminal_report,
                      alphabeta.markdown_report),
        "temporal": ("temporal", lambda: temporal.run(args.repeat), None, temporal.terminal_report,
                     temporal.markdown_report),
        "ledger": ("ledger", lambda: ledger.run(args.repeat), None, ledger.terminal_report, ledger.markdown_report),
        "marginals": ("marginals", lambda: marginals.run(args.repeat), None, marginals.terminal_report,
                      marginals.markdown_report),
        "startup": ("startup", lambda: startup.run(args.repeat, args.one_off_rows, args.encode_rows), None,
                    startup.terminal_report, startup.markdown_report),
        "memory": ("memory", lambda: memory.run(args.memory_rows), None, memory.terminal_report,
                   memory.markdown_report),
        "threads": ("threads", lambda: threads.run(args.repeat, args.threads_rows), None, threads.terminal_report,
                    threads.markdown_report),
        "report": ("report", lambda: report.run(args.repeat), None, report.terminal_report, report.markdown_report),
        "workbench": ("workbench", lambda: workbench.run(args.repeat, args.workbench_rows), None,
                      workbench.terminal_report, workbench.markdown_report),
        "spark": ("spark", lambda: spark.run([int(r.replace("_", "")) for r in args.spark_rows.split(",") if r.strip()],
                                             args.spark_master), None, spark.terminal_report, spark.markdown_report),
    }
    chosen = [args.only] if args.only else list(BENCHMARKS)
    # What ties every results file to this run, and how busy the machine was around each benchmark
    # (it may be shared with other jobs): the README's summary reports both.
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    command = " ".join(["python", "benchmarks/run.py", *(argv if argv is not None else sys.argv[1:])])
    for i, name in enumerate(chosen):
        filename, execute, for_json, terminal, markdown = benchmarks[name]
        if i:
            print()
        load_before, mark = os.getloadavg()[0], len(timing.SAMPLES)
        results = execute()
        print(terminal(results))
        stored = dict(for_json(results) if for_json else results)
        stored["run"] = {"started": started, "command": command, "load_before": load_before,
                         "load_after": os.getloadavg()[0], "spread": timing.spread_since(mark)}
        write_results(args.out, filename, stored, markdown(results))
        if args.out.resolve() == RESULTS.resolve():
            readme.update([filename, readme.SUMMARY])
    return 0


if __name__ == "__main__":
    sys.exit(main())
