"""Attacks across releases that the publishing gate runs, each with the policy threshold that refuses.

A check is one small object: its parameters *are* its policy (which confidence, how large a share of
the population may it expose), :meth:`CrossReleaseCheck.run` attacks a new release together with
one earlier release of the same population, and the :class:`Finding` it returns says whether the
pair passes. The gate runs every check of the policy against every earlier release it applies to;
adding an attack is adding a subclass and its entry in :data:`CHECKS`.

**The targets are the worst case.** Every person of the population as the publisher holds the
table (its rows) is attacked, as if they were in both releases, by an adversary who knows all
their quasi-identifiers that either release publishes and the publisher holds.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from veil.errors import ParameterError
from veil.ledger.kinds import MICRODATA

__all__ = ["CHECKS", "CrossReleaseCheck", "Finding", "IntersectionCheck", "ReleaseView"]


@dataclass(frozen=True, eq=False)
class ReleaseView:
    """A release as a check reads it.

    Attributes:
        name: how messages call it (``release 3 ('hospital-a')`` for an earlier one).
        kind: the ledger's kind (:data:`veil.ledger.kinds.KINDS`).
        table: the published table, cells as text as a reader sees them.
        manifest: its veil manifest.
        hierarchies: per column, the hierarchy whose node labels it publishes (when it does).
        orders: per column, the order of its values (text ranges of ordinal columns).
    """

    name: str
    kind: str
    table: pa.Table
    manifest: dict
    hierarchies: dict = field(default_factory=dict)
    orders: dict = field(default_factory=dict)

    @property
    def quasi_identifiers(self) -> list[str]:
        return list((self.manifest.get("roles") or {}).get("quasi_identifiers") or [])

    @property
    def sensitive(self) -> list[str]:
        return list((self.manifest.get("roles") or {}).get("sensitive") or [])


@dataclass(frozen=True)
class Finding:
    """What one check found on one pair of releases.

    Attributes:
        check: the check's name (its policy key).
        earlier: the earlier release, as messages call it.
        passed: whether the pair stays within the policy.
        measure: the figure compared with the threshold (a share of the targets, in [0, 1]).
        threshold: the largest measure the policy allows.
        figures: everything else worth recording (JSON-ready).
        reason: one sentence saying what was found, naming the earlier release and the figures.
    """

    check: str
    earlier: str
    passed: bool
    measure: float
    threshold: float
    figures: dict = field(default_factory=dict)
    reason: str = ""

    def to_dict(self) -> dict:
        return {"check": self.check, "earlier": self.earlier, "passed": self.passed, "measure": self.measure,
                "threshold": self.threshold, "figures": self.figures, "reason": self.reason}


class CrossReleaseCheck(ABC):
    """An attack on a new release together with an earlier one of the same population."""

    #: The check's key in the policy's ``composition`` section.
    name: str = ""

    @abstractmethod
    def applies(self, new: ReleaseView, earlier: ReleaseView) -> bool:
        """Whether the attack can be run on this pair (e.g. both are microdata)."""

    @abstractmethod
    def run(self, new: ReleaseView, earlier: ReleaseView, targets: pa.Table) -> Finding:
        """Attack the pair with the population's people as targets, and judge the result."""

    @abstractmethod
    def to_dict(self) -> dict:
        """The check's parameters (its policy), JSON-ready."""


def _share(value, name: str) -> float:
    try:
        share = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a share in [0, 1], got {value!r}.") from None
    if not (math.isfinite(share) and 0 <= share <= 1):
        raise ParameterError(f"{name} must be a share in [0, 1], got {value!r}.")
    return share


