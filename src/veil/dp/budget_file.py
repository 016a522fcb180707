"""A privacy budget kept as JSON: the budget file's format and schema version, writing an accountant
and reading it back.

Every accountant serializes to JSON (:meth:`~veil.dp.account.PrivacyAccount.to_json`;
:func:`from_json`) with a schema version, the dataset id, the budget, the options and every charge,
each number as its exact text (:func:`veil.dp.exact.to_text`). A text that is not valid, was
written for another dataset or records more spending than its budget allows is refused with one
sentence (:class:`BudgetFileError`): reading a budget back replays every charge through the
accountant's own checks. Keeping a budget that many processes share is the release ledger's job
(:mod:`veil.ledger`): it keeps the same document's parts in its rows and rebuilds the accountant
with :func:`from_document`.

Each accountant class names the composition rules its documents carry and reads its own options;
defining the class registers it here (:func:`register`), so a document is read back by the class
that wrote it. :mod:`veil.dp` defines every accountant.
"""

from __future__ import annotations

import json

from veil.dp.budget import BudgetExceededError, Charge, check_label, check_step
from veil.dp.budget_unit import BudgetUnit
from veil.dp.exact import exact_delta, exact_epsilon, from_text
from veil.errors import ParameterError, VeilError

__all__ = ["FORMAT", "SCHEMA_VERSION", "BudgetFileError", "from_document", "from_json", "parse_document", "read_charge",
           "register", "to_document"]

FORMAT = "veil-dp-budget"
#: 2: the dataset id is a fingerprint of the parsed data and files carry a seal (1: bytes, no seal)
SCHEMA_VERSION = 2

#: the accountant class that reads the budgets kept under each composition rule
_READERS: dict[str, type] = {}


class BudgetFileError(VeilError):
    """A budget file cannot be used: missing, corrupt, or kept for another dataset."""


def register(cls: type) -> type:
    """Make ``cls`` the reader of the budgets kept under each of the composition rules it names.

    ``cls.compositions`` is a tuple of the ``"composition"`` values its documents carry, and
    ``cls._from_options(budget, dataset_id=, composition=, options=, discount=)`` makes a new
    accountant from a document's budget and options (raising ``KeyError``, ``TypeError``,
    ``ValueError`` or :class:`~veil.errors.ParameterError` when they are corrupt). Every
    accountant class is registered when it is defined.
    """
    for composition in cls.compositions:
        _READERS[composition] = cls
    return cls


def to_document(accountant) -> dict:
    """An accountant as a JSON-ready dict: the format and schema version, the dataset id, the
    composition rule, the budget, the options and every charge, numbers as their exact text; and
    ``"unit": {"person": ID column}`` for a budget kept at the person unit (a document without
    ``unit`` protects rows: :mod:`veil.dp.budget_unit`)."""
    doc = {
        "format": FORMAT,
        "version": SCHEMA_VERSION,
        "dataset_id": accountant.dataset_id,
        "composition": accountant.composition,
        "budget": accountant._budget_document(),
        "options": accountant._options(),
        "charges": [c.to_dict() for c in accountant.charges],
    }
    if accountant.unit.is_person:
        doc["unit"] = accountant.unit.to_document()
    return doc


def from_json(text: str, *, dataset_id: str, discount=None, source: str | None = None):
    """An accountant from :meth:`to_json` text, refusing one kept for another dataset.

    Args:
        text: the JSON text.
        dataset_id: the dataset the caller is about to query; must match the text's.
        discount: the g of a temporal budget kept with a custom (unsaved) discount function.
        source: a file name for messages.

    Raises:
        BudgetFileError: the text is not a veil budget, is corrupt, belongs to another dataset, or
            records charges that exceed its own budget.
    """
    return from_document(parse_document(text, source), dataset_id=dataset_id, discount=discount, source=source)


def _where(source: str | None) -> str:
    return f"budget file {source!r}" if source else "the budget JSON"


