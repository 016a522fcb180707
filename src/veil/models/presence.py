"""Presence (membership) models, measured against a population table: δ-presence and k-map.

The released table T is a sample of a public population P (a voter list, a census extract). An
adversary who knows a person of P and the release learns whether that person is in T from how
many released records and how many population records share the person's generalized
quasi-identifiers. Both models match each class of the release with the population records
generalized to the same node (:func:`veil.classes.match_population`).
"""

from __future__ import annotations

import os

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts, match_population, population_view
from veil.data.dataset import Dataset
from veil.models.base import TOLERANCE, PrivacyModel, require


class _PopulationModel(PrivacyModel):
    """A model that reads, per class, the number of population records it matches."""

    needs_sensitive = False

    def __init__(self, population: Dataset | str | os.PathLike, threshold: float | None):
        super().__init__(threshold)
        require(isinstance(population, (Dataset, str, os.PathLike)),
                f"the population is a veil.Dataset or the path of a table, not {type(population).__name__}.")
        self.population = population
        # The population read with a sample's roles and hierarchies, built once per sample: a
        # search evaluates the model on many nodes of the same dataset.
        self._views: dict[int, tuple[Dataset, Dataset]] = {}
        self._read: Dataset | None = None

    def _population(self, sample: Dataset) -> Dataset:
        """The population as a dataset (a path is read once, with the sample's quasi-identifiers)."""
        if isinstance(self.population, Dataset):
            return self.population
        if self._read is None:
            self._read = Dataset(self.population, quasi_identifiers=sample.quasi_identifiers,
                                 missing_values=sample.missing_values)
        return self._read

    def population_sizes(self, classes: EquivalenceClasses) -> np.ndarray:
        """Per class, the population records with the same generalized quasi-identifiers.

        Raises:
            DataError: the population cannot be read, lacks a quasi-identifier or does not cover
                the table.
            HierarchyError: a hierarchy of the table does not cover a value of the population.
        """
        sample = classes.dataset
        cached = self._views.get(id(sample))
        if cached is None or cached[0] is not sample:
            cached = (sample, population_view(sample, self._population(sample)))
            self._views[id(sample)] = cached
        return match_population(classes, cached[1])[0]


class DeltaPresence(_PopulationModel):
    """(δmin, δmax)-presence (Nergiz, Atzori and Clifton, "Hiding the presence of individuals
    from shared databases", SIGMOD 2007).

    A release T* of a sample T of the population P is δ-present when, for every person t of P
    whose generalized tuple is published, δmin ≤ P(t ∈ T | T*) ≤ δmax. The adversary's
    probability for a person in a class is f / F: the class's released records over the
    population records generalized to the same tuple. A class's level is f / F; the table's
    level is the largest.

    Args:
        population: the population table (every quasi-identifier of the sample, raw values): a
            :class:`~veil.data.dataset.Dataset`, or the path of a table (read on first use).
        delta_max: the largest probability allowed, in [0, 1], or ``None`` to measure only.
        delta_min: the smallest probability allowed, in [0, ``delta_max``].

    Raises:
        ParameterError: ``delta_max`` outside [0, 1], ``delta_min`` outside [0, ``delta_max``], or a
            population that is neither a dataset nor a path.
    """

    name = "δ-presence"
    key = "delta_presence"
    higher_is_better = False

    def __init__(self, population: Dataset, delta_max: float | None = None, delta_min: float = 0.0):
        require(delta_max is None or 0 <= delta_max <= 1, f"δmax must be in [0, 1], not {delta_max}.")
        upper = 1.0 if delta_max is None else delta_max
        require(0 <= delta_min <= upper, f"δmin must be in [0, δmax], not {delta_min}.")
        super().__init__(population, delta_max)
        self.delta_min = float(delta_min)
        # Merging classes averages their f / F, so a ceiling alone is kept by generalization; a
        # floor is not (Nergiz et al. Section 4).
        self.monotonic = self.delta_min == 0

    def __repr__(self) -> str:
        return f"DeltaPresence(delta_max={self.threshold}, delta_min={self.delta_min})"

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        return classes.sizes / self.population_sizes(classes)

    def class_passed(self, classes: EquivalenceClasses, levels: np.ndarray) -> np.ndarray | None:
        passed = super().class_passed(classes, levels)
        if passed is None or self.delta_min == 0:
            return passed
        return passed & (levels >= self.delta_min - TOLERANCE)


class KMap(_PopulationModel):
    """k-map (Sweeney, "Computational disclosure control", 2001; El Emam and Dankar 2008).

    Every class of the release matches at least ``k`` records of the population, so a person
    linked to a released record through the population is one of at least ``k``. A class's level
    is its number of population matches F; the table's level is the smallest.

    Args:
        population: the population table (every quasi-identifier of the sample, raw values): a
            :class:`~veil.data.dataset.Dataset`, or the path of a table (read on first use).
        k: the threshold, or ``None`` to measure only.

    Raises:
        ParameterError: ``k`` < 1, or a population that is neither a dataset nor a path.
    """

    name = "k-map"
    key = "k_map"
    monotonic_with_suppression = True  # a merged class matches the population records of its parts

    def __init__(self, population: Dataset, k: int | None = None):
        require(k is None or k >= 1, f"k must be at least 1, not {k}.")
        super().__init__(population, k)

    def __repr__(self) -> str:
        return f"KMap(k={self.threshold})"

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        return self.population_sizes(classes).astype(float)
