"""Threshold models on the Benedetti–Franconi re-identification risk of a sample
(:mod:`veil.risk.individual`): the average risk, and the share of records at risk.

Both are conditions on the **whole table**, not on each class: whether a class may be released
depends on the risk the other classes carry. The classes are therefore put in order of risk (the
riskiest first: the highest average risk, or the largest share of records at risk), and a
class's level is the table's figure once every class before it is suppressed. The first class's
level is the table's; each class of the order is at least as risky as the average of those left,
so suppressing it never raises the figure, and the levels never grow along the order. The
classes above the threshold, which :meth:`failing` names, are thus the fewest riskiest classes
(in that order) whose suppression brings the rest within it, and the levels do not depend on the
threshold. After suppressing them the released table passes the model when checked again, since
a class's risk reads only its own records (f_k and their weights), which suppression leaves
unchanged. A full-domain search (:class:`veil.anonymize.FullDomain`) with a suppression limit
keeps the nodes whose suppressed records fit the limit and picks the one of least loss; without
suppression a node is feasible only where the whole table passes.

**Monotonicity.** Neither model claims it (``monotonic = False``, ``monotonic_with_suppression
= False``): generalization merges key groups, and with sampling weights the merged group's risk
is not bounded by its parts' in general, and the records suppression removes can grow from one
node to the next. So a lattice search evaluates them on every node it considers instead
of pruning with them: they work in :class:`~veil.anonymize.FullDomain` (optimal and heuristic
searches). Mondrian, MDAV and Ace judge one partition or group at a time (a split, a merge, a
bucket is kept when *it* passes), which a condition on the whole table cannot tell them, so
they refuse these models (:func:`refuse_table_models`).

With a household column and ``household=True`` the risk of a record is its household's,
1 − Π(1 − r_i) over its members, computed on the table before suppression: removing members
only lowers it, so a table passing with those figures passes when checked after suppression.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.errors import ParameterError
from veil.models.base import PrivacyModel, require
from veil.risk.frequencies import group_frequencies
from veil.risk.individual import METHODS, benedetti_franconi, sample_risk


class _TableRiskModel(PrivacyModel):
    """A model on the risk of the whole table; ``table_level`` marks it for the anonymizers."""

    needs_sensitive = False
    higher_is_better = False
    monotonic = False
    monotonic_with_suppression = False
    table_level = True

    def __init__(self, threshold: float | None, household: bool, method: str):
        require(method in METHODS, f"unknown individual risk method {method!r}; use 'exact' or 'approx'.")
        require(isinstance(household, (bool, np.bool_)), f"household is true or false, not {household!r}.")
        super().__init__(threshold)
        self.household = bool(household)
        self.method = method

    def class_risk(self, classes: EquivalenceClasses, above: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per class: the sum of its records' risks, and (with ``above``) its records whose risk
        exceeds ``above``.

        Raises:
            ParameterError: ``household`` without a household column.
            DataError: the weights cannot be read (see :mod:`veil.risk.frequencies`).
        """
        n = classes.n_classes
        if self.household:
            if classes.dataset.household is None:
                raise ParameterError(f"{self.name} with household risk needs a household column; declare one.")
            risk = sample_risk(classes, self.method)
            values = risk.household
            rows = classes.row_class
            member = rows >= 0
            weights = values[member] if risk.records is None else (values * risk.records)[member]
            mass = np.bincount(rows[member], weights=weights, minlength=n)
            if above is None:
                return mass, np.zeros(n)
            hit = (values[member] > above).astype(np.float64)
            if risk.records is not None:
                hit *= risk.records[member]
            return mass, np.bincount(rows[member], weights=hit, minlength=n)
        group_class, sample, population, _ = group_frequencies(classes)
        risk = benedetti_franconi(sample, population, self.method)
        records = sample.astype(np.float64)
        mass = np.bincount(group_class, weights=records * risk, minlength=n)
        if above is None:
            return mass, np.zeros(n)
        return mass, np.bincount(group_class, weights=records * (risk > above), minlength=n)

    @staticmethod
    def _peeled(sizes: np.ndarray, bad: np.ndarray, priority: np.ndarray, then: np.ndarray | None = None) -> np.ndarray:
        """Per class, Σ bad / Σ sizes over the table once every class before it in the order of
        decreasing ``priority`` (ties: decreasing ``then``, then class order) is suppressed.

        The first class's figure is the table's. Each class in that order has the largest
        ``bad / size`` of the classes left (``priority`` is that ratio), at least their average,
        so suppressing it never raises the figure: the figures never grow along the order, and
        the classes above a threshold are the fewest riskiest classes, in that order, whose
        suppression brings the rest within it.
        """
        n = len(sizes)
        keys = [np.arange(n)] + ([] if then is None else [-then]) + [-priority]
        order = np.lexsort(keys)
        left_bad = np.cumsum(bad[order][::-1])[::-1]
        left = np.cumsum(sizes[order].astype(np.float64)[::-1])[::-1]
        levels = np.empty(n)
        levels[order] = left_bad / np.maximum(left, 1)
        return levels


