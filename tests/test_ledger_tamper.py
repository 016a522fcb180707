"""A hand-edited ledger is refused, never believed, by every charge and by the gate (audit items 4 and 8).

The audit's reproductions, as command lines, on SQLite and on a PostgreSQL server the test run
starts: a population's row deleted or renamed after most of its budget was spent, a release
deleted (with its log entry, too) before a release that composes badly with it, and rows of
*another* population tampered with before a charge. Each next charge or publication exits 2 with
one sentence that names what was done, and charges, registers or publishes nothing. Then the
same inside one open budget session, whose further charges only catch up
(:mod:`veil.ledger.verification`).
"""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from helpers import one_sentence_error, veil
from test_ledger import PEOPLE, release_at
from veil.dp import Budget
from veil.ledger import Ledger, LedgerTamperedError

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.service)]


def refused(result, *words) -> str:
    """Exit 2, one sentence naming the tampering, no traceback."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    for word in words:
        assert word in lines[0], lines[0]
    assert "restore" in lines[0], lines[0]
    return lines[0]


class Backend:
    """A ledger location and a way to edit it by hand, as someone with the database but not the key would."""

    def __init__(self, kind: str, location: str):
        self.kind, self.location = kind, location

    def sql(self, *statements: str) -> None:
        if self.kind == "sqlite":
            with sqlite3.connect(self.location) as conn:  # foreign keys off, as the sqlite3 shell has them
                for statement in statements:
                    conn.execute(statement)
            return
        import psycopg
        from sqlalchemy.engine import make_url

        url = make_url(self.location)
        with psycopg.connect(host=url.query["host"], user=url.username, dbname=url.database,
                             autocommit=True) as conn:
            conn.execute("SET session_replication_role = replica")  # no foreign keys, as a hand edit may do
            for statement in statements:
                conn.execute(statement)

    def entries(self) -> int:
        return len(json.loads(veil("ledger", "history", "--ledger", self.location, "--json").stdout)["entries"])


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "ledger.db"))
    return Backend("postgresql", request.getfixturevalue("postgres_url"))


@pytest.fixture
def folder(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    for name, levels in (("a", {"age": 1, "zip": 1}), ("b", {"age": 2, "zip": 0})):
        (tmp_path / name).mkdir()
        release_at(levels).write(tmp_path / name / "release.csv", tmp_path / name / "manifest.json")
    policy = tmp_path / "policy.yaml"
    policy.write_text("policy:\n  populations:\n    people: {}\n    adult:\n      budget: {epsilon: 1.0}\n"
                      "    survey:\n      budget: {epsilon: 1.0}\n")
    return tmp_path, data, policy


# ------------------------------------------------------------------------------ item 4: budgets reset

@pytest.mark.parametrize("edit, words", [
    ("DELETE FROM populations WHERE id = 1", ("lost population 1 ('people.csv')", "deleted by hand")),
    ("UPDATE populations SET name = 'x.csv' WHERE id = 1", ("population 1 (recorded as 'people.csv')", "(name)",
                                                             "edited by hand")),
])
def test_deleting_or_renaming_a_budget_files_population_does_not_reset_its_budget(folder, edit, words):
    tmp, data, _ = folder
    budget = tmp / "b.db"
    assert veil("dp", "count", data, "--epsilon", "0.9", "--budget-file", budget, "--budget", "1").exit_code == 0
    with sqlite3.connect(budget) as conn:
        conn.execute(edit)
        populations = conn.execute("SELECT * FROM populations").fetchall()
    again = veil("dp", "count", data, "--epsilon", "0.9", "--budget-file", budget, "--budget", "1")
    message = refused(again, *words)
    assert "belongs to" not in message and "another table" not in message
    with sqlite3.connect(budget) as conn:
        assert conn.execute("SELECT count(*) FROM charges").fetchone() == (1,)  # nothing charged
        assert conn.execute("SELECT * FROM populations").fetchall() == populations  # nothing made


@pytest.mark.parametrize("edit, words", [
    ("DELETE FROM populations WHERE name = 'adult'", ("lost population", "'adult'", "deleted by hand")),
    ("UPDATE populations SET name = 'renamed' WHERE name = 'adult'",
     ("recorded as 'adult'", "(name)", "edited by hand")),
])
def test_a_population_deleted_or_renamed_in_a_shared_ledger_keeps_its_spend(backend, folder, edit, words):
    tmp, data, policy = folder
    assert veil("ledger", "init", "--ledger", backend.location, "--policy", policy).exit_code == 0
    spent = veil("dp", "count", data, "--epsilon", "0.9", "--ledger", backend.location, "--population", "adult")
    assert spent.exit_code == 0, spent.output
    before = backend.entries()
    backend.sql(edit)
    again = veil("dp", "count", data, "--epsilon", "0.9", "--ledger", backend.location, "--population", "adult",
                 "--budget", "1")
    refused(again, *words)
    assert backend.entries() == before  # nothing made, registered or charged


# ------------------------------------------------------------------------------ item 8: the gate

def test_the_gate_refuses_to_decide_on_a_ledger_whose_release_was_deleted(backend, folder):
    tmp, data, policy = folder
    assert veil("ledger", "init", "--ledger", backend.location, "--policy", policy).exit_code == 0
    first = veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data,
                 "--ledger", backend.location)
    assert first.exit_code == 0, first.output
    # On the intact ledger, b composes badly with a and is refused.
    assert veil("publish", tmp / "b" / "manifest.json", "--population", "people", "--data", data,
                "--ledger", backend.location, "--json").exit_code == 1
    backend.sql("DELETE FROM releases WHERE id = 1")
    before = backend.entries()
    again = veil("publish", tmp / "b" / "manifest.json", "--population", "people", "--data", data,
                 "--ledger", backend.location)
    refused(again, "lost release 1", "deleted by hand")
    assert backend.entries() == before


def test_the_gate_refuses_a_ledger_cut_back_before_a_release(backend, folder):
    """The release and the log entry that recorded it both deleted (it was the newest entry)."""
    tmp, data, policy = folder
    assert veil("ledger", "init", "--ledger", backend.location, "--policy", policy).exit_code == 0
    assert veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data,
                "--ledger", backend.location).exit_code == 0
    newest = json.loads(veil("ledger", "history", "--ledger", backend.location, "--json").stdout)["entries"][-1]
    assert newest["action"] == "publish"
    backend.sql("DELETE FROM releases WHERE id = 1", f"DELETE FROM log WHERE seq = {newest['seq']}")
    again = veil("publish", tmp / "b" / "manifest.json", "--population", "people", "--data", data,
                 "--ledger", backend.location)
    refused(again, f"log ends at entry {newest['seq'] - 1} but its anchor names entry {newest['seq']}",
            "deleted by hand")


def test_a_release_deleted_on_a_copy_before_the_refusal_is_found(folder):
    """The audit's exact sequence on SQLite: a copy taken before the refusal, edited, then published to."""
    tmp, data, policy = folder
    ledger = tmp / "ledger.db"
    assert veil("ledger", "init", "--ledger", ledger, "--policy", policy).exit_code == 0
    assert veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data,
                "--ledger", ledger).exit_code == 0
    Ledger(ledger).close()
    copy = tmp / "copy.db"
    shutil.copy(ledger, copy)
    assert veil("publish", tmp / "b" / "manifest.json", "--population", "people", "--data", data,
                "--ledger", ledger).exit_code == 1
    with sqlite3.connect(copy) as conn:
        conn.execute("DELETE FROM releases WHERE id = 1")
    refused(veil("publish", tmp / "b" / "manifest.json", "--population", "people", "--data", data, "--ledger", copy),
            "lost release 1")


