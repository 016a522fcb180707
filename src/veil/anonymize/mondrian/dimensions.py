"""The dimensions of Mondrian: how each quasi-identifier is ordered, measured and split.

**Kinds of quasi-identifier.** A numeric column is split on its values and published as the
range of the values its records hold, ``[min-max]`` (a single value keeps its own text). A
categorical column is split either

* along its hierarchy (``categorical="hierarchy"``, the default, for columns that have one): a
  partition holds the lowest common ancestor of its values; a split specializes that node to its
  children present in the partition, all at once, and is kept only if every child's part
  satisfies the models (LeFevre's categorical split). The cell is the node (its label, covering
  every value below it). A hierarchy whose top level has several values gets a virtual root
  ``*`` above them;
* or on an order (``categorical="order"``, or a column without hierarchy): like a numeric
  column, on the order of its codes (the order given for the column, else text order). A column
  with a given order publishes ranges ``[first-last]``; one in text order publishes the set of
  values its records hold, ``{a,b}``.

``categorical`` may also map columns to ``"hierarchy"`` or ``"order"`` (the others get the
default ``"hierarchy"``); ``"hierarchy"`` for a numeric column splits it along its hierarchy.

**Choosing the dimension.** The normalized range of a partition on a column is, for a column
split on values, ``(position of its largest value − position of its smallest) / (position range
of the column)``, where a numeric value's position is the value itself and any other value's its
rank in the order; for a column split along a hierarchy, ``(values of the column below the
partition's node − 1) / (values of the column − 1)``, the certainty penalty of publishing the
node. The widest column whose split is allowed is cut (ties: the column listed first).

**Missing values.** The missing category of a column split on values is its own value, placed
after the largest (``veil.data.encoding`` codes it last); its position is one mean step above
the largest value. It is split off like an extreme value. In a hierarchy the missing category
is a leaf like any other (ARX's ``NULL`` leaf, or a node of its own).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.data.dataset import Dataset
from veil.data.encoding import EncodedColumn

#: How categorical columns may be split: along their hierarchy, or on their order.
CATEGORICAL = ("hierarchy", "order")

# How a quasi-identifier is split and published.
RANGE = "range"          # split on values, published as [min-max]
SET = "set"              # split on text order, published as the set of values held
# Value-set widths are counted exactly while partitions × values stay below this many cells.
SET_WIDTH_CELLS = 1 << 24
HIERARCHY = "hierarchy"  # split along the hierarchy, published as the lowest common ancestor

VIRTUAL_ROOT = "*"


@dataclass(eq=False)
class Dimension:
    """One quasi-identifier as the partitioning sees it.

    Every kind is handled through a *rank* per code: the code itself for a column split on
    values, the position of the leaf in a depth-first order of the hierarchy otherwise (so every
    node's leaves are a contiguous run of ranks, and the lowest common ancestor of a set of
    leaves is that of its smallest and largest rank).
    """

    name: str
    kind: str
    column: EncodedColumn
    rank: np.ndarray                    # int32 [codes]: the rank of each code
    position: np.ndarray | None = None  # float [ranks] in [0, 1], for ranges and sets
    ancestors: np.ndarray | None = None  # int32 [levels × ranks]: node of each rank per level
    node_offset: np.ndarray | None = None  # int64 [levels]: first flat node id of each level
    node_size: np.ndarray | None = None    # int64 [flat nodes]: values below each node
    node_labels: list | None = None        # per level, the label of each node
    leaves: tuple[np.ndarray, np.ndarray] | None = None  # CSR (indptr, codes) of each flat node

    @property
    def cardinality(self) -> int:
        """The number of values of the column (its codes)."""
        return self.column.cardinality

    def lca(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Level and node of the lowest common ancestor of the leaves ranked ``low`` and ``high``
        (along a hierarchy only).

        Args:
            low: the smallest rank of each partition.
            high: the largest rank of each partition.
        """
        same = self.ancestors[:, low] == self.ancestors[:, high]
        level = np.argmax(same, axis=0)
        return level, self.ancestors[level, low]

    def width(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Normalized range of partitions whose smallest and largest ranks are ``low``, ``high``
        (and, along a hierarchy, the level of each one's node; ``None`` otherwise), as the module
        notes define it.

        Args:
            low: the smallest rank of each partition.
            high: the largest rank of each partition.
        """
        if self.kind != HIERARCHY:
            return self.position[high] - self.position[low], None
        level, node = self.lca(low, high)
        size = self.node_size[self.node_offset[level] + node]
        return (size - 1) / max(self.cardinality - 1, 1), level


def forced(choice) -> bool:
    """Whether a choice was made for its column alone (a :class:`Forced`), so that a numeric
    column is split along its hierarchy when it asks for ``"hierarchy"``.

    Args:
        choice: ``"hierarchy"`` or ``"order"``, maybe a :class:`Forced` one.
    """
    return isinstance(choice, Forced)


class Forced(str):
    """A per-column choice (from a mapping), which overrides the default for numeric columns."""


def dimension(dataset: Dataset, name: str, choice: str) -> Dimension:
    """The dimension of quasi-identifier ``name``: split along its hierarchy when ``choice`` is
    ``"hierarchy"`` and the column has one (a numeric column only when the choice is
    :func:`forced`), else on its values (a range when the column is ordered, a value set in text
    order otherwise).

    Args:
        dataset: the table.
        name: a quasi-identifier of ``dataset``.
        choice: ``"hierarchy"`` or ``"order"`` (maybe a :class:`Forced` one).
    """
    col = dataset.column(name)
    card = col.cardinality
    identity = np.arange(card, dtype=np.int32)
    gen = dataset.generalizations.get(name)
    use_hierarchy = choice == HIERARCHY and gen is not None and (not col.is_numeric or forced(choice))
    if not use_hierarchy:
        kind = RANGE if col.ordered else SET
        return Dimension(name, kind, col, identity, position=_positions(col))
    lut = gen.lut.astype(np.int64)
    labels = [np.asarray(level, dtype=object) for level in gen.labels]
    if len(np.unique(lut[:, -1])) > 1:
        lut = np.concatenate([lut, np.zeros((card, 1), dtype=np.int64)], axis=1)
        labels.append(np.array([VIRTUAL_ROOT], dtype=object))
    levels = lut.shape[1]
    # Depth-first order of the leaves: sort by the node at the top level, then the next, ...
    code_of_rank = np.lexsort([lut[:, level] for level in range(levels)]).astype(np.int64)
    rank = np.empty(card, dtype=np.int32)
    rank[code_of_rank] = np.arange(card, dtype=np.int32)
    ancestors = np.ascontiguousarray(lut[code_of_rank].T.astype(np.int32))
    radices = [len(labels[level]) for level in range(levels)]
    node_offset = np.concatenate([[0], np.cumsum(radices)[:-1]]).astype(np.int64)
    sizes, members = [], []
    for level in range(levels):
        sizes.append(np.bincount(lut[:, level], minlength=radices[level]))
        members.append(np.argsort(lut[:, level], kind="stable"))
    node_size = np.concatenate(sizes).astype(np.int64)
    indptr = np.concatenate([[0], np.cumsum(node_size)]).astype(np.int64)
    return Dimension(name, HIERARCHY, col, rank, ancestors=ancestors, node_offset=node_offset,
                      node_size=node_size, node_labels=labels, leaves=(indptr, np.concatenate(members)))


def _positions(col: EncodedColumn) -> np.ndarray:
    """Position of each code in [0, 1] for the normalized range (see the module notes)."""
    card = col.cardinality
    if col.is_numeric:
        values = col.numeric.astype(float).copy()
        finite = np.isfinite(values)
        if finite.any():
            low, high = values[finite].min(), values[finite].max()
            step = (high - low) / max(int(finite.sum()) - 1, 1) if high > low else 1.0
            values[~finite] = high + step
        else:
            values[:] = 0.0
    else:
        values = np.arange(card, dtype=float)
    span = values.max() - values.min() if card else 0.0
    return (values - values.min()) / span if span > 0 else np.zeros(card)
