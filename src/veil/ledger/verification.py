"""What a ledger verifies before it decides: all of it, or what changed since it last verified it.

**Full verification** (:func:`check`, :func:`require`) proves that the ledger is what holders of
the key wrote:

1. *the log*: every entry's hash matches its content, the numbers run 1, 2, … without a gap, each
   entry links to the hash of the one before, and the first is the entry that created this ledger;
2. *the anchor*: its HMAC under the key verifies, and it names the newest entry (number and hash),
   so the newest entries cannot be cut off or replaced;
3. *the rows*: every row of ``populations``, ``datasets``, ``charges`` and ``releases`` — every
   population's, not only the one a decision is about — equals the row its entry recorded (blob
   columns by their SHA-256); every recorded row is there, and no row is there that no entry
   recorded. A population deleted or renamed, a release or a table deleted, a charge lowered,
   anywhere, is named;
4. *the budgets*: every population's charges fit its budget under its composition rule.

It reads the whole ledger, so its cost grows with it. It runs before every decision except a
charge made by a budget session that is already open: when a budget is opened
(:meth:`veil.ledger.Ledger.open_budget`, each ``veil dp`` command), under the write lock before a
population is made or a table registered (by any path, a budget's first charge included), and
under the write lock before the gate records a decision (:mod:`veil.ledger.gate`).

**Catching up** (:func:`catch_up`) is what each further charge of an open session verifies, under
the write lock, against the :class:`Verified` state the session last verified or wrote (head H,
every table's row count C):

* the anchor, as every write does: its MAC, and that it names the newest entry;
* that the head did not go back (a genuine but older anchor: an older copy of the database put
  back): it is H, or a later entry;
* the entries after H: each links to the one before, starting from H's hash, and matches its own
  hash; each row they record is in its table exactly as recorded;
* the row counts: each table holds C plus the rows the new entries record, so a row deleted or
  added by hand anywhere in the ledger is found at the next charge;
* on SQLite, when no entry was added, whether any other connection committed since
  (``PRAGMA data_version``, :meth:`veil.ledger.store.Store.token`): nobody who holds the key wrote,
  yet the file changed, so the whole ledger is verified again and the edit named. With nothing
  committed by anyone else, the ledger is exactly as verified and nothing more is read.

**Why that suffices for a charge.** A charge to population P is decided on P's definition and
budget and on P's charges. The session holds those as verified when it was opened, adds its own
charges as it commits them, and takes other writers' charges from the entries after H, which the
chain and the anchor prove genuine — never from rows it has not verified. So a row edited in place
after it was verified (keeping the counts, and while genuine writers also commit) cannot change
the decision; it is found by the next full verification: the next budget opened or ``veil dp``
run, the next table or population registered, the next decision of the gate, or
``veil ledger verify``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlalchemy import bindparam, func, select
from sqlalchemy.engine import Connection

from veil.ledger import chain
from veil.ledger.errors import LedgerTamperedError
from veil.ledger.records import COLUMNS, accountant_of, record_of
from veil.ledger.schema import TABLES
from veil.ledger.statements import Prepared

__all__ = ["PRIMARY", "Verified", "catch_up", "check", "require", "summed"]

#: The tables whose rows the log records, by their primary key.
PRIMARY = {"populations": "id", "datasets": "id", "charges": "seq", "releases": "id"}
_COUNTED = ("log",) + tuple(PRIMARY)
_COUNTS = Prepared(select(*(select(func.count()).select_from(TABLES[name]).scalar_subquery().label(name)
                            for name in _COUNTED)))
_ROW = {name: select(TABLES[name]).where(TABLES[name].c[key] == bindparam("key")) for name, key in PRIMARY.items()}


@dataclass(frozen=True)
class Verified:
    """The state of a ledger as last verified (or written) by one session.

    Attributes:
        head: the newest entry then.
        counts: the rows each table held (``populations``, ``datasets``, ``charges``, ``releases``).
        token: :meth:`veil.ledger.store.Store.token` of the connection that verified or wrote it.
        key: the sealing key (checked against the anchor).
    """

    head: chain.Head
    counts: dict = field(default_factory=dict)
    token: tuple | None = None
    key: bytes = b""


def _recorded(entry: chain.Entry) -> tuple[str, dict] | None:
    """The table and row an entry added (the columns the table has now: a column a migration
    dropped is no longer compared), or ``None`` for an entry that adds no row."""
    data = entry.data
    if isinstance(data, dict) and data.get("table") in PRIMARY and isinstance(data.get("row"), dict):
        row = data["row"]
        return data["table"], {name: row.get(name) for name in COLUMNS[data["table"]]}
    return None


def _by_table(entries) -> dict:
    """Every row the entries record, by table: primary key → (entry number, row)."""
    out: dict = {name: {} for name in PRIMARY}
    for entry in entries:
        found = _recorded(entry)
        if found is not None:
            out[found[0]][found[1][PRIMARY[found[0]]]] = (entry.seq, found[1])
    return out


def summed(counts: dict, entries) -> dict:
    """The row counts once the rows ``entries`` record are added."""
    out = dict(counts)
    for entry in entries:
        found = _recorded(entry)
        if found is not None:
            out[found[0]] = out.get(found[0], 0) + 1
    return out


def check(conn: Connection, where: str, ledger_id: str, *, lock: bool,
          accountants: dict | None = None) -> tuple[list[chain.Entry], chain.Head, bytes | None, list[str]]:
    """Full verification (see the module notes), every problem found as one sentence.

    Args:
        lock: take the anchor's row lock (in a write transaction).
        accountants: when given, filled with every population's accountant as rebuilt (by its
            id), so that a caller need not rebuild one again.

    Returns:
        The entries (empty when the chain is broken), the newest entry, the key (``None`` when
        the anchor does not verify) and the problems.

    Raises:
        LedgerError: the key file does not hold the ledger's key.
    """
    problems: list[str] = []
    head, key = chain.Head(0, chain.GENESIS), None
    try:
        entries = chain.walk(conn, where)
        if entries:
            head = chain.Head(entries[-1].seq, entries[-1].hash)
    except LedgerTamperedError as exc:
        problems.append(str(exc))
        entries = []
    try:
        _, key = chain.lock_head(conn, where, ledger_id, for_update=lock)
    except LedgerTamperedError as exc:
        problems.append(str(exc))
    if entries:
        if entries[0].action != "init" or entries[0].data.get("ledger_id") != ledger_id:
            problems.append(f"{where}'s first entry is not the one that created this ledger; restore it from a "
                            "backup.")
        recorded = _by_table(entries)
        for table in PRIMARY:
            problems.extend(compare_rows(conn, recorded[table], table, where))
        if not problems:
            problems.extend(_budgets(conn, where, {} if accountants is None else accountants))
    return entries, head, key, problems


def require(conn: Connection, store, where: str, ledger_id: str, *, lock: bool,
            accountants: dict | None = None) -> Verified:
    """Full verification that raises on the first problem (naming how many more there are);
    ``accountants`` as in :func:`check`.

    Raises:
        LedgerTamperedError: any problem :func:`check` finds.
        LedgerError: the key file does not hold the ledger's key.
    """
    entries, head, key, problems = check(conn, where, ledger_id, lock=lock, accountants=accountants)
    if problems:
        more = len(problems) - 1
        extra = f" ({more} more problem{'s' if more > 1 else ''}: run veil ledger verify)" if more else ""
        raise LedgerTamperedError(problems[0].rstrip(".") + extra + ".")
    return Verified(head, summed({name: 0 for name in PRIMARY}, entries), store.token(conn), key)



def catch_up(conn: Connection, store, where: str, ledger_id: str, state: Verified) -> tuple[Verified,
                                                                                            list[chain.Entry]]:
    """Under the write lock, verify what changed since ``state`` (see the module notes).

    Returns:
        The state now (its head the newest entry), and the entries added since ``state``, each
        checked, whose rows are in their tables as recorded.

    Raises:
        LedgerTamperedError: the anchor does not verify or the head went back; an entry added
            since does not link or was edited; a row is missing, added or edited; a table's count
            is not what the entries say.
    """
    head, key = chain.lock_head(conn, where, ledger_id, key=state.key or None)
    token = store.token(conn)
    if head == state.head and token is not None:
        if token == state.token:
            return state, []
        if state.token is not None and token[0] == state.token[0]:
            # The same connection saw a commit by someone else, and no entry was added.
            return require(conn, store, where, ledger_id, lock=True), []
    if head.seq < state.head.seq or (head.seq == state.head.seq and head.hash != state.head.hash):
        raise LedgerTamperedError(f"{where} went back: it was verified up to entry {state.head.seq}, and its anchor "
                                  f"now names {'another ' if head.seq == state.head.seq else ''}entry {head.seq}, so "
                                  "an older copy of it was put back; restore the newest copy.")
    added = chain.entries_after(conn, state.head, where)
    for entry in added:
        found = _recorded(entry)
        if found is None:
            continue
        table, recorded = found
        key_name = PRIMARY[table]
        row = conn.execute(_ROW[table], {"key": recorded.get(key_name)}).first()
        noun = table[:-1]
        if row is None:
            raise LedgerTamperedError(f"{where} lost {noun} {recorded.get(key_name)}, which entry {entry.seq} "
                                      "recorded: it was deleted by hand, so restore the ledger from a backup.")
        actual = record_of(table, row._asdict())
        if actual != recorded:
            changed = ", ".join(sorted(k for k in actual if actual[k] != recorded.get(k)))
            raise LedgerTamperedError(f"{where}'s {noun} {recorded.get(key_name)} differs from what entry {entry.seq} "
                                      f"recorded ({changed}): it was edited by hand, so restore the ledger from a "
                                      "backup.")
    counts = summed(state.counts, added)
    found = dict(zip(_COUNTED, _COUNTS.one(conn)))
    for name in _COUNTED:
        wanted = head.seq if name == "log" else counts.get(name, 0)
        if found[name] != wanted:
            what = "entries" if name == "log" else f"{name[:-1]} rows"
            how = "deleted" if found[name] < wanted else "added"
            raise LedgerTamperedError(f"{where} holds {found[name]} {what} where its log records {wanted}: some were "
                                      f"{how} by hand (veil ledger verify names them), so restore the ledger from a "
                                      "backup.")
    return replace(state, head=head, counts=counts, token=token, key=key), added


def compare_rows(conn: Connection, expected: dict, table: str, where: str) -> list[str]:
    """Every row of ``table`` against the rows the log records (primary key → (entry number, row)),
    one sentence per difference."""
    primary = PRIMARY[table]
    actual = {getattr(r, primary): record_of(table, r._asdict()) for r in conn.execute(select(TABLES[table]))}
    problems = []
    noun = table[:-1]

    def named(row: dict) -> str:
        return f" ({row['name']!r})" if table == "populations" and row.get("name") else ""

    for key in sorted(set(expected) - set(actual)):
        seq, row = expected[key]
        problems.append(f"{where} lost {noun} {key}{named(row)}, which entry {seq} recorded: it was deleted by hand, "
                        "so restore the ledger from a backup.")
    for key in sorted(set(actual) - set(expected)):
        problems.append(f"{where} holds {noun} {key}{named(actual[key])}, which no entry of its log recorded: it was "
                        "added by hand, so restore the ledger from a backup.")
    for key in sorted(set(actual) & set(expected)):
        seq, row = expected[key]
        if actual[key] != row:
            changed = sorted(k for k in actual[key] if actual[key][k] != row.get(k))
            was = f" (recorded as {row['name']!r})" if "name" in changed and table == "populations" else ""
            problems.append(f"{where}'s {noun} {key}{was} differs from what entry {seq} recorded "
                            f"({', '.join(changed)}): it was edited by hand, so restore the ledger from a backup.")
    return problems


def _budgets(conn: Connection, where: str, built: dict) -> list[str]:
    """Every population's charges checked against its budget (the accountant's own rules); each
    accountant rebuilt goes into ``built`` by the population's id."""
    from veil.ledger.records import Population

    populations = TABLES["populations"]
    charges = TABLES["charges"]
    rows_by_population: dict = {}
    for row in conn.execute(select(charges).order_by(charges.c.seq)):
        rows_by_population.setdefault(row.population_id, []).append(row)
    problems = []
    for row in conn.execute(select(populations).where(populations.c.accountant.is_not(None))
                            .order_by(populations.c.id)):
        pop = Population._from_row(row)
        try:
            built[pop.id] = accountant_of(pop, rows_by_population.get(pop.id, []),
                                          f"population {pop.name!r} of {where}")
        except LedgerTamperedError as exc:
            problems.append(str(exc))
    return problems
