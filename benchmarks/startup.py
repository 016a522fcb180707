"""What a user waits for (issue 12): start-up, a one-off check, and encoding at scale.

* **Start-up**: ``veil check`` on the bundled Adult (7 quasi-identifiers, sensitive occupation,
  ``--json``) as a whole process, imports included, beside a bare polars script that reads the
  same CSV (same delimiter, every cell as text) and groups by the same quasi-identifiers, also a
  whole process. The two run in pairs, one after the other (which one starts alternates), and the
  figure is the median of the pairs' ratios, on wall time and on CPU time; and ``veil --help``.
  Beside them, the floors that no command can go below: Python starting with nothing to do, and a
  minimal Typer application printing its help (Typer and Click, and Rich, which Typer loads for
  its help). Where the time goes is read from ``python -X importtime`` (each package's own
  modules), and the heavy packages each command loads are listed.
* **A one-off check at 1,000,000 rows** (Adult resampled, as a CSV file): ``veil check`` against
  the polars script, both whole processes in pairs as above, so the figure includes reading the
  file; and the same
  in one process (``Dataset`` from the file plus ``veil.check``, against ``pl.read_csv`` plus
  ``group_by``), without the start-up.
* **Encoding 10,000,000 rows**: ``Dataset`` from a polars frame of Adult resampled (7
  quasi-identifiers and occupation encoded), and from the CSV file, where the role columns are
  read straight into codes (the read alone, all columns as text, is timed beside it).

Every figure is the best of ``--repeat`` runs (the pairs: ``PAIRS_PER_REPEAT`` × ``--repeat``,
after an untimed run of each command); the median and the worst show the noise of a shared
machine. veil's modules are compiled to bytecode first, as installing veil compiles them, so that
no run pays for compiling them (a process that may not write ``__pycache__``, or runs with
``PYTHONDONTWRITEBYTECODE``, would compile them on every start; the packages beside it were
compiled when they were installed). The results go to ``startup.json`` and ``startup.md``.
"""

from __future__ import annotations

import importlib.metadata

import polars as pl

import veil

from harness import SEED, adult_rows_csv, fmt_ratio, fmt_time, machine, machine_sentence, read_adult_polars, resample, wrap
from processes import compile_package, import_profile, loaded_packages, paired, python_command, timed, veil_command
from timing import best_of, progress

QUASI_IDENTIFIERS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
SENSITIVE = "occupation"
HEAVY = ("pandas", "scipy", "sklearn", "matplotlib", "opendp", "polars", "numpy", "pyarrow")
ONE_OFF_ROWS = 1_000_000
ENCODE_ROWS = 10_000_000
# Pairs of runs (veil check, the polars script) per --repeat.
PAIRS_PER_REPEAT = 3
# The issues' goals (12, then 26 for start-up).
CHECK_GOAL_RATIO = 1.3
HELP_GOAL_S = 0.3
ONE_OFF_GOAL_RATIO = 2.0
ENCODE_GOAL_S = 1.5

FLOOR_SCRIPT = ("import sys, polars as pl\n"
                "frame = pl.read_csv(sys.argv[1], separator=';', infer_schema=False)\n"
                f"print(frame.group_by({QUASI_IDENTIFIERS!r}).len().height)\n")
# The least a Typer command line does to print its help: one group with a callback, a command
# and a sub-group, as veil's.
TYPER_FLOOR = ("import typer\n"
               "app = typer.Typer(no_args_is_help=True)\n"
               "sub = typer.Typer()\n"
               "@app.callback()\n"
               "def main(version: bool = typer.Option(False, '--version')):\n"
               "    'A command line.'\n"
               "@app.command()\n"
               "def check(data: str, qi: str = typer.Option(..., '--qi')):\n"
               "    'Check a table.'\n"
               "@sub.command()\n"
               "def count(data: str):\n"
               "    'Count.'\n"
               "app.add_typer(sub, name='dp')\n"
               "app()\n")


def check_args(path) -> list[str]:
    return ["check", str(path), "--qi", ",".join(QUASI_IDENTIFIERS), "--sensitive", SENSITIVE, "--json"]


