"""A grouped DP answer as ``veil dp query`` wrote it (a folder holding ``manifest.json`` and
``answers.csv`` or ``answers.parquet``), read back for ``veil dp report``.

:func:`read_grouped_release` reads the manifest, checks that it is a grouped answer's and that
the answers file is the one it describes (its SHA-256, :func:`veil.output.reading.load_manifest`),
and returns both; :func:`grouped_report_answers` turns each aggregate into one answer of the DP
report (:mod:`veil.report.dp`), a row per key. Nothing is charged and the data is never read: the
report post-processes what was released.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from veil.errors import DataError

__all__ = ["grouped_lines", "grouped_report_answers", "is_grouped_release", "read_grouped_release"]

KIND = "dp grouped query"
MANIFEST_FILE = "manifest.json"


def is_grouped_release(path: Path) -> bool:
    """Whether ``path`` names a grouped answer: its folder, or its ``manifest.json``."""
    return path.is_dir() or path.name == MANIFEST_FILE


def read_grouped_release(path: Path) -> tuple[dict, pd.DataFrame]:
    """The manifest and the answers of a grouped answer's folder (or of its manifest).

    Raises:
        DataError: no manifest there, a manifest of something else, or an answers file that is
            missing or not the one the manifest describes.
    """
    from veil.output.reading import load_manifest

    manifest_path = path / MANIFEST_FILE if path.is_dir() else path
    if not manifest_path.is_file():
        raise DataError(f"{str(path)!r} holds no {MANIFEST_FILE}; give the folder veil dp query --out wrote.")
    doc = load_manifest(manifest_path)
    if not isinstance(doc, Mapping) or doc.get("kind") != KIND or not isinstance(doc.get("release"), Mapping):
        raise DataError(f"{str(manifest_path)!r} is not the manifest of a grouped answer; give the folder veil dp "
                        "query --out wrote.")
    answers = manifest_path.parent / str(doc["release"]["file"])
    data = answers.read_bytes()
    if (doc.get("answers") or {}).get("format") == "parquet":
        import pyarrow.parquet as pq

        frame = pq.read_table(io.BytesIO(data)).to_pandas()
    else:
        key_columns = list(doc["group_by"]["columns"])
        frame = pd.read_csv(io.BytesIO(data), dtype={c: str for c in key_columns}, keep_default_na=False,
                            na_values={c: [] for c in key_columns})
    wanted = list((doc.get("answers") or {}).get("columns") or [])
    if list(frame.columns) != wanted:
        raise DataError(f"{str(answers)!r} does not hold the columns its manifest names; give the folder veil dp "
                        "query --out wrote.")
    return dict(doc), frame


def _key_label(record: Mapping, columns: list[str]) -> str:
    return " × ".join("(missing)" if record[c] is None or record[c] == "" else str(record[c]) for c in columns)


def grouped_report_answers(manifest: Mapping, frame: pd.DataFrame) -> list[dict]:
    """One answer of the DP report (as :func:`veil.report.dp.check_answer` reads it) per aggregate
    of a grouped answer: its cells, one per key, with their intervals."""
    columns = list(manifest["group_by"]["columns"])
    records = frame.to_dict(orient="records")
    labels = [_key_label(r, columns) for r in records]
    in_rho = "rho" in manifest
    out = []
    for agg in manifest["aggregates"]:
        share = sum(float(m.get("rho" if in_rho else "epsilon") or 0.0) for m in agg["measurements"])
        names = agg.get("columns", [agg["name"]])  # several quantiles: one column each, one price for all
        notes = [agg["interval"]] + ([f"the {len(names)} quantiles of {agg['name']} come from one mechanism; "
                                      "its price is shown with each"] if len(names) > 1 else [])
        mechanisms = ", ".join(dict.fromkeys(m["mechanism"] for m in agg["measurements"]))
        out += [{"query": f"{name} by {', '.join(columns)}",
                 "value": [float(r[name]) for r in records],
                 "low": [float(r[f"{name}_low"]) for r in records],
                 "high": [float(r[f"{name}_high"]) for r in records],
                 "confidence": 1 - float(manifest["alpha"]),
                 "epsilon": None if in_rho else share, "delta": None if in_rho else 0.0,
                 "rho": share if in_rho else None, "mechanism": mechanisms,
                 "fit_for_release": bool(manifest["fit_for_release"]),
                 "not_fit_because": list(manifest.get("not_fit_because") or []),
                 "notes": notes, "categories": [labels]} for name in names]
    return out


def _cell(value) -> str:
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):,.6g}"
    return "(missing)" if value is None or value == "" else str(value)


def grouped_lines(frame: pd.DataFrame, manifest: dict) -> list[str]:
    """A grouped answer as lines of text: what it cost and how, then one row per key with each
    aggregate's value and interval (what ``veil dp query`` and ``veil dp report`` print)."""
    unit = manifest["unit"]
    who = "a row" if unit.get("unit") == "row" else \
        f"a person by '{unit['id_column']}'" + "".join(
            f", {k} {unit[k]}" for k in ("max_rows", "max_groups", "max_rows_per_group") if unit.get(k) is not None)
    cost = f"ρ = {manifest['rho']}" if "rho" in manifest else f"ε = {manifest['epsilon']}"
    fit = "fit for release" if manifest["fit_for_release"] else "NOT fit for release"
    lines = [f"{manifest['query']}: {cost}, protecting {who}, {manifest['mechanism']} noise, {fit}"]
    conf = f"{1 - float(manifest['alpha']):.0%}"
    keys = list(manifest["group_by"]["columns"])
    names = [n for a in manifest["aggregates"] for n in a.get("columns", [a["name"]])]
    rows = [keys + [f"{n} [{conf} interval]" for n in names]]
    for record in frame.to_dict(orient="records"):
        rows.append([_cell(record[k]) for k in keys] +
                    [f"{_cell(record[n])} [{_cell(record[n + '_low'])}, {_cell(record[n + '_high'])}]"
                     for n in names])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    for a in manifest["aggregates"]:
        for m in a["measurements"]:
            lines.append(f"{m['label']}: {m['mechanism']}, {m['norm']} sensitivity {m['sensitivity']:g}, "
                         f"scale {m['scale']:.6g}, ± {m['half_width']:.6g} ({conf})")
    return lines
