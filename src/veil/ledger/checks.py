"""Attacks across releases that the publishing gate runs, each with the policy threshold that refuses.

A check is one small object: its parameters *are* its policy (which confidence, how large a share of
the population may it expose), :meth:`CrossReleaseCheck.run` attacks a new release together with
one earlier release of the same population, and the :class:`Finding` it returns says whether the
pair passes. The gate runs every check of the policy against every earlier release it applies to;
adding an attack is adding a subclass and its entry in :data:`CHECKS`. A check of the new release
alone (:class:`SingleReleaseCheck`: membership disclosure against a population table, the records'
re-identification risk) is run once, and is listed in :data:`SINGLE_CHECKS`.

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
from veil.ledger.kinds import MICRODATA, TRUTHFUL

__all__ = ["CHECKS", "CorrespondenceCheck", "CrossReleaseCheck", "Finding", "IntersectionCheck", "JoinCheck",
           "MatchingCheck", "PresenceCheck", "ReleaseView", "RiskCheck", "SINGLE_CHECKS", "SingleReleaseCheck"]


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
        earlier: the earlier release, as messages call it (for a check of the new release alone,
            what it was checked against, e.g. the population table).
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
        return new.kind in TRUTHFUL and earlier.kind in TRUTHFUL and bool(self._sensitive(new, earlier))

    @staticmethod
    def _sensitive(new: ReleaseView, earlier: ReleaseView) -> list[str]:
        named = dict.fromkeys(new.sensitive + earlier.sensitive)
        return [s for s in named if s in new.table.column_names and s in earlier.table.column_names]

    def run(self, new: ReleaseView, earlier: ReleaseView, targets: pa.Table) -> Finding:
        from veil.attacks.intersection import intersection_attack
        from veil.attacks.published_release import PublishedRelease

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
        if worst["exposed"] == 0:
            reason = (f"intersected with {earlier.name}, the new release {level} no one on '{worst['sensitive']}' "
                      f"whom the earlier release alone did not (0 of {worst['targets']:,} people)")
        else:
            reason = (f"intersected with {earlier.name}, the new release {level} {worst['exposed']:,} of "
                      f"{worst['targets']:,} people ({_percent(share)}) on '{worst['sensitive']}' that the earlier "
                      f"release alone did not, {'within' if passed else 'over'} the policy's limit of "
                      f"{_percent(self.max_share)}")
        return Finding(self.name, earlier.name, passed, share, self.max_share, worst, reason + ".")


def _smallest_class(view: ReleaseView) -> int | None:
    """The smallest class the release's manifest reports, or ``None``."""
    smallest = (view.manifest.get("classes") or {}).get("smallest")
    return int(smallest) if isinstance(smallest, (int, float)) and smallest >= 1 else None


def _whole(value, name: str, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"{name} must be a whole number of at least 1, got {value!r}.")
    return int(value)


