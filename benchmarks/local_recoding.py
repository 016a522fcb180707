"""Benchmark of veil's local recoding (Mondrian and MDAV) beside AnonyPy's Mondrian.

Run from the repository root with the other benchmarks, or alone::

    python benchmarks/run.py --only local [--repeat R] [--skip-anonypy] [--curve-rows N] [--out DIR]

veil's :class:`~veil.anonymize.mondrian.Mondrian` partitions the bundled Adult table
(7 quasi-identifiers, age numeric, occupation sensitive) into 5-anonymous classes, strict and
relaxed, with the categorical columns split along their ARX hierarchies (the default) and on
their order (``categorical="order"``, the setting closest to AnonyPy's). In the same run AnonyPy's
Mondrian partitions the same table, in the peer environment (``peer_env.py``; its code is
``peers/local_recoding.py``), in a process of its own so that it can be stopped at a time cap;
veil scores AnonyPy's partition with its own utility metrics. veil's
:class:`~veil.anonymize.mdav.MDAV` microaggregates the same table (AnonyPy has no MDAV).

The growth of Mondrian's cost with the number of records is measured on Adult resampled with
replacement to 0.1, 0.3, 1 and 3 million records, and, because resampling keeps Adult's distinct
tuples (so the partitions stop splitting at a fixed number), on a harder variant with a numeric
quasi-identifier of 100,000 distinct values added, up to a million records (``--curve-rows``
stops both curves sooner). The results go to
``local_recoding.json`` and ``local_recoding.md`` in the output folder.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import math
import os
import platform
from datetime import datetime, timezone

import numpy as np
import polars as pl

from veil import Dataset, EquivalenceClasses, KAnonymity
from veil.anonymize.mdav import MDAV
from veil.anonymize.mondrian import Mondrian
from veil.cells import Cells
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, adult_csv, adult_hierarchies
from veil.metrics import make_metric

import peer_env
from harness import (goal_lines, SEED, cpu_model, fmt_ratio, fmt_time, positive_int, read_adult_polars, resample,
                     split_versions, with_peer_versions, wrap)
from timing import best_of, progress

QUASI_IDENTIFIERS = list(ADULT_QUASI_IDENTIFIERS)
SENSITIVE = "occupation"
K = 5
# veil's Mondrian settings measured on Adult, as (mode, categorical); the default first.
SETTINGS = (("strict", "hierarchy"), ("strict", "order"), ("relaxed", "hierarchy"), ("relaxed", "order"))
# The setting closest to AnonyPy's Mondrian: binary cuts that never overlap, and text columns
# split on a one-dimensional order and published as the set of values held (see the notes).
MATCHING = ("strict", "order")
METRICS = ("loss", "discernibility")
# The n log n curve: Adult resampled to these sizes, and with the added column to the first three.
CURVE_ROWS = (100_000, 300_000, 1_000_000, 3_000_000)
NOISE_ROWS = (100_000, 300_000, 1_000_000)
NOISE_COLUMN = "noise"
NOISE_VALUES = 100_000
# Its own seed: a generator seeded like the resampling's would draw from the same stream.
NOISE_SEED = 1
# AnonyPy is stopped when one of its two steps runs longer than this (it took about half a
# minute here; the issue reports 76.6 s).
ANONYPY_CAP_S = 180.0
ADULT_GOAL_S = 0.5
LARGE_GOAL_ROWS = 1_000_000
LARGE_GOAL_S = 10.0
MDAV_GOAL_S = 5.0
# Two sums of the same floating-point terms in a different order may differ in the last bits.
VALUE_RTOL = 1e-9


# ----------------------------------------------------------------------------------- measuring

def make_dataset(source, extra: tuple[str, ...] = ()) -> Dataset:
    """veil's Dataset over a CSV path or a frame: the quasi-identifiers (plus ``extra`` ones,
    which have no hierarchy) and the sensitive column, with ARX's hierarchies."""
    files = adult_hierarchies()
    return Dataset(source, quasi_identifiers=QUASI_IDENTIFIERS + list(extra), sensitive=SENSITIVE,
                   hierarchies={c: files[c] for c in QUASI_IDENTIFIERS + [SENSITIVE]}, delimiter=";")