def pair_figures(pair: dict) -> dict:
    """What a :func:`processes.paired` run of (veil check, the polars script) records."""
    return {"pairs": len(pair["ratio"]["runs"]), "ratio": pair["ratio"]["median"],
            "cpu_ratio": pair["cpu_ratio"]["median"], "ratios": pair["ratio"]["runs"],
            "cpu_ratios": pair["cpu_ratio"]["runs"], "veil_cpu_s": pair["first"]["cpu_median_s"],
            "polars_cpu_s": pair["second"]["cpu_median_s"]}


def measure_startup(adult, repeat: int) -> dict:
    """Whole-process times on Adult: veil check against the polars floor (in pairs), veil --help and
    the floors."""
    compile_package(veil)
    commands = {
        "veil_check": veil_command(*check_args(adult)),
        "polars_floor": python_command(FLOOR_SCRIPT) + [str(adult)],
        "veil_help": veil_command("--help"),
        "python": python_command("pass"),
        "typer_help": python_command(TYPER_FLOOR) + ["--help"],
    }
    progress("start-up: veil check and the polars script, in pairs")
    pair = paired(commands["veil_check"], commands["polars_floor"], PAIRS_PER_REPEAT * repeat)
    out = {"veil_check": pair["first"], "polars_floor": pair["second"], "check_pair": pair_figures(pair)}
    for name in ("veil_help", "python", "typer_help"):
        progress(f"start-up: {name}")
        out[name] = timed(commands[name], repeat)
    out["imports"] = {name: import_profile(commands[name]) for name in ("veil_check", "veil_help", "typer_help")}
    out["loaded"] = {name: loaded_packages(commands[name], HEAVY) for name in ("veil_check", "veil_help")}
    return out


def measure_one_off(path, repeat: int) -> dict:
    """A check of ``path`` from nothing: as whole processes (in pairs), and within one process."""
    from veil import Dataset, check

    progress("one-off: whole processes, in pairs")
    pair = paired(veil_command(*check_args(path)), python_command(FLOOR_SCRIPT) + [str(path)], repeat)
    whole = {"veil_check": pair["first"], "polars_floor": pair["second"], "pair": pair_figures(pair)}

    def veil_in_process():
        ds = Dataset(path, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE, delimiter=";")
        return check(ds).to_dict()

    def polars_in_process():
        return pl.read_csv(path, separator=";", infer_schema=False).group_by(QUASI_IDENTIFIERS).len()

    progress("one-off: in one process")
    veil_s, report = best_of(veil_in_process, repeat)
    floor_s, groups = best_of(polars_in_process, repeat)
    if report["classes"] != groups.height:
        raise RuntimeError(f"veil found {report['classes']} classes, polars {groups.height} groups")
    return {"rows": report["rows"], "classes": report["classes"], "whole_process": whole,
            "in_process": {"veil_s": veil_s, "polars_s": floor_s}}


