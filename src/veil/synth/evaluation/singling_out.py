"""Singling-out risk, in the style of Anonymeter (Giomi et al., PoPETs 2023).

An attacker singles a person out when they hold a predicate that exactly one record of the data
satisfies (the GDPR's and the Article 29 Working Party's notion). Here the attacker builds
predicates from the synthetic table: for a random synthetic record, and a random order of the
columns, the shortest prefix of that order whose values (a conjunction ``col₁ = v₁ ∧ … ∧ colₖ =
vₖ``) match that record alone in the synthetic table; records without one (a duplicate row) give
no predicate. The attack succeeds when the predicate matches exactly one real training record;
the control is the same predicate matching exactly one holdout record. The two sets are made the
same size (a random sample of the larger), because the chance that a predicate matches exactly
one record depends on how many records there are; when the training table is larger, a predicate
drawn from a copy of a training record may miss that record in the sample, so the risk is then
measured on a sample and can be lower than on the whole table (the result gives the sizes).

The risk is ``(attack − control) / (1 − control)``; without a holdout there is no control and the
attack is not run. Column orders are drawn once (:data:`ORDERS` of them) and shared between
records so that counting stays a few grouped lookups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.synth.evaluation.anonymeter_risk import RiskEstimate
from veil.synth.evaluation.keys import counts_in, joint_keys
from veil.synth.evaluation.sections import Row, Section

ATTEMPTS = 2000     # predicates tried at most
ORDERS = 10         # random column orders the predicates are drawn from
MIN_RECORDS = 10    # fewer training or holdout records: not run


@dataclass(frozen=True)
class SinglingOut:
    """Singling-out success against training and control records, or why it was not run."""
    ran: bool
    reason: str | None = None
    estimate: RiskEstimate | None = None
    compared_rows: int = 0              # training records and holdout records the predicates are checked on (each)
    mean_columns: float | None = None   # columns in a predicate, on average
    candidates: int = 0                 # synthetic records tried

    def to_dict(self) -> dict:
        return {"ran": self.ran, "reason": self.reason, "compared_rows": self.compared_rows,
                "mean_columns": self.mean_columns, "candidates": self.candidates,
                **({} if self.estimate is None else self.estimate.to_dict())}

    def section(self) -> Section:
        title = "Privacy: singling out"
        if not self.ran:
            return Section(title, (Row("not run", "—", self.reason or ""),))
        rows = [Row("predicates", f"{self.estimate.attempts}",
                    f"Conjunctions of values (on average {self.mean_columns:.1f} columns) that match exactly one "
                    f"synthetic record, built from {self.candidates} random synthetic records and checked on "
                    f"{self.compared_rows} training and {self.compared_rows} holdout records.")]
        rows += self.estimate.rows("singling out", "the predicate matched exactly one record")
        return Section(title, tuple(rows))


def singling_out(real: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], *,
                 holdout: np.ndarray | None, rng: np.random.Generator) -> SinglingOut:
    """The singling-out attack of the module's docstring on checked code tables."""
    if holdout is None:
        return SinglingOut(False, "No holdout was given: the singling-out risk compares the attack on training "
                                  "records with the same attack on records the synthesizer never saw.")
    n = min(real.shape[0], holdout.shape[0])
    if n < MIN_RECORDS:
        return SinglingOut(False, f"The holdout or the real table has fewer than {MIN_RECORDS} records, "
                                  "too few to measure singling out.")
    training = real[np.sort(rng.choice(real.shape[0], size=n, replace=False))]
    control = holdout[np.sort(rng.choice(holdout.shape[0], size=n, replace=False))]
    d = len(sizes)
    m = synthetic.shape[0]
    tried = min(m, 3 * ATTEMPTS)
    candidates = rng.choice(m, size=tried, replace=False)
    orders = [rng.permutation(d) for _ in range(ORDERS)]
    order_of = rng.integers(ORDERS, size=tried)
    length = np.zeros(tried, dtype=np.int64)          # 0: no predicate (yet)
    for o, order in enumerate(orders):
        open_ = np.flatnonzero(order_of == o)
        for k in range(1, d + 1):
            if open_.size == 0:
                break
            c_keys, s_keys = joint_keys([synthetic[candidates[open_]], synthetic], sizes, order[:k])
            alone = counts_in(s_keys, c_keys) == 1
            length[open_[alone]] = k
            open_ = open_[~alone]
    made = np.flatnonzero(length > 0)[:ATTEMPTS]
    if made.size == 0:
        return SinglingOut(False, "No synthetic record is alone in the synthetic table on any set of columns, "
                                  "so the attacker finds no predicate to try.", candidates=tried, compared_rows=n)
    attack_hits = control_hits = 0
    for o, order in enumerate(orders):
        for k in range(1, d + 1):
            group = made[(order_of[made] == o) & (length[made] == k)]
            if group.size == 0:
                continue
            p_keys, t_keys, c_keys = joint_keys([synthetic[candidates[group]], training, control], sizes, order[:k])
            attack_hits += int(np.sum(counts_in(t_keys, p_keys) == 1))
            control_hits += int(np.sum(counts_in(c_keys, p_keys) == 1))
    estimate = RiskEstimate(int(made.size), attack_hits, int(made.size), control_hits)
    return SinglingOut(True, None, estimate, n, float(length[made].mean()), tried)