class MatchingCheck(CrossReleaseCheck):
    """Sweeney's unsorted matching attack (:func:`veil.attacks.matching.matching_attack`) on two releases.

    When the new release and an earlier one hold the same records in the same row order (both
    published with ``shuffle: false``, which their manifests flag; a release whose manifest says
    it was shuffled is not checked), joining them by position intersects each person's classes.
    A row is *exposed* when its joined class is smaller than ``k`` (default: the smaller of the
    two releases' smallest classes, so that the pair is refused when it makes anyone less
    anonymous than either release claims to be).
    The measure is the share of the earlier release's rows exposed; the pair fails when it
    exceeds ``max_share``.

    Args:
        k: the joined class size under which a row is exposed (``None``: as above).
        max_share: the largest share of rows the pair may expose, in [0, 1].

    Raises:
        ParameterError: ``k`` not a whole number ≥ 1 or a share outside [0, 1].
    """

    name = "matching"

    def __init__(self, k: int | None = None, max_share: float = 0.0):
        self.k = _whole(k, "the matching check's k")
        self.max_share = _share(max_share, "the matching check's max_share")

    def __repr__(self) -> str:
        return f"MatchingCheck(k={self.k}, max_share={self.max_share:g})"

    def to_dict(self) -> dict:
        return {"k": self.k, "max_share": self.max_share}

    def applies(self, new: ReleaseView, earlier: ReleaseView) -> bool:
        # A release its manifest says was shuffled corresponds to no other by position (a small
        # table may still agree with another by chance, which tells the adversary nothing).
        shuffled = any((view.manifest.get("output") or {}).get("shuffled") is True for view in (new, earlier))
        return (new.kind in TRUTHFUL and earlier.kind in TRUTHFUL and not shuffled
                and new.table.num_rows == earlier.table.num_rows
                and bool(set(new.quasi_identifiers) & set(new.table.column_names))
                and bool(set(earlier.quasi_identifiers) & set(earlier.table.column_names)))

    def run(self, new: ReleaseView, earlier: ReleaseView, targets: pa.Table) -> Finding:
        from veil.attacks.published_release import PublishedRelease
        from veil.attacks.matching import matching_attack

        known = list(dict.fromkeys(earlier.quasi_identifiers + new.quasi_identifiers))
        k = self.k or min(filter(None, (_smallest_class(earlier), _smallest_class(new))), default=None)
        result = matching_attack(PublishedRelease(earlier.table, manifest=earlier.manifest, name=earlier.name),
                                 PublishedRelease(new.table, manifest=new.manifest, name=new.name),
                                 quasi_identifiers=known, k=k)
        exposed = int(len(result.exposed)) if result.linkable else 0
        share = exposed / max(result.rows[0], 1)
        passed = share <= self.max_share
        order = ((new.manifest.get("output") or {}).get("order")
                 or ("input order" if (new.manifest.get("output") or {}).get("shuffled") is False else None))
        figures = {**result.summary(), "exposed": exposed, "exposed_share": share, "new_release_order": order}
        figures.pop("notes", None)
        if result.linkable and exposed == 0:
            reason = (f"joined by row position with {earlier.name}, the new release (rows in "
                      f"{order or 'an unknown order'}) leaves none of the {result.rows[0]:,} rows in a class smaller "
                      f"than {result.k}")
        elif result.linkable:
            reason = (f"joined by row position with {earlier.name}, the new release (rows in "
                      f"{order or 'an unknown order'}) leaves {exposed:,} of {result.rows[0]:,} rows "
                      f"({_percent(share)}) in a class smaller than {result.k}, "
                      f"{'within' if passed else 'over'} the policy's limit of {_percent(self.max_share)}")
        else:
            reason = (f"joined by row position with {earlier.name}, the new release exposes no one: its rows do not "
                      "correspond by position to the earlier release's")
        return Finding(self.name, earlier.name, passed, share, self.max_share, figures, reason + ".")


