"""A grouped DP answer written as a release: the answers (CSV or Parquet) and a sealed manifest.

:func:`write_grouped_release` writes, through :class:`veil.output.writer.OutputSet` (both files
appear or neither does), ``answers.csv`` or ``answers.parquet`` (the key columns, then for each
aggregate its value, ``_low`` and ``_high``: :meth:`veil.dp.grouped_answer.GroupedAnswer.to_pandas`)
and ``manifest.json``, which describes the *transformation*: the privacy unit and its bounds, the
grouping columns and how their keys were given, each aggregate with its bounds, mechanisms, L1 or
L2 sensitivities, noise scales and share of the price, ε, δ or ρ, α, and whether the answers are
fit for release. It never holds a value of the table: the keys appear only in the answers file
(public keys are public; keys released by selection are released there, and only there), and the
table is named, as for every DP answer (:mod:`veil.ledger.answers`), by a tag under a fresh nonce
that only the ledger's key can check.

The manifest is sealed like a single answer's (HMAC under veil's key) and names the ledger charge
that paid for the answers, so that ``veil publish`` can take it without charging it again.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
from pathlib import Path

from veil.dp.exact import exact, to_text
from veil.dp.grouped_answer import GroupedAnswer

__all__ = ["ANSWER_FILES", "MANIFEST_FILE", "grouped_manifest", "write_grouped_release"]

#: The answers' file, by format.
ANSWER_FILES = {"csv": "answers.csv", "parquet": "answers.parquet"}
MANIFEST_FILE = "manifest.json"
#: What a grouped answer's manifest says it is (``veil dp report`` recognizes it by this).
KIND = "dp grouped query"


def _cost(record: dict) -> dict:
    """The price in its own measure, as exact decimal text (what the ledger charged)."""
    if record.get("rho") is not None:
        return {"rho": to_text(exact(record["rho"], "rho"))}
    return {"epsilon": to_text(exact(record["epsilon"], "epsilon")), "delta": to_text(exact(record["delta"], "delta"))}


def grouped_manifest(answer: GroupedAnswer, *, label: str, keys_given: dict, output_format: str,
                     table: dict | None = None, charge: dict | None = None) -> dict:
    """The manifest of a grouped answer (without the ``release`` and ``seal`` entries the writer adds).

    Args:
        answer: the answer; only its record (the transformation) is read, never its cells.
        label: the query's label, as charged to the ledger.
        keys_given: how the keys were given (``{"source": "list" | "domains" | "file", ...}``).
        output_format: ``"csv"`` or ``"parquet"``.
        table: ``{"nonce", "tag"}`` naming the table (see the module notes), or ``None``.
        charge: ``{"ledger_id", "population", "seq"}``: the ledger charge that paid for it.
    """
    from veil import __version__

    record = answer.record
    columns = list(answer.keys.columns)
    answer_columns = columns + [f"{name}{end}" for a in record["aggregates"] for name in a.get("columns", [a["name"]])
                                for end in ("", "_low", "_high")]
    return {"veil": __version__, "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "algorithm": "dp", "kind": KIND, "query": label, **_cost(record),
            "measure": record["measure"], "alpha": record["alpha"],
            "mechanism": ", ".join(sorted({m["mechanism"] for a in record["aggregates"] for m in a["measurements"]})),
            "unit": record["unit"], "cell_contribution": record["cell_contribution"],
            "group_by": {"columns": columns, "keys": keys_given, "num_keys": record["num_keys"]},
            "aggregates": record["aggregates"],
            "answers": {"format": output_format, "columns": answer_columns},
            "fit_for_release": bool(record["fit_for_release"]), "not_fit_because": list(record["not_fit_because"]),
            "noise_source": record["noise_source"], "notes": list(record["notes"]),
            "table": table, "charge": charge}


def _answers_bytes(answer: GroupedAnswer, output_format: str) -> bytes:
    frame = answer.to_pandas()
    if output_format == "csv":
        return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
    return sink.getvalue()


def write_grouped_release(answer: GroupedAnswer, out: str | Path, *, label: str, keys_given: dict,
                          output_format: str = "csv", outputs=None, fingerprint: str | None = None,
                          charge: dict | None = None, key: bytes | None = None, reads=()) -> dict:
    """Write the answers and their sealed manifest into the folder ``out``, both or neither.

    Args:
        answer: the grouped answer.
        out: the folder (made when missing).
        label, keys_given, output_format, charge: see :func:`grouped_manifest`.
        outputs: an :class:`~veil.output.writer.OutputSet` already declared for the two files
            (so that its targets were checked before anything was charged), or ``None``.
        fingerprint: the table's :func:`~veil.dp.fingerprint.dataset_id`, kept only as a tag.
        key: the sealing key (default: veil's key file, made when missing).
        reads: files the run read, which no output may replace.

    Returns:
        The manifest as written.

    Raises:
        DataError: the folder cannot be written or the disk is full (nothing is written).
        ParameterError: an output is an input.
    """
    from veil.ledger import keys
    from veil.ledger.answers import seal
    from veil.ledger.binding import answer_tag, binding, new_nonce
    from veil.output.writer import OutputSet

    out = Path(out)
    answers_path, manifest_path = out / ANSWER_FILES[output_format], out / MANIFEST_FILE
    key = keys.load_key(create=True) if key is None else key
    table = None
    if fingerprint is not None:
        nonce = new_nonce()
        table = {"nonce": nonce, "tag": answer_tag(key, nonce, binding(key, fingerprint))}
    outputs = outputs if outputs is not None else OutputSet([answers_path, manifest_path], reads=reads,
                                                            make_folders=True)
    with outputs:
        outputs.put(answers_path, _answers_bytes(answer, output_format))
        doc = grouped_manifest(answer, label=label, keys_given=keys_given, output_format=output_format, table=table,
                               charge=charge)
        doc["release"] = outputs.describe(answers_path, relative_to=out)
        doc["seal"] = seal(doc, key)
        outputs.put_manifest(manifest_path, doc, describes={})
        outputs.commit()
    return json.loads(json.dumps(doc))
