"""A DP answer written as a release, a file with its manifest, for the publishing gate to take.

``write_answer`` writes the answer (:meth:`QueryResult.to_dict`, JSON) and a manifest that names
and hashes it (:mod:`veil.output`: both files appear or neither does). The manifest says what the
answer cost, exactly (``epsilon``, ``delta`` as decimal text, the query's label), whether it is
fit for release, and — when the query was charged to a ledger — which charge paid for it, so that
:func:`veil.ledger.gate.publish` records the release with that charge instead of charging it again.

**Sealed.** The gate charges and judges what the manifest says, so the manifest is sealed: its
``seal`` is HMAC-SHA256 under veil's key (:mod:`veil.ledger.keys`, the key that anchors the
ledger) of the canonical JSON of everything else in it, the answer's SHA-256 included. Whoever
edits the cost, the charge, the answer or its fitness without the key breaks the seal, and the
gate refuses the pair (:func:`check_seal`).

**Nothing about the table.** A manifest travels with the answer, so it carries nothing computed
from the private table: the table it was drawn from is named only by a tag under a fresh random
nonce (:func:`veil.ledger.binding.answer_tag`), which the gate, holding the key, checks against
the population's tables, and which tells anyone else nothing — not even whether two answers were
drawn from the same table.
"""

from __future__ import annotations

import datetime as _dt
import hmac
import json
import os
from pathlib import Path

from veil.dp.exact import exact, to_text
from veil.dp.queries import QueryResult
from veil.ledger import keys
from veil.ledger.binding import answer_tag, binding, new_nonce
from veil.ledger.chain import canonical
from veil.ledger.errors import LedgerError

__all__ = ["SEAL_ALGORITHM", "answer_manifest", "check_seal", "seal", "write_answer"]

SEAL_ALGORITHM = "HMAC-SHA256"
_SEAL = b"veil dp answer manifest"


def answer_manifest(result: QueryResult, *, table: dict | None = None, charge: dict | None = None) -> dict:
    """The manifest of a DP answer (without the ``release`` and ``seal`` entries the writer adds).

    Args:
        result: the answer.
        table: ``{"nonce", "tag"}``: the table it was drawn from, as :func:`write_answer` names it.
        charge: ``{"ledger_id", "population", "seq"}``: the ledger charge that paid for it.
    """
    from veil import __version__

    return {"veil": __version__, "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "algorithm": "dp", "query": result.query, **_cost(result), "mechanism": result.mechanism,
            "fit_for_release": bool(result.fit_for_release), "not_fit_because": list(result.not_fit_because),
            "table": table, "charge": charge}


def _cost(result: QueryResult) -> dict:
    """What the answer cost, in its own measure: ``epsilon`` and ``delta``, or ``rho`` alone (a
    ρ-zCDP answer names no ε, so that no reader can take its ρ for one)."""
    if result.rho is not None:
        return {"rho": to_text(exact(result.rho, "rho"))}
    return {"epsilon": to_text(exact(result.epsilon, "epsilon")), "delta": to_text(exact(result.delta, "delta"))}


def seal(doc: dict, key: bytes) -> dict:
    """The seal of a manifest (every entry but ``seal``) under ``key``."""
    body = {k: v for k, v in doc.items() if k != "seal"}
    return {"algorithm": SEAL_ALGORITHM, "key_id": keys.key_id(key),
            "mac": keys.mac(key, _SEAL, canonical(body).encode("utf-8"))}


def check_seal(doc: dict, key: bytes, where: str, writer: str = "veil dp") -> None:
    """Refuse a manifest that veil did not write with ``key``, or that was changed since (``writer``:
    the command that writes such manifests, which the refusal names).

    Raises:
        LedgerError: no seal, a seal of another key, or one that does not verify.
    """
    found = doc.get("seal")
    if not isinstance(found, dict) or found.get("algorithm") != SEAL_ALGORITHM \
            or not isinstance(found.get("mac"), str) or not isinstance(found.get("key_id"), str):
        raise LedgerError(f"{where} carries no seal, so what it says the answer cost cannot be trusted; draw the "
                          f"answer again with this veil ({writer} --out).")
    if found["key_id"] != keys.key_id(key):
        raise LedgerError(f"{where} was sealed with key {found['key_id']}, not the ledger's key {keys.key_id(key)}; "
                          "publish it to a ledger of the key it was drawn with.")
    try:
        expected = seal(doc, key)["mac"]
    except (TypeError, ValueError):
        expected = ""
    if not hmac.compare_digest(found["mac"], expected):
        raise LedgerError(f"{where} was changed after {writer} wrote it (its seal does not verify), so what it says "
                          f"the answer cost cannot be trusted; publish the answer and manifest {writer} wrote.")


def write_answer(result: QueryResult, path: str | os.PathLike, manifest: str | os.PathLike, *,
                 fingerprint: str | None = None, charge: dict | None = None, key: bytes | None = None, reads=(),
                 make_folders: bool = False) -> str:
    """Write the answer (JSON) and its sealed manifest as one set; returns the manifest's text.

    Args:
        result: the answer.
        path, manifest: where the answer and its manifest go.
        fingerprint: the :func:`~veil.dp.fingerprint.dataset_id` of the table it was drawn from
            (kept in the manifest only as a tag, see the module notes), or ``None``.
        charge: see :func:`answer_manifest`.
        key: the sealing key (default: veil's key file, made when missing).
        reads: files the run read, which no output may replace.
        make_folders: create a missing folder of the outputs.

    Raises:
        DataError: a folder is missing or unwritable, or the disk is full.
        ParameterError: an output is an input, or both paths are one file.
        SealKeyError: the key file cannot be read or made.
    """
    from veil.output.writer import OutputSet

    key = keys.load_key(create=True) if key is None else key
    table = None
    if fingerprint is not None:
        nonce = new_nonce()
        table = {"nonce": nonce, "tag": answer_tag(key, nonce, binding(key, fingerprint))}
    with OutputSet([path, manifest], reads=reads, make_folders=make_folders) as outputs:
        outputs.put(path, json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
        doc = answer_manifest(result, table=table, charge=charge)
        doc["release"] = outputs.describe(path, relative_to=Path(manifest).parent)
        doc["seal"] = seal(doc, key)
        text = outputs.put_manifest(manifest, doc, describes={})
        outputs.commit()
    return text
