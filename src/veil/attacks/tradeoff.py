"""The privacy/utility trade-off of a release (Brickell and Shmatikov, "The cost of privacy", KDD 2008).

A release is worth publishing only if it buys more utility than **trivial sanitization**, which
publishes the quasi-identifiers and the other attributes as two separate, unlinked tables: that
release tells the adversary nothing about any one person's sensitive value beyond the table-wide
distribution, so it is the most private one can be while still publishing every value. The
utility of a release is measured on a workload; here the workload is a set of classifiers that
predict a **target** column from the quasi-identifiers. For each classifier, on one fixed split of
the records into a training and a test part:

* ``U_max``: trained on the training records' original quasi-identifier values, tested on the test
  records' original values — the utility of publishing the table as it is ("if U_max is low, the
  workload is inappropriate for the data regardless of sanitization");
* ``U_san``: trained on the training records' **published** (generalized) values, tested on the test
  records' published values — the utility of the release;
* ``U_base``: the utility of trivial sanitization. The quasi-identifiers are published unlinked
  from the target, so no classifier can use them: the best it can do is predict the most common
  target value of the training records for everyone. ``U_base`` is the share of the test records
  holding that value. This is the paper's ``U_base^w``, "the workload-specific utility of the
  trivially sanitized dataset", for a workload whose features are the quasi-identifiers.
  (``majority_share`` reports the same rule over the whole table, ``p(T, s_max(T))`` of the
  paper's A_acc.)

``U_san − U_base`` is the **accuracy gain** the release buys; "if this value is close to 0,
sanitization is pointless". It is set beside the **knowledge gain** the release gives the
adversary about the sensitive attribute: ``A_know`` and ``A_acc`` of :mod:`veil.attacks.disclosure`
(computed there, on the released classes). The target may be the sensitive column itself (the
release should *prevent* learning it) or a neutral column such as Adult's ``salary-class``.

**Features.** Every quasi-identifier is one categorical feature. A record's original value is
the category of the original table; a record's published value is the **cell** the release
publishes for it (a hierarchy node such as ``20-29``, a Mondrian range ``[21-34]``, a set): one
category per distinct published label of that quasi-identifier, exactly as a data user who only
holds the released CSV would read it. A record the release suppressed publishes ``*`` for every
quasi-identifier (the category of a column generalized to ``*``, else one more category), so it
keeps its place in training and testing, and ``U_max``, ``U_san`` and ``U_base`` are measured on
the same test records. Only categories some record holds count (a hierarchy level may name values
absent from the table). Categories reach the classifiers as one-hot columns (the tree and logistic
regression) or as category indices (naive Bayes, which models each feature as a categorical
distribution). Read this way, the release that generalizes every quasi-identifier to ``*`` gives
``U_san = U_base`` exactly (one feature tuple: every classifier predicts the training majority),
and the release of the original values gives ``U_san = U_max``.

**Classifiers** (names for ``classifiers=``):

* ``"tree"``: ``DecisionTreeClassifier`` (CART, Gini impurity) whose leaves hold at least 5
  training records, the stand-in for Weka's pruned J48 the paper used; an unrestricted tree
  memorizes the original quasi-identifier tuples;
* ``"bayes"``: ``CategoricalNB`` with Laplace smoothing (α = 1), as Weka's naive Bayes treats nominal
  attributes. ``GaussianNB`` would fit a normal distribution to integer codes or to 0/1 one-hot
  columns, which assumes an order and a shape the categories do not have;
* ``"logistic"``: multinomial ``LogisticRegression`` (L2, C = 1, lbfgs) on the one-hot columns.

**Vectorized.** The features are categorical, so the training set is collapsed to its distinct
(feature tuple, target) rows with their counts as sample weights, and each distinct test tuple is
predicted once (one ``bincount``-style grouping each; no loop over rows). Weighted fitting is the
same fit as on the repeated rows for all three classifiers (the leaf minimum is given as a weight
fraction for that reason), and on a generalized release there are only a few hundred distinct
rows, so a classifier costs milliseconds.

**Split.** One stratified split per target: a share ``test_size`` of each target value's records,
drawn with the given ``rng``, is the test part. The release itself was made from the whole
table, as in the paper (sanitize, then evaluate the classifiers on the sanitized records).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from veil.classes import EquivalenceClasses, group_rows
from veil.data.dataset import Dataset
from veil.errors import ColumnError, ParameterError

DEFAULT_CLASSIFIERS = ("tree", "bayes", "logistic")
DEFAULT_TEST_SIZE = 0.3
TREE_MIN_LEAF = 5

# Other spellings accepted for each classifier (compared in lower case).
_ALIASES = {
    "tree": ("tree", "decision-tree", "decision_tree", "decisiontree", "decisiontreeclassifier", "cart", "j48"),
    "bayes": ("bayes", "naive-bayes", "naive_bayes", "naivebayes", "nb", "categoricalnb"),
    "logistic": ("logistic", "logistic-regression", "logistic_regression", "logisticregression", "logreg", "lr"),
}
_CANONICAL = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}

CLASSIFIER_LABELS = {"tree": "decision tree", "bayes": "naive Bayes", "logistic": "logistic regression"}


def classifier_names(names: Sequence[str] | str | None = None) -> tuple[str, ...]:
    """The canonical names of a workload's classifiers (``"tree"``, ``"bayes"``, ``"logistic"``).

    Args:
        names: classifier names or aliases (e.g. ``"DecisionTreeClassifier"``, ``"nb"``), one
            comma-separated string, or ``None`` for all three.

    Raises:
        ParameterError: no classifier, or an unknown name.
    """
    if names is None:
        return DEFAULT_CLASSIFIERS
    if isinstance(names, str):
        names = [part for part in names.split(",")]
    out: list[str] = []
    for raw in names:
        if not isinstance(raw, str):
            raise ParameterError(f"name classifiers as text ({', '.join(DEFAULT_CLASSIFIERS)}), not {raw!r}.")
        key = raw.strip().lower()
        if not key:
            continue
        if key not in _CANONICAL:
            close = difflib.get_close_matches(key, list(_CANONICAL), n=1, cutoff=0.6)
            hint = f"did you mean '{_CANONICAL[close[0]]}'? " if close else ""
            raise ParameterError(f"unknown classifier {raw.strip()!r}; {hint}use {', '.join(DEFAULT_CLASSIFIERS)}.")
        if _CANONICAL[key] not in out:
            out.append(_CANONICAL[key])
    if not out:
        raise ParameterError(f"give at least one classifier ({', '.join(DEFAULT_CLASSIFIERS)}).")
    return tuple(out)


def _make(name: str, seed: int, n_train: int):
    """A fresh estimator and whether it reads one-hot columns (else category indices)."""
    if name == "tree":
        from sklearn.tree import DecisionTreeClassifier

        # A weight fraction, not min_samples_leaf: the training rows are collapsed with weights.
        return DecisionTreeClassifier(min_weight_fraction_leaf=min(TREE_MIN_LEAF / n_train, 0.5),
                                      random_state=seed), True
    if name == "bayes":
        from sklearn.naive_bayes import CategoricalNB

        return CategoricalNB(alpha=1.0), False
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1.0, max_iter=2000), True


def _as_generator(rng) -> tuple[np.random.Generator, int | None]:
    if isinstance(rng, np.random.Generator):
        return rng, None
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ParameterError(f"the seed must be 0 or more, not {rng}.")
        return np.random.default_rng(int(rng)), int(rng)
    raise ParameterError(f"rng must be a numpy Generator or an integer seed, not {rng!r}.")


def stratified_test_mask(labels: np.ndarray, test_size: float, rng: np.random.Generator) -> np.ndarray:
    """A random test part holding ``round(test_size × count)`` of each label's records.

    Vectorized: records are shuffled, stably sorted by label, and the first ones of each label
    in that order are the test records.
    """
    labels = np.asarray(labels)
    n = len(labels)
    perm = rng.permutation(n)
    order = perm[np.argsort(labels[perm], kind="stable")]
    _, first, counts = np.unique(labels[order], return_index=True, return_counts=True)
    quota = np.floor(test_size * counts + 0.5).astype(np.int64)
    start = np.repeat(first, counts)
    rank = np.arange(n) - start
    mask = np.zeros(n, dtype=bool)
    mask[order] = rank < np.repeat(quota, counts)
    return mask


def _one_hot(codes: np.ndarray, cardinalities: np.ndarray):
    """``[rows × features]`` category indices as a sparse one-hot matrix."""
    from scipy import sparse

    n, q = codes.shape
    offsets = np.concatenate([[0], np.cumsum(cardinalities)[:-1]]).astype(np.int64)
    columns = (codes + offsets[None, :]).ravel()
    indptr = np.arange(0, n * q + 1, q, dtype=np.int64)
    return sparse.csr_matrix((np.ones(n * q), columns, indptr), shape=(n, int(cardinalities.sum())))


@dataclass(frozen=True)
class Features:
    """Each record's categorical features: ``codes[:, j]`` indexes the ``cardinalities[j]``
    categories of quasi-identifier ``j``."""

    codes: np.ndarray
    cardinalities: np.ndarray

    @classmethod
    def compact(cls, codes: np.ndarray, radices) -> "Features":
        """Features from category indices below ``radices``, renumbered so that only the
        categories some record holds remain (a hierarchy level or a cell list may name values no
        record has; they would only add smoothing mass to naive Bayes)."""
        codes = np.array(codes, dtype=np.int64)
        card = np.empty(codes.shape[1], dtype=np.int64)
        for j in range(codes.shape[1]):
            present = np.bincount(codes[:, j], minlength=int(radices[j])) > 0
            codes[:, j] = (np.cumsum(present) - 1)[codes[:, j]]
            card[j] = int(present.sum())
        return cls(codes, card)


def _fit_predict(name: str, seed: int, features: Features, y: np.ndarray, n_labels: int,
                 train: np.ndarray, test: np.ndarray) -> np.ndarray:
    """Train one classifier on the training rows and predict the test rows (label codes)."""
    codes, card = features.codes, features.cardinalities
    q = codes.shape[1]
    # Distinct (features, label) training rows, weighted by how often each occurs.
    columns = [codes[train, j] for j in range(q)] + [y[train]]
    group, keys = group_rows(columns, list(card) + [n_labels])
    weights = np.bincount(group, minlength=len(keys)).astype(float)
    x_train, y_train = keys[:, :q], keys[:, q]
    # Distinct test tuples, predicted once each.
    test_group, test_keys = group_rows([codes[test, j] for j in range(q)], list(card))
    estimator, one_hot = _make(name, seed, int(weights.sum()))
    if name == "bayes":
        estimator.set_params(min_categories=np.maximum(card, 1))
    encode = (lambda c: _one_hot(c, card)) if one_hot else (lambda c: c)
    if len(np.unique(y_train)) == 1:
        # Nothing to learn (scikit-learn's logistic regression refuses one class).
        return np.full(int(test.sum()), y_train[0])
    estimator.fit(encode(x_train), y_train, sample_weight=weights)
    return np.asarray(estimator.predict(encode(test_keys)))[test_group]


@dataclass(frozen=True, eq=False)
class TradeoffResult:
    """The trade-off of one release for one target (see the module for the definitions).

    Attributes:
        target: the column the classifiers predict.
        sensitive: the sensitive column whose disclosure is measured.
        classifiers: the classifiers' names.
        u_max: per classifier, accuracy trained and tested on the original values.
        u_san: per classifier, accuracy trained and tested on the published values.
        u_base: accuracy of trivial sanitization (the training part's most common target value,
            on the test part); the same for every classifier.
        majority_share: the share of the table's most common target value, ``p(T, s_max(T))``.
        a_know: the adversary's knowledge gain about ``sensitive`` from the release.
        a_acc: the adversary's accuracy gain about ``sensitive`` from the release.
        n_train, n_test: records in each part of the split.
        suppressed: records the release suppressed (published as ``*`` in every quasi-identifier).
        seed: the integer seed of the split, or ``None`` when a Generator was given.
    """

    target: str
    sensitive: str
    classifiers: tuple[str, ...]
    u_max: dict[str, float]
    u_san: dict[str, float]
    u_base: float
    majority_share: float
    a_know: float
    a_acc: float
    n_train: int
    n_test: int
    suppressed: int
    seed: int | None

    @property
    def accuracy_gain(self) -> dict[str, float]:
        """Per classifier, ``U_san − U_base``: the utility the release buys over trivial sanitization."""
        return {c: self.u_san[c] - self.u_base for c in self.classifiers}

    @property
    def max_gain(self) -> dict[str, float]:
        """Per classifier, ``U_max − U_base``: the gain publishing the original table would buy."""
        return {c: self.u_max[c] - self.u_base for c in self.classifiers}

    def rows(self) -> list[dict]:
        """One JSON-ready record per classifier."""
        return [{"target": self.target, "sensitive": self.sensitive, "classifier": c,
                 "u_base": self.u_base, "u_san": self.u_san[c], "u_max": self.u_max[c],
                 "accuracy_gain": self.u_san[c] - self.u_base, "max_gain": self.u_max[c] - self.u_base,
                 "a_know": self.a_know, "a_acc": self.a_acc, "n_train": self.n_train, "n_test": self.n_test,
                 "suppressed": self.suppressed, "seed": self.seed} for c in self.classifiers]

    def summary(self) -> dict:
        """A JSON-ready summary."""
        return {"measure": "tradeoff", "target": self.target, "sensitive": self.sensitive,
                "u_base": self.u_base, "majority_share": self.majority_share,
                "u_max": dict(self.u_max), "u_san": dict(self.u_san),
                "accuracy_gain": self.accuracy_gain, "a_know": self.a_know, "a_acc": self.a_acc,
                "n_train": self.n_train, "n_test": self.n_test, "suppressed": self.suppressed, "seed": self.seed}


class TradeoffWorkload:
    """A classification workload on one original table: the split, ``U_max`` and ``U_base``,
    ready to measure any number of releases of that table (each costs only ``U_san``).

    Args:
        original: the original :class:`Dataset`; its quasi-identifiers are the features.
        target: the column to predict: the sensitive column or a neutral one (not a
            quasi-identifier).
        classifiers: classifier names (see :func:`classifier_names`); default all three.
        test_size: the share of each target value's records held out for testing, in (0, 1).
        rng: a ``numpy.random.Generator`` or an integer seed (recorded) for the split and the
            tree's tie-breaking.

    Raises:
        ColumnError: the target column does not exist or is a quasi-identifier.
        ParameterError: the target holds a single value, an unknown classifier, a test share
            outside (0, 1), a split with an empty part, or a bad ``rng``.
    """

    def __init__(self, original: Dataset, target: str, *, classifiers: Sequence[str] | str | None = None,
                 test_size: float = DEFAULT_TEST_SIZE, rng: np.random.Generator | int = 0):
        if not isinstance(original, Dataset):
            raise ParameterError(f"the original table must be a veil Dataset, not {type(original).__name__}.")
        if not isinstance(target, str) or target not in original.columns:
            close = difflib.get_close_matches(str(target), original.columns, n=1, cutoff=0.5)
            hint = f"did you mean '{close[0]}'?" if close else f"the columns are {', '.join(original.columns)}."
            raise ColumnError(f"the target column {target!r} does not exist; {hint}")
        if target in original.quasi_identifiers:
            raise ColumnError(f"the target '{target}' is a quasi-identifier, and the quasi-identifiers are the "
                              "features; predict a sensitive or neutral column.")
        if not (isinstance(test_size, (int, float)) and 0 < test_size < 1):
            raise ParameterError(f"the test share must be between 0 and 1 (exclusive), not {test_size!r}.")
        self.classifiers = classifier_names(classifiers)
        self.original = original
        self.target = target
        self.test_size = float(test_size)
        column = original.column(target)
        self.y = column.codes.astype(np.int64)
        self.n_labels = column.cardinality
        present = np.count_nonzero(column.counts())
        if present < 2:
            raise ParameterError(f"the target '{target}' holds a single value; a classifier needs at least two.")
        gen, self.seed = _as_generator(rng)
        self.test = stratified_test_mask(self.y, self.test_size, gen)
        self.train = ~self.test
        self.n_test = int(self.test.sum())
        self.n_train = len(self.y) - self.n_test
        if self.n_test == 0 or self.n_train == 0:
            raise ParameterError(f"a test share of {test_size:g} leaves an empty part of the {len(self.y)} "
                                 "records; use a larger table or another share.")
        self._classifier_seed = int(gen.integers(2**31 - 1))
        counts_train = np.bincount(self.y[self.train], minlength=self.n_labels)
        majority = int(counts_train.argmax())
        self.u_base = float(np.mean(self.y[self.test] == majority))
        self.majority_share = float(column.counts().max() / len(self.y))
        qis = original.quasi_identifiers
        self.original_features = Features.compact(
            np.stack([original.column(q).codes for q in qis], axis=1),
            [original.column(q).cardinality for q in qis])
        self._u_max: dict[str, float] | None = None

    @property
    def u_max(self) -> dict[str, float]:
        """Per classifier, the accuracy on the original values (computed on first use)."""
        if self._u_max is None:
            self._u_max = self.accuracy(self.original_features)
        return dict(self._u_max)

    def accuracy(self, features: Features) -> dict[str, float]:
        """Per classifier, the test accuracy when trained and tested on ``features``."""
        truth = self.y[self.test]
        return {name: float(np.mean(_fit_predict(name, self._classifier_seed, features, self.y, self.n_labels,
                                                 self.train, self.test) == truth))
                for name in self.classifiers}

    def measure(self, release, *, sensitive: str | None = None,
                quasi_identifiers: Sequence[str] | None = None, delimiter: str | None = None) -> TradeoffResult:
        """The trade-off of one release of the original table.

        Args:
            release: a veil ``Release`` of the original table, or the released table (a
                :class:`Dataset`, a pandas/polars frame, or a CSV/Parquet path) holding every
                record in the original's order (publish with ``suppressed="star"`` and no
                shuffling), since each test record is classified by its own published values.
            sensitive: the sensitive column for A_know and A_acc (default: the only one).
            quasi_identifiers: the released table's quasi-identifiers (default: the original's).
            delimiter: the CSV delimiter when ``release`` is a CSV path (sniffed when ``None``).

        Raises:
            ParameterError: the release is of another table, or its rows do not line up with
                the original's; no or several sensitive columns and none named.
            ColumnError, DataError: the released table lacks a column or cannot be read.
        """
        from veil.attacks.disclosure import disclosure

        features, classes, suppressed = self._published(release, quasi_identifiers, delimiter, sensitive)
        found = disclosure(classes, sensitive)
        return TradeoffResult(self.target, found.sensitive, self.classifiers, self.u_max, self.accuracy(features),
                              self.u_base, self.majority_share, found.a_know, found.a_acc, self.n_train,
                              self.n_test, suppressed, self.seed)

    def _published(self, release, quasi_identifiers, delimiter, sensitive):
        """The published features of every original record, the released classes, and the
        number of suppressed records."""
        from veil.anonymize.release import STAR, Release

        original = self.original
        if isinstance(release, Release):
            ds = release.dataset
            if ds is not original and (ds.num_rows != original.num_rows
                                       or ds.quasi_identifiers != original.quasi_identifiers):
                raise ParameterError("the release was made from another table; measure it against the table "
                                     "it was made from.")
            if quasi_identifiers is not None and list(quasi_identifiers) != ds.quasi_identifiers:
                raise ParameterError("a veil release carries its own quasi-identifiers; do not name others.")
            classes = release.classes
            row_class = classes.row_class
            suppressed_row = release.failing[row_class]
            codes = np.empty((len(row_class), len(ds.quasi_identifiers)), dtype=np.int64)
            card = np.empty(len(ds.quasi_identifiers), dtype=np.int64)
            for j in range(len(ds.quasi_identifiers)):
                labels = np.asarray(classes.cells(j).labels, dtype=object)
                # Suppressed records publish "*": the cell already labelled so (a column at its top
                # level), as a reader of the released table sees it, or one more category.
                star = np.flatnonzero(labels == STAR)
                star_code = int(star[0]) if len(star) else len(labels)
                codes[:, j] = np.where(suppressed_row, star_code, classes.keys[:, j][row_class])
                card[j] = len(labels) + 1
            return Features.compact(codes, card), release.released_classes, int(suppressed_row.sum())
        qis = list(quasi_identifiers) if quasi_identifiers is not None else list(original.quasi_identifiers)
        if isinstance(release, EquivalenceClasses):
            raise ParameterError("equivalence classes do not say which record is which; pass the release or "
                                 "its released table.")
        if isinstance(release, Dataset):
            table = release.table
        else:
            from veil.data.io import read_table

            table = read_table(release, delimiter)
        wanted_sensitive = ([sensitive] if sensitive is not None
                            else [s for s in original.sensitive if s in table.columns])
        published = Dataset(table, quasi_identifiers=qis, sensitive=wanted_sensitive)
        if published.num_rows != original.num_rows:
            raise ParameterError(f"the released table has {published.num_rows} records and the original "
                                 f"{original.num_rows}; publish every record in the original order "
                                 "(suppressed as '*', shuffle=False or --keep-order) or pass the veil release.")
        for name in wanted_sensitive:
            if name in original.columns:
                mine, theirs = original.column(name), published.column(name)
                if not np.array_equal(mine.labels[mine.codes], theirs.labels[theirs.codes]):
                    raise ParameterError(f"the released table's '{name}' values differ from the original's row by "
                                         "row; publish the records in the original order (shuffle=False or "
                                         "--keep-order) or pass the veil release.")
        columns = [published.column(q) for q in qis]
        features = Features.compact(np.stack([c.codes for c in columns], axis=1), [c.cardinality for c in columns])
        star = np.ones(published.num_rows, dtype=bool)
        for c in columns:
            star &= c.labels[c.codes] == STAR
        return features, EquivalenceClasses.from_dataset(published), int(star.sum())


def tradeoff(original: Dataset, release, target: str, *, classifiers: Sequence[str] | str | None = None,
             sensitive: str | None = None, test_size: float = DEFAULT_TEST_SIZE,
             rng: np.random.Generator | int = 0, quasi_identifiers: Sequence[str] | None = None,
             delimiter: str | None = None) -> TradeoffResult:
    """Measure ``U_max``, ``U_san`` and ``U_base`` for ``target``, with A_know and A_acc.

    Args:
        original: the original :class:`Dataset`.
        release: a veil ``Release`` of it, or its released table (see
            :meth:`TradeoffWorkload.measure`).
        target: the column the classifiers predict (the sensitive one or a neutral one).
        classifiers: the workload's classifiers (see :class:`TradeoffWorkload`).
        sensitive: the sensitive column whose disclosure is measured (default: the only one).
        test_size: the share of each target value's records held out for testing (see
            :class:`TradeoffWorkload`).
        rng: the seed or generator of the split and the tree (see :class:`TradeoffWorkload`).
        quasi_identifiers: the released table's quasi-identifiers (default: the original's).
        delimiter: the CSV delimiter when ``release`` is a CSV path (sniffed when ``None``).

    Raises:
        ColumnError, ParameterError, DataError: see :class:`TradeoffWorkload` and
            :meth:`TradeoffWorkload.measure`.
    """
    workload = TradeoffWorkload(original, target, classifiers=classifiers, test_size=test_size, rng=rng)
    return workload.measure(release, sensitive=sensitive, quasi_identifiers=quasi_identifiers, delimiter=delimiter)
