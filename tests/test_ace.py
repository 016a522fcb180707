"""Ace (Xiao, Tao and Koudas, TODS 2010): the seed's eight people step by step, ℓ-diverse output
with no record lost, Split blind to which value a group holds, and the minimality attack finding
no one above 1/ℓ.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil import Dataset, builders
from veil.anonymize import Ace, InfeasibleError
from veil.anonymize.ace import _local_groups, assign_rounds, split
from veil.attacks.minimality import MinimalityAttack
from veil.attacks.recoding_publishers import AceProcess
from veil.errors import ColumnError, ParameterError
from veil.models import DistinctLDiversity, EntropyLDiversity, KAnonymity, TCloseness

from helpers import one_sentence_error

PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = "Ann Bob Cate Don Ed Fred Gill Hera".split()


def eight_people() -> Dataset:
    """The seed's Ace example (slides 36-51): ages, ZIP codes and diseases."""
    frame = pd.DataFrame({"name": NAMES, "age": [21, 27, 32, 32, 54, 60, 60, 60],
                          "zip": [10000, 18000, 35000, 35000, 60000, 63000, 63000, 63000],
                          "disease": "dyspepsia flu gastritis bronchitis flu gastritis dyspepsia diabetes".split()})
    return Dataset(frame, quasi_identifiers=["age", "zip"], sensitive="disease", identifying="name")


def members(labels: np.ndarray) -> list[set[str]]:
    return sorted(({NAMES[i] for i in np.flatnonzero(labels == b)} for b in np.unique(labels)), key=sorted)


def test_eight_people_step_by_step():
    ds = eight_people()
    outcomes = set()
    for seed in range(12):
        ace = Ace(l=2, rng=seed).fit(ds)
        # Assign, 1st round β = 2, α = 2 (the two most frequent values, ties to the first value);
        # 2nd and 3rd rounds β = 2, α = 1.
        assert ace.rounds_ == [(["dyspepsia", "flu"], 2), (["gastritis", "bronchitis"], 1),
                               (["diabetes", "gastritis"], 1)]
        intermediate = members(ace.intermediate_)
        assert {"Ann", "Bob", "Ed", "Gill"} in intermediate
        # Which gastritis patient joins Don is Assign's random draw.
        with_don = next(b for b in intermediate if "Don" in b)
        outcomes.add(frozenset(with_don))
        # Split: the α = 2 bucket becomes {Ann, Bob} and {Ed, Gill}, one dyspepsia and one flu
        # each; the others hold one tuple per value already.
        final = members(ace.partition_)
        assert {"Ann", "Bob"} in final and {"Ed", "Gill"} in final and with_don in final
        if with_don == {"Don", "Fred"}:
            # The slides' intermediate generalization: {Don, Fred} and {Hera, Cate}.
            assert {"Cate", "Hera"} in intermediate
            # The names are identifying (not published): people are found by their row, so the
            # input's order is kept.
            release = ace.transform(ds, shuffle=False)
            shown = release.data.assign(name=NAMES).set_index("name")
            assert shown.loc["Ann", ["age", "zip"]].tolist() == ["[21-27]", "[10000-18000]"]
            assert shown.loc["Gill", ["age", "zip"]].tolist() == ["[54-60]", "[60000-63000]"]
            # {Don, Fred} and {Cate, Hera} print alike, [32-60] [35000-63000]: one class of four.
            assert shown.loc["Hera", ["age", "zip"]].tolist() == ["[32-60]", "[35000-63000]"]
            assert release.manifest["classes"] == {"released": 3, "smallest": 2}
    assert outcomes == {frozenset({"Don", "Fred"}), frozenset({"Don", "Cate"})}