def score(classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> dict[str, float]:
    """veil's loss and discernibility of a release's classes (fresh metric objects, no caches)."""
    return {key: make_metric(key).value(classes, suppressed) for key in METRICS}


def measure_mondrian(dataset: Dataset, mode: str, categorical: str, repeat: int) -> tuple[dict, Mondrian]:
    """Best times of Mondrian's ``fit`` (from the encoded Dataset) and ``transform`` (the
    release), the partitions found and the release's metrics; and the fitted Mondrian."""
    progress(f"veil: Mondrian {mode}, {categorical} ({dataset.num_rows:,} rows)")
    fit_s, fitted = best_of(
        lambda: Mondrian([KAnonymity(K)], mode=mode, categorical=categorical).fit(dataset), repeat)
    transform_s, release = best_of(lambda: fitted.transform(dataset), repeat)
    return {"mode": mode, "categorical": categorical, "fit_s": fit_s, "transform_s": transform_s,
            "partitions": fitted.n_partitions_, "partitions_found": fitted.partitions_found_,
            "rounds": fitted.rounds_, "smallest": int(release.released_classes.sizes.min()),
            **score(release.classes, release.failing)}, fitted


def measure_mdav(dataset: Dataset, repeat: int) -> dict:
    """Best times of MDAV's ``fit`` and ``transform`` on one table, its groups and metrics."""
    progress(f"veil: MDAV ({dataset.num_rows:,} rows)")
    fit_s, fitted = best_of(lambda: MDAV([KAnonymity(K)]).fit(dataset), repeat)
    transform_s, release = best_of(lambda: fitted.transform(dataset), repeat)
    result = fitted.result_
    return {"fit_s": fit_s, "transform_s": transform_s, "groups": result.groups, "classes": result.classes,
            "merge_rounds": result.merge_rounds, "smallest": int(release.released_classes.sizes.min()),
            **score(release.classes, release.failing)}


def partition_classes(dataset: Dataset, group: np.ndarray) -> EquivalenceClasses:
    """veil's classes of a bare partition (the group of every row), each group publishing, on
    every quasi-identifier, the set of values its records hold.

    That is what AnonyPy publishes: a text column's values joined by commas, a numeric column's
    ``min-max``, whose span is that of the set. Each group is its own class.
    """
    n_groups = int(group.max()) + 1
    cells = []
    for name in dataset.quasi_identifiers:
        column = dataset.column(name)
        labels = np.asarray(column.labels, dtype=object)
        owner, codes = np.divmod(np.unique(group * column.cardinality + column.codes), column.cardinality)
        indptr = np.searchsorted(owner, np.arange(n_groups + 1))
        texts = np.array([",".join(labels[codes[a:b]]) for a, b in zip(indptr[:-1], indptr[1:])],
                         dtype=object)
        cells.append(Cells.from_sets(column, indptr, codes, texts))
    keys = np.repeat(np.arange(n_groups)[:, None], len(cells), axis=1)
    return EquivalenceClasses.from_partition(dataset, group, keys, cells, track=())


def measure_adult(repeat: int) -> tuple[dict, Dataset]:
    """Load and encode Adult, then every Mondrian setting and MDAV on it; and the Dataset."""
    progress("veil: load + encode Adult")
    load_s, dataset = best_of(lambda: make_dataset(adult_csv()), repeat)
    runs = []
    for mode, categorical in SETTINGS:
        run, fitted = measure_mondrian(dataset, mode, categorical, repeat)
        if (mode, categorical) == MATCHING:
            # Scored as a bare partition, veil's own partition must give its release's loss, as
            # the release publishes the same cells (the sets of values held, age as its range):
            # the check that AnonyPy's partition is scored as veil scores its own.
            rescored = score(partition_classes(dataset, fitted.partition_))["loss"]
            run["rescored_agrees"] = math.isclose(rescored, run["loss"], rel_tol=VALUE_RTOL)
        runs.append(run)
    block = {"rows": dataset.num_rows, "tuples": EquivalenceClasses.from_dataset(dataset, track=()).n_classes,
             "load_encode_s": load_s, "mondrian": runs, "mdav": measure_mdav(dataset, repeat)}
    return block, dataset


# ------------------------------------------------------------------------------------- AnonyPy

def measure_anonypy(dataset: Dataset, cap_s: float) -> dict:
    """Time AnonyPy's two steps once in the peer environment (``peers/local_recoding.py``), each
    stopped after ``cap_s`` seconds, and score its partition with veil's metrics.

    AnonyPy runs in a process of its own, so that a step past the cap is ended by ending that
    process; the steps it finished are kept.

    Raises:
        peer_env.PeerError: the peer environment could not be made, AnonyPy failed, or reading
            Adult took longer than the cap (the caller reports it).
    """
    out = {"function": "anonypy.mondrian.Mondrian.partition, then anonypy.anonymize", "cap_s": cap_s,
           "partition_s": None, "anonymize_s": None, "capped": None}
    steps = iter(("partition", "anonymize"))
    step = None  # the step under way; None while the peer reads Adult
    progress("AnonyPy: reading Adult (peer environment)")
    try:
        for message in peer_env.results("local_recoding", "anonypy_mondrian", timeout=cap_s, csv=str(adult_csv()),
                                        quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE, k=K):
            if message[0] == "ready":
                out["versions"] = message[1]
            elif message[0] == "partition":
                out["partition_s"], group = message[1], np.asarray(message[2], dtype=np.int64)
            else:
                out["anonymize_s"], out["release_rows"] = message[1], message[2]
            step = next(steps, None)
            if step is not None:
                progress(f"AnonyPy: {step} (slow, capped at {cap_s:g} s)")
    except peer_env.PeerTimeout:
        if step is None:
            raise
        out["capped"] = step
    if out["partition_s"] is not None:
        # Scored once AnonyPy is done, so that veil's work does not share the cores with it.
        out.update(partition_scores(dataset, group))
    return out


def partition_scores(dataset: Dataset, group: np.ndarray) -> dict:
    """Partitions, the smallest, and veil's metrics of a bare partition of ``dataset``."""
    sizes = np.bincount(group)
    return {"partitions": len(sizes), "smallest": int(sizes.min()),
            **score(partition_classes(dataset, group))}


# ----------------------------------------------------------------------------------- the curve

def with_noise(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with a numeric column of :data:`NOISE_VALUES` distinct values, each held by as
    many records (``rows / NOISE_VALUES``), in an order drawn from ``default_rng(NOISE_SEED)``."""
    rng = np.random.default_rng(NOISE_SEED)
    return frame.with_columns(pl.Series(NOISE_COLUMN, rng.permutation(frame.height) % NOISE_VALUES))


def measure_point(frame: pl.DataFrame, extra: tuple[str, ...], repeat: int) -> dict:
    """Load + encode, then Mondrian strict k = 5 (``fit`` and ``transform``), on one resampled
    table."""
    progress(f"veil: load + encode ({frame.height:,} rows)")
    load_s, dataset = best_of(lambda: make_dataset(frame, extra), repeat)
    tuples = EquivalenceClasses.from_dataset(dataset, track=()).n_classes
    run, _ = measure_mondrian(dataset, "strict", "hierarchy", repeat)
    return {"rows": dataset.num_rows, "tuples": tuples, "load_encode_s": load_s,
            **{k: run[k] for k in ("fit_s", "transform_s", "partitions", "rounds")}}


def measure_sort(rows: int, repeat: int) -> float:
    """Best time of NumPy's stable argsort of ``rows`` random 64-bit keys (``default_rng(SEED)``):
    how this machine's own n log n grows, caches and memory included, for reading the curve."""
    progress(f"numpy: argsort of {rows:,} keys")
    keys = np.random.default_rng(SEED).integers(0, 2**62, size=rows)
    seconds, _ = best_of(lambda: np.argsort(keys, kind="stable"), repeat)
    return seconds


def measure_curve(adult: pl.DataFrame, sizes: tuple[int, ...], noise: bool, sort_s: dict[int, float],
                  repeat: int) -> list[dict]:
    """One point per size, each table built, measured and dropped before the next; ``sort_s``
    gives the reference sort's time at each size."""
    points = []
    for rows in sizes:
        progress(f"building {rows:,} rows")
        frame = resample(adult, rows)
        if noise:
            frame = with_noise(frame)
        point = measure_point(frame, (NOISE_COLUMN,) if noise else (), repeat)
        points.append({**point, "sort_s": sort_s[rows]})
        del frame
        gc.collect()
    for key in ("fit", "sort"):
        # Time per n·log₂ n relative to the smallest table: 1 where it grows exactly as n log n.
        base = points[0][f"{key}_s"] / n_log_n(points[0]["rows"])
        for point in points:
            point[f"{key}_n_log_n"] = point[f"{key}_s"] / n_log_n(point["rows"]) / base
    return points


def n_log_n(rows: int) -> float:
    return rows * math.log2(rows)


# ------------------------------------------------------------------------------- formatting

def setting_label(run: dict) -> str:
    """A Mondrian setting as ``"strict, hierarchy"``, starred when it is the one matching AnonyPy."""
    star = " *" if (run["mode"], run["categorical"]) == MATCHING else ""
    return f"{run['mode']}, {run['categorical']}{star}"


def peer_seconds(peer: dict, steps: tuple[str, ...]) -> tuple[float, bool]:
    """AnonyPy's time over ``steps``, and whether it is only a lower bound (a step was stopped
    at the cap, which it then counts as, and the later steps never ran)."""
    total = 0.0
    for step in steps:
        if peer["capped"] == step:
            return total + peer["cap_s"], True
        total += peer[f"{step}_s"]
    return total, False


def fmt_peer_time(peer: dict, step: str) -> str:
    """AnonyPy's time for a step, ``"> cap"`` when the step was stopped, ``"—"`` when not reached."""
    if peer["capped"] == step:
        return f"> {fmt_time(peer['cap_s'])}"
    return fmt_time(peer[f"{step}_s"])


def speedups(peer: dict, run: dict) -> dict[str, str]:
    """AnonyPy's time over veil's, for the partitioning and for partitioning plus release, as
    text (``"> N×"`` from the cap when AnonyPy was stopped)."""
    out = {}
    for key, steps, veil_s in (("fit", ("partition",), run["fit_s"]),
                               ("total", ("partition", "anonymize"), run["fit_s"] + run["transform_s"])):
        seconds, lower_bound = peer_seconds(peer, steps)
        out[key] = ("> " if lower_bound else "") + fmt_ratio(seconds / veil_s)
    return out


def fmt_loss(value: float) -> str:
    return f"{value:.4f}"


def curve_rows(points: list[dict]) -> list[list[str]]:
    """The cells of a curve table, one list per size."""
    return [[f"{p['rows']:,}", fmt_time(p["load_encode_s"]), fmt_time(p["fit_s"]), fmt_time(p["transform_s"]),
             f"{p['tuples']:,}", f"{p['partitions']:,}", str(p["rounds"]), f"{p['fit_n_log_n']:.2f}",
             f"{p['sort_n_log_n']:.2f}"]
            for p in points]


CURVE_HEADER = ["rows", "load", "fit", "transform", "tuples", "classes", "rounds", "fit rel", "sort rel"]
CURVE_WIDTHS = [10, 8, 8, 10, 8, 9, 7, 9, 9]


def terminal_report(results: dict) -> str:
    """The results as plain text that fits an 80-column terminal."""
    meta, adult = results["meta"], results["adult"]
    own, theirs = split_versions(meta["versions"], ("anonypy",))
    peer = results.get("anonypy")
    out = [f"veil local-recoding benchmark, {meta['date']}",
           f"{meta['cpu']}, {meta['cores']} cores, Python {meta['python']}",
           ", ".join(f"{k} {v}" for k, v in own.items()),
           *([f"peer: {', '.join(f'{k} {v}' for k, v in theirs.items())}"] if theirs else []),
           *wrap(f"QIs: {', '.join(QUASI_IDENTIFIERS)} (age numeric)", "     "),
           f"sensitive: {SENSITIVE} (declared); {K}-anonymity; veil: best of {meta['repeat']} "
           f"run{'s' if meta['repeat'] > 1 else ''}"]

    out += ["", f"Adult: {adult['rows']:,} rows, {adult['tuples']:,} distinct QI tuples",
            f"  load + encode (Dataset)  {fmt_time(adult['load_encode_s']):>10}  (from the CSV file)", "",
            f"  {'Mondrian k = ' + str(K):<20}{'fit':>9}{'transform':>10}{'classes':>9}{'loss':>8}"
            f"{'discern.':>10}{'AnonyPy/veil':>13}", "  " + "-" * 77]
    for run in adult["mondrian"]:
        ratio = speedups(peer, run)["total"] if peer else "—"
        out.append(f"  {setting_label(run):<20}{fmt_time(run['fit_s']):>9}{fmt_time(run['transform_s']):>10}"
                   f"{run['partitions']:>9,}{fmt_loss(run['loss']):>8}{run['discernibility']:>10,.0f}"
                   f"{ratio:>13}")
    if peer:
        scored = "partitions" in peer
        out.append(f"  {'AnonyPy Mondrian':<20}{fmt_peer_time(peer, 'partition'):>9}"
                   f"{fmt_peer_time(peer, 'anonymize'):>10}"
                   + (f"{peer['partitions']:>9,}{fmt_loss(peer['loss']):>8}{peer['discernibility']:>10,.0f}"
                      if scored else ""))
    mdav = adult["mdav"]
    out += [f"  {'MDAV (veil only)':<20}{fmt_time(mdav['fit_s']):>9}{fmt_time(mdav['transform_s']):>10}"
            f"{mdav['classes']:>9,}{fmt_loss(mdav['loss']):>8}{mdav['discernibility']:>10,.0f}"
            f"{'no MDAV':>13}",
            "", "  * the veil setting closest to AnonyPy's Mondrian"]
    out += wrap(("  AnonyPy's fit and transform: its partitioning and its release (anonypy.anonymize). "
                 "AnonyPy/veil: AnonyPy's partitioning + release over veil's fit + transform. "
                 if peer else "  ")
                + "Classes: the classes released (AnonyPy: its partitions); loss and discernibility: "
                "veil's metrics of each release (lower is better).", "  ")
    if peer:
        matching = next(r for r in adult["mondrian"] if (r["mode"], r["categorical"]) == MATCHING)
        ratios = speedups(peer, matching)
        out += [""] + wrap(f"  AnonyPy beside veil {', '.join(MATCHING)}: partitioning {ratios['fit']} "
                           f"slower, partitioning + release {ratios['total']} slower"
                           + (f"; AnonyPy's release has {peer['release_rows']:,} rows (one per class "
                              f"and occupation, with a count)" if peer.get("release_rows") else "")
                           + ".", "  ")
        if peer["capped"]:
            out += wrap(f"  AnonyPy's {peer['capped']} step was stopped after "
                        f"{fmt_time(peer['cap_s'])}.", "  ")
    else:
        out += [""] + wrap(f"  AnonyPy {results['anonypy_skipped']}", "  ")

    for key, title in (("curve", "Adult resampled"),
                       ("noise_curve", f"Adult resampled + '{NOISE_COLUMN}' ({NOISE_VALUES:,} values)")):
        head = "  " + "".join(f"{h:>{w}}" for h, w in zip(CURVE_HEADER, CURVE_WIDTHS))
        out += ["", f"{title}: Mondrian strict, hierarchy, k = {K}",
                head, "  " + "-" * (len(head) - 2)]
        out += ["  " + "".join(f"{c:>{w}}" for c, w in zip(cells, CURVE_WIDTHS))
                for cells in curve_rows(results[key])]
    out += wrap("  fit rel, sort rel: the fit's and a NumPy argsort's time / (n log2 n), relative to "
                "the first line (see the notes).", "  ")

    out += ["", "Notes"] + [line for note in results["notes"] for line in wrap("  - " + note, "    ")]
    out += goal_lines(results["goals"])
    if results["ratios"]:
        out += ["", "AnonyPy / veil"]
        out += [line for r in results["ratios"] for line in wrap(f"  {r['what']}: {r['ratio']}", "    ")]
    return "\n".join(out)


def markdown_report(results: dict) -> str:
    """The results as Markdown tables, ready to paste into the README."""
    meta, adult = results["meta"], results["adult"]
    peer = results.get("anonypy")
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    out = ["## Local-recoding benchmark", "",
           f"Measured {meta['date']} on {meta['cpu']} ({meta['cores']} cores), Python {meta['python']}, "
           f"{versions}. Quasi-identifiers: {', '.join(QUASI_IDENTIFIERS)} (age numeric); sensitive: "
           f"{SENSITIVE} (declared); {K}-anonymity. veil's figures are the best of {meta['repeat']} run"
           f"{'s' if meta['repeat'] > 1 else ''} of `fit` (from the encoded Dataset) and of `transform` (the "
           f"release); AnonyPy is run once, in a process of its own, each step capped at "
           f"{fmt_time(ANONYPY_CAP_S)}. *Loss* and *discernibility* are veil's metrics of each release "
           f"(lower is better). Reproduce with `python benchmarks/run.py --only local`."]

    out += ["", f"### Adult: {adult['rows']:,} rows, {adult['tuples']:,} distinct quasi-identifier tuples",
            "",
            f"Load + encode (`Dataset`, from the CSV file): {fmt_time(adult['load_encode_s'])}.", "",
            f"| Mondrian, k = {K} | fit | transform | classes | rounds | loss | discernibility "
            "| AnonyPy / veil, partitioning | AnonyPy / veil, with release |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for run in adult["mondrian"]:
        ratio = speedups(peer, run) if peer else {"fit": "—", "total": "—"}
        out.append(f"| veil {setting_label(run)} | {fmt_time(run['fit_s'])} | "
                   f"{fmt_time(run['transform_s'])} | {run['partitions']:,} | {run['rounds']} | "
                   f"{fmt_loss(run['loss'])} | "
                   f"{run['discernibility']:,.0f} | {ratio['fit']} | {ratio['total']} |")
    if peer and "partitions" in peer:
        out.append(f"| AnonyPy | {fmt_peer_time(peer, 'partition')} | {fmt_peer_time(peer, 'anonymize')} | "
                   f"{peer['partitions']:,} | — | {fmt_loss(peer['loss'])} | "
                   f"{peer['discernibility']:,.0f} | | |")
    out += ["", "\\* the veil setting closest to AnonyPy's Mondrian. AnonyPy's *fit* is "
                f"`anonypy.mondrian.Mondrian.partition(k={K})` and its *transform* `anonypy.anonymize`, the "
                "two steps of `anonypy.Preserver.anonymize_k_anonymity`; its classes are its partitions, "
                "scored by veil as the sets of values each one publishes."]
    if not peer:
        out += ["", f"AnonyPy {results['anonypy_skipped']}"]
    elif peer["capped"]:
        out += ["", f"AnonyPy's {peer['capped']} step was stopped after {fmt_time(peer['cap_s'])}."]
    mdav = adult["mdav"]
    out += ["", f"| MDAV, k = {K} | fit | transform | groups | smallest | loss | discernibility |",
            "|---|---:|---:|---:|---:|---:|---:|",
            f"| veil | {fmt_time(mdav['fit_s'])} | {fmt_time(mdav['transform_s'])} | {mdav['classes']:,} | "
            f"{mdav['smallest']} | {fmt_loss(mdav['loss'])} | {mdav['discernibility']:,.0f} |",
            "", "AnonyPy has no MDAV (nor any microaggregation)."]

    for key, title in (("curve", "Adult resampled"),
                       ("noise_curve", f"Adult resampled with a '{NOISE_COLUMN}' quasi-identifier")):
        out += ["", f"### {title}: Mondrian strict, hierarchy, k = {K}", "",
                "| rows | load + encode | fit | transform | distinct tuples | classes | rounds "
                "| fit / (n log₂ n), relative | NumPy argsort / (n log₂ n), relative |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        out += ["| " + " | ".join(cells) + " |" for cells in curve_rows(results[key])]
    out += ["", "Notes:", ""] + [f"- {note}" for note in results["notes"]]
    out += ["", "Goals:", ""] + [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**"
                                 for g in results["goals"]]
    if results["ratios"]:
        out += ["", "AnonyPy / veil:", ""] + [f"- {r['what']}: {r['ratio']}" for r in results["ratios"]]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------- the run

def goals(adult: dict, curve: list[dict], noise_curve: list[dict]) -> list[dict]:
    """The issue's three goals, checked against this run's figures."""
    slowest = max(adult["mondrian"], key=lambda r: r["fit_s"] + r["transform_s"])
    adult_s = slowest["fit_s"] + slowest["transform_s"]
    mdav = adult["mdav"]
    mdav_s = mdav["fit_s"] + mdav["transform_s"]
    out = [
        {"goal": f"Mondrian k = {K} on Adult under {ADULT_GOAL_S} s (fit + transform, every setting)",
         "measured": f"slowest {fmt_time(adult_s)} ({setting_label(slowest).rstrip(' *')})",
         "met": adult_s < ADULT_GOAL_S},
        {"goal": f"MDAV k = {K} on Adult under {MDAV_GOAL_S:g} s (fit + transform)",
         "measured": fmt_time(mdav_s), "met": mdav_s < MDAV_GOAL_S},
    ]
    large = [(name, p) for name, points in (("Adult resampled", curve), (f"with '{NOISE_COLUMN}'", noise_curve))
             for p in points if p["rows"] == LARGE_GOAL_ROWS]
    if large:  # a run whose curves stop short of the goal's size (--curve-rows) leaves it out
        large_s = {name: p["load_encode_s"] + p["fit_s"] + p["transform_s"] for name, p in large}
        out.insert(1, {"goal": f"{LARGE_GOAL_ROWS:,} rows under {LARGE_GOAL_S:g} s (load + encode + fit + "
                               f"transform, Mondrian strict)",
                       "measured": "; ".join(f"{name} {fmt_time(s)}" for name, s in large_s.items()),
                       "met": all(s < LARGE_GOAL_S for s in large_s.values())})
    return out


def ratios(adult: dict, peer: dict | None) -> list[dict]:
    """AnonyPy's times over veil's, beside the setting that matches it and the default."""
    if not peer:
        return []
    out = []
    for run in adult["mondrian"]:
        if (run["mode"], run["categorical"]) in (MATCHING, SETTINGS[0]):
            r = speedups(peer, run)
            label = setting_label(run).rstrip(" *")
            out += [{"what": f"partitioning, beside veil's fit ({label})", "ratio": r["fit"]},
                    {"what": f"partitioning + release, beside veil's fit + transform ({label})",
                     "ratio": r["total"]}]
    return out


def notes(adult: dict, peer: dict | None, curve: list[dict], noise_curve: list[dict]) -> list[str]:
    """What a reader needs to read the tables right, with what the figures of this run show."""
    by = {(r["mode"], r["categorical"]): r for r in adult["mondrian"]}
    matching = by[MATCHING]
    out = [
        "AnonyPy splits a text column (pandas category dtype) into two halves of its distinct values, "
        "taken in the order they first appear in the partition, measures its width as its number of "
        "distinct values over the table's, and publishes the set of values held; a numeric column is "
        "cut at the pandas median (values below it left, the rest right) and published as min-max. "
        "A partition tries its columns widest first and takes the first cut whose two parts both "
        "have k records. It knows no hierarchy. veil's strict mode with categorical='order' is the "
        "closest: binary cuts that never overlap, text columns split on one order (text order) and "
        "published as the set of values held. It still differs: veil cuts a text column at its "
        "median record, not at half its distinct values, ranks columns by the span of their ranks, "
        "and keeps the median value on the left.",
        "Loss and discernibility are veil's metrics of the classes released. AnonyPy's partition is "
        "scored as the sets of values each partition publishes (a numeric range's span is that of "
        "its set); scoring veil's own strict/order partition the same way "
        + ("gives its release's loss exactly." if matching["rescored_agrees"]
           else "does NOT give its release's loss: the AnonyPy figures may be off."),
    ]
    if peer and "loss" in peer:
        better = {m: "AnonyPy" if peer[m] < matching[m] else "veil" for m in METRICS}
        out.append(f"Beside veil strict/order, AnonyPy's partition has {peer['partitions']:,} classes to "
                   f"{matching['partitions']:,}, loss {fmt_loss(peer['loss'])} to "
                   f"{fmt_loss(matching['loss'])} (lower: {better['loss']}) and discernibility "
                   f"{peer['discernibility']:,.0f} to {matching['discernibility']:,.0f} (lower: "
                   f"{better['discernibility']}).")
    relaxed = by["relaxed", "order"]
    out.append("With categorical='hierarchy' a text column publishes a hierarchy node, which covers values "
               "the class does not hold, so its loss is higher than with sets. Relaxed mode makes more, "
               "smaller classes (lower discernibility)"
               + (f"; with categorical='order' its loss is higher than strict's ({fmt_loss(relaxed['loss'])} "
                  f"to {fmt_loss(matching['loss'])}): its halves of equal size cut through a value that both "
                  f"halves then hold, so a part's set often stays as wide as before."
                  if relaxed["loss"] > matching["loss"] else "."))
    out += [
        "MDAV publishes each group's mean age and the mode of every other column; its loss scores the "
        "set of original values each group covers (span for age). AnonyPy has no MDAV.",
        f"The curves resample Adult with numpy.random.default_rng({SEED}). Drawn over and over, Adult's "
        f"records stay {adult['tuples']:,} distinct tuples, so once every tuple holds {K} records "
        f"Mondrian stops at one class per tuple ({curve[-1]['partitions']:,} at {curve[-1]['rows']:,} "
        f"rows): the rounds stay the same and each record costs less than on a table that keeps "
        f"splitting. The second curve adds a numeric quasi-identifier '{NOISE_COLUMN}' whose "
        f"{NOISE_VALUES:,} values each hold rows / {NOISE_VALUES:,} records, in an order drawn with "
        f"default_rng({NOISE_SEED}): the partitions keep splitting "
        f"({noise_curve[-1]['partitions']:,} classes at {noise_curve[-1]['rows']:,} rows).",
    ]
    # The first line of each curve is 1.00 by construction; the others tell the growth.
    points = [(p, "") for p in curve[1:]] + [(p, f" with '{NOISE_COLUMN}'") for p in noise_curve[1:]]
    top, where = max(points, key=lambda pw: pw[0]["fit_n_log_n"])
    out.append("Fit rel and sort rel: the time over n log₂ n, relative to the first line of its table "
               "(1.00: it grows exactly as n log n from there). Sort rel is NumPy's stable argsort of n "
               "random 64-bit keys on this machine, the growth of a pure n log n step with its caches and "
               f"memory. The highest fit rel past the first lines is {top['fit_n_log_n']:.2f} "
               f"({top['rows']:,} rows{where}), where the sort's is {top['sort_n_log_n']:.2f}. On a "
               "shared virtual machine the best of several runs can still move by half from one run of "
               "the benchmark to the next (the small tables most), and every rel figure with its first "
               "line.")
    if peer and peer["capped"] is None:
        out.append("The issue measured AnonyPy's Mondrian at 76.6 s; here its partitioning took "
                   f"{fmt_time(peer['partition_s'])} and its release {fmt_time(peer['anonymize_s'])}.")
    return out


def versions(peer: dict | None) -> dict[str, str]:
    """The installed version of veil and its dependencies that matter here, then the peer
    environment's (AnonyPy and what it runs on) when AnonyPy was timed."""
    own = {name: importlib.metadata.version(name) for name in ("veil", "numpy", "pandas", "polars", "pyarrow")}
    return with_peer_versions(own, peer["versions"]) if peer else own


def run(repeat: int, skip_anonypy: bool, curve_rows: int = CURVE_ROWS[-1]) -> dict:
    """Measure everything and return the results (times in seconds); the curves stop at
    ``curve_rows`` records."""
    adult, dataset = measure_adult(repeat)
    results = {"adult": adult}
    if skip_anonypy:
        results["anonypy_skipped"] = "skipped on request (--skip-anonypy)."
    else:
        try:
            results["anonypy"] = measure_anonypy(dataset, ANONYPY_CAP_S)
        # A peer that fails (an API change, a crash inside it) is reported, not fatal: veil's own
        # figures are still worth writing.
        except peer_env.PeerError as exc:
            results["anonypy_skipped"] = f"failed: {exc}"
    peer = results.get("anonypy")

    sizes = tuple(n for n in CURVE_ROWS if n <= curve_rows)
    sort_s = {rows: measure_sort(rows, repeat) for rows in sizes}
    frame = read_adult_polars()
    curve = measure_curve(frame, sizes, False, sort_s, repeat)
    noise_curve = measure_curve(frame, tuple(n for n in NOISE_ROWS if n <= curve_rows), True, sort_s, repeat)
    progress("")
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "cpu": cpu_model(),
            "cores": os.cpu_count(), "python": platform.python_version(),
            "versions": versions(peer),
            "repeat": repeat, "quasi_identifiers": QUASI_IDENTIFIERS, "sensitive": SENSITIVE, "k": K,
            "seed": SEED, "noise_seed": NOISE_SEED, "anonypy_cap_s": ANONYPY_CAP_S}
    ordered = {"meta": meta, "adult": adult}
    ordered.update((k, v) for k, v in results.items() if k.startswith("anonypy"))
    ordered.update(curve=curve, noise_curve=noise_curve, notes=notes(adult, peer, curve, noise_curve),
                   goals=goals(adult, curve, noise_curve), ratios=ratios(adult, peer))
    return ordered


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's own options, added to the shared command line."""
    parser.add_argument("--skip-anonypy", action="store_true",
                        help="local-recoding benchmark: do not time AnonyPy (the slow peer)")
    parser.add_argument("--curve-rows", type=largest_curve_table,
                        help=f"local-recoding benchmark: the largest table of the n log n curves "
                             f"(default {CURVE_ROWS[-1]:,}; at least {CURVE_ROWS[1]:,}, so that each curve "
                             f"keeps two sizes)")


def largest_curve_table(text: str) -> int:
    """An argparse type: a number of records that leaves each curve at least two sizes."""
    rows = positive_int(text)
    if rows < CURVE_ROWS[1]:
        raise argparse.ArgumentTypeError(f"must be at least {CURVE_ROWS[1]:,}, not {rows:,}")
    return rows
