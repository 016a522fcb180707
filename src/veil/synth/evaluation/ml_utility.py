"""Machine-learning utility: train on synthetic, test on real (TSTR) against train on real, test
on real (TRTR).

A classifier that predicts the ``target`` column from the others is trained once on the synthetic
table and once on real records, and both are scored on the same real test records: the real
holdout when one is given (records the synthesizer never saw), else a random 30 % of the real
table set aside (the TRTR model then trains on the other 70 %; the synthesizer did see those test
records, so TSTR is then optimistic, which the result says). Two models, both from scikit-learn:
logistic regression on one-hot features, and histogram gradient boosting with the codes as
categorical features (as ordinal numbers for columns of more than 255 values), in
:data:`ROUNDS` rounds, fewer for a target of more than 4 values so that a fit has at most
:data:`BOOSTING_TREES` trees (one per value and round), never fewer than :data:`MIN_ROUNDS` rounds;
the same settings for both trainings, so the comparison is fair. Scores: accuracy,
macro-F1 and, for a binary target, the area under the ROC curve; and the ratio TSTR / TRTR of
each (1 means the synthetic table trains as good a model as the real one). A training table whose
target holds a single value gives a model that always predicts it. Deterministic given ``rng``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.synth.evaluation.sections import Row, Section, number
from veil.synth.evaluation.threads import single_thread

TEST_SHARE = 0.3            # of the real table, held out for testing when no holdout is given
MAX_ROWS = 50_000           # training and test records used at most (a random sample beyond)
MODELS = ("logistic regression", "gradient boosting")
ROUNDS = 50                 # boosting rounds; a round fits one tree per class (one for a binary target) ...
BOOSTING_TREES = 200        # ... so a target of many values gets fewer rounds, to fit at most this many trees ...
MIN_ROUNDS = 10             # ... in at least this many rounds


@dataclass(frozen=True)
class Scores:
    accuracy: float
    macro_f1: float
    auc: float | None

    def to_dict(self) -> dict:
        return {"accuracy": self.accuracy, "macro_f1": self.macro_f1, "auc": self.auc}


@dataclass(frozen=True)
class ModelUtility:
    """One model's scores trained on real (TRTR) and on synthetic (TSTR) records."""
    model: str
    trtr: Scores
    tstr: Scores

    def ratio(self, measure: str) -> float | None:
        real, synthetic = getattr(self.trtr, measure), getattr(self.tstr, measure)
        if real is None or synthetic is None or real <= 0:
            return None
        return synthetic / real

    def to_dict(self) -> dict:
        return {"model": self.model, "trtr": self.trtr.to_dict(), "tstr": self.tstr.to_dict(),
                "ratio": {m: self.ratio(m) for m in ("accuracy", "macro_f1", "auc")}}


@dataclass(frozen=True)
class MLUtility:
    """TSTR against TRTR, or why it was not run."""
    ran: bool
    reason: str | None = None
    target: str | None = None
    test: str | None = None            # "holdout" or "split"
    train_rows: int = 0                # real records the TRTR models trained on
    synthetic_rows: int = 0            # synthetic records the TSTR models trained on
    test_rows: int = 0
    majority_accuracy: float | None = None   # accuracy of always predicting the real training's most common value
    models: tuple[ModelUtility, ...] = ()

    def to_dict(self) -> dict:
        return {"ran": self.ran, "reason": self.reason, "target": self.target, "test": self.test,
                "train_rows": self.train_rows, "synthetic_rows": self.synthetic_rows, "test_rows": self.test_rows,
                "majority_accuracy": self.majority_accuracy, "models": [m.to_dict() for m in self.models]}

    def section(self) -> Section:
        title = "Utility: train on synthetic, test on real"
        if not self.ran:
            return Section(title, (Row("not run", "—", self.reason or ""),))
        test = ("the real holdout (records the synthesizer never saw)" if self.test == "holdout" else
                "a random 30% of the real table set aside (the synthesizer saw these records, so TSTR is optimistic)")
        rows = [Row("target and test records", f"{self.target}, {self.test_rows} rows",
                    f"Classifiers predict {self.target!r} from the other columns and are scored on {test}; "
                    f"TRTR trains on {self.train_rows} real records, TSTR on {self.synthetic_rows} synthetic ones."),
                Row("majority-class accuracy", number(self.majority_accuracy),
                    "The accuracy of always predicting the most common real value: a model must beat it to be useful.")]
        for m in self.models:
            rows.append(Row(f"{m.model}: accuracy TSTR / TRTR", f"{number(m.tstr.accuracy)} / {number(m.trtr.accuracy)}",
                            f"Share of real test records predicted right by the model trained on synthetic / on real "
                            f"records (ratio {number(m.ratio('accuracy'))}); higher is better, a ratio near 1 means "
                            f"the synthetic table serves this task as well as the real one."))
            rows.append(Row(f"{m.model}: macro-F1 TSTR / TRTR", f"{number(m.tstr.macro_f1)} / {number(m.trtr.macro_f1)}",
                            f"F1 averaged over the target's values, so rare values count as much as common ones "
                            f"(ratio {number(m.ratio('macro_f1'))}); higher is better."))
            if m.trtr.auc is not None or m.tstr.auc is not None:
                rows.append(Row(f"{m.model}: ROC AUC TSTR / TRTR", f"{number(m.tstr.auc)} / {number(m.trtr.auc)}",
                                f"Chance that a positive real record is scored above a negative one (0.5 is guessing, "
                                f"1 perfect; ratio {number(m.ratio('auc'))}); higher is better."))
        return Section(title, tuple(rows))


