"""The contract every privacy model keeps, checked on random tables (:func:`check_model`).

A model is registered as a :class:`ModelCase`: a name and a factory ``make(table, threshold)``
that builds the model for a :class:`~veil.conformance.tables.RandomTable` (its population, its
earlier release) at a threshold (``None``: measure only), with a default threshold in the
factory's signature. :data:`MODELS` lists every model of veil and every parameter that changes how
it behaves; a new model joins with one line there. On every node of the random tables'
generalization lattices the check requires that:

* **the level and the verdict agree**: a class passes only if its level meets the threshold, and
  (for a model whose verdict is its level's, ``level_decides``) every class whose level meets it
  passes; the table passes when every class does; at a threshold equal to the measured level the
  model passes unless it is strict (δ-disclosure), and a hair either side it passes or fails;
* **the level is the worst class's**, and measuring without a threshold gives the same levels;
* **monotonicity is declared truthfully**: a model declared ``monotonic`` passes every
  generalization of a node it passes (its level never worsens along an edge of the lattice,
  when its verdict is its level's), and one declared ``monotonic_with_suppression`` never has
  more records in failing classes after a generalization; a model that declares neither is not
  held to them, and the check reports a counterexample it met, which shows the declaration is
  needed;
* **records and counts agree**: the table summarized by its distinct rows and their counts
  (what the Spark engine collects) gives every class the same size, level and verdict;
* **bad parameters** (a threshold of −1 or NaN, and the case's own) raise a
  :class:`~veil.errors.ParameterError` of one sentence.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from veil.classes import EquivalenceClasses
from veil.conformance.base import ConformanceError, one_sentence
from veil.conformance.tables import RandomTable, random_table, weighted
from veil.errors import ParameterError, VeilError
from veil.models import (AlphaKAnonymity, BetaLikeness, DeltaDisclosure, DeltaPresence, DistinctLDiversity,
                         EntropyLDiversity, JoinKAnonymity, KAnonymity, KMap, ModelResult, PrivacyModel,
                         RecursiveCLDiversity, TCloseness)
from veil.models.risk import AverageRisk, RecordsAtRisk
from veil.models.uniqueness import PopulationUniqueness

#: Two levels closer than this (relative) are taken as equal: a level is a float computed two ways.
CLOSE = 1e-9
#: A class level this close (relative) to the threshold is not judged by the verdict check (the
#: models allow for rounding there); the threshold-at-the-level check judges the boundary instead.
BAND = 1e-7
#: How far from the measured level the thresholds a hair either side of it are (relative).
HAIR = 1e-6


@dataclass(frozen=True)
class ModelCase:
    """A privacy model as the suite builds it.

    Attributes:
        name: the case's name (the test's id).
        make: ``make(table, threshold)`` builds the model for a
            :class:`~veil.conformance.tables.RandomTable`; ``threshold=None`` measures only, and
            the factory's default for ``threshold`` is the one the suite checks with.
        level_decides: whether the verdict is the level's alone (False for a model with a second
            condition, such as the k of (α,k)-anonymity).
        invalid: more bad constructions, each ``call(table)``, that must raise a one-sentence
            :class:`~veil.errors.ParameterError`.
    """

    name: str
    make: Callable[..., PrivacyModel]
    level_decides: bool = True
    invalid: Sequence[Callable[[RandomTable], object]] = ()

    def __str__(self) -> str:
        return self.name


#: Every privacy model of veil, with each parameter that changes how it behaves.
MODELS = [
    ModelCase("k-anonymity", lambda t, threshold=3: KAnonymity(threshold)),
    ModelCase("(α,k)-anonymity", lambda t, threshold=0.6: AlphaKAnonymity(threshold)),
    ModelCase("(α,k)-anonymity with k", lambda t, threshold=0.6: AlphaKAnonymity(threshold, k=3), level_decides=False,
              invalid=[lambda t: AlphaKAnonymity(0.5, k=0)]),
    ModelCase("simple (α,k)-anonymity", lambda t, threshold=0.4: AlphaKAnonymity(threshold, sensitive="disease",
                                                                                  value="flu")),
    ModelCase("distinct ℓ-diversity", lambda t, threshold=2: DistinctLDiversity(threshold)),
    ModelCase("distinct ℓ-diversity of one column", lambda t, threshold=3: DistinctLDiversity(threshold, "disease")),
    ModelCase("entropy ℓ-diversity", lambda t, threshold=1.8: EntropyLDiversity(threshold)),
    ModelCase("recursive (c,ℓ)-diversity", lambda t, threshold=2: RecursiveCLDiversity(3.0, threshold),
              invalid=[lambda t: RecursiveCLDiversity(0.0, 2)]),
    ModelCase("recursive (1,ℓ)-diversity", lambda t, threshold=1: RecursiveCLDiversity(1.0, threshold)),
    ModelCase("t-closeness, equal distance", lambda t, threshold=0.3: TCloseness(threshold, "equal"),
              invalid=[lambda t: TCloseness(1.5), lambda t: TCloseness(0.3, "euclidean")]),
    ModelCase("t-closeness, ordered distance", lambda t, threshold=0.2: TCloseness(threshold, "ordered")),
    ModelCase("t-closeness, hierarchical distance", lambda t, threshold=0.3: TCloseness(threshold, "hierarchical")),
    ModelCase("δ-disclosure privacy", lambda t, threshold=1.0: DeltaDisclosure(threshold),
              invalid=[lambda t: DeltaDisclosure(0)]),
    ModelCase("basic β-likeness", lambda t, threshold=1.0: BetaLikeness(threshold),
              invalid=[lambda t: BetaLikeness(0)]),
    ModelCase("enhanced β-likeness", lambda t, threshold=1.0: BetaLikeness(threshold, enhanced=True)),
    ModelCase("δ-presence", lambda t, threshold=0.6: DeltaPresence(t.population, threshold),
              invalid=[lambda t: DeltaPresence(t.population, 1.5)]),
    ModelCase("δ-presence with a floor", lambda t, threshold=0.6: DeltaPresence(t.population, threshold, 0.1),
              level_decides=False, invalid=[lambda t: DeltaPresence(t.population, 0.5, 0.7)]),
    ModelCase("k-map", lambda t, threshold=4: KMap(t.population, threshold)),
    ModelCase("join k-anonymity", lambda t, threshold=2: JoinKAnonymity(t.earlier, threshold)),
    ModelCase("join k-anonymity with ℓ", lambda t, threshold=2: JoinKAnonymity(t.earlier, threshold, l=2),
              level_decides=False, invalid=[lambda t: JoinKAnonymity(t.earlier, 2, l=0)]),
    ModelCase("population uniqueness", lambda t, threshold=0.01: PopulationUniqueness(threshold, 5_000),
              invalid=[lambda t: PopulationUniqueness(0.01, 10).evaluate(EquivalenceClasses.from_dataset(t.dataset)),
                       lambda t: PopulationUniqueness(0.01, 5_000.5),
                       lambda t: PopulationUniqueness(0.01, 5_000, "chen")]),
    ModelCase("population uniqueness, SNB", lambda t, threshold=0.1: PopulationUniqueness(threshold, 150, "snb")),
    ModelCase("average risk", lambda t, threshold=0.3: AverageRisk(threshold),
              invalid=[lambda t: AverageRisk(1.5), lambda t: AverageRisk(0.1, method="bayes")]),
    ModelCase("records at risk", lambda t, threshold=0.1: RecordsAtRisk(0.4, threshold),
              invalid=[lambda t: RecordsAtRisk(-0.1, 0.1)]),
]


@dataclass(frozen=True)
class ModelCheck:
    """What :func:`check_model` checked.

    Attributes:
        name: the case's name.
        tables: the number of random tables.
        evaluations: the number of evaluations of the model.
        counterexample: for a model declared not monotonic, a generalization that fails above a
            node that passes, when one was met (a sentence), else ``None``.
    """

    name: str
    tables: int
    evaluations: int
    counterexample: str | None


@lru_cache(maxsize=16)
def _table(seed: int) -> RandomTable:
    return random_table(seed)


@lru_cache(maxsize=16)
def _lattice(seed: int) -> dict[tuple[int, ...], EquivalenceClasses]:
    """The classes of every node of the random table's lattice."""
    dataset = _table(seed).dataset
    heights = [dataset.generalizations[q].height for q in dataset.quasi_identifiers]
    return {node: EquivalenceClasses.from_dataset(dataset, node)
            for node in itertools.product(*(range(h + 1) for h in heights))}


