"""What a method of statistical disclosure control publishes: the perturbed table, its manifest and
its private file.

A :class:`PerturbedRelease` is to local suppression, PRAM, rank swapping, additive noise and top
coding what :class:`veil.anonymize.release.Release` is to the anonymizers: the published table
(every input column but the identifying ones, in the input's order of columns, rows shuffled with
the operating system's secure randomness unless the output section keeps their order or seeds
the shuffle), and two documents (see :mod:`veil.manifests`):

* the **manifest**, published with the table, describes the transformation and nothing of the
  private table: the method and its public parameters (a given PRAM matrix, swapping's p, the
  noise's amount and kind, the coding thresholds, local suppression's k, importance, matching and
  method), the columns perturbed, the recoding's levels per quasi-identifier when the table was
  generalized first, the suppressed cells per column (which the table shows anyway), the roles
  (the quasi-identifiers and the sampling weight, which the gate's risk check reads), how the
  rows are ordered, and ``fit_for_release``: true only when every draw (the method's and the
  shuffle's) came from the secure source. A secure run has no seed to record; a seeded run's seed
  is recorded, since it is an experiment, not a release;
* the **private file** holds what depends on the private table: its row count, the risk before
  and after, the utility measures, the data-dependent parameters (invariant PRAM's matrix, which
  is made from the private frequencies, and the categories each matrix is over), the records the
  recoding suppressed and the proof figures of local suppression.

It is written with veil's one writer (:class:`veil.output.OutputSet`): the table, the manifest,
the private file (and the report) appear together or not at all.
"""

from __future__ import annotations

import csv
import datetime as _dt
import functools
import io
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from veil.manifests import MANIFEST_VERSION, combined, put_private
from veil.randomness import secure_permutation
from veil.spreadsheet import guard_table, guard_text

__all__ = ["PerturbedRelease", "SDC_KIND"]

#: What the ledger calls a release a method of statistical disclosure control made.
SDC_KIND = "perturbation"
INPUT_ORDER_WARNING = ("the rows keep the input's order: anyone holding another release of the same table in the "
                       "same order can join the two by position; publish it shuffled unless the order is public.")


