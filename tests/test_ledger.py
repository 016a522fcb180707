"""The release ledger in one process: creating it, populations, budgets, the log's tamper evidence,
the publishing gate and its decisions, policies, and budget files of earlier veil versions.

The gate's composition check is tested on a hand-built table whose intersection attack is known
in advance: four people, two 2-anonymous, 2-diverse releases that each protect everyone, and
together pin two of the four (see ``two_releases``).
"""

from __future__ import annotations

import json
import sqlite3
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import veil
from veil import Dataset, Hierarchy
from veil.anonymize import Release
from veil.dp import Accountant, Budget, BudgetExceededError, BudgetFileError, NoiseSource, dp_count
from veil.ledger.answers import write_answer
from veil.errors import ParameterError
from veil.ledger import Ledger, LedgerError, LedgerTamperedError, LegacyBudgetFileError
from veil.ledger.checks import IntersectionCheck
from veil.ledger.kinds import kind_of
from veil.ledger.policy import Policy, PopulationPolicy
from veil.models import DistinctLDiversity, KAnonymity

from helpers import one_sentence_error

PEOPLE = pd.DataFrame({"age": ["21", "22", "31", "32"], "zip": ["1301", "1302", "1301", "1302"],
                       "disease": ["flu", "cold", "cancer", "flu"]})
AGE = Hierarchy([["21", "2*", "*"], ["22", "2*", "*"], ["31", "3*", "*"], ["32", "3*", "*"]], name="age")
ZIP = Hierarchy([["1301", "130*", "*"], ["1302", "130*", "*"]], name="zip")


def release_at(levels: dict, **options) -> Release:
    ds = Dataset(PEOPLE, quasi_identifiers=["age", "zip"], sensitive=["disease"],
                 hierarchies={"age": AGE, "zip": ZIP})
    classes = veil.EquivalenceClasses.from_dataset(ds, levels)
    return Release(ds, classes, [False] * classes.n_classes, algorithm="fulldomain",
                   models=[KAnonymity(2), DistinctLDiversity(2, sensitive="disease")], suppression_limit=0.0,
                   **options)


@pytest.fixture
def two_releases(tmp_path):
    """A: age in decades, zip to 130* ({p1,p2}: flu/cold, {p3,p4}: cancer/flu). B: age hidden, zip
    kept ({p1,p3}: flu/cancer, {p2,p4}: cold/flu). Intersected, p1 and p4 have flu left: 2 of 4."""
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    paths = []
    for name, levels in (("a", {"age": 1, "zip": 1}), ("b", {"age": 2, "zip": 0})):
        folder = tmp_path / name
        folder.mkdir()
        release_at(levels).write(folder / "release.csv", folder / "manifest.json")
        paths.append(folder / "manifest.json")
    return data, paths[0], paths[1]


@pytest.fixture
def ledger(tmp_path) -> Ledger:
    made, applied = Ledger.init(tmp_path / "ledger.db", by="steward")
    assert applied == [1, 2]
    return made


def sql(ledger: Ledger, statement: str, *params) -> list:
    """Edit the SQLite file by hand, as someone with the file but not the key would."""
    with sqlite3.connect(ledger.store.path) as conn:
        rows = conn.execute(statement, params).fetchall()
    ledger.close()
    return rows


# --------------------------------------------------------------------------------------------
# Creating a ledger, and places that hold none

def test_init_creates_a_ledger_once_and_says_who_made_it(ledger, tmp_path):
    again, applied = Ledger.init(tmp_path / "ledger.db")
    assert applied == []
    status = again.status()
    assert status["schema_version"] == 2 and status["head"]["seq"] == 1 and status["populations"] == []
    assert again.history()[0]["action"] == "init" and again.history()[0]["by"] == "steward"
    assert again.ledger_id == ledger.ledger_id
    assert ledger.verify().ok


