"""Whether a release keeps anything worth publishing: the two ways a release that meets its
models can still be useless.

* **Every quasi-identifier at the top.** Either every quasi-identifier is generalized to the top
  level of its hierarchy, or the released records form a single class (every quasi-identifier
  shows one value for all of them: a full-domain release at ``*``, one Mondrian partition, one
  microaggregation group) while some quasi-identifier is generalized. The quasi-identifiers then
  tell a reader nothing, and the models hold only because nothing of them is published: a
  threshold too strict for the table (t = 0.01 on 200 records) ends there.
* **Suppression beyond the utility left.** The share of the input's records suppressed, s, is
  larger than the utility the release keeps, U = 1 − loss, where loss is the normalized certainty
  penalty (:class:`veil.metrics.NormalizedCertaintyPenalty`: per record the mean share of each
  quasi-identifier's domain its cell covers, 1 for a suppressed record), so that U is the share of
  the quasi-identifiers' detail the release keeps. s > U says that more records were taken out
  than detail was kept: most of what the release could have offered went to suppression.

Both are warnings, not errors: ``veil anonymize`` still writes the release and exits 0, and the
manifest's ``warnings``, the terminal, the report's summary and the publishing gate's decision
say them.
"""

from __future__ import annotations

from typing import Sequence

from veil.anonymize.columns import ColumnDisposition


def all_at_top(quasi_identifiers: Sequence[ColumnDisposition], released_classes: int) -> str | None:
    """The warning that every quasi-identifier is at the top (see the module notes), or ``None``.

    Args:
        quasi_identifiers: the quasi-identifiers' dispositions in the release.
        released_classes: the number of classes released (suppressed ones not counted).
    """
    if released_classes == 0 or not quasi_identifiers:
        return None
    generalized = [q for q in quasi_identifiers if q.disposition != "as is"]
    if released_classes == 1 and generalized:
        return ("the released records form a single class: every quasi-identifier shows the same value for all of "
                "them, so nothing published tells one record's quasi-identifiers from another's and the privacy "
                "models hold only because of that; check that the release is still worth publishing, or relax the "
                "models' thresholds.")
    if all(q.level is not None and q.height and q.level == q.height for q in quasi_identifiers):
        return (f"every quasi-identifier is generalized to the top of its hierarchy, so the release keeps the least "
                f"detail its hierarchies allow ({released_classes:,} classes); check that it is still worth "
                "publishing, or relax the models' thresholds.")
    return None


def suppression_beyond_utility(suppressed_share: float, loss: float | None) -> str | None:
    """The warning that suppression removed more than the utility left (see the module notes),
    or ``None``.

    Args:
        suppressed_share: the share of the input's records suppressed, in [0, 1].
        loss: the release's normalized certainty penalty, in [0, 1] (``None`` when unknown).
    """
    if loss is None or not isinstance(loss, (int, float)):
        return None
    left = 1.0 - float(loss)
    if suppressed_share <= 0 or suppressed_share <= left:
        return None
    return (f"suppression removed {suppressed_share:.1%} of the records, more than the {max(left, 0.0):.1%} of the "
            "quasi-identifiers' detail the release keeps (1 − loss): most of what it could offer went to "
            "suppression; relax the models or check that the release is still worth publishing.")


def useless_release_warnings(quasi_identifiers: Sequence[ColumnDisposition], *, released_classes: int,
                        suppressed_share: float, loss: float | None) -> list[str]:
    """Both warnings of the module notes that apply, as sentences.

    Args:
        quasi_identifiers: the quasi-identifiers' dispositions in the release.
        released_classes: the number of classes released.
        suppressed_share: the share of the input's records suppressed.
        loss: the release's normalized certainty penalty (``None`` when unknown).
    """
    found = [all_at_top(quasi_identifiers, released_classes), suppression_beyond_utility(suppressed_share, loss)]
    return [w for w in found if w]
