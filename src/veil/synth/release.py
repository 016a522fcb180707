"""A synthetic table written as a release: the table, its sealed public manifest, and the curator's
report, one output set (:class:`veil.output.writer.OutputSet`: all three files appear or none).

**The manifest describes the transformation, never the private table.** It travels with the
synthetic table (``veil publish`` stores and publishes the two), so it holds only what the DP
guarantee covers or what was public before: the domain as declared (a column whose domain was read
from the table is named with its source only, not its values), the mechanism, the budget (ε, δ and
ρ, as exact decimal text), every measurement's clique, noise scale σ, ρ and round, every selection
round, MST's merged rare values (their codes in the declared domain, chosen from noisy counts), the
seed policy (``secure`` or ``seeded: not fit for release``), the number of rows (the
model's noisy count or the number asked for), veil's version. The table it was made from is named
only by a tag under a fresh random nonce, keyed with the ledger's key
(:func:`veil.ledger.binding.answer_tag`), as every DP answer's is. No evaluation number, count,
value or unkeyed hash of the private table is in it.

**Sealed.** The gate charges what the manifest says, so the manifest is sealed like a DP answer's
(:func:`veil.ledger.answers.seal`: HMAC-SHA256 under veil's key of everything else in it, the
synthetic table's SHA-256 included); an edited cost, fitness or table is refused by ``veil publish``.

**The report** (:mod:`veil.report.synth`) carries the evaluation, computed from the private table
and NOT differentially private: for the curator's decision, never for publication. The manifest
does not name it, and it is written readable by its owner alone (mode 0600).
"""

from __future__ import annotations

import datetime as _dt
import io
import json
from pathlib import Path
from typing import Any

from veil.dp.exact import exact, to_text
from veil.errors import ParameterError

# The releases written here are veil.synth.api.SyntheticRelease objects, whose write() calls this
# module; they are annotated as such in words only, so that the two modules do not import each other.
SyntheticRelease = Any

__all__ = ["KIND", "MANIFEST_FILE", "REPORT_FILE", "TABLE_FILE", "synthetic_manifest", "table_format",
           "write_synthetic_release"]

MANIFEST_FILE = "manifest.json"
REPORT_FILE = "report.html"
#: The synthetic table's file name when none is given.
TABLE_FILE = "synthetic.csv"
#: What a synthetic release's manifest says it is.
KIND = "dp synthetic data"


def table_format(name: str) -> str:
    """``csv`` or ``parquet``, by the file name's extension (``.parquet`` / ``.pq``: Parquet).

    Raises:
        ParameterError: another extension than .csv, .parquet or .pq.
    """
    suffix = Path(name).suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix == ".csv":
        return "csv"
    raise ParameterError(f"the synthetic table {name!r} must end in .csv, .parquet or .pq, which say its format.")


def _text(value, name: str) -> str:
    return to_text(exact(value, name))


def _domain(release: SyntheticRelease) -> list[dict]:
    """The domain as declared; a column read from the private table names its source only."""
    out = []
    for column, described in zip(release.domain.columns, release.domain.describe()):
        if column.source == "data":
            out.append({"name": column.name, "source": "data", "kind": described.get("kind")})
        else:
            out.append(dict(described))
    return out


def _cost(release: SyntheticRelease) -> dict:
    """What the release costs, in the measure it was asked for (as the ledger charges it): ``epsilon``
    and ``delta``, or ``rho`` alone."""
    fit = release.fit
    if fit.epsilon is not None:
        return {"epsilon": _text(fit.epsilon, "epsilon"), "delta": _text(fit.delta, "delta")}
    return {"rho": _text(fit.rho, "rho")}


def label_of(release: SyntheticRelease) -> str:
    """The release's label, as the ledger's charge names it."""
    return f"synthetic data by {release.fit.mechanism} over {len(release.domain.names)} columns"


