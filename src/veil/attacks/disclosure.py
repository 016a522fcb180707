"""Disclosure measures of Brickell and Shmatikov ("The cost of privacy", KDD 2008).

The adversary's baseline is what trivial sanitization (publishing the quasi-identifiers and the
sensitive values in two unlinked tables) already tells him about a target ``t``: the table-wide
distribution ``p(T, s)``. Reading ``t``'s class ``<t>`` in the release, he learns ``p(<t>, s)``
instead. With ``p(U, s) = |{u ∈ U : u[S] = s}| / |U|``:

* ``A_diff(<t>) = ½ Σ_s |p(T, s) − p(<t>, s)|``, the total variation between the two;
* ``A_quot(<t>) = max_s p(<t>, s) / p(T, s)``, how many times more likely the class makes its
  most over-represented value (the paper writes the ratio for one value ``s``; veil reports the
  largest ratio over the values, as a plain ratio, not its logarithm; it is at least 1);
* ``A_know = (1/|T|) Σ_<t> |<t>| · A_diff(<t>)``, the knowledge gain, each class weighted by size;
* ``A_acc = (1/|T|) Σ_<t> |<t>| · p(<t>, s_max(<t>)) − p(T, s_max(T))``, the accuracy gain of an
  adversary who guesses each class's most common value over one who guesses the table's;
* ``δ = max |log(p(<t>, s) / p(T, s))|`` over classes and the values present in them, the
  smallest δ the release would need for δ-disclosure privacy to fail (the level
  :class:`veil.DeltaDisclosure` reports).

``T`` is the released table: the records the adversary sees. For a veil release's
``released_classes`` that excludes suppressed records (veil's privacy models compare with the
input table instead, so their δ can differ when records were suppressed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.errors import ColumnError, ParameterError
from veil.models.disclosure import log_ratios


def released_counts(classes: EquivalenceClasses, sensitive: str | None = None) -> SensitiveCounts:
    """The count matrix of one sensitive column, compared with the released table itself.

    Args:
        classes: the released equivalence classes.
        sensitive: the sensitive column; ``None`` picks the only one.

    Raises:
        ParameterError: the classes are empty, or ``sensitive`` is ``None`` and there is no
            sensitive column or more than one.
        ColumnError: ``sensitive`` is not a sensitive column of the release.
    """
    if classes.n_rows == 0:
        raise ParameterError("the release has no records to attack.")
    names = list(classes.dataset.sensitive)
    if sensitive is None:
        if not names:
            raise ParameterError("the attacks need a sensitive column; declare one.")
        if len(names) > 1:
            raise ParameterError(f"the release has {len(names)} sensitive columns ({', '.join(names)}); "
                                 "name the one to attack.")
        sensitive = names[0]
    if sensitive not in names:
        listed = f"the sensitive columns are {', '.join(names)}" if names else "it declares none"
        raise ColumnError(f"column '{sensitive}' is not a sensitive column of the release; {listed}.")
    sc = classes.sensitive[sensitive]
    return SensitiveCounts(sc.column, sc.counts, sc.counts.sum(axis=0), sc.generalization)


def rows_where(classes: EquivalenceClasses, class_mask: np.ndarray,
               cell_mask: np.ndarray | None = None, codes: np.ndarray | None = None) -> np.ndarray:
    """Indices of the rows whose class is marked in ``class_mask`` (bool per class) or, with
    ``cell_mask`` (bool ``[classes × values]``) and the rows' value ``codes``, whose
    (class, value) cell is marked. Rows outside every class (suppressed: class −1) are never
    returned."""
    row_class = classes.row_class
    if cell_mask is None:
        # Class −1 reads the appended False.
        return np.flatnonzero(np.append(np.asarray(class_mask, dtype=bool), False)[row_class])
    inside = row_class >= 0
    hit = np.zeros(len(row_class), dtype=bool)
    hit[inside] = cell_mask[row_class[inside], codes[inside]]
    return np.flatnonzero(hit)


def json_number(value) -> float | int | str | None:
    """A number for JSON: ints stay ints, infinities become ``"inf"``, NaN becomes ``None``."""
    value = float(value)
    if math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return int(value) if value.is_integer() else value


@dataclass(frozen=True, eq=False)
class DisclosureResult:
    """Brickell and Shmatikov's disclosure measures of one sensitive column (see the module).

    Attributes:
        sensitive: the sensitive column.
        sizes: ``int64 [classes]``, the class sizes.
        a_diff: ``float [classes]``, A_diff of each class.
        a_quot: ``float [classes]``, A_quot of each class (the largest ratio, ≥ 1).
        a_know: the size-weighted mean of A_diff.
        a_acc: the adversarial accuracy gain.
        delta: the largest |log ratio| over classes and the values present in them.
        accuracy_base: ``p(T, s_max(T))``, the accuracy of guessing the table's most common value.
    """

    sensitive: str
    sizes: np.ndarray
    a_diff: np.ndarray
    a_quot: np.ndarray
    a_know: float
    a_acc: float
    delta: float
    accuracy_base: float

    def summary(self) -> dict:
        """A JSON-ready summary."""
        return {"measure": "disclosure", "sensitive": self.sensitive,
                "a_know": json_number(self.a_know), "a_acc": json_number(self.a_acc),
                "delta": json_number(self.delta),
                "a_diff_max": json_number(self.a_diff.max()), "a_quot_max": json_number(self.a_quot.max()),
                "accuracy_base": json_number(self.accuracy_base),
                "accuracy_release": json_number(self.accuracy_base + self.a_acc)}


def disclosure(classes: EquivalenceClasses, sensitive: str | None = None) -> DisclosureResult:
    """Measure A_diff and A_quot per class, and A_know, A_acc and δ over the release.

    Args:
        classes: the released equivalence classes.
        sensitive: the sensitive column; ``None`` picks the only one.

    Raises:
        ParameterError, ColumnError: as :func:`released_counts`.
    """
    sc = released_counts(classes, sensitive)
    counts = sc.counts
    sizes = counts.sum(axis=1)
    n = int(sizes.sum())
    p, q = sc.class_distribution(), sc.table_distribution()
    a_diff = 0.5 * np.abs(q[None, :] - p).sum(axis=1)
    # p(<t>, s) > 0 implies p(T, s) > 0: the table is the union of the classes.
    a_quot = np.divide(p, q[None, :], out=np.zeros_like(p), where=q[None, :] > 0).max(axis=1)
    a_know = float((sizes * a_diff).sum() / n)
    base = float(sc.reference.max() / n)
    # One division, so that hand-computed fractions come out exactly.
    a_acc = float((counts.max(axis=1).sum() - sc.reference.max()) / n)
    delta = float(np.nanmax(log_ratios(sc)))
    return DisclosureResult(sc.name, sizes, a_diff, a_quot, a_know, a_acc, delta, base)
