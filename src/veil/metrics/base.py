"""What every utility metric shares: a value, the loss a search minimizes, and a lower bound.

A utility metric scores a release from its equivalence classes and the cells each class
publishes (:mod:`veil.cells`), never from the rows, so the same object serves full-domain
generalization, local recoding and the report of a finished release. A lattice search calls
:meth:`UtilityMetric.loss` and :meth:`UtilityMetric.loss_bound` on thousands of nodes: per call,
the work is proportional to the number of classes, and whatever depends only on the dataset (or on
one hierarchy level of one column) is computed once and cached on the metric instance.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from veil.cells import Cells
from veil.classes import EquivalenceClasses
from veil.data.dataset import Dataset
from veil.errors import ParameterError


class UtilityMetric:
    """Base of the utility metrics.

    Subclasses set ``name``, ``key`` and ``higher_is_better`` and implement :meth:`value`; they
    override :meth:`loss_bound` when they can prove a bound, and set ``track`` to the columns whose
    class × value count matrices they read (a search passes them to
    ``EquivalenceClasses.from_dataset(track=...)`` so that they are rolled up with the classes
    instead of being recounted from the rows at every node).

    Attributes:
        name: the metric's name, e.g. ``"non-uniform entropy"``.
        key: the short name used in configurations and the command line, e.g. ``"entropy"``.
        higher_is_better: whether a larger :meth:`value` means a more useful release.
        track: columns whose count matrices the metric reads.
        separable: for full-domain generalization, :meth:`loss_bound` is a sum of one term per
            quasi-identifier that depends only on that quasi-identifier's level (and is 0 at
            level 0), so a search can bound every lattice node without building its classes.
        suppression_never_helps: suppressing more classes of a node never lowers its loss, so
            the loss with only the classes that must be suppressed is a lower bound on its loss.
    """

    name = "utility metric"
    key = "metric"
    higher_is_better = False
    needs_label = False
    needs_levels = False
    separable = False
    suppression_never_helps = False

    def __init__(self) -> None:
        # id(dataset) -> (weak reference to the dataset, its cache); the weak reference tells a
        # dataset that was freed (and whose id was reused) from the one the cache was made for.
        self._caches: dict[int, tuple[Callable[[], Any], dict]] = {}

    @property
    def track(self) -> tuple[str, ...]:
        return ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    # ---------------------------------------------------------------------------------------
    # the interface

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        """The metric of the release whose classes are ``classes``.

        Args:
            classes: the equivalence classes of the release.
            suppressed: one bool per class, ``True`` where the class's records are suppressed
                (removed, or published as ``*``); ``None`` means no class is suppressed.
                Records of the dataset that lie in no class (classes from which the suppressed
                ones were dropped) count as suppressed too.

        Raises:
            ParameterError: the mask does not hold one bool per class.
        """
        raise NotImplementedError

    def loss(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        """What a search minimizes: :meth:`value`, negated when higher is better."""
        v = self.value(classes, suppressed)
        return -v if self.higher_is_better else v

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """A lower bound on :meth:`loss` at this node and every more general node, whatever is
        suppressed; it never decreases under ``roll_up``. ``-inf`` where none is proven."""
        return float("-inf")

    def level_terms(self, dataset: Dataset, j: int) -> np.ndarray | None:
        """For a ``separable`` metric, the terms of its bound for the ``j``-th quasi-identifier,
        one per level of its hierarchy (index = level): each is :meth:`loss_bound` at the node
        that generalizes that column alone to that level, computed here from the column and its
        hierarchy without building that node's classes.

        ``None`` (the default) where the metric has no such shortcut: a search then reads each
        term off the node's classes.
        """
        return None

    # ---------------------------------------------------------------------------------------
    # helpers for subclasses

    def _cache(self, dataset: Dataset) -> dict:
        """A dictionary that lives as long as this metric and ``dataset`` both do."""
        key = id(dataset)
        entry = self._caches.get(key)
        if entry is None or entry[0]() is not dataset:
            try:
                ref = weakref.ref(dataset)
            except TypeError:  # pragma: no cover - Dataset supports weak references
                ref = (lambda d: (lambda: d))(dataset)
            # Forget the caches of datasets that were freed.
            self._caches = {k: v for k, v in self._caches.items() if v[0]() is not None}
            entry = (ref, {})
            self._caches[key] = entry
        return entry[1]

    def _per_cells(self, classes: EquivalenceClasses, j: int, what: str,
                   compute: Callable[[Cells], np.ndarray]) -> np.ndarray:
        """``compute(classes.cells(j))``, cached per (column, hierarchy level) for hierarchy cells.

        Cells that do not come from a hierarchy level (local recoding) are computed every call.
        """
        cells = classes.cells(j)
        if cells.level is None:
            return compute(cells)
        cache = self._cache(classes.dataset)
        key = (what, j, cells.level)
        if key not in cache:
            cache[key] = compute(cells)
        return cache[key]

    def _per_level(self, dataset: Dataset, j: int, level: int, what: str,
                   compute: Callable[[Cells], np.ndarray]) -> np.ndarray:
        """:meth:`_per_cells` for the cells of level ``level`` of the ``j``-th quasi-identifier's
        hierarchy (the same cache), without a node's classes."""
        cache = self._cache(dataset)
        key = (what, j, level)
        if key not in cache:
            cache[key] = compute(level_cells(dataset, j, level))
        return cache[key]


