"""The Mondrian anonymizer (LeFevre, DeWitt and Ramakrishnan, ICDE 2006): its settings, the fit
that partitions a table, and the release with its manifest entry.

Mondrian splits the table recursively: a partition is cut at the median of the quasi-identifier
with the widest normalized range, and a cut is kept only if every part satisfies the privacy
models. Each final partition is one equivalence class; its records publish, per
quasi-identifier, the smallest cell that holds their values (a range ``[21-34]``, a hierarchy
node, or a set of values). No record is suppressed: the whole table is the first partition.

:meth:`Mondrian.fit` checks the whole table against every model, splits it (how each
quasi-identifier is split: :mod:`.dimensions`; the rounds over the records, in either mode:
:mod:`.splitter`; over a table summarized by its distinct rows, through the engine that holds
them: :mod:`.weighted_splitter`), publishes the final partitions as cells (:mod:`.cells`), and
collapses the partitions of a class that prints alike and fails a model (:mod:`.collapse`),
until every class passes.
"""

from __future__ import annotations

import time
from typing import Callable, Mapping, Sequence

import numpy as np

from veil.anonymize.base import Anonymizer
from veil.anonymize.fulldomain import InfeasibleError
from veil.anonymize.mondrian.cells import publish
from veil.anonymize.mondrian.collapse import collapse
from veil.anonymize.mondrian.dimensions import CATEGORICAL, HIERARCHY, Dimension, Forced, dimension, forced
from veil.anonymize.mondrian.parts import Parts, min_part_size
from veil.anonymize.mondrian.splitter import partition_records
from veil.anonymize.mondrian.weighted_splitter import WeightedSplitter
from veil.classes import SensitiveCounts
from veil.data.dataset import Dataset
from veil.errors import ColumnError, ParameterError
from veil.models.base import PrivacyModel
from veil.models.risk import refuse_table_models

MODES = ("strict", "relaxed")
# Entries of the manifest's recoding that count what the search did on the input, beyond what the
# published table shows: kept in the private file (veil.manifests).
PRIVATE_RECODING = ("rounds", "partitions_found", "collapsed", "seconds")


