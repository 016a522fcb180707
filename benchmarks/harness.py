"""What veil's side of the benchmarks shares: the Adult tables they measure and report formatting.

The scripts next to this file import it; run them from the repository root as
``python benchmarks/run.py`` (see the README in this folder). Timing is in ``timing.py``, which
the peers' side uses too.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import polars as pl

from veil.data.bundled import adult_csv
from veil.output import write_file

SEED = 0


def read_adult_polars() -> pl.DataFrame:
    """Adult as polars reads it, every column kept as text as veil's own CSV reader does."""
    return pl.read_csv(adult_csv(), separator=";", infer_schema=False)


def resample(frame: pl.DataFrame, rows: int, seed: int = SEED) -> pl.DataFrame:
    """``rows`` records drawn from ``frame`` uniformly with replacement."""
    rng = np.random.default_rng(seed)
    return frame[rng.integers(0, frame.height, size=rows)]


def adult_rows_csv(rows: int, seed: int = SEED) -> Path:
    """Adult resampled to ``rows`` records (:func:`resample`) as a ``;``-separated CSV file, made
    once in the temporary folder and reused by later runs (its name holds the rows and the seed)."""
    path = Path(tempfile.gettempdir()) / f"veil-benchmark-adult-{rows}-seed{seed}.csv"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        resample(read_adult_polars(), rows, seed).write_csv(partial, separator=";")
        os.replace(partial, path)
    return path


def machine(versions: dict[str, str]) -> dict:
    """When and where a benchmark ran: the date, the CPU, its cores, Python and ``versions``."""
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "cpu": cpu_model(),
            "cores": os.cpu_count(), "python": platform.python_version(), "versions": versions}


def machine_sentence(meta: dict) -> str:
    """``Measured <date> on <cpu> (<cores> cores), Python <version>, <package versions>``."""
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    return f"Measured {meta['date']} on {meta['cpu']} ({meta['cores']} cores), Python {meta['python']}, {versions}"


def goal_lines(goals: list[dict]) -> list[str]:
    """The terminal's "Goals" section: each goal with what was measured and whether it was met."""
    out = ["", "Goals"]
    for goal in goals:
        out += wrap(f"  {goal['goal']}: {goal['measured']}, {'met' if goal['met'] else 'NOT MET'}", "    ")
    return out


def wrap(text: str, indent: str, width: int = 78) -> list[str]:
    """Greedy word wrap for the terminal, keeping ``text``'s own leading spaces; continuation
    lines start with ``indent``."""
    body = text.lstrip(" ")
    lines, line = [], text[:len(text) - len(body)]
    start = len(line)
    for word in body.split(" "):
        if len(line) > start and len(line) + 1 + len(word) > width:
            lines.append(line)
            line, start = indent + word, len(indent)
        else:
            line = f"{line} {word}" if len(line) > start else line + word
    return lines + [line]


def fmt_time(seconds: float | None) -> str:
    """A duration in s, ms or µs with three significant digits (``"—"`` for none)."""
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale:
            break
    else:
        unit, scale = "µs", 1e-6
    value = seconds / scale
    digits = 0 if value >= 100 else 1 if value >= 10 else 2
    return f"{value:.{digits}f} {unit}"


def fmt_ratio(ratio: float | None) -> str:
    """A ratio such as ``"2,807×"``, ``"71×"`` or ``"4.4×"`` (``"—"`` for none)."""
    if ratio is None:
        return "—"
    if ratio >= 100:
        return f"{ratio:,.0f}×"
    if ratio >= 10:
        return f"{ratio:.0f}×"
    return f"{ratio:.1f}×" if ratio >= 0.1 else f"{ratio:.2f}×"


def fmt_value(value) -> str:
    """A measured level: integers as such, other numbers to six significant digits, tuples in
    parentheses (``"—"`` for none)."""
    if value is None:
        return "—"
    if isinstance(value, list):
        return "(" + ", ".join(fmt_value(v) for v in value) + ")"
    if math.isinf(value) or math.isnan(value):
        return str(value)
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}"


def json_ready(value):
    """``value`` with every non-finite float written as the string ``"inf"``, ``"-inf"`` or
    ``"nan"``, since strict JSON has no such numbers (veil's own JSON does the same)."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def with_peer_versions(own: dict[str, str], peer: dict[str, str]) -> dict[str, str]:
    """veil's environment's versions, then the peer environment's; a package found in both is
    named ``"<package> (peer env)"`` the second time."""
    return own | {f"{name} (peer env)" if name in own else name: version for name, version in peer.items()}


def split_versions(versions: dict[str, str], peers: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str]]:
    """The versions of veil's environment and those of the peer environment (``peers`` and the
    names :func:`with_peer_versions` marked), apart."""
    theirs = {k: v for k, v in versions.items() if k in peers or k.endswith(" (peer env)")}
    return {k: v for k, v in versions.items() if k not in theirs}, theirs


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (``"unknown"`` elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1, with ``_`` or ``,`` allowed as separators."""
    value = int(text.replace("_", "").replace(",", ""))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def write_results(out: Path, name: str, results: dict, markdown: str) -> None:
    """Write ``<name>.json`` (every figure) and ``<name>.md`` (the report) into ``out``, each
    atomically, and say where they went."""
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(json_ready(results), indent=2, ensure_ascii=False, allow_nan=False)
    write_file(out / f"{name}.json", text + "\n")
    write_file(out / f"{name}.md", markdown)
    print(f"\nwrote {out / f'{name}.json'}\n  and {out / f'{name}.md'}")
