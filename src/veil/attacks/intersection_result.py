"""The outcome of the intersection attack (:mod:`veil.attacks.intersection`): per target, the
sets of sensitive values each release leaves, their intersection, the effective anonymity before
and after, the adversary's confidence, and the vulnerable population at each confidence level
(Ganta, Kasiviswanathan and Smith, KDD 2008, Section 2.1 and Definitions 8 and 9).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from veil.errors import ParameterError

# The paper's confidence levels: perfect breach (100 %) and partial breaches (Section 3.2).
DEFAULT_CONFIDENCE = (1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5)
# Confidences compare with this relative slack, so that 1/3 meets a level written 0.3333333333333333.
_SLACK = 1e-9


@dataclass(frozen=True, eq=False)
class ReleaseLocation:
    """How the targets were located in one release.

    Attributes:
        name: the release, as messages call it.
        kind: ``"generalized"`` or ``"microaggregated"``.
        rows: released rows.
        classes: its equivalence classes (distinct published quasi-identifier tuples).
        standardization: for a microaggregated release, ``"manifest"`` or ``"release"`` (where the
            means and standard deviations came from); ``None`` otherwise.
        evaluated: whether the targets' true rows were given, so that correct location is known.
    """

    name: str
    kind: str
    rows: int
    classes: int
    standardization: str | None = None
    evaluated: bool = False


# How many of the most frequent intersections the summary lists.
OUTCOMES_SHOWN = 10


@dataclass(frozen=True, eq=False)
class IntersectionResult:
    """The intersection attack's outcome, per target (see :mod:`veil.attacks.intersection` for the definitions).

    Attributes:
        releases: how each release was read.
        sensitive: the sensitive column.
        values: ``[values]``, the sensitive values (the union over the releases).
        targets: ``[targets]``, each target's id (the id column, or its row number from 0).
        sets: per release, ``bool [targets × values]``: ``s_ij``.
        candidates: ``int [targets × releases]``: classes the target was located in (0: none, so
            ``s_ij`` is every value of the release; more than 1: ``s_ij`` is their union).
        class_sizes: ``int [targets × releases]``: records in those classes (every released record
            for a target located in none).
        ea: ``int [targets × releases]``: ``EA_ij = |s_ij|``.
        posterior: ``bool [targets × values]``: ``∩_j s_ij``.
        ea_posterior: ``int [targets]``: ``EA^_i``.
        anon_drop: ``int [targets]``: ``min_j EA_ij − EA^_i``.
        confidence: ``float [targets]``: ``C_i = 1 / EA^_i`` (0 for an empty intersection).
        levels: the confidence levels C reported.
        truth: ``int [targets]``, the index in ``values`` of each target's true value, when the
            targets table holds the sensitive column; else ``None``.
        correctly_located: ``bool [targets × releases]``: whether the target's true class is among
            those it was located in (only for releases given ``target_rows``; else ``None``).
        notes: remarks worth a reader's attention (one sentence each).
    """

    releases: list[ReleaseLocation]
    sensitive: str
    values: np.ndarray
    targets: np.ndarray
    sets: list[np.ndarray]
    candidates: np.ndarray
    class_sizes: np.ndarray
    ea: np.ndarray
    posterior: np.ndarray
    ea_posterior: np.ndarray
    anon_drop: np.ndarray
    confidence: np.ndarray
    levels: tuple[float, ...]
    truth: np.ndarray | None = None
    correctly_located: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_targets(self) -> int:
        return len(self.targets)

    @property
    def vulnerable(self) -> np.ndarray:
        """``bool [targets]``: the vulnerable population VP, ``Anon_Drop_i > 0``."""
        return self.anon_drop > 0

    def breached(self, level: float) -> np.ndarray:
        """``bool [targets]``: ``VP_C``, the targets whose confidence is at least ``level``."""
        level = check_level(level)
        return self.confidence >= level * (1 - _SLACK)

    def pvp(self, level: float) -> float:
        """``PVP_C``: the percentage of targets in ``VP_C``."""
        return 100.0 * float(self.breached(level).sum()) / max(self.n_targets, 1)

    @property
    def true_value_kept(self) -> np.ndarray | None:
        """``bool [targets]``: whether the true value survives the intersection (with truth)."""
        if self.truth is None:
            return None
        rows = np.arange(self.n_targets)
        return self.posterior[rows, self.truth]

    def correct_breaches(self, level: float) -> np.ndarray | None:
        """``bool [targets]``: ``VP_C`` restricted to targets whose true value is in the intersection."""
        kept = self.true_value_kept
        return None if kept is None else self.breached(level) & kept

    def summary(self) -> dict:
        """A JSON-ready summary."""
        n = max(self.n_targets, 1)
        releases = []
        for j, rel in enumerate(self.releases):
            cand = self.candidates[:, j]
            entry = {"name": rel.name, "kind": rel.kind, "rows": rel.rows, "classes": rel.classes,
                     "located": int((cand > 0).sum()), "unlocated": int((cand == 0).sum()),
                     "ambiguous": int((cand > 1).sum()),
                     "mean_class_size": float(self.class_sizes[:, j].mean()) if self.n_targets else 0.0,
                     "mean_ea": float(self.ea[:, j].mean()) if self.n_targets else 0.0}
            if rel.standardization is not None:
                entry["standardization"] = rel.standardization
            if rel.evaluated:
                entry["correctly_located"] = int(self.correctly_located[:, j].sum())
            releases.append(entry)
        prior = self.ea.min(axis=1) if self.n_targets else np.zeros(0)
        out = {
            "attack": "intersection",
            "sensitive": self.sensitive,
            "targets": self.n_targets,
            "values": len(self.values),
            "releases": releases,
            "mean_ea_prior": float(prior.mean()) if self.n_targets else 0.0,
            "mean_ea_posterior": float(self.ea_posterior.mean()) if self.n_targets else 0.0,
            "mean_anon_drop": float(self.anon_drop.mean()) if self.n_targets else 0.0,
            "vulnerable": int(self.vulnerable.sum()),
            "vulnerable_share": float(self.vulnerable.sum()) / n,
            "empty_intersections": int((self.ea_posterior == 0).sum()),
            "pvp": [{"confidence": level, "targets": int(self.breached(level).sum()), "percent": self.pvp(level)}
                    for level in self.levels],
        }
        kept = self.true_value_kept
        if kept is not None:
            out["true_value_kept"] = int(kept.sum())
            for entry, level in zip(out["pvp"], self.levels):
                correct = int(self.correct_breaches(level).sum())
                entry["correct"] = correct
                entry["correct_percent"] = 100.0 * correct / n
        out["outcomes"] = self.outcomes(OUTCOMES_SHOWN)
        out["notes"] = list(self.notes)
        return out

    def outcomes(self, limit: int | None = None) -> list[dict]:
        """The distinct intersections (the values left to the adversary), most frequent first.

        Returns:
            ``[{"values": [...], "targets": n}, ...]``: each set of values left and how many
            targets it was left for, at most ``limit`` of them (all when ``None``); ties keep the
            order of the smaller intersection first.
        """
        if self.n_targets == 0:
            return []
        n_values = self.posterior.shape[1]
        if n_values == 0:
            return [{"values": [], "targets": self.n_targets}]
        packed = np.ascontiguousarray(np.packbits(self.posterior, axis=1))
        rows = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
        _, first, counts = np.unique(rows, return_index=True, return_counts=True)
        sizes = self.ea_posterior[first]
        order = np.lexsort((sizes, -counts))[:limit]
        labels = [str(v) for v in self.values]
        return [{"values": [labels[c] for c in np.flatnonzero(self.posterior[first[i]])], "targets": int(counts[i])}
                for i in order]

    def values_left(self) -> list[list[str]]:
        """Per target, the sensitive values its intersection leaves (in the order of ``values``)."""
        labels = np.array([str(v) for v in self.values], dtype=object)
        return [labels[row].tolist() for row in self.posterior]

    def per_target(self) -> pd.DataFrame:
        """One row per target: EA and class size per release, the posterior, the drop, the
        confidence and the values left (``|``-separated)."""
        data = {"target": self.targets}
        for j in range(len(self.releases)):
            data[f"classes_{j + 1}"] = self.candidates[:, j]
            data[f"class_size_{j + 1}"] = self.class_sizes[:, j]
            data[f"ea_{j + 1}"] = self.ea[:, j]
        data["ea_posterior"] = self.ea_posterior
        data["anon_drop"] = self.anon_drop
        data["confidence"] = self.confidence
        labels = [str(v) for v in self.values]
        rows, cols = np.nonzero(self.posterior)
        joined = [""] * self.n_targets
        if len(rows):
            starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
            ends = np.r_[starts[1:], len(rows)]
            for a, b in zip(starts.tolist(), ends.tolist()):
                joined[rows[a]] = "|".join(labels[c] for c in cols[a:b])
        data["values_left"] = joined
        if self.truth is not None:
            data["true_value"] = self.values[self.truth]
            data["true_value_kept"] = self.true_value_kept
        return pd.DataFrame(data)


def check_level(level) -> float:
    """A confidence level C as a number in (0, 1] (1: a perfect breach).

    Raises:
        ParameterError: ``level`` is not a number, or is outside (0, 1].
    """
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise ParameterError(f"a confidence level is a number in (0, 1], not {level!r}.") from None
    if not 0 < value <= 1:
        raise ParameterError(f"a confidence level must be in (0, 1] (1 is a perfect breach), not {level}.")
    return value
