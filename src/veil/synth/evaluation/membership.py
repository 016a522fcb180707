"""Membership inference: can an attacker who holds the synthetic table tell whether a given real
record was among the records the synthesizer was fitted on?

Both attacks need real records that were NOT used to fit (the holdout): the members are a random
sample of the real (training) table, the non-members an equal-sized random sample of the holdout,
so that a guess by coin flip has no advantage. Each group is split at random into two halves: the
attacker tunes the attack on the first halves and is scored on the second, because choosing the
best setting on the records it is scored on would inflate the advantage.

The advantage is TPR − FPR on the scoring halves (the share of members the attack calls members,
minus the share of non-members it calls members): 0 is no better than guessing, 1 a perfect
attack. Its 95 % confidence interval is Newcombe's score interval of a difference of two
independent rates (see :mod:`.intervals`).

(a) Distance to closest record (DCR). For each record, the Hamming distance (the number of
columns that differ) to its nearest synthetic record; the attack calls a record a member when that
distance is at most a threshold t: of the thresholds that call some but not all of the first
halves' records members (one that calls every record alike would score an exact, uninformative 0),
the one with the largest TPR − FPR on the first halves, the smallest among ties. When no threshold
separates members on the first halves, the one chosen may call nearly every record a member (TPR
and FPR near 1): its advantage and interval are then both close to 0, which is what this attack,
tuned as an attacker would, achieves; the row shows TPR and FPR so that the reader sees it.

(b) Membership classifier with known members. The attacker knows the mechanism's class: a marginal-based synthesizer
reproduces the low-order statistics of its training records, so a member's neighbourhood tends to
be over-represented in the synthetic table compared with what the table's own one-way
frequencies predict. The features of a record are the counts of synthetic records at Hamming
distance exactly 0, 1 and 2 from it (log(1 + count)) and the log-probability of the record under
the synthetic table's one-way frequencies (independent columns, add-½ smoothing). A classifier
(scikit-learn's histogram gradient boosting) learns member from non-member on these features from
the first halves, i.e. records whose membership the attacker knows, and calls a record of the
second halves a member when it gives it a probability of at least ½. It is not a shadow-model
attack: the mechanism is not re-run, the attack learns from labelled real records of the release
itself; it is an attacker with more knowledge of the training set but less of the mechanism. The
shadow-model attack, which re-runs the mechanism on shadow training sets (Shokri et al., S&P 2017;
Stadler et al., USENIX Security 2022), is :mod:`.shadow_models`. When the number of
column pairs exceeds :data:`MAX_PAIRS`, the distance-2 count is left out (the result says so).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.synth.evaluation.distance import nearest
from veil.synth.evaluation.intervals import rate_difference
from veil.synth.evaluation.keys import counts_in, joint_keys
from veil.synth.evaluation.sections import Row, Section, interval, number, share
from veil.synth.evaluation.threads import single_thread

MAX_TARGETS = 5000      # members (and as many non-members) attacked at most
MIN_TARGETS = 4         # fewer members or non-members than this: the attacks are not run
MAX_PAIRS = 300         # column pairs for the distance-2 feature at most
CLASSIFIER = "membership classifier with known members"


@dataclass(frozen=True)
class Attack:
    """One membership attack's advantage on the scoring halves, or why it was not run."""
    name: str
    ran: bool
    reason: str | None = None
    advantage: float | None = None
    interval: tuple[float, float] | None = None
    tpr: float | None = None
    fpr: float | None = None
    scored_members: int = 0
    scored_non_members: int = 0
    setting: str | None = None           # the threshold, or the features used

    def to_dict(self) -> dict:
        return {"name": self.name, "ran": self.ran, "reason": self.reason, "advantage": self.advantage,
                "interval": None if self.interval is None else list(self.interval), "confidence": 0.95,
                "tpr": self.tpr, "fpr": self.fpr, "scored_members": self.scored_members,
                "scored_non_members": self.scored_non_members, "setting": self.setting}


