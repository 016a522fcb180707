"""Publishing anonymized marginals (one CSV each and a hashed manifest, all or none) and the
experiment that reproduces Kifer and Gehrke's finding on Adult."""

from __future__ import annotations

import csv
import hashlib
import json

import pytest

import veil
from helpers import one_sentence_error
from veil.errors import InfeasibleError, ParameterError
from veil.experiments.marginals import FILES, run_marginals, write_marginals
from veil.marginals import (KCombinatorialAnonymity, KLinkAnonymity, MarginalCollection, MarginalCounter,
                            MarginalRelease, MarginalSpec, MaxEntLDiversity)

BASE_LEVELS = (0, 4, 0, 1, 3, 2, 2)


@pytest.fixture(scope="module")
def counter():
    return MarginalCounter(veil.load_adult())


def collection_of(counter, *specs):
    base = counter.count(counter.base_spec(BASE_LEVELS))
    return MarginalCollection(counter, [base] + [counter.count(s) for s in specs])


def test_a_release_writes_each_marginal_and_a_manifest_that_hashes_them(counter, tmp_path):
    collection = collection_of(counter, MarginalSpec.of(["age", "sex"], {"age": 1}),
                               MarginalSpec.of(["sex", "marital-status", "occupation"]))
    release = MarginalRelease.from_collection(collection, [KLinkAnonymity(5), MaxEntLDiversity(3)],
                                              roles=["base", "given", "given"])
    written = release.write(tmp_path / "out")
    assert [p.name for p in written] == ["marginal-01.csv", "marginal-02.csv", "marginal-03.csv",
                                         "manifest.private.json", "manifest.json"]
    manifest = json.loads(written[-1].read_text())
    private = json.loads(written[-2].read_text())
    assert manifest["kind"] == "marginals" and manifest["algorithm"]["name"] == "given"
    # the divergence from the input table is the curator's
    assert "utility" not in manifest
    assert private["utility"]["kl_divergence"] == pytest.approx(collection.kl_divergence())
    assert private["marginal-01"]["sha256"] == manifest["marginals"][0]["file"]["sha256"]
    assert private["kind"] == "veil private manifest"
    assert [p["model"] for p in manifest["privacy"]] == ["k-link anonymity", "MaxEnt entropy ℓ-diversity"]
    for entry, path, table in zip(manifest["marginals"], written, collection.marginals):
        assert entry["file"]["file"] == path.name
        assert entry["file"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        rows = list(csv.DictReader(path.open()))
        assert list(rows[0]) == list(table.attributes) + ["count"]
        assert sum(int(r["count"]) for r in rows) == counter.n == entry["records"]
        assert len(rows) == entry["cells"]
    assert manifest["marginals"][1]["levels"] == {"age": 1, "sex": 0}
    assert {r["age"] for r in csv.DictReader(written[1].open())} >= {"15-19", "20-24"}


def test_a_failing_collection_is_refused_naming_the_marginal_and_cell(counter, tmp_path):
    collection = collection_of(counter, MarginalSpec.of(["age", "native-country"]))
    message = one_sentence_error(InfeasibleError, lambda: MarginalRelease.from_collection(
        collection, [KLinkAnonymity(5)]), "marginal 2 (age@0 × native-country@0) fails 5-link anonymity", "its cell")
    assert "coarsen that marginal" in message
    fine = collection_of(counter, MarginalSpec.of(["sex", "occupation"]))
    one_sentence_error(InfeasibleError, lambda: MarginalRelease.from_collection(fine, [MaxEntLDiversity(7)]),
                       "fail MaxEnt entropy ℓ-diversity (ℓ = 7)", "occupation")
    assert not (tmp_path / "out").exists()


def test_a_k_combinatorial_refusal_says_how_it_was_decided():
    counter = MarginalCounter(veil.Dataset(
        __import__("pandas").DataFrame([["1", "1", "0"]] * 2 + [["0", "1", "1"]] * 2 + [["0", "1", "0"]] * 2 +
                                       [["1", "0", "1"]] * 2 + [["1", "1", "1"]], columns=list("abc")),
        quasi_identifiers=list("abc")))
    collection = MarginalCollection.from_specs(counter, [MarginalSpec.of(list(p)) for p in ("ab", "bc", "ac")])
    one_sentence_error(InfeasibleError, lambda: MarginalRelease.from_collection(
        collection, [KLinkAnonymity(2), KCombinatorialAnonymity(2)]),
        "fail 2-combinatorial anonymity by the exact check", "a=1, b=1, c=1")


def test_a_release_never_replaces_what_the_run_reads(counter, tmp_path):
    collection = collection_of(counter)
    release = MarginalRelease.from_collection(collection, [KLinkAnonymity(5)])
    data = tmp_path / "marginal-01.csv"
    data.write_text("keep me\n")
    one_sentence_error(ParameterError, lambda: release.write(tmp_path, reads=[data]), "marginal-01.csv")
    assert data.read_text() == "keep me\n" and not (tmp_path / "manifest.json").exists()


def test_the_experiment_adds_marginals_that_lower_kl_at_the_same_privacy(tmp_path):
    run = run_marginals(k=(5,), l=3.0, max_marginals=2, max_attributes=2)
    (k, single, with_marginals), = run.summary()
    assert k == 5 and with_marginals < single
    collection = run.collections[0]
    assert collection["base"]["optimal"] and len(collection["marginals"]) == 2
    kls = [r["kl_divergence"] for r in run.rows]
    assert kls == sorted(kls, reverse=True) and [r["marginals"] for r in run.rows] == [0, 1, 2]
    written = write_marginals(run, tmp_path / "exp")
    assert [p.name for p in written] == list(FILES)
    assert written[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(written[2].read_text())["collections"][0]["kl_divergence"] == with_marginals
    one_sentence_error(ParameterError, lambda: run_marginals(k=()), "at least one k")