def level_cells(dataset: Dataset, j: int, level: int) -> Cells:
    """The cells of the ``j``-th quasi-identifier at ``level`` of its hierarchy, as the classes of
    a node at that level give them (:meth:`veil.classes.EquivalenceClasses.cells`)."""
    name = dataset.quasi_identifiers[j]
    gen = dataset.generalizations[name]
    return Cells.from_codes(dataset.column(name), gen.lut[:, level], gen.labels[level], level=level, height=gen.height)


def kept_mask(classes: EquivalenceClasses, suppressed: np.ndarray | None) -> np.ndarray | None:
    """The suppression mask as a bool array (``None`` when nothing is suppressed).

    Raises:
        ParameterError: the mask does not hold one value per class.
    """
    if suppressed is None:
        return None
    mask = np.asarray(suppressed)
    if mask.shape != (classes.n_classes,):
        raise ParameterError(f"the suppression mask has shape {mask.shape}; give one bool per class "
                             f"({classes.n_classes}).")
    mask = mask.astype(bool, copy=False)
    return mask if mask.any() else None


def records(classes: EquivalenceClasses) -> int:
    """``n = |D|``, the number of records of the original table."""
    return int(classes.dataset.num_rows)


def split_sizes(classes: EquivalenceClasses, suppressed: np.ndarray | None) -> tuple[np.ndarray, int]:
    """``(kept, n_suppressed)``: each class's number of published records (0 when suppressed,
    as float) and the number of suppressed records.

    Records of the dataset that lie in no class (classes that are a subset, after the suppressed
    ones were dropped) count as suppressed.
    """
    mask = kept_mask(classes, suppressed)
    sizes = classes.sizes.astype(float)
    outside = records(classes) - int(classes.sizes.sum())
    if mask is None:
        return sizes, outside
    return np.where(mask, 0.0, sizes), int(classes.sizes[mask].sum()) + outside


def require_levels(metric: UtilityMetric, classes: EquivalenceClasses) -> list[Cells]:
    """The cells of every quasi-identifier, checking that each comes from a hierarchy level.

    Raises:
        ParameterError: a quasi-identifier's cells do not come from a hierarchy (local recoding).
    """
    cells = [classes.cells(j) for j in range(len(classes.dataset.quasi_identifiers))]
    for name, c in zip(classes.dataset.quasi_identifiers, cells):
        if c.level is None or c.height is None:
            raise ParameterError(f"{metric.name} needs full-domain generalization, but column '{name}' "
                                 "was recoded locally; choose another metric.")
    return cells


def has_levels(classes: EquivalenceClasses) -> bool:
    """Whether every quasi-identifier's cells come from one level of a hierarchy."""
    return all(classes.cells(j).level is not None for j in range(len(classes.dataset.quasi_identifiers)))


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """The inner product of two vectors, summed pairwise by NumPy (no BLAS call: a BLAS thread
    pool only adds latency on vectors this short, and pairwise summation is more accurate)."""
    return float(np.multiply(a, b).sum())


def xlogx(x: np.ndarray) -> np.ndarray:
    """``x·ln x`` with ``0·ln 0 = 0``."""
    x = np.asarray(x, dtype=float)
    return x * np.log(np.where(x > 0, x, 1.0))
