"""The Python API of DP synthetic data: :func:`veil.synth.synthesize` mirrors ``veil synth``.

It spends exactly the budget given (ρ, or the ρ of (ε, δ)); it refuses bad arguments in one
sentence before any noise is drawn; it uses secure randomness unless seeded, and a seeded run is not
fit for release; the public manifest holds nothing read from the private table (no evaluation
number, no value of a column whose domain was read from it); ``write`` publishes the output set
whole or not at all.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from helpers import one_sentence_error

from veil.errors import DataError, ParameterError
from veil.synth import SynthDomain, SyntheticRelease, synthesize
from veil.synth.budget import rho_for
from veil.synth.domain import DomainError

TABLE = pd.DataFrame({"sex": ["F", "M"] * 20, "age": [20, 34, 47, 61, 25] * 8, "tag": list("xyzw") * 10})
DOMAIN = SynthDomain.declared({"sex": ["F", "M"], "age": {"bins": [18, 30, 45, 70], "integer": True}})


def test_a_seeded_run_spends_exactly_its_budget_and_is_not_fit_for_release():
    release = synthesize(TABLE, DOMAIN, rho=Fraction(1, 2), rng=3, evaluate=False)
    assert isinstance(release, SyntheticRelease)
    assert release.fit.rho == Fraction(1, 2)
    assert sum(m.rho for m in release.fit.measurements) + sum(s.rho for s in release.fit.selections) == Fraction(1, 2)
    assert list(release.table.columns) == ["sex", "age"]
    assert release.codes.shape == (len(release.table), 2)
    assert release.seeded and not release.fit_for_release and release.randomness == "seeded: not fit for release"
    assert release.evaluation is None
    again = synthesize(TABLE, DOMAIN, rho=Fraction(1, 2), rng=3, evaluate=False)
    pd.testing.assert_frame_equal(release.table, again.table)


def test_epsilon_delta_is_spent_as_its_rho_and_the_manifest_states_both():
    release = synthesize(TABLE, DOMAIN, epsilon=1.0, delta=1e-9, rng=np.random.default_rng(1), rows=25,
                         evaluate=False)
    assert release.fit.rho == rho_for(Fraction(1), Fraction(1, 10**9))
    assert len(release.table) == 25
    manifest = release.manifest()
    assert (manifest["epsilon"], manifest["delta"]) == ("1", "0.000000001") and "rho" not in manifest
    assert Fraction(manifest["budget"]["rho"]) == release.fit.rho


def test_the_default_is_secure_and_fit_for_release():
    release = synthesize(TABLE, DOMAIN, rho=1.0, evaluate=False)
    assert not release.seeded and release.fit_for_release and release.randomness == "secure"
    assert release.manifest()["fit_for_release"] is True


# Bad arguments, each refused before the mechanism runs: (keyword arguments, words of the sentence).
MISTAKES = {
    "epsilon and rho": ({"epsilon": 1.0, "delta": 1e-9, "rho": 0.1}, ["one way"]),
    "no budget": ({}, ["one way"]),
    "epsilon without delta": ({"epsilon": 1.0}, ["one way"]),
    "epsilon 0": ({"epsilon": 0, "delta": 1e-9}, ["epsilon", "greater than 0"]),
    "delta 0": ({"epsilon": 1, "delta": 0}, ["delta", "above 0"]),
    "delta 1": ({"epsilon": 1, "delta": 1}, ["delta", "below 1"]),
    "rho negative": ({"rho": -0.5}, ["rho", "greater than 0"]),
    "rho infinite": ({"rho": float("inf")}, ["rho", "finite"]),
    "an unknown mechanism": ({"rho": 1, "mechanism": "gan"}, ["mechanism"]),
    "a workload naming an unknown column": ({"rho": 1, "mechanism": "aim", "workload": [("age", "tag")]}, ["'tag'"]),
    "a workload given to mst": ({"rho": 1, "workload": [("age", "sex")]}, ["aim"]),
    "a zero weight": ({"rho": 1, "mechanism": "aim", "workload": [(("age", "sex"), 0)]}, ["weight"]),
    "zero rows": ({"rho": 1, "rows": 0}, ["rows"]),
    "a target outside the domain": ({"rho": 1, "target": "tag"}, ["'tag'"]),
    "a bad rng": ({"rho": 1, "rng": "secure"}, ["rng"]),
}


@pytest.mark.parametrize("mistake", MISTAKES)
def test_bad_arguments_are_refused_before_any_noise(monkeypatch, mistake):
    import veil.synth.aim
    import veil.synth.mst

    def never(*args, **kwargs):
        raise AssertionError("the mechanism ran")

    monkeypatch.setattr(veil.synth.mst, "mst", never)
    monkeypatch.setattr(veil.synth.aim, "aim", never)
    kwargs, words = MISTAKES[mistake]
    one_sentence_error(ParameterError, lambda: synthesize(TABLE, DOMAIN, evaluate=False, **kwargs), *words)


def test_a_value_outside_the_domain_is_refused_before_any_noise(monkeypatch):
    import veil.synth.mst

    monkeypatch.setattr(veil.synth.mst, "mst", lambda *a, **k: pytest.fail("the mechanism ran"))
    young = TABLE.assign(age=TABLE["age"].where(TABLE["age"] != 61, 12))
    one_sentence_error(DomainError, lambda: synthesize(young, DOMAIN, rho=1, rng=1), "'age'")
    one_sentence_error(DomainError, lambda: synthesize(TABLE.drop(columns="sex"), DOMAIN, rho=1, rng=1), "'sex'")


def test_the_input_is_not_modified():
    before = TABLE.copy()
    synthesize(TABLE, DOMAIN, rho=1, rng=2, evaluate=False)
    pd.testing.assert_frame_equal(TABLE, before)


def test_the_manifest_holds_no_evaluation_and_no_value_read_from_the_table():
    domain = SynthDomain(DOMAIN.columns + SynthDomain.from_data(TABLE, columns=["tag"]).columns)
    release = synthesize(TABLE, domain, rho=1, rng=4, target="sex")
    assert release.evaluation is not None
    manifest = release.manifest()
    text = json.dumps(manifest)
    assert not release.fit_for_release
    assert any("read from the private table" in r for r in manifest["not_fit_because"])
    assert next(d for d in manifest["domain"] if d["name"] == "tag") == {"name": "tag", "source": "data",
                                                                         "kind": domain["tag"].kind}
    for value in ("\"x\"", "\"y\"", "\"z\"", "\"w\""):
        assert value not in text
    assert not set(release.evaluation.to_dict()) & set(manifest)
    numbers = [v for v in _leaves(release.evaluation.to_dict()) if isinstance(v, float) and v not in (0.0, 1.0)]
    assert not [v for v in numbers if repr(v) in text]


def _leaves(doc):
    if isinstance(doc, dict):
        for v in doc.values():
            yield from _leaves(v)
    elif isinstance(doc, (list, tuple)):
        for v in doc:
            yield from _leaves(v)
    else:
        yield doc


def test_write_publishes_the_set_whole_or_not_at_all(tmp_path):
    release = synthesize(TABLE, DOMAIN, rho=1, rng=5, evaluate=False)
    doc = release.write(tmp_path / "out", table_name="synthetic.parquet")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json", "report.html",
                                                                     "synthetic.parquet"]
    assert doc["release"]["file"] == "synthetic.parquet" and doc["seal"]["algorithm"] == "HMAC-SHA256"
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out" / "synthetic.parquet"), release.table,
                                  check_dtype=False)
    (tmp_path / "file").write_text("mine")
    one_sentence_error(DataError, lambda: release.write(tmp_path / "file" / "out"), "file")
    assert (tmp_path / "file").read_text() == "mine"
    one_sentence_error(ParameterError, lambda: release.write(tmp_path / "other", table_name="t.xlsx"), ".parquet")
    assert not (tmp_path / "other").exists()


def test_a_polars_table_gives_a_polars_synthetic_table(tmp_path):
    import polars as pl

    release = synthesize(pl.from_pandas(TABLE), DOMAIN, rho=1, rng=6, evaluate=False)
    assert isinstance(release.table, pl.DataFrame) and release.table.columns == ["sex", "age"]
    release.write(tmp_path / "out")
    assert pd.read_csv(tmp_path / "out" / "synthetic.csv").shape == (release.codes.shape[0], 2)
    assert (tmp_path / "out" / "report.html").stat().st_mode & 0o077 == 0


def test_the_manifests_noise_scales_do_not_depend_on_the_table():
    other = pd.DataFrame({"sex": ["M"] * 33, "age": [19] * 33})
    first = synthesize(TABLE, DOMAIN, rho=Fraction(1, 3), rng=7, evaluate=False).manifest()
    second = synthesize(other, DOMAIN, rho=Fraction(1, 3), rng=8, evaluate=False).manifest()
    scales = [sorted((m["purpose"], m["sigma"], m["rho"]) for m in doc["measurements"]) for doc in (first, second)]
    assert scales[0] == scales[1]
    assert first["budget"] == second["budget"] and first["domain"] == second["domain"]
