"""Forward, cross and backward attacks on incremental versions (Fung, Wang, Fu and Pei, EDBT 2008)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil import Dataset
from veil.anonymize import FullDomain, Mondrian
from veil.attacks.correspondence import NotIncrementalError, correspondence_attack
from veil.attacks.published_release import PublishedRelease, ReleaseMismatchError
from veil.attacks.targets import TargetsError
from veil.data.hierarchy import Hierarchy
from veil.errors import ParameterError
from veil.models import KAnonymity

# T1 = {a: 22 flu, b: 35 flu, c: 45 cold, d: 55 cold}; ΔT = {e: 24 cold, f: 38 cold}.
# R1 publishes decades of twenty years, R2 (of T2) ten-year decades under 40: R1's flu node
# ([20-39], 2) has one comparable R2 node matching a (([20-29], flu), 1), so one of its two records
# is not a's (F leaves 1); the R2 flu node matching a has one comparable R1 node of 2 (C keeps 1)
# and the cold one none (C cracks it: a is in T1, and no cold R1 record is in her twenties), so C
# leaves 1. Backward: ([20-29], flu) must hold a buddy of the R1 flu node (2 records, and the
# other flu node of R2 takes 1), so e, new, is the one cold record: B leaves 1.
FIRST = pd.DataFrame({"age": ["[20-39]"] * 2 + ["[40-59]"] * 2, "disease": ["flu", "flu", "cold", "cold"]})
SECOND = pd.DataFrame({"age": ["[20-29]", "[20-29]", "[30-39]", "[30-39]", "[40-59]", "[40-59]"],
                       "disease": ["flu", "cold", "flu", "cold", "cold", "cold"]})
PEOPLE = pd.DataFrame({"name": list("abcdef"), "age": [22, 35, 45, 55, 24, 38],
                       "new": ["false"] * 4 + ["true"] * 2})


def attack(first, second, targets, **options):
    options.setdefault("quasi_identifiers", [c for c in ("age", "zip") if c in first.columns])
    options.setdefault("sensitive", ["disease"])
    return correspondence_attack(first, second, targets, id_column="name", **options)


def test_the_three_attacks_on_hand_computed_versions():
    result = attack(FIRST, SECOND, PEOPLE, k=2, new="new")
    assert result.before_first.tolist() == [2, 2, 2, 2, 2, 2]
    assert result.before_second.tolist() == [2, 2, 2, 2, 2, 2]
    assert result.forward.tolist()[:4] == [1, 1, 2, 2]
    assert result.cross.tolist()[:4] == [1, 1, 2, 2]
    assert result.backward.tolist()[4:] == [1, 1]
    assert result.targets[result.exposed_forward].tolist() == ["a", "b"]
    assert result.targets[result.exposed_cross].tolist() == ["a", "b"]
    assert result.targets[result.exposed_backward].tolist() == ["e", "f"]
    summary = result.summary()
    assert summary["exposed"] == 4 and summary["bcf_anonymous"] is False and summary["targets_new"] == 2
    assert not result.passed
    # Without k or manifests, k is the smaller of the two releases' smallest classes (2, not a node of 1).
    assert attack(FIRST, SECOND, PEOPLE, new="new").k == 2


# Two quasi-identifiers; R1 = {a: 22 1301 flu, b: 27 1302 cold}, one class. R2 adds e (21 1302
# flu), h (28 1301 flu), i (25 1301 flu) and g (26 1302 cold) in three classes of two:
# A = {a, e} ([20-24], 130*), B = {h, i} ([20-29], 1301), C = {b, g} ([25-29], 1302).
# a: R1's flu node (1 record) can take its buddy in A or B, both matching a, so F keeps it; the cold
#    node's buddy is in C, which does not match a: F = 1, exposed. C = 1 + 1 (A and B each hold at
#    most the one flu R1 record): 2, safe.
# b: only the cold node survives F (1); C's only R1 support is that node: C = 1. Both exposed.
# g: C must hold b's buddy (the only R2 node comparable to R1's cold node), so of its two records
#    one is old: B = 1, exposed. e, h, i: A and B need no old record (each can leave the flu
#    buddy to the other): B = 2.
FIRST_2 = pd.DataFrame({"age": ["[20-29]"] * 2, "zip": ["*"] * 2, "disease": ["flu", "cold"]})
SECOND_2 = pd.DataFrame({"age": ["[20-24]", "[20-24]", "[20-29]", "[20-29]", "[25-29]", "[25-29]"],
                         "zip": ["130*", "130*", "1301", "1301", "1302", "1302"],
                         "disease": ["flu", "flu", "flu", "flu", "cold", "cold"]})
PEOPLE_2 = pd.DataFrame({"name": list("abehig"), "age": [22, 27, 21, 28, 25, 26],
                         "zip": ["1301", "1302", "1302", "1301", "1301", "1302"], "new": [0, 0, 1, 1, 1, 1]})


def test_forward_and_cross_differ_and_backward_finds_the_forced_buddy():
    result = attack(FIRST_2, SECOND_2, PEOPLE_2, k=2, new="new")
    assert result.forward.tolist()[:2] == [1, 1] and result.cross.tolist()[:2] == [2, 1]
    assert result.backward.tolist()[2:] == [2, 2, 2, 1]
    assert result.targets[result.exposed_forward].tolist() == ["a", "b"]
    assert result.targets[result.exposed_cross].tolist() == ["b"]
    assert result.targets[result.exposed_backward].tolist() == ["g"]


def test_a_safe_next_version_is_bcf_anonymous():
    # R2 splits R1's one class into two, each with one old and one new record: nothing cracks.
    first = pd.DataFrame({"age": ["[20-39]"] * 2})
    second = pd.DataFrame({"age": ["[20-29]", "[20-29]", "[30-39]", "[30-39]"]})
    people = pd.DataFrame({"name": list("abef"), "age": [22, 35, 24, 38], "new": [0, 0, 1, 1]})
    result = attack(first, second, people, k=2, new="new", sensitive=[])
    assert result.forward.tolist()[:2] == [2, 2] and result.cross.tolist()[:2] == [2, 2]
    assert result.backward.tolist()[2:] == [2, 2]
    assert result.passed and result.summary()["exposed"] == 0


def test_targets_that_match_no_earlier_node_are_taken_as_new_and_k_comes_from_the_manifests():
    people = pd.DataFrame({"name": ["a", "z"], "age": [22, 70]})
    manifest = {"roles": {"quasi_identifiers": ["age"], "sensitive": ["disease"]},
                "models": [{"model": "k-anonymity", "threshold": 2.0}]}
    second = pd.concat([SECOND, pd.DataFrame({"age": ["[60-79]"] * 2, "disease": ["flu"] * 2})])
    result = correspondence_attack(PublishedRelease(FIRST, manifest=manifest), PublishedRelease(second,
                                   manifest={**manifest, "classes": {"smallest": 2}}), people, id_column="name")
    assert result.k == 2 and result.new.tolist() == [False, True]
    assert result.backward.tolist()[1] == 2 and not result.exposed_backward.any()


def test_bad_input():
    with pytest.raises(NotIncrementalError, match="holds at least the records of the earlier one"):
        attack(SECOND, FIRST, PEOPLE)
    elsewhere = SECOND.assign(disease="cancer")
    with pytest.raises(NotIncrementalError, match="not versions of one growing table"):
        attack(FIRST, elsewhere, PEOPLE)
    with pytest.raises(TargetsError, match="no column 'age'"):
        attack(FIRST, SECOND, PEOPLE.drop(columns="age"))
    with pytest.raises(ReleaseMismatchError, match="no column 'disease'"):
        attack(FIRST, SECOND.drop(columns="disease"), PEOPLE)
    roles = (lambda qis: {"roles": {"quasi_identifiers": qis, "sensitive": ["disease"]}})
    with pytest.raises(ReleaseMismatchError, match="publish the same ones"):
        correspondence_attack(PublishedRelease(FIRST, manifest=roles(["age"])),
                              PublishedRelease(SECOND.assign(zip="1"), manifest=roles(["age", "zip"])), PEOPLE)
    with pytest.raises(ParameterError, match="k must be a whole number"):
        attack(FIRST, SECOND, PEOPLE, k=0)
    with pytest.raises(ParameterError, match="group centroids"):
        correspondence_attack(PublishedRelease(FIRST, manifest={"algorithm": "mdav"}), SECOND, PEOPLE,
                              quasi_identifiers=["age"])
    with pytest.raises(TargetsError, match="write true or false"):
        attack(FIRST, SECOND, PEOPLE.assign(new="maybe"), new="new")


def _hierarchy(name: str, top: int) -> Hierarchy:
    rows = [[str(v), f"{v // 2 * 2}-{v // 2 * 2 + 1}", f"{v // 4 * 4}-{v // 4 * 4 + 3}", "*"] for v in range(top)]
    return Hierarchy(rows, name=name)


HIERARCHIES = {"a": _hierarchy("a", 8), "b": _hierarchy("b", 4)}


def _anonymize(frame: pd.DataFrame, mondrian: bool, k: int):
    if mondrian:
        return Mondrian([KAnonymity(k)]).fit_transform(Dataset(frame, quasi_identifiers=["a", "b"], sensitive=["s"]))
    ds = Dataset(frame.astype(str), quasi_identifiers=["a", "b"], sensitive=["s"], hierarchies=HIERARCHIES)
    return FullDomain([KAnonymity(k)], suppression_limit=0.0).fit_transform(ds)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 3), st.sampled_from("xyz")), min_size=4, max_size=30),
       st.integers(0, 100), st.booleans(), st.booleans())
def test_property_no_true_record_is_ever_excluded(rows, cut, mondrian_first, mondrian_second):
    t2 = pd.DataFrame(rows, columns=["a", "b", "s"])
    m = 2 + cut % (len(t2) - 1)
    t1 = t2.iloc[:m].reset_index(drop=True)
    first = PublishedRelease.from_release(_anonymize(t1, mondrian_first, 2))
    second = PublishedRelease.from_release(_anonymize(t2, mondrian_second, 2))
    new = np.arange(len(t2)) >= m
    result = correspondence_attack(first, second, t2[["a", "b"]], k=2, new=new)
    old = ~new
    # Every target is in the releases its timestamp says, so its own record is never cracked.
    assert (result.forward[old] >= 1).all() and (result.cross[old] >= 1).all()
    assert (result.backward[new] >= 1).all()
    # The attacks only remove candidates.
    assert (result.forward <= result.before_first).all()
    assert (result.cross <= result.before_second).all() and (result.backward <= result.before_second).all()


# ---------------------------------------------------------------------------------------------
# The publishing gate

AGE = Hierarchy([[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "20-39" if a < 40 else "40-59", "*"]
                 for a in (22, 24, 35, 38, 45, 47)], name="age")
GROWN = pd.DataFrame({"id": list("abcdef"), "age": ["22", "35", "45", "47", "24", "38"],
                      "disease": ["flu", "flu", "cold", "cold", "cold", "cold"]})


def _publish_version(tmp_path, ledger, rows: int, level: int, policy):
    import veil
    from veil.anonymize import Release

    folder = tmp_path / f"v{rows}-{level}"
    folder.mkdir()
    table = GROWN.iloc[:rows]
    ds = Dataset(table, quasi_identifiers=["age"], sensitive=["disease"], identifying=["id"], hierarchies={"age": AGE})
    classes = veil.EquivalenceClasses.from_dataset(ds, {"age": level})
    release = Release(ds, classes, [False] * classes.n_classes, algorithm="fulldomain", models=[KAnonymity(2)],
                      suppression_limit=0.0, shuffle=True)
    release.write(folder / "release.csv", folder / "manifest.json")
    table.to_csv(folder / "people.csv", index=False)
    return ledger.publish(folder / "manifest.json", population="people", data=folder / "people.csv", policy=policy)


def test_the_gate_refuses_a_version_that_opens_a_correspondence_attack(tmp_path):
    from veil.ledger import Ledger
    from veil.ledger.checks import CorrespondenceCheck
    from veil.ledger.policy import Policy

    assert "correspondence" in Policy().to_dict()["checks"]
    policy = Policy(checks=(CorrespondenceCheck(),))
    ledger, _ = Ledger.init(tmp_path / "ledger.db", by="steward")
    ledger.add_population("people", key_column="id")
    # T1 = a, b, c, d published by twenty years ([20-39]: a, b with flu); T2 adds e and f (cold)
    # and is published by decade: the flu record in a's decade is hers (forward and cross). The
    # first release names no age it holds (its value map is its curator's), and its band 20-39
    # holds 24 and 38 too: e and f may be old, so they are attacked as old ones (forward and
    # cross), which leaves them fewer than 2 candidates too.
    assert _publish_version(tmp_path, ledger, 4, 2, policy).published
    refused = _publish_version(tmp_path, ledger, 6, 1, policy)
    assert not refused.published
    assert "as a new version of release 1" in refused.reason
    assert "leaves 4 of 6 people (66.67%) fewer than 2 candidates (forward 4, cross 4, backward 0)" in refused.reason
    # The same grown table published by twenty years again keeps everyone among 2.
    decision = _publish_version(tmp_path, ledger, 6, 2, policy)
    assert decision.published
    assert decision.findings[0].check == "correspondence" and decision.findings[0].figures["exposed"] == 0


# ---------------------------------------------------------------------------------------------
# veil attack correspondence


def test_the_command(tmp_path):
    import json

    from typer.testing import CliRunner

    from veil.cli import app

    runner = CliRunner()
    paths = {}
    for name, frame in (("r1.csv", FIRST), ("r2.csv", SECOND), ("people.csv", PEOPLE)):
        paths[name] = str(tmp_path / name)
        frame.to_csv(paths[name], index=False)
    out = tmp_path / "per-target.csv"
    args = ["attack", "correspondence", paths["r1.csv"], paths["r2.csv"], "--targets", paths["people.csv"],
            "--qi", "age", "--sensitive", "disease", "--k", "2", "--new", "new", "--id", "name"]
    result = runner.invoke(app, args + ["--json", "--out", str(out)])
    assert result.exit_code == 1, result.output
    summary = json.loads(result.output)
    assert (summary["exposed_forward"], summary["exposed_cross"], summary["exposed_backward"]) == (2, 2, 2)
    per_target = pd.read_csv(out)
    assert per_target.loc[per_target["exposed_backward"], "target"].tolist() == ["e", "f"]
    table = runner.invoke(app, args)
    assert table.exit_code == 1 and "bcf_anonymous" in table.output
    bad = tmp_path / "bad.csv"
    refused = runner.invoke(app, ["attack", "correspondence", paths["r2.csv"], paths["r1.csv"], "--targets",
                                  paths["people.csv"], "--qi", "age", "--sensitive", "disease", "--out", str(bad)])
    assert refused.exit_code == 2 and "holds at least the records of the earlier one" in refused.output
    assert "Traceback" not in refused.output and not bad.exists()


def test_the_check_passes_a_release_that_is_not_a_version_of_the_earlier_one():
    import pyarrow as pa

    from veil.ledger.checks import CorrespondenceCheck, ReleaseView

    manifest = {"roles": {"quasi_identifiers": ["age"], "sensitive": ["disease"]}}
    view = (lambda name, frame: ReleaseView(name, "generalization", pa.Table.from_pandas(frame, preserve_index=False),
                                            manifest))
    earlier, other = view("release 1", FIRST), view("the new release", SECOND.assign(disease="cancer"))
    check = CorrespondenceCheck()
    assert check.applies(other, earlier) and not check.applies(earlier, other)
    finding = check.run(other, earlier, pa.table({"age": ["22", "45"]}))
    assert finding.passed and finding.figures == {"applies": False}
    assert finding.reason.startswith("the correspondence attacks expose no one, since the new release (the attack's "
                                     "release 2) is not a later version of release 1 (its release 1): ")
    assert "of release 1 have fewer comparable records in release 2 than" in finding.reason
    refused = check.run(view("the new release", SECOND), earlier, pa.table({"age": ["22", "45"]}))
    assert not refused.passed and refused.figures["exposed_forward"] == 1


# ---------------------------------------------------------------------------------------------
# The bit-set lookup join against its definition


def _all_columns_by_definition(tables, left, right):
    """The dense definition: pair (i, j) when every column's table allows it."""
    ok = np.ones((left.shape[0], right.shape[0]), dtype=bool)
    for q, table in enumerate(tables):
        ok &= table[left[:, q]][:, right[:, q]]
    return ok


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_all_columns_equals_its_definition(data):
    import veil.attacks.correspondence as correspondence

    columns = data.draw(st.integers(1, 3))
    shapes = [(data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))) for _ in range(columns)]
    tables = [np.array(data.draw(st.lists(st.booleans(), min_size=v * w, max_size=v * w))).reshape(v, w)
              for v, w in shapes]
    n_left, n_right = data.draw(st.integers(0, 9)), data.draw(st.integers(0, 150))
    left = np.array([[data.draw(st.integers(0, v - 1)) for v, _ in shapes] for _ in range(n_left)],
                    dtype=np.int64).reshape(n_left, columns)
    right = np.array([[data.draw(st.integers(0, w - 1)) for _, w in shapes] for _ in range(n_right)],
                     dtype=np.int64).reshape(n_right, columns)
    block = data.draw(st.sampled_from([1, 64, 1 << 22]))
    old, correspondence.BLOCK = correspondence.BLOCK, block
    try:
        got = correspondence._all_columns(tables, left, right)
    finally:
        correspondence.BLOCK = old
    assert got.shape == (n_left, n_right) and got.dtype == bool and got.has_sorted_indices
    assert np.array_equal(got.toarray(), _all_columns_by_definition(tables, left, right))


