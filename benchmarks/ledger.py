"""Ledger benchmark (issue 13): charges per second, and the gate's composition check on Adult.

Goals from the issue: 1,000 charges per second or more on SQLite from one process; the gate's
composition check of a new Adult release against 10 earlier ones under 5 s. No peer keeps a
release ledger, so these are veil's own figures.

* **charges**: one process opens a population's budget in a new SQLite ledger (WAL) and charges
  it ``CHARGES`` times; each charge is one transaction (lock, the anchor checked, what changed
  since the session last verified the ledger checked — nothing, when no other connection
  committed — the charge checked against every committed charge, inserted with its log entry
  chained and anchored, commit; :mod:`veil.ledger.verification`). Measured with
  ``synchronous=normal`` (the default for charges: a commit survives the process being killed,
  not the machine losing power) and ``synchronous=full`` (every commit is on disk before
  ``charge()`` returns, so it costs one fsync, which is measured beside it). Best of the runs.
* **gate**: ten releases of Adult (Mondrian for k = 3 … 10, full-domain for k = 5 with entropy
  3-diversity and for k = 10) are published in a ledger, then an eleventh (relaxed Mondrian,
  k = 12) goes through the gate: its models re-checked on the file, the intersection and
  correspondence attacks with every one of the 30,162 people as targets against each earlier
  release, the decision recorded. The figure is the whole ``Ledger.publish`` call; each check's
  attacks alone are shown beside it.

On a machine that other work keeps busy, wall-clock figures measure the machine as much as veil,
so each is given beside the CPU time this process spent (charges per CPU second: what one free
core sustains, fsync waits aside) and the load average as the runs end.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import tempfile
import time
from pathlib import Path

from harness import cpu_model, fmt_time
from timing import progress

CHARGES = 2_000
CHARGES_GOAL = 1_000.0
GATE_GOAL = 5.0


def _charges_per_second(folder: Path, run: int, synchronous: str) -> tuple[float, float]:
    """Charges per second of wall-clock time, and per second of this process's CPU time."""
    from veil.dp import Budget
    from veil.ledger import Ledger

    ledger, _ = Ledger.init(f"sqlite:///{folder / f'charges-{synchronous}-{run}.db'}?synchronous={synchronous}")
    ledger.add_population("survey", budget=Budget(CHARGES))
    with ledger.open_budget("survey") as accountant:
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(CHARGES):
            accountant.charge(0.5, label="count")
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    ledger.close()
    return CHARGES / seconds, CHARGES / cpu


def _releases(folder: Path):
    """Eleven Adult releases written with their manifests: ten earlier ones and the new one."""
    import veil
    from veil.anonymize import FullDomain, Mondrian
    from veil.models import EntropyLDiversity, KAnonymity

    adult = veil.load_adult()
    made = [(f"mondrian-k{k}", Mondrian([KAnonymity(k)])) for k in range(3, 11)]
    made += [("fulldomain-k5-l3", FullDomain([KAnonymity(5), EntropyLDiversity(3, sensitive="occupation")],
                                             suppression_limit=0.02)),
             ("fulldomain-k10", FullDomain([KAnonymity(10)], suppression_limit=0.02)),
             ("mondrian-relaxed-k12", Mondrian([KAnonymity(12)], mode="relaxed"))]
    paths = []
    for name, anonymizer in made:
        progress(f"gate: anonymizing Adult ({name})")
        target = folder / name
        target.mkdir()
        anonymizer.fit_transform(adult).write(target / "release.csv", target / "manifest.json")
        paths.append(target / "manifest.json")
    return paths


