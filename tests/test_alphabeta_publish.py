"""The αβ algorithm end to end: what it publishes, the estimator, usefulness and the files."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import veil
from veil.anonymize.alphabeta import (AlphaBeta, AlphaBetaView, Coins, CountingQuery,
                                      random_queries, usefulness)
from veil.anonymize.alphabeta.publish import complement_ids
from veil.anonymize.alphabeta.queries import ResolvedQueries, count_matching
from veil.data.bundled import ADULT_COLUMNS, load_adult
from veil.errors import ColumnError, DataError, ParameterError

DOMAINS = {"sex": ["F", "M"], "age": range(20, 30), "city": ["Oslo", "Rome", "Lima"]}


def people(rows: int = 40, seed: int = 0) -> veil.Dataset:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], rows), "age": rng.integers(20, 30, rows).astype(str),
                          "city": rng.choice(["Oslo", "Rome", "Lima"], rows, p=[0.6, 0.3, 0.1]),
                          "salary": rng.integers(1, 9, rows).astype(str)})
    return veil.Dataset(frame, quasi_identifiers=["sex", "age"], sensitive="city")


@settings(max_examples=50, deadline=None)
@given(ids=st.sets(st.integers(0, 199), max_size=120))
def test_complement_ranks_map_to_the_ids_not_in_the_instance(ids):
    instance = np.array(sorted(ids), dtype=np.int64)
    complement = [i for i in range(200) if i not in ids]
    ranks = np.arange(len(complement))
    assert complement_ids(ranks, instance).tolist() == complement


def test_view_keeps_tuples_of_i_and_inserts_only_new_distinct_tuples():
    ds = people(rows=60)
    anonymizer = AlphaBeta(0.3, d=0.05, domains=DOMAINS, rng=1).fit(ds)
    view = anonymizer.transform()
    ids = anonymizer.domain_.encode(view.codes)
    instance = set(anonymizer.instance_.tolist())
    assert len(set(ids.tolist())) == len(ids)                      # a set: no tuple twice
    assert np.all(np.diff(ids) > 0)                                # sorted, so order tells nothing
    assert (0 <= ids).all() and (ids < anonymizer.domain_.size).all()
    assert view.data.columns.tolist() == ["sex", "age", "city"]    # the salary column is not published
    inserted = [i for i in ids.tolist() if i not in instance]
    kept = [i for i in ids.tolist() if i in instance]
    assert len(kept) + len(inserted) == len(view)
    assert anonymizer.n_ == len(instance) <= 60 and anonymizer.records_ == 60


def test_kept_and_inserted_rates_and_uniformity_over_d_minus_i():
    """Over many seeded draws: each tuple of I is in V at rate α + β, each tuple of D \\ I at rate β,
    and the inserted tuples are uniform over D \\ I."""
    ds = people(rows=30, seed=3)
    anonymizer = AlphaBeta(0.4, d=0.2, domains=DOMAINS).fit(ds)
    m, instance = anonymizer.domain_.size, anonymizer.instance_
    params = anonymizer.parameters_
    hits = np.zeros(m, dtype=np.int64)
    draws = 3000
    coins = Coins.seeded(9)
    anonymizer.rng = coins
    for _ in range(draws):
        hits[anonymizer.domain_.encode(anonymizer.transform().codes)] += 1
    in_i = np.zeros(m, dtype=bool)
    in_i[instance] = True
    keep, beta = float(params.keep_probability), float(params.beta)
    assert abs(hits[in_i].sum() - draws * in_i.sum() * keep) <= 5 * math.sqrt(draws * in_i.sum() * keep * (1 - keep))
    outside = hits[~in_i]
    assert abs(outside.sum() - draws * len(outside) * beta) <= 5 * math.sqrt(draws * len(outside) * beta * (1 - beta))
    assert stats.chisquare(outside).pvalue > 1e-4


def test_the_estimator_is_unbiased():
    ds = people(rows=50, seed=5)
    anonymizer = AlphaBeta(0.5, d=0.1, domains=DOMAINS).fit(ds)
    queries = [CountingQuery({"sex": "F"}), CountingQuery({"city": ["Oslo", "Lima"], "age": {"max": 24}}),
               CountingQuery({"age": 27}), CountingQuery({})]
    resolved = ResolvedQueries(queries, anonymizer.domain_)
    true_counts = count_matching(anonymizer.domain_.decode(anonymizer.instance_), resolved)
    draws = 2000
    anonymizer.rng = Coins.seeded(21)
    estimates = np.array([anonymizer.transform().answer(queries).estimate for _ in range(draws)])
    variance = anonymizer.parameters_.variance(true_counts, resolved.domain_counts)
    standard_error_of_mean = np.sqrt(variance / draws)
    assert np.all(np.abs(estimates.mean(axis=0) - true_counts) <= 4 * standard_error_of_mean)
    # and the variance formula is the estimator's variance
    assert np.allclose(estimates.var(axis=0), variance, rtol=0.15)


def test_usefulness_is_measured_beside_its_bound():
    ds = load_adult(quasi_identifiers=ADULT_COLUMNS[:-1], sensitive=("salary-class",))
    anonymizer = AlphaBeta(0.5, k=1, rng=4).fit(ds)
    assert anonymizer.domain_.size == 1_028_608_000
    view = anonymizer.transform()
    expected = anonymizer.n_ * float(anonymizer.parameters_.keep_probability) \
        + anonymizer.parameters_.expected_inserted(anonymizer.n_)
    assert abs(len(view) - expected) < 5 * math.sqrt(expected)
    queries = random_queries(view.domain, 500, np.random.default_rng(0))
    rho = math.sqrt(1 / 0.5)
    result = usefulness(view, anonymizer.instance_, queries, rho)
    assert result.n == anonymizer.n_ == 19_502
    assert result.threshold == pytest.approx(rho * math.sqrt(19_502))
    assert 0 <= result.share <= result.bound <= 1
    assert result.rms_error > 0


def test_release_labels():
    ds = people()
    seeded = AlphaBeta(0.3, d=0.05, domains=DOMAINS, rng=1).fit_transform(ds)
    assert not seeded.fit_for_release and "seeded" in seeded.not_fit_because[0]
    secure = AlphaBeta(0.3, d=0.05, domains=DOMAINS).fit_transform(ds)
    assert secure.fit_for_release and not secure.not_fit_because and "os.urandom" in secure.randomness
    from_data = AlphaBeta(0.3, d=0.05, domains={"sex": ["F", "M"]}, data_domains=True).fit_transform(ds)
    assert not from_data.fit_for_release and "age, city was read from the data" in from_data.not_fit_because[0]
    assert from_data.manifest()["domain"]["attributes"][1]["source"] == "data"


def test_domains_from_hierarchies_and_records_outside_the_domain():
    frame = pd.DataFrame({"sex": ["F", "M", "M", "F"], "age": ["21", "22", "22", "31"]})
    ds = veil.Dataset(frame, quasi_identifiers=["sex", "age"],
                      hierarchies={"sex": veil.Hierarchy([["F", "*"], ["M", "*"]])})
    anonymizer = AlphaBeta(0.5, d=0.01, domains={"age": {"min": 20, "max": 29}}, rng=0).fit(ds)
    assert anonymizer.domain_.attributes[0].source == "hierarchy"
    assert anonymizer.n_ == 2 and anonymizer.records_ == 3 and anonymizer.rows_outside_domain_ == 1
    assert "rows_outside" not in json.dumps(anonymizer.transform().manifest())


@pytest.mark.parametrize("build, error, message", [
    (lambda ds: AlphaBeta(0.3, d=0.05).fit(ds), ParameterError, "domain of 'sex' must be public"),
    (lambda ds: AlphaBeta(0.3, d=0.05, domains=DOMAINS, attributes=["sex", "town"]).fit(ds), ColumnError,
     "'town' does not exist"),
    (lambda ds: AlphaBeta(0.3, d=0.05, domains=DOMAINS | {"salary": ["1"]}).fit(ds), ParameterError,
     "'salary', which is not published"),
    (lambda ds: AlphaBeta(0.3, d=0.05, domains=DOMAINS | {"age": "20-29"}).fit(ds), ParameterError,
     "list of values, a range"),
    (lambda ds: AlphaBeta(0.3, d=0.3), ParameterError, "not below gamma"),
    (lambda ds: AlphaBeta(1.5, k=1), ParameterError, "strictly between 0 and 1"),
    (lambda ds: AlphaBeta(0.3, k=0), ParameterError, "k must be positive"),
    (lambda ds: AlphaBeta(0.001, k=5, domains={"sex": ["F", "M"], "age": range(20, 22), "city": ["Oslo"]}).fit(ds),
     ParameterError, "raise gamma or lower k"),
    (lambda ds: AlphaBeta(0.3, d=0.05, domains={n: range(1 << 24) for n in ("age", "city", "salary")}
                          | {"sex": ["F", "M"]}, attributes=["sex", "age", "city", "salary"]).fit(ds),
     ParameterError, "more than 2\\^63"),
    (lambda ds: AlphaBeta(0.3, d=0.05, domains=DOMAINS).transform(ds), ParameterError, "fit"),
])
def test_bad_input_gets_one_sentence(build, error, message):
    with pytest.raises(error, match=message):
        build(people())


def test_a_query_on_the_view_names_what_to_fix():
    view = AlphaBeta(0.3, d=0.05, domains=DOMAINS, rng=1).fit_transform(people())
    with pytest.raises(ColumnError, match="no column 'salary'"):
        view.estimate({"salary": "3"})
    with pytest.raises(ParameterError, match="did you mean 'Rome'"):
        view.estimate({"city": "Roma"})
    answer = view.estimate({"sex": "F", "age": {"min": 25}})
    assert answer.domain_count == 5 * 3 and answer.standard_error > 0


def test_view_and_manifest_are_written_together_and_read_back(tmp_path):
    view = AlphaBeta(0.3, d=0.05, domains=DOMAINS, rng=1).fit_transform(people())
    written = view.write(tmp_path / "view.csv", tmp_path / "view.json", delimiter=";")
    assert [p.name for p in written] == ["view.csv", "view.json"]
    manifest = json.loads((tmp_path / "view.json").read_text())
    assert manifest["algorithm"] == "alphabeta" and manifest["release_kind"] == "αβ view"
    assert manifest["parameters"]["alpha_exact"] == str(view.parameters.alpha)
    assert manifest["domain"]["size"] == 60 and manifest["release"]["file"] == "view.csv"
    assert manifest["fit_for_release"] is False
    again = AlphaBetaView.read(tmp_path / "view.csv", tmp_path / "view.json")
    assert np.array_equal(again.codes, view.codes) and again.parameters == view.parameters
    query = {"city": "Oslo"}
    assert again.estimate(query) == view.estimate(query)
    # a view edited after publishing no longer matches its manifest
    (tmp_path / "view.csv").write_text((tmp_path / "view.csv").read_text().replace("Oslo", "Rome", 1))
    with pytest.raises(DataError, match="does not match its manifest"):
        AlphaBetaView.read(tmp_path / "view.csv", tmp_path / "view.json")
    with pytest.raises(veil.VeilError, match="input of this run"):
        view.write(tmp_path / "out.csv", tmp_path / "m.json", reads=[tmp_path / "m.json"])
    assert not (tmp_path / "out.csv").exists()


def test_theorem_3_3_warning_is_published_only_when_n_is_already_disclosed():
    wide = DOMAINS | {"age": range(0, 100_000)}
    given_d = AlphaBeta(0.5, d=0.1, domains=wide, rng=1).fit(people())
    assert "Theorem 3.3" in given_d.warnings_[0] and not given_d.notes_
    assert "Theorem 3.3" not in json.dumps(given_d.transform().manifest(), ensure_ascii=False)
    k = 0.1 * given_d.domain_.size / given_d.n_
    from_k = AlphaBeta(0.5, k=k, domains=wide, rng=1).fit(people())
    assert "Theorem 3.3" in from_k.notes_[0] and "disclose n" in from_k.notes_[1] and not from_k.warnings_
    assert AlphaBeta(0.5, d=1e-6, domains=wide).fit(people()).warnings_ == ()
