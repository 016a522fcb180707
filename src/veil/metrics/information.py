"""Metrics of how much each published cell blurs the original values: loss (NCP),
non-uniform entropy, and the KL-divergence between the original and the released distribution.

All three read each class's cells through :class:`veil.cells.Cells` (what a cell covers, how many
records fall in it, its numeric span), so they score local-recoding releases as well as
full-domain ones. The KL-divergence is summed over the observed tuples only
(:func:`kl_on_observed`), as the maximum-entropy estimate of anonymized marginals
(:mod:`veil.marginals.maxent`) sums it too.
"""

from __future__ import annotations

import numpy as np

from veil.cells import Cells
from veil.classes import EquivalenceClasses
from veil.data.dataset import Dataset
from veil.errors import ParameterError
from veil.metrics.base import UtilityMetric, dot, has_levels, records, split_sizes, xlogx


def _n_qis(classes: EquivalenceClasses) -> int:
    return len(classes.dataset.quasi_identifiers)


def cell_penalty(cells: Cells) -> np.ndarray:
    """The normalized certainty penalty of each cell of one column, in ``[0, 1]``.

    A numeric column: ``(max − min) / (column max − column min)`` over the values the cell covers
    (the missing category is ignored; a cell holding only the missing value costs 0). Any other
    column: ``(coverage − 1) / (cardinality − 1)``. A column with a single value costs 0.
    """
    column = cells.column
    if column.is_numeric:
        finite = column.numeric[np.isfinite(column.numeric)]
        width = float(finite.max() - finite.min()) if len(finite) else 0.0
        if width <= 0:
            return np.zeros(cells.n_cells)
        low, high = cells.numeric_span()
        span = np.nan_to_num(high - low, nan=0.0)
        return np.clip(span / width, 0.0, 1.0)
    card = column.cardinality
    if card <= 1:
        return np.zeros(cells.n_cells)
    return np.clip((cells.coverage() - 1.0) / (card - 1.0), 0.0, 1.0)


class NormalizedCertaintyPenalty(UtilityMetric):
    """Loss, or normalized certainty penalty (Iyengar, KDD 2002; Xu et al., KDD 2006; ARX's
    "loss").

    Each record pays, on each quasi-identifier, the share of the column its cell covers: for a
    numeric column ``(max − min) / (column range)`` of the values in the cell, for any other
    column ``(coverage − 1) / (cardinality − 1)``, where ``coverage`` counts the column's values
    the cell covers and ``cardinality`` all of the column's values (0 for a column with one
    value). A record's loss is the mean over quasi-identifiers; a suppressed record's is 1. The
    value is the mean over records, in ``[0, 1]``; lower is better.
    """

    name = "loss (normalized certainty penalty)"
    key = "loss"
    separable = True
    suppression_never_helps = True  # a suppressed record costs 1, at least its own loss

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        kept, n_supp = split_sizes(classes, suppressed)
        n = records(classes)
        if n == 0:
            return 0.0
        d = _n_qis(classes)
        per_class = np.zeros(classes.n_classes)
        for j in range(d):
            per_class += np.take(self._per_cells(classes, j, "ncp", cell_penalty), classes.keys[:, j])
        return float((dot(kept, per_class) / d + n_supp) / n)

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """The value without suppression. Proof: a suppressed record costs 1, at least its own
        loss, and a roll-up replaces each record's cell by one that contains it, whose span and
        coverage are no smaller."""
        return self.value(classes)