@dataclass
class PerturbedRelease:
    """A table perturbed (or locally suppressed) by a method of :mod:`veil.sdc`, with its documents.

    Attributes:
        dataset: the input :class:`~veil.data.dataset.Dataset`.
        table: the published table in the input's row order (every row of the input that is
            published; identifying columns dropped).
        method: the method's configuration name (``localsuppression``, ``pram``, ``swap``,
            ``noise``, ``topcoding``).
        parameters: the method's public parameters (published).
        perturbed: the columns the method changed.
        seed: the seed of a reproducible run (``None``: every draw from the secure source).
        private_parameters: the parameters derived from the private table (private file only).
        recoding: the recoding first (``{"algorithm": "fulldomain", "node": …, "heights": …,
            "models": …}``), or ``None``.
        suppressed_cells: per quasi-identifier, the cells local suppression blanked.
        cell_marker: how a suppressed cell is published: ``"*"`` or ``""`` (missing).
        matching: how the risk reads a suppressed cell: ``"any"`` (it matches every value) or
            ``"category"``.
        suppressed_records: the records the recoding suppressed (removed, or shown as ``*``).
        risk_before / risk_after: :func:`veil.sdc.table_risk.risk_summary` of the input's and the
            published table's risk (private file).
        utility: the utility measures (private file).
        details: per-record figures the report draws (not written).
        shuffle: publish the rows in random order (the default).
        shuffle_seed: the seed of a reproducible shuffle (``None``: the secure source).
        spreadsheet_guard: write ``'`` before text cells a spreadsheet would run as a formula.
        private_extra: more entries for the private file.
    """

    dataset: Any
    table: pa.Table
    method: str
    parameters: dict
    perturbed: list[str]
    seed: int | None = None
    private_parameters: dict = field(default_factory=dict)
    recoding: dict | None = None
    suppressed_cells: dict[str, int] = field(default_factory=dict)
    cell_marker: str = "*"
    matching: str = "any"
    suppressed_records: int = 0
    suppressed_style: str = "remove"
    risk_before: dict | None = None
    risk_after: dict | None = None
    utility: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    shuffle: bool = True
    shuffle_seed: int | None = None
    spreadsheet_guard: bool = False
    private_extra: dict = field(default_factory=dict)

    # -- what it is --------------------------------------------------------------------------

    @property
    def not_fit_because(self) -> list[str]:
        """Why the release is not fit for release, one reason each (empty: it is)."""
        out = []
        if self.seed is not None:
            out.append(f"the {self.method} draws were seeded ({self.seed}): a reproducible experiment")
        if self.shuffle and self.shuffle_seed is not None:
            out.append(f"the rows were shuffled with a seed ({self.shuffle_seed}), which anyone who knows it can undo")
        return out

    @property
    def fit_for_release(self) -> bool:
        """Whether every draw came from the secure source."""
        return not self.not_fit_because

    @property
    def row_order(self) -> str:
        if not self.shuffle:
            return "input order"
        return "secure shuffle" if self.shuffle_seed is None else "seeded shuffle"

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    @property
    def column_names(self) -> list[str]:
        return list(self.table.column_names)

    @functools.cached_property
    def order(self) -> np.ndarray | None:
        """The published order of the rows (``None``: the input's)."""
        if not self.shuffle:
            return None
        if self.shuffle_seed is None:
            return secure_permutation(self.num_rows)
        return np.random.default_rng(self.shuffle_seed).permutation(self.num_rows)

    @functools.cached_property
    def published(self) -> pa.Table:
        """The table as it is written: rows in their published order, and the household column (if
        the table has one) renumbered 1, 2, … in the order its households first appear there.

        A household identifier is the survey's own key of a dwelling: published as it is, it links
        the release to the sampling frame and to every other file that carries it. Renumbered in
        the published (securely shuffled) order, it still groups each household's members, which
        is all an analyst needs, and says nothing else."""
        table = self.table if self.order is None else self.table.take(pa.array(self.order))
        household = getattr(self.dataset, "household", None)
        if household is None or household not in table.column_names:
            return table
        ids = table.column(household)
        number = pc.add(pc.index_in(ids, value_set=pc.unique(ids)), 1)  # missing stays missing
        return table.set_column(table.schema.get_field_index(household), household, number)

    @property
    def data(self):
        """The published table as the kind of frame the input was (pandas for files)."""
        kind = self.dataset.table.kind
        if kind == "polars":
            import polars as pl

            return pl.from_arrow(self.published)
        return self.published if kind == "arrow" else self.published.to_pandas()

    @property
    def warnings(self) -> list[str]:
        return [] if self.shuffle else [INPUT_ORDER_WARNING]

    # -- its documents -----------------------------------------------------------------------

    @functools.cached_property
    def _documents(self) -> tuple[dict, dict]:
        from veil import __version__

        ds = self.dataset
        created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        head = {"manifest_version": MANIFEST_VERSION, "veil": __version__, "created": created,
                "algorithm": self.method, "kind": SDC_KIND}
        source = {"name": ds.name, "columns": ds.columns, "kind": ds.table.kind,
                  "delimiter": ds.table.delimiter if ds.table.kind == "csv" else None}
        roles = {"quasi_identifiers": list(ds.quasi_identifiers), "sensitive": list(ds.sensitive),
                 "identifying": list(ds.identifying)}
        for role in ("weight", "household"):
            if getattr(ds, role, None):
                roles[role] = getattr(ds, role)
        if getattr(ds, "strata", None):
            roles["strata"] = list(ds.strata)
        sdc = {"method": self.method, "parameters": self.parameters, "perturbed": list(self.perturbed),
               "seed": self.seed, "randomness": "seeded" if self.seed is not None else "secure"}
        if self.method == "localsuppression" or self.suppressed_cells:
            sdc["suppressed_cells"] = dict(self.suppressed_cells)
            sdc["cell_marker"] = self.cell_marker
            sdc["matching"] = self.matching
        if self.recoding is not None:
            sdc["recoding"] = {k: v for k, v in self.recoding.items() if k != "private"}
        if getattr(ds, "household", None) in self.table.column_names:
            sdc["household_ids"] = "renumbered 1, 2, … in the order households first appear in the published rows"
        manifest = {
            **head, "input": source, "roles": roles,
            "output": {"rows": self.num_rows, "columns": self.column_names, "suppressed": self.suppressed_style,
                       "shuffled": self.shuffle, "seed": self.shuffle_seed if self.shuffle else None,
                       "order": self.row_order, **({"spreadsheet_guard": True} if self.spreadsheet_guard else {})},
            "sdc": sdc, "fit_for_release": self.fit_for_release,
            **({"not_fit_because": self.not_fit_because} if self.not_fit_because else {}),
        }
        if self.recoding is not None and self.suppressed_style == "star":
            manifest["suppression"] = {"records": self.suppressed_records}
        if self.warnings:
            manifest["warnings"] = list(self.warnings)
        private = {**head, "input": {**source, "rows": ds.num_rows},
                   "sdc": {"private_parameters": self.private_parameters, "risk_before": self.risk_before,
                           "risk_after": self.risk_after, "utility": self.utility,
                           **({"recoding": self.recoding.get("private", {})} if self.recoding else {})},
                   "suppression": {"records": self.suppressed_records,
                                   "share": self.suppressed_records / ds.num_rows if ds.num_rows else 0.0},
                   **self.private_extra}
        return manifest, private

    @property
    def manifest(self) -> dict:
        """The manifest published with the table (see the module notes)."""
        return self._documents[0]

    @property
    def private_manifest(self) -> dict:
        """What the curator keeps in the private file (see the module notes)."""
        return self._documents[1]

    @property
    def curator_manifest(self) -> dict:
        """The manifest with its private file's sections."""
        return combined(self.manifest, self.private_manifest)

    # -- writing -----------------------------------------------------------------------------

    def csv_chunks(self, delimiter: str | None = None, rows: int = 1 << 18):
        """The published table as CSV (the input's delimiter by default), the header then
        ``rows`` records at a time; a suppressed cell shown as missing is an empty cell."""
        ds = self.dataset
        if delimiter is None:
            delimiter = ds.table.delimiter if ds.table.kind == "csv" and ds.table.delimiter else ","
        table = self.published
        special = "[" + "".join("\\" + c for c in (delimiter, '"', "\n", "\r")) + "]"
        quoting = "none"
        for column in table.columns:
            kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
            if pa.types.is_string(kind) or pa.types.is_large_string(kind):
                texts = column.cast(kind) if pa.types.is_dictionary(column.type) else column
                if pc.any(pc.match_substring_regex(texts, special)).as_py():
                    quoting = "needed"
                    break
        options = pacsv.WriteOptions(delimiter=delimiter, include_header=False, quoting_style=quoting)
        header = io.StringIO()
        names = [guard_text(n) for n in self.column_names] if self.spreadsheet_guard else self.column_names
        csv.writer(header, delimiter=delimiter, lineterminator="\n").writerow(names)
        yield header.getvalue().encode("utf-8")
        for start in range(0, table.num_rows, rows):
            chunk = table.slice(start, rows)
            sink = pa.BufferOutputStream()
            pacsv.write_csv(guard_table(chunk) if self.spreadsheet_guard else chunk, sink, write_options=options)
            yield sink.getvalue().to_pybytes()

    def csv_text(self, delimiter: str | None = None) -> str:
        return b"".join(self.csv_chunks(delimiter)).decode("utf-8")

    def put(self, outputs, out, manifest=None, secret=None, extra: dict | None = None,
            private_extra: dict | None = None) -> str:
        """Put the table, its private file and its manifest into ``outputs`` (an
        :class:`~veil.output.OutputSet` the caller commits).

        Returns:
            The manifest's text (with the release's SHA-256 when a manifest path is given).
        """
        outputs.put(out, self.csv_chunks())
        document = {**self.manifest, **(extra or {})}
        if manifest is None:
            return json.dumps({**document, "release": outputs.describe(out)}, indent=2, ensure_ascii=False) + "\n"
        put_private(outputs, secret, {**self.private_manifest, **(private_extra or {})}, describes={"release": out})
        return outputs.put_manifest(manifest, document, describes={"release": out})
