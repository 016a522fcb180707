"""The errors of the release ledger; each message is one sentence naming what to do."""

from __future__ import annotations

from veil.errors import VeilError


class LedgerError(VeilError):
    """A ledger cannot be used: missing, not a veil ledger, locked too long, or out of date."""


class LedgerTamperedError(LedgerError):
    """The ledger's history was edited or cut after veil wrote it, or its anchor does not verify."""


class LegacyBudgetFileError(LedgerError):
    """A JSON budget file of an earlier veil was given where a ledger is expected."""
