"""Budget files of earlier veil versions: read, verified, and imported into a ledger.

Before the ledger, ``veil dp --budget-file`` kept one dataset's budget in a JSON file sealed with
an HMAC-SHA256 under veil's key (``"seal": {"algorithm", "key_id", "mac"}`` over the canonical
JSON of the rest). :func:`import_budget_file` verifies such a file and moves its budget and every
charge into a ledger as the population of that dataset, so that from then on the ledger is the one
record of what was spent. A file is imported once: its population must not exist yet. Files of
the first format (unsealed, bound to the data's bytes) are refused, with what they have left.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path

from veil.dp.accountant import BudgetFileError, _show, from_document, parse_document
from veil.ledger import keys
from veil.ledger.errors import LedgerError
from veil.ledger.records import charge_values

__all__ = ["import_budget_file", "read_budget_file"]

SEAL_ALGORITHM = "HMAC-SHA256"
_SEAL_CONTEXT = b"veil-dp-budget seal"


def _canonical_mac(doc: dict, key: bytes) -> str:
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return keys.mac(key, _SEAL_CONTEXT, canonical)


def read_budget_file(path: str | os.PathLike) -> tuple[dict, bytes]:
    """A budget file's document (seal removed) and its bytes, after checking the seal.

    Raises:
        BudgetFileError: the file is missing, unreadable, not a veil budget, unsealed (a file of
            the first format, refused with what it has left), sealed with another key, or edited
            after it was sealed.
    """
    path = Path(path)
    where = f"budget file {str(path)!r}"
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise BudgetFileError(f"{where} does not exist; check the path.") from None
    except IsADirectoryError:
        raise BudgetFileError(f"{str(path)!r} is a folder, not a budget file.") from None
    except UnicodeDecodeError:
        raise BudgetFileError(f"{where} is not UTF-8 JSON; it is corrupt.") from None
    except OSError as exc:
        raise BudgetFileError(f"{where} cannot be read ({exc.strerror}).") from None
    doc = parse_document(text, str(path))
    seal = doc.pop("seal", None)
    if seal is None:
        if doc["version"] >= 2:
            raise BudgetFileError(f"{where} has no seal, so it was not written by veil or was edited; restore it "
                                  "from a backup.")
        old = from_document(doc, dataset_id=None, source=str(path))
        left_e, left_d = old.remaining()
        raise BudgetFileError(
            f"{where} was written by an older veil without a seal, so hand edits to it cannot be ruled out and it "
            f"is bound to the data's bytes rather than its content; if you trust it, keep it as a record and give "
            f"the data's population a new budget of what it has left (ε = {_show(left_e)}, δ = {_show(left_d)}).")
    if (not isinstance(seal, dict) or seal.get("algorithm") != SEAL_ALGORITHM
            or not isinstance(seal.get("mac"), str) or not isinstance(seal.get("key_id"), str)):
        raise BudgetFileError(f"{where} has a malformed seal; restore it from a backup.")
    key = keys.load_key(create=False)
    if key is None or seal["key_id"] != keys.key_id(key):
        mine = "there is none" if key is None else f"that one is {keys.key_id(key)}"
        raise BudgetFileError(f"{where} was sealed with key {seal['key_id']} but {str(keys.key_path())!r} does not "
                              f"hold it ({mine}); set {keys.KEY_ENV} to the key file the budget was made with.")
    if not hmac.compare_digest(seal["mac"], _canonical_mac(doc, key)):
        raise BudgetFileError(f"{where} was changed after veil sealed it (its seal does not match its content); a "
                              "budget edited by hand cannot be trusted, so restore it from a backup.")
    return doc, data


def import_budget_file(ledger, path: str | os.PathLike, *, population: str | None = None) -> str:
    """Move a sealed budget file's budget and charges into ``ledger``; returns the population's name.

    The population is bound to the file's table by the binding of its dataset id
    (:mod:`veil.ledger.binding`: the id an earlier veil stored, keyed; the id itself is never kept)
    and named ``population``, else after the file (``budget.json``). The file itself is left as it
    is (keep it as a record; charging it is over).

    Raises:
        BudgetFileError: see :func:`read_budget_file`; its charges exceed its own budget.
        LedgerError: the ledger already has that population or a population of that table (the
            file was imported, or the data was charged in the ledger already).
        LedgerTamperedError: the ledger fails verification.
    """
    from veil.ledger.binding import binding

    doc, data = read_budget_file(path)
    accountant = from_document(doc, dataset_id=None, source=str(path))
    fingerprint = accountant.dataset_id
    name = population if population is not None else Path(path).name
    digest = hashlib.sha256(data).hexdigest()
    fresh = from_document({**doc, "dataset_id": name, "charges": []}, dataset_id=name, source=str(path))
    with ledger._writing() as w:
        values = ledger._population_values(name, fresh, None, binding(w.key, fingerprint), "add-remove")
        if ledger._population(w.conn, name, missing_ok=True) is not None:
            raise LedgerError(f"{ledger._where} already has a population {name!r}; a budget file is imported once "
                              "(name another population with --population).")
        taken = [p for p in ledger._holders(w.conn, _Fingerprint(fingerprint), w.key)]
        if taken:
            raise LedgerError(f"{ledger._where} already keeps the budget of the table of budget file {str(path)!r}, as "
                              f"population {taken[0].name!r}; a budget file is imported once.")
        w.add("populations", values, action="population", population=name)
        pop = ledger._population(w.conn, name)
        for charge in accountant.charges:
            w.add("charges", charge_values(charge, pop, w.by), action="charge", population=name,
                  extra={"imported_from": digest})
        w.note("import", name, {"file": str(path), "sha256": digest, "charges": len(accountant.charges)})
    return name


class _Fingerprint:
    """A table known only by its dataset id (an earlier veil's budget file names no more)."""

    def __init__(self, fingerprint: str):
        self.fingerprint = fingerprint
