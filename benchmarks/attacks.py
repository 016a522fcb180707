"""Attack benchmark (issue 5): the intersection attack and the composition experiment.

Goals from the issue: the intersection attack of two Adult-size releases over 5,000 targets in
under 1 s; the composition experiment over 8 values of k in under a minute. No peer tool runs the
composition attack, so these are veil's own figures.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import time

import numpy as np

from harness import SEED, cpu_model, fmt_time
from timing import best_of, progress

PAIRS = (("Mondrian + Mondrian", ("mondrian", "mondrian")), ("Mondrian + MDAV", ("mondrian", "mdav")),
         ("MDAV + MDAV", ("mdav", "mdav")), ("full-domain + Mondrian", ("fulldomain", "mondrian")))
TARGETS = 5_000
INTERSECTION_GOAL = 1.0
COMPOSITION_GOAL = 60.0


def _release(name: str, dataset, k: int):
    from veil import KAnonymity
    from veil.anonymize import MDAV, FullDomain, Mondrian

    models = [KAnonymity(k)]
    if name == "mondrian":
        return Mondrian(models).fit_transform(dataset)
    if name == "mdav":
        return MDAV(models).fit_transform(dataset)
    return FullDomain(models, suppression_limit=0.02).fit_transform(dataset)


def run(repeat: int) -> dict:
    """Time the intersection attack on pairs of Adult releases and the default composition run."""
    import veil
    from veil.attacks import PublishedRelease, intersection_attack
    from veil.experiments.composition import CompositionSettings, run_composition

    adult = veil.load_adult()
    rng = np.random.default_rng(SEED)
    targets = adult.table.data.take(rng.choice(adult.num_rows, size=TARGETS, replace=False)).to_pandas()
    rows = []
    for label, (first, second) in PAIRS:
        progress(f"intersection attack: {label}")
        releases = [PublishedRelease.from_release(_release(first, adult, 5)),
                    PublishedRelease.from_release(_release(second, adult, 10))]
        seconds, result = best_of(lambda: intersection_attack(releases, targets), repeat)
        summary = result.summary()
        rows.append({"pair": label, "seconds": seconds, "targets": TARGETS, "summary": summary})
    progress("composition experiment, default settings")
    settings = CompositionSettings()
    start = time.perf_counter()
    run_composition(settings)
    composition_seconds = time.perf_counter() - start
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(), "veil": veil.__version__,
        "intersection": rows,
        "composition": {"seconds": composition_seconds, "k": list(settings.k), "pairs": list(settings.pairs),
                        "overlap": settings.overlap, "seed": settings.seed},
        "goals": {
            "intersection_worst": max(r["seconds"] for r in rows),
            "intersection_met": max(r["seconds"] for r in rows) < INTERSECTION_GOAL,
            "composition_met": composition_seconds < COMPOSITION_GOAL,
        },
    }


def terminal_report(results: dict) -> str:
    """The report printed to the terminal."""
    lines = [f"veil attack benchmark, {results['date']}", f"{results['cpu']}, Python {results['python']}",
             f"Intersection attack: two releases of Adult (k = 5 and k = 10), {TARGETS:,} targets; "
             "best of the runs", "", f"  {'releases':<26}{'attack':>10}", "  " + "-" * 36]
    for row in results["intersection"]:
        lines.append(f"  {row['pair']:<26}{fmt_time(row['seconds']):>10}")
    comp = results["composition"]
    goals = results["goals"]
    lines += ["", f"Composition experiment, default settings ({len(comp['k'])} values of k, "
                  f"{', '.join(comp['pairs'])}, overlap {comp['overlap']:,}, seed {comp['seed']}): "
                  f"{fmt_time(comp['seconds'])}",
              "", "Goals",
              f"  intersection attack under {INTERSECTION_GOAL:g} s: worst {fmt_time(goals['intersection_worst'])}, "
              f"{'met' if goals['intersection_met'] else 'NOT MET'}",
              f"  composition experiment under {COMPOSITION_GOAL:g} s: {fmt_time(comp['seconds'])}, "
              f"{'met' if goals['composition_met'] else 'NOT MET'}"]
    return "\n".join(lines)


def markdown_report(results: dict) -> str:
    """The Markdown report written beside the JSON."""
    comp = results["composition"]
    goals = results["goals"]
    out = ["## Attack benchmark", "",
           f"Measured {results['date']} on {results['cpu']}, Python {results['python']}, veil {results['veil']}. "
           f"Reproduce with `python benchmarks/run.py --only attacks`.", "",
           f"### Intersection attack: two releases of Adult (k = 5 and k = 10), {TARGETS:,} targets", "",
           "| releases | attack time |", "|---|---:|"]
    out += [f"| {row['pair']} | {fmt_time(row['seconds'])} |" for row in results["intersection"]]
    out += ["", "### Composition experiment", "",
            f"Default settings: {len(comp['k'])} values of k ({', '.join(map(str, comp['k']))}), pairs "
            f"{', '.join(comp['pairs'])}, overlap {comp['overlap']:,}, seed {comp['seed']}: "
            f"**{fmt_time(comp['seconds'])}**.", "", "Goals:", "",
            f"- intersection attack of two Adult-size releases over {TARGETS:,} targets under "
            f"{INTERSECTION_GOAL:g} s: worst {fmt_time(goals['intersection_worst'])}, "
            f"**{'met' if goals['intersection_met'] else 'not met'}**",
            f"- composition experiment over 8 values of k under {COMPOSITION_GOAL:g} s: "
            f"{fmt_time(comp['seconds'])}, **{'met' if goals['composition_met'] else 'not met'}**", ""]
    return "\n".join(out)
