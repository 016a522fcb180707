"""The append-only decision log: entries chained by hash, the head anchored by an HMAC.

**Definition.** Entry ``n`` (``n`` = 1, 2, …) holds its time, author, action, population, a payload
(canonical JSON: sorted keys, no spaces, UTF-8) and the hash of entry ``n − 1`` (64 zeros for the
first). Its hash is ``SHA-256("veil-ledger entry\\0" ‖ canonical JSON of [n, at, by, action,
population, prev, payload])``. Changing any field of any entry changes its hash and breaks the
link from the next entry, so an edited, inserted or removed entry is found by walking the chain.

**Anchor.** Removing the *newest* entries leaves a shorter chain that still links. So the head is
anchored: the one row of ``anchor`` holds the last entry's number and hash and
``HMAC-SHA256(key, "veil-ledger anchor\\0" ‖ ledger id ‖ n ‖ hash)`` under veil's sealing key, kept
outside the database (:mod:`veil.ledger.keys`). Without the key, the chain cannot be cut, rewritten
and re-anchored unnoticed. Every write checks the anchor before it appends, so nothing is ever
added to a history that does not verify.

What the anchor cannot show: a whole copy of the database put back from earlier (its older anchor
is genuine), and anything done by someone who holds the key. Keep the head that
``veil ledger status`` prints elsewhere to detect the first; keep the key from the second.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.engine import Connection

from veil.ledger import keys
from veil.ledger.errors import LedgerError, LedgerTamperedError
from veil.ledger.schema import TABLES

__all__ = ["GENESIS", "Entry", "Head", "append", "canonical", "entry_hash", "lock_head", "walk"]

GENESIS = "0" * 64
_ENTRY = b"veil-ledger entry\x00"
_ANCHOR = b"veil-ledger anchor"
LOG, ANCHOR = TABLES["log"], TABLES["anchor"]
# Built once, so that SQLAlchemy compiles each once (a charge runs all of them).
_READ_ANCHOR = select(ANCHOR).where(ANCHOR.c.id == 1)
_LOCK_ANCHOR = _READ_ANCHOR.with_for_update()
# The newest entry's number and the anchored entry's hash, read by a statement of its own after the
# lock is granted: under PostgreSQL's READ COMMITTED a statement that waited for a row lock sees the
# locked row as committed since, but the rest of the database as of its start.
_HEAD = select(select(func.max(LOG.c.seq)).scalar_subquery().label("last_seq"),
               select(LOG.c.hash).where(LOG.c.seq == bindparam("seq")).scalar_subquery().label("entry_hash"))
_INSERT_ENTRY = insert(LOG)
_INSERT_ANCHOR = insert(ANCHOR)
_MOVE_ANCHOR = update(ANCHOR).where(ANCHOR.c.id == 1)


def canonical(value) -> str:
    """The canonical JSON text of a value (sorted keys, no spaces, non-ASCII kept)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def entry_hash(seq: int, at: str, by: str, action: str, population: str | None, prev: str, payload: str) -> str:
    """The hash of one entry (see the module notes)."""
    body = canonical([seq, at, by, action, population, prev, payload]).encode("utf-8")
    return hashlib.sha256(_ENTRY + body).hexdigest()


def anchor_mac(key: bytes, ledger_id: str, seq: int, head_hash: str) -> str:
    return keys.mac(key, _ANCHOR, f"{ledger_id}\n{seq}\n{head_hash}".encode("ascii"))


@dataclass(frozen=True)
class Head:
    """The newest entry: its number and hash (``seq`` 0 and :data:`GENESIS` before the first)."""

    seq: int
    hash: str


@dataclass(frozen=True)
class Entry:
    """One entry of the log, as stored."""

    seq: int
    at: str
    by: str
    action: str
    population: str | None
    payload: str
    prev: str
    hash: str

    @property
    def data(self) -> dict:
        return json.loads(self.payload)

    @property
    def intact(self) -> bool:
        return self.hash == entry_hash(self.seq, self.at, self.by, self.action, self.population, self.prev,
                                       self.payload)