class JoinCheck(CrossReleaseCheck):
    """The join attack of Wang and Fung (KDD 2006) on sequential releases (:func:`veil.attacks.join.join_attack`).

    It applies when the new release publishes another set of columns than an earlier one and the
    two share some: the adversary joins them on the shared columns. An earlier record is
    *exposed* when a joined group it is in has fewer than ``k`` candidates (default: the smaller
    of the two releases' smallest classes) or, with ``l``, fewer than ``l`` distinct sensitive
    values. The measure is the share of the earlier release's records exposed; the pair fails
    when it exceeds ``max_share``.

    Args:
        k: the fewest candidates a joined group must have (``None``: as above).
        l: the fewest distinct sensitive values a joined group must have (``None``: no check).
        max_share: the largest share of records the pair may expose, in [0, 1].

    Raises:
        ParameterError: ``k`` or ``l`` not a whole number ≥ 1, or a share outside [0, 1].
    """

    name = "join"

    def __init__(self, k: int | None = None, l: int | None = None, max_share: float = 0.0):
        self.k = _whole(k, "the join check's k")
        self.l = _whole(l, "the join check's l")
        self.max_share = _share(max_share, "the join check's max_share")

    def __repr__(self) -> str:
        return f"JoinCheck(k={self.k}, l={self.l}, max_share={self.max_share:g})"

    def to_dict(self) -> dict:
        return {"k": self.k, "l": self.l, "max_share": self.max_share}

    def applies(self, new: ReleaseView, earlier: ReleaseView) -> bool:
        left, right = set(earlier.table.column_names), set(new.table.column_names)
        return (new.kind in TRUTHFUL and earlier.kind in TRUTHFUL and left != right and bool(left & right)
                and bool(set(earlier.quasi_identifiers + new.quasi_identifiers) & (left | right)))

    def run(self, new: ReleaseView, earlier: ReleaseView, targets: pa.Table) -> Finding:
        from veil.attacks.published_release import PublishedRelease
        from veil.attacks.join import join_attack

        columns = set(earlier.table.column_names) | set(new.table.column_names)
        known = [q for q in dict.fromkeys(earlier.quasi_identifiers + new.quasi_identifiers) if q in columns]
        sensitive = next((s for s in earlier.sensitive + new.sensitive if s in columns), None)
        k = self.k or min(filter(None, (_smallest_class(earlier), _smallest_class(new))), default=2)
        # the hierarchies join a column the two publish at different levels at the coarser
        result = join_attack(PublishedRelease(earlier.table, manifest=earlier.manifest, name=earlier.name,
                                              hierarchies=earlier.hierarchies),
                             PublishedRelease(new.table, manifest=new.manifest, name=new.name,
                                              hierarchies=new.hierarchies),
                             quasi_identifiers=known, k=k, l=self.l if sensitive else None, sensitive=sensitive)
        exposed = int(len(result.exposed))
        share = exposed / max(len(result.before), 1)
        passed = share <= self.max_share
        figures = {**result.summary(), "exposed_share": share}
        figures.pop("notes", None)
        what = f"fewer than {result.k} candidates" + (f" or {result.l} sensitive values" if result.l else "")
        if exposed == 0:
            reason = (f"joined with {earlier.name} on {', '.join(result.shared)}, the new release leaves none of the "
                      f"{len(result.before):,} earlier records in a joined group with {what}")
        else:
            reason = (f"joined with {earlier.name} on {', '.join(result.shared)}, the new release leaves {exposed:,} "
                      f"of {len(result.before):,} earlier records ({_percent(share)}) in a joined group with {what}, "
                      f"{'within' if passed else 'over'} the policy's limit of {_percent(self.max_share)}")
        return Finding(self.name, earlier.name, passed, share, self.max_share, figures, reason + ".")


# ---------------------------------------------------------------------------------------------
# Tuple correspondence across incremental versions


