"""The publishing gate's presence check: membership disclosure against a hand-computed population.

The publisher holds four records (T) drawn from a voter list of eight (P), and publishes their zip
codes, raw or masked to three digits:

======  ======  =======  =======================  ===========================
zip     P       T        raw: f / F               masked (130*, 140*): f / F
======  ======  =======  =======================  ===========================
1301    2       2        2 / 2 = 1                130*: 3 / 5 = 0.6
1302    3       1        1 / 3                    130*: 0.6
1401    3       1        1 / 3                    140*: 1 / 3
======  ======  =======  =======================  ===========================

Raw, the two voters of 1301 are certainly in the release (δ = 1) and their tuple matches 2 voters;
masked, no one is above 0.6 and every published tuple matches at least 3 voters.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import veil
from veil import Dataset, Hierarchy
from veil.anonymize import Release
from veil.cli import app
from veil.errors import ParameterError
from veil.ledger.checks import PresenceCheck
from veil.models import KAnonymity

HELD = pd.DataFrame({"zip": ["1301", "1301", "1302", "1401"], "disease": ["flu", "cold", "flu", "hiv"]})
VOTERS = pd.DataFrame({"zip": ["1301"] * 2 + ["1302"] * 3 + ["1401"] * 3, "name": list("abcdefgh")})
ZIP = Hierarchy([["1301", "130*", "*"], ["1302", "130*", "*"], ["1401", "140*", "*"]], name="zip")


def veil_cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def project(tmp_path):
    HELD.to_csv(tmp_path / "held.csv", index=False)
    VOTERS.to_csv(tmp_path / "voters.csv", index=False)
    VOTERS[VOTERS["zip"] != "1401"].to_csv(tmp_path / "partial.csv", index=False)
    ds = Dataset(HELD, quasi_identifiers=["zip"], sensitive=["disease"], hierarchies={"zip": ZIP})
    for name, level in (("raw", 0), ("masked", 1)):
        classes = veil.EquivalenceClasses.from_dataset(ds, {"zip": level})
        release = Release(ds, classes, [False] * classes.n_classes, algorithm="fulldomain", models=[KAnonymity(1)],
                          suppression_limit=0.0)
        (tmp_path / name).mkdir()
        release.write(tmp_path / name / "release.csv", tmp_path / name / "manifest.json")
    assert veil_cli("ledger", "init", "--ledger", tmp_path / "ledger.db").exit_code == 0
    return tmp_path


def publish(project, release: str, presence: str, population: str = "voters.csv"):
    policy = project / "policy.yaml"
    policy.write_text("policy:\n  populations:\n    voters: {}\n"
                      f"  presence: {{population: {population}, {presence}}}\n", encoding="utf-8")
    return veil_cli("publish", project / release / "manifest.json", "--population", "voters", "--data",
                    project / "held.csv", "--ledger", project / "ledger.db", "--policy", policy, "--json")


def test_delta_presence_refuses_the_raw_release_with_one_reason(project):
    refused = publish(project, "raw", "delta_max: 0.7")
    assert refused.exit_code == 1, refused.output
    decision = json.loads(refused.stdout)
    assert not decision["published"]
    assert decision["reasons"] == [
        "against the population table 'voters.csv' (8 people), the new release gives 2 of them (25.00%) a membership "
        "probability above 0.7, over the policy's limit of 0.00%."]
    figures = decision["findings"][0]["figures"]
    assert figures["max_probability"] == 1.0 and figures["exposed"] == 2 and figures["smallest_match"] == 2


def test_the_masked_release_is_delta_present_and_3_map(project):
    published = publish(project, "masked", "delta_max: 0.6, k_map: 3")
    assert published.exit_code == 0, published.output
    finding = json.loads(published.stdout)["findings"][0]
    assert finding["check"] == "presence" and finding["passed"]
    assert finding["figures"]["max_probability"] == pytest.approx(0.6)
    assert finding["figures"]["smallest_match"] == 3
    # expected members: 5 people at 3/5 and 3 at 1/3 sum to the 4 released records
    assert finding["figures"]["expected_members"] == pytest.approx(4.0)


def test_k_map_refuses_the_raw_release(project):
    refused = publish(project, "raw", "k_map: 3, max_share: 0.2")
    assert refused.exit_code == 1
    assert json.loads(refused.stdout)["reasons"] == [
        "against the population table 'voters.csv' (8 people), the new release gives 2 of them (25.00%) a published "
        "tuple matching fewer than 3 of them, over the policy's limit of 20.00%."]
    assert publish(project, "raw", "k_map: 3, max_share: 0.25").exit_code == 0  # within the limit


def test_a_population_that_does_not_cover_the_release_is_one_sentence(project):
    failed = publish(project, "raw", "delta_max: 0.7", population="partial.csv")
    assert failed.exit_code == 2
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0] == (
        "error: the population table 'partial.csv' does not cover the new release ('raw/release.csv'): a published "
        "tuple is held by more released records than population records; give the population the release was "
        "drawn from.")
    history = veil_cli("ledger", "history", "--ledger", project / "ledger.db", "--json")
    actions = [entry["action"] for entry in json.loads(history.stdout)["entries"]]
    assert "init" in actions and not {"refuse", "publish"} & set(actions)  # nothing recorded


def test_policy_errors_are_one_sentence(project):
    failed = publish(project, "raw", "max_share: 0.1")
    assert failed.exit_code == 2 and "policy.presence needs delta_max (δ-presence) or k_map" in failed.stderr
    missing = publish(project, "raw", "delta_max: 0.5", population="nowhere.csv")
    assert missing.exit_code == 2 and "presence.population: file" in missing.stderr
    with pytest.raises(ParameterError, match="delta_max must be a share"):
        PresenceCheck(project / "voters.csv", delta_max=2)