def test_places_that_hold_no_ledger_get_one_sentence(tmp_path):
    one_sentence_error(LedgerError, lambda: Ledger(tmp_path / "missing.db").status(), "does not exist",
                       "veil ledger init")
    one_sentence_error(LedgerError, lambda: Ledger.init(tmp_path / "no" / "l.db"), "folder", "does not exist")
    one_sentence_error(LedgerError, lambda: Ledger(tmp_path).status(), "is a folder")
    (tmp_path / "notes.txt").write_text("hello\n")
    one_sentence_error(LedgerError, lambda: Ledger(tmp_path / "notes.txt").status(), "not a veil ledger")
    (tmp_path / "empty.db").write_bytes(b"")
    one_sentence_error(LedgerError, lambda: Ledger(tmp_path / "empty.db").status(), "empty file")
    (tmp_path / "budget.json").write_text('{"format": "veil-dp-budget"}')
    one_sentence_error(LegacyBudgetFileError, lambda: Ledger(tmp_path / "budget.json").status(),
                       "JSON budget file", "veil ledger import")
    with sqlite3.connect(tmp_path / "other.db") as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    one_sentence_error(LedgerError, lambda: Ledger(tmp_path / "other.db").status(), "not a veil ledger")
    one_sentence_error(LedgerError, lambda: Ledger.init(tmp_path / "other.db"), "not a veil ledger")
    one_sentence_error(LedgerError, lambda: Ledger("mysql://db/x"), "SQLite file or a PostgreSQL database")
    one_sentence_error(LedgerError, lambda: Ledger(None), "VEIL_LEDGER")
    assert (tmp_path / "budget.json").read_text() == '{"format": "veil-dp-budget"}'  # nothing given is changed


