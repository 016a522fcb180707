"""The benchmark figures of the README and the documentation site, rendered from the results files,
so that the two cannot drift.

Each benchmark's figures sit between two marker comments named after its results file,
``<!-- bench:NAME:start -->`` and ``<!-- bench:NAME:end -->``; what lies between them is exactly
:func:`render` of ``results/NAME.json``, with the date and the machine the run measured. The
summary of every comparison is in README.md; each benchmark's own block is on a page of the site
(``docs/benchmarks.md``, or the guide it belongs to): :func:`pages` lists where blocks may sit.
``python benchmarks/run.py`` rewrites the blocks after each benchmark it runs (into the default
results folder), ``python benchmarks/readme.py`` rewrites them all from the files, and a test
(``tests/test_readme_benchmarks.py``) fails when a block differs from its file, or when a results
file has no block or two: a figure edited by hand is caught.

This module reads only the JSON files (and the standard library), so the check runs anywhere.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE.parent / "README.md"
#: The documentation site's pages, which hold every block but the summary.
DOCS = HERE.parent / "docs"
BLOCK = re.compile(r"(<!-- bench:(?P<name>[\w-]+):start -->\n)(?P<body>.*?)(<!-- bench:(?P=name):end -->)", re.S)


# ------------------------------------------------------------------------------- formatting

def t(seconds: float | None) -> str:
    """A duration with three significant digits, in s, ms or µs (``—`` for none)."""
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale:
            break
    else:
        unit, scale = "µs", 1e-6
    value = seconds / scale
    return f"{value:,.{0 if value >= 100 else 1 if value >= 10 else 2}f} {unit}"


def x(ratio: float | None) -> str:
    """A ratio such as ``2,807×``, ``71×`` or ``4.4×`` (``—`` for none)."""
    if ratio is None:
        return "—"
    if ratio >= 100:
        return f"{ratio:,.0f}×"
    return f"{ratio:.0f}×" if ratio >= 10 else f"{ratio:.1f}×" if ratio >= 0.1 else f"{ratio:.2f}×"


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def machine(meta: dict, run: dict | None = None) -> str:
    """The sentence that says when and where the figures were measured and, given the ``run``
    entry ``benchmarks/run.py`` stores, how busy the machine was and how much the runs varied."""
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    return (f"*Measured {meta['date']} on {meta['cpu']} ({meta['cores']} cores), Python {meta['python']}; "
            f"{versions}.*" + conditions(run, meta["cores"]))


def conditions(run: dict | None, cores) -> str:
    """The load on the machine around a benchmark, and the spread of veil's repeated runs."""
    if not run:
        return ""
    busy = max(run["load_before"], run["load_after"]) > cores
    text = (f" Load average {run['load_before']:.1f} before, {run['load_after']:.1f} after"
            + (f" (above the {cores} cores: other jobs shared the machine)" if busy else ""))
    spread = run.get("spread")
    if spread:
        text += (f"; over its {spread['figures']} repeated figures the median run took {x(spread['median_over_best'])}"
                 f" the best, the slowest at most {x(spread['worst_over_best'])}")
    return text + "."


def goals(results: dict) -> list[str]:
    rows = results.get("goals") or []
    return ["", "Goals: " + "; ".join(f"{g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**"
                                      for g in rows) + "."] if rows else []


def table(header: list[str], rows: list[list[str]], text: tuple[int, ...] = (0,)) -> list[str]:
    """A Markdown table; figures are right-aligned, the columns in ``text`` left-aligned."""
    align = ["---" if i in text else "---:" for i in range(len(header))]
    return ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"] + ["| " + " | ".join(r) + " |" for r in rows]


# ------------------------------------------------------------------------------- one per results file

CHECKER_LABELS = {"k": "k-anonymity", "alpha": "(α,k)-anonymity", "l_distinct": "distinct ℓ-diversity",
                  "l_entropy": "entropy ℓ-diversity", "c_l_recursive": "recursive (c,ℓ)-diversity",
                  "t_equal": "t-closeness, equal EMD", "t_hierarchical": "t-closeness, hierarchical EMD",
                  "delta": "δ-disclosure", "beta_basic": "basic β-likeness", "beta_enhanced": "enhanced β-likeness"}


def checker(r: dict) -> list[str]:
    adult, large = r["adult"], r["large"]
    peers = adult.get("pycanon") or {}
    rows = []
    for key, label in CHECKER_LABELS.items():
        ours, big = adult["veil"]["models"][key]["end_to_end_s"], large["veil"]["models"][key]["end_to_end_s"]
        peer = peers.get(key, {}).get("seconds")
        rows.append([label, t(ours), t(peer), x(peer / ours) if peer else "—", t(big), x(big / large["floor_s"])])
    total = sum(p["seconds"] for p in peers.values()) if peers else None
    rows.append(["all models together (`veil.check`)", t(adult["veil"]["check_s"]), t(total),
                 x(total / adult["veil"]["check_s"]) if total else "—", t(large["veil"]["check_s"]),
                 x(large["veil"]["check_s"] / large["floor_s"])])
    return [machine(r["meta"], r.get("run")) + f" veil: best of {r['meta']['repeat']}; pyCANON once per function.", "",
            *table(["model", "veil, Adult", "pyCANON, Adult", "veil faster by", f"veil, {large['veil']['rows']:,} rows",
                    "/ polars floor"], rows),
            "", f"The polars floor (a bare `group_by` over the quasi-identifiers) took {t(adult['floor_s'])} on Adult "
                f"and {t(large['floor_s'])} on {large['veil']['rows']:,} rows. Loading and encoding is paid once per "
                f"table and is not in the figures above: {t(adult['veil']['load_encode_s'])} for Adult from CSV, "
                f"{t(large['veil']['load_encode_s'])} for the {large['veil']['rows']:,}-row frame.", *goals(r)]