class CorrespondenceCheck(CrossReleaseCheck):
    """The forward, cross and backward attacks of Fung, Wang, Fu and Pei (EDBT 2008) on a new version
    of an earlier release (:func:`veil.attacks.correspondence.correspondence_attack`).

    It applies when both releases are generalized microdata with the same quasi-identifiers and
    sensitive columns and the earlier has no more rows than the new one: the new release may then
    be an anonymization of the earlier table grown by new records, every earlier record having a
    version in each (when the new release cannot hold the earlier one's records, the finding says
    so and passes: it is not a version of it).

    **Targets.** Every person of the population is attacked forward and cross, as if their record
    were in the earlier table (the worst case, as for the other checks). A person is attacked
    backward, as a new record, only when that is sound: when they match no published row of the
    earlier release, whose every record's cells contain its values, so that they cannot be in it.
    A new person whose values fall inside the earlier release's cells is attacked as an old one
    only; the gate cannot tell them apart from the table it is given (``veil attack
    correspondence --new COLUMN`` can, with the timestamps).

    A person is *exposed* when an attack leaves them fewer than ``k`` candidates (default: the
    smaller of the two releases' own k). The measure is the share of the population exposed by
    any of the three; the pair fails when it exceeds ``max_share`` (at 0, the new release must be
    BCF-k-anonymous with respect to the earlier one).

    Args:
        k: the candidates under which a person is exposed (``None``: as above).
        max_share: the largest share of the population the pair may expose, in [0, 1].

    Raises:
        ParameterError: ``k`` not a whole number ≥ 1 or a share outside [0, 1].
    """

    name = "correspondence"

    def __init__(self, k: int | None = None, max_share: float = 0.0):
        self.k = _whole(k, "the correspondence check's k")
        self.max_share = _share(max_share, "the correspondence check's max_share")

    def __repr__(self) -> str:
        return f"CorrespondenceCheck(k={self.k}, max_share={self.max_share:g})"

    def to_dict(self) -> dict:
        return {"k": self.k, "max_share": self.max_share}

    def applies(self, new: ReleaseView, earlier: ReleaseView) -> bool:
        qis, sensitive = new.quasi_identifiers, new.sensitive
        columns = set(qis + sensitive)
        return (new.kind in TRUTHFUL and earlier.kind in TRUTHFUL and bool(qis)
                and set(qis) == set(earlier.quasi_identifiers) and set(sensitive) == set(earlier.sensitive)
                and columns <= set(new.table.column_names) and columns <= set(earlier.table.column_names)
                and earlier.table.num_rows <= new.table.num_rows
                and "mdav" not in (new.manifest.get("algorithm"), earlier.manifest.get("algorithm")))

    def run(self, new: ReleaseView, earlier: ReleaseView, targets: pa.Table) -> Finding:
        from veil.attacks.correspondence import NotIncrementalError, correspondence_attack
        from veil.attacks.published_release import PublishedRelease

        qis = new.quasi_identifiers
        # unnamed, the attack calls them release 1 and 2, which the reasons below tie to the views' names
        releases = [PublishedRelease(view.table, manifest=view.manifest, hierarchies=view.hierarchies,
                                     orders=view.orders) for view in (earlier, new)]
        try:
            # the hierarchies given with the new release serve an earlier one that was stored without
            result = correspondence_attack(*releases, targets.select(qis), quasi_identifiers=qis,
                                           sensitive=new.sensitive, k=self.k,
                                           hierarchies={q: h for q, h in new.hierarchies.items() if q in qis})
        except NotIncrementalError as exc:
            reason = (f"the correspondence attacks expose no one, since the new release (the attack's release 2) is "
                      f"not a later version of {earlier.name} (its release 1): {exc}")
            return Finding(self.name, earlier.name, True, 0.0, self.max_share, {"applies": False}, reason)
        summary = result.summary()
        summary.pop("notes", None)
        exposed = summary["exposed"]
        share = exposed / max(summary["targets"], 1)
        passed = share <= self.max_share
        figures = {**summary, "exposed_share": share}
        if exposed == 0:
            reason = (f"as a new version of {earlier.name}, the new release leaves each of the "
                      f"{summary['targets']:,} people at least {result.k} candidates under the forward, cross and "
                      "backward attacks")
        else:
            reason = (f"as a new version of {earlier.name}, the new release leaves {exposed:,} of "
                      f"{summary['targets']:,} people ({_percent(share)}) fewer than {result.k} candidates (forward "
                      f"{summary['exposed_forward']:,}, cross {summary['exposed_cross']:,}, backward "
                      f"{summary['exposed_backward']:,}), "
                      f"{'within' if passed else 'over'} the policy's limit of {_percent(self.max_share)}")
        return Finding(self.name, earlier.name, passed, share, self.max_share, figures, reason + ".")


# ---------------------------------------------------------------------------------------------
# Checks of the new release alone


