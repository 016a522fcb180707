"""The contract every anonymization algorithm keeps, checked on random tables (:func:`check_anonymizer`).

An algorithm is registered as an :class:`AnonymizerCase`: a name and a factory ``make(table)``
that builds the (unfitted) anonymizer, with its privacy models, for a
:class:`~veil.conformance.tables.RandomTable`. :data:`ANONYMIZERS` lists every algorithm of veil
with several combinations of models and suppression limits; a new algorithm or combination joins
with one line there. On every random table the anonymizer can anonymize (a table no release can
satisfy must be refused with an :class:`~veil.errors.InfeasibleError` of one sentence) the check
fits it once and publishes the release three times: shuffled from a seed, in the input's order,
and shuffled from the secure source. It requires that:

* **the published table satisfies the models** the release names (the configured ones and any an
  algorithm adds), measured on the published table as ``veil check`` measures a release: its
  classes are the rows that print alike, rows published as ``*`` are the suppressed records when
  the release shows them, and t-closeness, δ-disclosure and β-likeness compare with the input
  table's distribution; presence models match a population published at the release's node;
* **no record is invented or lost** but the suppressed ones, which the manifest counts, within the
  suppression limit: every published row comes from one input record, whose columns other than
  the quasi-identifiers it publishes unchanged (identifying columns are dropped), and the input
  is left as it was;
* **the output is a shuffle**: the input-order release lists the records in their input order,
  the shuffled release holds the same rows in another order, and the manifest names the order
  (seeded, secure, input);
* **the manifest matches the release**: its rows, columns, roles, suppressed records, released
  classes and smallest class, the level and verdict of every model re-measured on the published
  table, and (for a full-domain release) a node whose hierarchy levels hold every published value;
* **bad parameters** (the case's own, a transform before fit, an unknown suppression style) raise
  a :class:`~veil.errors.ParameterError` of one sentence.

What does not apply: the αβ algorithm (:class:`~veil.anonymize.AlphaBeta`) publishes a randomized
view that adds tuples by design and satisfies no syntactic model, so it keeps a contract of its
own (an unbiased estimator; its tests).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from veil.anonymize import MDAV, Ace, FullDomain, Mondrian
from veil.classes import STAR, EquivalenceClasses
from veil.conformance.base import ConformanceError, is_one_sentence, one_sentence
from veil.conformance.tables import QUASI_IDENTIFIERS, RandomTable, random_table
from veil.data.dataset import Dataset
from veil.errors import InfeasibleError
from veil.manifests import combined
from veil.models import (BetaLikeness, DeltaDisclosure, DeltaPresence, DistinctLDiversity, EntropyLDiversity,
                         JoinKAnonymity, KAnonymity, KMap, RecursiveCLDiversity, TCloseness)


@dataclass(frozen=True)
class AnonymizerCase:
    """An anonymization algorithm as the suite builds it.

    Attributes:
        name: the case's name (the test's id).
        make: ``make(table)`` builds the unfitted anonymizer for a
            :class:`~veil.conformance.tables.RandomTable`.
        suppressed: how the releases show suppressed records: ``"remove"`` or ``"star"``.
        invalid: bad constructions or calls, each ``call(table)``, that must raise a one-sentence
            :class:`~veil.errors.ParameterError`.
    """

    name: str
    make: Callable[[RandomTable], object]
    suppressed: str = "remove"
    invalid: Sequence[Callable[[RandomTable], object]] = ()

    def __str__(self) -> str:
        return self.name


def _join(t: RandomTable, k: int) -> JoinKAnonymity:
    """Join k-anonymity with the earlier release, joining texts at their common hierarchy level
    (the published table, read back, has no hierarchies of its own)."""
    return JoinKAnonymity(t.earlier, k, hierarchies={q: t.hierarchies[q] for q in ("age", "sex")})


#: Every anonymization algorithm of veil, with several combinations of models and suppression limits.
ANONYMIZERS = [
    AnonymizerCase("full-domain, k-anonymity", lambda t: FullDomain([KAnonymity(3)]),
                   invalid=[lambda t: FullDomain([]), lambda t: FullDomain([KAnonymity(3)], suppression_limit=1.5),
                            lambda t: FullDomain([KAnonymity(None)]),
                            lambda t: FullDomain([KAnonymity(10_000)]).fit(t.dataset)]),
    AnonymizerCase("full-domain, k, ℓ and suppression", lambda t: FullDomain(
        [KAnonymity(3), DistinctLDiversity(2, "disease")], suppression_limit=0.1)),
    AnonymizerCase("full-domain, t-closeness and δ-disclosure", lambda t: FullDomain(
        [KAnonymity(2), TCloseness(0.35, "hierarchical"), DeltaDisclosure(1.5)], suppression_limit=0.05)),
    AnonymizerCase("full-domain, entropy ℓ and β-likeness, heuristic", lambda t: FullDomain(
        [EntropyLDiversity(1.6, "disease"), BetaLikeness(2.0, sensitive="disease")], suppression_limit=0.1,
        search="heuristic", metric="discernibility")),
    AnonymizerCase("full-domain, k-map and δ-presence", lambda t: FullDomain(
        [KMap(t.population, 3), DeltaPresence(t.population, 0.7)], suppression_limit=0.1)),
    AnonymizerCase("full-domain, join k-anonymity", lambda t: FullDomain([KAnonymity(2), _join(t, 2)])),
    AnonymizerCase("full-domain, suppressed shown as *", lambda t: FullDomain(
        [KAnonymity(4), RecursiveCLDiversity(3.0, 2, "disease")], suppression_limit=0.15), suppressed="star"),
    AnonymizerCase("strict Mondrian, k-anonymity", lambda t: Mondrian([KAnonymity(3)]),
                   invalid=[lambda t: Mondrian([KAnonymity(3)], mode="loose"),
                            lambda t: Mondrian([KAnonymity(3)], categorical="alphabet")]),
    AnonymizerCase("relaxed Mondrian, k and entropy ℓ", lambda t: Mondrian(
        [KAnonymity(3), EntropyLDiversity(1.5, "disease")], mode="relaxed")),
    AnonymizerCase("Mondrian on value order, t-closeness", lambda t: Mondrian(
        [KAnonymity(2), TCloseness(0.4, "equal")], categorical="order")),
    AnonymizerCase("MDAV", lambda t: MDAV(k=3), invalid=[lambda t: MDAV(k=0), lambda t: MDAV()]),
    AnonymizerCase("MDAV, ℓ-diversity and suppression", lambda t: MDAV(
        [KAnonymity(3), DistinctLDiversity(2, "disease")], suppression_limit=0.1)),
    AnonymizerCase("MDAV, suppressed shown as *", lambda t: MDAV(
        [KAnonymity(2), DeltaDisclosure(1.2, "disease")], suppression_limit=0.2), suppressed="star"),
    AnonymizerCase("Ace", lambda t: Ace(l=2, sensitive="disease", rng=t.seed),
                   invalid=[lambda t: Ace(l=0), lambda t: Ace([KAnonymity(2)])]),
]


@dataclass(frozen=True)
class AnonymizerCheck:
    """What :func:`check_anonymizer` checked.

    Attributes:
        name: the case's name.
        releases: the number of random tables anonymized.
        infeasible: the number of random tables refused as infeasible.
        suppressed: the records suppressed over all the releases.
    """

    name: str
    releases: int
    infeasible: int
    suppressed: int


def check_anonymizer(case: AnonymizerCase, seeds: Sequence[int] = range(3)) -> AnonymizerCheck:
    """Check an anonymization algorithm against the contract of the module notes on random tables.

    Args:
        case: the algorithm (:class:`AnonymizerCase`).
        seeds: the seeds of the random tables.

    Returns:
        What was checked (the returned AnonymizerCheck).

    Raises:
        ConformanceError: a property is broken (the error names it).
        ValueError: no random table could be anonymized (the case asks too much of them).
    """
    releases = infeasible = suppressed = 0
    for seed in seeds:
        table = random_table(seed)
        subject = f"{case.name} (table {seed})"
        _check_parameters(case, table, subject)
        frame = table.frame.copy()
        anonymizer = case.make(table)
        try:
            anonymizer.fit(table.dataset)
        except InfeasibleError as exc:
            if not is_one_sentence(str(exc)):
                raise ConformanceError(subject, "parameters", f"an infeasible table gives {str(exc)!r}") from None
            infeasible += 1
            continue
        shuffled = anonymizer.transform(table.dataset, suppressed=case.suppressed, rng=np.random.default_rng(seed))
        kept = anonymizer.transform(table.dataset, suppressed=case.suppressed, shuffle=False)
        secure = anonymizer.transform(table.dataset, suppressed=case.suppressed)
        if not table.frame.equals(frame):
            raise ConformanceError(subject, "records", "the input table was modified")
        published = _published(shuffled)
        _check_records(case, table, anonymizer, shuffled, published, subject)
        _check_shuffle(table, shuffled, kept, secure, published, subject)
        measured = _measure(table, shuffled)
        _check_satisfied(anonymizer, measured, subject)
        _check_manifest(table, shuffled, published, measured, subject)
        releases += 1
        suppressed += shuffled.suppressed_records
    if not releases:
        raise ValueError(f"{case.name}: no random table could be anonymized; ask less of them.")
    return AnonymizerCheck(case.name, releases, infeasible, suppressed)


# --------------------------------------------------------------------------- the checks

def _check_parameters(case: AnonymizerCase, table: RandomTable, subject: str) -> None:
    for i, call in enumerate(case.invalid):
        one_sentence(subject, lambda: call(table), f"its bad construction #{i + 1}")
    one_sentence(subject, lambda: case.make(table).transform(table.dataset), "a transform before fit")


def _published(release) -> pd.DataFrame:
    """The published table as text (what a reader of its CSV file sees)."""
    data = release.data
    return _text(data if isinstance(data, pd.DataFrame) else release.table.to_pandas())


def _text(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell as its text, a missing one as the empty text (as a CSV file writes it)."""
    cells = frame.astype(object)
    return cells.where(cells.notna(), "").map(str)


