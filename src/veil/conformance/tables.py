"""The random tables the model and anonymizer suites run on, made from a seed with NumPy.

Each table is small (tens of records) and skewed, so that its generalization lattice holds nodes
that pass a model and nodes that fail it, and classes of every size from one record up:

* ``name``: identifying (dropped from every release);
* ``age`` (whole numbers in bands of a random choice of nested widths, then ``*``), ``zip``
  (three digits, masked from the right) and ``sex`` (``*`` above it): the quasi-identifiers, 24
  to 40 lattice nodes;
* ``disease`` (text, with a random hierarchy of groups, with or without a single root, for
  hierarchical t-closeness) and ``salary`` (whole numbers, ordered, for ordered t-closeness):
  the sensitive columns;
* ``record``: the record's position in the input, an insensitive column every release publishes
  as it is, so a release's rows can be traced to the records they came from.

The tables of odd seeds leave some ZIP codes, diseases and salaries missing.

With the table come a population that contains it (for δ-presence and k-map) and an earlier
release of the same records (for join k-anonymity).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa

from veil.data import builders
from veil.data.dataset import Dataset
from veil.data.hierarchy import Hierarchy

QUASI_IDENTIFIERS = ("age", "zip", "sex")
SENSITIVE = ("disease", "salary")
AGES = range(20, 60)
ZIPS = ("130", "131", "135", "140", "141", "147")
DISEASES = ("flu", "cold", "pneumonia", "ulcer", "gastritis", "colitis")
SALARIES = range(1, 10)
#: The nested band widths an age hierarchy is drawn from.
AGE_BANDS = ([5, 10, 20], [10, 20], [2, 10, 20], [5, 20])
#: The fewest records of a class of the earlier release (:attr:`RandomTable.earlier`).
EARLIER_K = 4


@dataclass(frozen=True, eq=False)
class RandomTable:
    """A random table with its roles, hierarchies, population and earlier release.

    Attributes:
        seed: the seed it was made from.
        frame: the records (a pandas DataFrame; never modified).
        population_frame: the population's records: every record of ``frame`` and more.
    """

    seed: int
    frame: pd.DataFrame
    population_frame: pd.DataFrame

    @cached_property
    def hierarchies(self) -> dict[str, Hierarchy]:
        """Per quasi-identifier and sensitive column, its hierarchy (over the whole domain, so it
        covers the population too); the age bands and the disease groups are drawn from the seed."""
        rng = np.random.default_rng([self.seed, 1])
        widths = AGE_BANDS[int(rng.integers(len(AGE_BANDS)))]
        return {"age": builders.intervals(list(AGES), widths), "zip": builders.masking(list(ZIPS)),
                "sex": builders.flat(["F", "M"]), "disease": _disease_hierarchy(rng),
                "salary": builders.intervals(list(SALARIES), [3])}

    @cached_property
    def dataset(self) -> Dataset:
        """The records as a :class:`~veil.data.Dataset` with every role."""
        return Dataset(self.frame, quasi_identifiers=list(QUASI_IDENTIFIERS), sensitive=list(SENSITIVE),
                       identifying="name", hierarchies=self.hierarchies)

    @cached_property
    def population(self) -> Dataset:
        """The population (its quasi-identifiers) as a :class:`~veil.data.Dataset`."""
        return Dataset(self.population_frame, quasi_identifiers=list(QUASI_IDENTIFIERS))

    @cached_property
    def earlier(self) -> pd.DataFrame:
        """An earlier release of the records: ``age`` in bands, ``sex`` as ``*`` and the disease as
        it is. The bands are the finest level of the age hierarchy (``*`` at the top) at which each
        holds at least :data:`EARLIER_K` records of two diseases or more, so that the
        earlier release is safe alone for join k-anonymity up to that k and ℓ = 2."""
        dataset = self.dataset
        disease = self.frame["disease"].astype(object).where(self.frame["disease"].notna(), "").to_numpy()
        for level in range(1, dataset.generalizations["age"].height + 1):
            bands = dataset.labels("age", level)[dataset.generalized_codes("age", level)]
            groups = pd.DataFrame({"band": bands, "disease": disease}).groupby("band")["disease"]
            if (groups.size() >= EARLIER_K).all() and (groups.nunique() >= 2).all():
                break
        return pd.DataFrame({"age": bands, "sex": "*", "disease": self.frame["disease"].to_numpy()})

    def with_dataset(self, dataset: Dataset) -> "RandomTable":
        """This table with ``dataset`` in place of :attr:`dataset` (e.g. its weighted summary)."""
        out = RandomTable(self.seed, self.frame, self.population_frame)
        out.__dict__["dataset"] = dataset
        return out


def random_table(seed: int, rows: tuple[int, int] = (30, 80)) -> RandomTable:
    """A random table of between ``rows[0]`` and ``rows[1]`` records, made from ``seed``.

    Ages cluster around a few centres, ZIP codes and diseases are drawn with skewed
    probabilities, records repeat, an odd seed leaves some ZIP codes, diseases and salaries
    missing (veil's missing category), and the population adds as many records again (or more) drawn the same way.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(rows[0], rows[1] + 1))
    # Some records repeat others (on every column but the name), so that the summary by distinct
    # rows weighs some of them more than 1.
    drawn = _records(rng, max(2, (2 * n) // 3), missing=seed % 2 == 1)
    frame = drawn.iloc[rng.integers(0, len(drawn), size=n)].reset_index(drop=True)
    frame.insert(0, "name", [f"person {i}" for i in range(n)])
    frame["record"] = np.arange(n)
    others = _records(rng, int(rng.integers(n, 3 * n)), missing=seed % 2 == 1)
    population = pd.concat([frame[list(QUASI_IDENTIFIERS)], others[list(QUASI_IDENTIFIERS)]], ignore_index=True)
    return RandomTable(int(seed), frame, population.sample(frac=1.0, random_state=int(seed)).reset_index(drop=True))


def _records(rng: np.random.Generator, n: int, missing: bool = False) -> pd.DataFrame:
    centres = rng.choice(np.arange(22, 58), size=3, replace=False)
    age = np.clip(rng.choice(centres, size=n) + rng.integers(-4, 5, size=n), AGES.start, AGES.stop - 1)
    zips = rng.choice(ZIPS, size=n, p=_skewed(rng, len(ZIPS)))
    sex = rng.choice(["F", "M"], size=n, p=[0.6, 0.4])
    disease = rng.choice(DISEASES, size=n, p=_skewed(rng, len(DISEASES)))
    # A salary that depends on age a little, so classes differ in their salaries.
    salary = np.clip((age - 15) // 6 + rng.integers(-2, 3, size=n), SALARIES.start, SALARIES.stop - 1)
    frame = pd.DataFrame({"age": age.astype(np.int64), "zip": zips, "sex": sex, "disease": disease,
                          "salary": salary.astype(np.int64)})
    if missing:
        frame["zip"] = frame["zip"].astype(object).where(rng.random(n) > 0.08, None)
        frame["disease"] = frame["disease"].astype(object).where(rng.random(n) > 0.04, None)
        frame["salary"] = frame["salary"].astype(float).where(rng.random(n) > 0.08, np.nan)
    return frame


def _disease_hierarchy(rng: np.random.Generator) -> Hierarchy:
    """The diseases in two or three random groups, under a single root ``*`` or not (then
    hierarchical t-closeness puts a root of its own above the groups)."""
    groups = rng.integers(0, int(rng.integers(2, 4)), size=len(DISEASES))
    groups[:2] = [0, 1]  # two groups at least
    root = ["*"] if rng.random() < 0.5 else []
    return Hierarchy([[d, f"group {g}", *root] for d, g in zip(DISEASES, groups)], name="diseases")


def _skewed(rng: np.random.Generator, m: int) -> np.ndarray:
    weights = rng.dirichlet(np.full(m, 0.8)) + 0.02
    return weights / weights.sum()


def weighted(dataset: Dataset) -> Dataset:
    """``dataset`` summarized by the distinct rows of its quasi-identifiers and sensitive columns,
    each with the number of records holding it (what the Spark engine collects,
    :class:`~veil.engines.FrequencyDataset`); the distinct rows in a shuffled order.
    """
    from veil.engines.frequency import FrequencyDataset

    read = list(dict.fromkeys(list(dataset.quasi_identifiers) + list(dataset.sensitive)))
    frame = dataset.table.data.select(read).to_pandas()
    grouped = frame.groupby(read, dropna=False, sort=False).size().reset_index(name="__records")
    grouped = grouped.sample(frac=1.0, random_state=len(grouped)).reset_index(drop=True)
    distinct = pa.Table.from_pandas(grouped[read], preserve_index=False)
    return FrequencyDataset(distinct, grouped["__records"].to_numpy(), columns=dataset.columns,
                            kind=dataset.table.kind, quasi_identifiers=dataset.quasi_identifiers,
                            sensitive=dataset.sensitive, identifying=dataset.identifying,
                            hierarchies=dataset.hierarchies, orders=dataset.orders)