CORRUPTIONS = {"cut in half": lambda raw: raw[:len(raw) // 2],
               "header overwritten": lambda raw: raw[:100] + b"\xff" * 8 + raw[108:],
               "pages zeroed": lambda raw: raw[:4096] + bytes(len(raw) - 4096)}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_a_corrupt_file_is_one_sentence_and_never_a_fresh_budget(ledger, corruption):
    with ledger.open_budget("survey", create=Budget(1)) as acc:
        acc.charge(0.4, label="count")
    ledger.close()
    ledger.store.path.write_bytes(CORRUPTIONS[corruption](ledger.store.path.read_bytes()))
    before = ledger.store.path.read_bytes()
    for call in (ledger.status, lambda: ledger.budget("survey"), ledger.verify):
        one_sentence_error(LedgerError, call, "is corrupt", "restore it from a backup")
    assert ledger.store.path.read_bytes() == before


# --------------------------------------------------------------------------------------------
# Populations and budgets

def test_a_population_is_defined_once(ledger):
    pop = ledger.add_population("patients", key_column="id", budget=Budget(2, 1e-6))
    assert ledger.add_population("patients", key_column="id", budget=Budget(2, 1e-6)) == pop
    assert ledger.add_population("patients", key_column="id") == pop  # no budget given: the one kept stands
    one_sentence_error(LedgerError, lambda: ledger.add_population("patients", key_column="id", budget=Budget(3)),
                       "already has the budget", "never changes")
    one_sentence_error(LedgerError, lambda: ledger.add_population("patients", key_column="pid"), "key column")
    one_sentence_error(ParameterError, lambda: ledger.add_population("x", key_column="id", fingerprint="f"),
                       "not both")
    one_sentence_error(ParameterError, lambda: ledger.add_population(" x"), "surrounding spaces")
    one_sentence_error(ParameterError, lambda: ledger.add_population("x", relation="swap"), "add-remove")
    one_sentence_error(LedgerError, lambda: ledger.population("nobody"), "no population 'nobody'", "'patients'")


def test_charges_are_checked_recorded_and_refused_whole(ledger):
    with ledger.open_budget("survey", create=Budget(1)) as acc:
        acc.charge(0.4, label="count")
        acc.charge(0.4, label="sum(age)")
        msg = one_sentence_error(BudgetExceededError, lambda: acc.charge(0.4, label="mean(age)"), "asks for ε = 0.4")
        assert "0.2" in msg
    one_sentence_error(ParameterError, lambda: acc.charge(0.1, label="late"), "with block has ended")
    snapshot = ledger.budget("survey")
    assert snapshot.spent().epsilon == Fraction(4, 5) and len(snapshot.charges) == 2
    one_sentence_error(ParameterError, lambda: snapshot.charge(0.1, label="x"), "snapshot")
    assert ledger.status()["populations"][0]["budget"]["left"]["epsilon"] == pytest.approx(0.2)
    one_sentence_error(LedgerError, lambda: ledger.open_budget("nobody").__enter__(), "give the budget")
    ledger.add_population("no budget")
    one_sentence_error(LedgerError, lambda: ledger.open_budget("no budget").__enter__(), "has no privacy budget")


class CountingNoise(NoiseSource):
    """A seeded source that counts its draws, to show that a charge not committed draws nothing."""

    def __init__(self):
        super().__init__(np.random.default_rng(0), _secure=False)
        self.draws = 0

    def discrete_laplace(self, values, scale):
        self.draws += 1
        return super().discrete_laplace(values, scale)


def test_a_charge_that_cannot_be_committed_is_not_made_and_draws_no_noise(ledger, monkeypatch):
    import veil.ledger.chain as chain

    def full_disk(*args, **kwargs):
        raise LedgerError("ledger 'l' failed (database or disk is full).")

    noise = CountingNoise()
    with ledger.open_budget("survey", create=Budget(1)) as acc:
        with monkeypatch.context() as patched:
            patched.setattr(chain, "append", full_disk)
            one_sentence_error(LedgerError, lambda: dp_count(PEOPLE, 0.3, accountant=acc, noise=noise),
                               "disk is full")
        assert noise.draws == 0 and acc.charges == ()
        dp_count(PEOPLE, 0.3, accountant=acc, noise=noise)
    assert noise.draws == 1 and len(ledger.budget("survey").charges) == 1


def test_a_writer_that_holds_the_lock_makes_others_wait_then_give_up_in_one_sentence(ledger, tmp_path):
    ledger.add_population("survey", budget=Budget(1))
    holder = sqlite3.connect(ledger.store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        waiting = Ledger(ledger.store.path, timeout=0.3)
        one_sentence_error(LedgerError, lambda: waiting.charge("survey", 0.1, label="count"), "stayed locked",
                           "0.3 s")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert waiting.charge("survey", 0.1, label="count").epsilon == Fraction(1, 10)


def test_publishers_holding_stale_accountants_cannot_overspend(tmp_path, ledger):
    first = Ledger(tmp_path / "ledger.db", by="alice")
    second = Ledger(tmp_path / "ledger.db", by="bob")
    with first.open_budget("survey", create=Budget(1)) as a, second.open_budget("survey", create=Budget(1)) as b:
        a.charge(0.6, label="count")                      # b was loaded before and knows nothing of it
        msg = one_sentence_error(BudgetExceededError, lambda: b.charge(0.6, label="count"), "other publishers",
                                 "asks for ε = 0.6")
        assert "only ε = 0.4" in msg
        assert b.spent().epsilon == 0                      # the refused charge was taken back
        b.charge(0.3, label="sum")                         # it fits, and b now knows a's charge
        assert b.spent().epsilon == Fraction(9, 10) and [c.label for c in b.charges] == ["count", "sum"]
        with a.parallel("by sex") as group:
            group.charge(0.05, partition="f")
        with b.parallel("by sex") as group:
            one_sentence_error(ParameterError, lambda: group.charge(0.05, partition="m"), "another process")
    assert [c["by"] for c in first.history() if c["action"] == "charge"] == ["alice", "bob", "alice"]
    assert ledger.verify().ok


def test_other_composition_rules_are_kept(ledger):
    advanced = Accountant(Budget(1, 1e-5), dataset_id="streams", composition="advanced")
    with ledger.open_budget("streams", create=advanced) as acc:
        for _ in range(20):
            acc.charge(0.05, label="q")
    assert ledger.budget("streams").composition == "advanced"
    assert ledger.population("streams").budget["options"]["advanced_delta_prime"] == "0.000005"


# --------------------------------------------------------------------------------------------
# Tamper evidence: every hand edit is found, and a budget is never silently given back

@pytest.fixture
def charged(ledger):
    with ledger.open_budget("survey", create=Budget(1)) as acc:
        for label in ("count", "sum", "mean"):
            acc.charge(0.3, label=label)
    ledger.close()
    return ledger


EDITS = {
    "a charge lowered": ("UPDATE charges SET epsilon = '0.01' WHERE seq = 2", "charge 2 differs", "edited by hand"),
    "a charge deleted": ("DELETE FROM charges WHERE seq = 3", "lost charge 3", "deleted by hand"),
    "a charge added": ("INSERT INTO charges (seq, population_id, label, kind, epsilon, delta, composition, relation, "
                       "by, at, log_seq) VALUES (9, 1, 'x', 'query', '0.01', '0', 'sequential', 'add-remove', 'me', "
                       "'now', 99)",
                       "holds charge 9", "added by hand"),
    "an entry edited": ("UPDATE log SET payload = replace(payload, '\"0.3\"', '\"0.1\"') WHERE seq = 4",
                        "entry 4", "was edited"),
    "an entry removed": ("DELETE FROM log WHERE seq = 3", "jumps from entry 2 to entry 4", "removed"),
    "the newest entries cut": ("DELETE FROM log WHERE seq >= 4", "log ends at entry 3 but its anchor names entry 5",
                               "the newest entries were deleted by hand"),
    "the newest entry replaced": ("UPDATE log SET hash = (SELECT hash FROM log WHERE seq = 4) WHERE seq = 5",
                                  "newest entry, entry 5, is not the one its anchor names", "replaced by hand"),
    "an entry added after the newest": ("INSERT INTO log SELECT 6, at, by, action, population, payload, hash, hash "
                                        "FROM log WHERE seq = 5", "goes on after entry 5", "added by hand"),
    "the anchor moved back": ("UPDATE anchor SET seq = 4, hash = (SELECT hash FROM log WHERE seq = 4)",
                              "anchor was changed by hand", "MAC"),
}


@pytest.mark.parametrize("edit", EDITS)
def test_hand_edits_are_detected_by_verify_and_before_any_charge(charged, edit):
    statement, *words = EDITS[edit]
    sql(charged, statement)
    report = charged.verify()
    assert not report.ok and all(word in " ".join(report.problems) for word in words), report.problems
    assert all("\n" not in p for p in report.problems)
    for call in (lambda: charged.open_budget("survey").__enter__(), lambda: charged.budget("survey")):
        one_sentence_error(LedgerTamperedError, call, "restore the ledger from a backup")


def test_another_key_is_told_from_an_edit(charged, tmp_path, monkeypatch):
    monkeypatch.setenv("VEIL_KEY_FILE", str(tmp_path / "other.key"))
    one_sentence_error(LedgerError, lambda: charged.open_budget("survey").__enter__(), "anchored with key",
                       "there is none", "VEIL_KEY_FILE")
    (tmp_path / "other.key").write_text("ab" * 32)
    one_sentence_error(LedgerError, charged.verify, "that one is")


# --------------------------------------------------------------------------------------------
# The publishing gate

def test_the_gate_refuses_a_release_that_composes_badly_naming_the_earlier_one(ledger, two_releases):
    data, a, b = two_releases
    ledger.add_population("people")
    first = ledger.publish(a, population="people", data=data)
    assert first.published and first.release_id == 1 and first.reasons == [] and first.findings == []
    assert [row["published"] for row in first.recheck] == [2, 2]
    second = ledger.publish(b, population="people", data=data, name="by zip")
    assert not second.published and second.release_id is None
    assert second.reason.startswith("intersected with release 1 ('a/release.csv', published ")
    assert "by steward), the new release perfectly breaches 2 of 4 people (50.00%) on 'disease'" in second.reason
    figures = second.findings[0].figures
    assert figures["exposed"] == 2 and figures["breached_by_pair"] == 2 and figures["breached_by_earlier_alone"] == 0
    status = ledger.status()["populations"][0]
    assert [r["name"] for r in status["releases"]] == ["a/release.csv"] and status["datasets"] == 1
    last = ledger.history()[-1]
    assert last["action"] == "refuse" and "by zip" in last["summary"] and "2 of 4 people" in last["summary"]
    assert ledger.verify().ok
    # A policy that tolerates half the population passes it, and records the figures.
    lenient = Policy(checks=(IntersectionCheck(confidence=1.0, max_share=0.5),))
    third = ledger.publish(b, population="people", data=data, policy=lenient)
    assert third.published and third.release_id == 2 and third.findings[0].passed
    assert "within the policy's limit of 50.00%" in third.findings[0].reason
    # The same files again: published already, nothing checked or recorded.
    again = ledger.publish(a, population="people", data=data)
    assert again.already and again.release_id == 1 and ledger.history()[-1]["seq"] == third.entry
    # A check at confidence 1/2 counts everybody the pair leaves two values or fewer.
    ledger.add_population("people again")
    assert ledger.publish(a, population="people again", data=data).published
    half = Policy(checks=(IntersectionCheck(confidence=0.5, max_share=1.0),))
    fourth = ledger.publish(b, population="people again", data=data, policy=half)
    assert [f.figures["breached_by_pair"] for f in fourth.findings] == [4]


def test_a_release_published_meanwhile_is_checked_too(ledger, two_releases, monkeypatch):
    import veil.ledger.gate as gate

    data, a, b = two_releases
    ledger.add_population("people")
    rival = Ledger(ledger.store.path, by="rival")
    original, calls = gate._earlier, []

    def earlier_then_rival(*args, **kwargs):
        found = original(*args, **kwargs)
        if args[0] is rival:
            return found
        calls.append(found[1])
        if len(calls) == 1:  # while our checks run, a rival publishes A
            assert rival.publish(a, population="people", data=data).published
        return found

    monkeypatch.setattr(gate, "_earlier", earlier_then_rival)
    decision = ledger.publish(b, population="people", data=data)
    assert calls == [0, 1]
    assert not decision.published and decision.reason.startswith("intersected with release 1")


def test_the_gate_rechecks_the_release_on_its_published_file(ledger, two_releases):
    data, a, _ = two_releases
    ledger.add_population("people")
    manifest = json.loads(a.read_text())
    manifest["models"][0]["level"] = 3
    a.write_text(json.dumps(manifest))
    decision = ledger.publish(a, population="people", data=data)
    assert not decision.published
    assert decision.reason == ("k-anonymity measures 2 on the published file but 3 in its manifest; the file is not "
                               "what was anonymized.")


def test_the_gate_needs_the_populations_own_table(ledger, two_releases, tmp_path):
    data, a, b = two_releases
    ledger.add_population("people")
    one_sentence_error(LedgerError, lambda: ledger.publish(a, population="people"), "needs the population's table")
    other = tmp_path / "other.csv"
    PEOPLE.assign(age=["41", "42", "51", "52"]).to_csv(other, index=False)
    assert ledger.publish(a, population="people", data=data).published
    one_sentence_error(LedgerError, lambda: ledger.publish(b, population="people", data=other),
                       "has no key column", "give the population a key column")
    one_sentence_error(LedgerError, lambda: ledger.publish(a, population="nobody", data=data), "no population")
    one_sentence_error(veil.DataError, lambda: ledger.publish(tmp_path / "nothing.json", population="people"),
                       "does not exist")


def test_a_keyed_population_holds_several_tables(ledger, tmp_path):
    ledger.add_population("patients", key_column="id")
    table = tmp_path / "t.csv"
    PEOPLE.assign(id=["a", "b", "c", "d"]).to_csv(table, index=False)
    first = ledger.register_dataset("patients", table)
    PEOPLE.assign(id=["a", "b", "c", "e"]).to_csv(table, index=False)
    assert ledger.register_dataset("patients", table)["id"] == first["id"] + 1
    PEOPLE.to_csv(table, index=False)
    one_sentence_error(LedgerError, lambda: ledger.register_dataset("patients", table), "lacks")
    PEOPLE.assign(id=["a", "a", "c", "d"]).to_csv(table, index=False)
    one_sentence_error(LedgerError, lambda: ledger.register_dataset("patients", table), "twice")


def write_dp(folder: Path, epsilon: float, *, charge=None, seed=None, unlike=()) -> Path:
    """A DP count's answer and manifest in ``folder``. Its noisy value differs from those of the
    answers beside the manifests ``unlike``: an answer whose bytes equal a published one's is that
    release again, which the gate answers with its earlier decision."""
    folder.mkdir()
    noise = NoiseSource.seeded(seed) if seed is not None else None
    taken = {json.loads((m.parent / "answer.json").read_text())["value"] for m in unlike}
    result = dp_count(PEOPLE, epsilon, noise=noise)
    while result.value in taken:
        result = dp_count(PEOPLE, epsilon, noise=noise)
    write_answer(result, folder / "answer.json", folder / "manifest.json", charge=charge)
    return folder / "manifest.json"


def test_dp_answers_are_charged_once_at_the_gate(ledger, tmp_path):
    policy = Policy(populations=(PopulationPolicy("survey", budget=Budget(1)),))
    q1 = write_dp(tmp_path / "q1", 0.6)
    first = ledger.publish(q1, population="survey", policy=policy)
    assert first.published and first.charge == 1 and first.kind == "dp-query"
    second = ledger.publish(write_dp(tmp_path / "q2", 0.6, unlike=[q1]), population="survey", policy=policy)
    assert not second.published and "asks for ε = 0.6 but only ε = 0.4 is left" in second.reason
    seeded = ledger.publish(write_dp(tmp_path / "q3", 0.1, seed=3), population="survey", policy=policy)
    assert not seeded.published and "not fit for release" in seeded.reason
    # An answer charged when it was drawn is published with that charge, once.
    with ledger.budget_session("survey") as session:
        dp_count(PEOPLE, 0.3, accountant=session.accountant)
        made = session.made[-1]
    paid = write_dp(tmp_path / "q4", 0.3, charge={"ledger_id": ledger.ledger_id, "population": "survey", "seq": made})
    third = ledger.publish(paid, population="survey", policy=policy)
    assert third.published and third.charge == made
    assert ledger.budget("survey").spent().epsilon == Fraction(9, 10)
    again = ledger.publish(paid, population="survey", policy=policy)   # the same files: nothing happens
    assert again.already and again.published and again.release_id == third.release_id and again.charge == made
    redrawn = write_dp(tmp_path / "q6", 0.3, charge={"ledger_id": ledger.ledger_id, "population": "survey",
                                                    "seq": made}, unlike=[q1, paid])  # another answer, that charge
    refused = ledger.publish(redrawn, population="survey", policy=policy)
    assert not refused.published
    assert f"charge {made} was already published, as release {third.release_id}" in refused.reason
    forged = write_dp(tmp_path / "q5", 0.3, charge={"ledger_id": "elsewhere", "population": "survey", "seq": 1},
                      unlike=[q1, paid])
    assert "another ledger" in ledger.publish(forged, population="survey", policy=policy).reason
    assert ledger.verify().ok


# --------------------------------------------------------------------------------------------
# Policies

def test_policies_refuse_what_cannot_be_enforced():
    one_sentence_error(ParameterError, lambda: IntersectionCheck(confidence=0), "(0, 1]")
    one_sentence_error(ParameterError, lambda: IntersectionCheck(max_share=1.5), "[0, 1]")
    one_sentence_error(ParameterError, lambda: PopulationPolicy("p", composition="magic"), "sequential")
    one_sentence_error(ParameterError, lambda: PopulationPolicy("p", budget=Budget(1), window=3), "window")
    one_sentence_error(ParameterError, lambda: PopulationPolicy("p", budget=Budget(1), composition="temporal"),
                       "discount")
    one_sentence_error(ParameterError, lambda: PopulationPolicy("p", budget=Budget(1), composition="advanced"),
                       "delta > 0")
    one_sentence_error(ParameterError, lambda: Policy(checks=(IntersectionCheck(), IntersectionCheck())), "twice")
    windowed = PopulationPolicy("p", budget=Budget(1), composition="window", window=5)
    assert windowed.template().w == 5 and Policy().digest == Policy().digest != Policy(recheck=False).digest


# --------------------------------------------------------------------------------------------
# Budget files of earlier versions

def sealed_budget_file(path: Path, accountant) -> None:
    """A budget file as veil 0.1 wrote it: the accountant's JSON, sealed with the veil key."""
    from veil.ledger import keys
    from veil.ledger.legacy import _canonical_mac

    doc = accountant.to_document()
    key = keys.load_key(create=True)
    doc["seal"] = {"algorithm": "HMAC-SHA256", "key_id": keys.key_id(key), "mac": _canonical_mac(doc, key)}
    path.write_text(json.dumps(doc, indent=2))


def test_a_sealed_budget_file_is_imported_once_with_its_charges(ledger, tmp_path):
    old = Accountant(Budget(1), dataset_id="veil-data-1:" + "ab" * 32)
    old.charge(0.25, label="count")
    old.charge(0.5, label="sum(age)")
    sealed_budget_file(tmp_path / "budget.json", old)
    before = (tmp_path / "budget.json").read_bytes()
    name = ledger.import_budget_file(tmp_path / "budget.json")
    # named after the file; bound to its table by the keyed binding, never by the dataset id itself
    assert name == "budget.json" and ledger.population(name).fingerprint.startswith("veil-table-1:")
    assert old.dataset_id not in json.dumps(ledger.status()) + json.dumps(ledger.history())
    imported = ledger.budget(name)
    assert [c.label for c in imported.charges] == ["count", "sum(age)"] and imported.spent().epsilon == Fraction(3, 4)
    assert [c.at for c in imported.charges] == [c.at for c in old.charges]
    one_sentence_error(LedgerError, lambda: ledger.import_budget_file(tmp_path / "budget.json"), "imported once")
    assert (tmp_path / "budget.json").read_bytes() == before
    edited = json.loads(before)
    edited["charges"].pop()
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    one_sentence_error(BudgetFileError, lambda: ledger.import_budget_file(tmp_path / "edited.json"), "changed after")
    assert ledger.verify().ok


# --------------------------------------------------------------------------------------------
# The same ledger on a PostgreSQL server

@pytest.mark.service
def test_a_postgresql_ledger_keeps_the_same_promises(postgres_url, two_releases):
    import psycopg
    from sqlalchemy.engine import make_url

    data, a, b = two_releases
    ledger, applied = Ledger.init(postgres_url, by="steward")
    assert applied == [1, 2] and Ledger.init(postgres_url)[1] == []
    with ledger.open_budget("survey", create=Budget(1)) as acc:
        acc.charge(0.6, label="count")
        one_sentence_error(BudgetExceededError, lambda: acc.charge(0.6, label="sum"), "asks for ε = 0.6")
    ledger.add_population("people")
    assert ledger.publish(a, population="people", data=data).published
    refused = ledger.publish(b, population="people", data=data)
    assert not refused.published and "2 of 4 people" in refused.reason
    assert ledger.verify().ok and [e["action"] for e in ledger.history()][-2:] == ["publish", "refuse"]
    assert "postgres" in ledger.location and "password" not in ledger.location
    url = make_url(postgres_url)
    with psycopg.connect(host=url.query["host"], user=url.username, dbname=url.database, autocommit=True) as conn:
        conn.execute("UPDATE charges SET epsilon = '0.1'")
    ledger.close()
    report = ledger.verify()
    assert not report.ok and "charge 1 differs" in report.problems[0]
    one_sentence_error(LedgerTamperedError, lambda: ledger.budget("survey"), "edited by hand")


@pytest.mark.parametrize("algorithm, words", [
    ("alphabeta", "a release of kind 'alpha-beta', which this gate cannot judge"),
    ("arx", "made by 'arx', which the gate does not know")])
def test_releases_the_gate_cannot_judge_are_named_and_refused(algorithm, words):
    with pytest.raises(LedgerError, match=words):
        kind_of({"algorithm": algorithm}, "manifest 'm.json'")
    assert kind_of({"algorithm": "mondrian"}, "manifest 'm.json'") == "local-recoding"


def test_charges_commit_as_configured_and_decisions_always_durably(ledger, tmp_path, monkeypatch):
    """synchronous=NORMAL for charges by default (a killed process loses nothing, a power loss may
    lose the newest); FULL when asked, and always for the writes that decide or define something."""
    def synchronous(store, durable):
        with store.write(durable=durable) as conn:
            return conn.exec_driver_sql("PRAGMA synchronous").scalar()

    assert (synchronous(ledger.store, False), synchronous(ledger.store, True), synchronous(ledger.store, False)) \
        == (1, 2, 1)
    monkeypatch.setenv("VEIL_LEDGER_SYNCHRONOUS", "full")
    assert synchronous(Ledger(tmp_path / "ledger.db").store, False) == 2
    assert synchronous(Ledger(f"sqlite:///{tmp_path / 'ledger.db'}?synchronous=normal").store, False) == 1
    monkeypatch.setenv("VEIL_LEDGER_SYNCHRONOUS", "sometimes")
    one_sentence_error(LedgerError, lambda: Ledger(tmp_path / "ledger.db"), "VEIL_LEDGER_SYNCHRONOUS",
                       "full or normal")