def _key_for(where: str, anchor_key_id: str) -> bytes:
    key = keys.load_key(create=False)
    if key is None or keys.key_id(key) != anchor_key_id:
        mine = "there is none" if key is None else f"that one is {keys.key_id(key)}"
        raise LedgerError(f"{where} is anchored with key {anchor_key_id} but {str(keys.key_path())!r} does not hold "
                          f"it ({mine}); set {keys.KEY_ENV} to the key file everyone who writes to it uses.")
    return key


def lock_head(conn: Connection, where: str, ledger_id: str, *, for_update: bool = True) -> tuple[Head, bytes]:
    """Lock the anchor (PostgreSQL: ``FOR UPDATE``), check it, and return the head and the key.

    Raises:
        LedgerError: the key file does not hold the key the ledger was anchored with.
        LedgerTamperedError: the anchor's MAC does not verify, or the newest entry is not the
            one anchored (entries were removed or added by hand).
    """
    row = conn.execute(_LOCK_ANCHOR if for_update else _READ_ANCHOR).first()
    if row is None:
        raise LedgerTamperedError(f"{where} has no anchor, so its history cannot be trusted; restore it from a "
                                  "backup.")
    key = _key_for(where, row.key_id)
    if not hmac.compare_digest(row.mac, anchor_mac(key, ledger_id, row.seq, row.hash)):
        raise LedgerTamperedError(f"{where}'s anchor was changed by hand (its MAC does not verify); restore the "
                                  "ledger from a backup.")
    head = conn.execute(_HEAD, {"seq": row.seq}).one()
    if head.last_seq != row.seq or head.entry_hash != row.hash:
        found = "no entry" if head.last_seq is None else f"entry {head.last_seq}"
        raise LedgerTamperedError(f"{where}'s newest entry should be entry {row.seq}, but the log ends at {found}: "
                                  "entries were removed or added by hand, so restore the ledger from a backup.")
    return Head(row.seq, row.hash), key


def append(conn: Connection, head: Head, key: bytes, ledger_id: str, *, at: str, by: str, action: str,
           population: str | None, payload: dict, first: bool = False) -> Head:
    """Append one entry after ``head`` and move the anchor to it; the caller holds the write lock.

    ``first`` starts a new chain (the anchor row does not exist yet).
    """
    text = canonical(payload)
    seq = head.seq + 1
    digest = entry_hash(seq, at, by, action, population, head.hash, text)
    conn.execute(_INSERT_ENTRY, dict(seq=seq, at=at, by=by, action=action, population=population, payload=text,
                                     prev=head.hash, hash=digest))
    values = dict(seq=seq, hash=digest, key_id=keys.key_id(key), mac=anchor_mac(key, ledger_id, seq, digest))
    conn.execute(_INSERT_ANCHOR if first else _MOVE_ANCHOR, {"id": 1, **values} if first else values)
    return Head(seq, digest)


def count(conn: Connection) -> int:
    return conn.execute(select(func.count()).select_from(LOG)).scalar_one()


def walk(conn: Connection, where: str) -> list[Entry]:
    """Every entry, checked link by link from the first.

    Raises:
        LedgerTamperedError: an entry was edited (its hash does not match its content), or an
            entry is missing or was inserted (numbers not consecutive, a link broken).
    """
    entries = [Entry(*row) for row in conn.execute(
        select(LOG.c.seq, LOG.c.at, LOG.c.by, LOG.c.action, LOG.c.population, LOG.c.payload, LOG.c.prev,
               LOG.c.hash).order_by(LOG.c.seq))]
    prev = GENESIS
    for n, entry in enumerate(entries, start=1):
        if entry.seq != n:
            raise LedgerTamperedError(f"{where}'s log jumps from entry {n - 1} to entry {entry.seq}: entries were "
                                      "removed by hand, so restore the ledger from a backup.")
        if not entry.intact:
            raise LedgerTamperedError(f"{where}'s entry {entry.seq} ({entry.action}) was edited after it was written "
                                      "(its hash does not match its content); restore the ledger from a backup.")
        if entry.prev != prev:
            raise LedgerTamperedError(f"{where}'s entry {entry.seq} does not follow entry {n - 1} (the chain is "
                                      "broken there): entries were replaced by hand, so restore the ledger from a "
                                      "backup.")
        prev = entry.hash
    return entries