@pytest.mark.parametrize("edit, words", [
    ("DELETE FROM releases WHERE id = 1", ("lost release 1",)),
    ("UPDATE populations SET name = 'other' WHERE name = 'people'", ("recorded as 'people'",)),
    ("DELETE FROM datasets WHERE id = 1", ("lost dataset 1",)),
])
def test_a_charge_is_refused_when_another_population_was_tampered_with(backend, folder, edit, words):
    tmp, data, policy = folder
    assert veil("ledger", "init", "--ledger", backend.location, "--policy", policy).exit_code == 0
    assert veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data,
                "--ledger", backend.location).exit_code == 0
    backend.sql(edit)
    refused(veil("dp", "count", data, "--epsilon", "0.1", "--ledger", backend.location, "--population", "survey"),
            *words)


# ------------------------------------------------------------------------------ inside one open session

@pytest.fixture
def session(tmp_path):
    ledger, _ = Ledger.init(tmp_path / "ledger.db")
    ledger.add_population("people")
    ledger.add_population("survey", budget=Budget(10))
    ledger.add_population("census", budget=Budget(10))
    ledger.charge("census", 0.5, label="census count")
    return ledger


SESSION_EDITS = {
    # with nobody else writing, any change to the file is found (the database changed, no entry was
    # added: the whole ledger is verified again, naming the edit)
    "another population's charge deleted": ("DELETE FROM charges WHERE label = 'census count'", "lost charge 1"),
    "a row added": ("INSERT INTO populations (name, relation, log_seq) VALUES ('forged', 'add-remove', 99)",
                    "holds population 4 ('forged')"),
    "another population renamed": ("UPDATE populations SET name = 'x' WHERE name = 'census'", "recorded as 'census'"),
    "this population's charge lowered": ("UPDATE charges SET epsilon = '0.001' WHERE label = 'q0'",
                                         "(epsilon): it was edited by hand"),
}


