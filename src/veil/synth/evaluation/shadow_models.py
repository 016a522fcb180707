"""A shadow-model membership attack that re-runs the synthesizer (Shokri, Stronati, Song and
Shmatikov, "Membership Inference Attacks Against Machine Learning Models", S&P 2017; for
synthetic data Stadler, Oprisanu and Troncoso, "Synthetic Data – Anonymisation Groundhog Day",
USENIX Security 2022).

Threat model. The attacker knows the mechanism and its parameters (the algorithm, the budget,
the workload, the model-size limit: everything the public manifest says), holds reference data
from the same population (here the holdout: real records the synthesizer was not fitted on), knows
a target record, and sees the synthetic table. It wants to tell whether the target was in the
training table.

The attack. For each of ``targets`` target records (real training records: about half of them
outliers, the records whose values are rarest under the reference's one-way frequencies, the kind
most exposed, and the rest drawn at random):

1. *Shadow training sets.* Each run draws ``rows`` records of the reference without replacement
   (default ``min(len(reference), len(real))``) and, for every target independently, replaces one
   of them by the target or not, so that each target is in exactly half of the runs (balanced,
   a random half) and the sets always have ``rows`` records. Putting several targets in one run
   (each with its own random in/out label) costs one fit per run instead of one per target and
   run; each target then sees the others' presence as noise.
2. *Shadow synthetic tables.* The generator re-runs the same mechanism with the same parameters on
   each set (its randomness drawn from the evaluation's generator: a simulation, never the secure
   source, never a release).
3. *Features* of a synthetic table for a target: the number of synthetic records equal to the
   target and at Hamming distance 1 from it, and the mean and the minimum over the 1-, 2- and
   3-way marginals of the target's cell count in the synthetic table (at most
   :data:`MAX_CLIQUES` marginals per order, drawn at random once), each count rescaled to
   ``rows`` synthetic records and taken as log(1 + count).
4. *Classifier.* Each target's features are standardized by their mean and spread over that
   target's training runs (the attacker's own baseline for that record), and one logistic
   regression, pooled over the targets, learns "in" from "out"; it calls a table "in" when its
   probability is at least ½.

Measurement. The advantage is measured on ``trials`` fresh runs, drawn and generated after the
classifier is trained and never shown to it (fresh reference samples, fresh in/out labels, fresh
generator randomness): TPR − FPR over every (target, trial) pair, pooled over the targets, with
Newcombe's hybrid score interval (:func:`.intervals.rate_difference`, two Wilson intervals; the
trials are independent given the trained classifier, and pooling targets with different rates
makes the binomial interval conservative). 0 is no better than guessing, 1 a perfect attack. The
classifier is also applied to the real synthetic table (every target is a real member there), as
the attacker would; that is one guess per target, reported but not an estimate of the advantage.

Limits. The cost is ``runs + trials`` fits of the mechanism, so the sample is small and the
interval wide; a few targets cannot show the worst record of the table, only that of the records
tried. The shadow sets are as large as the reference allows, which may be smaller than the real
training table: the membership signal of one record is then somewhat larger in the shadows than
in the release. A stronger attacker (more runs, better features, a classifier per target) may do
better: the figure is a lower bound on what an attack can achieve, not a bound on the risk —
only the differential-privacy guarantee bounds that.
"""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from veil.errors import DataError, ParameterError
from veil.synth.evaluation.intervals import rate_difference
from veil.synth.evaluation.keys import counts_in, joint_keys
from veil.synth.evaluation.membership import neighbour_counts
from veil.synth.evaluation.sections import Row, Section, interval, number

__all__ = ["DEFAULT_RUNS", "DEFAULT_TARGETS", "DEFAULT_TRIALS", "MAX_CLIQUES", "ShadowAttack", "TargetResult",
           "shadow_attack"]

Generator = Callable[[np.ndarray, np.random.Generator], np.ndarray]

DEFAULT_TARGETS = 5
DEFAULT_RUNS = 16
DEFAULT_TRIALS = 16
MAX_CLIQUES = 120       # marginals of each order whose cell counts make the features, at most
MIN_REFERENCE = 4       # fewer reference records (or training records) than this: not run
TITLE = "Privacy: shadow-model membership attack"


@dataclass(frozen=True)
class TargetResult:
    """One target's trials: its kind (``outlier`` or ``random``), hits among the trials it was in
    and among those it was out, and the classifier's guess on the real synthetic table."""
    kind: str
    in_trials: int
    in_hits: int
    out_trials: int
    out_hits: int
    release_guess: bool

    def to_dict(self) -> dict:
        return {"kind": self.kind, "in_trials": self.in_trials, "in_hits": self.in_hits,
                "out_trials": self.out_trials, "out_hits": self.out_hits,
                "tpr": self.in_hits / self.in_trials if self.in_trials else None,
                "fpr": self.out_hits / self.out_trials if self.out_trials else None,
                "release_guess_member": self.release_guess}


