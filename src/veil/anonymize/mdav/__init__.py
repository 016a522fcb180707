"""MDAV microaggregation (Domingo-Ferrer and Mateo-Sanz, 2002; Domingo-Ferrer and Torra, 2005).

Microaggregation partitions the records into groups of at least k similar records and publishes,
for every record, its group's representative instead of its own quasi-identifiers: the group
centroid (mean) of a numeric quasi-identifier and the group mode of any other one. Every group is
then an equivalence class of at least k records, so the release is k-anonymous.

* :mod:`.anonymizer`: :class:`MDAV`, its settings and checks, the fit and the release;
* :mod:`.space`: the distance space (the quasi-identifiers standardized) and its distance tables;
* :mod:`.grouping`: the MDAV heuristic, :func:`mdav_groups`;
* :mod:`.merging`: the merging of groups that print alike or fail a model, and the suppression
  of failing groups within the limit;
* :mod:`.published`: what a group publishes (centroids and modes, and how numbers print).
"""

from veil.anonymize.mdav.anonymizer import MDAV, MDAVResult
from veil.anonymize.mdav.grouping import mdav_groups

__all__ = ["MDAV", "MDAVResult", "mdav_groups"]