class NonUniformEntropy(UtilityMetric):
    """Non-uniform entropy (de Waal and Willenborg, 1999; as ARX computes it), in bits.

    ``Σ_records Σ_j log2( n_j(cell) / n_j(v) )``, where ``v`` is the record's original value of
    quasi-identifier ``j``, ``n_j(v)`` the number of records holding ``v`` and ``n_j(cell)`` the
    number of records whose value lies in the record's published cell; a suppressed record's cell
    is the whole column (``n_j = n``). It is the information lost about each original value when
    only its cell is known, under the empirical distribution. Since every record of a class
    shares its cells, the sum is ``Σ_classes Σ_j size·log2 n_j(cell) − Σ_j Σ_v n_j(v)·log2 n_j(v)``
    and no row is read. 0 at the original data; lower is better.
    """

    name = "non-uniform entropy"
    key = "entropy"
    separable = True
    suppression_never_helps = True  # a suppressed record's cell is the whole column

    def _constant(self, classes: EquivalenceClasses) -> float:
        cache = self._cache(classes.dataset)
        if "nue_constant" not in cache:
            ds = classes.dataset
            cache["nue_constant"] = float(sum(xlogx(ds.column(q).counts()).sum()
                                              for q in ds.quasi_identifiers) / np.log(2))
        return cache["nue_constant"]

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        kept, n_supp = split_sizes(classes, suppressed)
        n = records(classes)
        total = 0.0
        for j in range(_n_qis(classes)):
            log_counts = self._per_cells(classes, j, "nue", _log2_record_counts)
            total += float(dot(kept, np.take(log_counts, classes.keys[:, j])))
        if n_supp:
            total += n_supp * _n_qis(classes) * np.log2(n)
        return _nonnegative(total, self._constant(classes))

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """The value without suppression. Proof: a suppressed record's cell is the whole column,
        which holds at least as many records as its own cell, and a roll-up replaces each cell by
        one that contains it."""
        return self.value(classes)

    def level_terms(self, dataset: Dataset, j: int) -> np.ndarray | None:
        """The bound's term of the ``j``-th quasi-identifier at each level ``L`` of its hierarchy:
        ``Σ_v n(v)·log2 n(cell_L(v)) − Σ_v n(v)·log2 n(v)`` over the column's values ``v``, which
        is the value at the node generalizing that column alone (the other columns' terms cancel
        the constant's). ``None`` for a column without hierarchy or an empty table."""
        name = dataset.quasi_identifiers[j]
        gen = dataset.generalizations.get(name)
        if gen is None or dataset.num_rows == 0:
            return None
        counts = dataset.column(name).counts().astype(float)

        def cells_total(level: int) -> float:
            log_counts = self._per_level(dataset, j, level, "nue", _log2_record_counts)
            return dot(counts, np.take(log_counts, gen.lut[:, level]))

        own = cells_total(0)
        return np.array([_nonnegative(cells_total(level), own) for level in range(gen.levels)])


def _nonnegative(total: float, constant: float) -> float:
    """``total − constant``, a quantity that is ≥ 0 in exact arithmetic: the two sums can differ
    by rounding where they are equal (the original data), which is read as 0."""
    diff = total - constant
    return 0.0 if diff <= 1e-12 * max(1.0, abs(constant)) else float(diff)


def _log2_record_counts(cells: Cells) -> np.ndarray:
    # A cell no record falls in (a hierarchy node for values absent from the data) is never used.
    return np.log2(np.maximum(cells.record_counts(), 1.0))


def _log_coverage(cells: Cells) -> np.ndarray:
    return np.log(np.maximum(cells.coverage(), 1.0))