def measure_encoding(rows: int, repeat: int) -> dict:
    """Dataset from a polars frame of ``rows`` rows, and from the same rows as a CSV file."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from veil import Dataset

    progress(f"encoding: building {rows:,} rows")
    frame = resample(read_adult_polars(), rows)
    path = adult_rows_csv(rows)

    def from_frame():
        return Dataset(frame, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE)

    def from_csv():
        return Dataset(path, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE, delimiter=";")

    def read_text():
        header = path.open(encoding="utf-8").readline().rstrip("\n").split(";")
        return pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=";"),
                              convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in header},
                                                                   strings_can_be_null=False))

    progress("encoding: from the frame")
    frame_s, _ = best_of(from_frame, repeat)
    progress("encoding: from the CSV file")
    csv_s, _ = best_of(from_csv, repeat)
    text_s, _ = best_of(read_text, repeat)
    return {"rows": rows, "columns": len(QUASI_IDENTIFIERS) + 1, "from_frame_s": frame_s, "from_csv_s": csv_s,
            "read_text_s": text_s}


def fmt_pair_ratio(ratio: float) -> str:
    """A ratio of two whole processes, to two decimals (``1.27×``): the goals sit at one."""
    return f"{ratio:.2f}×"


def goals(startup: dict, one_off: dict, encoding: dict) -> list[dict]:
    check = startup["check_pair"]
    whole = one_off["whole_process"]
    one_off_ratio = whole["pair"]["ratio"]
    return [
        {"goal": f"veil check on Adult, whole process, within {CHECK_GOAL_RATIO:g}× of the polars script (median "
                 "of paired runs)",
         "measured": f"{fmt_pair_ratio(check['ratio'])} over {check['pairs']} pairs (CPU time "
                     f"{fmt_pair_ratio(check['cpu_ratio'])}); veil {fmt_time(startup['veil_check']['median_s'])}, "
                     f"polars {fmt_time(startup['polars_floor']['median_s'])} (medians)",
         "met": check["ratio"] <= CHECK_GOAL_RATIO},
        {"goal": f"veil --help under {HELP_GOAL_S:g} s", "measured": fmt_time(startup["veil_help"]["best_s"]),
         "met": startup["veil_help"]["best_s"] < HELP_GOAL_S},
        {"goal": f"a one-off veil check at {one_off['rows']:,} rows within {ONE_OFF_GOAL_RATIO:g}× of the polars "
                 "script, reading included (median of paired runs)",
         "measured": f"{fmt_time(whole['veil_check']['median_s'])}, {fmt_pair_ratio(one_off_ratio)}",
         "met": one_off_ratio <= ONE_OFF_GOAL_RATIO},
        {"goal": f"{encoding['rows']:,} rows encoded in under {ENCODE_GOAL_S:g} s",
         "measured": f"{fmt_time(encoding['from_frame_s'])} from a frame", "met": encoding["from_frame_s"] < ENCODE_GOAL_S},
    ]


def run(repeat: int, one_off_rows: int = ONE_OFF_ROWS, encode_rows: int = ENCODE_ROWS) -> dict:
    from veil.data.bundled import adult_csv

    adult = adult_csv()
    startup = measure_startup(adult, repeat)
    one_off = measure_one_off(adult_rows_csv(one_off_rows), repeat)
    encoding = measure_encoding(encode_rows, max(1, min(repeat, 3)))
    progress("")
    versions = {name: importlib.metadata.version(name) for name in
                ("veil", "numpy", "pyarrow", "polars", "typer", "click", "rich")}
    return {"meta": {**machine(versions), "repeat": repeat, "seed": SEED, "quasi_identifiers": QUASI_IDENTIFIERS,
                     "sensitive": SENSITIVE},
            "startup": startup, "one_off": one_off, "encoding": encoding,
            "goals": goals(startup, one_off, encoding)}


# ------------------------------------------------------------------------------- reports

def _spread(run: dict) -> str:
    return f"{fmt_time(run['best_s'])} (median {fmt_time(run['median_s'])}, worst {fmt_time(run['worst_s'])})"


def _top_imports(profile: dict, count: int = 6) -> str:
    shown = ", ".join(f"{name} {fmt_time(s)}" for name, s in list(profile.items())[:count])
    return f"{fmt_time(sum(profile.values()))} in all: {shown}"


def terminal_report(results: dict) -> str:
    meta, s = results["meta"], results["startup"]
    out = [f"veil start-up, one-off check and encoding, {meta['date']}",
           *wrap(machine_sentence(meta), ""), f"whole processes, best of {meta['repeat']} (median, worst)", "",
           "Adult, 30,162 rows"]
    c = s["check_pair"]
    out += wrap(f"  veil check / polars script, median of {c['pairs']} pairs: {fmt_pair_ratio(c['ratio'])} wall, "
                f"{fmt_pair_ratio(c['cpu_ratio'])} CPU (veil {fmt_time(c['veil_cpu_s'])}, polars "
                f"{fmt_time(c['polars_cpu_s'])} of CPU)", "    ")
    for key, label in (("veil_check", "veil check --json"), ("polars_floor", "polars read + group_by"),
                       ("veil_help", "veil --help"), ("typer_help", "minimal Typer --help"),
                       ("python", "python -c pass")):
        out.append(f"  {label:<24}{_spread(s[key])}")
    for key, label in (("veil_check", "veil check"), ("veil_help", "veil --help"), ("typer_help", "Typer --help")):
        out += wrap(f"  imports of {label}: {_top_imports(s['imports'][key])}", "    ")
    for key in ("veil_check", "veil_help"):
        out.append(f"  heavy packages loaded by {key.replace('_', ' ')}: {', '.join(s['loaded'][key]) or 'none'}")
    o = results["one_off"]
    w = o["whole_process"]
    out += ["", f"One-off check, {o['rows']:,} rows from CSV ({o['classes']:,} classes)",
            f"  veil check (process)    {_spread(w['veil_check'])}",
            f"  polars (process)        {_spread(w['polars_floor'])}",
            f"  veil / polars, median of {w['pair']['pairs']} pairs: {fmt_pair_ratio(w['pair']['ratio'])} wall, "
            f"{fmt_pair_ratio(w['pair']['cpu_ratio'])} CPU",
            f"  in one process: veil {fmt_time(o['in_process']['veil_s'])}, polars {fmt_time(o['in_process']['polars_s'])}"]
    e = results["encoding"]
    out += ["", f"Encoding {e['rows']:,} rows, {e['columns']} columns",
            f"  from a polars frame {fmt_time(e['from_frame_s'])}; from CSV {fmt_time(e['from_csv_s'])} "
            f"(reading as text alone {fmt_time(e['read_text_s'])})", "", "Goals"]
    for goal in results["goals"]:
        out += wrap(f"  {goal['goal']}: {goal['measured']}, {'met' if goal['met'] else 'NOT MET'}", "    ")
    return "\n".join(out)


def markdown_report(results: dict) -> str:
    meta, s, o, e = results["meta"], results["startup"], results["one_off"], results["encoding"]
    w = o["whole_process"]
    out = ["## Start-up, one-off check and encoding", "",
           f"{machine_sentence(meta)}. Whole processes (Python starting, every import, the work), best of "
           f"{meta['repeat']} runs, with the median and the worst; veil check and the polars script run in pairs "
           f"({s['check_pair']['pairs']} on Adult, {w['pair']['pairs']} at {o['rows']:,} rows), veil's modules "
           "compiled to bytecode as an install leaves them. Reproduce with "
           "`python benchmarks/run.py --only startup`.", "",
           "| command | best | median | worst |", "|---|---:|---:|---:|"]
    rows = [("veil check Adult --json", s["veil_check"]), ("polars: read Adult, group by the QIs", s["polars_floor"]),
            ("veil --help", s["veil_help"]), ("a minimal Typer app --help", s["typer_help"]),
            ("python -c pass", s["python"]),
            (f"veil check, {o['rows']:,} rows", w["veil_check"]),
            (f"polars: read {o['rows']:,} rows, group by", w["polars_floor"])]
    out += [f"| {label} | {fmt_time(r['best_s'])} | {fmt_time(r['median_s'])} | {fmt_time(r['worst_s'])} |"
            for label, r in rows]
    c = s["check_pair"]
    out += ["", f"veil check over the polars script, the median of {c['pairs']} paired runs: "
                f"{fmt_pair_ratio(c['ratio'])} in wall time, {fmt_pair_ratio(c['cpu_ratio'])} in CPU time (user + "
                f"system; medians veil {fmt_time(c['veil_cpu_s'])}, polars {fmt_time(c['polars_cpu_s'])}). At "
                f"{o['rows']:,} rows: {fmt_pair_ratio(w['pair']['ratio'])} wall, "
                f"{fmt_pair_ratio(w['pair']['cpu_ratio'])} CPU."]
    out += ["", "Import time by package (`python -X importtime`, each package's own modules):", ""]
    for key, label in (("veil_check", "veil check"), ("veil_help", "veil --help"), ("typer_help", "minimal Typer app")):
        out.append(f"- {label}: {_top_imports(s['imports'][key], 8)}")
    out += ["", f"Heavy packages loaded: veil check {', '.join(s['loaded']['veil_check']) or 'none'}; veil --help "
            f"{', '.join(s['loaded']['veil_help']) or 'none'}.", "",
            f"In one process, {o['rows']:,} rows from CSV to every model's level: veil "
            f"{fmt_time(o['in_process']['veil_s'])}, polars read + group_by {fmt_time(o['in_process']['polars_s'])}.",
            "", f"Encoding {e['rows']:,} rows ({e['columns']} columns): {fmt_time(e['from_frame_s'])} from a polars "
            f"frame; {fmt_time(e['from_csv_s'])} from the CSV file, reading included (reading it as text alone takes "
            f"{fmt_time(e['read_text_s'])}).", "", "Goals:", ""]
    out += [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**" for g in results["goals"]]
    return "\n".join(out) + "\n"