def _features(codes: np.ndarray, sizes: Sequence[int], columns: Sequence[int]):
    """Sparse one-hot features of ``columns``."""
    from scipy import sparse

    offsets = np.concatenate([[0], np.cumsum([sizes[j] for j in columns])])
    n = codes.shape[0]
    indices = (codes[:, list(columns)] + offsets[:-1]).ravel()
    indptr = np.arange(0, n * len(columns) + 1, len(columns))
    return sparse.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, int(offsets[-1])))


class _Constant:
    """The model of a training table whose target holds one value."""
    def __init__(self, value: int):
        self.classes_ = np.array([value])

    def predict(self, x):
        return np.full(x.shape[0], self.classes_[0])

    def predict_proba(self, x):
        return np.ones((x.shape[0], 1))


def _fit(model: str, x, y, sizes_of_features: Sequence[int], seed: int):
    if np.unique(y).size < 2:
        return _Constant(int(y[0]))
    if model == "logistic regression":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=1.0, max_iter=500).fit(x, y)
    from sklearn.ensemble import HistGradientBoostingClassifier

    categorical = np.array([s <= 255 for s in sizes_of_features])
    classes = np.unique(y).size
    per_round = 1 if classes == 2 else classes
    rounds = max(MIN_ROUNDS, min(ROUNDS, BOOSTING_TREES // per_round))
    return HistGradientBoostingClassifier(max_iter=rounds, early_stopping=False, random_state=seed,
                                          categorical_features=categorical if categorical.any() else None).fit(x, y)


def _score(fitted, x, y, binary: bool) -> Scores:
    from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

    predicted = fitted.predict(x)
    auc = None
    if binary and np.unique(y).size == 2:
        classes = list(fitted.classes_)
        probability = fitted.predict_proba(x)[:, classes.index(1)] if 1 in classes else np.zeros(len(y))
        auc = float(roc_auc_score(y, probability))
    return Scores(float(accuracy_score(y, predicted)),
                  float(f1_score(y, predicted, average="macro", zero_division=0)), auc)


def _cap(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if rows.shape[0] <= MAX_ROWS:
        return rows
    return rows[np.sort(rng.choice(rows.shape[0], size=MAX_ROWS, replace=False))]


def ml_utility(real: np.ndarray, synthetic: np.ndarray, names: Sequence[str], sizes: Sequence[int], *,
               target: int | None, holdout: np.ndarray | None, rng: np.random.Generator) -> MLUtility:
    """TSTR against TRTR for the ``target`` column (index; None: not run, with the reason) on
    checked code tables; see the module's docstring for the design."""
    if target is None:
        return MLUtility(False, "No target column was named, so no classifier was trained; name one to "
                                "measure how well the synthetic table trains a model.")
    if len(names) < 2:
        return MLUtility(False, "The table has a single column, so there is nothing to predict the target from.")
    if holdout is not None:
        train, test, test_kind = real, holdout, "holdout"
    else:
        if real.shape[0] < 10:
            return MLUtility(False, "The real table has fewer than 10 records and no holdout was given, "
                                    "too few to set test records aside.", names[target])
        order = rng.permutation(real.shape[0])
        cut = round(TEST_SHARE * real.shape[0])
        test, train, test_kind = real[np.sort(order[:cut])], real[np.sort(order[cut:])], "split"
    train, test, synthetic = _cap(train, rng), _cap(test, rng), _cap(synthetic, rng)
    features = [j for j in range(len(names)) if j != target]
    feature_sizes = [sizes[j] for j in features]
    binary = sizes[target] == 2
    seed = int(rng.integers(2 ** 31))
    y_train, y_synthetic, y_test = train[:, target], synthetic[:, target], test[:, target]
    majority = int(np.bincount(y_train).argmax())
    models = []
    with warnings.catch_warnings(), single_thread():
        warnings.simplefilter("ignore")
        for model in MODELS:
            if model == "logistic regression":
                x_train, x_synthetic, x_test = (_features(t, sizes, features) for t in (train, synthetic, test))
            else:
                x_train, x_synthetic, x_test = (t[:, features] for t in (train, synthetic, test))
            trtr = _score(_fit(model, x_train, y_train, feature_sizes, seed), x_test, y_test, binary)
            tstr = _score(_fit(model, x_synthetic, y_synthetic, feature_sizes, seed), x_test, y_test, binary)
            models.append(ModelUtility(model, trtr, tstr))
    return MLUtility(True, None, names[target], test_kind, train.shape[0], synthetic.shape[0], test.shape[0],
                     float(np.mean(y_test == majority)), tuple(models))
