"""How far the synthetic table's marginals are from the real table's: total variation distance.

The total variation distance (TVD) between two tables on a set of columns is half the L1 distance
between their normalized marginals (the share of records in each combination of values):
``TVD = ½ Σ_cells |p_real − p_synthetic|``, between 0 (the same distribution) and 1 (no
combination in common). The evaluation reports its mean over all 1-, 2- and 3-way marginals
(a random subset when there are more than ``max_marginals`` of an order, which the result says)
and over the workload's marginals when one is given, and NIST SDNist's k-marginal score,
``1000 × (1 − mean TVD)`` over 3-way marginals (0 worst, 1000 best; the score of NIST's
synthetic-data benchmark SDNist, from NIST's differential-privacy data challenges). Counts come from one ``bincount`` over mixed-radix keys per marginal (or a
``unique`` over the keys when the marginal has far more cells than records).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.synth.evaluation.keys import joint_keys
from veil.synth.evaluation.sections import Row, Section, number

DEFAULT_MAX_MARGINALS = 2000   # marginals of one order (or of the workload) evaluated at most, when not told
SCORE_ORDER = 3                # SDNist's k-marginal score uses 3-way marginals


def tvd(real: np.ndarray, synthetic: np.ndarray, sizes: Sequence[int], columns: Sequence[int]) -> float:
    """The total variation distance between the marginals of two code tables on ``columns``
    (indices): ``½ Σ |p − q|`` over the cells, p and q the shares of each table's rows in each
    combination of codes. Both tables must have at least one row."""
    n_real, n_synthetic = real.shape[0], synthetic.shape[0]
    cells = math.prod(int(sizes[j]) for j in columns)
    keys_real, keys_synthetic = joint_keys([real, synthetic], sizes, columns)
    if cells > 4 * (n_real + n_synthetic) + (1 << 16):
        _, inverse = np.unique(np.concatenate([keys_real, keys_synthetic]), return_inverse=True)
        inverse = inverse.reshape(-1)
        cells = int(inverse.max()) + 1
        keys_real, keys_synthetic = inverse[:n_real], inverse[n_real:]
    p = np.bincount(keys_real, minlength=cells) / n_real
    q = np.bincount(keys_synthetic, minlength=cells) / n_synthetic
    return float(0.5 * np.abs(p - q).sum())


@dataclass(frozen=True)
class MarginalFamily:
    """The TVD over one family of marginals (the k-way ones, or the workload's)."""
    label: str                      # "1-way", "2-way", "3-way" or "workload"
    available: int                  # how many marginals the family has
    evaluated: int                  # how many were evaluated (all, or a random subset)
    mean_tvd: float | None
    max_tvd: float | None
    worst: tuple[str, ...] | None   # the marginal with the largest TVD

    @property
    def sampled(self) -> bool:
        return self.evaluated < self.available

    def to_dict(self) -> dict:
        return {"label": self.label, "available": self.available, "evaluated": self.evaluated,
                "sampled": self.sampled, "mean_tvd": self.mean_tvd, "max_tvd": self.max_tvd,
                "worst": None if self.worst is None else list(self.worst)}


@dataclass(frozen=True)
class MarginalDistance:
    """Mean TVD per family of marginals and SDNist's k-marginal score."""
    families: tuple[MarginalFamily, ...]
    score: float | None             # 1000 × (1 − mean TVD) over the score's marginals
    score_order: int                # the marginals' order (3, or the number of columns when fewer)
    score_marginals: int            # how many marginals the score averages
    score_available: int

    def to_dict(self) -> dict:
        return {"families": [f.to_dict() for f in self.families], "k_marginal_score": self.score,
                "k_marginal_order": self.score_order, "k_marginal_marginals": self.score_marginals,
                "k_marginal_available": self.score_available}

    def section(self) -> Section:
        rows = []
        for f in self.families:
            scope = (f"all {f.available}" if not f.sampled
                     else f"a random {f.evaluated} of the {f.available}")
            rows.append(Row(f"mean TVD, {f.label} marginals", number(f.mean_tvd),
                            f"Half the L1 distance between the real and synthetic shares of each combination of "
                            f"values, averaged over {scope} {f.label} marginals: 0 means the synthetic table "
                            f"reproduces them exactly, 1 that they share nothing; lower is better."))
            if f.worst is not None:
                rows.append(Row(f"largest TVD, {f.label} marginals", number(f.max_tvd),
                                f"The worst reproduced of these marginals, on {', '.join(f.worst)}; lower is better."))
        if self.score is not None:
            scope = (f"all {self.score_available}" if self.score_marginals == self.score_available
                     else f"a random {self.score_marginals} of the {self.score_available}")
            rows.append(Row("SDNist k-marginal score", number(self.score, 1),
                            f"NIST SDNist's score 1000 × (1 − mean TVD) over {scope} {self.score_order}-way "
                            f"marginals: 1000 is a perfect match, 0 none; higher is better."))
        return Section("Fidelity: marginal distributions", tuple(rows))


def choose_cliques(d: int, order: int, limit: int, rng: np.random.Generator) -> tuple[list[tuple[int, ...]], int]:
    """The ``order``-way sets of columns (indices) to evaluate and how many there are: all of them
    when at most ``limit``, else ``limit`` distinct ones drawn uniformly at random (sorted)."""
    available = math.comb(d, order)
    if available <= limit:
        return list(itertools.combinations(range(d), order)), available
    chosen: set[tuple[int, ...]] = set()
    while len(chosen) < limit:
        for _ in range(limit - len(chosen)):
            chosen.add(tuple(sorted(rng.choice(d, size=order, replace=False).tolist())))
    return sorted(chosen), available


def _family(label: str, cliques: list[tuple[int, ...]], available: int, real, synthetic, sizes,
            names) -> MarginalFamily:
    if not cliques:
        return MarginalFamily(label, available, 0, None, None, None)
    values = np.array([tvd(real, synthetic, sizes, c) for c in cliques])
    worst = int(values.argmax())
    return MarginalFamily(label, available, len(cliques), float(values.mean()), float(values[worst]),
                          tuple(names[j] for j in cliques[worst]))


def marginal_distance(real: np.ndarray, synthetic: np.ndarray, names: Sequence[str], sizes: Sequence[int], *,
                      rng: np.random.Generator, workload: Sequence[tuple[int, ...]] | None = None,
                      max_marginals: int | None = None) -> MarginalDistance:
    """Mean TVD over the 1-, 2- and 3-way marginals (at most ``max_marginals`` of each order,
    default :data:`DEFAULT_MAX_MARGINALS`, drawn at random when there are more) and over the
    ``workload``'s cliques (column indices; the same limit), and SDNist's k-marginal score over the
    evaluated 3-way marginals (the d-way one when there are fewer than 3 columns).

    ``real`` and ``synthetic`` are checked code tables (see :mod:`.inputs`)."""
    limit = DEFAULT_MAX_MARGINALS if max_marginals is None else max_marginals
    d = len(names)
    families = []
    by_order = {}
    for order in (1, 2, 3):
        if order > d:
            continue
        cliques, available = choose_cliques(d, order, limit, rng)
        family = _family(f"{order}-way", cliques, available, real, synthetic, sizes, names)
        families.append(family)
        by_order[order] = family
    if workload is not None:
        distinct = sorted({tuple(c) for c in workload})
        if len(distinct) > limit:
            picked = rng.choice(len(distinct), size=limit, replace=False)
            chosen = [distinct[i] for i in sorted(picked.tolist())]
        else:
            chosen = distinct
        families.append(_family("workload", chosen, len(distinct), real, synthetic, sizes, names))
    score_order = min(SCORE_ORDER, d)
    base = by_order[score_order]
    score = None if base.mean_tvd is None else 1000.0 * (1.0 - base.mean_tvd)
    return MarginalDistance(tuple(families), score, score_order, base.evaluated, base.available)