def test_eight_people_posteriors_are_at_most_one_half():
    # Lemma 1 (slide 47): P[Ann has dyspepsia | I(Int, A), Int] = 1/2; after Split too (Lemma 2).
    ds = eight_people()
    release = Ace(l=2, rng=3).fit_transform(ds)
    population = Dataset(ds.table.data.select(["age", "zip"]), quasi_identifiers=["age", "zip"])
    attack = MinimalityAttack(AceProcess(2)).fit(release, population)
    assert attack.exact_ and attack.exceeding_ == 0
    dyspepsia = list(attack.values_).index("dyspepsia")
    assert attack.posterior_[NAMES.index("Ann"), dyspepsia] == pytest.approx(0.5)
    assert attack.posterior_.max() <= 0.5 + 1e-12


@st.composite
def tables(draw, max_n=40):
    n = draw(st.integers(2, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    m = draw(st.integers(2, 6))
    values = np.array([f"v{i}" for i in range(m)], dtype=object)[rng.integers(0, m, n)]
    if rng.random() < 0.2:
        values[rng.random(n) < 0.1] = None
    age = rng.integers(20, 20 + int(draw(st.integers(1, 40))), n).astype(float)
    zip_codes = np.array(["130", "131", "140", "141", "200"], dtype=object)[rng.integers(0, 5, n)]
    return pd.DataFrame({"age": age, "zip": zip_codes, "sex": rng.choice(["F", "M"], n), "s": values,
                         "row": [f"r{i}" for i in range(n)]})


def _dataset(frame):
    zips = builders.masking(sorted(set(frame["zip"])))
    return Dataset(frame, quasi_identifiers=["age", "zip", "sex"], sensitive="s",
                   hierarchies={"zip": zips, "sex": builders.flat(frame["sex"])})


@settings(max_examples=80, **PROPERTY)
@given(tables(), st.integers(1, 5), st.sampled_from(["hierarchy", "order"]), st.integers(0, 2 ** 32 - 1))
def test_every_release_is_l_diverse_and_keeps_every_record(frame, l, categorical, seed):
    before = frame.copy(deep=True)
    ds = _dataset(frame)
    try:
        ace = Ace(l=l, categorical=categorical, rng=seed).fit(ds)
    except InfeasibleError:
        counts = ds.column("s").counts()
        assert l * counts.max() > len(frame)
        return
    # Every final bucket holds one tuple of each of β ≥ ℓ values.
    codes = ds.column("s").codes
    for b in np.unique(ace.partition_):
        held = codes[ace.partition_ == b]
        assert len(np.unique(held)) == len(held) >= l
    release = ace.transform(ds)
    for row in release.manifest["models"]:
        assert row["passed"] and row["level"] >= l
    # Each published class (buckets printing alike merge) holds no value above 1/ℓ of it.
    counts = release.released_classes.counts("s")
    assert (counts.max(axis=1) * l <= counts.sum(axis=1)).all()
    # Back in the input's order by the row number each published row carries.
    out = release.data.sort_values("row", key=lambda row: row.str[1:].astype(int)).reset_index(drop=True)
    assert out["row"].tolist() == frame["row"].tolist()
    assert out["s"].fillna("").tolist() == frame["s"].fillna("").tolist()
    assert release.suppressed_records == 0
    assert release.manifest["recoding"]["fit_for_release"] is False
    pd.testing.assert_frame_equal(frame, before)


@settings(max_examples=60, **PROPERTY)
@given(tables(max_n=60), st.integers(2, 4), st.integers(0, 2 ** 32 - 1))
def test_split_does_not_see_which_value_a_group_holds(frame, l, seed):
    # Relabel the values inside every bucket Assign made (a random permutation of the bucket's
    # values, as in the paper's Lemma 2): Split makes exactly the same buckets.
    ds = _dataset(frame)
    try:
        ace = Ace(l=l, rng=seed).fit(ds)
    except InfeasibleError:
        return
    codes = ds.column("s").codes.astype(np.int64)
    rng = np.random.default_rng(seed)
    relabeled = codes.copy()
    for b in np.unique(ace.intermediate_):
        rows = np.flatnonzero(ace.intermediate_ == b)
        held = np.unique(codes[rows])
        mapping = dict(zip(held.tolist(), rng.permutation(held).tolist()))
        relabeled[rows] = [mapping[c] for c in codes[rows].tolist()]
    dims = ace._dimensions(ds)
    ranks = np.stack([dim.rank[dim.column.codes] for dim in dims]).astype(np.int32)
    alpha = np.array([a for _, a in assign_rounds(ds.column("s").counts(), l)], dtype=np.int64)
    again, _ = split(ranks, dims, ace.intermediate_, _local_groups(ace.intermediate_, relabeled), alpha)
    assert np.array_equal(again, ace.partition_)


@settings(max_examples=25, **PROPERTY)
@given(tables(max_n=7), st.integers(2, 3), st.integers(0, 2 ** 32 - 1))
def test_the_minimality_attack_finds_no_one_above_one_over_l(frame, l, seed):
    ds = _dataset(frame.assign(s=frame["s"].fillna("none")))
    try:
        release = Ace(l=l, rng=seed).fit_transform(ds)
    except InfeasibleError:
        return
    population = Dataset(frame[["age", "zip", "sex"]], quasi_identifiers=["age", "zip", "sex"],
                         hierarchies={q: ds.hierarchies[q] for q in ("zip", "sex")})
    attack = MinimalityAttack(AceProcess(l)).fit(release, population)
    assert attack.exact_
    assert attack.posterior_.max() <= 1 / l + 1e-12
    assert attack.exceeding_ == 0


def test_models_give_l_and_are_checked_on_the_release():
    ds = eight_people()
    # ℓ from the models: entropy 1.5 asks for Ace's ℓ = 2, and k = 2 holds on buckets of two.
    ace = Ace([EntropyLDiversity(1.5), KAnonymity(2)], rng=2).fit(ds)
    assert ace.l_ == 2 and ace.sensitive_ == "disease"
    rows = ace.transform(ds).manifest["models"]
    assert [(r["key"], r["passed"]) for r in rows] == [("l_entropy", True), ("k", True), ("l_distinct", True)]
    assert Ace([DistinctLDiversity(2)], rng=2).fit(ds).transform(ds).manifest["models"][0]["key"] == "l_distinct"
    # A model Ace does not guarantee is checked, and its failure named.
    one_sentence_error(InfeasibleError, lambda: Ace([TCloseness(0.01)], l=2, rng=2).fit(ds), "t-closeness",
                       "transparent ℓ-diversity only")


def test_bad_input():
    ds = eight_people()
    one_sentence_error(InfeasibleError, lambda: Ace(l=6).fit(ds), "ℓ = 6", "holds only 5 distinct", "at most ℓ = 4")
    one_sentence_error(InfeasibleError, lambda: Ace(l=5).fit(ds), "'dyspepsia' holds 2 of the 8", "at most ℓ = 4")
    skewed = Dataset(pd.DataFrame({"q": range(6), "s": list("aaaabc")}), quasi_identifiers=["q"], sensitive="s")
    one_sentence_error(InfeasibleError, lambda: Ace(l=2).fit(skewed), "'a' holds 4 of the 6 records", "at most ℓ = 1")
    one_sentence_error(ParameterError, lambda: Ace(l=2.5), "whole number")
    one_sentence_error(ParameterError, lambda: Ace([KAnonymity(2)]), "needs ℓ")
    one_sentence_error(ParameterError, lambda: Ace(l=0), "whole number")
    two = Dataset(pd.DataFrame({"q": [1, 2], "s": ["a", "b"], "t": ["x", "y"]}), quasi_identifiers=["q"],
                  sensitive=["s", "t"])
    one_sentence_error(ColumnError, lambda: Ace(l=2).fit(two), "declares 2", "name the one")
    one_sentence_error(ColumnError, lambda: Ace(l=2, sensitive="q").fit(two), "'q'", "not a sensitive column")
    one_sentence_error(ParameterError, lambda: Ace(l=2).transform(ds), "call fit")