class AverageRisk(_TableRiskModel):
    """Average re-identification risk: the expected re-identifications per released record,
    Σ r / n (the rate of sdcMicro's global risk, Benedetti and Franconi's individual risk r,
    :mod:`veil.risk.individual`), is at most ``risk``.

    The table's level is the rate; a class's level is the rate once every class of higher
    average risk is suppressed (see the module docstring). When the table fails, :meth:`failing`
    names the classes of highest average risk, the fewest in that order whose suppression brings
    the rate of the rest within ``risk``. FullDomain only (see the module docstring).

    Args:
        risk: the largest rate allowed, in [0, 1], or ``None`` to measure only.
        household: bound the household risk instead of the individual risk (needs a household
            column).
        method: ``"exact"`` or ``"approx"`` (sdcMicro's default), see
            :func:`veil.risk.individual.benedetti_franconi`.

    Raises:
        ParameterError: ``risk`` outside [0, 1], an unknown method; on evaluation, household risk
            without a household column.
    """

    name = "average risk"
    key = "average_risk"

    def __init__(self, risk: float | None = None, household: bool = False, method: str = "exact"):
        require(risk is None or (isinstance(risk, (int, float)) and not isinstance(risk, bool) and 0 <= risk <= 1),
                f"the average risk is a number in [0, 1], not {risk!r}.")
        super().__init__(risk, household, method)

    def __repr__(self) -> str:
        return f"AverageRisk(risk={self.threshold}, household={self.household})"

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        mass, _ = self.class_risk(classes)
        sizes = classes.sizes
        return self._peeled(sizes, mass, mass / np.maximum(sizes, 1))


class RecordsAtRisk(_TableRiskModel):
    """Records at risk: the share of released records whose individual (Benedetti–Franconi) risk
    exceeds ``risk`` is at most ``share`` (μ-Argus's and sdcMicro's threshold on the individual
    risk, with a tolerated share).

    The table's level is the share of its records above ``risk``; a class's level is that share
    once every class with a larger share of records above ``risk`` is suppressed (ties: the
    higher average risk first; see the module docstring). When the table fails, :meth:`failing`
    names those classes, the fewest in that order whose suppression brings the share of the rest
    within ``share``; with ``share = 0`` that is every class holding a record above ``risk``.
    FullDomain only (see the module docstring).

    Args:
        risk: the individual risk above which a record is at risk, in [0, 1].
        share: the largest share of records at risk allowed, in [0, 1], or ``None`` to measure only.
        household: read each record's household risk instead (needs a household column).
        method: ``"exact"`` or ``"approx"``, see :func:`veil.risk.individual.benedetti_franconi`.

    Raises:
        ParameterError: ``risk`` or ``share`` outside [0, 1], an unknown method; on evaluation,
            household risk without a household column.
    """

    name = "records at risk"
    key = "records_at_risk"

    def __init__(self, risk: float, share: float | None = 0.0, household: bool = False, method: str = "exact"):
        require(isinstance(risk, (int, float)) and not isinstance(risk, bool) and 0 <= risk <= 1,
                f"the risk a record may reach is a number in [0, 1], not {risk!r}.")
        require(share is None or (isinstance(share, (int, float)) and not isinstance(share, bool) and 0 <= share <= 1),
                f"the share of records at risk is a number in [0, 1], not {share!r}.")
        super().__init__(share, household, method)
        self.risk = float(risk)

    def __repr__(self) -> str:
        return f"RecordsAtRisk(risk={self.risk}, share={self.threshold}, household={self.household})"

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        mass, at_risk = self.class_risk(classes, above=self.risk)
        sizes = np.maximum(classes.sizes, 1)
        return self._peeled(classes.sizes, at_risk, at_risk / sizes, mass / sizes)


def refuse_table_models(models: Iterable[PrivacyModel], algorithm: str) -> None:
    """Refuse the models that are conditions on the whole table (``table_level``) for an
    algorithm that judges one partition, group or bucket at a time.

    Raises:
        ParameterError: one such model is given.
    """
    for model in models:
        if getattr(model, "table_level", False):
            raise ParameterError(f"{algorithm} cannot enforce {model.name}, a condition on the whole table, since it "
                                 "judges one group of records at a time; anonymize with algorithm fulldomain.")