def _check_records(case: AnonymizerCase, table: RandomTable, anonymizer, release, published: pd.DataFrame,
                   subject: str) -> None:
    dataset, n = table.dataset, len(table.frame)
    columns = [c for c in table.frame.columns if c not in dataset.identifying]
    if list(published.columns) != columns:
        raise ConformanceError(subject, "records", f"it publishes the columns {list(published.columns)}, not {columns}")
    record = published["record"].astype(int).to_numpy()
    if len(np.unique(record)) != len(record) or not np.isin(record, np.arange(n)).all():
        raise ConformanceError(subject, "records", "a published row is no input record, or two are the same")
    lost = n - len(record)
    if case.suppressed == "star":
        lost = int(_all_star(published).sum()) if release.suppressed_records else 0
    if lost != release.suppressed_records:
        raise ConformanceError(subject, "records", f"{lost} records are missing or shown as '{STAR}', and the release "
                                                   f"counts {release.suppressed_records} suppressed")
    limit = getattr(anonymizer, "suppression_limit", 0.0)
    if lost > math.floor(limit * n + 1e-9):
        raise ConformanceError(subject, "records", f"{lost} of {n} records are suppressed, above the limit {limit:g}")
    source = _text(table.frame).iloc[record].reset_index(drop=True)
    kept_as_is = [c for c in columns if c not in dataset.quasi_identifiers]
    differs = (source[kept_as_is].to_numpy() != published[kept_as_is].to_numpy()).any(axis=1)
    if differs.any():
        row = int(np.flatnonzero(differs)[0])
        raise ConformanceError(subject, "records", f"published row {row} (record {record[row]}) changes a column it "
                                                   "should publish as it is")