def neg_entropy(counts: np.ndarray) -> float:
    """``Σ p ln p`` of the distribution ``counts / Σ counts`` (0 for no records)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    if n <= 0:
        return 0.0
    positive = counts[counts > 0]
    return float((positive * np.log(positive)).sum() / n - np.log(n))


def kl_on_observed(weights: np.ndarray, log_q: np.ndarray, neg_entropy_p: float) -> float:
    """``KL(p ‖ q) = Σ_x p(x) ln p(x) − Σ_x p(x) ln q(x)`` over the observed tuples, in nats.

    Args:
        weights: the records of each observed tuple, or of each group of observed tuples that
            share one ``q`` (an equivalence class of a release).
        log_q: ``ln q`` of each such tuple (−inf where ``q`` is 0).
        neg_entropy_p: ``Σ_x p(x) ln p(x)`` of the observed tuples themselves.

    Returns:
        The divergence, ≥ 0: a difference that rounding leaves within 10⁻¹² of 0 (the data
        themselves) is 0; ``inf`` when ``q`` is 0 on a tuple that occurs.
    """
    weights = np.asarray(weights, dtype=float)
    n = weights.sum()
    if n <= 0:
        return 0.0
    held = weights > 0
    if np.any(np.isneginf(log_q[held])):
        return float("inf")
    cross = float(np.multiply(weights[held], log_q[held]).sum() / n)
    diff = neg_entropy_p - cross
    return 0.0 if diff <= 1e-12 * max(1.0, abs(neg_entropy_p)) else float(diff)


class KLDivergence(UtilityMetric):
    """KL-divergence from the original data to the release (Kifer and Gehrke, "Injecting utility
    into anonymized datasets", SIGMOD 2006), in nats.

    ``KL(p ‖ q) = Σ_x p(x) ln(p(x) / q(x))`` over the quasi-identifier tuples ``x`` of the original
    table, where ``p`` is their empirical distribution and ``q`` the one the release implies: each
    published class spreads its records uniformly over its box ``B_c`` (the product over
    quasi-identifiers of the values its cells cover) and suppressed records spread uniformly over
    the whole domain ``D`` (the product of the columns' cardinalities). So for ``x`` in a published
    class ``c``, ``q(x) = size_c / (n·|B_c|) + n_supp / (n·|D|)``, and for ``x`` in a suppressed
    class ``q(x) = n_supp / (n·|D|)``. Without suppression ``q`` is the maximum-entropy
    distribution of the release taken as one marginal (:mod:`veil.marginals.maxent`, which also
    sums the divergence with :func:`kl_on_observed`). Because ``q`` is constant
    within a class, the sum is ``Σ_x p ln p − Σ_c (size_c / n) ln q_c``: only the class sizes and
    the counts of the distinct original tuples (cached per dataset) are read. 0 at the original
    data; lower is better.

    With ``sensitive``, ``x`` is a quasi-identifier tuple together with that column's value, which
    the release publishes as it is (Kifer and Gehrke's setting): ``size_c`` becomes the class's
    records holding the value and ``D`` also ranges over the column's values.

    With local recoding a tuple whose records fall in several classes is scored, record by
    record, with the ``q`` of each record's class.

    Args:
        sensitive: a column published unchanged whose joint distribution with the
            quasi-identifiers is measured too (default: the quasi-identifiers only).
    """

    name = "KL-divergence"
    key = "kl"

    def __init__(self, sensitive: str | None = None):
        super().__init__()
        if sensitive is not None and not isinstance(sensitive, str):
            raise ParameterError(f"the sensitive column of the KL-divergence is named by a string, not {sensitive!r}.")
        self.sensitive = sensitive

    def __repr__(self) -> str:
        return f"KLDivergence(sensitive={self.sensitive!r})" if self.sensitive else "KLDivergence()"

    @property
    def track(self) -> tuple[str, ...]:
        return (self.sensitive,) if self.sensitive else ()

    def _constants(self, classes: EquivalenceClasses) -> tuple[float, float]:
        """``(Σ_x p ln p, ln |D|)`` for the dataset."""
        cache = self._cache(classes.dataset)
        if "kl_constants" not in cache:
            ds = classes.dataset
            if self.sensitive in ds.quasi_identifiers:
                raise ParameterError(f"'{self.sensitive}' is a quasi-identifier; the KL-divergence measures a "
                                     "sensitive column published as it is beside them.")
            base = EquivalenceClasses.from_dataset(ds, track=self.track)
            observed = base.counts(self.sensitive) if self.sensitive else base.sizes
            log_domain = float(sum(np.log(ds.column(c).cardinality) for c in ds.quasi_identifiers + list(self.track)))
            cache["kl_constants"] = (neg_entropy(observed), log_domain)
        return cache["kl_constants"]

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        kept, n_supp = split_sizes(classes, suppressed)
        n = records(classes)
        if n == 0:
            return 0.0
        neg_entropy_p, log_domain = self._constants(classes)
        log_box = np.zeros(classes.n_classes)
        for j in range(_n_qis(classes)):
            log_box += np.take(self._per_cells(classes, j, "kl", _log_coverage), classes.keys[:, j])
        if self.sensitive:
            # Each published (class, value) pair is one group of tuples sharing q.
            matrix = classes.counts(self.sensitive) * (kept > 0)[:, None]
            rows, values = np.nonzero(matrix)
            weights = matrix[rows, values].astype(float)
            log_q = np.log(weights) - np.log(n) - log_box[rows]
        else:
            published = kept > 0
            weights = kept[published]
            log_q = np.log(weights) - np.log(n) - log_box[published]
        if n_supp:
            log_spread = np.log(n_supp) - np.log(n) - log_domain
            log_q = np.append(np.logaddexp(log_q, log_spread), log_spread)
            weights = np.append(weights, n_supp)
        return kl_on_observed(weights, log_q, neg_entropy_p)

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """The value without suppression, for hierarchy cells (``-inf`` for local recoding).

        Proof: the boxes of a full-domain node are disjoint, so by Jensen
        ``KL(p‖q_s) − KL(p‖q_0) ≥ −ln Σ_x p q_s/q_0 = −ln((n − S)/n + (S/n)·Σ_c |B_c|/|D|) ≥ 0``
        for any suppression; and merging classes whose disjoint boxes lie in the merged box adds
        ``Σ_C (size_C/n)·KL(sizes in C ‖ box shares in C) ≥ 0`` (the shares sum to at most 1),
        for each sensitive value separately when ``sensitive`` is given.
        """
        if not has_levels(classes):
            return float("-inf")
        return self.value(classes)
