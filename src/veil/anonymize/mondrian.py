"""Mondrian multidimensional partitioning (LeFevre, DeWitt and Ramakrishnan, ICDE 2006).

Mondrian splits the table recursively: a partition is cut at the median of the quasi-identifier
with the widest normalized range, and a cut is kept only if every part satisfies the privacy
models. Each final partition is one equivalence class; its records publish, per
quasi-identifier, the smallest cell that holds their values (a range ``[21-34]``, a hierarchy
node, or a set of values). No record is suppressed: the whole table is the first partition.

**Modes.** ``strict`` (strict multidimensional partitioning): the left part holds the values up
to the median and the right part the values above it (when the median is the largest value, the
values below it and the rest), so partitions never overlap. ``relaxed`` (LeFevre's relaxed
multidimensional partitioning): the records are ordered by the value and cut into halves of
equal size, so records equal to the median go to either side; the published cells are computed
from each partition's records and may overlap. In either mode, partitions whose cells print the
same text on every quasi-identifier (identical relaxed cells, or two hierarchy nodes with one
label) are indistinguishable in the table, so they are one class, and the models are checked on
that class. Every model but δ-disclosure holds on a union of classes that hold it; should such a
union fail, its partitions are collapsed into their lowest common ancestor in the split tree (a
partition every model accepted), until every class passes.

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
node. The widest
column whose split is allowed is cut (ties: the column listed first).

**Missing values.** The missing category of a column split on values is its own value, placed
after the largest (``veil.data.encoding`` codes it last); its position is one mean step above
the largest value. It is split off like an extreme value. A cell that holds it and other values
is published as ``[21-34] or missing``; a cell holding only it as the empty text. In a hierarchy
the missing category is a leaf like any other (ARX's ``NULL`` leaf, or a node of its own).

**Vectorized, level-synchronous.** Every round processes all partitions at once: rows are kept
grouped by partition, per-partition minima and maxima are ``reduceat`` calls, the dimensions are
ranked per partition, and the rows of all partitions to split are ordered by (partition, value)
with one stable ``argsort``; medians and part boundaries are read from that order. The privacy
models are evaluated once per round on all candidate parts together (their sizes and
part × sensitive-value count matrices, one ``bincount`` each); a partition whose best dimension
is refused tries its next widest in the same round. A round costs one sort of the active records
within their partitions plus linear passes, and rounds number about log₂(n/k): O(n log n) per
round, O(n log n · log(n/k)) in all.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from veil.anonymize.base import Anonymizer
from veil.anonymize.fulldomain import InfeasibleError
from veil.cells import Cells
from veil.classes import EquivalenceClasses, SensitiveCounts, group_rows
from veil.data.dataset import Dataset
from veil.data.encoding import MISSING_LABEL, EncodedColumn
from veil.errors import ColumnError, ParameterError
from veil.models.base import TOLERANCE, PrivacyModel

MODES = ("strict", "relaxed")
CATEGORICAL = ("hierarchy", "order")
# Entries of the manifest's recoding that count what the search did on the input, beyond what the
# published table shows: kept in the private file (veil.manifests).
PRIVATE_RECODING = ("rounds", "partitions_found", "collapsed", "seconds")

# How a quasi-identifier is split and published.
_RANGE = "range"          # split on values, published as [min-max]
_SET = "set"              # split on text order, published as the set of values held
# Value-set widths are counted exactly while partitions × values stay below this many cells.
_SET_WIDTH_CELLS = 1 << 24
_HIERARCHY = "hierarchy"  # split along the hierarchy, published as the lowest common ancestor

VIRTUAL_ROOT = "*"
# Value sets of columns with up to this many values are compared as bit masks.
_MASK_VALUES = 62


@dataclass(eq=False)
class _Dimension:
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
        return self.column.cardinality

    def lca(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Level and node of the lowest common ancestor of the leaves ranked ``low`` and ``high``."""
        same = self.ancestors[:, low] == self.ancestors[:, high]
        level = np.argmax(same, axis=0)
        return level, self.ancestors[level, low]

    def width(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Normalized range of partitions whose smallest and largest ranks are ``low``, ``high``
        (and, along a hierarchy, the level of each one's node)."""
        if self.kind != _HIERARCHY:
            return self.position[high] - self.position[low], None
        level, node = self.lca(low, high)
        size = self.node_size[self.node_offset[level] + node]
        return (size - 1) / max(self.cardinality - 1, 1), level


def _forced(choice) -> bool:
    """Whether a numeric column was explicitly asked to be split along its hierarchy."""
    return isinstance(choice, _Forced)


class _Forced(str):
    """A per-column choice (from a mapping), which overrides the default for numeric columns."""


def _dimension(dataset: Dataset, name: str, choice: str) -> _Dimension:
    col = dataset.column(name)
    card = col.cardinality
    identity = np.arange(card, dtype=np.int32)
    gen = dataset.generalizations.get(name)
    use_hierarchy = choice == _HIERARCHY and gen is not None and (not col.is_numeric or _forced(choice))
    if not use_hierarchy:
        kind = _RANGE if col.ordered else _SET
        return _Dimension(name, kind, col, identity, position=_positions(col))
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
    return _Dimension(name, _HIERARCHY, col, rank, ancestors=ancestors, node_offset=node_offset,
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


class _Parts:
    """Candidate parts as the privacy models see classes: their sizes and count matrices."""

    def __init__(self, sizes: np.ndarray, sensitive: dict[str, SensitiveCounts]):
        self.sizes = sizes
        self.sensitive = sensitive

    @property
    def n_classes(self) -> int:
        return len(self.sizes)


def _min_part_size(models: Sequence[PrivacyModel]) -> int:
    """A size every part must reach under ``models`` (k, or ℓ distinct values), to skip
    partitions too small to split."""
    need = 1
    for model in models:
        t = model.threshold
        if model.key == "k" or (model.key == "l_distinct" and t is not None):
            need = max(need, math.ceil(t - TOLERANCE * max(abs(t), 1.0)))
        k = getattr(model, "k", None)
        if model.key == "alpha" and k is not None:
            need = max(need, int(k))
    return need


class Mondrian(Anonymizer):
    """Mondrian multidimensional partitioning (see the module notes).

    Args:
        models: the privacy models every partition must satisfy (each with a threshold).
        mode: ``"strict"`` (partitions never overlap) or ``"relaxed"`` (records equal to the
            median go to either side, to balance the halves).
        suppression_limit: kept for configuration compatibility, in [0, 1): Mondrian
            suppresses nothing (the whole table is the first partition).
        metric: the utility metric recorded with the release (Mondrian does not search).
        categorical: ``"hierarchy"`` or ``"order"``, or a mapping from columns to either.
        allow_single_class: when the whole table fails a model (no partition can then satisfy
            it), publish the table as one class, every quasi-identifier at its widest cell, instead
            of raising; the release's manifest then shows that model as failed and
            :attr:`satisfied_` is ``False``.

    Attributes (after :meth:`fit`):
        partition_: the class of every record.
        n_partitions_: number of classes released.
        partitions_found_: number of partitions the splitting made (more than classes when
            partitions that print identically were merged).
        collapsed_: classes collapsed into an earlier partition (see the module notes; only
            when partitions that print identically make a class that fails a model).
        kinds_: per quasi-identifier, how it was split: ``"range"``, ``"set"`` or ``"hierarchy"``.
        classes_: the :class:`EquivalenceClasses` of the release.
        rounds_: rounds of splitting.
        satisfied_: whether every class satisfies every model.
        seconds_: time :meth:`fit` took.

    Raises:
        ParameterError: no model, a model without threshold, an unknown mode or ``categorical``
            choice, or a suppression limit outside [0, 1).
    """

    algorithm = "mondrian"

    def __init__(self, models: Sequence[PrivacyModel], *, mode: str = "strict", suppression_limit: float = 0.0,
                 metric="loss", categorical: str | Mapping[str, str] = "hierarchy",
                 allow_single_class: bool = False):
        if not models:
            raise ParameterError("give at least one privacy model to anonymize with.")
        for model in models:
            if model.threshold is None:
                raise ParameterError(f"{model.name} needs a threshold to anonymize with.")
        if mode not in MODES:
            raise ParameterError(f"unknown Mondrian mode {mode!r}; use 'strict' or 'relaxed'.")
        if not 0 <= suppression_limit < 1:
            raise ParameterError(f"the suppression limit is a share of records in [0, 1), not {suppression_limit}.")
        choices = categorical.values() if isinstance(categorical, Mapping) else [categorical]
        for choice in choices:
            if choice not in CATEGORICAL:
                raise ParameterError(f"categorical columns are split along their 'hierarchy' or on their "
                                     f"'order', not {choice!r}.")
        self.models = list(models)
        self.mode = mode
        self.suppression_limit = float(suppression_limit)
        self.metric = metric
        self.categorical = dict(categorical) if isinstance(categorical, Mapping) else categorical
        self.allow_single_class = bool(allow_single_class)

    def __repr__(self) -> str:
        return (f"Mondrian(models={self.models}, mode={self.mode!r}, categorical={self.categorical!r}, "
                f"allow_single_class={self.allow_single_class})")

    def _metric(self):
        from veil.metrics import make_metric

        return make_metric(self.metric) if isinstance(self.metric, str) else self.metric

    # ---------------------------------------------------------------------------------------

    def _dimensions(self, dataset: Dataset) -> list[_Dimension]:
        qis = dataset.quasi_identifiers
        if isinstance(self.categorical, dict):
            for name in self.categorical:
                if name not in qis:
                    raise ColumnError(f"categorical names column '{name}', which is not a quasi-identifier; "
                                      f"the quasi-identifiers are {', '.join(qis)}.")
        dims = []
        for name in qis:
            if isinstance(self.categorical, dict):
                choice = _Forced(self.categorical[name]) if name in self.categorical else _HIERARCHY
            else:
                choice = self.categorical
            if _forced(choice) and choice == _HIERARCHY and name not in dataset.generalizations:
                raise ParameterError(f"column '{name}' has no hierarchy to split along; give one, or split it "
                                     "on its 'order'.")
            dims.append(_dimension(dataset, name, choice))
        return dims

    def fit(self, dataset: Dataset, progress: Callable[[int, int], None] | None = None) -> "Mondrian":
        """Partition ``dataset``.

        Args:
            dataset: the table (quasi-identifiers need no hierarchy).
            progress: called as ``progress(records_in_final_partitions, records)`` each round.

        Raises:
            ParameterError: k exceeds the number of records, a model does not apply to the
                sensitive columns, or ``categorical`` asks for a hierarchy a column lacks.
            ColumnError: ``categorical`` names a column that is not a quasi-identifier.
            InfeasibleError: the whole table fails a model (naming it) and
                ``allow_single_class`` is off.
        """
        started = time.perf_counter()
        n = dataset.num_rows
        weights = dataset.row_weights
        if weights is not None and self.mode != "strict":
            raise ParameterError("relaxed Mondrian may send records with equal values to different sides, which a "
                                 "table summarized by its distinct rows (the Spark engine's) cannot; use mode "
                                 "'strict'.")
        for model in self.models:
            k = model.threshold if model.key == "k" else getattr(model, "k", None)
            if k is not None and k > n:
                raise ParameterError(f"k = {k:g} is larger than the table's {n} records.")
        dims = self._dimensions(dataset)
        # A table summarized by its distinct rows holds fewer rows than records.
        n_rows = len(dataset.column(dataset.quasi_identifiers[0]).codes)

        # The sensitive columns the models read, and the whole table as one class.
        whole = _Parts(np.array([n], dtype=np.int64), {})
        sensitive = {}
        if any(m.needs_sensitive for m in self.models):
            for name in dataset.sensitive:
                col = dataset.column(name)
                sensitive[name] = SensitiveCounts(col, col.counts()[None, :], col.counts(),
                                                  dataset.generalizations.get(name))
            whole.sensitive = sensitive
            wanted = set()
            for model in self.models:
                if model.needs_sensitive:
                    wanted.update(model.targets(whole))
            sensitive = {name: sc for name, sc in sensitive.items() if name in wanted}
            whole.sensitive = sensitive
        self.satisfied_ = True
        for model in self.models:
            result = model.evaluate(whole)
            if not result.passed:
                if not self.allow_single_class:
                    raise InfeasibleError(
                        f"no partition satisfies {model.name} at {model.threshold:g}: even the whole table as one "
                        f"class only reaches {result.level:.4g}; relax that threshold (or set allow_single_class "
                        "to publish the table as one class anyway).")
                self.satisfied_ = False

        tracked = [(name, sc.column, dataset.column(name).codes) for name, sc in sensitive.items()]
        if self.satisfied_ and weights is not None:
            # Ranks of the distinct rows, rows × dimensions: the summary is small beside the records.
            ranks = np.stack([dim.rank[dim.column.codes] for dim in dims])
            splitter = _WeightedSplitter(ranks, weights, dims, tracked, sensitive, self.models,
                                         _min_part_size(self.models))
            # The engine that holds the records runs the rounds (locally, or level-synchronously
            # on Spark with the same decisions, see veil.engines.spark_mondrian).
            partition, rounds, node, parent = dataset.partition_strict(splitter, progress)
        elif self.satisfied_:
            partition, rounds, node, parent = _partition(n, dims, tracked, sensitive, self.models, self.mode,
                                                         _min_part_size(self.models), progress)
        else:
            partition, rounds = np.zeros(n_rows, dtype=np.int64), 0
            node, parent = np.zeros(1, dtype=np.int64), np.array([-1], dtype=np.int64)
            if progress:
                progress(n, n)
        self.rounds_ = rounds
        self.partitions_found_ = int(partition.max()) + 1
        self.collapsed_ = 0
        while True:
            classes, keys, boxes, class_of_part = _publish(dataset, dims, partition)
            failing = np.zeros(classes.n_classes, dtype=bool)
            if self.satisfied_:
                for model in self.models:
                    failing |= ~model.evaluate(classes).class_passed
            if not failing.any():
                break
            # Partitions that print identically are one class, which a model that is not
            # monotonic (δ-disclosure) may refuse: collapse it into its lowest common ancestor
            # in the split tree, a partition every model accepted.
            partition, node, collapsed = _collapse(partition, node, parent, class_of_part, failing)
            self.collapsed_ += collapsed
        self.dataset_ = dataset
        self.partition_ = classes.row_class
        self.classes_ = classes
        self.n_partitions_ = classes.n_classes
        self.kinds_ = {dim.name: dim.kind for dim in dims}
        self._boxes = (boxes, keys)
        self.seconds_ = time.perf_counter() - started
        return self

    def transform(self, dataset: Dataset, *, suppressed: str = "remove", shuffle: bool = True,
                  rng: np.random.Generator | int | None = None):
        """The release of the partitioning found by :meth:`fit`, rows shuffled unless told otherwise.

        Args:
            dataset: the dataset :meth:`fit` partitioned.
            suppressed: ``"remove"`` or ``"star"`` (Mondrian suppresses no record).
            shuffle: publish the rows in random order (the default), so that releases of one table
                cannot be joined by position; ``False`` keeps the input order, which the manifest
                and the ledger's gate flag as linkable by position.
            rng: ``None`` (default) shuffles with the secure source; a seed or generator makes a
                reproducible shuffle, not fit for release.

        Raises:
            ParameterError: :meth:`fit` was not called, was called on another dataset, or
                an unknown ``suppressed`` style.
        """
        from veil.anonymize.release import Release

        if not hasattr(self, "classes_"):
            raise ParameterError("call fit before transform.")
        if dataset is not self.dataset_:
            raise ParameterError("Mondrian's partitions belong to the dataset it was fitted on; call fit on this "
                                 "one first (or fit_transform).")
        classes = self.classes_
        nothing = np.zeros(classes.n_classes, dtype=bool)
        return Release(dataset, classes, nothing, algorithm=self.algorithm, models=self.models,
                       suppression_limit=self.suppression_limit, metric=self._metric(), search=None,
                       suppressed=suppressed, shuffle=shuffle, rng=rng, recoding=self.recoding,
                       private_recoding=PRIVATE_RECODING)

    def recoding(self) -> dict:
        """The manifest entry: the settings, and each released class's size and box.

        A box gives, per quasi-identifier, what the class's cell covers: ``{"min", "max"}`` (and
        ``"missing": true`` when it holds the missing value) for a range, ``{"node", "level"}``
        for a hierarchy node (level counted from the leaves; a virtual root is one above the
        hierarchy's top), ``{"values": [...]}`` for a set.
        """
        boxes, keys = self._boxes
        names = list(self.kinds_)
        columns = [[boxes[j][c] for c in keys[:, j]] for j in range(len(names))]
        sizes = self.classes_.sizes.tolist()
        partitions = [{"size": size, "box": dict(zip(names, cells))} for size, cells in zip(sizes, zip(*columns))]
        return {"mode": self.mode, "split": dict(self.kinds_), "rounds": self.rounds_,
                "partitions_found": self.partitions_found_, "collapsed": self.collapsed_,
                "satisfied": self.satisfied_, "seconds": round(self.seconds_, 4), "partitions": partitions}


def _publish(dataset: Dataset, dims: list[_Dimension], partition: np.ndarray):
    """The cells of every partition and the classes they make: partitions whose cells print the
    same text on every quasi-identifier are one class (identical cells, or distinct cells with
    one label, such as two hierarchy nodes named alike). Returns ``(classes, keys, boxes,
    class_of_partition)``; ``keys[c, j]`` indexes ``boxes[j]``."""
    n_parts = int(partition.max()) + 1
    order = np.argsort(partition, kind="stable")
    sizes = np.bincount(partition, minlength=n_parts)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    cells, part_keys, boxes = [], [], []
    for j, dim in enumerate(dims):
        values = dim.rank[dim.column.codes[order]]
        low = np.minimum.reduceat(values, starts).astype(np.int64)
        high = np.maximum.reduceat(values, starts).astype(np.int64)
        if dim.kind == _HIERARCHY:
            c, key, box = _hierarchy_cells(dim, low, high)
        elif dim.kind == _RANGE:
            c, key, box = _range_cells(dim, values, starts, low, high)
        else:
            c, key, box = _set_cells(dim, partition, n_parts)
        cells.append(c)
        part_keys.append(key)
        boxes.append(box)
    class_of_part, keys = group_rows(part_keys, [c.n_cells for c in cells])
    classes = EquivalenceClasses.from_partition(dataset, class_of_part[partition], keys, cells)
    merged, class_of = classes.merge_identical()
    if merged is classes:
        return classes, keys, boxes, class_of_part
    for j in range(len(dims)):
        if merged.cells(j) is not classes.cells(j):
            boxes[j] = _merged_boxes(boxes[j], keys[:, j], class_of, merged.n_classes)
    return merged, merged.keys, boxes, class_of[class_of_part]


def _merged_boxes(boxes: list, cell: np.ndarray, class_of: np.ndarray, n_classes: int) -> list:
    """One box per merged class: its members' box when they share one, else ``{"any_of": [...]}``
    listing the distinct boxes of its members (cells that print alike but cover other values)."""
    pairs = np.unique(class_of.astype(np.int64) * len(boxes) + cell)
    owner, members = np.divmod(pairs, len(boxes))
    starts = np.searchsorted(owner, np.arange(n_classes + 1))
    out = []
    for c in range(n_classes):
        held = [boxes[m] for m in members[starts[c]:starts[c + 1]].tolist()]
        out.append(held[0] if len(held) == 1 else {"any_of": held})
    return out


def _collapse(partition: np.ndarray, node: np.ndarray, parent: np.ndarray, class_of_part: np.ndarray,
              failing: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Replace, for each failing class, every partition below the lowest common ancestor (in
    the split tree) of its partitions by that ancestor. Returns the new partition of every row,
    the node of every new partition, and the number of classes collapsed."""
    # ancestors[p, i]: the i-th ancestor of partition p's node (itself first), -1 above the root.
    chain = [node]
    while (chain[-1] >= 0).any():
        up = chain[-1]
        chain.append(np.where(up >= 0, parent[np.maximum(up, 0)], -1))
    ancestors = np.stack(chain, axis=1)
    depth = (ancestors >= 0).sum(axis=1)
    tops = []
    for c in np.flatnonzero(failing):
        parts = np.flatnonzero(class_of_part == c)
        # Chains end at the root; align them from the root down and keep the common prefix.
        paths = [ancestors[p, :depth[p]][::-1] for p in parts]
        common = min(len(path) for path in paths)
        shared = np.all([path[:common] == paths[0][:common] for path in paths], axis=0)
        last = common if shared.all() else int(np.argmin(shared))
        tops.append(int(paths[0][last - 1]))
    new_of_part = np.arange(len(node))
    new_node = node.copy()
    taken = np.zeros(len(node), dtype=bool)
    for top in sorted(set(tops), key=lambda t: _node_depth(parent, t)):
        under = (ancestors == top).any(axis=1) & ~taken
        if not under.any():
            continue
        first = int(np.flatnonzero(under)[0])
        new_of_part[under] = first
        new_node[first] = top
        taken |= under
    kept, relabel = np.unique(new_of_part, return_inverse=True)
    return relabel[partition], new_node[kept], len(tops)


def _node_depth(parent: np.ndarray, node: int) -> int:
    depth = 0
    while parent[node] >= 0:
        node = int(parent[node])
        depth += 1
    return depth


# --------------------------------------------------------------------------------------------
# The partitioning


def _partition(n: int, dims: list[_Dimension], tracked, sensitive: dict[str, SensitiveCounts],
               models: Sequence[PrivacyModel], mode: str, min_part: int,
               progress: Callable[[int, int], None] | None):
    """See :meth:`_Splitter.run`."""
    return _Splitter(n, dims, tracked, sensitive, models, mode, min_part).run(progress)


def _narrow(limit: int) -> np.dtype:
    """The narrowest unsigned type holding ``0 .. limit - 1`` (at most 32 bits)."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if limit <= np.iinfo(dtype).max + 1:
            return np.dtype(dtype)
    raise ParameterError(f"a column has {limit} distinct values; Mondrian handles at most 2**32.")


class _Records:
    """The records of the active partitions, one fixed-size block of bytes each.

    A record holds the row's index (``int32``), the rank of every quasi-identifier (the narrowest
    unsigned type that holds them all) and the code of every sensitive column the models read
    (likewise), padded to 8 or 16 bytes or a multiple of 8: NumPy moves records of those sizes as
    single words, so reordering the records costs about as much as reordering integers.
    """

    def __init__(self, n: int, d: int, s: int, rank_limit: int, code_limit: int):
        self.rank_type = _narrow(rank_limit)
        self.code_type = _narrow(code_limit)
        rb, cb = self.rank_type.itemsize, self.code_type.itemsize
        self.rank_at = 4 // rb                        # first rank, in units of rank_type
        code_start = -(-(4 + d * rb) // cb) * cb      # aligned byte offset of the first code
        self.code_at = code_start // cb
        size = code_start + s * cb
        self.size = 8 if size <= 8 else 16 if size <= 16 else -(-size // 8) * 8
        self.record = np.dtype((np.void, self.size))

    def empty(self, n: int) -> np.ndarray:
        return np.zeros((n, self.size), dtype=np.uint8)

    def rows(self, data: np.ndarray) -> np.ndarray:
        return data.view(np.int32)[:, 0]

    def ranks(self, data: np.ndarray) -> np.ndarray:
        """``[records × quasi-identifiers]`` view of the ranks."""
        return data.view(self.rank_type)[:, self.rank_at:]

    def rank_flat(self, data: np.ndarray, pos: np.ndarray | None, dim: np.ndarray) -> np.ndarray:
        """The rank of record ``pos[i]`` (or ``i``) on dimension ``dim[i]``."""
        stride = self.size // self.rank_type.itemsize
        base = np.arange(0, len(data) * stride, stride) if pos is None else pos * stride
        return data.view(self.rank_type).reshape(-1)[base + (self.rank_at + dim)]

    def codes(self, data: np.ndarray, i: int) -> np.ndarray:
        return data.view(self.code_type)[:, self.code_at + i]

    def take(self, data: np.ndarray, pos: np.ndarray) -> np.ndarray:
        return data.view(self.record).reshape(-1)[pos].view(np.uint8).reshape(-1, self.size)


class _Splitter:
    """The level-synchronous partitioning of one table.

    The records of the active partitions are held in ``data`` (see :class:`_Records`), each
    partition a contiguous run whose length is in ``sizes``. Splitting reorders records only
    within runs, so the data moves with the records and is read almost sequentially, never
    gathered at random from the table.

    A round ranks the dimensions of every active partition, tries to split each on its widest
    dimension, then on the next widest for those refused, and so on; the parts of accepted
    splits are the next round's active partitions, the rest are final.
    """

    def __init__(self, n, dims, tracked, sensitive, models, mode, min_part):
        self.dims = dims
        self.d, self.n = len(dims), n
        self.models = models
        self.mode = mode
        self.min_part = min_part
        self.sensitive = sensitive
        self.tracked = [(name, column) for name, column, _ in tracked]
        self.span = max((dim.cardinality for dim in dims), default=1)
        self.along = np.array([dim.kind == _HIERARCHY for dim in dims])
        # Ancestors of every hierarchy dimension in one flat table: [dim offset + level·card + rank].
        self.anc_offset = np.zeros(self.d, dtype=np.int64)
        flat, at = [], 0
        for j, dim in enumerate(dims):
            if dim.kind == _HIERARCHY:
                self.anc_offset[j] = at
                flat.append(dim.ancestors.ravel())
                at += dim.ancestors.size
        self.ancestors = np.concatenate(flat).astype(np.int64) if flat else np.zeros(0, dtype=np.int64)
        self.cards = np.array([dim.cardinality for dim in dims], dtype=np.int64)
        code_limit = max((column.cardinality for _, column in self.tracked), default=1)
        self.layout = _Records(self.n, self.d, len(tracked), self.span, code_limit)
        data = self.layout.empty(self.n)
        self.layout.rows(data)[:] = np.arange(self.n, dtype=np.int32)
        # Each record's rank on each dimension, a dimension at a time (no rows × dimensions copy).
        for j, dim in enumerate(dims):
            self.layout.ranks(data)[:, j] = dim.rank[dim.column.codes]
        for i, (_, _, codes) in enumerate(tracked):
            self.layout.codes(data, i)[:] = codes
        self.data = data

    def run(self, progress) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
        """Returns ``(partition, rounds, node, parent)``: the partition of every row, the
        number of rounds, the split-tree node of every partition, and the parent of every node
        (-1 for the root, the whole table)."""
        d, n, layout = self.d, self.n, self.layout
        partition = np.empty(n, dtype=np.int64)
        n_final = done = rounds = 0
        data = self.data
        sizes = np.array([n], dtype=np.int64)
        # The split tree: the node of each active partition, the parent of every node so far.
        node = np.zeros(1, dtype=np.int64)
        parents = [np.array([-1], dtype=np.int64)]
        n_nodes = 1
        final_nodes = []
        while len(sizes):
            rounds += 1
            n_seg = len(sizes)
            starts = np.zeros(n_seg, dtype=np.int64)
            np.cumsum(sizes[:-1], out=starts[1:])
            high = np.empty((n_seg, d), dtype=np.int64)
            width = np.empty((n_seg, d))
            level = np.zeros((n_seg, d), dtype=np.int64)
            cuttable = np.empty((n_seg, d), dtype=bool)
            ranks = layout.ranks(data)
            seg_of_pos = np.repeat(np.arange(n_seg), sizes)
            for j, dim in enumerate(self.dims):
                low = np.minimum.reduceat(ranks[:, j], starts).astype(np.int64)
                high[:, j] = np.maximum.reduceat(ranks[:, j], starts)
                cuttable[:, j] = high[:, j] > low
                if dim.kind == _SET and n_seg * dim.cardinality <= _SET_WIDTH_CELLS:
                    # A value set is published as the values it holds, so its width is how many
                    # there are, (held − 1)/(values − 1), not the span of their text order.
                    held = np.bincount(seg_of_pos * dim.cardinality + ranks[:, j],
                                       minlength=n_seg * dim.cardinality).reshape(n_seg, dim.cardinality)
                    width[:, j] = (np.count_nonzero(held, axis=1) - 1) / max(dim.cardinality - 1, 1)
                    continue
                width[:, j], lv = dim.width(low, high[:, j])
                if lv is not None:
                    level[:, j] = lv
            n_cut = np.where(sizes >= 2 * self.min_part, cuttable.sum(axis=1), 0)
            ranked = np.argsort(np.where(cuttable, -width, np.inf), axis=1, kind="stable")

            accepted = np.zeros(n_seg, dtype=bool)
            blocks, block_sizes, block_parents = [], [], []
            for t in range(d):
                cand = np.flatnonzero(~accepted & (n_cut > t))
                if not len(cand):
                    break
                ok, block, part_sizes, part_seg = self._try(data, cand, ranked[cand, t], seg_of_pos, sizes, high,
                                                            level)
                accepted[cand[ok]] = True
                blocks.append(block)
                block_sizes.append(part_sizes)
                block_parents.append(node[cand[part_seg]])

            final = ~accepted
            if final.any():
                at_final = final[seg_of_pos]
                local = np.cumsum(final) - 1
                partition[layout.rows(data)[at_final]] = n_final + local[seg_of_pos[at_final]]
                n_final += int(final.sum())
                done += int(sizes[final].sum())
                final_nodes.append(node[final])
            if blocks:
                data = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
                sizes = np.concatenate(block_sizes)
                parents.append(np.concatenate(block_parents))
                node = np.arange(n_nodes, n_nodes + len(sizes), dtype=np.int64)
                n_nodes += len(sizes)
            else:
                sizes = np.zeros(0, dtype=np.int64)
            if progress:
                progress(done, n)
        return partition, rounds, np.concatenate(final_nodes), np.concatenate(parents)

    def _try(self, data, cand, dim_of, seg_of_pos, sizes, high, level):
        """Split the active partitions ``cand`` on the dimensions ``dim_of``.

        Returns:
            ``(ok, block, part_sizes, part_seg)``: whether each candidate's split is allowed, and
            the records of the allowed ones, ordered by part, with the size and the candidate
            (an index into ``cand``) of each part.
        """
        span, layout = self.span, self.layout
        n_seg = len(sizes)
        if len(cand) == n_seg:
            pos = None
            lseg = seg_of_pos
        else:
            local = np.full(n_seg, -1, dtype=np.int64)
            local[cand] = np.arange(len(cand))
            lseg = local[seg_of_pos]
            pos = np.flatnonzero(lseg >= 0)
            lseg = lseg[pos]
        key = lseg * span + layout.rank_flat(data, pos, dim_of[lseg])
        # Partitions are runs already, so a stable sort only sorts within the runs (and leaves
        # lseg, the candidate of each record, as it is).
        perm = np.argsort(key, kind="stable")
        key = key[perm]
        pos = perm if pos is None else pos[perm]
        c_sizes = sizes[cand]
        c_starts = np.zeros(len(cand), dtype=np.int64)
        np.cumsum(c_sizes[:-1], out=c_starts[1:])

        cut = np.zeros(len(pos), dtype=bool)
        cut[c_starts] = True
        along = self.along[dim_of]
        binary = np.flatnonzero(~along)
        if len(binary):
            first = c_starts[binary]
            if self.mode == "strict":
                # Left: values up to the median; when the median is the largest value, below it.
                median = key[first + (c_sizes[binary] - 1) // 2] - binary * span
                top = high[cand[binary], dim_of[binary]]
                threshold = np.where(median < top, median, median - 1)
                left = np.searchsorted(key, binary * span + threshold, side="right") - first
            else:
                # Halves of equal size: records equal to the median fall on either side.
                left = c_sizes[binary] // 2
            cut[first + left] = True
        if along.any():
            # Multi-way split along the hierarchy: a part per child of the partition's node. The
            # child of a record is ancestors[base + rank], rank = key − candidate·span.
            c = np.arange(len(cand))
            base = (self.anc_offset[dim_of] + (level[cand, dim_of] - 1) * self.cards[dim_of]) - c * span
            if along.all():
                child = self.ancestors[base[lseg] + key]
                cut[1:] |= child[1:] != child[:-1]
            else:
                at = np.flatnonzero(along[lseg])
                child = self.ancestors[base[lseg[at]] + key[at]]
                cut[at[1:]] |= child[1:] != child[:-1]

        part_start = np.flatnonzero(cut)
        n_parts = len(part_start)
        part_sizes = np.diff(np.append(part_start, len(pos)))
        counts = {}
        if self.tracked:
            part_of_row = np.cumsum(cut) - 1
            for i, (name, column) in enumerate(self.tracked):
                m = column.cardinality
                codes = layout.codes(data, i)[pos]
                matrix = np.bincount(part_of_row * m + codes, minlength=n_parts * m)
                sc = self.sensitive[name]
                counts[name] = SensitiveCounts(column, matrix.reshape(n_parts, m), sc.reference, sc.generalization)
        parts = _Parts(part_sizes, counts)
        passed = np.ones(n_parts, dtype=bool)
        for model in self.models:
            passed &= model.evaluate(parts).class_passed
        ok = np.logical_and.reduceat(passed, np.searchsorted(part_start, c_starts))
        part_seg = np.searchsorted(c_starts, part_start, side="right") - 1
        if ok.all():
            return ok, layout.take(data, pos), part_sizes, part_seg
        kept = ok[part_seg]
        return ok, layout.take(data, pos[ok[lseg]]), part_sizes[kept], part_seg[kept]


class _WeightedSplitter:
    """The strict partitioning of a table summarized by its distinct rows, each standing for
    ``weights[i]`` records (what the Spark engine collects).

    It makes the splits :class:`_Splitter` makes on the records themselves: in strict mode the
    records of one distinct row always fall on one side of a cut, so a partition is a set of
    distinct rows, its size the sum of their weights, and its median the value of the record at
    position ``(size − 1) // 2`` in value order, found from the cumulative weights. Rounds,
    candidate order, the order of the parts and the numbering of nodes and final partitions
    follow :meth:`_Splitter.run`, so both give the same partitions.
    """

    def __init__(self, ranks, weights, dims, tracked, sensitive, models, min_part):
        self.ranks = np.asarray(ranks, dtype=np.int64)
        self.weights = np.asarray(weights, dtype=np.int64)
        self.dims = dims
        self.d = len(dims)
        self.sensitive = sensitive
        self.tracked = [(name, column, np.asarray(codes, dtype=np.int64)) for name, column, codes in tracked]
        self.models = models
        self.min_part = min_part

    def run(self, progress) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
        """See :meth:`_Splitter.run` (the partition is per distinct row)."""
        t, d = self.ranks.shape[1], self.d
        total = int(self.weights.sum())
        partition = np.empty(t, dtype=np.int64)
        rows = np.arange(t, dtype=np.int64)
        lengths = np.array([t], dtype=np.int64)
        sizes = np.array([total], dtype=np.int64)
        node = np.zeros(1, dtype=np.int64)
        parents = [np.array([-1], dtype=np.int64)]
        n_nodes, n_final, done, rounds = 1, 0, 0, 0
        final_nodes = []
        while len(lengths):
            rounds += 1
            n_seg = len(lengths)
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
            seg_of_pos = np.repeat(np.arange(n_seg), lengths)
            low = np.empty((n_seg, d), dtype=np.int64)
            high = np.empty((n_seg, d), dtype=np.int64)
            held = {}
            counted = self.held_dimensions(n_seg)
            for j, dim in enumerate(self.dims):
                values = self.ranks[j][rows]
                low[:, j] = np.minimum.reduceat(values, starts)
                high[:, j] = np.maximum.reduceat(values, starts)
                if j in counted:
                    mask = np.zeros(n_seg * dim.cardinality, dtype=bool)
                    mask[seg_of_pos * dim.cardinality + values] = True
                    held[j] = np.count_nonzero(mask.reshape(n_seg, dim.cardinality), axis=1)
            ranked, n_cut, level = self.order_dimensions(low, high, held, sizes)
            accepted, blocks, block_lengths, block_sizes, owners = self.split(rows, starts, lengths, ranked, n_cut,
                                                                              high, level)
            final = ~accepted
            if final.any():
                at_final = final[seg_of_pos]
                local = np.cumsum(final) - 1
                partition[rows[at_final]] = n_final + local[seg_of_pos[at_final]]
                n_final += int(final.sum())
                done += int(sizes[final].sum())
                final_nodes.append(node[final])
            if blocks:
                rows = np.concatenate(blocks)
                lengths = np.concatenate(block_lengths)
                sizes = np.concatenate(block_sizes)
                parents.append(node[np.concatenate(owners)])
                node = np.arange(n_nodes, n_nodes + len(lengths), dtype=np.int64)
                n_nodes += len(lengths)
            else:
                lengths = np.zeros(0, dtype=np.int64)
            if progress:
                progress(done, total)
        return partition, rounds, np.concatenate(final_nodes), np.concatenate(parents)

    def held_dimensions(self, n_partitions: int) -> list[int]:
        """The value-set dimensions whose values held are counted exactly with this many active
        partitions (see ``_SET_WIDTH_CELLS``)."""
        return [j for j, dim in enumerate(self.dims)
                if dim.kind == _SET and n_partitions * dim.cardinality <= _SET_WIDTH_CELLS]

    def on_histograms(self, dim: np.ndarray, rank: np.ndarray, weight: np.ndarray,
                      codes: Sequence[np.ndarray]) -> "_WeightedSplitter":
        """A splitter of the same dimensions and models whose rows are value-histogram entries
        (its ranks on other dimensions than an entry's own are never read): :meth:`split` with
        ``runs`` decides a round from them as from the distinct rows, since a cut reads the values
        of one dimension only.

        Args:
            dim: the dimension of each entry.
            rank: the value (rank) of each entry on its dimension.
            weight: the records each entry stands for.
            codes: per tracked sensitive column, the code of each entry.
        """
        ranks = np.zeros((self.d, len(rank)), dtype=np.int64)
        ranks[dim, np.arange(len(rank))] = rank
        tracked = [(name, column, code) for (name, column, _), code in zip(self.tracked, codes)]
        return _WeightedSplitter(ranks, weight, self.dims, tracked, self.sensitive, self.models, self.min_part)

    def order_dimensions(self, low: np.ndarray, high: np.ndarray, held: Mapping[int, np.ndarray],
                         sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The dimensions each active partition tries, widest first (see the module notes).

        Args:
            low: ``[partitions × dimensions]``, the smallest rank each partition holds.
            high: ``[partitions × dimensions]``, the largest rank each partition holds.
            held: per value-set dimension (by index), the number of values each partition holds,
                when counted exactly (else its width is the span of its text order).
            sizes: records per partition.

        Returns:
            ``(ranked, n_cut, level)``: the dimensions in the order tried, how many each partition
            may try, and the level of each partition's node along hierarchy dimensions.
        """
        n_seg, d = low.shape
        width = np.empty((n_seg, d))
        level = np.zeros((n_seg, d), dtype=np.int64)
        cuttable = high > low
        for j, dim in enumerate(self.dims):
            if j in held:
                width[:, j] = (held[j] - 1) / max(dim.cardinality - 1, 1)
                continue
            width[:, j], lv = dim.width(low[:, j], high[:, j])
            if lv is not None:
                level[:, j] = lv
        n_cut = np.where(sizes >= 2 * self.min_part, cuttable.sum(axis=1), 0)
        ranked = np.argsort(np.where(cuttable, -width, np.inf), axis=1, kind="stable")
        return ranked, n_cut, level

    def split(self, rows, starts, lengths, ranked, n_cut, high, level, runs: np.ndarray | None = None):
        """One round's splits: each partition tries its widest dimension, those refused their
        next widest, and so on.

        Args:
            rows: the rows of the active partitions, run after run: partition ``p`` holds
                ``rows[starts[p]:starts[p] + lengths[p]]``; or, with ``runs``, partition ``p`` cut
                on dimension ``j`` reads run ``runs[p, j]`` (rows that stand for the partition's
                records as seen on one dimension: a value histogram).
            starts: where each run begins in ``rows``.
            lengths: the rows of each run.
            ranked: the dimensions each partition tries, in order (:meth:`order_dimensions`).
            n_cut: how many dimensions each partition may try.
            high: ``[partitions × dimensions]``, the largest rank each partition holds.
            level: the level of each partition's node along hierarchy dimensions.
            runs: ``[partitions × dimensions]`` run indices, or ``None`` (a run per partition).

        Returns:
            ``(accepted, blocks, block_lengths, block_sizes, owners)``: whether each partition
            splits, and per step the rows of its allowed splits ordered by part, the rows and the
            records of each part, and the partition each part comes from.
        """
        n_seg, d = ranked.shape
        accepted = np.zeros(n_seg, dtype=bool)
        blocks, block_lengths, block_sizes, owners = [], [], [], []
        for step in range(d):
            cand = np.flatnonzero(~accepted & (n_cut > step))
            if not len(cand):
                break
            dim_of = ranked[cand, step]
            ok, block, part_lengths, part_sizes, part_seg = self._try(
                rows, starts, lengths, cand, dim_of, high, level, None if runs is None else runs[cand, dim_of])
            accepted[cand[ok]] = True
            blocks.append(block)
            block_lengths.append(part_lengths)
            block_sizes.append(part_sizes)
            owners.append(cand[part_seg])
        return accepted, blocks, block_lengths, block_sizes, owners

    def _try(self, rows, starts, lengths, cand, dim_of, high, level, runs=None):
        """Split the partitions ``cand`` on the dimensions ``dim_of`` (strict cuts at the weighted
        median, or a part per child of a hierarchy node), reading each one's rows from run
        ``runs[i]`` (default: its own). Returns ``(ok, rows of the allowed splits ordered by part,
        distinct rows per part, records per part, candidate of each part)``."""
        runs = cand if runs is None else runs
        c_lengths = lengths[runs]
        pos = np.repeat(starts[runs], c_lengths) + _offsets(c_lengths)
        lseg = np.repeat(np.arange(len(cand)), c_lengths)
        members = rows[pos]
        value = self.ranks[dim_of[lseg], members]
        order = np.lexsort((value, lseg))
        members, value = members[order], value[order]
        weight = self.weights[members]
        c_starts = np.concatenate([[0], np.cumsum(c_lengths)[:-1]]).astype(np.int64)
        cut = np.zeros(len(members), dtype=bool)
        cut[c_starts] = True
        along = np.array([self.dims[j].kind == _HIERARCHY for j in dim_of], dtype=bool)
        binary = np.flatnonzero(~along)
        if len(binary):
            # The record at position (size − 1) // 2 lies in the first distinct row whose
            # cumulative weight within its partition passes that position.
            cumulative = np.cumsum(weight)
            before = np.concatenate([[0], cumulative])[c_starts]
            first, last = c_starts[binary], c_starts[binary] + c_lengths[binary]
            target = before[binary] + (np.add.reduceat(weight, c_starts)[binary] - 1) // 2
            at = np.searchsorted(cumulative, target, side="right")
            median = value[at]
            top = high[cand[binary], dim_of[binary]]
            threshold = np.where(median < top, median, median - 1)
            in_part = np.repeat(np.arange(len(binary)), last - first)
            spots = np.repeat(first, last - first) + _offsets(last - first)
            left = np.bincount(in_part, weights=value[spots] <= threshold[in_part], minlength=len(binary))
            cut[first + left.astype(np.int64)] = True
        if along.any():
            # A part per child of the partition's node: the child of a distinct row is its
            # ancestor one level below the node (candidates of one dimension are contiguous
            # runs, and every run starts a part already).
            at = np.flatnonzero(along[lseg])
            child = np.empty(len(at), dtype=np.int64)
            for j in np.unique(dim_of[along]):
                mine = dim_of[lseg[at]] == j
                rows_j = at[mine]
                child[mine] = self.dims[j].ancestors[level[cand[lseg[rows_j]], j] - 1, value[rows_j]]
            cut[at[1:]] |= child[1:] != child[:-1]
        part_start = np.flatnonzero(cut)
        n_parts = len(part_start)
        part_of = np.cumsum(cut) - 1
        part_lengths = np.diff(np.append(part_start, len(members)))
        part_sizes = np.bincount(part_of, weights=weight, minlength=n_parts).astype(np.int64)
        counts = {}
        for name, column, codes in self.tracked:
            m = column.cardinality
            matrix = np.bincount(part_of * m + codes[members], weights=weight, minlength=n_parts * m)
            sc = self.sensitive[name]
            counts[name] = SensitiveCounts(column, matrix.astype(np.int64).reshape(n_parts, m), sc.reference,
                                           sc.generalization)
        passed = np.ones(n_parts, dtype=bool)
        for model in self.models:
            passed &= model.evaluate(_Parts(part_sizes, counts)).class_passed
        ok = np.logical_and.reduceat(passed, np.searchsorted(part_start, c_starts))
        part_seg = np.searchsorted(c_starts, part_start, side="right") - 1
        kept = ok[part_seg]
        return ok, members[ok[lseg[order]]], part_lengths[kept], part_sizes[kept], part_seg[kept]


# --------------------------------------------------------------------------------------------
# Cells of the final partitions


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """``0, 1, …, lengths[0]-1, 0, 1, …, lengths[1]-1, …``: positions within runs."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def _json_value(dim: _Dimension, code: int):
    col = dim.column
    if col.is_numeric:
        value = float(col.numeric[code])
        return int(value) if value.is_integer() else value
    return str(col.labels[code])


def _range_label(labels: np.ndarray, low: int, high: int) -> str:
    return str(labels[low]) if low == high else f"[{labels[low]}-{labels[high]}]"


def _range_cells(dim: _Dimension, values: np.ndarray, starts: np.ndarray, low: np.ndarray, high: np.ndarray):
    """Ranges of codes (ranks are codes here): ``[low-high]``; with a missing category, sets."""
    col = dim.column
    labels = col.labels
    missing = col.missing_code
    if missing is None:
        card = col.cardinality
        unique, key = np.unique(low * card + high, return_inverse=True)
        ulow, uhigh = np.divmod(unique, card)
        pairs = list(zip(ulow.tolist(), uhigh.tolist()))
        texts = np.array([_range_label(labels, a, b) for a, b in pairs], dtype=object)
        boxes = [{"min": _json_value(dim, a), "max": _json_value(dim, b)} for a, b in pairs]
        return Cells.from_ranges(col, ulow, uhigh, texts), key, boxes
    # The missing category is the last code: a cell covers a range of values and maybe it.
    has_missing = high == missing
    top = np.maximum.reduceat(np.where(values == missing, -1, values), starts).astype(np.int64)
    bottom = np.where(low == missing, -1, low)
    card = col.cardinality + 1
    unique, key = np.unique(((bottom + 1) * card + (top + 1)) * 2 + has_missing, return_inverse=True)
    rest, umiss = np.divmod(unique, 2)
    ubottom, utop = np.divmod(rest, card)
    ubottom, utop, umiss = ubottom - 1, utop - 1, umiss.astype(bool)
    in_range = np.where(ubottom >= 0, utop - ubottom + 1, 0)
    indptr = np.concatenate([[0], np.cumsum(in_range + umiss)])
    indices = np.empty(int(indptr[-1]), dtype=np.int64)
    offset = _offsets(in_range)
    indices[np.repeat(indptr[:-1], in_range) + offset] = np.repeat(ubottom, in_range) + offset
    indices[indptr[1:][umiss] - 1] = missing
    texts, boxes = [], []
    for a, b, m in zip(ubottom.tolist(), utop.tolist(), umiss.tolist()):
        if a < 0:
            texts.append(MISSING_LABEL)
            boxes.append({"min": None, "max": None, "missing": True})
            continue
        text = _range_label(labels, a, b)
        texts.append(f"{text} or missing" if m else text)
        box = {"min": _json_value(dim, a), "max": _json_value(dim, b)}
        if m:
            box["missing"] = True
        boxes.append(box)
    return Cells.from_sets(col, indptr, indices, np.array(texts, dtype=object)), key, boxes


def _group_sets(code: np.ndarray, indptr: np.ndarray, cardinality: int) -> tuple[np.ndarray, np.ndarray]:
    """Group equal sets: set ``i`` is ``code[indptr[i]:indptr[i+1]]`` (sorted, no repeats).

    Returns the first set of each group and the group of every set. Sets are compared by two
    64-bit sums of random words per value and their size, and the grouping is then verified
    element by element (a hash collision falls back to comparing the sets as bytes).
    """
    n_sets = len(indptr) - 1
    lengths = np.diff(indptr)
    if cardinality <= _MASK_VALUES:
        signature = np.bitwise_or.reduceat(np.left_shift(np.int64(1), code), indptr[:-1])[:, None]
    else:
        words = np.random.default_rng(0x4D6F6E64).integers(0, 2**63, size=(cardinality, 2), dtype=np.uint64)
        sums = [np.add.reduceat(words[code, i], indptr[:-1]) for i in (0, 1)]
        signature = np.stack(sums + [lengths.astype(np.uint64)], axis=1)
    _, first, key = np.unique(signature, axis=0, return_index=True, return_inverse=True)
    key = key.reshape(-1)
    representative = first[key]
    offset = _offsets(lengths)
    if cardinality <= _MASK_VALUES or np.array_equal(code, code[np.repeat(indptr[representative], lengths) + offset]):
        return first, key
    seen: dict[bytes, int] = {}
    key = np.empty(n_sets, dtype=np.int64)
    firsts = []
    for i in range(n_sets):  # pragma: no cover - a 128-bit hash collision
        sig = code[indptr[i]:indptr[i + 1]].tobytes()
        if sig not in seen:
            seen[sig] = len(firsts)
            firsts.append(i)
        key[i] = seen[sig]
    return np.array(firsts, dtype=np.int64), key


def _set_cells(dim: _Dimension, partition: np.ndarray, n_parts: int):
    """The set of values each partition holds, ``{a,b}`` (a single value keeps its text)."""
    col = dim.column
    _, pairs = group_rows([partition, col.codes], [n_parts, col.cardinality])
    part, code = pairs[:, 0], pairs[:, 1]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(part, minlength=n_parts))])
    first, key = _group_sets(code, indptr, col.cardinality)
    # Order the cells by their smallest value, then size, for a deterministic layout.
    resort = np.lexsort([indptr[first + 1] - indptr[first], code[indptr[first]]])
    rank = np.empty_like(resort)
    rank[resort] = np.arange(len(resort))
    first, key = first[resort], rank[key]
    lengths = indptr[first + 1] - indptr[first]
    cell_indptr = np.concatenate([[0], np.cumsum(lengths)])
    gather = np.repeat(indptr[first], lengths) + _offsets(lengths)
    indices = code[gather]
    labels = col.labels
    texts, boxes = [], []
    for i in range(len(first)):
        members = [str(labels[c]) for c in indices[cell_indptr[i]:cell_indptr[i + 1]].tolist()]
        texts.append(members[0] if len(members) == 1 else "{" + ",".join(members) + "}")
        boxes.append({"values": members})
    return Cells.from_sets(col, cell_indptr, indices, np.array(texts, dtype=object)), key, boxes


def _hierarchy_cells(dim: _Dimension, low: np.ndarray, high: np.ndarray):
    """The lowest common ancestor of each partition's values."""
    level, node = dim.lca(low, high)
    flat = dim.node_offset[level] + node
    unique, key = np.unique(flat, return_inverse=True)
    indptr, members = dim.leaves
    lengths = indptr[unique + 1] - indptr[unique]
    cell_indptr = np.concatenate([[0], np.cumsum(lengths)])
    gather = np.repeat(indptr[unique], lengths) + _offsets(lengths)
    ulevel = np.searchsorted(dim.node_offset, unique, side="right") - 1
    unode = unique - dim.node_offset[ulevel]
    texts = np.array([str(dim.node_labels[lv][nd]) for lv, nd in zip(ulevel.tolist(), unode.tolist())],
                     dtype=object)
    boxes = [{"node": text, "level": lv} for text, lv in zip(texts.tolist(), ulevel.tolist())]
    # Members of a node are in code order (a stable argsort made them).
    return Cells.from_sets(dim.column, cell_indptr, members[gather], texts), key, boxes
