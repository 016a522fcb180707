"""Measure every privacy model and the re-identification risk of a table in one pass.

The classes and count matrices are built once; every model then reads them.

A released table is judged as ``veil anonymize`` judged it when its manifest is given: the
models that compare each class with the whole table (t-closeness, δ-disclosure, β-likeness) use
the input table's distribution (ARX's definition), which the release's private file keeps (see
:mod:`veil.manifests`); when the release shows its suppressed records as ``*``, the rows whose
quasi-identifiers are all ``*`` are those records, exempt from the models and the risk. Against a
population, the population is generalized through the hierarchies to the levels the manifest
names (:func:`veil.population.publish_population`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import numpy as np

from veil.classes import STAR, EquivalenceClasses
from veil.data.dataset import Dataset
from veil.population import publish_population, release_levels
from veil.errors import DataError, ParameterError
from veil.inputs import MANIFEST_LIMIT, read_text
from veil.manifests import combined, is_split, load_private
from veil.models import (AlphaKAnonymity, BetaLikeness, DeltaDisclosure, DeltaPresence, DistinctLDiversity,
                         EntropyLDiversity, JoinKAnonymity, KAnonymity, KMap, ModelResult, PrivacyModel,
                         RecursiveCLDiversity, TCloseness)
from veil.risk import ReidentificationRisk, reidentification_risk
from veil.risk.individual import SampleRisk, sample_risk

# The risk models check() measures when given a threshold, in the order they are printed.
RISK_KEYS = ("average_risk", "records_at_risk", "population_uniqueness")
# The keys of the JSON summary, in the order they are printed.
SUMMARY_KEYS = ("k", "alpha", "l_distinct", "l_entropy", "c_l_recursive", "t_equal", "t_ordered",
                "t_hierarchical", "delta", "beta_basic", "beta_enhanced", "delta_presence", "k_map", "join")


# How each model's level is shown (veil check's tables, the workbench's Risk page): counts whole.
LEVEL_FORMATS = {"k": "{:.0f}", "l_distinct": "{:.0f}", "c_l_recursive": "{:.0f}", "k_map": "{:.0f}", "join": "{:.0f}"}
# Models measured only against a population: their rows are shown only when one was given.
PRESENCE_KEYS = ("delta_presence", "k_map")
# Join k-anonymity is measured only against an earlier release (--earlier).
JOIN_KEYS = ("join",)


def format_level(key: str, value: float | None) -> str:
    """A model's level as text: ``n/a`` when unmeasured, ``∞`` when unbounded, counts whole, else
    four significant digits."""
    if value is None:
        return "n/a"
    if value == float("inf"):
        return "∞"
    return LEVEL_FORMATS.get(key, "{:.4g}").format(value)


@dataclass(frozen=True, eq=False)
class CheckReport:
    """What :func:`check` measured.

    Attributes:
        rows: number of records.
        classes: the equivalence classes (the suppressed records excluded).
        results: per summary key, the model's result, or ``None`` where the model does not apply
            (no sensitive column, or a distance the column does not support).
        risk: the re-identification risk.
        c: the c of recursive (c,ℓ)-diversity.
        notes: remarks about the data worth a reader's attention (one sentence each).
        suppressed: rows taken as the release's suppressed records (all ``*``), exempt from the
            models and the risk.
        sample: the Benedetti–Franconi risk of the sample (:mod:`veil.risk.individual`), measured
            when the dataset has a weight, strata or household column or it was asked for;
            else ``None``.
        uniqueness: the estimated population uniqueness (:mod:`veil.risk.uniqueness`), when a
            population size was given; else ``None``.
        suda: the SUDA2 scores (:mod:`veil.risk.suda`), when a largest MSU size was given; else
            ``None``.
    """

    rows: int
    classes: EquivalenceClasses
    results: dict[str, ModelResult | None]
    risk: ReidentificationRisk
    c: float
    notes: list[str] = field(default_factory=list)
    suppressed: int = 0
    sample: SampleRisk | None = None
    uniqueness: object | None = None
    suda: object | None = None

    @property
    def passed(self) -> bool | None:
        """Whether every model given a threshold passed (``None`` when none was given)."""
        verdicts = [r.passed for r in self.results.values() if r is not None and r.passed is not None]
        return all(verdicts) if verdicts else None

    def to_dict(self) -> dict:
        """A JSON-ready summary. Unbounded levels are the string ``"inf"``; ``null`` means the
        model does not apply."""
        out: dict = {"rows": self.rows, "classes": self.classes.n_classes, "suppressed": self.suppressed}
        for key in SUMMARY_KEYS:
            out[key] = _number(self.results[key].level) if self.results.get(key) else None
        for key in RISK_KEYS:  # checked only when a threshold was given
            if self.results.get(key) is not None:
                out[key] = _number(self.results[key].level)
        out.update(
            prosecutor_risk_max=self.risk.prosecutor_max,
            prosecutor_risk_avg=self.risk.prosecutor_avg,
            prosecutor_risk_at_threshold=self.risk.prosecutor_at_risk,
            marketer_risk=self.risk.marketer,
            journalist_risk_max=self.risk.journalist_max,
            journalist_risk_avg=self.risk.journalist_avg,
            journalist_risk_at_threshold=self.risk.journalist_at_risk,
            risk_threshold=self.risk.threshold,
            records_below_k=self.risk.records_below_k,
            c=self.c,
            quasi_identifiers=list(self.classes.dataset.quasi_identifiers),
            sensitive=list(self.classes.dataset.sensitive),
        )
        out["thresholds"] = {key: r.threshold for key, r in self.results.items()
                             if r is not None and r.threshold is not None}
        out["passed"] = {key: r.passed for key, r in self.results.items()
                         if r is not None and r.passed is not None}
        out["by_sensitive"] = {
            name: {key: _number(r.by_sensitive[name].level if r.by_sensitive else r.level)
                   for key, r in self.results.items()
                   if r is not None and (name in r.by_sensitive or r.sensitive == name)}
            for name in self.classes.dataset.sensitive
        }
        if self.sample is not None:
            out["sample_risk"] = self.sample_summary()
        if self.uniqueness is not None:
            out["population_uniqueness"] = uniqueness_summary(self.uniqueness)
        if self.suda is not None:
            out["suda"] = suda_summary(self.suda)
        out["notes"] = list(self.notes)
        return out

    def sample_summary(self) -> dict:
        """The sample risk's figures (JSON-ready): the individual risk's highest and mean value,
        the share of records above the risk threshold, the expected re-identifications and their
        rate, and the same for the household risk when there is a household column."""
        risk, dataset = self.sample, self.classes.dataset
        out = {"weight": dataset.weight, "strata": list(dataset.strata), "household": dataset.household,
               "method": risk.method,
               "individual_risk_max": risk.max, "individual_risk_mean": risk.rate,
               "records_at_risk": risk.share_above(self.risk.threshold),
               "expected_reidentifications": risk.expected_reidentifications, "global_risk_rate": risk.rate}
        if risk.household is not None:
            values = risk.household[~np.isnan(risk.household)]
            out.update(household_risk_max=float(values.max()) if len(values) else 0.0,
                       household_risk_mean=risk.household_rate,
                       household_records_at_risk=risk.share_above(self.risk.threshold, household=True),
                       household_expected_reidentifications=risk.household_expected)
        return out


def uniqueness_summary(estimate) -> dict:
    """A population uniqueness estimate's figures (JSON-ready; ``None`` for a figure that is not
    available)."""
    from dataclasses import asdict

    def plain(value):
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return None  # not available (the estimator's equation has no root)
        return value

    return {key: plain(value) for key, value in asdict(estimate).items() if not isinstance(value, np.ndarray)}


def suda_summary(scores) -> dict:
    """SUDA2's figures (JSON-ready): the largest MSU size, the DIS fraction, the records with an
    MSU, and the highest and mean SUDA and DIS-SUDA scores."""
    return {"columns": list(scores.columns), "max_size": int(scores.max_size), "dis": float(scores.dis),
            "records_with_msu": scores.records_with_msu,
            "msus": {str(size + 1): int(count) for size, count in enumerate(scores.msu_counts.sum(axis=0))},
            "score_max": float(scores.score.max()) if len(scores.score) else 0.0,
            "score_mean": float(scores.score.mean()) if len(scores.score) else 0.0,
            "dis_score_max": float(scores.dis_score.max()) if len(scores.dis_score) else 0.0,
            "dis_score_mean": float(scores.dis_score.mean()) if len(scores.dis_score) else 0.0}


def _number(value: float) -> float | int | str:
    if math.isinf(value):
        return "inf"
    return int(value) if float(value).is_integer() else float(value)


def check(dataset: Dataset, *, c: float = 2.0, k: int | None = None, alpha: float | None = None,
          l: float | None = None, t: float | None = None, delta: float | None = None,
          beta: float | None = None, risk_threshold: float = 0.2, population: Dataset | None = None,
          delta_presence: tuple[float, float] | None = None, k_map: int | None = None,
          classes: EquivalenceClasses | None = None, reference: Mapping[str, Mapping[str, int]] | None = None,
          manifest: Mapping | str | os.PathLike | None = None, join: JoinKAnonymity | None = None,
          hierarchies: Mapping | None = None, sample: bool | None = None, risk_method: str = "exact",
          population_size: int | None = None, estimator: str = "dankar", suda_size: int | None = None,
          dis: float = 0.1, max_risk_rate: float | None = None, max_share_at_risk: float | None = None,
          max_uniqueness: float | None = None) -> CheckReport:
    """Measure every privacy model on a dataset and check the thresholds that are given.

    The models are k-anonymity, (α,k)-anonymity, distinct, entropy and recursive (c,ℓ)-diversity,
    t-closeness under the equal, ordered and hierarchical distances, δ-disclosure privacy and
    basic and enhanced β-likeness; see each model's class for its definition. With several
    sensitive columns each model reports its worst level over them. Given a population, the
    presence models δ-presence and k-map are measured against it too; when the manifest of a
    full-domain release is given, each quasi-identifier of the population is first generalized
    through its hierarchy to the level the manifest names, so that every person reads as the
    release would publish them (a value the release's records lack included). Given join k-anonymity
    (:class:`~veil.models.JoinKAnonymity`, which holds an earlier release of the same records),
    the table is measured as a second release joined with it too.

    t-closeness, δ-disclosure and β-likeness compare each class with a reference distribution
    of the sensitive column: the one given by ``reference`` or the release's private file (the
    input table's, suppressed records included, as ARX and ``veil anonymize`` define them), else
    the column's distribution in ``dataset`` itself; a note says which.

    Args:
        dataset: the table, with quasi-identifiers and (for every model but k-anonymity)
            sensitive columns.
        c: the c of recursive (c,ℓ)-diversity, whose level is the largest ℓ it allows.
        k: the k of k-anonymity (and of (α,k)-anonymity) to check.
        alpha: the α of (α,k)-anonymity to check.
        l: the ℓ to check, for all three ℓ-diversity models.
        t: the t to check, for t-closeness under all three distances.
        delta: the δ of δ-disclosure privacy to check.
        beta: the β to check, for basic and enhanced β-likeness.
        risk_threshold: per-record risk above which a record counts as at risk.
        population: a population table for journalist risk, δ-presence and k-map.
        delta_presence: ``(δmin, δmax)`` of δ-presence to check (needs ``population``).
        k_map: the k of k-map to check (needs ``population``).
        classes: precomputed classes of ``dataset`` (default: its ungeneralized classes).
        reference: per sensitive column, each value (as text) → its number of records in the
            reference table (overrides the manifest's).
        manifest: the veil manifest of the release ``dataset`` is (a dict, or the path of its
            JSON file, whose private file is read when it lies beside it): its levels per
            quasi-identifier, the ``reference`` distributions its private file keeps, and, when it
            shows its suppressed records as ``*``, that the rows whose quasi-identifiers are all
            ``*`` are those records, exempt from the models and the risk. A dict may be the
            curator's view (:func:`veil.manifests.combined`).
        join: a join k-anonymity model to measure (and check, at its own thresholds) beside the
            others.
        hierarchies: per quasi-identifier, the hierarchy the release generalized it with (a
            :class:`~veil.data.hierarchy.Hierarchy` or an ARX file), through which the population
            is generalized; by default the file or builder the manifest's configuration names, else
            the private file's.
        sample: measure the Benedetti–Franconi risk of the sample (individual, global, and
            household risk with a household column; :func:`veil.risk.individual.sample_risk`).
            Default: when the dataset has a weight, strata or household column. Records at risk
            are those above ``risk_threshold``.
        risk_method: ``"exact"`` or ``"approx"`` (sdcMicro's default), for the sample risk.
        population_size: estimate the share of population uniques of a population of this many
            records (:func:`veil.risk.uniqueness.population_uniqueness`, with ``estimator``).
        estimator: ``"dankar"``, ``"pitman"``, ``"zayatz"`` or ``"snb"``.
        suda_size: score the records with SUDA2, minimal sample uniques up to this size
            (:func:`veil.risk.suda.suda2`, with the DIS fraction ``dis``), on the quasi-identifiers
            as the classes publish them.
        dis: the sampling fraction of DIS-SUDA.
        max_risk_rate: check :class:`~veil.models.AverageRisk`: the expected re-identifications
            per record (the Benedetti–Franconi risk, with the dataset's weights) at most this.
        max_share_at_risk: check :class:`~veil.models.RecordsAtRisk`: the share of records whose
            individual risk exceeds ``risk_threshold`` at most this.
        max_uniqueness: check :class:`~veil.models.PopulationUniqueness`: the estimated share of
            population uniques (``population_size`` records, ``estimator``) at most this.

    Raises:
        ParameterError: a threshold or ``c`` out of range; a presence threshold without a population;
            a population size below the table's records, an unknown estimator or risk method, a
            bad SUDA size or DIS fraction.
        DataError: the population does not contain the table's classes, or cannot be generalized
            as the release (the manifest names no levels, or a hierarchy is missing or does not
            cover it); the manifest cannot be read; a value of a sensitive column is missing from
            its reference distribution; the
            join model's earlier release shares no column with the table, or alone leaves records
            under its thresholds (see :class:`~veil.models.JoinKAnonymity`).
    """
    models: list[PrivacyModel] = [
        KAnonymity(k), AlphaKAnonymity(alpha, k if alpha is not None else None), DistinctLDiversity(l), EntropyLDiversity(l),
        RecursiveCLDiversity(c, l), TCloseness(t, "equal"), TCloseness(t, "ordered"),
        TCloseness(t, "hierarchical"), DeltaDisclosure(delta), BetaLikeness(beta),
        BetaLikeness(beta, enhanced=True),
    ]
    if population is None and (delta_presence is not None or k_map is not None):
        raise ParameterError("δ-presence and k-map are measured against a population; give the population table.")
    if classes is None:
        classes = EquivalenceClasses.from_dataset(dataset)
    notes = []
    suppressed = 0
    if manifest is not None:
        manifest = _read_manifest(manifest)
        if reference is None:
            reference = manifest.get("reference")
        output, suppression = manifest.get("output") or {}, manifest.get("suppression") or {}
        if output.get("suppressed") == "star" and (suppression.get("records") or 0) > 0:
            starred = classes.printed_as(STAR)
            suppressed = int(classes.sizes[starred].sum())
            classes = classes.subset(~starred)
            notes.append(f"{suppressed:,} rows whose quasi-identifiers are all '{STAR}' are the release's suppressed "
                         "records (its manifest says so); they are exempt from the models and the risk.")
            if suppressed != suppression.get("records"):
                notes.append(f"the manifest counts {suppression.get('records')} suppressed records but the table "
                             f"has {suppressed:,} rows that are all '{STAR}'; check that they belong together.")
    if reference is not None:
        classes = classes.with_reference(reference)
    if population is not None:
        if manifest is not None:
            population = _published_population(population, manifest, dataset.quasi_identifiers, hierarchies)
        dmin, dmax = delta_presence if delta_presence is not None else (0.0, None)
        models += [DeltaPresence(population, dmax, dmin), KMap(population, k_map)]
    if join is not None:
        models.append(join)
    results: dict[str, ModelResult | None] = {}
    for model in models:
        applicable = classes.n_classes > 0 and (
            not model.needs_sensitive or any(model.applies_to(sc) for sc in classes.sensitive.values()))
        results[model.key] = model.evaluate(classes) if applicable else None
    risk = reidentification_risk(classes, threshold=risk_threshold, population=population, k=k)
    for name, sc in classes.sensitive.items():
        if (sc.reference > 0).sum() == 1:
            notes.append(f"sensitive column '{name}' holds a single value, so every class is homogeneous "
                         "and every record's value is disclosed.")
        if reference is not None and name in reference:
            notes.append(f"t-closeness, δ-disclosure and β-likeness compare each class with the reference "
                         f"distribution of '{name}' given ({int(sc.reference.sum()):,} records), as veil anonymize "
                         "does.")
        else:
            give = ("the release's private file (--private FILE)" if manifest is not None and is_split(manifest)
                    else "the release's manifest")
            notes.append(f"t-closeness, δ-disclosure and β-likeness compare each class with the distribution of "
                         f"'{name}' in this table; give {give} to compare with the input table's, as veil "
                         "anonymize does.")
    if not dataset.sensitive:
        notes.append("no sensitive column was given, so only k-anonymity and the risk were measured.")
    if sample is None:
        sample = dataset.weight is not None or bool(dataset.strata) or dataset.household is not None
    measured = sample_risk(classes, risk_method) if sample else None
    uniqueness = None
    if population_size is not None:
        from veil.risk.uniqueness import population_uniqueness

        uniqueness = population_uniqueness(classes.sizes, population_size, estimator)
    scores = _suda(classes, suda_size, dis) if suda_size is not None else None
    results.update(_risk_results(classes, risk_threshold, risk_method, max_risk_rate, max_share_at_risk,
                                 max_uniqueness, population_size, estimator))
    return CheckReport(dataset.num_rows, classes, results, risk, float(c), notes, suppressed, measured, uniqueness,
                       scores)


def _risk_results(classes: EquivalenceClasses, risk_threshold: float, method: str, max_risk_rate: float | None,
                  max_share_at_risk: float | None, max_uniqueness: float | None, population_size: int | None,
                  estimator: str) -> dict[str, ModelResult]:
    """The risk models with the thresholds given, as :func:`check` reports them (see its arguments).

    Raises:
        ParameterError: a threshold out of [0, 1], or ``max_uniqueness`` without a population size.
    """
    from veil.models import AverageRisk, PopulationUniqueness, RecordsAtRisk

    models: list[PrivacyModel] = []
    if max_risk_rate is not None:
        models.append(AverageRisk(max_risk_rate, method=method))
    if max_share_at_risk is not None:
        models.append(RecordsAtRisk(risk_threshold, max_share_at_risk, method=method))
    if max_uniqueness is not None:
        if population_size is None:
            raise ParameterError("population uniqueness is estimated for a population of a given size; give the "
                                 "population size too.")
        models.append(PopulationUniqueness(max_uniqueness, population_size, estimator))
    return {model.key: model.evaluate(classes) for model in models if classes.n_classes}


def _suda(classes: EquivalenceClasses, max_size: int, dis: float):
    """SUDA2 on the released records, their quasi-identifiers as the classes publish them."""
    from veil.risk.suda import suda2

    dataset = classes.dataset
    rows = classes.row_class
    released = np.flatnonzero(rows >= 0) if len(rows) and rows.min() < 0 else None
    columns = [classes.keys[:, j][rows if released is None else rows[released]]
               for j in range(len(dataset.quasi_identifiers))]
    counts = dataset.row_weights
    if counts is not None and released is not None:
        counts = counts[released]
    return suda2(columns, max_size, dis, list(dataset.quasi_identifiers), counts=counts)


def _published_population(population: Dataset, manifest: Mapping, columns, hierarchies: Mapping | None) -> Dataset:
    """The population with each quasi-identifier generalized as the release generalized its records.

    Raises:
        DataError: the manifest names no level per quasi-identifier (a release by local recoding),
            or the population cannot be generalized (see :func:`veil.population.publish_population`).
    """
    if release_levels(manifest) is None:
        raise DataError(f"δ-presence and k-map generalize the population as a full-domain release generalizes its "
                        f"records, and this manifest ({manifest.get('algorithm', 'unknown algorithm')}) names no "
                        "level per quasi-identifier; measure them without --manifest, or on a full-domain release.")
    table = publish_population(population.table.data, manifest, columns, hierarchies=hierarchies, private=manifest)
    if table is population.table.data:
        return population
    return Dataset(table, quasi_identifiers=population.quasi_identifiers, missing_values=population.missing_values)


def _read_manifest(manifest: Mapping | str | os.PathLike) -> Mapping:
    """A manifest given as a mapping, or read from its JSON file."""
    if isinstance(manifest, Mapping):
        return manifest
    path = Path(manifest)
    try:
        # A regular file only (a pipe or a device never ends), of a manifest's size at most.
        loaded = json.loads(read_text(path, "the manifest", MANIFEST_LIMIT))
    except json.JSONDecodeError as exc:
        raise DataError(f"the manifest {str(path)!r} cannot be read as JSON ({exc}).") from None
    if not isinstance(loaded, dict):
        raise DataError(f"the manifest {str(path)!r} is not a JSON object; give the manifest veil anonymize wrote.")
    return combined(loaded, load_private(path, loaded))