def _all_star(published: pd.DataFrame) -> np.ndarray:
    return (published[list(QUASI_IDENTIFIERS)] == STAR).all(axis=1).to_numpy()


def _rows(frame: pd.DataFrame) -> list[tuple]:
    return sorted(frame.itertuples(index=False, name=None))


def _check_shuffle(table: RandomTable, shuffled, kept, secure, published: pd.DataFrame, subject: str) -> None:
    in_order = _published(kept)
    order = in_order["record"].astype(int).to_numpy()
    if not (np.diff(order) > 0).all():
        raise ConformanceError(subject, "shuffle", "the release in input order does not list the records in it")
    for name, release, frame in (("seeded", shuffled, published), ("secure", secure, _published(secure))):
        if _rows(frame) != _rows(in_order):
            raise ConformanceError(subject, "shuffle", f"the {name} shuffle publishes other rows than the release in "
                                                       "input order")
        if len(order) >= 10 and np.array_equal(frame["record"].astype(int).to_numpy(), order):
            raise ConformanceError(subject, "shuffle", f"the {name} shuffle keeps the input order")
    for release, order_name in ((shuffled, "seeded shuffle"), (kept, "input order"), (secure, "secure shuffle")):
        if release.row_order != order_name:
            raise ConformanceError(subject, "shuffle", f"a release in {order_name} says its order is "
                                                       f"{release.row_order!r}")
    if shuffled.manifest["output"]["order"] != shuffled.row_order:
        raise ConformanceError(subject, "manifest", f"it says the order is {shuffled.manifest['output']['order']!r}")


def _measure(table: RandomTable, release) -> dict:
    """The release's models measured on the published table, as ``veil check`` measures a
    release (see the module notes): its classes, its models and a result per model."""
    dataset = table.dataset
    # The sensitive columns are published as they are, so their hierarchies apply to the release too.
    reader = Dataset(release.data, quasi_identifiers=list(dataset.quasi_identifiers),
                     sensitive=list(dataset.sensitive),
                     hierarchies={name: table.hierarchies[name] for name in dataset.sensitive})
    classes = EquivalenceClasses.from_dataset(reader)
    if release.suppressed_style == "star" and release.suppressed_records:
        classes = classes.subset(~classes.printed_as(STAR))
    reference = {name: {str(label): int(count) for label, count in
                        zip(dataset.column(name).labels, dataset.column(name).counts()) if count}
                 for name in dataset.sensitive}
    classes = classes.with_reference(reference)
    results = [_reader_model(table, release, model).evaluate(classes) if classes.n_classes else None
               for model in release.models]
    return {"classes": classes, "models": list(release.models), "results": results}