def fulldomain(r: dict) -> list[str]:
    adult = r["adult"]
    anjana = {run["limit"]: run for run in (r.get("anjana") or {}).get("runs", [])}
    rows = []
    for run in adult["runs"]:
        peer = anjana.get(run["limit"]) if run["metric"] == "loss" else None
        rows.append([f"{run['limit']:.0%}, {run['metric']}", t(run["seconds"]), f"{run['nodes_checked']:,}",
                     "yes" if run["proven_optimal"] else "no", t(peer["seconds"]) if peer else "",
                     x(peer["seconds"] / run["seconds"]) if peer else "",
                     f"loss {peer['values']['loss']:.4g} (veil {run['value']:.4g})" if peer else ""])
    large = r["large"]
    hardest = max(large["runs"], key=lambda run: run["seconds"])
    return [machine(r["meta"], r.get("run")) + f" veil: best of {r['meta']['repeat']} fits from the encoded table; ANJANA once per "
                                 "limit.", "",
            *table(["suppression, metric", "veil fit", "nodes checked", "proven optimal", "ANJANA (greedy)",
                    "veil faster by", "ANJANA's node"], rows, text=(0, 3, 6)),
            "", f"On {large['rows']:,} rows (Adult resampled) load + encode takes {t(large['load_encode_s'])} and the "
                f"hardest search (k = {hardest['k']}, {hardest['limit']:.0%}) {t(hardest['seconds'])}.", *goals(r)]


def arx(r: dict) -> list[str]:
    """veil's full-domain search beside ARX's, per task: the node, the nodes checked, the search
    in process and the whole process."""
    meta, rows = r["meta"], []
    for task in r["tasks"]:
        ours, theirs, ratio = task["veil"], task.get("arx") or {}, task.get("ratios") or {}
        agree = task["agree"] if task["agree"] in ("yes", "—") else f"**{task['agree']}**"
        rows.append([task["label"], "".join(str(v) for v in ours["levels"]), agree, f"{ours['nodes_checked']:,}",
                     f"{theirs['nodes_checked']:,}" if theirs else "—", t(ours["search_s"]), t(theirs.get("search_s")),
                     x(ratio.get("search")), t(ours["process"]["best_s"]),
                     t(theirs["process"]["best_s"]) if theirs else "—", x(ratio.get("process"))])
    out = [machine(meta, r.get("run")) + f" Search: in process and warm, best of {meta['repeat']}; whole "
           f"processes: cold, best of {meta['process_repeat']}.", ""]
    if r.get("arx_skipped"):
        out += [f"ARX {r['arx_skipped']}", ""]
    out += table(["task", "node", "same as ARX's", "nodes checked", "ARX", "search", "ARX", "ARX / veil",
                  "`veil anonymize`", "ARX's driver", "ARX / veil"], rows, text=(0, 1, 2))
    out += ["", "Metric: discernibility (ARX's non-monotonic DM) unless the task says NUE; the node lists the levels "
                "of sex, age, race, marital-status, education, native-country, workclass, salary-class. veil's nodes "
                "checked are those judged against the models (some from their class sizes alone), ARX's the "
                "transformations it checked; ARX's search time is its own (`ARXResult.getTime`)."]
    return out + goals(r)


def local_recoding(r: dict) -> list[str]:
    adult, peer = r["adult"], r.get("anonypy") or {}
    peer_s = (peer.get("partition_s") or 0) + (peer.get("anonymize_s") or 0) if peer.get("partition_s") else None
    rows = []
    for run in adult["mondrian"]:
        total = run["fit_s"] + run["transform_s"]
        rows.append([f"Mondrian {run['mode']}, categorical along {run['categorical']}", t(total),
                     x(peer_s / total) if peer_s else "—", f"{run['partitions']:,}", f"{run['loss']:.4f}"])
    mdav = adult["mdav"]
    rows.append(["MDAV", t(mdav["fit_s"] + mdav["transform_s"]), "(no peer)", f"{mdav['classes']:,}",
                 f"{mdav['loss']:.4f}"])
    curve = ", ".join(f"{c['rows']:,} rows {t(c['fit_s'] + c['transform_s'])}" for c in r["curve"])
    noise = r.get("noise_curve") or []
    out = [machine(r["meta"], r.get("run")) + f" veil: best of {r['meta']['repeat']} (fit + transform); AnonyPy once.", "",
           *table(["algorithm (k = 5)", "veil", "veil faster than AnonyPy", "classes", "loss"], rows)]
    if peer_s:
        out += ["", f"AnonyPy's Mondrian took {t(peer_s)} (partitioning {t(peer['partition_s'])}), loss "
                    f"{peer['loss']:.4f} over {peer['partitions']:,} partitions."]
    out += ["", f"Mondrian strict on Adult resampled (fit + transform): {curve}"
                + (f"; with a 100,000-value column that keeps partitions splitting, {noise[-1]['rows']:,} rows take "
                   f"{t(noise[-1]['fit_s'] + noise[-1]['transform_s'])}" if noise else "") + ".", *goals(r)]
    return out


