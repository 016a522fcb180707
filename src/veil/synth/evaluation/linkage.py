"""Linkage risk, in the style of Anonymeter's linkability (Giomi et al., PoPETs 2023).

The attacker holds two pieces of information about the same people from two sources without a
common key: their values on some columns A, and on the other columns B. The synthetic table is a
bridge: for a target, the attacker finds the nearest synthetic record by its A values and the
nearest by its B values (Hamming distance; among ties the first in a random order of the synthetic
records, drawn once, as an attacker would pick), and links the two pieces when both searches land
on the same synthetic record. The attack succeeds for a training record when its own two pieces
are linked; the control is the same for holdout records, which the synthesizer never saw. The
columns are the quasi-identifiers (default: all), split at random into two halves A and B (the
result names them); targets are equal-sized random samples of training and holdout records.

The risk is ``(attack − control) / (1 − control)``; without a holdout there is no control and the
attack is not run. Ties matter: where many records share the values of a half (a table of few,
small columns), the nearest record is one of many and even a copy of the training table links few
targets; that is a property of the data (the halves do not identify), not a sign of safety by
itself, which is why the report reads it together with the copies and the membership attacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.synth.evaluation.anonymeter_risk import RiskEstimate
from veil.synth.evaluation.distance import nearest
from veil.synth.evaluation.sections import Row, Section

TARGETS = 2000       # training targets (and as many control targets) at most
MIN_RECORDS = 10     # fewer training or holdout records: not run


@dataclass(frozen=True)
class Linkage:
    """Linkage success against training and control records, or why it was not run."""
    ran: bool
    reason: str | None = None
    estimate: RiskEstimate | None = None
    first: tuple[str, ...] = ()       # the columns of one source (A)
    second: tuple[str, ...] = ()      # the columns of the other (B)

    def to_dict(self) -> dict:
        return {"ran": self.ran, "reason": self.reason, "first_columns": list(self.first),
                "second_columns": list(self.second), **({} if self.estimate is None else self.estimate.to_dict())}

    def section(self) -> Section:
        title = "Privacy: linkage"
        if not self.ran:
            return Section(title, (Row("not run", "—", self.reason or ""),))
        rows = [Row("columns linked", f"{', '.join(self.first)} | {', '.join(self.second)}",
                    f"The attacker holds each target's values on the first set of columns and, separately, on the "
                    f"second, and links them through the nearest synthetic record of each ({self.estimate.attempts} "
                    f"training and as many holdout targets); ties are broken at random, so where many records share "
                    f"a half's values even a copy of the real table links few, and the copy and membership rows "
                    f"must be read too.")]
        rows += self.estimate.rows("linkage", "the two halves of a target's record led to the same synthetic record")
        return Section(title, tuple(rows))


def linkage(real: np.ndarray, synthetic: np.ndarray, names: Sequence[str], sizes: Sequence[int], *,
            columns: Sequence[int], holdout: np.ndarray | None, rng: np.random.Generator) -> Linkage:
    """The linkage attack of the module's docstring on checked code tables, over ``columns``
    (indices; the quasi-identifiers)."""
    if holdout is None:
        return Linkage(False, "No holdout was given: the linkage risk compares the attack on training records with "
                              "the same attack on records the synthesizer never saw.")
    if len(columns) < 2:
        return Linkage(False, "Linkage needs at least two quasi-identifiers, to split between the two sources.")
    n = min(real.shape[0], holdout.shape[0], TARGETS)
    if n < MIN_RECORDS:
        return Linkage(False, f"The holdout or the real table has fewer than {MIN_RECORDS} records, "
                              "too few to measure linkage.")
    shuffled = list(rng.permutation(list(columns)))
    first, second = sorted(shuffled[:len(shuffled) // 2]), sorted(shuffled[len(shuffled) // 2:])
    targets = real[np.sort(rng.choice(real.shape[0], size=n, replace=False))]
    controls = holdout[np.sort(rng.choice(holdout.shape[0], size=n, replace=False))]
    bridge = synthetic[rng.permutation(synthetic.shape[0])]
    both = np.concatenate([targets, controls])
    linked = nearest(both, bridge, sizes, first).index == nearest(both, bridge, sizes, second).index
    estimate = RiskEstimate(n, int(linked[:n].sum()), n, int(linked[n:].sum()))
    return Linkage(True, None, estimate, tuple(names[j] for j in first), tuple(names[j] for j in second))