@dataclass(frozen=True)
class Membership:
    """The two membership attacks on real records, with the distance-to-closest-record profile of both groups."""
    dcr: Attack
    classifier: Attack
    members: int = 0                     # members (and as many non-members) sampled
    member_copies: float | None = None        # share of members with an identical synthetic record
    non_member_copies: float | None = None    # the same for non-members
    member_mean_dcr: float | None = None
    non_member_mean_dcr: float | None = None

    def to_dict(self) -> dict:
        return {"dcr": self.dcr.to_dict(), "known_member_classifier": self.classifier.to_dict(), "members": self.members,
                "member_copies": self.member_copies, "non_member_copies": self.non_member_copies,
                "member_mean_dcr": self.member_mean_dcr, "non_member_mean_dcr": self.non_member_mean_dcr}

    def section(self) -> Section:
        title = "Privacy: membership inference"
        if not self.dcr.ran:
            return Section(title, (Row("not run", "—", self.dcr.reason or ""),))
        rows = [Row("records attacked", f"{self.members} + {self.members}",
                    "Random members (real records the synthesizer was fitted on) and as many non-members "
                    "(holdout records); each attack is tuned on half of them and scored on the other half."),
                Row("distance to closest record, members / non-members",
                    f"{number(self.member_mean_dcr, 2)} / {number(self.non_member_mean_dcr, 2)}",
                    "Mean number of columns in which a record differs from its nearest synthetic record; "
                    "members much closer than non-members mean the synthesizer memorised them (equal is good)."),
                Row("identical synthetic record, members / non-members",
                    f"{share(self.member_copies)} / {share(self.non_member_copies)}",
                    "Share of records with an exact copy in the synthetic table; the non-members' share is what "
                    "chance gives, a higher share of members is a leak.")]
        for attack in (self.dcr, self.classifier):
            if not attack.ran:
                rows.append(Row(f"{attack.name} advantage", "not run", attack.reason or ""))
                continue
            rows.append(Row(f"{attack.name} advantage", number(attack.advantage),
                            f"TPR − FPR of the attack ({attack.setting}) on {attack.scored_members} members and "
                            f"{attack.scored_non_members} non-members it was not tuned on (TPR {number(attack.tpr)}, "
                            f"FPR {number(attack.fpr)}): 0 is no better than guessing, 1 a perfect attack; lower is "
                            f"better."))
            rows.append(Row(f"{attack.name} advantage, 95% CI", interval(attack.interval),
                            "Newcombe's score interval of the difference of the two rates; an interval that holds 0 "
                            "means no advantage could be shown."))
        return Section(title, tuple(rows))


def _not_run(reason: str) -> Membership:
    return Membership(Attack("distance to closest record", False, reason), Attack(CLASSIFIER, False, reason))


def _scored(name: str, member_hits: np.ndarray, non_member_hits: np.ndarray, setting: str) -> Attack:
    x1, n1 = int(member_hits.sum()), member_hits.size
    x2, n2 = int(non_member_hits.sum()), non_member_hits.size
    return Attack(name, True, None, x1 / n1 - x2 / n2, rate_difference(x1, n1, x2, n2), x1 / n1, x2 / n2, n1, n2,
                  setting)


def neighbour_counts(targets: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], radius: int) -> np.ndarray:
    """For each target: the number of synthetic records at Hamming distance exactly 0, 1, …,
    ``radius`` (columns n × (radius + 1)), by counting the synthetic records that agree with the
    target on every column outside each set of at most ``radius`` columns and unfolding the
    overlaps (a record at distance r agrees outside C(d − r, s − r) of the s-column sets)."""
    d = len(sizes)
    out = np.zeros((targets.shape[0], radius + 1), dtype=np.int64)
    for r in range(radius + 1):
        agree = np.zeros(targets.shape[0], dtype=np.int64)
        for left_out in _subsets(d, r):
            kept = [j for j in range(d) if j not in left_out]
            t_keys, s_keys = joint_keys([targets, synthetic], sizes, kept)
            agree += counts_in(s_keys, t_keys)
        # agree = Σ_{e ≤ r} C(d − e, r − e) × (records at distance exactly e)
        out[:, r] = agree - sum(math.comb(d - e, r - e) * out[:, e] for e in range(r))
    return out