def attacks(r: dict) -> list[str]:
    meta = {"date": r["date"], "cpu": r["cpu"], "cores": r.get("cores", "?"), "python": r["python"],
            "versions": {"veil": r["veil"]}}
    pairs = ", ".join(f"{t(p['seconds'])} for {p['pair']}" for p in r["intersection"])
    goal_rows = [{"goal": "the intersection attack on two releases over 5,000 targets under 1 s",
                  "measured": f"worst {t(r['goals']['intersection_worst'])}", "met": r["goals"]["intersection_met"]},
                 {"goal": "the composition experiment under a minute", "measured": t(r["composition"]["seconds"]),
                  "met": r["goals"]["composition_met"]}]
    return [machine(meta, r.get("run")), "", f"The intersection attack on two Adult releases (k = 5 and k = 10) over "
            f"{r['intersection'][0]['targets']:,} targets: {pairs}; the composition experiment over "
            f"{len(r['composition']['k'])} values of k and {len(r['composition']['pairs'])} algorithm pairs: "
            f"{t(r['composition']['seconds'])}.", *goals({"goals": goal_rows})]


def dp(r: dict) -> list[str]:
    queries = {"histogram": "histogram", "contingency": "3-way contingency table"}
    rows = []
    for query, label in queries.items():
        secure = r["veil"]["queries"][f"secure/{query}"]
        seeded = r["veil"]["queries"][f"seeded/{query}"]
        peers = [(r.get(p) or {}).get("queries", {}).get(query, {}).get("seconds") for p in ("diffprivlib", "opendp")]
        rows.append([label, f"{secure['cells']:,}", t(secure["seconds"]), t(seeded["seconds"]), t(peers[0]), t(peers[1]),
                     f"{x(r['ratios'].get(f'{query}/secure/diffprivlib'))} / {x(r['ratios'].get(f'{query}/secure/opendp'))}"])
    fast = r["secure_at_speed"]
    fast_rows = [[queries[q["query"]], t(q["secure_s"]), t(q["seeded_s"]), x(q["secure_over_seeded"])]
                 for q in fast["queries"]]
    return [machine(r["meta"], r.get("run")) + f" Best of {r['meta']['repeat']}; ε = {r['meta']['epsilon']:g}, discrete Laplace "
                                 "noise on every cell.", "",
            *table(["query", "cells", "veil secure", "veil seeded", "diffprivlib", "OpenDP",
                    "veil secure faster than diffprivlib / OpenDP"], rows),
            "", f"{r['meta']['rows']:,} rows, three text columns of 10, 20 and 50 categories; veil from its encoded "
                f"table (encoding the three columns takes {t(r['veil']['encode_s'])}, once). veil's secure path at "
                f"{fast['rows']:,} rows, beside its seeded one:", "",
            *table(["query", "secure", "seeded", "secure / seeded"], fast_rows), *goals(r)]


DPQUERY_LABELS = {"a": "count and mean by sex, race (public keys)", "b": "count and mean by sex, race (private keys)",
                  "c": "five quantiles of age by race (public keys)"}
DPQUERY_TOOLS = {"veil": "veil", "tumult": "Tumult Analytics", "opendp": "OpenDP (polars)", "pipelinedp": "PipelineDP"}


def dpquery(r: dict) -> list[str]:
    """Grouped DP queries at the person level: per table and query, each tool's first run, peak
    memory, mean absolute errors and time over veil's."""
    meta, rows = r["meta"], []
    for size, block in r["sizes"].items():
        for q, entry in block["queries"].items():
            for tool, label in DPQUERY_TOOLS.items():
                e = entry.get(tool)
                if e is None:
                    continue
                if "failed" in e:
                    rows.append([f"{block['rows']:,}", f"({q})", label, "could not run", "", "", "", ""])
                    continue
                mae = (e.get("accuracy") or {}).get("mae") or {}
                errs = " / ".join("—" if mae.get(n) is None else f"{mae[n]:.3g}"
                                  for n in (["count", "mean"] if q != "c" else ["all"]))
                ratio = (r["ratios"].get(f"{size}/{q}/{tool}") or {}).get("time")
                rows.append([f"{block['rows']:,}", f"({q})", label, t(e["first_s"]), t(e["process_s"]),
                             mib(e["peak_bytes"]) if e.get("peak_bytes") else "—", errs,
                             "" if tool == "veil" else x(ratio)])
    legend = "; ".join(f"({q}) {label}" for q, label in DPQUERY_LABELS.items()
                       if any(q in b["queries"] for b in r["sizes"].values()))
    return [machine(meta, r.get("run")) + f" ε = {meta['epsilon']:g}, each person at most {meta['max_rows_per_group']} "
            f"rows in at most {meta['max_groups']} group; each tool in a fresh process, from the Parquet file to "
            f"the released table; errors over {meta['accuracy_runs']} runs on Adult, from the timed runs on the "
            "large table.", "",
            *table(["rows", "query", "tool", "first run", "whole process", "peak memory",
                    "mean abs. error (count / mean, or years)", "time / veil's"], rows, text=(1, 2)),
            "", f"Queries: {legend}. The full report, with what each tool can and cannot do, is "
                "`benchmarks/results/dpquery.md`.", *goals(r)]


SYNTH_TOOLS = {"veil": "veil", "smartnoise": "smartnoise-synth"}
SYNTH_BASELINES = {"floor": "bootstrap resample (floor)", "independent": "independent columns",
                   "chow_liu": "Chow–Liu tree"}


def _delta(delta: float) -> str:
    mantissa, exponent = f"{delta:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def _pm(summary: dict | None, digits: int = 3) -> str:
    if not summary:
        return "—"
    if summary["n"] == 1:  # one run: no spread to show
        return f"{summary['mean']:.{digits}f}"
    return f"{summary['mean']:.{digits}f} ± {summary['sd']:.{digits}f}"


