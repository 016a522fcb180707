"""Adversary benchmark (issue 14): query auditing, Ace and the minimality attack.

Goals from the issue: Ace on Adult at ℓ = 5 under 1 s and on 1,000,000 rows under 30 s; SUM
auditing of 1,000 queries over 100,000 records and MAX auditing of 10,000 queries, whose figures
are recorded. No peer tool audits queries, runs Ace or the minimality attack, so these are veil's
own figures.

**Auditing.** Adult resampled with replacement to 100,000 records; the audited column is age.
Each query is a conjunction of one to three equality conditions on sex, race, education,
marital-status and workclass, drawn at random (some select no record and are drawn again), so the
records fall into atoms of the predicates' columns. The simulatable auditor decides every query
and answers the allowed ones (answering is timed too). **Ace** runs on the bundled Adult table
(7 quasi-identifiers, occupation sensitive) and on Adult resampled to 1,000,000 records, fit and
transform. **The minimality attack** runs on Adult against the optimal full-domain release under
distinct ℓ-diversity (the bound of ``veil.attacks.minimality``).
"""

from __future__ import annotations

import datetime as dt
import platform
import time

import numpy as np

from harness import SEED, cpu_model, fmt_time, read_adult_polars, resample
from timing import best_of, progress

AUDIT_ROWS = 100_000
SUM_QUERIES = 1_000
MAX_QUERIES = 10_000
ACE_ROWS = 1_000_000
ACE_L = 5
ADULT_GOAL_S = 1.0
LARGE_GOAL_S = 30.0
PREDICATE_COLUMNS = ("sex", "race", "education", "marital-status", "workclass")
QUASI_IDENTIFIERS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


def _queries(frame, aggregate: str, count: int, rng: np.random.Generator) -> list[str]:
    """``count`` random conjunctive queries that each select at least one record."""
    values = {c: frame[c].unique().to_list() for c in PREDICATE_COLUMNS}
    out = []
    while len(out) < count:
        columns = rng.choice(PREDICATE_COLUMNS, size=int(rng.integers(1, 4)), replace=False)
        picked = {c: values[c][int(rng.integers(len(values[c])))] for c in columns}
        mask = np.ones(frame.height, dtype=bool)
        for c, v in picked.items():
            mask &= (frame[c] == v).to_numpy()
        if mask.any():
            out.append(f"{aggregate} where " + " and ".join(f"{c} = '{v}'" for c, v in picked.items()))
    return out


def measure_auditing(frame, aggregate: str, count: int, repeat: int) -> dict:
    from veil.audit import AuditSession

    rng = np.random.default_rng(SEED)
    texts = _queries(frame, aggregate, count, rng)
    arrow = frame.to_arrow()

    def session():
        s = AuditSession(arrow, "age")
        queries = [s.parse(t) for t in texts]
        start = time.perf_counter()
        decisions = [s.ask(q) for q in queries]
        return time.perf_counter() - start, s, decisions

    best, last = np.inf, None
    for _ in range(repeat):
        seconds, s, decisions = session()
        if seconds < best:
            best, last = seconds, (s, decisions)
    s, decisions = last
    state = s.auditor.states_[aggregate]
    out = {"queries": count, "records": frame.height, "seconds": best,
           "answered": sum(d.answered for d in decisions), "denied": sum(not d.answered for d in decisions),
           "mean_records_per_query": float(np.mean([d.records for d in decisions]))}
    if aggregate == "sum":
        out.update(rank=state.rank, atoms=int(len(state.atom_size)), exact_integers=state.exact_integers)
    return out


def measure_ace(dataset, repeat: int) -> dict:
    from veil.anonymize import Ace

    seconds, release = best_of(lambda: Ace(l=ACE_L, rng=SEED).fit_transform(dataset), repeat)
    metrics = release.manifest["metrics"]
    return {"rows": dataset.num_rows, "seconds": seconds, "classes": release.released_classes.n_classes,
            "loss": metrics["loss"], "discernibility": metrics["discernibility"]}


def measure_minimality(adult, l: int) -> dict:
    from veil import Dataset
    from veil.anonymize import FullDomain
    from veil.attacks.fulldomain_publishers import OptimalFullDomain
    from veil.attacks.minimality import MinimalityAttack
    from veil.models import DistinctLDiversity

    models = [DistinctLDiversity(l)]
    release = FullDomain(models).fit_transform(adult)
    population = Dataset(adult.table.data.select(QUASI_IDENTIFIERS), quasi_identifiers=QUASI_IDENTIFIERS,
                         hierarchies={q: adult.hierarchies[q] for q in QUASI_IDENTIFIERS})
    start = time.perf_counter()
    attack = MinimalityAttack(OptimalFullDomain(models)).fit(release, population)
    return {"l": l, "seconds": time.perf_counter() - start, "classes": release.released_classes.n_classes,
            "exposed": attack.exceeding_, "exact": attack.count_exact_, "rejected_nodes": len(attack.publisher.rejected)}