def _gate(folder: Path) -> dict:
    import veil.ledger.checks as checks
    from veil.data.bundled import adult_csv, adult_hierarchies
    from veil.ledger import Ledger
    from veil.ledger.checks import IntersectionCheck
    from veil.ledger.policy import Policy

    manifests = _releases(folder)
    hierarchies = adult_hierarchies()
    ledger, _ = Ledger.init(folder / "gate.db")
    ledger.add_population("adult")
    # Record the ten earlier releases whatever they expose, so that the eleventh meets ten.
    everything = Policy(checks=(IntersectionCheck(max_share=1.0),))
    for path in manifests[:-1]:
        progress(f"gate: publishing {path.parent.name}")
        assert ledger.publish(path, population="adult", data=adult_csv(), policy=everything,
                              hierarchies=hierarchies).published
    # Each cross-release check the gate runs, timed: {check name: seconds of each run}.
    check_seconds: dict[str, list[float]] = {}
    runs = {cls: cls.run for cls in (checks.IntersectionCheck, checks.CorrespondenceCheck, checks.MatchingCheck,
                                     checks.JoinCheck)}

    def timed(run):
        def timed_run(self, *args):
            start = time.perf_counter()
            try:
                return run(self, *args)
            finally:
                check_seconds.setdefault(self.name, []).append(time.perf_counter() - start)
        return timed_run

    for cls, run in runs.items():
        cls.run = timed(run)
    try:
        progress("gate: the eleventh release")
        start, cpu = time.perf_counter(), time.process_time()
        decision = ledger.publish(manifests[-1], population="adult", data=adult_csv(), hierarchies=hierarchies)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        for cls, run in runs.items():
            cls.run = run
    worst = max(decision.findings, key=lambda f: f.measure)
    return {"seconds": seconds, "cpu_seconds": cpu, "attacks_seconds": sum(check_seconds.get("intersection", [])),
            "checks": {name: {"runs": len(times), "seconds": sum(times)} for name, times in check_seconds.items()},
            "earlier": len(manifests) - 1, "pairs": len(decision.findings), "published": decision.published,
            "worst": {"earlier": worst.earlier, "exposed": worst.figures["exposed"],
                      "share": worst.measure}, "reason": decision.reason}


def run(repeat: int) -> dict:
    """Time charges per second and the gate's composition check on Adult."""
    import veil

    with tempfile.TemporaryDirectory(prefix="veil-ledger-bench-") as tmp:
        folder = Path(tmp)
        os.environ.setdefault("VEIL_KEY_FILE", str(folder / "veil.key"))
        charges = {}
        fsync = _fsync_seconds(folder)  # the disk as the runs below find it
        for synchronous in ("normal", "full"):
            runs = []
            for i in range(repeat):
                progress(f"charges, synchronous={synchronous}: run {i + 1} of {repeat}")
                runs.append(_charges_per_second(folder, i, synchronous))
            rates = [wall for wall, _ in runs]
            charges[synchronous] = {"count": CHARGES, "per_second": max(rates), "runs": rates,
                                    "per_cpu_second": max(cpu for _, cpu in runs)}
        gate = _gate(folder)
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(), "veil": veil.__version__,
        "load_average": _load_average(), "charges": charges, "fsync_seconds": fsync, "gate": gate,
        "goals": {"charges_met": charges["normal"]["per_second"] >= CHARGES_GOAL,
                  "gate_met": gate["seconds"] < GATE_GOAL},
    }