def _reader_model(table: RandomTable, release, model):
    """The model as a reader of the release evaluates it: a presence model matches the population
    generalized to the release's node through the (public) hierarchies."""
    if not isinstance(model, (DeltaPresence, KMap)):
        return model
    node = release.manifest.get("node") or {}
    qis = list(QUASI_IDENTIFIERS)
    population = Dataset(table.population_frame, quasi_identifiers=qis,
                         hierarchies={q: table.hierarchies[q] for q in qis})
    published = pd.DataFrame({q: population.labels(q, node.get(q, 0))[population.generalized_codes(q, node.get(q, 0))]
                              for q in qis})
    reader = copy.copy(model)
    reader.population = Dataset(published, quasi_identifiers=qis)
    return reader


def _check_satisfied(anonymizer, measured: dict, subject: str) -> None:
    configured = {id(m) for m in getattr(anonymizer, "models", [])}
    for model, result in zip(measured["models"], measured["results"]):
        if result is not None and not result.passed:
            which = "configured" if id(model) in configured else "added by the algorithm"
            raise ConformanceError(subject, "satisfied", f"{model.name} ({which}) at {model.threshold:g} measures "
                                                         f"{result.level:g} on the published table")


def _check_manifest(table: RandomTable, release, published: pd.DataFrame, measured: dict, subject: str) -> None:
    # the curator's view: the published manifest with its private file's sections
    manifest, dataset = combined(release.manifest, getattr(release, "private_manifest", None)), table.dataset
    output, suppression = manifest["output"], manifest["suppression"]
    if not (output["rows"] == release.num_rows == len(published)):
        raise ConformanceError(subject, "manifest", f"it says {output['rows']} rows; {len(published)} are published")
    if output["columns"] != list(published.columns) or output["suppressed"] != release.suppressed_style:
        raise ConformanceError(subject, "manifest", f"it says the columns {output['columns']}")
    if suppression["records"] != release.suppressed_records:
        raise ConformanceError(subject, "manifest", f"it says {suppression['records']} suppressed records, the release "
                                                    f"{release.suppressed_records}")
    roles = manifest["roles"]
    if (roles["quasi_identifiers"], roles["sensitive"], roles["identifying"]) != \
            (dataset.quasi_identifiers, dataset.sensitive, dataset.identifying):
        raise ConformanceError(subject, "manifest", f"it says the roles {roles}")
    classes = measured["classes"]
    said = manifest.get("classes")
    smallest = int(classes.sizes.min()) if classes.n_classes else 0
    if said is not None and (said.get("released"), said.get("smallest")) != (classes.n_classes, smallest):
        raise ConformanceError(subject, "manifest", f"it says {said['released']} classes, the smallest of "
                                                    f"{said['smallest']}; the published table has {classes.n_classes}, "
                                                    f"the smallest of {smallest}")
    if len(manifest["models"]) != len(release.models):
        raise ConformanceError(subject, "manifest", f"it lists {len(manifest['models'])} models, the release has "
                                                    f"{len(release.models)}")
    for entry, model, result in zip(manifest["models"], release.models, measured["results"]):
        level = None if result is None else result.level
        said_level = entry["level"]
        said_level = math.inf if said_level == "inf" else said_level
        same = (level is None and said_level is None) or (
            level is not None and said_level is not None and
            (level == said_level or abs(level - said_level) <= 1e-9 * max(1.0, abs(level))))
        if entry["key"] != model.key or entry["threshold"] != model.threshold or not same \
                or entry["passed"] != (None if result is None else result.passed):
            raise ConformanceError(subject, "manifest", f"it says {model.name} reaches {entry['level']} "
                                                        f"({entry['passed']}); the published table measures {level}")
    node = manifest.get("node")
    if node is not None:
        rows = published[~_all_star(published)] if release.suppressed_style == "star" and release.suppressed_records \
            else published
        for q, level in node.items():
            # the hierarchy's labels at that level (with the missing value's node, if any)
            allowed = {str(label) for label in dataset.labels(q, level)}
            stray = set(rows[q]) - allowed
            if stray:
                raise ConformanceError(subject, "manifest", f"it says '{q}' is at level {level}, which does not hold "
                                                            f"the published {sorted(stray)[0]!r}")
