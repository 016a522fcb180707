"""The release ledger and the publishing gate.

A :class:`Ledger` (an SQLite file by default, a PostgreSQL database when given a
``postgresql://`` URL) remembers every population, table, DP charge and release, in an
append-only log chained by hash and anchored by an HMAC; :meth:`Ledger.publish` is the gate a
release passes before it is recorded: its DP cost is charged atomically, it is attacked together
with every earlier release of its population, and its own models are checked once more on the
published file.
"""

from veil.ledger.errors import LedgerError, LedgerTamperedError, LegacyBudgetFileError
from veil.ledger.ledger import Ledger, VerifyReport
from veil.ledger.records import NEIGHBOURING, Population

__all__ = ["NEIGHBOURING", "Ledger", "LedgerError", "LedgerTamperedError", "LegacyBudgetFileError", "Population",
           "VerifyReport"]
