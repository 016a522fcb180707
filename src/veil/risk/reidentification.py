"""Re-identification risk of a table under the prosecutor, journalist and marketer attacker models
(El Emam and Dankar, "Protecting privacy using k-anonymity", JAMIA 2008; as in ARX).

* **Prosecutor**: the attacker knows the target is in the table. A record in a class of size f is
  re-identified with probability 1/f.
* **Journalist**: the attacker does not know whether the target is in the table, which is a
  sample of a known population. A record whose class matches F population records is
  re-identified with probability 1/F.
* **Marketer**: the attacker tries to re-identify as many records as possible; the expected share
  re-identified is (1/n)·Σ_classes f/F, which is (number of classes)/n when the table is the
  population.
"""

from __future__ import annotations

from dataclasses import dataclass


from veil.classes import EquivalenceClasses, population_class_sizes
from veil.data.dataset import Dataset
from veil.errors import ParameterError


@dataclass(frozen=True)
class ReidentificationRisk:
    """Risk figures of one table; shares are fractions of the table's records.

    Attributes:
        threshold: the per-record risk above which a record counts as at risk.
        prosecutor_max: the highest prosecutor risk, 1/(size of the smallest class).
        prosecutor_avg: the average prosecutor risk over records, (number of classes)/n.
        prosecutor_at_risk: share of records whose prosecutor risk exceeds ``threshold``.
        marketer: expected share of records a marketer re-identifies.
        journalist_max, journalist_avg, journalist_at_risk: the same against the population, or
            ``None`` when no population table was given.
        k: the class size for ``records_below_k``, or ``None``.
        records_below_k: number of records in classes smaller than ``k`` (``None`` without k).
    """

    threshold: float
    prosecutor_max: float
    prosecutor_avg: float
    prosecutor_at_risk: float
    marketer: float
    journalist_max: float | None = None
    journalist_avg: float | None = None
    journalist_at_risk: float | None = None
    k: int | None = None
    records_below_k: int | None = None


def reidentification_risk(classes: EquivalenceClasses, *, threshold: float = 0.2,
                          population: Dataset | None = None, k: int | None = None) -> ReidentificationRisk:
    """Prosecutor, journalist and marketer risk of the table the classes partition.

    Args:
        classes: the equivalence classes of the (released) table.
        threshold: per-record risk above which a record is counted as at risk, in (0, 1].
        population: the population the table was sampled from, with the same quasi-identifiers;
            its records are generalized to the same levels with the table's hierarchies.
        k: also count the records in classes smaller than ``k``.

    Raises:
        ParameterError: ``threshold`` outside (0, 1] or ``k`` < 1.
        DataError: a class of the table has no match in the population.
    """
    if not 0 < threshold <= 1:
        raise ParameterError(f"the risk threshold must be in (0, 1], not {threshold}.")
    if k is not None and k < 1:
        raise ParameterError(f"k must be at least 1, not {k}.")
    sizes = classes.sizes.astype(float)
    n = sizes.sum()
    if n == 0:
        # Nothing is published (every record suppressed): nobody can be re-identified.
        return ReidentificationRisk(threshold, 0.0, 0.0, 0.0, 0.0, k=k, records_below_k=0 if k is not None else None)
    risk = 1.0 / sizes
    at_risk = sizes[risk > threshold].sum() / n
    figures = dict(threshold=threshold, prosecutor_max=float(risk.max()),
                   prosecutor_avg=float(classes.n_classes / n), prosecutor_at_risk=float(at_risk),
                   marketer=float(classes.n_classes / n))
    if population is not None:
        pop_sizes = population_class_sizes(classes, population).astype(float)
        pop_risk = 1.0 / pop_sizes
        figures.update(journalist_max=float(pop_risk.max()),
                       journalist_avg=float((sizes * pop_risk).sum() / n),
                       journalist_at_risk=float(sizes[pop_risk > threshold].sum() / n),
                       marketer=float((sizes / pop_sizes).sum() / n))
    if k is not None:
        figures.update(k=int(k), records_below_k=int(sizes[sizes < k].sum()))
    return ReidentificationRisk(**figures)