def synthetic_manifest(release: SyntheticRelease, *, output_format: str = "csv", table: dict | None = None,
                       charge: dict | None = None) -> dict:
    """The public manifest (without the ``release`` and ``seal`` entries the writer adds).

    Args:
        release: the synthetic release; only its fit (the transformation) is read.
        output_format: ``csv`` or ``parquet``.
        table: ``{"nonce", "tag"}`` naming the private table under the ledger's key, or ``None``.
        charge: a ledger charge that paid for it, or ``None`` (``veil publish`` charges it).
    """
    from veil import __version__

    fit = release.fit
    budget = {"rho": _text(fit.rho, "rho"), "measure": "zCDP",
              "epsilon": None if fit.epsilon is None else _text(fit.epsilon, "epsilon"),
              "delta": None if fit.delta is None else _text(fit.delta, "delta")}
    measurements = [{"clique": list(m.clique), "sigma": float(m.sigma), "rho": _text(m.rho, "rho"),
                     "round": int(m.round), "purpose": m.purpose} for m in fit.measurements]
    selections = [{"round": int(s.round), "epsilon": float(s.epsilon), "rho": _text(s.rho, "rho"),
                   "candidates": int(s.candidates), "chosen": list(s.chosen)} for s in fit.selections]
    return {"veil": __version__, "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "algorithm": "synth", "kind": KIND, "label": label_of(release), "mechanism": fit.mechanism,
            **_cost(release), "budget": budget, "domain": _domain(release), "measurements": measurements,
            "selections": selections, "compression": [] if fit.compression is None else fit.compression.describe(),
            "randomness": release.randomness, "rows": int(release.codes.shape[0]),
            "synthetic": {"format": output_format, "columns": list(release.domain.names)},
            "fit_for_release": release.fit_for_release, "not_fit_because": list(release.unfit_reasons),
            "table": table, "charge": charge}


def _table_bytes(release: SyntheticRelease, output_format: str) -> bytes:
    frame = release.table if hasattr(release.table, "to_csv") else release.table.to_pandas()  # pandas or polars
    if output_format == "csv":
        return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
    return sink.getvalue()


def write_synthetic_release(release: SyntheticRelease, out, *, table_name: str = TABLE_FILE,
                            output_format: str | None = None, report: bool = True, fingerprint: str | None = None,
                            key: bytes | None = None, reads=(), title: str | None = None, outputs=None,
                            source: str = "the table") -> dict:
    """Write the synthetic table, its sealed manifest and (with ``report``) the curator's report into
    the folder ``out``: all of them or none.

    Args:
        release: the synthetic release.
        out: the folder (made when missing).
        table_name: the table's file name in ``out`` (``.csv``, or ``.parquet``/``.pq`` for Parquet).
        output_format: overrides the format the name says (``csv`` or ``parquet``).
        report: write ``report.html`` too (the evaluation; private).
        fingerprint: the private table's :func:`~veil.dp.fingerprint.dataset_id`, kept only as a keyed tag.
        key: the sealing key (default: veil's key file, made when missing).
        reads: files the run read, which no output may replace.
        title: the report's title.
        outputs: an :class:`~veil.output.writer.OutputSet` already declared for these files (so that
            its targets were checked before the mechanism ran), or ``None``.
        source: what the report calls the private table (its file name; never in the manifest).

    Returns:
        The manifest as written.

    Raises:
        DataError: the folder cannot be written or the disk is full (nothing is written).
        ParameterError: an output is an input; a table name of another extension.
    """
    from veil.ledger import keys
    from veil.ledger.answers import seal
    from veil.ledger.binding import answer_tag, binding, new_nonce
    from veil.output.writer import OutputSet

    out = Path(out)
    fmt = output_format or table_format(table_name)
    paths = output_paths(out, table_name, report)
    key = keys.load_key(create=True) if key is None else key
    table = None
    if fingerprint is not None:
        nonce = new_nonce()
        table = {"nonce": nonce, "tag": answer_tag(key, nonce, binding(key, fingerprint))}
    outputs = outputs if outputs is not None else OutputSet(paths, reads=reads, make_folders=True)
    with outputs:
        outputs.put(paths[0], _table_bytes(release, fmt))
        doc = synthetic_manifest(release, output_format=fmt, table=table)
        doc["release"] = outputs.describe(paths[0], relative_to=out)
        doc["seal"] = seal(doc, key)
        if report:
            from veil.report.synth import render_synth_html, synth_report

            page = render_synth_html(synth_report(release, doc, title=title, source=source))
            outputs.put(paths[2], page, mode=0o600)  # private: its owner alone may read it
        outputs.put_manifest(paths[1], doc, describes={})
        outputs.commit()
    return json.loads(json.dumps(doc))


def output_paths(out, table_name: str = TABLE_FILE, report: bool = True) -> list[Path]:
    """The files of the output set: the table, the manifest and (with ``report``) the report."""
    out = Path(out)
    table_format(table_name)
    if Path(table_name).name != table_name or table_name in (MANIFEST_FILE, REPORT_FILE):
        raise ParameterError(f"the synthetic table's name {table_name!r} must be a file name other than "
                             f"{MANIFEST_FILE} and {REPORT_FILE}, without a folder.")
    return [out / table_name, out / MANIFEST_FILE] + ([out / REPORT_FILE] if report else [])
