"""A published manifest names nothing of the private table (audit issue 25, item 2).

1. Property: for full-domain, Mondrian, MDAV and Ace releases, with suppressed records removed or
   shown as ``*``, no text or number anywhere in the published manifest (keys included) is a value
   of the input that the published table does not show. What the run derived from the input (the
   value map, the reference distributions, the metrics) is in the private file, which names the
   release it belongs with.
2. The audit's cases: ARX's k-map case on Adult (native-country published as ``*``, and the one
   person from Holand-Netherlands in the research subset), reproduced through ``veil anonymize
   --config`` with a ``k_map`` model; and 5 % suppression under hierarchical t-closeness, where the
   21 people who are Married-AF-spouse are exactly the suppressed ones.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veil import Dataset, Hierarchy, builders, load_adult
from veil.anonymize import MDAV, Ace, FullDomain, InfeasibleError, Mondrian
from veil.cli import app
from veil.manifests import PRIVATE_KIND, combined, load_private, private_path
from veil.models import DistinctLDiversity, KAnonymity, TCloseness
from veil.output import load_manifest

from helpers import ADULT_DIR, ADULT_SUBSET_CSV

PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
QIS = ["zip", "age", "sex"]


def random_frame(seed: int, n: int) -> pd.DataFrame:
    """Values no count of the manifest can equal by chance: ages 1000 to 1099, codes with letters."""
    rng = np.random.default_rng(seed)

    def skewed(m: int) -> np.ndarray:
        return rng.choice(m, n, p=rng.dirichlet(np.full(m, float(rng.choice([0.2, 1.0])))))

    zips = [f"z{a}{b}{c}" for a, b, c in rng.integers(0, 3, (int(rng.integers(2, 9)), 3))]
    return pd.DataFrame({"zip": [zips[i] for i in skewed(len(zips))],
                         "age": 1000 + skewed(int(rng.integers(2, 40))),
                         "sex": np.array(["sex-F", "sex-M", "sex-X"])[skewed(int(rng.integers(1, 4)))],
                         "disease": np.array(["dis-flu", "dis-cold", "dis-hiv", "dis-gout", "dis-acne"])[
                             skewed(int(rng.integers(2, 6)))]})


def dataset(frame: pd.DataFrame) -> Dataset:
    masks = Hierarchy([[z, z[:2] + "**", "*"] for z in sorted(set(frame["zip"]))], name="zip")
    return Dataset(frame, quasi_identifiers=QIS, sensitive=["disease"],
                   hierarchies={"zip": masks, "age": builders.intervals(frame["age"], [5, 20]),
                                "sex": builders.flat(frame["sex"])})


def atoms(doc):
    """Every key, text and number of a JSON document, as text."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield str(key)
            yield from atoms(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from atoms(value)
    elif isinstance(doc, bool) or doc is None:
        return
    elif isinstance(doc, float) and doc.is_integer():
        yield str(int(doc))
    else:
        yield str(doc)


def shown(table: pd.DataFrame) -> set[str]:
    """What the published table shows: every cell, and every value inside a cell (a range's ends,
    a set's members)."""
    out = set()
    for column in table.columns:
        for cell in table[column].astype(str).unique():
            out.add(cell)
            out.update(part for part in re.split(r"[\[\]{}(),\s]+|(?<=\d)-(?=\d)", cell) if part)
    return out


def hidden_values(frame: pd.DataFrame, release) -> set[str]:
    """The input's values the published table does not show."""
    raw = {str(v) for column in QIS + ["disease"] for v in frame[column].unique()}
    return raw - shown(release.data)


def make(algorithm: str, limit: float, k: int):
    if algorithm == "fulldomain":
        return FullDomain([KAnonymity(k), DistinctLDiversity(2)], suppression_limit=limit)
    if algorithm == "mdav":
        return MDAV([KAnonymity(k), DistinctLDiversity(2)], suppression_limit=limit)
    if algorithm == "ace":
        return Ace(l=2, sensitive="disease", rng=k)
    return Mondrian([KAnonymity(k)], mode=algorithm.split("-")[1],
                    categorical="order" if k % 2 else "hierarchy")


@pytest.mark.parametrize("algorithm", ["fulldomain", "mondrian-strict", "mondrian-relaxed", "mdav", "ace"])
@settings(max_examples=25, **PROPERTY)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(12, 90), limit=st.sampled_from([0.0, 0.1, 0.3]),
       k=st.integers(2, 5), style=st.sampled_from(["remove", "star"]))