@pytest.mark.parametrize("edit", SESSION_EDITS)
def test_an_open_session_finds_a_hand_edit_at_its_next_charge(session, edit):
    statement, words = SESSION_EDITS[edit]
    with session.open_budget("survey") as accountant:
        accountant.charge(0.1, label="q0")
        with sqlite3.connect(session.store.path) as conn:
            conn.execute(statement)
        message = one_sentence_error(LedgerTamperedError, lambda: accountant.charge(0.1, label="q1"), words)
        assert "restore" in message
        assert len(accountant.charges) == 1


def test_an_open_session_catches_up_with_other_writers_and_counts_their_rows(session, tmp_path):
    other = Ledger(tmp_path / "ledger.db", by="other")
    with session.open_budget("survey") as accountant:
        accountant.charge(0.1, label="mine")
        other.charge("survey", 0.2, label="theirs")          # a genuine writer meanwhile
        accountant.charge(0.1, label="mine again")           # caught up: its charge is taken into account
        assert [c.label for c in accountant.charges] == ["mine", "theirs", "mine again"]
        other.charge("census", 0.2, label="census again")
        with sqlite3.connect(session.store.path) as conn:    # and a deletion mixed with genuine writes
            conn.execute("DELETE FROM releases")
            conn.execute("DELETE FROM charges WHERE label = 'census count'")
        one_sentence_error(LedgerTamperedError, lambda: accountant.charge(0.1, label="q"), "charge rows",
                           "deleted by hand")


def test_an_older_copy_put_back_under_an_open_session_is_found(session, tmp_path):
    path = session.store.path
    with session.open_budget("survey") as accountant:
        accountant.charge(0.1, label="q0")
        session.close()
        shutil.copy(path, tmp_path / "old.db")
        accountant.charge(0.1, label="q1")
        session.close()
        shutil.copy(tmp_path / "old.db", path)
        for suffix in ("-wal", "-shm"):
            (tmp_path / f"ledger.db{suffix}").unlink(missing_ok=True)
        one_sentence_error(LedgerTamperedError, lambda: accountant.charge(0.1, label="q2"), "went back",
                           "older copy")