def synth(r: dict) -> list[str]:
    """DP synthetic data: per tool, mechanism and ε the mean 2- and 3-way TVD, the SDNist score
    and the whole process's time (mean ± sd over the runs), then the baselines without noise."""
    meta, rows = r["meta"], []
    for key, e in r["runs"].items():
        s, times = e.get("scores") or {}, e.get("times") or {}
        runs = f"{e['completed']}/{e['runs']}" + (" (timeout)" if e.get("timeouts") else "") + \
            (" (failed)" if e.get("failures") else "")
        ratio = (r["ratios"].get(key.split("/", 1)[1]) or {}).get("time") if e["tool"] != "veil" else None
        process = times.get("process_s")
        rows.append([SYNTH_TOOLS[e["tool"]], e["mechanism"].upper(), f"{e['epsilon']:g}", runs, _pm(s.get("tvd2")),
                     _pm(s.get("tvd3")), _pm(s.get("sdnist"), 0), t(process["mean"]) if process else "—",
                     x(ratio) if ratio else ""])
    for key, label in SYNTH_BASELINES.items():
        b = r["baselines"][key]
        rows.append([label, "no DP", "—", str(b["tvd3"]["n"]), _pm(b["tvd2"]), _pm(b["tvd3"]), _pm(b["sdnist"], 0),
                     "", ""])
    return [machine(meta, r.get("run")) + f" Adult ({meta['rows']:,} rows) on a stated public domain, "
            f"δ = {_delta(meta['delta'])}; each run a whole process (imports, reading the data, fitting, sampling "
            f"{meta['rows']:,} rows); mean ± standard deviation over the runs.", "",
            *table(["tool", "mechanism", "ε", "runs", "mean 2-way TVD", "mean 3-way TVD", "SDNist score",
                    "time (process)", "time / veil's"], rows, text=(0, 1, 3)),
            "", "The full report, with the domain, the peer's settings and the CPU times, is "
                "`benchmarks/results/synth.md`.", *goals(r)]


def ldp(r: dict) -> list[str]:
    meta = {k: r[k] for k in ("date", "cpu", "cores", "python", "versions")}
    rows = [[f"{p['protocol']}, 100,000 × 64", t(p["veil"]["seconds"]), t(p["veil_seeded"]["seconds"]),
             t(p["pure_ldp"]["seconds"]), x(p["speedup"])] for p in r["side_by_side"]]
    large = r["large"]
    rows.append(["OLH, 1,000,000 × 1,024", t(large["veil"]["seconds"]), t(large["veil_seeded"]["seconds"]),
                 f"(about {t(large['pure_ldp_extrapolated_s'])}, extrapolated)",
                 f"about {x(large['speedup_vs_extrapolation'])}"])
    fast = [[f"{run['protocol']}, {run['n']:,} × {run['d']:,}", t(run["secure"]["seconds"]), t(run["seeded"]["seconds"]),
             x(run["secure_over_seeded"])] for run in r["secure_at_speed"]]
    goal_rows = [{"goal": f"OLH at 1,000,000 × 1,024 under 2 s (secure)", "measured": t(r["goals"]["large_s"]),
                  "met": r["goals"]["large_met"]},
                 {"goal": "secure coins within 1.5× of seeded ones", "measured":
                  f"worst {x(r['goals']['secure_ratio'])} ({r['goals']['secure_worst']})", "met": r["goals"]["secure_met"]}]
    return [machine(meta, r.get("run")) + f" ε = {r['epsilon']:g}; perturb + estimate; veil best of {r['repeat']}, pure-LDP once.", "",
            *table(["protocol, users × domain", "veil secure", "veil seeded", "pure-LDP", "veil secure faster by"],
                   rows), "", "veil's secure coins (the operating system's CSPRNG, as a deployment draws them) beside "
                              "seeded ones:", "",
            *table(["protocol, users × domain", "secure", "seeded", "secure / seeded"], fast), *goals({"goals": goal_rows})]


def ledger(r: dict) -> list[str]:
    c, g = r["charges"], r["gate"]
    meta = {"date": r["date"], "cpu": r["cpu"], "cores": r["cores"], "python": r["python"],
            "versions": {"veil": r["veil"]}}
    fsync = r.get("fsync_seconds")
    rows = [["charges per second, `synchronous=normal` (the default: survives a killed process, not a power loss)",
             f"{c['normal']['per_second']:,.0f}", f"{c['normal']['per_cpu_second']:,.0f}", "≥ 1,000"],
            ["charges per second, `synchronous=full`" + (f" (one fsync took {t(fsync)} on this disk)" if fsync else ""),
             f"{c['full']['per_second']:,.0f}", f"{c['full']['per_cpu_second']:,.0f}", ""],
            [f"gate, a new Adult release against {g['earlier']} earlier ones (whole `veil publish`)", t(g["seconds"]),
             f"{t(g['cpu_seconds'])} of CPU", "< 5 s"]]
    rows += [[f"of which the {check['runs']} {name} attacks", t(check["seconds"]), "", ""]
             for name, check in (g.get("checks") or {}).items()]
    goal_rows = [{"goal": "1,000 charges per second or more (the default)", "measured":
                  f"{c['normal']['per_second']:,.0f}", "met": r["goals"]["charges_met"]},
                 {"goal": "the gate under 5 s", "measured": t(g["seconds"]), "met": r["goals"]["gate_met"]}]
    return [machine(meta, r.get("run")) + f" {c['normal']['count']:,} charges per run, best of "
            f"{len(c['normal']['runs'])} runs.", "",
            *table(["measure", "wall clock", "per CPU second of the process", "goal"], rows),
            "", f"The gate {'published' if g['published'] else 'refused'} the new release: {g['reason']}",
            *goals({"goals": goal_rows})]


