"""MDAV microaggregation (Domingo-Ferrer and Mateo-Sanz, 2002; Domingo-Ferrer and Torra, 2005)."""

from veil.anonymize.mdav.anonymizer import MDAV, MDAVResult, mdav_groups

__all__ = ["MDAV", "MDAVResult", "mdav_groups"]