@lru_cache(maxsize=16)
def _weighted(seed: int) -> RandomTable:
    table = _table(seed)
    return table.with_dataset(weighted(table.dataset))


def check_model(case: ModelCase, seeds: Sequence[int] = range(3)) -> ModelCheck:
    """Check a privacy model against the contract of the module notes on random tables.

    Args:
        case: the model (:class:`ModelCase`).
        seeds: the seeds of the random tables.

    Returns:
        What was checked (the returned ModelCheck).

    Raises:
        ConformanceError: a property is broken (the error names it).
        ValueError: the case's factory gives no threshold by default.
    """
    evaluations, counterexample = 0, None
    for seed in seeds:
        table, lattice = _table(seed), _lattice(seed)
        subject = f"{case.name} (table {seed})"
        model = case.make(table)
        if model.threshold is None:
            raise ValueError(f"the factory of {case.name} must give a threshold by default.")
        _check_parameters(case, table, subject)
        if model.monotonic_with_suppression and not model.monotonic:
            raise ConformanceError(subject, "declaration", "monotonic_with_suppression is set but monotonic is not")
        results = {node: model.evaluate(classes) for node, classes in lattice.items()}
        evaluations += len(results)
        for node, result in results.items():
            _check_verdict(case, model, result, lattice[node], f"{subject} at node {node}")
        evaluations += _check_boundaries(case, table, model, results, lattice, subject)
        evaluations += _check_measure_only(case, table, results, lattice, subject)
        found, more = _check_monotonic(case, table, model, results, lattice, subject)
        evaluations += more
        counterexample = counterexample or found
        evaluations += _check_weighted(case, seed, model, results, subject)
    return ModelCheck(case.name, len(seeds), evaluations, counterexample)


