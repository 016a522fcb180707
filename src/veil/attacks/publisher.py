"""What the minimality adversary knows of how a release was made: a :class:`Publisher` gives the
probability that the algorithm publishes the release from each candidate input (Wong, Fu, Wang and
Pei, VLDB 2007; Xiao, Tao and Koudas, TODS 2010, on transparent ℓ-diversity). The publishers
themselves are :mod:`veil.attacks.fulldomain_publishers` (veil's optimal full-domain search,
replayed, and a minimal single-node generalization) and :mod:`veil.attacks.recoding_publishers`
(a minimal record-level generalization, Mondrian, Ace); the attack is
:class:`~veil.attacks.minimality.MinimalityAttack`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from veil.attacks.published_classes import PublishedClasses
from veil.classes import SensitiveCounts
from veil.data.dataset import Dataset
from veil.models.base import PrivacyModel
from veil.models.diversity import DistinctLDiversity, EntropyLDiversity


class Parts:
    """Classes as the privacy models read them (what :meth:`PrivacyModel.evaluate` is given): the
    class sizes and, per sensitive column, the class × value counts.

    Args:
        sizes: ``int [classes]``.
        sensitive: sensitive column → its :class:`~veil.classes.SensitiveCounts`.
    """

    def __init__(self, sizes: np.ndarray, sensitive: dict[str, SensitiveCounts]):
        self.sizes = sizes
        self.sensitive = sensitive

    @property
    def n_classes(self) -> int:
        return len(self.sizes)


class Publisher:
    """What the adversary knows of how a release was made (see the module notes).

    Subclasses implement :meth:`weight`; :meth:`prepare` is called once per attack.
    """

    name = "publisher"
    located = False  # whether everyone's class must be known exactly (full-domain)
    # Why the algorithm cannot be replayed exactly, if it cannot (then only a bound is reported).
    unreplayable: str | None = None

    def prepare(self, published: PublishedClasses, population: Dataset, person_class: np.ndarray | None) -> None:
        self.published = published
        self.population = population
        self.person_class = person_class

    def weight(self, codes: np.ndarray) -> float:
        """The probability that the algorithm publishes the release from the input in which
        person ``p`` holds value ``codes[p]`` (an index into the published values)."""
        raise NotImplementedError

    def touched(self) -> np.ndarray | None:
        """For the bound: the published classes whose members' posteriors the knowledge of the
        algorithm may move away from the class frequencies (``None``: every class)."""
        return None

    def threshold(self) -> float | None:
        """The posterior bound the models promise (1/ℓ), if any."""
        return None

    def proven_at_most(self) -> tuple[float, str] | None:
        """A proven upper bound on every posterior over I(O, A), with its source, if the
        algorithm has one (Ace's)."""
        return None

    # -- helpers -----------------------------------------------------------------------------

    def _candidate_dataset(self, codes: np.ndarray) -> Dataset:
        """The population (its own columns, missing values and orders) with the sensitive column of a
        candidate input."""
        pop, qis = self.population, self.published.qis
        values = pa.array(np.asarray(self.published.values, dtype=object)[codes].tolist(), pa.string())
        data = pop.table.data.select(qis).append_column(self.published.sensitive, values)
        return Dataset(data, quasi_identifiers=qis, sensitive=self.published.sensitive,
                       hierarchies={q: h for q, h in pop.hierarchies.items() if q in qis},
                       orders={q: o for q, o in pop.orders.items() if q in qis}, missing_values=pop.missing_values)


def model_threshold(models: Sequence[PrivacyModel]) -> float | None:
    """The posterior bound 1/ℓ that the largest ℓ of the distinct and entropy ℓ-diversity models
    among ``models`` promises, or ``None`` when there is none."""
    ls = [m.threshold for m in models if isinstance(m, (DistinctLDiversity, EntropyLDiversity))
          and m.threshold is not None]
    return 1.0 / max(ls) if ls else None