def startup(r: dict) -> list[str]:
    s, o, e = r["startup"], r["one_off"], r["encoding"]
    w = o["whole_process"]
    spread = lambda run: [t(run["best_s"]), t(run["median_s"]), t(run["worst_s"])]  # noqa: E731
    rows = [["`veil check` Adult `--json`", *spread(s["veil_check"])],
            ["polars: read Adult, group by the quasi-identifiers", *spread(s["polars_floor"])],
            ["`veil --help`", *spread(s["veil_help"])],
            ["a minimal Typer app `--help` (the framework's floor)", *spread(s["typer_help"])],
            ["`python -c pass`", *spread(s["python"])],
            [f"`veil check`, {o['rows']:,} rows from CSV", *spread(w["veil_check"])],
            [f"polars: read {o['rows']:,} rows, group by", *spread(w["polars_floor"])]]
    imports = "; ".join(f"{label} {t(sum(s['imports'][key].values()))} ("
                        + ", ".join(f"{name} {t(sec)}" for name, sec in list(s["imports"][key].items())[:4]) + ")"
                        for key, label in (("veil_check", "`veil check`"), ("veil_help", "`veil --help`"),
                                           ("typer_help", "the minimal Typer app")))
    c, pair = s["check_pair"], w["pair"]
    return [machine(r["meta"], r.get("run")) + f" Whole processes, imports included; best of {r['meta']['repeat']}, with the "
                                 "median and the worst.", "",
            *table(["command", "best", "median", "worst"], rows),
            "", f"`veil check` over the polars script, each pair run one after the other: the median of "
                f"{c['pairs']} pairs is {c['ratio']:.2f}× in wall time, {c['cpu_ratio']:.2f}× in CPU time "
                f"(medians {t(c['veil_cpu_s'])} and {t(c['polars_cpu_s'])} of CPU); at {o['rows']:,} rows, "
                f"{pair['ratio']:.2f}× over {pair['pairs']} pairs. veil's modules are compiled to bytecode "
                "first, as installing veil leaves them.",
            "", f"Import time (`python -X importtime`, by package): {imports}. Heavy packages loaded: `veil check` "
                f"{', '.join(s['loaded']['veil_check']) or 'none'}; `veil --help` "
                f"{', '.join(s['loaded']['veil_help']) or 'none'}. Encoding {e['rows']:,} rows ({e['columns']} "
                f"columns): {t(e['from_frame_s'])} from a polars frame; {t(e['from_csv_s'])} from CSV, reading "
                f"included (reading it as text alone: {t(e['read_text_s'])}).", *goals(r)]


MEMORY_LABELS = {"check": "`veil check --json`", "mondrian": "`veil anonymize`, Mondrian (k = 5)",
                 "fulldomain": "`veil anonymize`, full-domain (k = 5, entropy ℓ = 3, 2 %)"}


def memory(r: dict) -> list[str]:
    meta = r["meta"]
    if r.get("skipped"):
        return [machine(meta, r.get("run")), "", f"Not measured: {r['skipped']}"]
    rows = [[MEMORY_LABELS[name], mib(m["peak_bytes"]), f"{m['per_row']:.0f} bytes", t(m["wall_s"])]
            for name, m in r["veil"].items()]
    return [machine(meta, r.get("run")) + f" Adult resampled to {meta['rows']:,} rows in a CSV file of {mib(r['file_bytes'])}; "
                            "each command a process of its own, its peak resident memory from `/usr/bin/time -v`.", "",
            *table(["command", "peak memory", "above the input, per row", "wall time"], rows),
            "", f"The input is what a plain reader holds: pyarrow reading the file, every column as text, peaks at "
                f"{mib(r['input']['peak_bytes'])}.", *goals(r)]


def threads(r: dict) -> list[str]:
    rows = [[s["step"], t(s["one_s"]), t(s["two_s"]), x(s["speedup"]), "yes" if s["identical"] else "**no**"]
            for s in r["steps"]]
    return [machine(r["meta"], r.get("run")) + f" `VEIL_THREADS=1` against `VEIL_THREADS=2`, best of {r['meta']['repeat']} each.",
            "", *table(["step", "1 thread", "2 threads", "speed-up", "same results"], rows), *goals(r)]


def alphabeta(r: dict) -> list[str]:
    meta = {k: r[k] for k in ("date", "cpu", "cores", "python", "versions")}
    goal_rows = [{"goal": "publishing under 2 s", "measured": t(r["goals"]["publish_s"]), "met": r["goals"]["publish_met"]},
                 {"goal": f"{r['queries']:,} counting queries under 1 s", "measured": t(r["goals"]["answer_s"]),
                  "met": r["goals"]["answer_met"]}]
    return [machine(meta, r.get("run")) + f" Best of {r['repeat']}.", "",
            f"Adult over its nine columns with the domains of its hierarchies' leaves ({r['records']:,} records, "
            f"n = {r['n']:,} distinct tuples of m = {r['m']:,}), γ = {r['gamma']:g}, k = {r['k']}: publishing (fit + "
            f"transform, a view of {r['view_rows']:,} tuples) {t(r['publish_secure_s'])} with the secure coins and "
            f"{t(r['publish_seeded_s'])} with seeded ones; {r['queries']:,} random counting queries answered in "
            f"{t(r['answer_s'])}.", *goals({"goals": goal_rows})]


