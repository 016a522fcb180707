"""The publishing gate runs the unsorted matching and join attacks with the policy's thresholds."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import veil
from veil import Dataset, Hierarchy
from veil.anonymize import Release
from veil.errors import ParameterError
from veil.ledger import Ledger
from veil.ledger.checks import JoinCheck, MatchingCheck, ReleaseView
from veil.ledger.policy import Policy
from veil.models import DistinctLDiversity, KAnonymity

PEOPLE = pd.DataFrame({"age": ["21", "22", "31", "32"], "zip": ["1301", "1302", "1301", "1302"],
                       "disease": ["flu", "cold", "cancer", "flu"]})
AGE = Hierarchy([["21", "2*", "*"], ["22", "2*", "*"], ["31", "3*", "*"], ["32", "3*", "*"]], name="age")
ZIP = Hierarchy([["1301", "130*", "*"], ["1302", "130*", "*"]], name="zip")


def write_release(folder, levels: dict, **options):
    ds = Dataset(PEOPLE, quasi_identifiers=["age", "zip"], sensitive=["disease"], hierarchies={"age": AGE, "zip": ZIP})
    classes = veil.EquivalenceClasses.from_dataset(ds, levels)
    release = Release(ds, classes, [False] * classes.n_classes, algorithm="fulldomain",
                      models=[KAnonymity(2), DistinctLDiversity(2, sensitive="disease")], suppression_limit=0.0,
                      **options)
    folder.mkdir()
    release.write(folder / "release.csv", folder / "manifest.json")
    return folder / "manifest.json", release


def test_the_gate_refuses_two_releases_in_input_order(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    # A: decades and 130* ({p1,p2}, {p3,p4}); B: age hidden, zip kept ({p1,p3}, {p2,p4}). Both are
    # 2-anonymous, but joined by position every row's pair of classes is its own.
    a, first_release = write_release(tmp_path / "a", {"age": 1, "zip": 1}, shuffle=False)
    b, _ = write_release(tmp_path / "b", {"age": 2, "zip": 0}, shuffle=False)
    assert first_release.manifest["output"]["order"] == "input order"
    ledger, _ = Ledger.init(tmp_path / "ledger.db", by="steward")
    ledger.add_population("people")
    policy = Policy(checks=(MatchingCheck(),))
    assert ledger.publish(a, population="people", data=data, policy=policy).published
    refused = ledger.publish(b, population="people", data=data, policy=policy)
    assert not refused.published
    assert "joined by row position with release 1" in refused.reason
    assert "(rows in input order) leaves 4 of 4 rows (100.00%) in a class smaller than 2" in refused.reason
    assert refused.findings[0].figures["unique"] == 4


def test_releases_shuffled_by_default_are_not_matched(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    a, first_release = write_release(tmp_path / "a", {"age": 1, "zip": 1})
    b, _ = write_release(tmp_path / "b", {"age": 2, "zip": 0})
    assert first_release.manifest["output"]["order"] == "secure shuffle"
    ledger, _ = Ledger.init(tmp_path / "ledger.db", by="steward")
    ledger.add_population("people")
    policy = Policy(checks=(MatchingCheck(),))
    assert ledger.publish(a, population="people", data=data, policy=policy).published
    decision = ledger.publish(b, population="people", data=data, policy=policy)
    assert decision.published and decision.findings == []



def test_the_default_policy_flags_a_release_that_keeps_the_order_of_an_earlier_one(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    a, first_release = write_release(tmp_path / "a", {"age": 1, "zip": 1}, shuffle=False)
    assert first_release.manifest["warnings"][0].startswith("the rows keep the input's order")
    shuffled, _ = write_release(tmp_path / "shuffled", {"age": 2, "zip": 0})
    kept, _ = write_release(tmp_path / "kept", {"age": 2, "zip": 0}, shuffle=False)
    ledger, _ = Ledger.init(tmp_path / "ledger.db", by="steward")
    ledger.add_population("people")
    first = ledger.publish(a, population="people", data=data)
    # the first release in the input order passes (nothing to join it with yet) but the decision says the risk
    assert first.published and first.warnings == first_release.manifest["warnings"]
    assert first.to_dict()["warnings"] == first.warnings
    # A shuffled release cannot be joined by position with the earlier one: the check does not apply.
    assert all(f.check != "matching" for f in ledger.publish(shuffled, population="people", data=data).findings)
    refused = ledger.publish(kept, population="people", data=data)
    matching = [f for f in refused.findings if f.check == "matching"]
    assert not refused.published and len(matching) == 1 and not matching[0].passed
    assert matching[0].figures["new_release_order"] == "input order"
    assert any("(rows in input order) leaves 4 of 4 rows" in reason for reason in refused.reasons)

def view(name: str, frame: pd.DataFrame, qis: list[str], sensitive: list[str], smallest: int) -> ReleaseView:
    manifest = {"roles": {"quasi_identifiers": qis, "sensitive": sensitive}, "classes": {"smallest": smallest},
                "output": {"shuffled": True}}
    return ReleaseView(name, "generalization", pa.Table.from_pandas(frame.astype(str), preserve_index=False), manifest)


def test_the_join_check_on_sequential_projections():
    people = pd.DataFrame({"sex": ["M", "M", "F", "F", "M", "F"], "job": ["eng", "eng", "eng", "eng", "law", "law"],
                           "zip": ["A", "B", "A", "B", "C", "C"],
                           "disease": ["flu", "hiv", "flu", "cold", "hiv", "flu"]})
    earlier = view("release 1", people[["sex", "job", "disease"]], ["sex"], ["disease"], 3)
    new = view("the new release", people[["job", "zip"]], ["zip"], [], 2)
    check = JoinCheck()
    assert check.applies(new, earlier)
    finding = check.run(new, earlier, pa.table({"sex": ["M"]}))
    # Joined on job, zip C means a lawyer, and there is one lawyer of each sex.
    assert not finding.passed and finding.figures["exposed"] == 2 and finding.figures["k"] == 2
    assert "joined with release 1 on job, the new release leaves 2 of 6 earlier records" in finding.reason
    assert JoinCheck(max_share=0.5).run(new, earlier, pa.table({"sex": ["M"]})).passed
    assert not check.applies(earlier, earlier)


def test_policy_options_of_the_new_checks():
    with pytest.raises(ParameterError, match="the join check's k must be a whole number"):
        JoinCheck(k=0)
    with pytest.raises(ParameterError, match="the matching check's max_share"):
        MatchingCheck(max_share=2)
    assert [c.name for c in Policy().checks] == ["intersection", "matching", "join", "correspondence"]