def parse_document(text: str, source: str | None = None) -> dict:
    """The JSON object of a budget text, checked to be a veil budget of a version this veil reads.

    Raises:
        BudgetFileError: not JSON, not a veil budget, or no valid schema version.
    """
    where = _where(source)
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, TypeError, ValueError) as exc:
        raise BudgetFileError(f"{where} is not valid JSON ({exc}); restore it from a backup.") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BudgetFileError(f"{where} is not a veil privacy budget (no \"format\": \"{FORMAT}\").")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BudgetFileError(f"{where} has no valid schema version; it is corrupt.")
    if version > SCHEMA_VERSION:
        raise BudgetFileError(f"{where} has schema version {version}, newer than this veil reads "
                              f"({SCHEMA_VERSION}); upgrade veil.")
    return doc


def from_document(doc: dict, *, dataset_id: str | None, discount=None, source: str | None = None,
                  where: str | None = None):
    """An accountant from a parsed budget document (:func:`parse_document`).

    ``dataset_id=None`` takes the document's own id (to show a budget without its data).
    ``where`` names the document in messages (default: the budget file ``source``).

    Raises:
        BudgetFileError: see :func:`from_json`.
    """
    where = where or _where(source)
    file_id = doc.get("dataset_id")
    if not isinstance(file_id, str) or not file_id.strip():
        raise BudgetFileError(f"{where} names no dataset; it is corrupt.")
    if dataset_id is None:
        dataset_id = file_id
    if file_id != dataset_id:
        raise BudgetFileError(f"{where} belongs to dataset {file_id!r}, not {dataset_id!r}; use the budget "
                              "file of this dataset.")
    try:
        acc = _build(doc, dataset_id, discount)
        charges = doc["charges"]
        if not isinstance(charges, list):
            raise TypeError("charges is not a list")
        for entry in charges:
            acc._replay(read_charge(entry))
    except BudgetExceededError:
        raise BudgetFileError(f"{where} records charges that exceed its own budget; it was edited or is "
                              "corrupt.") from None
    except BudgetFileError:
        raise
    except KeyError as exc:
        raise BudgetFileError(f"{where} is corrupt (it has no {exc.args[0]!r} entry); restore it from a "
                              "backup.") from None
    except (TypeError, ValueError, AttributeError, ParameterError) as exc:
        reason = str(exc).split(";")[0].rstrip(".") if str(exc) else type(exc).__name__
        raise BudgetFileError(f"{where} is corrupt ({reason}); restore it from a backup.") from None
    return acc


def _build(doc: dict, dataset_id: str, discount):
    """A new accountant of the document's composition rule, budget and options (no charges yet)."""
    budget = doc["budget"]
    options = doc.get("options") or {}
    if not isinstance(budget, dict) or not isinstance(options, dict):
        raise TypeError("budget or options is not an object")
    kind = doc["composition"]
    cls = _READERS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown composition {kind!r}")
    b = cls._read_budget(budget)
    acc = cls._from_options(b, dataset_id=dataset_id, composition=kind, options=options, discount=discount)
    return acc.declare_unit(BudgetUnit.from_document(doc.get("unit")))


def read_charge(entry) -> Charge:
    """A charge from its entry in a budget document (:meth:`~veil.dp.budget.Charge.to_dict`), checked as a
    charge is; the ledger reads its charge rows back with it too.

    Args:
        entry: the entry, a dict of label, kind, ε and δ as exact text, group, partition, step and time.

    Raises:
        KeyError, TypeError, ValueError or ParameterError: a corrupt entry (:func:`from_document`
            turns each into one :class:`BudgetFileError` sentence).
    """
    if not isinstance(entry, dict):
        raise TypeError("a charge is not an object")
    kind = entry["kind"]
    if kind not in ("query", "postprocess"):
        raise ValueError(f"unknown charge kind {kind!r}")
    eps, delta = from_text(entry["epsilon"]), from_text(entry["delta"])
    if kind == "postprocess" and (eps != 0 or delta != 0):
        raise ValueError("a post-processing record has a cost")
    if kind == "query":
        exact_epsilon(eps)
        exact_delta(delta)
    step = entry.get("step")
    if step is not None:
        step = check_step(step, "step")
    for key in ("group", "partition"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise TypeError(f"{key} is not text")
    at = entry.get("at", "")
    if not isinstance(at, str):
        raise TypeError("at is not text")
    return Charge(check_label(entry["label"]), eps, delta, kind=kind, group=entry.get("group"),
                  partition=entry.get("partition"), step=step, at=at)