class IntersectionCheck(CrossReleaseCheck):
    """The intersection attack of Ganta, Kasiviswanathan and Smith (KDD 2008) on two releases.

    Each target is located in both releases (:func:`veil.attacks.intersection_attack`) and the
    sensitive values of their classes are intersected; the adversary's confidence is
    C_i = 1 / |∩ s_ij| (Definition 9). A target is *exposed by the new release* when the pair's
    confidence reaches ``confidence`` while the earlier release alone did not reach it (people
    an earlier release already exposed are lost whatever is published now; those the new
    release exposes by itself count, since publishing it exposes them).

    The measure is the share of the targets exposed by the new release, per sensitive column
    both releases publish, the worst column counting; the pair fails when it exceeds
    ``max_share``.

    Args:
        confidence: the level C in (0, 1]; 1 is a perfect breach (one value left).
        max_share: the largest share of the population the new release may expose, in [0, 1].

    Raises:
        ParameterError: a confidence outside (0, 1] or a share outside [0, 1].
    """

    name = "intersection"

    def __init__(self, confidence: float = 1.0, max_share: float = 0.0):
        try:
            confidence = float(confidence)
        except (TypeError, ValueError):
            raise ParameterError(f"the intersection check's confidence must be in (0, 1], got {confidence!r}.") \
                from None
        if not (0 < confidence <= 1):
            raise ParameterError(f"the intersection check's confidence must be in (0, 1], got {confidence!r}.")
        self.confidence = confidence
        self.max_share = _share(max_share, "the intersection check's max_share")

    def __repr__(self) -> str:
        return f"IntersectionCheck(confidence={self.confidence:g}, max_share={self.max_share:g})"

    def to_dict(self) -> dict:
        return {"confidence": self.confidence, "max_share": self.max_share}

    def applies(self, new: ReleaseView, earlier: ReleaseView) -> bool:
        return new.kind in MICRODATA and earlier.kind in MICRODATA and bool(self._sensitive(new, earlier))

    @staticmethod
    def _sensitive(new: ReleaseView, earlier: ReleaseView) -> list[str]:
        named = dict.fromkeys(new.sensitive + earlier.sensitive)
        return [s for s in named if s in new.table.column_names and s in earlier.table.column_names]

    def run(self, new: ReleaseView, earlier: ReleaseView, targets: pa.Table) -> Finding:
        from veil.attacks.intersection import PublishedRelease, intersection_attack

        sensitive = self._sensitive(new, earlier)
        known = [q for q in dict.fromkeys(earlier.quasi_identifiers + new.quasi_identifiers)
                 if q in targets.column_names and q not in sensitive]
        worst = None
        for column in sensitive:
            releases = [PublishedRelease(_with_columns(view.table, known), manifest=view.manifest, name=view.name,
                                         hierarchies={q: h for q, h in view.hierarchies.items() if q in known},
                                         orders={q: o for q, o in view.orders.items() if q in known})
                        for view in (earlier, new)]
            # the hierarchies given with the new release serve an earlier one that was stored without
            result = intersection_attack(releases, targets.select(known), quasi_identifiers=known, sensitive=column,
                                         confidence=(self.confidence,),
                                         hierarchies={q: h for q, h in new.hierarchies.items() if q in known})
            pair = result.breached(self.confidence)
            with np.errstate(divide="ignore"):
                alone = np.where(result.ea[:, 0] > 0, 1.0 / np.maximum(result.ea[:, 0], 1), 0.0)
            before = alone >= self.confidence * (1 - 1e-9)
            exposed = pair & ~before
            n = max(result.n_targets, 1)
            figures = {"sensitive": column, "targets": result.n_targets, "quasi_identifiers": known,
                       "confidence": self.confidence, "exposed": int(exposed.sum()),
                       "exposed_share": float(exposed.sum()) / n, "breached_by_pair": int(pair.sum()),
                       "pvp": result.pvp(self.confidence), "breached_by_earlier_alone": int(before.sum()),
                       "vulnerable": int(result.vulnerable.sum())}
            if worst is None or figures["exposed_share"] > worst["exposed_share"]:
                worst = figures
        share = worst["exposed_share"]
        passed = share <= self.max_share
        level = "perfectly breaches" if self.confidence == 1 else f"breaches at confidence {self.confidence:g}"
        reason = (f"intersected with {earlier.name}, the new release {level} {worst['exposed']:,} of "
                  f"{worst['targets']:,} people ({_percent(share)}) on '{worst['sensitive']}' that the earlier "
                  f"release alone did not, {'within' if passed else 'over'} the policy's limit of "
                  f"{_percent(self.max_share)}")
        return Finding(self.name, earlier.name, passed, share, self.max_share, worst, reason + ".")


def _percent(share: float) -> str:
    """A share as a percentage that does not round a few people to 0.00 %."""
    if 0 < share < 0.0001:
        return f"{100 * share:.2g}%"
    return f"{share:.2%}"


def _with_columns(table: pa.Table, columns: list[str]) -> pa.Table:
    """The table with every one of ``columns``, those it does not publish as ``*`` (anyone)."""
    for name in columns:
        if name not in table.column_names:
            stars = pa.DictionaryArray.from_arrays(pa.array(np.zeros(table.num_rows, dtype=np.int32)),
                                                   pa.array(["*"]))
            table = table.append_column(name, stars.cast(pa.string()))
    return table


#: Every check the policy can name, by its key.
CHECKS: dict[str, type[CrossReleaseCheck]] = {IntersectionCheck.name: IntersectionCheck}
