"""What an anonymizer publishes: the table, and a manifest of how it was made.

A :class:`Release` carries the anonymized table, the classes it consists of, which of them were
suppressed, and two JSON-ready documents (see :mod:`veil.manifests`): the :attr:`~Release.manifest`
published with the table, which describes the transformation (the level of each quasi-identifier,
the models with their thresholds and verdicts, the published classes) and names no value of the
private table; and the :attr:`~Release.private_manifest` its curator keeps (the input's size, the
suppressed records, the value map, the reference distribution of every sensitive column, every
model's level, the utility metrics, the search). Metrics, the checker and the attacks read
releases from any algorithm the same way.

**The published classes.** Whatever grouping an algorithm made, a reader of the table only sees
the published cells: rows whose quasi-identifier cells print the same text are one class. The
release is judged on those classes (:meth:`EquivalenceClasses.merge_identical`), so two groups
whose rounded centroids coincide, or two hierarchy nodes with one label, count as one class.

**Suppressed records shown as** ``*``. As in ARX, the suppressed records are exempt from the
privacy models and the class count. When records are suppressed and published as ``*``, every
published row whose quasi-identifiers are all ``*`` is one of them to a reader, so a released
class whose cells all print ``*`` is counted among the suppressed records too. Without suppressed
records, all-``*`` rows are an ordinary class.

**Row order.** Rows are shuffled by default, with the operating system's secure randomness, so
that two releases of one table cannot be joined by position (Sweeney's unsorted matching attack,
:mod:`veil.attacks.matching`). Keeping the input's order is an explicit choice
(``shuffle=False``): the manifest's ``output.order`` then says ``"input order"`` and its
``warnings`` list says why it is a risk, and the ledger's gate checks the release against the
earlier ones by position (:class:`veil.ledger.checks.MatchingCheck`).

**Columns and warnings.** :attr:`Release.columns` gives every input column's role and what the
release does with it (published as is, generalized, suppressed or dropped), and flags the
columns published as is whose published values single people out (dates, free text, values few
records share: :mod:`veil.anonymize.columns`); the manifest lists them under ``columns``. The
manifest's ``warnings`` say, besides the row order, when the release keeps next to nothing
(every quasi-identifier at the top, or suppression beyond the utility left:
:mod:`veil.anonymize.useless`) and which columns published as is are risky.
"""

from __future__ import annotations

import csv
import datetime as _dt
import functools
import io
import json
import os
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from veil.anonymize.columns import ColumnDisposition, column_dispositions, profile_column, quasi_identifier_disposition
from veil.classes import STAR, EquivalenceClasses
from veil.data import arrays
from veil.data.dataset import Dataset
from veil.errors import ParameterError
from veil.manifests import MANIFEST_VERSION, combined, hierarchy_files, private_path, put_private
from veil.models.base import PrivacyModel
from veil.output import OutputSet, write_file
from veil.randomness import secure_permutation
from veil.spreadsheet import guard_table, guard_text

SUPPRESSED_STYLES = ("remove", "star")
# Records per piece of a release written as CSV: a few tens of MB of text at a time.
CSV_CHUNK_ROWS = 1 << 18
# Models whose level reads the published classes alone (and a public population or earlier
# release), so that anyone holding the table can measure it: published in the manifest. Every
# other level (t-closeness, δ-disclosure, β-likeness compare each class with the input's
# distribution) is kept in the private file.
PUBLIC_LEVELS = frozenset({"k", "alpha", "l_distinct", "l_entropy", "c_l_recursive", "join", "delta_presence",
                           "k_map"})
INPUT_ORDER_WARNING = ("the rows keep the input's order: anyone holding another release of the same table in the "
                       "same order can join the two by position and intersect each person's classes (the unsorted "
                       "matching attack); publish it shuffled unless the order is public.")


