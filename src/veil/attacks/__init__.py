"""veil as the adversary: attacks on releases and the disclosure they measure.

The intersection (composition) attack of Ganta, Kasiviswanathan and Smith across independent
releases (:mod:`veil.attacks.intersection`). Single-release attacks (:mod:`veil.attacks.single`):
homogeneity, background knowledge, skewness and similarity. The minimality attack of Wong, Fu,
Wang and Pei, by an adversary who knows the algorithm (:mod:`veil.attacks.minimality`).
Disclosure measures (:mod:`veil.attacks.disclosure`): Brickell and Shmatikov's A_diff, A_quot,
A_know, A_acc and δ. The membership attack against a population (:mod:`veil.attacks.presence`).
Attacks across releases of the same records: unsorted matching by row position
(:mod:`veil.attacks.matching`), the join attack on sequential releases
(:mod:`veil.attacks.join`) and the forward, cross and backward tuple-correspondence attacks on
incremental versions of a growing table (:mod:`veil.attacks.correspondence`). The privacy/utility trade-off (:mod:`veil.attacks.tradeoff`):
classifier accuracy on the original, the release and trivial sanitization. Every attack reads the
equivalence classes of a release, whoever made it: a veil release, or a released table with its
column roles.
"""

from veil.attacks.disclosure import DisclosureResult, disclosure
from veil.attacks.single import (AttackResult, BackgroundKnowledgeResult, ColumnAttacks, HomogeneityResult,
                                 SimilarityResult, SingleReleaseReport, SkewnessResult, attack_release,
                                 background_knowledge, homogeneity, release_classes, similarity, skewness)
from veil.attacks.intersection import intersection_attack
from veil.attacks.intersection_result import IntersectionResult
from veil.attacks.published_release import PublishedRelease, ReleaseMismatchError
from veil.attacks.published_values import UnreadableValueError
from veil.attacks.targets import TargetsError
from veil.attacks.minimality import MinimalityAttack
from veil.attacks.fulldomain_publishers import MinimalFullDomain, OptimalFullDomain
from veil.attacks.recoding_publishers import AceProcess, MinimalRecoding, MondrianProcess
from veil.attacks.join import JoinResult, NothingToJoinError, join_attack
from veil.attacks.correspondence import CorrespondenceResult, NotIncrementalError, correspondence_attack
from veil.attacks.matching import MatchingResult, matching_attack
from veil.attacks.presence import MembershipResult, PopulationMismatchError, membership_attack
from veil.attacks.tradeoff import TradeoffResult, TradeoffWorkload, tradeoff

__all__ = [
    "AttackResult", "BackgroundKnowledgeResult", "ColumnAttacks", "DisclosureResult", "HomogeneityResult",
    "SimilarityResult", "SingleReleaseReport", "SkewnessResult", "attack_release", "background_knowledge",
    "disclosure", "homogeneity", "release_classes", "similarity", "skewness", "TradeoffResult",
    "TradeoffWorkload", "tradeoff", "IntersectionResult", "PublishedRelease", "ReleaseMismatchError",
    "TargetsError", "UnreadableValueError", "intersection_attack", "AceProcess", "MinimalFullDomain",
    "MinimalityAttack", "MinimalRecoding", "MondrianProcess", "OptimalFullDomain",
    "TargetsError", "UnreadableValueError", "intersection_attack", "MembershipResult", "PopulationMismatchError",
    "membership_attack", "JoinResult", "NothingToJoinError", "join_attack", "MatchingResult", "matching_attack",
    "CorrespondenceResult", "NotIncrementalError", "correspondence_attack",
]