class SingleReleaseCheck(ABC):
    """An attack on the new release alone, against data the policy names (not an earlier release)."""

    #: The check's key in the policy (a section of its own, beside ``composition``).
    name: str = ""

    @abstractmethod
    def applies(self, new: ReleaseView) -> bool:
        """Whether the attack can be run on the release (e.g. it is microdata)."""

    @abstractmethod
    def run(self, new: ReleaseView) -> Finding:
        """Attack the release and judge the result."""

    @abstractmethod
    def to_dict(self) -> dict:
        """The check's parameters (its policy), JSON-ready."""


class PresenceCheck(SingleReleaseCheck):
    """Membership disclosure (:func:`veil.attacks.presence.membership_attack`) against a population table.

    The adversary holds a public population table P (a voter list) of which the release is a
    sample, and reads, for each person of P, the probability f / F that they are in the release
    (f released records and F population records share their published tuple). A person is
    *exposed* when that probability exceeds ``delta_max`` (δ-presence, Nergiz, Atzori and Clifton,
    SIGMOD 2007) or when their published tuple is released yet matches fewer than ``k_map``
    population records (k-map, Sweeney). The measure is the share of P exposed; the release is
    refused when it exceeds ``max_share``.

    The population is a file the policy names: the ledger keeps only a fingerprint of the table the
    publisher holds (the sample), never a public population. Each person of the population is
    generalized through the hierarchies to the levels the release's manifest names
    (:func:`veil.population.publish_population`: the hierarchies given with the release, the
    files its manifest or configuration names, its configuration's builders run on the population's
    values, the rows its private file keeps), so the check reads full-domain releases
    (``generalization``); another kind of microdata release is refused, since its cells cannot be
    matched with raw values.

    Args:
        population: the population table's path (every quasi-identifier, raw values).
        delta_max: the largest membership probability allowed, in [0, 1] (``None``: not checked).
        k_map: the fewest population records a released tuple must match (``None``: not checked).
        max_share: the largest share of the population the release may expose, in [0, 1].
        delimiter: the population's CSV delimiter (sniffed when ``None``).

    Raises:
        ParameterError: neither threshold, ``delta_max`` outside [0, 1], ``k_map`` not a whole number
            ≥ 1, or a share outside [0, 1].
    """

    name = "presence"

    def __init__(self, population, delta_max: float | None = None, k_map: int | None = None,
                 max_share: float = 0.0, delimiter: str | None = None):
        if delta_max is None and k_map is None:
            raise ParameterError("the presence check needs delta_max (δ-presence) or k_map (k-map), or both.")
        self.population = str(population)
        self.delta_max = None if delta_max is None else _share(delta_max, "the presence check's delta_max")
        self.k_map = _whole(k_map, "the presence check's k_map")
        self.max_share = _share(max_share, "the presence check's max_share")
        self.delimiter = delimiter

    def __repr__(self) -> str:
        return (f"PresenceCheck(population={self.population!r}, delta_max={self.delta_max}, k_map={self.k_map}, "
                f"max_share={self.max_share:g})")

    def to_dict(self) -> dict:
        return {"population": self.population, "delta_max": self.delta_max, "k_map": self.k_map,
                "max_share": self.max_share}

    def applies(self, new: ReleaseView) -> bool:
        return new.kind in MICRODATA

    def run(self, new: ReleaseView) -> Finding:
        """Attack the release with the population's people.

        Raises:
            ParameterError: the release is not a full-domain generalization.
            DataError: the population table cannot be read or lacks a quasi-identifier; a
                quasi-identifier has no hierarchy, or one that does not cover the population.
            PopulationMismatchError: the population does not cover the release.
        """
        from pathlib import Path

        from veil.attacks.published_release import PublishedRelease
        from veil.attacks.presence import PopulationMismatchError, membership_attack

        if new.kind != "generalization":
            raise ParameterError(f"the presence check reads full-domain releases, whose hierarchy levels publish the "
                                 f"population as the release does; {new.name} is of kind {new.kind!r}.")
        where = f"the population table {Path(self.population).name!r}"
        # A hierarchy a builder of the configuration made covers the sample's values only: it is
        # made again on the population's (publish_population), the others are used as they are.
        built = {c for c, spec in ((new.manifest.get("config") or {}).get("hierarchies") or {}).items()
                 if isinstance(spec, dict) and "file" not in spec}
        hierarchies = {c: h for c, h in new.hierarchies.items() if c not in built}
        try:
            result = membership_attack(PublishedRelease(new.table, manifest=new.manifest, name=new.name,
                                                        hierarchies=hierarchies),
                                       self.population, delimiter=self.delimiter)
        except PopulationMismatchError:
            raise PopulationMismatchError(f"{where} does not cover {new.name}: a published tuple is held by more "
                                          "released records than population records; give the population the "
                                          "release was drawn from.") from None
        people = len(result.probability)
        exposed = np.zeros(people, dtype=bool)
        what = []
        if self.delta_max is not None:
            exposed |= result.probability > self.delta_max + 1e-12
            what.append(f"a membership probability above {self.delta_max:g}")
        if self.k_map is not None:
            exposed |= (result.released > 0) & (result.matching < self.k_map)
            what.append(f"a published tuple matching fewer than {self.k_map} of them")
        share = float(exposed.sum()) / max(people, 1)
        passed = share <= self.max_share
        published = result.released > 0
        figures = {**result.summary(), "exposed": int(exposed.sum()), "exposed_share": share,
                   "delta_max": self.delta_max, "k_map": self.k_map,
                   "smallest_match": int(result.matching[published].min()) if published.any() else None}
        figures.pop("notes", None)
        if not exposed.any():
            reason = f"against {where} ({people:,} people), the new release gives none of them {' or '.join(what)}"
        else:
            reason = (f"against {where} ({people:,} people), the new release gives {int(exposed.sum()):,} of them "
                      f"({_percent(share)}) {' or '.join(what)}, {'within' if passed else 'over'} the policy's limit "
                      f"of {_percent(self.max_share)}")
        return Finding(self.name, where, passed, share, self.max_share, figures, reason + ".")