SPARK_TASKS = {"check": "check", "fulldomain": "full-domain k = 5",
               "mondrian": "Mondrian k = 5, rounds on the summary", "mondrian_rounds": "Mondrian k = 5, rounds on Spark"}


def spark(r: dict) -> list[str]:
    """The Spark engine beside the local engine, per size and task (the rounds on Spark beside
    the local engine's Mondrian)."""
    meta, rows = r["meta"], []
    for size, f in r["sizes"].items():
        for task, label in SPARK_TASKS.items():
            there = f.get(f"{task} spark")
            if there is None:
                continue
            here = f.get(f"{'mondrian' if task == 'mondrian_rounds' else task} local")
            rows.append([f"{int(size):,}", label, t(here), t(there), x(there / here) if here else "—",
                         f"{f['load_before']:.1f}"])
    return [machine(meta, r.get("run")) + f" Spark master `{meta['master']}`, Adult resampled (Parquet), one run "
            "per figure from the Parquet path to the answer or the written, shuffled CSV release; the engines' "
            "answers checked identical.", "",
            *table(["rows", "task", "local", "Spark", "Spark / local", "load before"], rows, text=(1,))]


def summary(every: dict[str, dict]) -> list[str]:
    """veil beside each peer, one row per comparison, from every results file; says whether the
    files come from one run of ``benchmarks/run.py`` and which."""
    rows = []

    def add(block: str, what: str, ours: float, peer: str, theirs: float | None, unit=t) -> None:
        date = (every[block].get("meta") or every[block])["date"]
        rows.append([what, unit(ours), peer, unit(theirs) if theirs else "—", x(theirs / ours) if theirs else "—",
                     date.removesuffix(" UTC")])

    c = every["checker"]
    pycanon = c["adult"].get("pycanon")
    add("checker", "every privacy model on Adult", c["adult"]["veil"]["check_s"], "pyCANON",
        sum(p["seconds"] for p in pycanon.values()) if pycanon else None)
    add("checker", f"every privacy model, {c['large']['veil']['rows']:,} rows", c["large"]["veil"]["check_s"],
        "polars group_by (floor)", c["large"]["floor_s"])
    f = every["fulldomain"]
    anjana = {run["limit"]: run["seconds"] for run in (f.get("anjana") or {}).get("runs", [])}
    for run in f["adult"]["runs"]:
        if run["metric"] == "loss":
            add("fulldomain", f"full-domain, Adult, {run['limit']:.0%} suppression", run["seconds"], "ANJANA (greedy)",
                anjana.get(run["limit"]))
    a = every["arx"]
    compared = [task for task in a["tasks"] if task.get("ratios")]
    if compared:
        slowest = min(compared, key=lambda task: task["ratios"]["search"])
        add("arx", f"full-domain search, Adult, {slowest['label']} (least ratio of {len(compared)} tasks)",
            slowest["veil"]["search_s"], "ARX 3.9.2", slowest["arx"]["search_s"])
        slowest = min(compared, key=lambda task: task["ratios"]["process"])
        add("arx", f"`veil anonymize`, whole process, {slowest['label']} (least ratio)",
            slowest["veil"]["process"]["best_s"], "ARX 3.9.2 (its driver)", slowest["arx"]["process"]["best_s"])
    lr = every["local_recoding"]
    peer = lr.get("anonypy") or {}
    peer_s = peer["partition_s"] + (peer.get("anonymize_s") or 0) if peer.get("partition_s") else None
    order = next(run for run in lr["adult"]["mondrian"] if (run["mode"], run["categorical"]) == ("strict", "order"))
    add("local_recoding", "Mondrian strict, Adult", order["fit_s"] + order["transform_s"], "AnonyPy", peer_s)
    d = every["dp"]
    for query, label in (("histogram", "DP histogram"), ("contingency", "DP 3-way contingency table")):
        ours = d["veil"]["queries"][f"secure/{query}"]["seconds"]
        for name, key in (("diffprivlib", "diffprivlib"), ("OpenDP", "opendp")):
            add("dp", f"{label}, {d['meta']['rows']:,} rows, secure", ours, name,
                (d.get(key) or {}).get("queries", {}).get(query, {}).get("seconds"))
    g = every["dpquery"]
    large = g["sizes"].get("large") or g["sizes"]["adult"]
    for q, entry in large["queries"].items():
        ours = (entry.get("veil") or {}).get("first_s")
        if ours is None:
            continue
        for tool in (t for t in ("tumult", "opendp", "pipelinedp") if t in entry):  # the tools this run measured
            add("dpquery", f"grouped DP query ({q}), {large['rows']:,} rows, whole query", ours, DPQUERY_TOOLS[tool],
                (entry.get(tool) or {}).get("first_s"))
    sy = every["synth"]
    for mechanism in ("mst", "aim"):
        ours = ((sy["runs"].get(f"veil/{mechanism}/1") or {}).get("times") or {}).get("process_s")
        theirs = ((sy["runs"].get(f"smartnoise/{mechanism}/1") or {}).get("times") or {}).get("process_s")
        if ours and "smartnoise" in sy["meta"].get("tools", []):
            add("synth", f"DP synthetic data, {mechanism.upper()}, Adult, ε = 1, whole process (mean)", ours["mean"],
                "smartnoise-synth", theirs["mean"] if theirs else None)
    for p in every["ldp"]["side_by_side"]:
        add("ldp", f"LDP {p['protocol']}, 100,000 users × 64, secure", p["veil"]["seconds"], "pure-LDP",
            p["pure_ldp"]["seconds"])
    st = every["startup"]
    add("startup", "`veil check` Adult, whole process", st["startup"]["veil_check"]["best_s"],
        "polars read + group_by script", st["startup"]["polars_floor"]["best_s"])
    add("startup", "`veil --help`", st["startup"]["veil_help"]["best_s"], "a minimal Typer app",
        st["startup"]["typer_help"]["best_s"])
    one_off = st["one_off"]
    add("startup", f"`veil check`, {one_off['rows']:,} rows from CSV", one_off["whole_process"]["veil_check"]["best_s"],
        "polars read + group_by script", one_off["whole_process"]["polars_floor"]["best_s"])
    risk = every["sdc"]["risk"][-1]
    add("sdc", f"Benedetti–Franconi individual and global risk, {risk['rows']:,} rows, weighted", risk["encoded_s"],
        "polars group-by of the keys (counts, weight sums)", risk["floor_s"])
    w = every["workbench"]
    add("workbench", "the workbench's anonymize run, Adult (form POST to done)", w["adult"]["run"]["workbench"]["best_s"],
        "`veil anonymize` on the project's config.yaml (veil's own CLI)", w["adult"]["run"]["cli"]["best_s"])
    m = every["memory"]
    if not m.get("skipped"):
        add("memory", f"`veil check`, {m['meta']['rows']:,} rows: peak memory", m["veil"]["check"]["peak_bytes"],
            "pyarrow reading the CSV as text", m["input"]["peak_bytes"], unit=mib)

    runs = {(r.get("run") or {}).get("started") for r in every.values()}
    commands = {(r.get("run") or {}).get("command") for r in every.values()}
    if len(runs) == 1 and None not in runs:
        source = f"All from one run of `{commands.pop()}`, started {runs.pop()}"
    else:
        source = "From more than one run (each block below names its own date)"
    machines = sorted({f"{m['cpu']} ({m['cores']} cores)" for m in ((r.get("meta") or r) for r in every.values())
                       if m.get("cpu") and m.get("cores")})
    pythons = sorted({(r.get("meta") or r).get("python") for r in every.values()} - {None})
    return [f"*{source}, on {' and '.join(machines)}, Python {', '.join(pythons)}.* veil's figure is its best "
            "run; a peer's, its only one; the ratio is the peer's figure over veil's (above 1, veil is ahead). The "
            "blocks below give each one's load average and spread.", "",
            *table(["what", "veil", "peer", "peer's figure", "ratio", "measured (UTC)"], rows, text=(0, 2))]