def test_the_published_manifest_names_no_value_the_table_does_not_show(algorithm, seed, n, limit, k, style,
                                                                       tmp_path_factory):
    frame = random_frame(seed, n)
    try:
        release = make(algorithm, limit, k).fit_transform(dataset(frame), suppressed=style)
    except InfeasibleError:
        return
    hidden = hidden_values(frame, release)
    folder = tmp_path_factory.mktemp("release")
    release.write(folder / "release.csv", folder / "manifest.json")
    written = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    # The release section describes the published file itself (its size and hash), which a
    # reader holds: a size may equal an input value by chance.
    assert set(written["release"]) <= {"file", "bytes", "sha256", "id"}, written["release"]
    for doc in (release.manifest, {k: v for k, v in written.items() if k != "release"}):
        named = hidden & set(atoms(doc))
        assert not named, f"the published manifest names {sorted(named)}, which the table does not show"
    # What was derived from the input is the curator's, in the private file of this very release.
    private = load_private(folder / "manifest.json", load_manifest(folder / "manifest.json"))
    assert private["kind"] == PRIVATE_KIND and private["release"] == written["release"]
    assert private["reference"]["disease"] == frame["disease"].value_counts().to_dict()
    assert private["input"]["rows"] == n
    if release.suppressed_records and style == "remove":
        assert "records" not in written["suppression"]


def veil_cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