# --------------------------------------------------------------------------- the checks

def _check_parameters(case: ModelCase, table: RandomTable, subject: str) -> None:
    for bad in (-1, math.nan):
        one_sentence(subject, lambda: case.make(table, bad), f"threshold {bad}")
    for i, call in enumerate(case.invalid):
        one_sentence(subject, lambda: call(table), f"its bad construction #{i + 1}")


def _worst(levels: np.ndarray, higher_is_better: bool) -> float:
    if not len(levels):
        return math.nan
    return float(levels.min() if higher_is_better else levels.max())


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= CLOSE * max(1.0, abs(a), abs(b))


def _same_levels(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and all(_same(x, y) for x, y in zip(a, b))


def _meets(higher_is_better: bool, level: float, threshold: float) -> bool | None:
    """Whether ``level`` meets ``threshold``; ``None`` within :data:`BAND` of it."""
    if abs(level - threshold) <= BAND * max(1.0, abs(threshold)):
        return None
    return level > threshold if higher_is_better else level < threshold


def _check_verdict(case: ModelCase, model: PrivacyModel, result: ModelResult, classes: EquivalenceClasses,
                   subject: str) -> None:
    levels = np.asarray(result.class_levels, dtype=float)
    if levels.shape != (classes.n_classes,):
        raise ConformanceError(subject, "level", f"{levels.shape} class levels for {classes.n_classes} classes")
    worst = _worst(levels, model.higher_is_better)
    if not _same(result.level, worst):
        raise ConformanceError(subject, "level", f"the level is {result.level} but the worst class's is {worst}")
    passed = result.class_passed
    if passed is None or np.shape(passed) != levels.shape:
        raise ConformanceError(subject, "verdict", "with a threshold, there is no verdict per class")
    if result.passed != bool(np.all(passed)):
        raise ConformanceError(subject, "verdict", f"the table's verdict is {result.passed} but "
                                                   f"{int(np.sum(~passed))} of {len(passed)} classes fail")
    for c, (level, ok) in enumerate(zip(levels, passed)):
        meets = _meets(model.higher_is_better, level, model.threshold)
        if meets is False and ok:
            raise ConformanceError(subject, "verdict", f"class {c} passes at level {level:g} against the threshold "
                                                       f"{model.threshold:g}")
        if meets and not ok and case.level_decides:
            raise ConformanceError(subject, "verdict", f"class {c} fails at level {level:g} against the threshold "
                                                       f"{model.threshold:g}")


def _check_boundaries(case: ModelCase, table: RandomTable, model: PrivacyModel, results: dict, lattice: dict,
                      subject: str) -> int:
    """At a threshold equal to a node's level the model passes unless strict; a hair stricter it
    fails, a hair laxer it passes (models whose verdict is their level's)."""
    if not case.level_decides:
        return 0
    seen, evaluations = set(), 0
    for node, result in results.items():
        level = result.level
        if not math.isfinite(level) or level in seen:
            continue
        seen.add(level)
        hair = HAIR * max(1.0, abs(level))
        stricter, laxer = (level + hair, level - hair) if model.higher_is_better else (level - hair, level + hair)
        for threshold, expected in ((level, not model.strict), (stricter, False), (laxer, True)):
            try:
                twin = case.make(table, threshold)
            except ParameterError:
                continue  # a threshold the model does not take (δ = 0, α above 1)
            evaluations += 1
            try:
                verdict = twin.evaluate(lattice[node]).passed
            except VeilError:
                continue  # a threshold the data does not allow (join k above the earlier release's classes)
            if verdict != expected:
                where = "at" if threshold == level else ("a hair stricter than" if threshold == stricter
                                                           else "a hair laxer than")
                raise ConformanceError(f"{subject} at node {node}", "verdict",
                                       f"the table {'passes' if verdict else 'fails'} {where} its own level "
                                       f"{level:.17g}" + (" (the model is strict)" if model.strict else ""))
        if len(seen) >= 6:
            break
    return evaluations


def _check_measure_only(case: ModelCase, table: RandomTable, results: dict, lattice: dict, subject: str) -> int:
    measuring = case.make(table, None)
    nodes = list(results)[:: max(1, len(results) // 6)]
    for node in nodes:
        result = measuring.evaluate(lattice[node])
        if result.passed is not None or result.class_passed is not None or result.threshold is not None:
            raise ConformanceError(f"{subject} at node {node}", "measure-only",
                                   "it gives a verdict without a threshold")
        if not _same_levels(result.class_levels, results[node].class_levels) or \
                not _same(result.level, results[node].level):
            raise ConformanceError(f"{subject} at node {node}", "measure-only",
                                   f"level {result.level} without a threshold, {results[node].level} with one")
    return len(nodes)


def _edges(nodes) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every edge of the lattice: a node and a node one level higher in one column."""
    out = []
    for node in nodes:
        for j in range(len(node)):
            up = node[:j] + (node[j] + 1,) + node[j + 1:]
            if up in nodes:
                out.append((node, up))
    return out


def _check_monotonic(case: ModelCase, table: RandomTable, model: PrivacyModel, results: dict, lattice: dict,
                     subject: str) -> tuple[str | None, int]:
    """The declared monotonicity, on every edge of the lattice, at the model's threshold and at
    thresholds among the levels measured; returns a counterexample met for a model that does not
    declare monotonicity, and the evaluations made."""
    edges = _edges(results)
    counterexample = None
    better_or_equal = (lambda b, a: b >= a - CLOSE * max(1.0, abs(a))) if model.higher_is_better \
        else (lambda b, a: b <= a + CLOSE * max(1.0, abs(a)))
    if case.level_decides:
        for low, up in edges:
            a, b = results[low].level, results[up].level
            if math.isnan(a) or math.isnan(b) or better_or_equal(b, a):
                continue
            found = f"the level goes from {a:.6g} at node {low} to {b:.6g} at node {up}"
            if model.monotonic:
                raise ConformanceError(subject, "monotonic", found)
            counterexample = counterexample or f"{subject}: {found}"
    thresholds = [model.threshold]
    finite = sorted({r.level for r in results.values() if math.isfinite(r.level)})
    if finite and (model.monotonic_with_suppression or not case.level_decides):
        # The levels' check above covers every threshold of a model whose verdict is its level's;
        # what it cannot see (records in failing classes, a second condition) is swept here.
        thresholds += [finite[int(q * (len(finite) - 1))] for q in (0.2, 0.5, 0.8)]
    evaluations = 0
    for threshold in dict.fromkeys(thresholds):
        try:
            twin = model if threshold == model.threshold else case.make(table, threshold)
            swept = {node: results[node] if twin is model else twin.evaluate(classes)
                     for node, classes in lattice.items()}
        except VeilError:
            continue  # a threshold the model or the data does not allow (join k above the earlier release's)
        evaluations += 0 if twin is model else len(swept)
        failing = {node: int(lattice[node].sizes[~np.asarray(r.class_passed)].sum()) for node, r in swept.items()}
        for low, up in edges:
            if swept[low].passed and not swept[up].passed:
                found = f"at threshold {threshold:.6g} node {low} passes and node {up} above it fails"
                if model.monotonic:
                    raise ConformanceError(subject, "monotonic", found)
                counterexample = counterexample or f"{subject}: {found}"
            if model.monotonic_with_suppression and failing[up] > failing[low]:
                raise ConformanceError(subject, "monotonic-suppression",
                                       f"at threshold {threshold:.6g}, {failing[low]} records fail at node {low} and "
                                       f"{failing[up]} at node {up} above it")
    return counterexample, evaluations


def _labelled(result: ModelResult, classes: EquivalenceClasses) -> dict[tuple, tuple]:
    """Per class, by its generalized values: its size, level and verdict."""
    labels = classes.class_labels()
    keys = [tuple(str(v) for v in row) for row in labels.drop(columns="size").itertuples(index=False)]
    return {key: (int(size), float(level), None if result.class_passed is None else bool(ok))
            for key, size, level, ok in zip(keys, labels["size"],
                                            result.class_levels,
                                            result.class_passed if result.class_passed is not None
                                            else [None] * len(keys))}


def _check_weighted(case: ModelCase, seed: int, model: PrivacyModel, results: dict, subject: str) -> int:
    summary = _weighted(seed).dataset
    nodes = list(results)
    chosen = [nodes[0], nodes[-1]] + nodes[1:-1][:: max(1, (len(nodes) - 2) // 6)]
    for node in chosen:
        records = _labelled(results[node], _lattice(seed)[node])
        classes = EquivalenceClasses.from_dataset(summary, node)
        result = model.evaluate(classes)
        counted = _labelled(result, classes)
        where = f"{subject} at node {node}"
        if set(records) != set(counted):
            raise ConformanceError(where, "weighted", f"{len(counted)} classes from the counts, {len(records)} from "
                                                      "the records")
        for key, (size, level, ok) in records.items():
            size_w, level_w, ok_w = counted[key]
            if size != size_w or not _same(level, level_w) or ok != ok_w:
                raise ConformanceError(where, "weighted", f"class {key}: size {size}, level {level:g}, verdict {ok} "
                                                          f"from the records; {size_w}, {level_w:g}, {ok_w} from the "
                                                          "counts")
        if result.passed != results[node].passed or not _same(result.level, results[node].level):
            raise ConformanceError(where, "weighted", f"level {results[node].level:g} from the records, "
                                                      f"{result.level:g} from the counts")
    return len(chosen)