@dataclass(frozen=True)
class ShadowAttack:
    """The shadow-model attack's advantage on fresh trials, or why it was not run."""
    ran: bool
    reason: str | None = None
    advantage: float | None = None
    interval: tuple[float, float] | None = None
    tpr: float | None = None
    fpr: float | None = None
    targets: tuple[TargetResult, ...] = ()
    runs: int = 0
    trials: int = 0
    rows: int = 0
    note: str | None = None                  # how the caller chose the cost (e.g. AIM's smaller default)
    generator_calls: int = 0
    features: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        return {"name": "shadow model", "ran": self.ran, "reason": self.reason, "advantage": self.advantage,
                "interval": None if self.interval is None else list(self.interval), "confidence": 0.95,
                "interval_method": "Newcombe hybrid score (two Wilson intervals)", "tpr": self.tpr, "fpr": self.fpr,
                "runs": self.runs, "trials": self.trials, "shadow_rows": self.rows, "note": self.note,
                "generator_calls": self.generator_calls, "features": list(self.features),
                "targets": [t.to_dict() for t in self.targets]}

    def section(self) -> Section:
        if not self.ran:
            return Section(TITLE, (Row("not run", "—", self.reason or ""),))
        outliers = sum(t.kind == "outlier" for t in self.targets)
        pairs = len(self.targets) * self.trials
        calls = [t for t in self.targets if t.release_guess]
        worst = max(self.targets, key=lambda t: (t.in_hits / max(t.in_trials, 1) - t.out_hits / max(t.out_trials, 1)))
        rows = [Row("what the attacker does", f"{len(self.targets)} targets, {self.runs} + {self.trials} runs",
                    f"An attacker who knows the mechanism and its parameters re-ran it on {self.runs} shadow training "
                    f"sets of {self.rows} holdout records, each target put in half of them, trained a classifier "
                    f"on features of the shadow synthetic tables (copies of and near neighbours of the target, its "
                    f"cells in the 1-, 2- and 3-way marginals), then was scored on {self.trials} fresh runs it never "
                    f"saw. {len(self.targets)} real training records were targets, {outliers} of them outliers "
                    f"(rarest values)." + (f" {self.note}" if self.note else "")),
                Row("shadow-model attack advantage", number(self.advantage),
                    f"TPR − FPR over {pairs} fresh (target, run) pairs (TPR {number(self.tpr)}: share of runs with "
                    f"the target in that the attack called in; FPR {number(self.fpr)}: the same for runs without "
                    f"it): 0 is no better than guessing, 1 means the attacker always tells whether a record was "
                    f"in the training set; lower is better."),
                Row("shadow-model attack advantage, 95% CI", interval(self.interval),
                    "Newcombe's score interval of the difference of the two rates (from two Wilson intervals); an "
                    "interval that holds 0 means no advantage could be shown with this many runs. It is about this "
                    "attack only: a stronger one may do better, and only the DP guarantee bounds every attack."),
                Row("most exposed target", f"{worst.kind}: {worst.in_hits}/{worst.in_trials} in, "
                                           f"{worst.out_hits}/{worst.out_trials} out",
                    "The target on which the attack did best: runs called in among those with it in, and among "
                    "those without it; a large gap means that record's presence shows in the synthetic table."),
                Row("on the synthetic table itself", f"{len(calls)} of {len(self.targets)} called members",
                    "The classifier applied to the real synthetic table (every target is a real training record, so "
                    "each call of member is right): one guess per target, not a measure of the advantage.")]
        return Section(TITLE, tuple(rows))


def not_run(reason: str) -> ShadowAttack:
    """The attack, not run, with the sentence saying why."""
    return ShadowAttack(False, reason)


