"""Online query auditing: answer aggregate queries truthfully or deny them, and the attack on an
auditor whose denials leak.

A session (:class:`AuditSession`) over one numeric column answers MAX, MIN and SUM queries over
subsets of records (:mod:`veil.audit.queries`) through an auditor
(:mod:`veil.audit.auditors`): the naive :class:`ValueBasedAuditor`, which looks at the true answer,
or the :class:`SimulatableAuditor` of Kenthapadi, Mishra and Nissim (PODS 2005), which decides
from the past queries and answers only. :class:`DenialAttack` (:mod:`veil.audit.attack`) reads
values off the naive auditor's denials.
"""

from veil.audit.attack import DenialAttack, Inference
from veil.audit.auditors import Denial, SimulatableAuditor, ValueBasedAuditor, make_auditor
from veil.audit.extremum import ExtremumState
from veil.audit.queries import AGGREGATES, Query, QueryError, QueryParser
from veil.audit.session import AuditSession, Decision, read_numbered_queries, read_queries
from veil.audit.sums import SumState

__all__ = ["AGGREGATES", "AuditSession", "Decision", "Denial", "DenialAttack", "ExtremumState", "Inference",
           "Query", "QueryError", "QueryParser", "SimulatableAuditor", "SumState", "ValueBasedAuditor",
           "make_auditor", "read_numbered_queries", "read_queries"]
