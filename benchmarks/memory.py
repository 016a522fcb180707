"""Peak memory of veil's commands on a large table (issue 12), as whole processes.

Adult resampled to ``--memory-rows`` records (10,000,000 by default; a CSV file of about 80 bytes
a row) is checked (``veil check … --json``) and anonymized with the ready-made Mondrian and
full-domain configurations (``examples/adult-mondrian.yaml``, ``examples/adult-fulldomain.yaml``:
k = 5, and entropy 3-diversity with 2 % suppression for full-domain), each by ``veil`` in a
process of its own, whose peak resident memory GNU time reports (``/usr/bin/time -v``; Debian's
``time`` package). The input is what a plain reader holds of the same file: a process that
reads it with pyarrow, every column as text, measured the same way. The figure per row is
(veil's peak − the input's peak) / rows: what veil needs beyond holding the table. Each release
is written, streamed in pieces, to a temporary folder and removed afterwards.

The results go to ``memory.json`` and ``memory.md``.
"""

from __future__ import annotations

import importlib.metadata
import tempfile
from pathlib import Path

from harness import goal_lines, SEED, adult_rows_csv, fmt_time, machine, machine_sentence, wrap
from processes import MissingTool, peak_memory, python_command, require_gnu_time, veil_command
from timing import progress

ROWS = 10_000_000
QUASI_IDENTIFIERS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
SENSITIVE = "occupation"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# The goals, in bytes per row above the input.
GOALS = {"check": 64, "mondrian": 100, "fulldomain": 100}
INPUT_SCRIPT = ("import sys, pyarrow as pa, pyarrow.csv as pacsv\n"
                "path = sys.argv[1]\n"
                "header = open(path, encoding='utf-8').readline().rstrip('\\n').split(';')\n"
                "table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=';'),\n"
                "    convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in header},\n"
                "                                         strings_can_be_null=False))\n"
                "print(table.num_rows)\n")


def fmt_bytes(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def run(rows: int = ROWS) -> dict:
    versions = {name: importlib.metadata.version(name) for name in ("veil", "numpy", "pyarrow")}
    meta = {**machine(versions), "rows": rows, "seed": SEED}
    try:
        require_gnu_time()
    except MissingTool as exc:
        return {"meta": meta, "skipped": str(exc), "goals": []}
    path = adult_rows_csv(rows)
    out = {"meta": meta, "file_bytes": path.stat().st_size}
    progress("memory: the input, read as text")
    out["input"] = peak_memory(python_command(INPUT_SCRIPT) + [str(path)])
    progress("memory: an interpreter doing nothing")
    out["python"] = peak_memory(python_command("pass"))
    commands = {"check": veil_command("check", str(path), "--qi", ",".join(QUASI_IDENTIFIERS), "--sensitive",
                                      SENSITIVE, "--json")}
    with tempfile.TemporaryDirectory(prefix="veil-memory-") as folder:
        for name in ("mondrian", "fulldomain"):
            commands[name] = veil_command("anonymize", str(path), "--config", str(EXAMPLES / f"adult-{name}.yaml"),
                                          "--out", str(Path(folder) / f"{name}.csv"),
                                          "--manifest", str(Path(folder) / f"{name}.json"))
        out["veil"] = {}
        for name, argv in commands.items():
            progress(f"memory: veil {name}")
            measured = peak_memory(argv)
            above = measured["peak_bytes"] - out["input"]["peak_bytes"]
            measured.update(above_input_bytes=above, per_row=above / rows)
            if name != "check":
                measured["release_bytes"] = (Path(folder) / f"{name}.csv").stat().st_size
            out["veil"][name] = measured
    progress("")
    out["goals"] = [{"goal": f"veil {name}: at most {limit} bytes per row above the input",
                     "measured": f"{out['veil'][name]['per_row']:.0f} bytes per row",
                     "met": out["veil"][name]["per_row"] <= limit} for name, limit in GOALS.items()]
    return out


LABELS = {"check": "veil check --json", "mondrian": "veil anonymize, Mondrian (k = 5)",
          "fulldomain": "veil anonymize, full-domain (k = 5, ℓ = 3, 2 %)"}


def terminal_report(results: dict) -> str:
    meta = results["meta"]
    out = [f"veil peak memory, {meta['rows']:,} rows (Adult resampled), {meta['date']}", *wrap(machine_sentence(meta), "")]
    if results.get("skipped"):
        return "\n".join(out + ["", *wrap(f"not measured: {results['skipped']}", "  ")])
    out += [f"input file {fmt_bytes(results['file_bytes'])}; read as text by pyarrow: peak "
            f"{fmt_bytes(results['input']['peak_bytes'])}; python alone {fmt_bytes(results['python']['peak_bytes'])}",
            "", f"  {'command':<48}{'peak':>10}{'/ row above input':>20}{'wall':>9}"]
    for name, m in results["veil"].items():
        out.append(f"  {LABELS[name]:<48}{fmt_bytes(m['peak_bytes']):>10}{m['per_row']:>18.0f} B"
                   f"{fmt_time(m['wall_s']):>9}")
    out += goal_lines(results["goals"])
    return "\n".join(out)


def markdown_report(results: dict) -> str:
    meta = results["meta"]
    out = ["## Peak memory", "", f"{machine_sentence(meta)}. Adult resampled to {meta['rows']:,} rows "
           f"(`numpy.random.default_rng({meta['seed']})`), as a CSV file; each command a process of its own, its "
           "peak resident memory from `/usr/bin/time -v`. Reproduce with `python benchmarks/run.py --only memory`."]
    if results.get("skipped"):
        return "\n".join(out + ["", f"Not measured: {results['skipped']}"]) + "\n"
    out += ["", f"The input: a {fmt_bytes(results['file_bytes'])} file, which pyarrow reads as text in a process "
            f"that peaks at {fmt_bytes(results['input']['peak_bytes'])} (Python alone: "
            f"{fmt_bytes(results['python']['peak_bytes'])}).", "",
            "| command | peak | above the input, per row | wall time |", "|---|---:|---:|---:|"]
    for name, m in results["veil"].items():
        out.append(f"| {LABELS[name]} | {fmt_bytes(m['peak_bytes'])} | {m['per_row']:.0f} bytes | "
                   f"{fmt_time(m['wall_s'])} |")
    out += ["", "Goals:", ""]
    out += [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**" for g in results["goals"]]
    return "\n".join(out) + "\n"