def run(repeat: int) -> dict:
    """Time auditing, Ace and the minimality attack."""
    import veil
    from veil import Dataset
    from veil.data.bundled import adult_folder

    adult_frame = read_adult_polars()
    frame = resample(adult_frame, AUDIT_ROWS)
    progress(f"SUM auditing, {SUM_QUERIES:,} queries")
    sums = measure_auditing(frame, "sum", SUM_QUERIES, repeat)
    progress(f"MAX auditing, {MAX_QUERIES:,} queries")
    maxes = measure_auditing(frame, "max", MAX_QUERIES, repeat)
    adult = veil.load_adult()
    progress(f"Ace on Adult, ℓ = {ACE_L}")
    ace_adult = measure_ace(adult, repeat)
    progress(f"Ace on {ACE_ROWS:,} rows")
    large = resample(adult_frame, ACE_ROWS)
    folder = adult_folder()
    dataset = Dataset(large, quasi_identifiers=QUASI_IDENTIFIERS, sensitive="occupation",
                      hierarchies={q: folder / f"adult_hierarchy_{q}.csv" for q in QUASI_IDENTIFIERS})
    ace_large = measure_ace(dataset, min(repeat, 2))
    progress("minimality attack on Adult")
    attacks = [measure_minimality(adult, l) for l in (3, 5)]
    progress("")
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(), "python": platform.python_version(), "veil": veil.__version__, "repeat": repeat,
        "sum": sums, "max": maxes, "ace_adult": ace_adult, "ace_large": ace_large, "minimality": attacks,
        "goals": {"ace_adult_met": ace_adult["seconds"] < ADULT_GOAL_S,
                  "ace_large_met": ace_large["seconds"] < LARGE_GOAL_S},
    }


def _audit_line(label: str, r: dict) -> str:
    extra = f", rank {r['rank']:,} over {r['atoms']:,} atoms" if "rank" in r else ""
    return (f"{label}: {r['queries']:,} queries over {r['records']:,} records "
            f"({r['mean_records_per_query']:,.0f} per query on average): {fmt_time(r['seconds'])}, "
            f"{r['answered']:,} answered, {r['denied']:,} denied{extra}")


def terminal_report(results: dict) -> str:
    """The report printed to the terminal."""
    a, b = results["ace_adult"], results["ace_large"]
    lines = [f"veil adversary benchmark, {results['date']}", f"{results['cpu']}, Python {results['python']}", "",
             _audit_line("SUM auditing (simulatable)", results["sum"]),
             _audit_line("MAX auditing (simulatable)", results["max"]), "",
             f"Ace, ℓ = {ACE_L}, fit + transform: Adult {fmt_time(a['seconds'])} ({a['classes']:,} classes, "
             f"NCP {a['loss']:.4f}); {b['rows']:,} rows {fmt_time(b['seconds'])}", ""]
    for m in results["minimality"]:
        lines.append(f"Minimality attack, optimal full-domain distinct ℓ = {m['l']}: {fmt_time(m['seconds'])}, "
                     f"{m['exposed']:,} exposed ({'exact' if m['exact'] else 'lower bound'})")
    g = results["goals"]
    lines += ["", "Goals",
              f"  Ace on Adult under {ADULT_GOAL_S:g} s: {'met' if g['ace_adult_met'] else 'NOT MET'}",
              f"  Ace on {ACE_ROWS:,} rows under {LARGE_GOAL_S:g} s: {'met' if g['ace_large_met'] else 'NOT MET'}"]
    return "\n".join(lines)


def markdown_report(results: dict) -> str:
    """The Markdown report written beside the JSON."""
    a, b, g = results["ace_adult"], results["ace_large"], results["goals"]
    out = ["## Adversary benchmark", "",
           f"Measured {results['date']} on {results['cpu']}, Python {results['python']}, veil {results['veil']}; "
           f"best of {results['repeat']} runs (the 1,000,000-row Ace of {min(results['repeat'], 2)}). Reproduce with "
           "`python benchmarks/run.py --only adversary`.", "",
           "### Query auditing (simulatable auditor)", "",
           "| aggregate | queries | records | records per query | time | answered | denied |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for key in ("sum", "max"):
        r = results[key]
        out.append(f"| {key.upper()} | {r['queries']:,} | {r['records']:,} | {r['mean_records_per_query']:,.0f} | "
                   f"{fmt_time(r['seconds'])} | {r['answered']:,} | {r['denied']:,} |")
    s = results["sum"]
    out += ["", f"The SUM basis reached rank {s['rank']:,} over {s['atoms']:,} atoms"
                f"{' (Python integers)' if s['exact_integers'] else ' in int64'}.", "",
            f"### Ace (ℓ = {ACE_L}, fit + transform)", "",
            "| table | rows | time | classes | NCP | goal |", "|---|---:|---:|---:|---:|---|",
            f"| Adult | {a['rows']:,} | {fmt_time(a['seconds'])} | {a['classes']:,} | {a['loss']:.4f} | "
            f"under {ADULT_GOAL_S:g} s: **{'met' if g['ace_adult_met'] else 'not met'}** |",
            f"| Adult resampled | {b['rows']:,} | {fmt_time(b['seconds'])} | {b['classes']:,} | {b['loss']:.4f} | "
            f"under {LARGE_GOAL_S:g} s: **{'met' if g['ace_large_met'] else 'not met'}** |", "",
            "### Minimality attack on Adult (optimal full-domain, distinct ℓ-diversity)", "",
            "| ℓ | classes | nodes the search beat | attack time | people exposed |", "|---:|---:|---:|---:|---:|"]
    for m in results["minimality"]:
        out.append(f"| {m['l']} | {m['classes']:,} | {m['rejected_nodes']:,} | {fmt_time(m['seconds'])} | "
                   f"{'' if m['exact'] else '≥ '}{m['exposed']:,} |")
    out.append("")
    return "\n".join(out)
