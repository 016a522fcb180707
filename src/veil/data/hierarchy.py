"""Generalization hierarchies as integer matrices, and ARX's hierarchy CSV format.

A hierarchy with ``levels`` levels maps each leaf (level 0, an original value) to one value per
level. veil stores it as an ``int32`` matrix ``[n_leaves × levels]`` whose entry ``[i, L]`` is the
code of leaf ``i``'s generalization at level ``L`` in that level's label array. Generalizing a
column to level ``L`` is then one gather through :class:`Generalization`.

ARX's format (Prasser et al., ARX): no header, ``;``-separated, one row per leaf, column ``i`` is
level ``i``. It is read and written exactly. A file without any ``;`` whose every row splits at
``,`` into the same number (two or more) of levels is read as comma-separated, and written back so.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from veil.data import arrays, kernels
from veil.data.encoding import MISSING_LABEL, EncodedColumn, canonical_numeric_texts, factorize
from veil.errors import HierarchyError
from veil.inputs import open_regular_file
from veil.output.os_errors import describe_os_error
from veil.output.writer import write_file

# Leaf texts that stand for a missing value in a hierarchy file (ARX writes missing as NULL).
MISSING_LEAVES = (MISSING_LABEL, "NULL")


def _csv_rows(text: str, delimiter: str) -> list[list[str]]:
    """The non-empty rows of a CSV text split at ``delimiter``."""
    return [row for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter) if row]


class Hierarchy:
    """A validated generalization hierarchy.

    Args:
        rows: one sequence per leaf; element ``i`` is the value at level ``i``.
        name: what to call the hierarchy in error messages (a file or column name).

    Raises:
        HierarchyError: no rows, rows of unequal width, a leaf listed twice, or an inconsistent
            tree (one value at a level with two different parents at the next level).
    """

    def __init__(self, rows: Iterable[Sequence[str]], name: str = "hierarchy"):
        rows = [[str(v) for v in row] for row in rows]
        self.name = name
        # The file it was read from and the SHA-256 of its bytes (None for a hierarchy made here),
        # which a release's manifest names.
        self.path: Path | None = None
        self.sha256: str | None = None
        # How the file this came from separated and ended its lines, so that writing it back is
        # byte-exact.
        self.delimiter = ";"
        self.newline = "\n"
        self.final_newline = True
        if not rows:
            raise HierarchyError(f"{name} has no rows; give one row per original value.")
        width = len(rows[0])
        if width == 0:
            raise HierarchyError(f"{name} has an empty first row; give one value per level.")
        for i, row in enumerate(rows):
            if len(row) != width:
                raise HierarchyError(f"{name} row {i + 1} has {len(row)} values but row 1 has {width}; "
                                     "every row needs one value per level.")
        table = np.array(rows, dtype=object).reshape(len(rows), width)
        self.level_labels: list[np.ndarray] = []
        codes = np.empty(table.shape, dtype=np.int32)
        for level in range(width):
            level_codes, uniques = factorize(table[:, level])
            codes[:, level] = level_codes
            self.level_labels.append(np.asarray(uniques, dtype=object))
        self.codes = codes
        leaves = table[:, 0]
        if len(self.level_labels[0]) != len(leaves):
            seen: set[str] = set()
            for leaf in leaves:
                if leaf in seen:
                    raise HierarchyError(f"{name} lists the value {leaf!r} twice; give each original value one row.")
                seen.add(leaf)
        self._check_tree()

    @property
    def leaves(self) -> np.ndarray:
        return self.level_labels[0]

    @property
    def levels(self) -> int:
        """Number of levels, level 0 (the original values) included."""
        return self.codes.shape[1]

    @property
    def height(self) -> int:
        return self.levels - 1

    def _check_tree(self) -> None:
        for level in range(self.levels - 1):
            child, parent = self.codes[:, level], self.codes[:, level + 1]
            pairs = np.unique(np.stack([child, parent], axis=1), axis=0)
            if len(pairs) != len(np.unique(child)):
                dup = pairs[np.flatnonzero(pairs[1:, 0] == pairs[:-1, 0])[0]]
                parents = pairs[pairs[:, 0] == dup[0], 1]
                raise HierarchyError(
                    f"{self.name} is not a tree: {self.level_labels[level][dup[0]]!r} at level {level} has "
                    f"two parents at level {level + 1}, {self.level_labels[level + 1][parents[0]]!r} and "
                    f"{self.level_labels[level + 1][parents[1]]!r}.")

    def rows(self) -> list[list[str]]:
        """The hierarchy as rows of text, one per leaf, level 0 first."""
        return [[self.level_labels[L][self.codes[i, L]] for L in range(self.levels)]
                for i in range(len(self.codes))]

    @classmethod
    def read_csv(cls, path: str | os.PathLike, delimiter: str | None = None) -> "Hierarchy":
        """Read a hierarchy in ARX's CSV format (no header, one row per leaf, one column per level).

        Args:
            path: the file.
            delimiter: what separates the levels; ``None`` (the default) takes ARX's ``;``, or
                ``,`` for a file that holds no ``;`` and whose every row splits at ``,`` into the
                same number (two or more) of levels.

        Raises:
            HierarchyError: the file is missing, unreadable, or malformed.
        """
        path = Path(path)
        try:
            # A regular file only: a pipe or a device would never end.
            with open_regular_file(path, "hierarchy file", HierarchyError, keep_os_errors=True) as fh:
                data = fh.read()
            text = data.decode("utf-8-sig")
        except FileNotFoundError:
            raise HierarchyError(f"hierarchy file {str(path)!r} does not exist; check the path.") from None
        except IsADirectoryError:
            raise HierarchyError(f"hierarchy {str(path)!r} is a folder, not a hierarchy file; give the CSV file "
                                 "inside it.") from None
        except UnicodeDecodeError:
            raise HierarchyError(f"hierarchy file {str(path)!r} is not UTF-8 text; save it as UTF-8 CSV.") from None
        except OSError as exc:
            raise HierarchyError(f"hierarchy file {str(path)!r} cannot be read: {describe_os_error(exc)}.") from None
        name = f"hierarchy file {path.name!r}"
        chosen = ";" if delimiter is None else delimiter
        rows = _csv_rows(text, chosen)
        if delimiter is None and rows and all(len(row) == 1 for row in rows):
            by_comma = _csv_rows(text, ",")
            widths = {len(row) for row in by_comma}
            if len(widths) == 1 and widths != {1}:
                chosen, rows = ",", by_comma
        hierarchy = cls(rows, name=name)
        hierarchy.path, hierarchy.sha256 = path, hashlib.sha256(data).hexdigest()
        hierarchy.delimiter = chosen
        hierarchy.newline = "\r\n" if "\r\n" in text else "\n"
        hierarchy.final_newline = text.endswith(("\n", "\r"))
        return hierarchy

    def to_csv(self, path: str | os.PathLike, delimiter: str | None = None, newline: str | None = None,
               final_newline: bool | None = None) -> None:
        """Write the hierarchy in ARX's CSV format (:meth:`csv_text`), atomically (a temporary
        file, then a rename).

        The delimiter and line endings default to those of the file the hierarchy was read from
        (``;`` and ``\\n`` for a built one), so reading and writing a file gives back the same bytes.

        Raises:
            DataError: the folder does not exist.
        """
        write_file(path, self.csv_text(delimiter, newline, final_newline))

    def csv_text(self, delimiter: str | None = None, newline: str | None = None,
                 final_newline: bool | None = None) -> str:
        """The hierarchy in ARX's CSV format: one row per leaf, one column per level, no header.

        The delimiter and line endings default to those of the file the hierarchy was read from
        (``;`` and ``\\n`` for a built one). A one-level hierarchy written with ``;`` quotes its
        values that hold a ``,``, so that the file is not read back as comma-separated.
        """
        delimiter = self.delimiter if delimiter is None else delimiter
        newline = self.newline if newline is None else newline
        final_newline = self.final_newline if final_newline is None else final_newline
        buf = io.StringIO(newline="")
        # A "\r\n" terminator makes the writer quote any value holding either character.
        writer = csv.writer(buf, delimiter=delimiter, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
        lines = []
        quote_commas = self.levels == 1 and delimiter != ","
        for row in self.rows():
            if quote_commas and "," in row[0]:
                lines.append('"' + row[0].replace('"', '""') + '"')
                continue
            buf.seek(0)
            buf.truncate()
            writer.writerow(row)
            lines.append(buf.getvalue()[:-2])
        return newline.join(lines) + (newline if final_newline and lines else "")

    def __repr__(self) -> str:
        return f"Hierarchy({self.name}, leaves={len(self.leaves)}, levels={self.levels})"

    def align(self, column: EncodedColumn) -> "Generalization":
        """Map a column's codes onto this hierarchy, matching values by their text form.

        Numbers are compared in canonical text form on both sides when the column is numeric, so
        ``25`` in the data matches ``25`` or ``25.0`` in the file whatever the column's dtype.
        The missing category uses a leaf ``""`` or ``NULL`` when the file has one; otherwise it
        stays a node of its own, labelled ``""``, at every level until a level has a node
        labelled ``""`` (which it joins, since a reader cannot tell the two apart), and joins the
        root at the top level when the top level has a single value.

        Raises:
            HierarchyError: a data value has no leaf (the message names up to five of them).
        """
        labels = column.labels
        present = np.ones(len(labels), dtype=bool)
        if column.missing_code is not None:
            present[column.missing_code] = False
        leaf_of = _positions(labels, self.leaves)
        unmatched = (leaf_of < 0) & present
        if column.is_numeric and unmatched.any():
            # Same number, other spelling (25 vs 25.0): match on the canonical text of both sides.
            canonical = canonical_numeric_texts(self.leaves)
            if len(set(canonical)) == len(canonical):
                leaf_of[unmatched] = _positions(canonical_numeric_texts(labels[unmatched]), canonical)
        missing_leaf = -1
        if column.missing_code is not None:
            for marker in MISSING_LEAVES:
                hit = np.flatnonzero(self.leaves == marker)
                if len(hit):
                    missing_leaf = int(hit[0])
                    break
            leaf_of[column.missing_code] = missing_leaf
        uncovered = np.flatnonzero((leaf_of < 0) & present)
        if len(uncovered):
            shown = ", ".join(repr(str(v)) for v in labels[uncovered[:5]])
            more = f" and {len(uncovered) - 5} more" if len(uncovered) > 5 else ""
            hint = ""
            if self.levels == 1 and any(("," in leaf or "\t" in leaf) for leaf in self.leaves):
                hint = " (it reads as one level: an ARX hierarchy file separates its levels with ';')"
            raise HierarchyError(f"{self.name} does not cover {len(uncovered)} value(s) of column "
                                 f"'{column.name}': {shown}{more}; add a row for each{hint}.")
        lut = np.empty((len(labels), self.levels), dtype=np.int32)
        lut[:, 0] = np.arange(len(labels), dtype=np.int32)
        level_labels = [column.labels]
        # A node labelled "" prints like the missing category, so once a level has one the
        # missing category joins it (and its ancestors above): one label, one node.
        anchor = -1
        for level in range(1, self.levels):
            names = self.level_labels[level]
            col = np.where(leaf_of >= 0, self.codes[np.maximum(leaf_of, 0), level], -1).astype(np.int32)
            if column.missing_code is not None and missing_leaf < 0:
                empty = np.flatnonzero(names == MISSING_LABEL)
                if anchor < 0 and len(empty):
                    anchor = int(np.flatnonzero(self.codes[:, level] == empty[0])[0])
                if anchor >= 0:
                    col[column.missing_code] = self.codes[anchor, level]
                elif level == self.levels - 1 and len(names) == 1:
                    col[column.missing_code] = 0
                else:
                    col[column.missing_code] = len(names)
                    names = np.append(names, MISSING_LABEL).astype(object)
            lut[:, level] = col
            level_labels.append(names)
        return Generalization(column.name, lut, level_labels)


@dataclass(frozen=True, eq=False)
class Generalization:
    """A hierarchy aligned with one encoded column.

    Attributes:
        column: the column name.
        lut: ``int32 [cardinality × levels]``; ``lut[code, L]`` is the code at level ``L`` of the
            column's category ``code``. Level 0 is the identity.
        labels: for each level, the label of each code at that level.
    """

    column: str
    lut: np.ndarray
    labels: list[np.ndarray]

    @property
    def levels(self) -> int:
        return self.lut.shape[1]

    @property
    def height(self) -> int:
        return self.levels - 1

    def generalize(self, codes: np.ndarray, level: int) -> np.ndarray:
        """Codes at ``level`` of rows holding ``codes`` at level 0: one gather."""
        return self.lut[:, level][codes]

    def level_map(self, source: int, target: int) -> np.ndarray:
        """For each code at level ``source``, its code at the more general level ``target``.

        Maps are cached: a lattice search asks for the same few thousands of times.
        """
        cache = self.__dict__.setdefault("_level_maps", {})
        if (source, target) not in cache:
            out = np.zeros(len(self.labels[source]), dtype=np.int32)
            out[self.lut[:, source]] = self.lut[:, target]
            out.setflags(write=False)
            cache[(source, target)] = out
        return cache[(source, target)]

    def radix(self, level: int) -> int:
        return len(self.labels[level])


def _positions(texts: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """For each text, its position in ``distinct`` (texts listed once each), or -1; ``intp``."""
    found = kernels.index_in(arrays.strings(texts), arrays.strings(distinct))
    return arrays.to_numpy(found, null=-1).astype(np.intp)