def _whole(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ParameterError(f"{name} must be a whole number of at least {low}, not {value!r}.")
    return int(value)


def check_costs(targets, runs, trials, rows) -> tuple[int, int, int, int | None]:
    """The attack's cost parameters, checked: ``targets`` >= 1, ``runs`` 0 (skip) or >= 2,
    ``trials`` >= 2, ``rows`` None or >= 2 (ParameterError naming the one to fix)."""
    targets = _whole(targets, "shadow_targets", 1)
    runs = _whole(runs, "shadow_runs", 0)
    if runs == 1:
        raise ParameterError("shadow_runs must be 0 (skip the shadow-model attack) or at least 2, not 1.")
    trials = _whole(trials, "shadow_trials", 2)
    rows = None if rows is None else _whole(rows, "shadow_rows", 2)
    return targets, runs, trials, rows


def _rarity(real: np.ndarray, reference: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Each real record's log-probability under the reference's one-way frequencies (add-½)."""
    total = np.zeros(real.shape[0])
    for j, size in enumerate(sizes):
        counts = np.bincount(reference[:, j], minlength=size) + 0.5
        total += np.log(counts[real[:, j]] / counts.sum())
    return total


def _targets(real, reference, sizes, count, rng) -> tuple[np.ndarray, list[str]]:
    """Distinct real records: the rarest ⌈count/2⌉ (ties broken at random), then random ones."""
    order = rng.permutation(real.shape[0])
    keys = joint_keys([real], sizes, range(len(sizes)))[0][order]
    _, first = np.unique(keys, return_index=True)
    distinct = order[np.sort(first)]                              # one index per distinct record, random order
    count = min(count, distinct.size)
    rarity = _rarity(real[distinct], reference, sizes)
    outliers = distinct[np.argsort(rarity, kind="stable")[:math.ceil(count / 2)]]
    rest = np.setdiff1d(distinct, outliers)
    chosen = list(outliers) + list(rng.choice(rest, size=count - outliers.size, replace=False))
    kinds = ["outlier"] * outliers.size + ["random"] * (count - outliers.size)
    return real[np.asarray(chosen, dtype=np.int64)], kinds


def _cliques(d: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    out = []
    for order in (1, 2, 3):
        all_ = list(itertools.combinations(range(d), order))
        if len(all_) > MAX_CLIQUES:
            all_ = [all_[i] for i in np.sort(rng.choice(len(all_), size=MAX_CLIQUES, replace=False))]
        out.append(all_)
    return out


FEATURES = ("copies", "at distance 1", "1-way cell mean", "1-way cell min", "2-way cell mean", "2-way cell min",
            "3-way cell mean", "3-way cell min")


def features(targets: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], cliques, rows: int) -> np.ndarray:
    """The features of the module's docstring, targets × len(:data:`FEATURES`): log(1 + count),
    each count rescaled from the synthetic table's rows to ``rows``."""
    scale = rows / synthetic.shape[0]
    near = neighbour_counts(targets, synthetic, sizes, 1) * scale
    columns = [near[:, 0], near[:, 1]]
    for by_order in cliques:
        if not by_order:
            columns += [np.zeros(targets.shape[0])] * 2
            continue
        cells = np.column_stack([counts_in(s, t) for t, s in (joint_keys([targets, synthetic], sizes, c)
                                                                for c in by_order)]) * scale
        logs = np.log1p(cells)
        columns += [logs.mean(axis=1), logs.min(axis=1)]
    columns[0], columns[1] = np.log1p(columns[0]), np.log1p(columns[1])
    return np.column_stack(columns)


class _Runs:
    """Shadow runs: a reference sample with the targets put in by a balanced random design, the
    generator's table, and its features; counts the generator's calls."""

    def __init__(self, generator: Generator, reference, targets, sizes, rows, cliques):
        self.generator, self.reference, self.targets = generator, reference, targets
        self.sizes, self.rows, self.cliques = sizes, rows, cliques
        self.calls = 0

    def design(self, runs: int, rng: np.random.Generator) -> np.ndarray:
        """runs × targets labels, each target in exactly ⌈runs/2⌉ runs at random."""
        base = (np.arange(runs) < math.ceil(runs / 2)).astype(np.int64)
        return np.column_stack([rng.permutation(base) for _ in range(self.targets.shape[0])])

    def table(self, labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The synthetic table of one run (its labels say which targets are in)."""
        sample = self.reference[rng.choice(self.reference.shape[0], size=self.rows, replace=False)]
        slots = rng.choice(self.rows, size=self.targets.shape[0], replace=False)
        inside = labels.astype(bool)
        sample[slots[inside]] = self.targets[inside]
        self.calls += 1
        synthetic = np.asarray(self.generator(sample, rng))
        d = len(self.sizes)
        if synthetic.ndim != 2 or synthetic.shape[1] != d or synthetic.shape[0] < 1 \
                or synthetic.dtype.kind not in "iu":
            raise DataError(f"the shadow-model generator must return a table of integer codes with {d} columns and "
                            f"at least one row, not an array of shape {synthetic.shape} and type {synthetic.dtype}.")
        if np.any(synthetic < 0) or np.any(synthetic >= np.asarray(self.sizes)):
            raise DataError("the shadow-model generator returned codes outside their columns' domains; encode its "
                            "output with the same domain.")
        return synthetic.astype(np.int64, copy=False)

    def features(self, labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """runs × targets × features."""
        return np.stack([features(self.targets, self.table(row, rng), self.sizes, self.cliques, self.rows)
                         for row in labels])


def shadow_attack(real: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], *,
                  holdout: np.ndarray | None, generator: Generator | None, rng: np.random.Generator,
                  targets: int = DEFAULT_TARGETS, runs: int = DEFAULT_RUNS, trials: int = DEFAULT_TRIALS,
                  rows: int | None = None, note: str | None = None) -> ShadowAttack:
    """The shadow-model membership attack of the module's docstring on checked code tables.

    Args:
        real: the training records (n × d codes); the targets are drawn from them.
        synthetic: the synthetic table the mechanism released (the classifier's last input).
        sizes: the columns' numbers of values.
        holdout: the attacker's reference data (real records not used to fit); None: not run.
        generator: ``generator(codes, rng)`` fits the same mechanism with the same parameters to
            ``codes`` and returns a synthetic code table (of as many rows); None: not run.
        rng: every random choice (targets, samples, designs, the generator's randomness).
        targets: target records (about half outliers); runs: shadow training runs (0: not run);
        trials: fresh evaluation runs; rows: records per shadow set (default
            ``min(len(holdout), len(real))``).
        note: a sentence for the report on how the cost was chosen.

    Cost: ``runs + trials`` calls of the generator.

    Raises:
        ParameterError: a cost parameter out of range (see :func:`check_costs`).
        DataError: the generator returned something other than a code table of the domain.
    """
    targets, runs, trials, rows = check_costs(targets, runs, trials, rows)
    if generator is None:
        return not_run("No generator was given: the attack must re-run the mechanism on shadow training sets, "
                       "which only the caller that fitted it (veil synth, synthesize) can do.")
    if holdout is None:
        return not_run("No holdout was given: the attacker's shadow training sets are drawn from real records that "
                       "were not used to fit.")
    if runs == 0:
        return not_run("Skipped: the number of shadow runs was set to 0.")
    if holdout.shape[0] < MIN_REFERENCE or real.shape[0] < MIN_REFERENCE:
        return not_run(f"The holdout or the real table has fewer than {MIN_REFERENCE} records, too few for shadow "
                       "training sets.")
    size = min(holdout.shape[0], real.shape[0]) if rows is None else min(rows, holdout.shape[0])
    streams = rng.spawn(4)
    chosen, kinds = _targets(real, holdout, sizes, min(targets, size), streams[0])
    shadow = _Runs(generator, holdout, chosen, sizes, size, _cliques(len(sizes), streams[0]))

    training_labels = shadow.design(runs, streams[1])
    training = shadow.features(training_labels, streams[1])        # runs × targets × features
    centre = training.mean(axis=0)
    spread = training.std(axis=0)
    spread[spread == 0] = 1.0
    classifier = _fit(((training - centre) / spread).reshape(-1, training.shape[2]), training_labels.reshape(-1),
                      streams[2])

    # fresh runs, made after the classifier is trained and never shown to it
    trial_labels = shadow.design(trials, streams[3])
    scored = shadow.features(trial_labels, streams[3])
    guesses = classifier(((scored - centre) / spread).reshape(-1, scored.shape[2])).reshape(trial_labels.shape)
    release = classifier((features(chosen, synthetic, sizes, shadow.cliques, size) - centre) / spread)

    results = []
    for i in range(chosen.shape[0]):
        inside = trial_labels[:, i] == 1
        results.append(TargetResult(kinds[i], int(inside.sum()), int(guesses[inside, i].sum()),
                                    int((~inside).sum()), int(guesses[~inside, i].sum()), bool(release[i])))
    results = tuple(results)
    x1, n1 = sum(t.in_hits for t in results), sum(t.in_trials for t in results)
    x2, n2 = sum(t.out_hits for t in results), sum(t.out_trials for t in results)
    return ShadowAttack(True, None, x1 / n1 - x2 / n2, rate_difference(x1, n1, x2, n2), x1 / n1, x2 / n2, results,
                        runs, trials, size, note, shadow.calls, FEATURES)


def _fit(x: np.ndarray, y: np.ndarray, rng: np.random.Generator):
    """A logistic regression (L2, C = 1) of y on x; returns the rule "in when p >= ½"."""
    from sklearn.linear_model import LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression(C=1.0, max_iter=1000, random_state=int(rng.integers(2 ** 31))).fit(x, y)

    def predict(z: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return model.predict_proba(z)[:, 1] >= 0.5

    return predict