ARX_COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def test_arx_k_map_case_through_a_configuration_names_no_one(tmp_path):
    """ARX's TestAnonymizationKMap: 5-map of adult_subset within Adult, no suppression, AECS: the
    optimum is [1, 0, 1, 2, 3, 2, 2, 1], native-country published as *. One person of Adult is
    from Holand-Netherlands, and is in the subset."""
    subset = pd.read_csv(ADULT_SUBSET_CSV, sep=";", dtype=str)
    adult = pd.read_csv(ADULT_DIR / "adult.csv", sep=";", dtype=str)
    assert (adult["native-country"] == "Holand-Netherlands").sum() == 1
    assert (subset["native-country"] == "Holand-Netherlands").sum() == 1
    lines = [f"data: {ADULT_SUBSET_CSV}", 'delimiter: ";"', "columns:",
             f"  quasi_identifiers: [{', '.join(ARX_COLUMNS)}]", "  sensitive: [occupation]", "hierarchies:"]
    lines += [f"  {c}: {{file: {ADULT_DIR / f'adult_hierarchy_{c}.csv'}}}" for c in ARX_COLUMNS]
    lines += ["models:", f"  - k_map: {{population: {ADULT_DIR / 'adult.csv'}, k: 5}}", "suppression_limit: 0",
              "metric: aecs", "output: {shuffle: true}"]
    (tmp_path / "kmap.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = veil_cli("anonymize", "--config", tmp_path / "kmap.yaml", "--out", tmp_path / "release.csv",
                      "--manifest", tmp_path / "manifest.json")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "manifest.json").read_text(encoding="utf-8")
    manifest = json.loads(text)
    assert list(manifest["node"].values()) == [1, 0, 1, 2, 3, 2, 2, 1]
    assert manifest["models"][0]["key"] == "k_map" and manifest["models"][0]["passed"]
    assert manifest["models"][0]["level"] >= 5
    assert manifest["config"]["models"] == [{"k_map": {"population": str(ADULT_DIR / "adult.csv"), "k": 5}}]
    assert "Holand-Netherlands" not in text
    assert "Holand-Netherlands" not in (tmp_path / "release.csv").read_text(encoding="utf-8")
    private = json.loads(private_path(tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert private["generalization"]["native-country"]["Holand-Netherlands"] == "*"  # the curator's only
    # A reader of the release measures the same k-map from the published file and the population.
    check = veil_cli("check", tmp_path / "release.csv", "--qi", ",".join(ARX_COLUMNS), "--sensitive", "occupation",
                     "--manifest", tmp_path / "manifest.json", "--population", ADULT_DIR / "adult.csv",
                     "--k-map", "5", "--json")
    assert check.exit_code == 0, check.output
    assert json.loads(check.stdout)["k_map"] == manifest["models"][0]["level"]


def test_married_af_spouse_held_only_by_suppressed_records_is_not_named(tmp_path):
    ds = load_adult()
    fitted = FullDomain([KAnonymity(5), TCloseness(0.2, "hierarchical", sensitive="occupation")],
                        suppression_limit=0.05).fit(ds)
    release = fitted.transform(ds)
    assert release.manifest["node"]["marital-status"] == 0
    held = ds.table.data.column("marital-status").to_pandas() == "Married-AF-spouse"
    suppressed = release.failing[release.classes.row_class]
    assert held.sum() == 21 and suppressed[held.to_numpy()].all()  # all 21 are suppressed
    release.write(tmp_path / "release.csv", tmp_path / "manifest.json")
    assert "Married-AF-spouse" not in (tmp_path / "release.csv").read_text(encoding="utf-8")
    assert "Married-AF-spouse" not in (tmp_path / "manifest.json").read_text(encoding="utf-8")
    private = (tmp_path / "manifest.private.json").read_text(encoding="utf-8")
    assert "Married-AF-spouse" in private
    # The private file is its owner's alone, and the curator's tools read it.
    assert (tmp_path / "manifest.private.json").stat().st_mode & 0o777 == 0o600
    view = combined(load_manifest(tmp_path / "manifest.json"),
                    load_private(tmp_path / "manifest.json", load_manifest(tmp_path / "manifest.json")))
    assert view["suppression"]["records"] == release.suppressed_records


def test_a_manifest_written_before_the_split_is_still_read(tmp_path):
    """A version-1 manifest held everything itself (the value map, the reference, every level):
    veil check, veil report and veil publish read it as it is."""
    frame = random_frame(3, 80)
    release = FullDomain([KAnonymity(3), TCloseness(0.9, sensitive="disease")], suppression_limit=0.1).fit_transform(
        dataset(frame))
    release.write(tmp_path / "release.csv", tmp_path / "new.json")
    old = combined(json.loads((tmp_path / "new.json").read_text()),
                   json.loads((tmp_path / "new.private.json").read_text()))
    old.pop("manifest_version")
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    frame.to_csv(tmp_path / "people.csv", index=False)
    check = veil_cli("check", tmp_path / "release.csv", "--qi", ",".join(QIS), "--sensitive", "disease",
                     "--manifest", tmp_path / "old.json", "--json")
    assert check.exit_code == 0, check.output
    assert any("reference distribution of 'disease' given" in note for note in json.loads(check.stdout)["notes"])
    report = veil_cli("report", tmp_path / "old.json", "--out", tmp_path / "old.html")
    assert report.exit_code == 0, report.output
    (tmp_path / "policy.yaml").write_text("policy:\n  populations:\n    people: {}\n", encoding="utf-8")
    for ledger in ("old.db", "new.db"):
        assert veil_cli("ledger", "init", "--ledger", tmp_path / ledger).exit_code == 0

    def publish(manifest, ledger, *more):
        return veil_cli("publish", tmp_path / manifest, "--population", "people", "--data", tmp_path / "people.csv",
                        "--ledger", tmp_path / ledger, "--policy", tmp_path / "policy.yaml", "--json", *more)

    published = publish("old.json", "old.db")
    assert published.exit_code == 0, published.output
    assert json.loads(published.stdout)["published"]
    # The published manifest alone: the gate asks for the private file in one sentence, recording nothing.
    (tmp_path / "new.private.json").rename(tmp_path / "kept.json")
    missing = publish("new.json", "new.db")
    assert missing.exit_code == 2 and missing.stderr.strip().splitlines() == [
        "error: the level of t-closeness, equal EMD (and the input's distribution it is measured against) is kept in "
        "the release's private file, which is not beside the manifest; give it (--private new.private.json, written "
        "by veil anonymize)."]
    given = publish("new.json", "new.db", "--private", tmp_path / "kept.json")
    assert given.exit_code == 0, given.output
    decision = json.loads(given.stdout)
    assert decision["published"] and decision["release_id"] == 1  # nothing was recorded by the refusal above
    assert [row["published"] == row["manifest"] for row in decision["recheck"]] == [True, True]
    # A new release checked against the old ledger entry (its manifest held the value map itself).
    other = FullDomain([KAnonymity(6)], suppression_limit=0.1).fit_transform(dataset(frame))
    (tmp_path / "second").mkdir()
    other.write(tmp_path / "second" / "release.csv", tmp_path / "second" / "manifest.json")
    second = publish("second/manifest.json", "old.db")
    assert second.exit_code in (0, 1), second.output
    assert {f["check"] for f in json.loads(second.stdout)["findings"]} >= {"intersection"}