class RiskCheck(SingleReleaseCheck):
    """The re-identification risk of the release's own records (statistical disclosure control).

    Each released record's Benedetti–Franconi individual risk (Benedetti and Franconi 1998; see
    :mod:`veil.sdc.table_risk`) is measured on the **published file**, with the quasi-identifiers
    and the sampling weights, strata and households its manifest names (``roles``; without a
    weight column every record weighs 1, the sample being the population): r_i = E[1/F_i | f_i],
    f_i the released records that match record i and F̂_i the sum of their weights. A cell the
    manifest says was suppressed (``*``, or an empty cell when local suppression published
    suppressed cells as missing) matches any value, as the adversary who reads it as unknown
    takes it. A record is *at risk* when its risk (its household's, with ``household``) exceeds
    ``max_individual``; the release is refused when the share of records at risk exceeds
    ``max_share``, or when the rate of expected re-identifications (Σ r_i per record) exceeds
    ``max_rate``. It reads any microdata release (a generalized table's cells are its classes).

    Args:
        max_individual: the individual risk above which a record is at risk, in [0, 1].
        max_share: the largest share of records at risk, in [0, 1].
        max_rate: the largest rate of expected re-identifications, in [0, 1] (``None``: not checked).
        household: judge each record by its household's risk (the manifest must name a household column).

    Raises:
        ParameterError: a threshold outside [0, 1].
    """

    name = "risk"

    def __init__(self, max_individual: float = 0.2, max_share: float = 0.0, max_rate: float | None = None,
                 household: bool = False):
        self.max_individual = _share(max_individual, "the risk check's max_individual")
        self.max_share = _share(max_share, "the risk check's max_share")
        self.max_rate = None if max_rate is None else _share(max_rate, "the risk check's max_rate")
        self.household = bool(household)

    def __repr__(self) -> str:
        return (f"RiskCheck(max_individual={self.max_individual:g}, max_share={self.max_share:g}, "
                f"max_rate={self.max_rate}, household={self.household})")

    def to_dict(self) -> dict:
        return {"max_individual": self.max_individual, "max_share": self.max_share, "max_rate": self.max_rate,
                "household": self.household}

    def applies(self, new: ReleaseView) -> bool:
        return new.kind in MICRODATA and any(q in new.table.column_names for q in new.quasi_identifiers)

    def run(self, new: ReleaseView) -> Finding:
        """Measure the release's risk and judge it.

        Raises:
            DataError: the weight column the manifest names holds something other than positive numbers.
            LedgerError: the household check without a household column in the release.
        """
        from veil.ledger.errors import LedgerError
        from veil.sdc.table_risk import suppressed_marker, table_risk

        # an anonymizer's manifest names the sampling design in the configuration it records
        configured = ((new.manifest.get("config") or {}).get("columns") or {})
        roles = {**{k: configured[k] for k in ("weight", "strata", "household") if k in configured},
                 **(new.manifest.get("roles") or {})}
        columns = set(new.table.column_names)
        qis = [q for q in new.quasi_identifiers if q in columns]
        weight = roles.get("weight") if roles.get("weight") in columns else None
        strata = [s for s in roles.get("strata") or [] if s in columns]
        household = roles.get("household") if roles.get("household") in columns else None
        if self.household and household is None:
            raise LedgerError(f"the policy's risk check judges households, and {new.name} publishes no household "
                              "column its manifest names; set household: false or publish the household column.")
        risk = table_risk(new.table, qis, weight=weight, strata=strata, household=household,
                          marker=suppressed_marker(new.manifest))
        share = risk.share_above(self.max_individual, household=self.household)
        rate = risk.rate
        passed = share <= self.max_share + 1e-12 and (self.max_rate is None or rate <= self.max_rate + 1e-12)
        at_risk = int(round(share * len(risk.record)))
        figures = {"records": len(risk.record), "quasi_identifiers": qis, "weight": weight, "strata": strata,
                   "household": household if self.household else None, "at_risk": at_risk, "at_risk_share": share,
                   "expected_reidentifications": risk.expected_reidentifications, "rate": rate,
                   "largest": float(risk.record.max()) if len(risk.record) else 0.0,
                   "max_individual": self.max_individual, "max_rate": self.max_rate}
        who = "households' risk" if self.household else "individual risk"
        weighted = f"weighted by '{weight}'" if weight else "unweighted (every record its own population)"
        reason = (f"on its {len(risk.record):,} records ({weighted}), the new release has {at_risk:,} "
                  f"({_percent(share)}) with an {who} above {self.max_individual:g}, "
                  f"{'within' if share <= self.max_share + 1e-12 else 'over'} the policy's limit of "
                  f"{_percent(self.max_share)}; expected re-identifications {risk.expected_reidentifications:.3g} "
                  f"(rate {_percent(rate)}")
        if self.max_rate is not None:
            within = rate <= self.max_rate + 1e-12
            reason += f", {'within' if within else 'over'} the limit of {_percent(self.max_rate)}"
        return Finding(self.name, "the release's own records", passed, share, self.max_share, figures, reason + ").")


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


#: The checks of the new release alone, each under its own key of the policy.
SINGLE_CHECKS: dict[str, type[SingleReleaseCheck]] = {check.name: check for check in (PresenceCheck, RiskCheck)}

#: Every check the policy can name, by its key.
CHECKS: dict[str, type[CrossReleaseCheck]] = {check.name: check for check in (IntersectionCheck, MatchingCheck,
                                                                             JoinCheck, CorrespondenceCheck)}
