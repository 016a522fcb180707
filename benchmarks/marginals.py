"""Anonymized-marginals benchmark (issue 15): the max-ent estimate and its KL-divergence, and the
greedy search, on the bundled Adult table.

Goals from the issue: the max-ent estimate plus the KL-divergence of a collection of five 2–3
attribute marginals under 1 s; the greedy search on Adult under 60 s. No peer tool anonymizes
marginals (private-pgm estimates from noisy marginals under differential privacy, without any
syntactic check), so these are veil's own figures.

Two collections of five marginals are timed, from counting them (rolled up from the class core)
to the KL-divergence: a decomposable one (closed form) and a cyclic one (iterative proportional
fitting on the dense table). The search starts from the optimal 5-anonymous, entropy 3-diverse
full-domain table, as ``veil experiment marginals`` does.
"""

from __future__ import annotations

import datetime as dt
import platform
import time

from harness import cpu_model, fmt_time
from timing import best_of, progress

MAXENT_GOAL = 1.0
SEARCH_GOAL = 60.0
K, L = 5, 3.0
COLLECTIONS = {
    "decomposable (closed form)": [
        (("age", "sex"), {}), (("education", "occupation"), {}), (("marital-status", "sex", "age"), {"age": 1}),
        (("race", "native-country"), {}), (("workclass", "occupation"), {})],
    "cyclic (IPF)": [
        (("age", "sex"), {"age": 1}), (("sex", "race"), {}), (("race", "age"), {"age": 1}),
        (("marital-status", "sex", "occupation"), {}), (("education", "occupation"), {"education": 1})],
}


def run(repeat: int) -> dict:
    """Time max-ent + KL for each collection and the greedy search."""
    import veil
    from veil.marginals import (GreedyMarginalSearch, KLinkAnonymity, MarginalCollection, MarginalCounter,
                                MarginalSpec, MaxEntLDiversity)
    from veil.marginals.search import optimal_base

    adult = veil.load_adult()
    progress("class core of Adult")
    counter_seconds, counter = best_of(lambda: MarginalCounter(adult), repeat)
    maxent = []
    for label, specs in COLLECTIONS.items():
        progress(f"max-ent + KL: {label}")

        def measure():
            collection = MarginalCollection.from_specs(counter, [MarginalSpec.of(a, lv) for a, lv in specs])
            return collection, collection.kl_divergence()

        seconds, (collection, kl) = best_of(measure, repeat)
        estimate = collection.estimate
        maxent.append({"collection": label, "marginals": [MarginalSpec.of(a, lv).label for a, lv in specs],
                       "seconds": seconds, "kl": kl, "method": estimate.method_, "iterations": estimate.iterations_})
    progress("optimal full-domain base table")
    base, found = optimal_base(counter, [veil.KAnonymity(K), veil.EntropyLDiversity(L)])
    progress("greedy search")
    start = time.perf_counter()
    search = GreedyMarginalSearch([KLinkAnonymity(K), MaxEntLDiversity(L)], max_marginals=5,
                                  max_attributes=3).fit(counter, [base])
    search_seconds = time.perf_counter() - start
    worst = max(m["seconds"] for m in maxent)
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(), "python": platform.python_version(), "veil": veil.__version__,
        "counter_seconds": counter_seconds, "maxent": maxent,
        "search": {"seconds": search_seconds, "k": K, "l": L, "candidates": len(search.candidates_),
                   "base_levels": list(found.levels), "start_kl": search.start_kl_, "kl": search.kl_,
                   "steps": [{"marginal": s.marginal.label, "kl": s.kl, "seconds": s.seconds} for s in search.steps_]},
        "goals": {"maxent_worst": worst, "maxent_met": worst < MAXENT_GOAL,
                  "search_met": search_seconds < SEARCH_GOAL},
    }


def terminal_report(results: dict) -> str:
    """The report printed to the terminal."""
    lines = [f"veil marginals benchmark, {results['date']}", f"{results['cpu']}, Python {results['python']}",
             f"Class core of Adult (one pass over the rows): {fmt_time(results['counter_seconds'])}", "",
             "Max-ent estimate + KL-divergence of five marginals, counted from the class core; best of the runs",
             "", f"  {'collection':<30}{'method':<44}{'time':>10}{'KL':>9}", "  " + "-" * 93]
    for row in results["maxent"]:
        how = f"{row['method']}" + (f", {row['iterations']} cycles" if row["iterations"] else "")
        lines.append(f"  {row['collection']:<30}{how:<44}{fmt_time(row['seconds']):>10}{row['kl']:>9.4f}")
    search, goals = results["search"], results["goals"]
    lines += ["", f"Greedy search (k = {search['k']}, ℓ = {search['l']:g}, {search['candidates']} candidates, "
                  f"{len(search['steps'])} marginals): {fmt_time(search['seconds'])}, KL {search['start_kl']:.4f} → "
                  f"{search['kl']:.4f}", "", "Goals",
              f"  max-ent + KL under {MAXENT_GOAL:g} s: worst {fmt_time(goals['maxent_worst'])}, "
              f"{'met' if goals['maxent_met'] else 'NOT MET'}",
              f"  greedy search under {SEARCH_GOAL:g} s: {fmt_time(search['seconds'])}, "
              f"{'met' if goals['search_met'] else 'NOT MET'}"]
    return "\n".join(lines)


def markdown_report(results: dict) -> str:
    """The Markdown report written beside the JSON."""
    search, goals = results["search"], results["goals"]
    out = ["## Anonymized-marginals benchmark", "",
           f"Measured {results['date']} on {results['cpu']}, Python {results['python']}, veil {results['veil']}. "
           "Reproduce with `python benchmarks/run.py --only marginals`.", "",
           f"Class core of Adult (the one pass over the rows): {fmt_time(results['counter_seconds'])}.", "",
           "### Max-ent estimate + KL-divergence of five marginals on Adult", "",
           "| collection | marginals | method | time | KL (nats) |", "|---|---|---|---:|---:|"]
    for row in results["maxent"]:
        how = row["method"] + (f", {row['iterations']} cycles" if row["iterations"] else "")
        out.append(f"| {row['collection']} | {'; '.join(row['marginals'])} | {how} | {fmt_time(row['seconds'])} | "
                   f"{row['kl']:.4f} |")
    out += ["", "### Greedy search on Adult", "",
            f"k = {search['k']}, entropy ℓ = {search['l']:g}, from the optimal full-domain table (levels "
            f"{search['base_levels']}), {search['candidates']} candidate marginals: **{fmt_time(search['seconds'])}**, "
            f"KL-divergence {search['start_kl']:.4f} → {search['kl']:.4f} nats.", "", "Goals:", "",
            f"- max-ent + KL of five marginals under {MAXENT_GOAL:g} s: worst {fmt_time(goals['maxent_worst'])}, "
            f"**{'met' if goals['maxent_met'] else 'not met'}**",
            f"- greedy search under {SEARCH_GOAL:g} s: {fmt_time(search['seconds'])}, "
            f"**{'met' if goals['search_met'] else 'not met'}**", ""]
    return "\n".join(out)