# ------------------------------------------------------------------------------ a ledger of schema 1

def version_1_ledger(path, table) -> str:
    """A ledger as veil wrote it with schema 1: a population bound to a table, the table registered
    with its number of rows, a charge — every row recorded by its chained, anchored entry."""
    import uuid

    from sqlalchemy import MetaData, create_engine, insert

    from veil.dp.fingerprint import dataset_id
    from veil.ledger import chain, keys
    from veil.ledger.schema import _create_version_1, _tables

    old = _tables(MetaData(), 1)
    engine = create_engine(f"sqlite:///{path}")
    key, ledger_id, fingerprint = keys.load_key(create=True), str(uuid.uuid4()), dataset_id(table)
    at = "2026-01-01T00:00:00.000+00:00"
    rows = {"populations": {"id": 1, "name": "survey", "key_column": None, "fingerprint": None,
                            "accountant": json.dumps({"budget": {"delta": "0", "epsilon": "1"},
                                                      "composition": "sequential", "options": {}}, sort_keys=True),
                            "relation": "add-remove", "log_seq": 2},
            "datasets": {"id": 1, "population_id": 1, "fingerprint": fingerprint, "rows": 4,
                         "columns": json.dumps(list(PEOPLE.columns)), "log_seq": 3},
            "charges": {"seq": 1, "population_id": 1, "label": "count", "kind": "query", "epsilon": "0.25",
                        "delta": "0", "grp": None, "part": None, "step": None, "composition": "sequential",
                        "relation": "add-remove", "by": "me", "at": at, "log_seq": 4}}
    with engine.begin() as conn:
        _create_version_1(conn)
        conn.execute(insert(old["schema_version"]).values(version=1, applied_at=at, description="v1"))
        conn.execute(insert(old["meta"]).values(name="ledger_id", value=ledger_id))
        head = chain.append(conn, chain.Head(0, chain.GENESIS), key, ledger_id, at=at, by="me", action="init",
                            population=None, payload={"ledger_id": ledger_id, "schema_version": 1}, first=True)
        for (table_name, row), action in zip(rows.items(), ("population", "dataset", "charge")):
            conn.execute(insert(old[table_name]).values(**row))
            head = chain.append(conn, head, key, ledger_id, at=at, by="me", action=action, population="survey",
                                payload={"table": table_name, "row": row})
    engine.dispose()
    return fingerprint


def test_a_ledger_of_schema_1_is_migrated_and_forgets_the_tables_size(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    ledger = tmp_path / "v1.db"
    version_1_ledger(ledger, data)
    stale = veil("dp", "count", data, "--epsilon", "0.1", "--ledger", ledger, "--population", "survey")
    assert stale.exit_code == 2 and "migrate it with veil ledger init" in stale.stderr
    migrated = veil("ledger", "init", "--ledger", ledger)
    assert migrated.exit_code == 0 and "migrated (schema 2" in migrated.stdout, migrated.output
    with sqlite3.connect(ledger) as conn:
        assert "rows" not in [c[1] for c in conn.execute("PRAGMA table_info(datasets)")]
    assert json.loads(veil("ledger", "verify", "--ledger", ledger, "--json").stdout)["ok"]
    # the table it registered (by the fingerprint schema 1 stored) is still the population's
    charged = veil("dp", "count", data, "--epsilon", "0.25", "--ledger", ledger, "--population", "survey", "--json")
    assert charged.exit_code == 0 and json.loads(charged.stdout)["budget"]["spent"]["epsilon"] == 0.5
    other = tmp_path / "other.csv"
    PEOPLE.head(2).to_csv(other, index=False)
    assert veil("dp", "count", other, "--epsilon", "0.1", "--ledger", ledger, "--population", "survey").exit_code == 2