class Mondrian(Anonymizer):
    """Mondrian multidimensional partitioning (see :mod:`veil.anonymize.mondrian` and its modules).

    Args:
        models: the privacy models every partition must satisfy (each with a threshold).
        mode: ``"strict"`` (partitions never overlap) or ``"relaxed"`` (records equal to the
            median go to either side, to balance the halves).
        suppression_limit: kept for configuration compatibility, in [0, 1): Mondrian
            suppresses nothing (the whole table is the first partition).
        metric: the utility metric recorded with the release (Mondrian does not search).
        categorical: ``"hierarchy"`` or ``"order"``, or a mapping from columns to either.
        allow_single_class: when the whole table fails a model (no partition can then satisfy
            it), publish the table as one class, every quasi-identifier at its widest cell, instead
            of raising; the release's manifest then shows that model as failed and
            :attr:`satisfied_` is ``False``.

    Attributes (after :meth:`fit`):
        partition_: the class of every record.
        n_partitions_: number of classes released.
        partitions_found_: number of partitions the splitting made (more than classes when
            partitions that print identically were merged).
        collapsed_: classes collapsed into an earlier partition (see :mod:`.collapse`; only
            when partitions that print identically make a class that fails a model).
        kinds_: per quasi-identifier, how it was split: ``"range"``, ``"set"`` or ``"hierarchy"``.
        classes_: the :class:`EquivalenceClasses` of the release.
        rounds_: rounds of splitting.
        satisfied_: whether every class satisfies every model.
        seconds_: time :meth:`fit` took.

    Raises:
        ParameterError: no model, a model without threshold, an unknown mode or ``categorical``
            choice, or a suppression limit outside [0, 1).
    """

    algorithm = "mondrian"

    def __init__(self, models: Sequence[PrivacyModel], *, mode: str = "strict", suppression_limit: float = 0.0,
                 metric="loss", categorical: str | Mapping[str, str] = "hierarchy",
                 allow_single_class: bool = False):
        if not models:
            raise ParameterError("give at least one privacy model to anonymize with.")
        refuse_table_models(models, "Mondrian")
        for model in models:
            if model.threshold is None:
                raise ParameterError(f"{model.name} needs a threshold to anonymize with.")
        if mode not in MODES:
            raise ParameterError(f"unknown Mondrian mode {mode!r}; use 'strict' or 'relaxed'.")
        if not 0 <= suppression_limit < 1:
            raise ParameterError(f"the suppression limit is a share of records in [0, 1), not {suppression_limit}.")
        choices = categorical.values() if isinstance(categorical, Mapping) else [categorical]
        for choice in choices:
            if choice not in CATEGORICAL:
                raise ParameterError(f"categorical columns are split along their 'hierarchy' or on their "
                                     f"'order', not {choice!r}.")
        self.models = list(models)
        self.mode = mode
        self.suppression_limit = float(suppression_limit)
        self.metric = metric
        self.categorical = dict(categorical) if isinstance(categorical, Mapping) else categorical
        self.allow_single_class = bool(allow_single_class)

    def __repr__(self) -> str:
        return (f"Mondrian(models={self.models}, mode={self.mode!r}, categorical={self.categorical!r}, "
                f"allow_single_class={self.allow_single_class})")

    def _metric(self):
        from veil.metrics import make_metric

        return make_metric(self.metric) if isinstance(self.metric, str) else self.metric

    # ---------------------------------------------------------------------------------------

    def _dimensions(self, dataset: Dataset) -> list[Dimension]:
        qis = dataset.quasi_identifiers
        if isinstance(self.categorical, dict):
            for name in self.categorical:
                if name not in qis:
                    raise ColumnError(f"categorical names column '{name}', which is not a quasi-identifier; "
                                      f"the quasi-identifiers are {', '.join(qis)}.")
        dims = []
        for name in qis:
            if isinstance(self.categorical, dict):
                choice = Forced(self.categorical[name]) if name in self.categorical else HIERARCHY
            else:
                choice = self.categorical
            if forced(choice) and choice == HIERARCHY and name not in dataset.generalizations:
                raise ParameterError(f"column '{name}' has no hierarchy to split along; give one, or split it "
                                     "on its 'order'.")
            dims.append(dimension(dataset, name, choice))
        return dims

    def fit(self, dataset: Dataset, progress: Callable[[int, int], None] | None = None) -> "Mondrian":
        """Partition ``dataset``.

        Args:
            dataset: the table (quasi-identifiers need no hierarchy).
            progress: called as ``progress(records_in_final_partitions, records)`` each round.

        Raises:
            ParameterError: k exceeds the number of records, a model does not apply to the
                sensitive columns, or ``categorical`` asks for a hierarchy a column lacks.
            ColumnError: ``categorical`` names a column that is not a quasi-identifier.
            InfeasibleError: the whole table fails a model (naming it) and
                ``allow_single_class`` is off.
        """
        started = time.perf_counter()
        n = dataset.num_rows
        weights = dataset.row_weights
        if weights is not None and self.mode != "strict":
            raise ParameterError("relaxed Mondrian may send records with equal values to different sides, which a "
                                 "table summarized by its distinct rows (the Spark engine's) cannot; use mode "
                                 "'strict'.")
        for model in self.models:
            k = model.threshold if model.key == "k" else getattr(model, "k", None)
            if k is not None and k > n:
                raise ParameterError(f"k = {k:g} is larger than the table's {n} records.")
        dims = self._dimensions(dataset)
        # A table summarized by its distinct rows holds fewer rows than records.
        n_rows = len(dataset.column(dataset.quasi_identifiers[0]).codes)

        # The sensitive columns the models read, and the whole table as one class.
        whole = Parts(np.array([n], dtype=np.int64), {})
        sensitive = {}
        if any(m.needs_sensitive for m in self.models):
            for name in dataset.sensitive:
                col = dataset.column(name)
                sensitive[name] = SensitiveCounts(col, col.counts()[None, :], col.counts(),
                                                  dataset.generalizations.get(name))
            whole.sensitive = sensitive
            wanted = set()
            for model in self.models:
                if model.needs_sensitive:
                    wanted.update(model.targets(whole))
            sensitive = {name: sc for name, sc in sensitive.items() if name in wanted}
            whole.sensitive = sensitive
        self.satisfied_ = True
        for model in self.models:
            result = model.evaluate(whole)
            if not result.passed:
                if not self.allow_single_class:
                    raise InfeasibleError(
                        f"no partition satisfies {model.name} at {model.threshold:g}: even the whole table as one "
                        f"class only reaches {result.level:.4g}; relax that threshold (or set allow_single_class "
                        "to publish the table as one class anyway).")
                self.satisfied_ = False

        tracked = [(name, sc.column, dataset.column(name).codes) for name, sc in sensitive.items()]
        if self.satisfied_ and weights is not None:
            # Ranks of the distinct rows, rows × dimensions: the summary is small beside the records.
            ranks = np.stack([dim.rank[dim.column.codes] for dim in dims])
            splitter = WeightedSplitter(ranks, weights, dims, tracked, sensitive, self.models,
                                        min_part_size(self.models))
            # The engine that holds the records runs the rounds (locally, or level-synchronously
            # on Spark with the same decisions, see veil.engines.spark_mondrian).
            partition, rounds, node, parent = dataset.partition_strict(splitter, progress)
        elif self.satisfied_:
            partition, rounds, node, parent = partition_records(n, dims, tracked, sensitive, self.models,
                                                                self.mode, min_part_size(self.models), progress)
        else:
            partition, rounds = np.zeros(n_rows, dtype=np.int64), 0
            node, parent = np.zeros(1, dtype=np.int64), np.array([-1], dtype=np.int64)
            if progress:
                progress(n, n)
        self.rounds_ = rounds
        self.partitions_found_ = int(partition.max()) + 1
        self.collapsed_ = 0
        while True:
            classes, keys, boxes, class_of_part = publish(dataset, dims, partition)
            failing = np.zeros(classes.n_classes, dtype=bool)
            if self.satisfied_:
                for model in self.models:
                    failing |= ~model.evaluate(classes).class_passed
            if not failing.any():
                break
            # Partitions that print identically are one class, which a model that is not
            # monotonic (δ-disclosure) may refuse: collapse it into its lowest common ancestor
            # in the split tree, a partition every model accepted.
            partition, node, collapsed = collapse(partition, node, parent, class_of_part, failing)
            self.collapsed_ += collapsed
        self.dataset_ = dataset
        self.partition_ = classes.row_class
        self.classes_ = classes
        self.n_partitions_ = classes.n_classes
        self.kinds_ = {dim.name: dim.kind for dim in dims}
        self._boxes = (boxes, keys)
        self.seconds_ = time.perf_counter() - started
        return self

    def transform(self, dataset: Dataset, *, suppressed: str = "remove", shuffle: bool = True,
                  rng: np.random.Generator | int | None = None):
        """The release of the partitioning found by :meth:`fit`, rows shuffled unless told otherwise.

        Args:
            dataset: the dataset :meth:`fit` partitioned.
            suppressed: ``"remove"`` or ``"star"`` (Mondrian suppresses no record).
            shuffle: publish the rows in random order (the default), so that releases of one table
                cannot be joined by position; ``False`` keeps the input order, which the manifest
                and the ledger's gate flag as linkable by position.
            rng: ``None`` (default) shuffles with the secure source; a seed or generator makes a
                reproducible shuffle, not fit for release.

        Raises:
            ParameterError: :meth:`fit` was not called, was called on another dataset, or
                an unknown ``suppressed`` style.
        """
        from veil.anonymize.release import Release

        if not hasattr(self, "classes_"):
            raise ParameterError("call fit before transform.")
        if dataset is not self.dataset_:
            raise ParameterError("Mondrian's partitions belong to the dataset it was fitted on; call fit on this "
                                 "one first (or fit_transform).")
        classes = self.classes_
        nothing = np.zeros(classes.n_classes, dtype=bool)
        return Release(dataset, classes, nothing, algorithm=self.algorithm, models=self.models,
                       suppression_limit=self.suppression_limit, metric=self._metric(), search=None,
                       suppressed=suppressed, shuffle=shuffle, rng=rng, recoding=self.recoding,
                       private_recoding=PRIVATE_RECODING)

    def recoding(self) -> dict:
        """The manifest entry: the settings, and each released class's size and box.

        A box gives, per quasi-identifier, what the class's cell covers: ``{"min", "max"}`` (and
        ``"missing": true`` when it holds the missing value) for a range, ``{"node", "level"}``
        for a hierarchy node (level counted from the leaves; a virtual root is one above the
        hierarchy's top), ``{"values": [...]}`` for a set.
        """
        boxes, keys = self._boxes
        names = list(self.kinds_)
        columns = [[boxes[j][c] for c in keys[:, j]] for j in range(len(names))]
        sizes = self.classes_.sizes.tolist()
        partitions = [{"size": size, "box": dict(zip(names, cells))} for size, cells in zip(sizes, zip(*columns))]
        return {"mode": self.mode, "split": dict(self.kinds_), "rounds": self.rounds_,
                "partitions_found": self.partitions_found_, "collapsed": self.collapsed_,
                "satisfied": self.satisfied_, "seconds": round(self.seconds_, 4), "partitions": partitions}