def _subsets(d: int, r: int):
    import itertools

    return itertools.combinations(range(d), r)


def _independence_log_probability(targets: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    total = np.zeros(targets.shape[0])
    for j, size in enumerate(sizes):
        counts = np.bincount(synthetic[:, j], minlength=size) + 0.5
        total += np.log(counts[targets[:, j]] / counts.sum())
    return total


def membership(real: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], *,
               holdout: np.ndarray | None, rng: np.random.Generator) -> Membership:
    """The distance-to-closest-record attack and the membership classifier with known members (module docstring) on
    checked code tables; not run, with the reason, without a holdout or with fewer than
    :data:`MIN_TARGETS` records in it."""
    if holdout is None:
        return _not_run("No holdout was given: measuring membership inference needs real records that were not "
                        "used to fit, to tell the attack's hits from chance.")
    n = min(real.shape[0], holdout.shape[0], MAX_TARGETS)
    if n < MIN_TARGETS:
        return _not_run(f"The holdout or the real table has fewer than {MIN_TARGETS} records, too few to attack.")
    members = real[np.sort(rng.choice(real.shape[0], size=n, replace=False))]
    non_members = holdout[np.sort(rng.choice(holdout.shape[0], size=n, replace=False))]
    half_m, half_n = rng.permutation(n) < n // 2, rng.permutation(n) < n // 2   # True: tuning half
    d = len(sizes)

    dcr_m = nearest(members, synthetic, sizes, range(d)).distance
    dcr_n = nearest(non_members, synthetic, sizes, range(d)).distance
    # only thresholds that call some but not all tuning records members: one that calls everyone
    # alike scores a trivially exact 0, which says nothing about the attacks a threshold makes
    tuning_distances = np.concatenate([dcr_m[half_m], dcr_n[half_n]])
    candidates = [t for t in range(d + 1) if 0 < np.mean(tuning_distances <= t) < 1] or [0]
    gains = [float(np.mean(dcr_m[half_m] <= t) - np.mean(dcr_n[half_n] <= t)) for t in candidates]
    best_t = candidates[int(np.argmax(gains))]
    setting = f"member when the distance is at most {best_t}"
    dcr = _scored("distance to closest record", dcr_m[~half_m] <= best_t, dcr_n[~half_n] <= best_t, setting)

    radius = 2 if math.comb(d, 2) <= MAX_PAIRS else 1
    radius = min(radius, d)
    both = np.concatenate([members, non_members])
    features = np.column_stack([np.log1p(neighbour_counts(both, synthetic, sizes, radius)),
                                _independence_log_probability(both, synthetic, sizes)])
    labels = np.concatenate([np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)])
    tuning = np.concatenate([half_m, half_n])
    from sklearn.ensemble import HistGradientBoostingClassifier

    with warnings.catch_warnings(), single_thread():
        warnings.simplefilter("ignore")
        model = HistGradientBoostingClassifier(max_iter=50, max_leaf_nodes=15, early_stopping=False,
                                               random_state=int(rng.integers(2 ** 31)))
        guess = model.fit(features[tuning], labels[tuning]).predict_proba(features[~tuning])[:, 1] >= 0.5
    scored_labels = labels[~tuning]
    distances = ", ".join(str(r) for r in range(radius + 1))
    classifier = _scored(CLASSIFIER, guess[scored_labels == 1], guess[scored_labels == 0],
                     f"a classifier on the counts of synthetic records at distance {distances} and the one-way "
                     f"log-probability, member when its probability is at least 0.5")
    return Membership(dcr, classifier, n, float(np.mean(dcr_m == 0)), float(np.mean(dcr_n == 0)),
                      float(dcr_m.mean()), float(dcr_n.mean()))