class Release:
    """An anonymized table with its manifest.

    Args:
        dataset: the original dataset.
        classes: its equivalence classes at the published generalization (classes that print
            identically are merged here; see the module notes).
        failing: bool per class, the classes whose records are suppressed.
        algorithm: the name of the algorithm that made the release.
        models: the privacy models the release was made to satisfy.
        suppression_limit: the share of records that could be suppressed.
        metric: the utility metric the algorithm optimized (or ``None``).
        search: the search result to record (any object with ``__dict__``-like fields), or ``None``.
        suppressed: ``"remove"`` (drop suppressed records) or ``"star"`` (publish their
            quasi-identifiers as ``*``).
        shuffle: publish rows in random order (the default), so that two releases of one table
            cannot be joined by row position (Sweeney's unsorted matching attack,
            :mod:`veil.attacks.matching`); ``False`` keeps the input's order, which the
            manifest's ``output.order`` and ``warnings`` flag as linkable by position.
        rng: ``None`` shuffles with the operating system's secure randomness; a
            ``numpy.random.Generator`` or an integer seed (recorded in the manifest) makes a
            reproducible shuffle for experiments, which the manifest says is not fit for release.
        recoding: algorithm-specific entries for the manifest (e.g. each partition's box or each
            group's centroid), or a function that returns them: it is called only when the
            manifest is read, since a large release has hundreds of thousands of boxes.
        private_recoding: the entries of ``recoding`` derived from the input table beyond what
            the published table shows (search statistics, a standardization): kept in the
            private file only.

    Attributes:
        classes: the published classes, suppressed ones included.
        failing: bool per published class, the suppressed ones.
        released_classes: the published classes that are not suppressed.
        spreadsheet_guard: whether the files are written with the spreadsheet guard (see
            :meth:`guard_spreadsheets`; off unless asked).

    Raises:
        ParameterError: an unknown ``suppressed`` style.
    """

    spreadsheet_guard: bool = False

    def __init__(self, dataset: Dataset, classes: EquivalenceClasses, failing: np.ndarray, *, algorithm: str,
                 models: Sequence[PrivacyModel], suppression_limit: float, metric=None, search=None,
                 suppressed: str = "remove", shuffle: bool = True, rng: np.random.Generator | int | None = None,
                 recoding: dict | None = None, private_recoding: Sequence[str] = ()):
        if suppressed not in SUPPRESSED_STYLES:
            raise ParameterError(f"suppressed records are 'remove'd or shown as 'star', not {suppressed!r}.")
        self.dataset = dataset
        failing = np.asarray(failing, dtype=bool)
        if suppressed == "star" and failing.any():
            failing = failing | classes.printed_as(STAR)
        self.classes, class_of = classes.merge_identical(keep=~failing)
        self.failing = np.zeros(self.classes.n_classes, dtype=bool)
        self.failing[class_of] = failing
        self.algorithm = algorithm
        self.models = list(models)
        self.suppression_limit = suppression_limit
        self.metric = metric
        self.search = search
        self.suppressed_style = suppressed
        self.seed = int(rng) if isinstance(rng, (int, np.integer)) else None
        # No rng: the secure source shuffles; a seed or a Generator makes a reproducible shuffle.
        self._rng = rng if rng is None or isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.shuffled = shuffle
        self._recoding = recoding
        self._private_recoding = tuple(private_recoding)
        self.released_classes = self.classes.subset(~self.failing)
        self._order = self._row_order()

    @functools.cached_property
    def recoding(self) -> dict | None:
        """The algorithm-specific manifest entries (built on first use)."""
        return self._recoding() if callable(self._recoding) else self._recoding

    @property
    def row_order(self) -> str:
        """How the rows are ordered: ``"secure shuffle"``; ``"seeded shuffle"`` (reproducible, not fit
        for release); or ``"input order"``, which lets anyone holding another release of the same
        table in the same order join the two by position."""
        if not self.shuffled:
            return "input order"
        return "secure shuffle" if self._rng is None else "seeded shuffle"

    @functools.cached_property
    def columns(self) -> list[ColumnDisposition]:
        """Every input column, in order: its role, what the release does with it, and for a column
        published as is (other than a quasi-identifier) what its published values show (see
        :mod:`veil.anonymize.columns`; the records a release leaves out are not read)."""
        ds, classes = self.dataset, self.classes
        released = ~self.failing & (classes.sizes > 0)
        qis = {q: quasi_identifier_disposition(classes.cells(j), np.unique(classes.keys[released, j]))
               for j, q in enumerate(ds.quasi_identifiers)}
        rows = None
        if self.suppressed_style == "remove" and self.failing.any():
            rows = ~self.failing[classes.row_class]
        held = set(ds.table.data.column_names)
        profiles = {name: profile_column(ds.table.data.column(name), rows=rows, weights=ds.row_weights,
                                         missing=ds.missing_values) if name in held else None
                    for name in self.column_names if name not in ds.quasi_identifiers}
        roles = {"quasi_identifiers": ds.quasi_identifiers, "sensitive": ds.sensitive, "identifying": ds.identifying}
        return column_dispositions(ds.columns, roles, qis, profiles)

    @functools.cached_property
    def warnings(self) -> list[str]:
        """What a publisher must know before publishing, one sentence each: rows kept in the input
        order, a release that keeps next to nothing (:mod:`veil.anonymize.useless`), and the
        columns published as is that single people out (:mod:`veil.anonymize.columns`)."""
        from veil.anonymize.useless import suppression_beyond_utility
        from veil.metrics import NormalizedCertaintyPenalty

        share = self.suppressed_records / self.dataset.num_rows if self.dataset.num_rows else 0.0
        beyond = suppression_beyond_utility(share, NormalizedCertaintyPenalty().value(self.classes, self.failing))
        public = self.public_warnings
        return public[:len(public) - self._column_warning_count] + ([beyond] if beyond else []) + \
            public[len(public) - self._column_warning_count:]

    @property
    def public_warnings(self) -> list[str]:
        """The warnings a reader of the published table could make himself, which the published
        manifest carries: rows in the input order, a single class or every quasi-identifier at the
        top, and risky columns published as is. (Suppression beyond the utility left is judged on
        the input's size and the suppressed records, so it stays in the private file.)"""
        from veil.anonymize.useless import all_at_top

        out = [] if self.shuffled else [INPUT_ORDER_WARNING]
        qis = [c for c in self.columns if c.role == "quasi-identifying"]
        top = all_at_top(qis, self.released_classes.n_classes)
        out += [top] if top else []
        out += [c.warning_sentence() for c in self.columns if c.warning]
        return out

    @property
    def _column_warning_count(self) -> int:
        return sum(1 for c in self.columns if c.warning)

    @property
    def suppressed_records(self) -> int:
        """Number of records suppressed."""
        return int(self.classes.sizes[self.failing].sum())

    def _row_order(self) -> np.ndarray | None:
        """The input row of each published row, in publishing order (``None``: every input row,
        in input order; or a dataset summarized by its distinct rows, whose engine orders them)."""
        if self.dataset.row_weights is not None:
            return None
        order = None
        if self.suppressed_style == "remove" and self.failing.any():
            order = np.flatnonzero(~self.failing[self.classes.row_class])
        if self.shuffled:
            rows = np.arange(self.dataset.num_rows) if order is None else order
            order = rows[secure_permutation(len(rows))] if self._rng is None else self._rng.permutation(rows)
        return order

    @property
    def num_rows(self) -> int:
        """Number of published rows (suppressed records included when shown as ``*``)."""
        if self._order is not None:
            return len(self._order)
        removed = self.suppressed_records if self.suppressed_style == "remove" else 0
        return self.dataset.num_rows - removed

    @property
    def column_names(self) -> list[str]:
        """The published columns, in the input's order (identifying columns are dropped)."""
        return [name for name in self.dataset.columns if name not in self.dataset.identifying]

    def published_labels(self) -> dict[str, np.ndarray]:
        """Per quasi-identifier, the published text of each row of the dataset (``*`` for the rows
        of suppressed classes when they are shown), and ``"suppressed"``: bool per row.

        An engine that holds the records elsewhere (Spark) joins them to these, row of its summary
        by row, to write the release itself.
        """
        classes, rows = self.classes, self.classes.row_class
        suppressed_row = self.failing[rows]
        out = {}
        for j, name in enumerate(self.dataset.quasi_identifiers):
            labels = np.asarray(classes.cells(j).labels, dtype=object)[classes.keys[:, j]][rows]
            if self.suppressed_style == "star":
                labels = np.where(suppressed_row, STAR, labels)
            out[name] = labels.astype(str)
        out["suppressed"] = suppressed_row
        return out

    @functools.cached_property
    def table(self) -> pa.Table | None:
        """The released table (built on first use; :meth:`csv_chunks` writes it without it), or
        ``None`` for a dataset summarized by its distinct rows, whose records only its engine
        holds (see :attr:`data`)."""
        if self.dataset.row_weights is not None:
            return None
        return self._rows(0, self.num_rows)

    def _rows(self, start: int, stop: int) -> pa.Table:
        """Published rows ``start`` to ``stop`` as a table: quasi-identifiers as their cells'
        labels, every other column as the input holds it (text read as codes decoded)."""
        ds = self.dataset
        rows = np.arange(start, stop) if self._order is None else self._order[start:stop]
        row_class = self.classes.row_class[rows]
        columns = {}
        for name in self.column_names:
            if name in ds.quasi_identifiers:
                j = ds.quasi_identifiers.index(name)
                codes = self.classes.keys[:, j][row_class]
                if self.suppressed_style == "star":
                    # The last label, "*", for the rows of suppressed classes.
                    codes = np.where(self.failing[row_class], len(self._labels[j]) - 1, codes)
                columns[name] = self._labels[j].take(arrays.from_numpy(codes))
            else:
                column = ds.table.data.column(name)
                if self._order is None:
                    column = column.slice(start, stop - start)
                else:
                    column = column.take(arrays.from_numpy(rows))
                if pa.types.is_dictionary(column.type):
                    column = column.cast(column.type.value_type)
                columns[name] = column
        return pa.table(columns)

    @functools.cached_property
    def _labels(self) -> list[pa.Array]:
        """Per quasi-identifier, the labels of its cells (then ``*`` when suppressed records are shown)."""
        star = [STAR] if self.suppressed_style == "star" else []
        return [arrays.strings(list(self.classes.cells(j).labels) + star)
                for j in range(len(self.dataset.quasi_identifiers))]

    @property
    def data(self):
        """The released table, as the kind of frame the input was (pandas for files; a Spark
        DataFrame for a table the Spark engine read)."""
        if self.table is None:
            return self.dataset.publish(self)
        if self.dataset.table.kind == "polars":
            import polars as pl

            return pl.from_arrow(self.table)
        if self.dataset.table.kind == "arrow":
            return self.table
        return self.table.to_pandas()

    def generalization_map(self) -> dict[str, dict[str, str]]:
        """For each quasi-identifier, each original value (as text) → its published value.

        Every value of the input is listed, those of suppressed records too: it names the private
        table's values, so it goes to the private file, never the published manifest.
        """
        out = {}
        for j, name in enumerate(self.dataset.quasi_identifiers):
            cells = self.classes.cells(j)
            col = self.dataset.column(name)
            if cells.level is not None and cells.cell_of_code is not None:
                published = np.asarray(cells.labels, dtype=object)[cells.cell_of_code]
                out[name] = {str(k): str(v) for k, v in zip(col.labels, published)}
        return out

    def model_levels(self) -> list[dict]:
        """Each model's level and verdict on the released records."""
        rows = []
        for model in self.models:
            result = model.evaluate(self.released_classes) if self.released_classes.n_classes else None
            sensitive = (result.sensitive or ", ".join(result.by_sensitive) or None) if result else None
            rows.append({"model": model.name, "key": model.key, "threshold": model.threshold,
                         "sensitive": sensitive,
                         "level": _json_number(result.level) if result else None,
                         "passed": result.passed if result else None,
                         # the c of recursive (c,ℓ)-diversity, which its level depends on
                         **({"c": model.c} if hasattr(model, "c") else {})})
        return rows

    def reference(self) -> dict[str, dict[str, int]]:
        """Per sensitive column, each value of the input table (as text) → its number of records:
        the distribution t-closeness, δ-disclosure and β-likeness compare every class with.

        It counts the suppressed records too: it goes to the private file only."""
        out = {}
        for name in self.dataset.sensitive:
            col = self.dataset.column(name)
            out[name] = {str(label): int(count) for label, count in zip(col.labels, col.counts())}
        return out

    def metrics(self) -> dict[str, float]:
        """Every utility metric that applies to this release."""
        from veil.metrics import evaluate_all

        return {k: _json_number(v) for k, v in evaluate_all(self.classes, self.failing).items()}

    @functools.cached_property
    def _documents(self) -> tuple[dict, dict]:
        """The published manifest and the private file's content (see :mod:`veil.manifests`)."""
        ds = self.dataset
        created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        head = {"manifest_version": MANIFEST_VERSION, "veil": _version(), "created": created,
                "algorithm": self.algorithm}
        source = {"name": ds.name, "columns": ds.columns, "kind": ds.table.kind,
                  "delimiter": ds.table.delimiter if ds.table.kind == "csv" else None}
        suppression = {"limit": self.suppression_limit, "records": self.suppressed_records,
                       "share": self.suppressed_records / ds.num_rows}
        models = self.model_levels()
        manifest = {
            **head,
            "input": source,
            "roles": {"quasi_identifiers": ds.quasi_identifiers, "sensitive": ds.sensitive,
                      "identifying": ds.identifying, "insensitive": ds.insensitive},
            "output": {"rows": self.num_rows, "columns": self.column_names,
                       "suppressed": self.suppressed_style, "shuffled": self.shuffled, "seed": self.seed,
                       "order": self.row_order, **({"spreadsheet_guard": True} if self.spreadsheet_guard else {})},
            # Suppressed records shown as * are in the table, so their number is; removed, it is not.
            "suppression": {"limit": self.suppression_limit,
                            **({"records": self.suppressed_records} if self.suppressed_style == "star" else {})},
            "classes": {"released": self.released_classes.n_classes,
                        "smallest": int(self.released_classes.sizes.min()) if self.released_classes.n_classes else 0},
            "models": [row if row["key"] in PUBLIC_LEVELS else {k: v for k, v in row.items() if k != "level"}
                       for row in models],
        }
        private = {**head, "input": {**source, "rows": ds.num_rows}, "suppression": suppression, "models": models,
                   "metrics": self.metrics(), "reference": self.reference()}
        levels = {q: self.classes.cells(j).level for j, q in enumerate(ds.quasi_identifiers)}
        if all(v is not None for v in levels.values()):
            manifest["node"] = levels
            # 0 for a column published as it is, without a hierarchy
            manifest["heights"] = {q: ds.generalizations[q].height if q in ds.generalizations else 0
                                   for q in ds.quasi_identifiers}
        described = {c: h for c, h in ds.hierarchies.items() if c in ds.quasi_identifiers or c in ds.sensitive}
        if hierarchy_files(described):
            manifest["hierarchy_files"] = hierarchy_files(described)
        private["generalization"] = self.generalization_map()
        private["hierarchy_rows"] = {c: h.rows() for c, h in described.items()}
        if self.recoding is not None:
            manifest["recoding"] = {k: v for k, v in self.recoding.items() if k not in self._private_recoding}
            private["recoding"] = self.recoding
        if self.search is not None:
            metric = getattr(self.metric, "key", None)
            manifest["search"] = {"metric": metric}
            private["search"] = {
                "metric": metric, "loss": _json_number(self.search.loss),
                "nodes_total": self.search.nodes_total, "nodes_checked": self.search.nodes_checked,
                "proven_optimal": self.search.proven_optimal, "seconds": round(self.search.seconds, 4)}
        manifest["columns"] = [c.to_manifest() for c in self.columns]
        if self.public_warnings:
            manifest["warnings"] = list(self.public_warnings)
        if len(self.warnings) > len(self.public_warnings):
            private["warnings"] = list(self.warnings)
        return manifest, private

    @property
    def manifest(self) -> dict:
        """The manifest published with the table (computed once): it describes the transformation
        and names nothing of the private table (see :mod:`veil.manifests`, field by field)."""
        return self._documents[0]

    @property
    def private_manifest(self) -> dict:
        """What the curator keeps beside the manifest, in its private file (computed once): the
        input's size and suppressed records, every model's level, the utility metrics, the
        reference distributions, the value map, the hierarchies, the search's statistics and the
        warnings that depend on them."""
        return self._documents[1]

    @property
    def curator_manifest(self) -> dict:
        """The manifest with its private file's sections: everything the curator's tools read."""
        return combined(self.manifest, self.private_manifest)

    def csv_text(self, delimiter: str | None = None) -> str:
        """The released table as CSV text, with the input's delimiter by default."""
        return b"".join(self.csv_chunks(delimiter)).decode("utf-8")

    def csv_chunks(self, delimiter: str | None = None, rows: int = CSV_CHUNK_ROWS) -> Iterator[bytes]:
        """The released table as CSV, the header and then ``rows`` records at a time: what
        :meth:`csv_text` holds, without ever holding the release whole (pass it to
        :meth:`veil.output.OutputSet.put`). The input's delimiter by default.

        Raises:
            ParameterError: the dataset is summarized by its distinct rows: its records are held
                by the engine that read them, which writes the release.
        """
        if self.dataset.row_weights is not None:
            raise ParameterError("this release's records are held by the engine that read them; write it with "
                                 "that engine (veil.engines.SparkEngine.write_release).")
        return self._csv_chunks(delimiter, rows)

    def _csv_chunks(self, delimiter: str | None, rows: int) -> Iterator[bytes]:
        """See :meth:`csv_chunks` (a generator, so :meth:`csv_chunks` refuses before writing)."""
        if delimiter is None:
            delimiter = self.dataset.table.delimiter if self.dataset.table.kind == "csv" else ","
        # Arrow quotes every string when asked for "needed" quoting; quote nothing unless some
        # value holds the delimiter, a quote or a line break, so the output looks like the input.
        special = "[" + "".join("\\" + c for c in (delimiter, '"', "\n", "\r")) + "]"
        options = pacsv.WriteOptions(delimiter=delimiter, include_header=False,
                                     quoting_style="needed" if self._holds(special) else "none")
        header = io.StringIO()
        names = [guard_text(name) for name in self.column_names] if self.spreadsheet_guard else self.column_names
        csv.writer(header, delimiter=delimiter, lineterminator="\n").writerow(names)
        yield header.getvalue().encode("utf-8")
        for start in range(0, self.num_rows, rows):
            sink = pa.BufferOutputStream()
            chunk = self._rows(start, min(start + rows, self.num_rows))
            pacsv.write_csv(guard_table(chunk) if self.spreadsheet_guard else chunk, sink, write_options=options)
            yield sink.getvalue().to_pybytes()

    def _holds(self, pattern: str) -> bool:
        """Whether some published text matches the regular expression ``pattern``.

        Looked up where it is cheap: on the labels of the cells published, and on the input's
        text columns (their dictionaries when read as codes) at the rows published.
        """
        ds, classes = self.dataset, self.classes
        shown = classes.sizes > 0
        released = shown & ~self.failing
        starred = self.suppressed_style == "star" and bool((shown & self.failing).any())
        for j in range(len(ds.quasi_identifiers)):
            labels = np.asarray(classes.cells(j).labels, dtype=object)
            published = [labels[c] for c in np.unique(classes.keys[released, j])] + ([STAR] if starred else [])
            if _matches(arrays.strings(published), pattern).any():
                return True
        every_row = self.suppressed_style == "star" or not self.failing.any()
        row_shown = None if every_row else ~self.failing[classes.row_class]
        for name in self.column_names:
            if name in ds.quasi_identifiers:
                continue
            start = 0
            for chunk in ds.table.data.column(name).chunks:
                hit = _matches(chunk, pattern)
                if hit is not None:
                    if (hit if row_shown is None else hit & row_shown[start:start + len(chunk)]).any():
                        return True
                start += len(chunk)
        return False

    def guard_spreadsheets(self, guard: bool = True) -> "Release":
        """Write the release's files with the spreadsheet guard (:mod:`veil.spreadsheet`): ``'``
        before every text cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` …,
        numbers excepted). The manifest says so (``output.spreadsheet_guard``); the table in memory
        (:attr:`table`, :attr:`data`) is not changed.

        Returns:
            The release itself.
        """
        self.spreadsheet_guard = bool(guard)
        self.__dict__.pop("manifest", None)   # computed again, with the guard
        return self

    def manifest_text(self, extra: dict | None = None) -> str:
        """:attr:`manifest` (with ``extra`` entries added) as indented JSON."""
        return json.dumps({**self.manifest, **(extra or {})}, indent=2, ensure_ascii=False) + "\n"

    def to_csv(self, path: str | os.PathLike, delimiter: str | None = None) -> None:
        """Write the released table as CSV, atomically, with the input's delimiter by default.

        Raises:
            DataError: the folder does not exist.
        """
        write_file(path, self.csv_chunks(delimiter))

    def write_manifest(self, path: str | os.PathLike) -> None:
        """Write :attr:`manifest` as JSON and its private file beside it (:func:`veil.manifests.private_path`),
        as one set, atomically (without the release's hash: see :meth:`write`)."""
        with OutputSet([path, private_path(path)]) as outputs:
            put_private(outputs, private_path(path), self.private_manifest, describes={})
            outputs.put_manifest(path, self.manifest, describes={})
            outputs.commit()

    def write(self, path: str | os.PathLike, manifest: str | os.PathLike, *, extra: dict | None = None,
              private_extra: dict | None = None, delimiter: str | None = None, reads=()) -> str:
        """Write the released table, its manifest and its private file as one set: all appear or
        none does.

        The manifest names the release file and its SHA-256 (see :func:`veil.output.load_manifest`,
        which readers use to reject an unmatched pair); the private file goes beside the manifest
        (:func:`veil.manifests.private_path`), naming the release file and SHA-256 too.

        Args:
            path: where the released table (CSV) goes.
            manifest: where the manifest (JSON) goes.
            extra: entries added to the manifest.
            private_extra: entries added to the private file.
            delimiter: the CSV delimiter; the input's by default.
            reads: files this run read, which no output may replace.

        Returns:
            The manifest's text, as written.

        Raises:
            DataError: a folder is missing or unwritable, or the disk is full.
            ParameterError: an output is an input, or two paths are one file.
        """
        secret = private_path(manifest)
        with OutputSet([path, manifest, secret], reads=reads) as outputs:
            outputs.put(path, self.csv_chunks(delimiter))
            put_private(outputs, secret, {**self.private_manifest, **(private_extra or {})},
                        describes={"release": path})
            text = outputs.put_manifest(manifest, {**self.manifest, **(extra or {})}, describes={"release": path})
            outputs.commit()
        return text


def _matches(array: pa.Array, pattern: str) -> np.ndarray | None:
    """Bool per element of a text array (of text read as codes too): whether it matches
    ``pattern`` (nulls do not); ``None`` for an array that does not hold text."""
    kind = array.type.value_type if pa.types.is_dictionary(array.type) else array.type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return None
    if pa.types.is_dictionary(array.type):
        hit = np.append(_matches(array.dictionary, pattern), False)
        return hit[arrays.to_numpy(array.indices, null=len(array.dictionary))]
    return arrays.to_numpy(pc.match_substring_regex(array, pattern), null=False)


def _json_number(value):
    if value is None:
        return None
    value = float(value)
    if np.isinf(value):
        return "inf"
    if np.isnan(value):
        return None
    return int(value) if value.is_integer() else value


def _version() -> str:
    from veil import __version__

    return __version__