def _load_average() -> float | None:
    """The machine's one-minute load average as the runs end (other work slows wall-clock figures)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _fsync_seconds(folder: Path, times: int = 200) -> float:
    """The disk's own cost of one durable commit: the median time of a small write and fsync."""
    path = folder / "fsync-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    spent = []
    try:
        for _ in range(times):
            start = time.perf_counter()
            os.write(fd, b"x" * 100)
            os.fsync(fd)
            spent.append(time.perf_counter() - start)
    finally:
        os.close(fd)
    return sorted(spent)[times // 2]


def _load(results: dict) -> str:
    load = results.get("load_average")
    return "unknown" if load is None else f"{load:.1f}"


def _check_figures(gate: dict) -> list[tuple[str, dict]]:
    """The cross-release checks' runs and seconds (results of older runs timed the intersection
    attacks alone)."""
    if "checks" in gate:
        return list(gate["checks"].items())
    return [("intersection", {"runs": gate["earlier"], "seconds": gate["attacks_seconds"]})]


def _checks(gate: dict) -> str:
    return " and ".join(f"the {c['runs']} {name} attacks {fmt_time(c['seconds'])}" for name, c in _check_figures(gate))


def terminal_report(results: dict) -> str:
    """The report printed to the terminal."""
    charges, gate, goals = results["charges"], results["gate"], results["goals"]
    full, normal = charges["full"], charges["normal"]
    return "\n".join([
        f"veil ledger benchmark, {results['date']}", f"{results['cpu']}, Python {results['python']}, "
        f"load average {_load(results)}", "",
        f"SQLite, one process, {full['count']:,} charges, best of {len(full['runs'])}:",
        f"  synchronous=normal (the default; survives process kills, not power loss): {normal['per_second']:,.0f} "
        f"charges/s ({normal['per_cpu_second']:,.0f} per CPU second)",
        f"  synchronous=full (each commit waits for fsync, {fmt_time(results['fsync_seconds'])} on this "
        f"disk): {full['per_second']:,.0f} charges/s ({full['per_cpu_second']:,.0f} per CPU second)",
        f"Gate: a new Adult release against {gate['earlier']} earlier ones: {fmt_time(gate['seconds'])} in all "
        f"({fmt_time(gate['cpu_seconds'])} of CPU), of which {_checks(gate)}; "
        f"{'published' if gate['published'] else 'refused'}",
        "", "Goals",
        f"  {CHARGES_GOAL:,.0f} charges/s or more (synchronous=normal, the default): "
        f"{'met' if goals['charges_met'] else 'NOT MET'}",
        f"  composition check under {GATE_GOAL:g} s: {'met' if goals['gate_met'] else 'NOT MET'}"])


def markdown_report(results: dict) -> str:
    """The Markdown report written beside the JSON."""
    charges, gate, goals = results["charges"], results["gate"], results["goals"]
    full, normal = charges["full"], charges["normal"]
    return "\n".join([
        "## Ledger benchmark", "",
        f"Measured {results['date']} on {results['cpu']}, Python {results['python']}, veil {results['veil']}, "
        f"load average {_load(results)}. Reproduce with `python benchmarks/run.py --only ledger`.", "",
        "| measure | figure | per CPU second | goal |", "|---|---:|---:|---|",
        f"| charges per second, SQLite, one process, synchronous=normal (the default: survives a killed "
        f"process, not a power loss) | {normal['per_second']:,.0f} | {normal['per_cpu_second']:,.0f} | "
        f"≥ {CHARGES_GOAL:,.0f}: **{'met' if goals['charges_met'] else 'not met'}** |",
        f"| charges per second, SQLite, one process, synchronous=full (one fsync of "
        f"{fmt_time(results['fsync_seconds'])} per commit on this disk) | {full['per_second']:,.0f} | "
        f"{full['per_cpu_second']:,.0f} | |",
        f"| gate: a new Adult release against {gate['earlier']} earlier ones (whole publish) | "
        f"{fmt_time(gate['seconds'])} | {fmt_time(gate['cpu_seconds'])} of CPU | "
        f"< {GATE_GOAL:g} s: **{'met' if goals['gate_met'] else 'not met'}** |",
        *[f"| of which the {c['runs']} {name} attacks (30,162 targets each) | {fmt_time(c['seconds'])} | | |"
          for name, c in _check_figures(gate)], "",
        f"{full['count']:,} charges per run, best of {len(full['runs'])} runs. The new release was "
        f"{'published' if gate['published'] else 'refused'}: "
        f"{gate['reason'] or 'no earlier release composes badly with it'}", ""])