def test_the_attack_on_adult_is_the_attack_by_definition(monkeypatch):
    # The gate's benchmark pairs: every figure the attack reports, the same as with the dense
    # definition of the lookup join.
    import scipy.sparse as sp

    import veil
    import veil.attacks.correspondence as correspondence
    from veil.data.bundled import adult_hierarchies

    adult = veil.load_adult()
    hierarchies = {q: h for q, h in adult_hierarchies().items() if q in adult.quasi_identifiers}
    first = PublishedRelease.from_release(Mondrian([KAnonymity(10)]).fit_transform(adult))
    second = PublishedRelease.from_release(Mondrian([KAnonymity(12)], mode="relaxed").fit_transform(adult))
    people = adult.table.data.select(adult.quasi_identifiers)

    def run():
        return correspondence_attack(first, second, people, quasi_identifiers=adult.quasi_identifiers,
                                     sensitive=["occupation"], hierarchies=hierarchies)

    fast = run()
    monkeypatch.setattr(correspondence, "_all_columns",
                        lambda *args: sp.csr_matrix(_all_columns_by_definition(*args)))
    slow = run()
    assert fast.summary() == slow.summary() and fast.summary()["exposed"] > 0
    for name in ("new", "before_first", "before_second", "forward", "cross", "backward"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name


def test_the_gate_decides_as_with_the_dense_definition_on_adult(tmp_path, monkeypatch):
    # The ledger benchmark's scenario, smaller: earlier Mondrian and full-domain releases of Adult,
    # then relaxed Mondrian through the gate. The decision and every figure of every finding are
    # those the dense definition of the lookup join gives.
    import scipy.sparse as sp

    import veil
    import veil.attacks.correspondence as correspondence
    from veil.data.bundled import adult_csv, adult_hierarchies
    from veil.ledger import Ledger
    from veil.ledger.checks import IntersectionCheck
    from veil.ledger.policy import Policy

    adult = veil.load_adult()
    made = [("mondrian-k3", Mondrian([KAnonymity(3)])), ("fulldomain-k10", FullDomain([KAnonymity(10)],
                                                                                       suppression_limit=0.02)),
            ("relaxed-k12", Mondrian([KAnonymity(12)], mode="relaxed"))]
    manifests = []
    for name, anonymizer in made:
        (tmp_path / name).mkdir()
        anonymizer.fit_transform(adult).write(tmp_path / name / "release.csv", tmp_path / name / "manifest.json")
        manifests.append(tmp_path / name / "manifest.json")
    ledger, _ = Ledger.init(tmp_path / "gate.db")
    ledger.add_population("adult")
    hierarchies = adult_hierarchies()
    for path in manifests[:-1]:
        assert ledger.publish(path, population="adult", data=adult_csv(), hierarchies=hierarchies,
                              policy=Policy(checks=(IntersectionCheck(max_share=1.0),))).published

    def decide():
        decision = ledger.publish(manifests[-1], population="adult", data=adult_csv(), hierarchies=hierarchies)
        return decision.published, decision.reasons, [f.to_dict() for f in decision.findings]

    fast = decide()
    monkeypatch.setattr(correspondence, "_all_columns", lambda *args: sp.csr_matrix(_all_columns_by_definition(*args)))
    assert decide() == fast
    assert [f["check"] for f in fast[2]].count("correspondence") == 2
