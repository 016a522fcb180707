"""The kinds of release a ledger records, and how a veil manifest tells which one it is."""

from __future__ import annotations

from veil.ledger.errors import LedgerError

__all__ = ["DIFFERENTIALLY_PRIVATE", "KINDS", "MICRODATA", "TRUTHFUL", "kind_of"]

#: Every kind a ledger records: generalization (full-domain), local recoding (Mondrian, MDAV's
#: microaggregation), Ace, anonymized marginals, αβ, a DP query's answer, an LDP collection, DP
#: synthetic data (``veil synth``).
KINDS = ("generalization", "local-recoding", "ace", "marginals", "alpha-beta", "dp-query", "ldp-collection",
         "synthetic", "perturbation")
#: Kinds that publish one row per person (a perturbation's rows are statistical disclosure
#: control's: cells suppressed, post-randomized, swapped, noisy or coded).
MICRODATA = ("generalization", "local-recoding", "ace", "perturbation")
#: Microdata whose every published cell is true of its record (or a generalization of it), which
#: the cross-release attacks read.
TRUTHFUL = ("generalization", "local-recoding", "ace")
#: Kinds whose cost is charged to the population's privacy budget.
DIFFERENTIALLY_PRIVATE = ("dp-query", "ldp-collection", "synthetic")

# The algorithm a manifest names → the kind of release it made.
_ALGORITHMS = {"fulldomain": "generalization", "mondrian": "local-recoding", "mdav": "local-recoding",
               "ace": "ace", "alphabeta": "alpha-beta", "dp": "dp-query", "synth": "synthetic",
               # statistical disclosure control (veil.sdc)
               "localsuppression": "perturbation", "pram": "perturbation", "swap": "perturbation",
               "noise": "perturbation", "topcoding": "perturbation"}
# Kinds the gate knows how to judge (a kind without a producer in this veil is refused).
JUDGED = ("generalization", "local-recoding", "dp-query", "synthetic", "perturbation")


def kind_of(manifest: dict, where: str) -> str:
    """The kind of the release a manifest describes.

    Raises:
        LedgerError: the manifest names no algorithm the gate knows how to judge.
    """
    algorithm = manifest.get("algorithm")
    kind = _ALGORITHMS.get(algorithm) if isinstance(algorithm, str) else None
    if kind is None:
        raise LedgerError(f"{where} describes a release made by {algorithm!r}, which the gate does not know; it "
                          "publishes what veil anonymize, veil dp and veil synth wrote.")
    if kind not in JUDGED:
        raise LedgerError(f"{where} describes a release of kind {kind!r}, which this gate cannot judge yet; it "
                          f"publishes {', '.join(JUDGED)} releases.")
    return kind