def sdc(r: dict) -> list[str]:
    """Statistical disclosure control, veil alone: risk beside a polars group-by of the keys, SUDA2,
    local suppression beside record suppression, and the memory of ``veil check --weight``."""
    meta = r["meta"]
    risk = [[f"{e['rows']:,}", f"{e['groups']:,}", t(e["floor_s"]), t(e["encoded_s"]), x(e["ratio_encoded"]),
             t(e["whole_s"]), x(e["ratio_whole"]), f"{e['expected_reidentifications']:,.1f}"] for e in r["risk"]]
    suda = [[f"{e['rows']:,}", e["table"], str(e["keys"]), t(e["seconds"]), f"{e['records_with_msu']:,}"]
            for e in r["suda"]]
    local = [[f"{e['rows']:,}", e["table"], e["matching"], str(e["k"]), t(e["seconds"]), f"{e['cells']:,}", f"{e['lower_bound']:,}",
              f"{e['record_cells']:,} ({e['records']:,} records)"] for e in r["suppression"]]
    memory = r["memory"]
    lines = [machine(meta, r.get("run")) + f" veil alone (no peer runs here); weights N/n · U(0.5, 1.5) with "
             f"N = {meta['population_factor']}·n; best of {meta['repeat']} (SUDA2: one run).", "",
             *table(["rows", "key groups", "polars group-by", "veil risk (encoded table)", "veil / group-by",
                     "veil risk (from the frame, encoding included)", "veil / group-by",
                     "expected re-identifications"], risk), "",
             *table(["rows", "table", "key variables", "SUDA2", "records with an MSU"], suda, text=(1,)), "",
             *table(["rows", "table", "matching", "k", "local suppression", "cells", "lower bound",
                     "record suppression blanks"], local, text=(1, 2))]
    if "skipped" not in memory:
        lines += ["", f"`veil check --weight` on {memory['rows']:,} rows peaks at {mib(memory['check']['peak_bytes'])} "
                      f"({abs(memory['per_row']):.0f} bytes per row {'more' if memory['per_row'] >= 0 else 'less'} "
                      "than pyarrow holding the file as text), "
                      f"{t(memory['check']['wall_s'])}."]
    return lines + goals(r)


