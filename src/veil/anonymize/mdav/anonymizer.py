"""The MDAV anonymizer: microaggregation into groups of at least k records, published as
centroids and modes (Domingo-Ferrer and Mateo-Sanz, 2002; Domingo-Ferrer and Torra, 2005).

:meth:`MDAV.fit` checks that the whole table as one group satisfies every model, maps the
quasi-identifiers into the standardized space of the distances (:mod:`.space`), groups the
records (:mod:`.grouping`), then merges groups that print alike, and groups that fail a model
into their nearest, until every class of the release satisfies every model (:mod:`.merging`);
:meth:`MDAV.transform` publishes each group's centroids and modes (:mod:`.published`).

**Order.** Released rows are shuffled (with the secure source unless a seed is given) unless the
input's order is explicitly kept.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from veil.anonymize.base import Anonymizer
from veil.anonymize.fulldomain import InfeasibleError
from veil.anonymize.mdav.grouping import mdav_groups, number_by_first_row
from veil.anonymize.mdav.merging import enforce, light_classes
from veil.anonymize.mdav.published import group_values, published_column
from veil.anonymize.mdav.space import Space
from veil.cells import Cells
from veil.classes import STAR, EquivalenceClasses
from veil.data.dataset import Dataset
from veil.errors import ColumnError, ParameterError
from veil.models.anonymity import AlphaKAnonymity, KAnonymity
from veil.models.base import PrivacyModel
from veil.models.risk import refuse_table_models

MISSING_POLICIES = ("impute", "refuse")
# Entries of the manifest's recoding derived from the whole input (the standardization's means,
# deviations and value orders, suppressed records included; the merges): kept in the private
# file (veil.manifests).
PRIVATE_RECODING = ("standardization", "merge_rounds", "coincident")


@dataclass(frozen=True)
class MDAVResult:
    """What :meth:`MDAV.fit` did.

    Attributes:
        k: the minimum group size used.
        groups: groups after MDAV, before merging.
        classes: groups in the release (after merging), suppressed ones included.
        merge_rounds: rounds of merging into the nearest group, needed to satisfy the models.
        coincident: groups merged because their published values coincided (one class to a
            reader).
        suppressed_records: records in suppressed groups.
        seconds: wall-clock time of the fit.
    """

    k: int
    groups: int
    classes: int
    merge_rounds: int
    coincident: int
    suppressed_records: int
    seconds: float


class MDAV(Anonymizer):
    """MDAV microaggregation: groups of at least k records, published as centroids and modes.

    See :mod:`veil.anonymize.mdav` for the algorithm (:mod:`.grouping`), the distance and the
    policies for missing values (:mod:`.space`), the published values (:mod:`.published`), and
    the merging that enforces models beyond k-anonymity (:mod:`.merging`).

    Args:
        models: privacy models every released group must satisfy, each with a threshold. Models
            other than k-anonymity are enforced by merging groups (and, with a suppression limit,
            by suppressing failing groups first).
        k: the minimum group size (default: the largest k of the k-anonymity and (α,k)-anonymity
            models). The release is checked against k-anonymity at k when no k-anonymity model is
            given.
        suppression_limit: the largest share of records that may be suppressed, in [0, 1).
            MDAV needs none for k-anonymity; a failing group is suppressed instead of merged
            while the records suppressed fit within the limit.
        metric: the utility metric recorded with the release: a key of
            :func:`veil.metrics.make_metric` or a metric object (every metric is reported).
        decimals: decimals of a published numeric centroid: one number for every numeric
            quasi-identifier, or a mapping from column to number (``None`` for a column: the
            default, 0 for a column of whole numbers and 3 otherwise).
        nominal: numeric quasi-identifiers to treat as categories (codes such as ZIP codes):
            compared by equality and published as the group's mode.
        missing: ``"impute"`` or ``"refuse"``: the policy for missing values in a numeric
            quasi-identifier (see :mod:`.space`).

    Attributes (after :meth:`fit`):
        result_: the :class:`MDAVResult`.
        groups_: the class of every row in the release (``int64``, numbered by first row): MDAV's
            groups, merged where they print alike or fail a model.
        suppressed_: bool per class, the suppressed ones.
        centroids_: a ``pandas.DataFrame`` with one row per class: its size and, per
            quasi-identifier, the exact mean (numeric; NaN when no record has a value) or the mode.

    Raises:
        ParameterError: no k and no k-anonymity model, k below a k-anonymity model's k, a model
            without threshold, a limit outside [0, 1), bad ``decimals``, ``nominal`` or
            ``missing``, an unknown metric.
    """

    def __init__(self, models: Sequence[PrivacyModel] = (), *, k: int | None = None,
                 suppression_limit: float = 0.0, metric="loss",
                 decimals: int | Mapping[str, int | None] | None = None,
                 nominal: str | Sequence[str] = (), missing: str = "impute"):
        models = list(models)
        refuse_table_models(models, "MDAV")
        for model in models:
            if model.threshold is None:
                raise ParameterError(f"{model.name} needs a threshold to anonymize with.")
        required = [int(math.ceil(m.threshold)) for m in models if isinstance(m, KAnonymity)]
        required += [int(m.k) for m in models if isinstance(m, AlphaKAnonymity) and m.k is not None]
        if k is None:
            if not required:
                raise ParameterError("MDAV needs a group size: give k, or a k-anonymity model.")
            k = max(required)
        elif isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ParameterError(f"k must be a whole number of at least 1, not {k!r}.")
        elif required and k < max(required):
            raise ParameterError(f"k = {k} is below the {max(required)} a k-anonymity model asks for; raise k, "
                                 "or leave it out to use the model's.")
        if not 0 <= suppression_limit < 1:
            raise ParameterError(f"the suppression limit is a share of records in [0, 1), not {suppression_limit}.")
        if missing not in MISSING_POLICIES:
            raise ParameterError(f"missing values in a numeric quasi-identifier are 'impute'd or 'refuse'd, "
                                 f"not {missing!r}.")
        if decimals is not None:
            for column, value in (decimals.items() if isinstance(decimals, Mapping) else [(None, decimals)]):
                if value is None and column is not None:
                    continue
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                    where = f" for column '{column}'" if column is not None else ""
                    raise ParameterError(f"decimals{where} must be a whole number of at least 0, not {value!r}.")
        if isinstance(metric, str):
            from veil.metrics import make_metric

            make_metric(metric)
        self.models = models
        self.k = int(k)
        self.suppression_limit = float(suppression_limit)
        self.metric = metric
        self.decimals = dict(decimals) if isinstance(decimals, Mapping) else decimals
        self.nominal = [nominal] if isinstance(nominal, str) else list(nominal)
        self.missing = missing

    def __repr__(self) -> str:
        return (f"MDAV(models={self.models}, k={self.k}, suppression_limit={self.suppression_limit}, "
                f"missing={self.missing!r})")

    @property
    def release_models(self) -> list[PrivacyModel]:
        """The models a release is checked against: those given, plus k-anonymity at k when none is."""
        if any(isinstance(m, KAnonymity) for m in self.models):
            return list(self.models)
        return list(self.models) + [KAnonymity(self.k)]

    def _metric(self):
        from veil.metrics import make_metric

        return make_metric(self.metric) if isinstance(self.metric, str) else self.metric

    # -- checks ----------------------------------------------------------------------------

    def _check(self, dataset: Dataset) -> None:
        qis = dataset.quasi_identifiers
        for name in self.nominal:
            if name not in qis:
                raise ColumnError(f"nominal lists '{name}', which is not a quasi-identifier; list quasi-identifiers "
                                  "only.")
        if isinstance(self.decimals, dict):
            for name in self.decimals:
                if name not in qis:
                    raise ColumnError(f"decimals were given for '{name}', which is not a quasi-identifier.")
                if not dataset.column(name).is_numeric or name in self.nominal:
                    what = "listed as nominal" if name in self.nominal else "a text column"
                    raise ParameterError(f"decimals were given for '{name}', which is {what}; it is published as "
                                         "its group's most frequent value, so only numeric quasi-identifiers "
                                         "take decimals.")
        if self.k > dataset.num_rows:
            raise ParameterError(f"k = {self.k} is larger than the table's {dataset.num_rows} records.")

    def _feasible(self, dataset: Dataset) -> None:
        """Raise unless the whole table, as one group, satisfies every model."""
        counts = {name: dataset.column(name).counts()[None, :] for name in dataset.sensitive}
        whole = light_classes(dataset, np.array([dataset.num_rows]), counts)
        for model in self.release_models:
            result = model.evaluate(whole)
            if not result.passed:
                on = f" of '{result.sensitive}'" if result.sensitive else ""
                raise InfeasibleError(
                    f"no grouping satisfies {model.name}{on} at {model.threshold:g}: even the whole table as one "
                    f"group only reaches {result.level:.4g}; relax that threshold.")

    # -- fit ---------------------------------------------------------------------------------

    def fit(self, dataset: Dataset, progress: Callable[[int, int], None] | None = None) -> "MDAV":
        """Group the records of ``dataset``.

        Args:
            dataset: the table.
            progress: called as ``progress(records_grouped, records)`` while grouping.

        Raises:
            ParameterError: k exceeds the number of rows; a numeric quasi-identifier has missing
                values under ``missing="refuse"``; ``decimals`` names a text column; a model needs
                a sensitive column the dataset lacks; the dataset is a summary of distinct rows
                (the Spark engine's).
            ColumnError: ``nominal`` or ``decimals`` names a column that is not a quasi-identifier.
            InfeasibleError: the whole table fails a model, so no grouping can satisfy it.
        """
        if dataset.row_weights is not None:
            # MDAV groups records k at a time, splitting records with equal values across groups;
            # a summary holds one row per distinct value combination, not the records.
            raise ParameterError("MDAV groups records one by one, which a table summarized by its distinct rows "
                                 "(the Spark engine's) does not hold; use full-domain or strict Mondrian.")
        started = time.perf_counter()
        self._check(dataset)
        self._feasible(dataset)
        space = Space(dataset, self.nominal, self.missing)
        group = number_by_first_row(mdav_groups(space, self.k, progress))
        n_groups = int(group.max()) + 1
        group, suppressed, rounds, coincident = enforce(dataset, space, group, self.release_models,
                                                        self.suppression_limit, self.decimals)
        self.space_ = space
        self.groups_ = group
        self.suppressed_ = suppressed
        self.centroids_ = self._centroids(dataset, space, group, len(suppressed))
        sizes = np.bincount(group, minlength=len(suppressed))
        self.result_ = MDAVResult(self.k, n_groups, len(suppressed), rounds, coincident,
                                  int(sizes[suppressed].sum()), time.perf_counter() - started)
        self._fitted_rows = dataset.num_rows
        return self

    def _centroids(self, dataset: Dataset, space: Space, group: np.ndarray, n_groups: int) -> pd.DataFrame:
        data = {"size": np.bincount(group, minlength=n_groups)}
        for c in space.columns:
            data[c.name] = group_values(c, group, n_groups)[2]
        return pd.DataFrame(data)

    # -- transform ---------------------------------------------------------------------------

    def transform(self, dataset: Dataset, *, suppressed: str = "remove", shuffle: bool = True,
                  rng: np.random.Generator | None = None):
        """The release of ``dataset`` (the dataset given to :meth:`fit`) with the groups found.

        Args:
            suppressed: ``"remove"`` drops suppressed records; ``"star"`` keeps them with every
                quasi-identifier published as ``*``.
            shuffle: publish the rows in random order (the default), so that releases of one table
                cannot be joined by position; ``False`` keeps the input order, which the manifest
                and the ledger's gate flag as linkable by position.
            rng: ``None`` (default) shuffles with the secure source; a seed or generator makes a
                reproducible shuffle, not fit for release.

        Raises:
            ParameterError: not fitted, or ``dataset`` has another number of rows than the one
                fitted.
        """
        from veil.anonymize.release import Release

        if not hasattr(self, "result_"):
            raise ParameterError("call fit before transform.")
        if dataset.num_rows != self._fitted_rows:
            raise ParameterError(f"transform the table MDAV was fitted on: it has {dataset.num_rows} records, "
                                 f"the groups were made for {self._fitted_rows}.")
        group, n_groups = self.groups_, len(self.suppressed_)
        keys = np.repeat(np.arange(n_groups, dtype=np.int32)[:, None], len(self.space_.columns), axis=1)
        cells, published = [], {}
        for c in self.space_.columns:
            indptr, indices, _, labels, values = published_column(c, group, n_groups, self.decimals)
            cells.append(Cells.from_sets(c.column, indptr, indices, labels))
            published[c.name] = values
        classes = EquivalenceClasses.from_partition(dataset, group, keys, cells)
        sizes = classes.sizes
        failing = self.suppressed_.copy()
        if suppressed == "star" and failing.any():
            # A group published as all * is one of the suppressed records to a reader.
            failing |= classes.printed_as(STAR)
        released = np.flatnonzero(~failing)

        def recoding() -> dict:
            groups = [{"size": int(sizes[g]), **{name: published[name][g] for name in published}}
                      for g in released]
            return {
                "method": "mdav",
                "k": self.k,
                "distance": "squared Euclidean: z-scores of numeric and ordinal quasi-identifiers, plus 1 per "
                            "nominal quasi-identifier that differs",
                "missing": self.missing,
                "standardization": self.space_.describe(),
                "merge_rounds": self.result_.merge_rounds,
                "coincident": self.result_.coincident,
                "groups": groups,
            }

        return Release(dataset, classes, failing, algorithm="mdav", models=self.release_models,
                       suppression_limit=self.suppression_limit, metric=self._metric(), search=None,
                       suppressed=suppressed, shuffle=shuffle, rng=rng, recoding=recoding,
                       private_recoding=PRIVATE_RECODING)