def workbench(r: dict) -> list[str]:
    """The browser workbench beside veil's command line: start-up, the anonymization run, the
    latency of pages while a run works and when idle, and peak memory."""
    meta, s, a, large = r["meta"], r["startup"], r["adult"], r["large"]
    run, lrun, mem, lat = a["run"], large["run"], large["memory"], large["latency"]
    rows = [["start-up: process start to the first page (cold)", t(s["first_200"]["best_s"]), "`veil --help`",
             t(s["veil_help"]["best_s"]), x(s["first_200"]["best_s"] / s["veil_help"]["best_s"])],
            [f"anonymize Adult, the demo's models (form POST to done; median of {len(run['ratios'])} pairs)",
             t(run["workbench"]["best_s"]), "`veil anonymize --config` (the project's)", t(run["cli"]["best_s"]),
             x(run["ratio_median"])],
            [f"anonymize {large['rows']:,} rows, the same models", t(lrun["workbench_s"]), "`veil anonymize --config`",
             t(lrun["cli_s"]), x(lrun["ratio"])],
            [f"peak memory of the run's worker, {large['rows']:,} rows", mib(mem["worker_peak_bytes"]),
             "`veil anonymize` (GNU time)", mib(mem["cli_peak_bytes"]) if mem["cli_peak_bytes"] else "—",
             x(mem["worker_peak_bytes"] / mem["cli_peak_bytes"]) if mem["cli_peak_bytes"] else "—"]]
    latency = [[label, str(lat["idle"][key]["n"]), t(lat["idle"][key]["p50_s"]), t(lat["idle"][key]["p95_s"]),
                str(lat["busy"][key]["n"]), t(lat["busy"][key]["p50_s"]), t(lat["busy"][key]["p95_s"]),
                t(lat["busy"][key]["max_s"])]
               for key, label in (("project", f"the project's page ({large['rows']:,} rows)"),
                                  ("status", "a run's status JSON"))]
    pages = ", ".join(f"{label} {t(a['pages'][key]['median_s'])}" for key, label in
                      (("risk", "Risk"), ("release", "a release"), ("compare", "two releases compared")))
    stages = lrun.get("stages") or run["stages"]
    slowest = max(stages, key=stages.get)
    return [machine(meta, r.get("run")) + " A real `veil serve` process driven over HTTP (urllib, its cookie and "
            "CSRF tokens), beside veil's own command line: no peer can be driven (ARX's GUI and sdcMicro's sdcApp "
            "are interactive).", "",
            *table(["what", "workbench", "beside", "its figure", "workbench / command"], rows, text=(0, 2)), "",
            f"Latency of a GET while anonymize runs work on {large['rows']:,} rows, beside the idle server, the two "
            f"alternating over {len(lat['runs'])} runs (one client fetches the project's page back to back, another a "
            "run's status JSON every 0.1 s):", "",
            *table(["GET", "idle: answers", "p50", "p95", "a run working: answers", "p50", "p95", "max"], latency),
            "", f"The steward's path on Adult, each form and the page it leads to: upload {t(a['steps']['upload'])}, "
                f"confirm {t(a['steps']['confirm'])}, roles {t(a['steps']['roles'])}, the 7 hierarchy files "
                f"{t(a['steps']['hierarchies'])}; pages (median): {pages}. On {large['rows']:,} rows the upload takes "
                f"{t(large['steps']['upload'])}, and the server's peak memory grows from "
                f"{mib(mem['server_steps_bytes']['before'])} before it to {mib(mem['server_steps_bytes']['upload'])} "
                f"after it ({mib(mem['server_peak_bytes'])} at the end). The run's "
                f"longest stage is {slowest} ({t(stages[slowest])}); the full report is "
                "`benchmarks/results/workbench.md`.", *goals(r)]


RENDERERS: dict[str, Callable[[dict], list[str]]] = {
    "summary": summary, "checker": checker, "fulldomain": fulldomain, "arx": arx, "local_recoding": local_recoding,
    "attacks": attacks, "dp": dp, "dpquery": dpquery, "synth": synth, "ldp": ldp, "alphabeta": alphabeta, "ledger": ledger,
    "startup": startup, "memory": memory,
    "threads": threads, "spark": spark, "sdc": sdc, "workbench": workbench}
# The summary is drawn from every results file rather than a file of its own.
SUMMARY = "summary"


# ------------------------------------------------------------------------------- the pages

def pages(readme: Path = README, docs: Path = DOCS) -> list[Path]:
    """The pages that may hold blocks: the README, then every page of the documentation site."""
    return [readme, *sorted(docs.rglob("*.md"))]


def render(name: str, results_dir: Path = RESULTS) -> str:
    """The text of block ``name``: its results file (every file, for the summary) rendered, ending
    with a newline."""
    def load(name: str) -> dict:
        return json.loads((results_dir / f"{name}.json").read_text(encoding="utf-8"))

    results = {n: load(n) for n in RENDERERS if n != SUMMARY} if name == SUMMARY else load(name)
    return "\n".join(RENDERERS[name](results)) + "\n"


def blocks(text: str) -> dict[str, str]:
    """Each marker block of a page: name → the text between its markers."""
    return {m["name"]: m["body"] for m in BLOCK.finditer(text)}


def located(where: list[Path] | None = None) -> dict[str, list[Path]]:
    """Each block's name → the pages that hold it (one, when all is well)."""
    found: dict[str, list[Path]] = {}
    for page in pages() if where is None else where:
        for name in blocks(page.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(page)
    return found


def rewrite(text: str, names=None, results_dir: Path = RESULTS) -> str:
    """``text`` with the blocks named (default: every block) rendered afresh from the results."""
    def replace(match: re.Match) -> str:
        if names is not None and match["name"] not in names:
            return match.group(0)
        return match.group(1) + render(match["name"], results_dir) + match.group(4)

    return BLOCK.sub(replace, text)


def update(names=None, where: list[Path] | None = None, results_dir: Path = RESULTS) -> None:
    """Rewrite the blocks (those named, or all) of every page that holds one, from the results
    files; each page atomically."""
    from veil.output import write_files

    for page in pages() if where is None else where:
        text = page.read_text(encoding="utf-8")
        new = rewrite(text, names, results_dir)
        if new != text:
            write_files({page: new})


if __name__ == "__main__":
    update()
    sys.exit(0)
