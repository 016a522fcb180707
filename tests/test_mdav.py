"""Tests of MDAV microaggregation (veil.anonymize.MDAV).

1. The grouping, by property tests on random small tables (numeric with and without missing
   values, decimal, nominal and ordinal quasi-identifiers, many duplicates): it equals a
   record-by-record implementation of the textbook loop with ties to the earlier row; groups hold
   k to 2k − 1 records and cover every record once; the distance tables equal distances in the
   explicit standardized space (z-scores, one-hot / √2).
2. The release: published values are the group means (rounded as documented) and modes; cells
   hold the group's values; rows keep the input's order; the manifest lists every group.
3. Models beyond k: random ℓ-diversity, t-closeness, δ-disclosure, β-likeness and (α,k) models
   are satisfied by every release (merged groups may exceed 2k − 1), or the fit refuses when the
   whole table fails; suppression within the limit.
4. Hand-checked tiny examples (one-dimensional points, k = 3; ties).
5. Missing values: imputation for distances, published means over the known values; refusal.
6. Bad input, and ``veil anonymize`` with ``examples/adult-mdav.yaml``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veil import (AlphaKAnonymity, BetaLikeness, ColumnError, Dataset, DeltaDisclosure, DistinctLDiversity,
                  EntropyLDiversity, EquivalenceClasses, KAnonymity, ParameterError, RecursiveCLDiversity,
                  TCloseness, VeilError, load_adult)
from veil.anonymize import MDAV, InfeasibleError
from veil.anonymize.mdav import _Space, mdav_groups
from veil.cli import app
from veil.config import load_config
from veil.manifests import combined, private_path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adult-mdav.yaml"
PROPERTY = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

runner = CliRunner()


# --------------------------------------------------------------------------------------------
# Random tables

KINDS = ("int", "int_missing", "float", "nominal", "ordinal")
LEVELS = ["low", "mid", "high", "top"]


@st.composite
def tables(draw, min_rows: int = 1, max_rows: int = 40):
    """A small table with 1-4 quasi-identifiers of random kinds, a sensitive column and a row id,
    and the Dataset on it."""
    n = draw(st.integers(min_rows, max_rows))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    data, orders = {"id": np.arange(n)}, {}
    for j, kind in enumerate(kinds):
        name = f"q{j}"
        m = int(rng.integers(1, 6))
        if kind == "int":
            data[name] = rng.integers(0, m * 7, n) // 3
        elif kind == "int_missing":
            values = (rng.integers(0, m * 5, n)).astype(float)
            values[rng.random(n) < 0.25] = np.nan
            data[name] = values
        elif kind == "float":
            data[name] = rng.choice(np.array([0.5, 1.25, 2.0, -3.75, 10.125])[:m], n)
        elif kind == "nominal":
            data[name] = rng.choice(np.array(["a", "b", "c", "d", "e"])[:m], n).astype(object)
        else:
            data[name] = rng.choice(np.array(LEVELS)[: min(m, 4)], n).astype(object)
            orders[name] = LEVELS
    data["s"] = rng.choice(np.array(["flu", "cold", "hiv", "ulcer"])[: int(rng.integers(1, 5))], n).astype(object)
    frame = pd.DataFrame(data)
    qis = [f"q{j}" for j in range(len(kinds))]
    # An ordinal column's order must only list values that occur.
    orders = {name: [v for v in LEVELS if v in set(frame[name])] for name in orders}
    ds = Dataset(frame, quasi_identifiers=qis, sensitive=["s"], orders=orders)
    return frame, ds


@st.composite
def tables_and_k(draw, max_rows: int = 40):
    frame, ds = draw(tables(max_rows=max_rows))
    k = draw(st.integers(1, min(6, len(frame))))
    return frame, ds, k


# --------------------------------------------------------------------------------------------
# 1. The grouping

def reference_groups(space: _Space, k: int) -> np.ndarray:
    """MDAV over the records one by one, as the papers state it, with the library's distance
    tables: ties go to the earlier row; a group is its record and its k − 1 nearest."""
    n = space.n
    joint = space.joint_codes(space.codes)
    width = int(space.offsets[-1])
    alive = np.ones(n, dtype=bool)
    group = np.full(n, -1, dtype=np.int64)
    formed = 0

    def from_centroid():
        counts = np.bincount(space.flat_codes[:, alive].ravel(), minlength=width).astype(float)
        return space.distances(space.centroid_table(counts, int(alive.sum())), joint)

    def from_record(i):
        return space.distances(space.record_table(space.codes[:, i]), joint)

    def farthest(d):
        idx = np.flatnonzero(alive)
        return int(idx[np.argmax(d[idx])])

    def around(i, d):
        nonlocal formed
        idx = np.flatnonzero(alive & (np.arange(n) != i))
        members = np.append(idx[np.argsort(d[idx], kind="stable")][: k - 1], i)
        group[members] = formed
        alive[members] = False
        formed += 1

    while alive.sum() >= 3 * k:
        r = farthest(from_centroid())
        dr = from_record(r)
        around(r, dr)
        s = farthest(dr)
        around(s, from_record(s))
    if alive.sum() >= 2 * k:
        r = farthest(from_centroid())
        around(r, from_record(r))
    group[alive] = formed
    return group


def explicit_embedding(frame: pd.DataFrame, ds: Dataset) -> np.ndarray:
    """The standardized space written out: z-scores (mean-imputed), ranks z-scored, one-hot / √2."""
    blocks = []
    for name in ds.quasi_identifiers:
        col = ds.column(name)
        if col.is_numeric:
            x = pd.to_numeric(frame[name]).to_numpy(dtype=float)
            known = ~np.isnan(x)
            if not known.any():
                blocks.append(np.zeros((len(x), 1)))
                continue
            mean, std = x[known].mean(), x[known].std()
            z = np.where(known, (x - mean) / std if std > 0 else 0.0, 0.0)
            blocks.append(z[:, None])
        elif col.ordered:
            rank = col.codes.astype(float)
            mean, std = rank.mean(), rank.std()
            blocks.append(((rank - mean) / std if std > 0 else rank * 0)[:, None])
        else:
            blocks.append(np.eye(col.cardinality)[col.codes] / math.sqrt(2))
    return np.concatenate(blocks, axis=1)


@PROPERTY
@given(tables_and_k())
def test_grouping_equals_the_record_by_record_loop(case):
    frame, ds, k = case
    space = _Space(ds, [], "impute")
    assert np.array_equal(mdav_groups(space, k), reference_groups(space, k))


@pytest.mark.parametrize("seed", range(6))
def test_grouping_equals_the_loop_on_larger_tables(seed):
    # Larger k and tables with fewer duplicates reach the partition fallback of the search for
    # the nearest records, and the compaction of exhausted tuples.
    rng = np.random.default_rng(seed)
    n = 150 + 30 * seed
    frame = pd.DataFrame({"a": rng.normal(size=n).round(seed % 3), "b": rng.choice(list("abcdefg"), n),
                          "c": rng.integers(0, 5 + 8 * seed, n)})
    ds = Dataset(frame, quasi_identifiers=["a", "b", "c"][: 1 + seed % 3])
    space = _Space(ds, [], "impute")
    for k in (2, 7, 13):
        assert np.array_equal(mdav_groups(space, k), reference_groups(space, k))


def test_progress_is_reported():
    seen = []
    ds = Dataset(pd.DataFrame({"x": np.arange(500)}), quasi_identifiers=["x"])
    MDAV(k=3).fit(ds, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (500, 500) and len(seen) > 10
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


@PROPERTY
@given(tables_and_k())
def test_groups_hold_k_to_2k_minus_1_records_and_cover_every_record_once(case):
    frame, ds, k = case
    raw = mdav_groups(_Space(ds, [], "impute"), k)
    assert raw.shape == (len(frame),) and raw.min() == 0
    sizes = np.bincount(raw)
    assert sizes.sum() == len(frame) and (sizes > 0).all()
    assert sizes.min() >= k and sizes.max() <= max(2 * k - 1, len(frame) if len(frame) < 2 * k else 0)
    # The release's classes are MDAV's groups, merged where their published values coincide:
    # each group lies in one class, and no two classes print alike.
    model = MDAV(k=k).fit(ds)
    groups = model.groups_
    assert len(set(zip(raw.tolist(), groups.tolist()))) == raw.max() + 1
    assert model.result_.groups == raw.max() + 1
    assert model.result_.coincident == raw.max() + 1 - (groups.max() + 1)
    # Classes are numbered by their first row.
    first = [np.flatnonzero(groups == g)[0] for g in range(groups.max() + 1)]
    assert first == sorted(first)
    release = model.transform(ds)
    assert np.array_equal(release.classes.row_class, groups)
    assert release.classes.n_rows == len(frame)
    assert release.data[ds.quasi_identifiers].astype(str).drop_duplicates().shape[0] == groups.max() + 1


@PROPERTY
@given(tables())
def test_distance_tables_equal_distances_in_the_explicit_space(case):
    frame, ds = case
    space = _Space(ds, [], "impute")
    x = explicit_embedding(frame, ds)
    joint = space.joint_codes(space.codes)
    rng = np.random.default_rng(len(frame))
    for i in rng.choice(len(frame), min(3, len(frame)), replace=False):
        got = space.distances(space.record_table(space.codes[:, i]), joint)
        np.testing.assert_allclose(got, ((x - x[i]) ** 2).sum(axis=1), atol=1e-9)
    subset = rng.random(len(frame)) < 0.6
    subset[0] = True
    counts = np.bincount(space.flat_codes[:, subset].ravel(), minlength=int(space.offsets[-1])).astype(float)
    got = space.distances(space.centroid_table(counts, int(subset.sum())), joint)
    np.testing.assert_allclose(got, ((x - x[subset].mean(axis=0)) ** 2).sum(axis=1), atol=1e-9)


# --------------------------------------------------------------------------------------------
# 2. The release

def _round(value: float, decimals: int) -> float:
    scale = 10.0 ** decimals
    return math.copysign(math.floor(abs(value) * scale + 0.5) / scale, value)


@PROPERTY
@given(tables_and_k())
def test_published_values_are_group_means_and_modes(case):
    frame, ds, k = case
    model = MDAV(k=k).fit(ds)
    release = model.transform(ds)
    # The rows are shuffled: put them back in the input's order by the id they publish.
    out = release.data.sort_values("id").reset_index(drop=True)
    groups = model.groups_
    assert list(out["id"]) == list(frame["id"])  # every record once, none invented
    assert list(out["s"]) == list(frame["s"])
    manifest_groups = release.manifest["recoding"]["groups"]
    assert len(manifest_groups) == len(np.unique(groups))
    for name in ds.quasi_identifiers:
        col = ds.column(name)
        j = ds.quasi_identifiers.index(name)
        cells = release.classes.cells(j)
        for g in range(groups.max() + 1):
            members = frame[name][groups == g]
            published = set(out[name][groups == g])
            assert len(published) == 1
            label = published.pop()
            assert manifest_groups[g]["size"] == len(members)
            # The cell covers exactly the values the group holds.
            lo, hi = cells._sets[0][g], cells._sets[0][g + 1]
            assert sorted(cells._sets[1][lo:hi]) == sorted(set(col.codes[groups == g]))
            if col.is_numeric:
                known = pd.to_numeric(members).dropna()
                if known.empty:
                    assert label == "" and manifest_groups[g][name] is None
                    assert math.isnan(model.centroids_.loc[g, name])
                    continue
                mean = float(known.mean())
                assert model.centroids_.loc[g, name] == pytest.approx(mean, rel=1e-12, abs=1e-12)
                whole = bool((known == np.floor(known)).all()) and bool(
                    (pd.to_numeric(frame[name]).dropna() % 1 == 0).all())
                decimals = 0 if whole else 3
                assert float(label) == pytest.approx(_round(mean, decimals), abs=1e-9)
                assert manifest_groups[g][name] == pytest.approx(_round(mean, decimals), abs=1e-9)
            else:
                counts = members.fillna("").astype(str).value_counts()
                top = counts.max()
                tied = [v for v in col.labels if counts.get(str(v), 0) == top]
                assert label == tied[0]  # ties go to the value first in the column's order
                assert model.centroids_.loc[g, name] == label
                assert manifest_groups[g][name] == label


def test_shuffle_permutes_rows_and_keeps_each_row_with_its_group():
    frame = pd.DataFrame({"age": np.arange(40), "id": np.arange(40)})
    ds = Dataset(frame, quasi_identifiers=["age"])
    kept = MDAV(k=4).fit_transform(ds, shuffle=False).data
    shuffled = MDAV(k=4).fit_transform(ds, rng=7).data
    assert list(kept["id"]) == list(range(40))
    assert list(shuffled["id"]) != list(range(40))
    assert shuffled.sort_values("id").reset_index(drop=True).equals(kept)


def test_polars_in_polars_out():
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"age": [20, 21, 22, 40, 41, 42], "sex": ["m", "f", "m", "f", "f", "m"]})
    release = MDAV(k=3).fit_transform(Dataset(frame, quasi_identifiers=["age", "sex"]))
    assert isinstance(release.data, pl.DataFrame)
    assert sorted(release.data["age"].to_list()) == ["21", "21", "21", "41", "41", "41"]


# --------------------------------------------------------------------------------------------
# 3. Models beyond k-anonymity

MODEL_MAKERS = [
    lambda d: DistinctLDiversity(d.draw(st.integers(1, 3))),
    lambda d: EntropyLDiversity(d.draw(st.floats(1.0, 3.0))),
    lambda d: RecursiveCLDiversity(d.draw(st.floats(0.5, 4.0)), d.draw(st.integers(1, 3))),
    lambda d: TCloseness(d.draw(st.floats(0.05, 0.6))),
    lambda d: DeltaDisclosure(d.draw(st.floats(0.3, 3.0))),
    lambda d: BetaLikeness(d.draw(st.floats(0.3, 3.0)), enhanced=d.draw(st.booleans())),
    lambda d: AlphaKAnonymity(d.draw(st.floats(0.3, 1.0)), k=d.draw(st.integers(1, 4))),
]


@PROPERTY
@given(tables_and_k(max_rows=60), st.data())
def test_every_release_satisfies_its_models(case, data):
    frame, ds, k = case
    makers = data.draw(st.lists(st.sampled_from(range(len(MODEL_MAKERS))), min_size=1, max_size=3, unique=True))
    models = [KAnonymity(k)] + [MODEL_MAKERS[i](data) for i in makers]
    limit = data.draw(st.sampled_from([0.0, 0.0, 0.1, 0.3]))
    whole = EquivalenceClasses.from_partition(ds, np.zeros(len(frame), dtype=np.int64),
                                              np.zeros((1, len(ds.quasi_identifiers))),
                                              [ds_cells(ds, j) for j in range(len(ds.quasi_identifiers))])
    feasible = all(m.evaluate(whole).passed for m in models)
    k_needed = max([k] + [m.k for m in models if isinstance(m, AlphaKAnonymity) and m.k])
    anonymizer = MDAV(models, k=k_needed, suppression_limit=limit)
    if k_needed > len(frame):
        with pytest.raises(ParameterError, match="larger than the table"):
            anonymizer.fit(ds)
        return
    if not feasible:
        with pytest.raises(InfeasibleError):
            anonymizer.fit(ds)
        return
    release = anonymizer.fit_transform(ds)
    released = release.released_classes
    assert released.n_classes >= 1
    for model in models:
        assert model.evaluate(released).passed, model
    assert released.sizes.min() >= k_needed
    assert release.suppressed_records <= math.floor(limit * len(frame) + 1e-9)
    assert len(release.data) == len(frame) - release.suppressed_records
    # Merging only ever joins whole MDAV groups.
    plain = MDAV(k=k_needed).fit(ds).groups_
    pairs = pd.DataFrame({"plain": plain, "merged": anonymizer.groups_}).drop_duplicates()
    assert pairs["plain"].is_unique


def ds_cells(ds: Dataset, j: int):
    from veil.cells import Cells

    col = ds.column(ds.quasi_identifiers[j])
    return Cells.from_sets(col, np.array([0, col.cardinality]), np.arange(col.cardinality), np.array(["*"]))


def test_merging_lets_groups_grow_beyond_2k_minus_1():
    # Neighbouring records share their disease, so the groups of 2 must merge to be 2-diverse.
    frame = pd.DataFrame({"age": np.arange(20), "s": ["flu"] * 4 + ["cold"] * 4 + ["hiv"] * 12})
    ds = Dataset(frame, quasi_identifiers=["age"], sensitive=["s"])
    model = MDAV([KAnonymity(2), DistinctLDiversity(2)]).fit(ds)
    sizes = np.bincount(model.groups_)
    assert model.result_.merge_rounds >= 1 and sizes.max() > 3
    release = model.transform(ds)
    assert DistinctLDiversity(2).evaluate(release.released_classes).passed
    assert release.private_manifest["recoding"]["merge_rounds"] == model.result_.merge_rounds
    assert "merge_rounds" not in release.manifest["recoding"]


def test_failing_groups_are_suppressed_within_the_limit_fewest_records_first():
    frame = pd.DataFrame({"age": np.arange(12), "s": ["a", "b", "a", "b", "a", "b", "c", "c", "c", "d", "a", "d"]})
    ds = Dataset(frame, quasi_identifiers=["age"], sensitive=["s"])
    # k = 3: groups {0,1,2} {9,10,11} {3,4,5} {6,7,8}; only {6,7,8} (all c) fails 2-diversity.
    merged = MDAV([KAnonymity(3), DistinctLDiversity(2)]).fit_transform(ds)
    assert merged.suppressed_records == 0
    suppressed = MDAV([KAnonymity(3), DistinctLDiversity(2)], suppression_limit=0.25).fit_transform(ds)
    assert suppressed.suppressed_records == 3
    assert sorted(suppressed.data["age"], key=int) == ["1", "1", "1", "4", "4", "4", "10", "10", "10"]
    assert "c" not in set(suppressed.data["s"])
    starred = MDAV([KAnonymity(3), DistinctLDiversity(2)], suppression_limit=0.25).fit_transform(ds, suppressed="star")
    assert len(starred.data) == 12 and ((starred.data["age"] == "*") == (starred.data["s"] == "c")).all()
    groups = starred.manifest["recoding"]["groups"]
    assert len(groups) == 3 and [g["age"] for g in groups] == [1, 4, 10]  # no values of suppressed groups


# --------------------------------------------------------------------------------------------
# 4. Hand-checked examples

def one_column(values, k, **options):
    frame = pd.DataFrame({"x": values, "row": range(len(values))})
    ds = Dataset(frame, quasi_identifiers=["x"])
    model = MDAV(k=k, **options).fit(ds)
    groups = [sorted(frame["x"][model.groups_ == g]) for g in range(model.groups_.max() + 1)]
    return model, ds, groups


def test_ten_points_k3_worked_by_hand():
    # Mean 12. r = 35 (23 away); its 2 nearest are 21 and 20. s = farthest from 35 among the
    # rest: 1; its 2 nearest are 2 and 4. Four records are left (< 2k = 6): one group.
    values = [13, 35, 1, 20, 5, 2, 21, 7, 12, 4]
    model, ds, groups = one_column(values, 3)
    assert sorted(map(tuple, groups)) == [(1, 2, 4), (5, 7, 12, 13), (20, 21, 35)]
    out = model.transform(ds).data.sort_values("row")  # back in the input's order
    # Means 76/3, 7/3 and 37/4, rounded to whole numbers (the column is integral).
    expected = {13: "9", 35: "25", 1: "2", 20: "25", 5: "9", 2: "2", 21: "25", 7: "9", 12: "9", 4: "2"}
    assert list(out["x"]) == [expected[v] for v in values]
    assert list(out["row"]) == list(range(10))
    model1, ds1, _ = one_column(values, 3, decimals=2)
    assert sorted(set(model1.transform(ds1).data["x"])) == ["2.33", "25.33", "9.25"]


def test_eight_points_k3_two_groups_after_the_loop():
    # 8 < 3k: mean 73/8 = 9.125; r = 30, with 12 and 11; the other 5 form the last group.
    model, _, groups = one_column([0, 1, 3, 6, 10, 11, 12, 30], 3)
    assert groups == [[0, 1, 3, 6, 10], [11, 12, 30]]


def test_ties_go_to_the_earlier_row():
    model, ds, _ = one_column([5] * 7, 2)
    # r = row 0 with row 1; s = row 2 with row 3; 3 left (< 2k = 4): one group.
    assert list(mdav_groups(_Space(ds, [], "impute"), 2)) == [0, 0, 1, 1, 2, 2, 2]
    # Every group publishes 5, so the release holds one class.
    assert list(model.groups_) == [0] * 7 and model.result_.coincident == 2
    frame = pd.DataFrame({"c": ["a", "b", "a", "b", "a", "b"]})
    ds = Dataset(frame, quasi_identifiers=["c"])
    assert list(mdav_groups(_Space(ds, [], "impute"), 2)) == [0, 1, 0, 1, 2, 2]
    # The last group's mode is a (a tie, to the value first in order), like the first group's.
    assert list(MDAV(k=2).fit(ds).groups_) == [0, 1, 0, 1, 0, 0]


def test_half_rounds_away_from_zero():
    model, ds, _ = one_column([36, 37, 38, 39], 4)  # mean 37.5
    assert set(model.transform(ds).data["x"]) == {"38"}
    model, ds, _ = one_column([-36, -37, -38, -39], 4)
    assert set(model.transform(ds).data["x"]) == {"-38"}
    model, ds, _ = one_column([0.5, 1.0, 1.25], 3)  # 0.91666… with 3 decimals
    assert set(model.transform(ds).data["x"]) == {"0.917"}


def test_nominal_option_publishes_the_mode_of_a_numeric_code():
    frame = pd.DataFrame({"zip": [13053, 13053, 13068, 14850, 14850, 14853]})
    ds = Dataset(frame, quasi_identifiers=["zip"])
    out = MDAV(k=3, nominal=["zip"]).fit_transform(ds).data
    assert set(out["zip"]) <= {"13053", "14850"}
    assert MDAV(k=3, nominal="zip").fit(ds).transform(ds).private_manifest["recoding"]["standardization"]["zip"] == \
        {"kind": "nominal", "mismatch": 1.0}


# --------------------------------------------------------------------------------------------
# 5. Missing values

def test_missing_numbers_are_imputed_for_distances_and_published_with_the_group_mean():
    frame = pd.DataFrame({"age": [20, 21, np.nan, 60, 61, 62], "sex": ["m", "m", "m", "f", "f", "f"]})
    ds = Dataset(frame, quasi_identifiers=["age", "sex"])
    model = MDAV(k=3).fit(ds)
    out = model.transform(ds).data
    # The mean of 20 and 21 is 20.5 → 21.
    assert sorted(zip(out["sex"], out["age"])) == [("f", "61")] * 3 + [("m", "21")] * 3
    assert model.centroids_.loc[0, "age"] == 20.5
    manifest = model.transform(ds).private_manifest["recoding"]
    assert manifest["standardization"]["age"]["missing"] == 1
    assert manifest["missing"] == "impute"


def test_a_group_without_any_number_is_published_as_missing():
    # z-scores: 30 → −1, 31 → +1, missing → 0. The farthest from the centroid is row 2 (30, f),
    # grouped with row 3; the farthest from it is row 4 (31, f: 4 away; the missing ones are 1 + 1
    # away), grouped with row 5; rows 0 and 1 are left, without any age.
    frame = pd.DataFrame({"age": [np.nan, np.nan, 30.0, 30.0, 31.0, 31.0], "sex": ["m", "m", "f", "f", "f", "f"]})
    ds = Dataset(frame, quasi_identifiers=["age", "sex"])
    release = MDAV(k=2).fit_transform(ds)
    assert sorted(zip(release.data["sex"], release.data["age"])) == [("f", "30"), ("f", "30"), ("f", "31"),
                                                                     ("f", "31"), ("m", ""), ("m", "")]
    assert release.manifest["recoding"]["groups"][0]["age"] is None


def test_missing_numbers_refused_when_asked():
    frame = pd.DataFrame({"age": [20, None, 22, 23], "sex": ["m", "f", "m", "f"]})
    ds = Dataset(frame, quasi_identifiers=["age", "sex"])
    with pytest.raises(ParameterError, match="'age' has 1 missing value;"):
        MDAV(k=2, missing="refuse").fit(ds)


# --------------------------------------------------------------------------------------------
# 6. Bad input

@pytest.fixture
def small() -> Dataset:
    frame = pd.DataFrame({"age": [20, 30, 40, 50, 60], "sex": ["m", "f", "m", "f", "m"],
                          "s": ["a", "a", "a", "a", "b"]})
    return Dataset(frame, quasi_identifiers=["age", "sex"], sensitive=["s"])


def test_k_larger_than_the_table(small):
    with pytest.raises(ParameterError, match="k = 6 is larger than the table's 5 records"):
        MDAV(k=6).fit(small)


def test_a_model_no_grouping_can_satisfy_is_named(small):
    with pytest.raises(InfeasibleError, match="entropy ℓ-diversity of 's' at 2: even the whole table"):
        MDAV([KAnonymity(2), EntropyLDiversity(2)]).fit(small)
    assert issubclass(InfeasibleError, VeilError)


@pytest.mark.parametrize("kwargs, match", [
    ({}, "give k, or a k-anonymity model"),
    ({"k": 0}, "k must be a whole number of at least 1"),
    ({"k": 2.5}, "k must be a whole number"),
    ({"models": [KAnonymity(4)], "k": 3}, "k = 3 is below the 4 a k-anonymity model asks for"),
    ({"models": [EntropyLDiversity()], "k": 3}, "needs a threshold"),
    ({"k": 2, "suppression_limit": 1.0}, r"\[0, 1\)"),
    ({"k": 2, "missing": "drop"}, "'impute'd or 'refuse'd"),
    ({"k": 2, "decimals": -1}, "decimals must be a whole number of at least 0"),
    ({"k": 2, "decimals": {"age": 1.5}}, "decimals for column 'age'"),
    ({"k": 2, "metric": "losss"}, "did you mean 'loss'"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        MDAV(**kwargs)


def test_k_defaults_to_the_largest_model_k(small):
    assert MDAV([KAnonymity(2), AlphaKAnonymity(1.0, k=3)]).k == 3
    assert [m.name for m in MDAV(k=2).release_models] == ["k-anonymity"]


def test_column_options_on_the_wrong_columns(small):
    with pytest.raises(ParameterError, match="decimals were given for 'sex', which is a text column"):
        MDAV(k=2, decimals={"sex": 1}).fit(small)
    with pytest.raises(ParameterError, match="which is listed as nominal"):
        MDAV(k=2, decimals={"age": 1}, nominal=["age"]).fit(small)
    with pytest.raises(ColumnError, match="nominal lists 's', which is not a quasi-identifier"):
        MDAV(k=2, nominal=["s"]).fit(small)
    with pytest.raises(ColumnError, match="decimals were given for 'nope'"):
        MDAV(k=2, decimals={"nope": 1}).fit(small)


def test_transform_needs_the_fitted_table(small):
    with pytest.raises(ParameterError, match="call fit before transform"):
        MDAV(k=2).transform(small)
    model = MDAV(k=2).fit(small)
    other = Dataset(pd.DataFrame({"age": [1, 2, 3], "sex": ["m", "f", "m"]}), quasi_identifiers=["age", "sex"])
    with pytest.raises(ParameterError, match="it has 3 records, the groups were made for 5"):
        model.transform(other)


def test_a_model_needing_a_sensitive_column_without_one():
    ds = Dataset(pd.DataFrame({"age": [1, 2, 3, 4]}), quasi_identifiers=["age"])
    with pytest.raises(ParameterError, match="needs a sensitive column"):
        MDAV([KAnonymity(2), DistinctLDiversity(2)]).fit(ds)


# --------------------------------------------------------------------------------------------
# The example configuration and the command line

def test_adult_k5_groups_and_manifest():
    ds = load_adult()
    model = MDAV(k=5).fit(ds)
    raw = np.bincount(mdav_groups(_Space(ds, [], "impute"), 5))
    assert raw.min() == 5 and raw.max() <= 9
    assert model.result_.groups == len(raw) and model.result_.suppressed_records == 0
    # Groups whose rounded mean age and modes coincide are one class of the published table.
    sizes = np.bincount(model.groups_)
    assert model.result_.classes == len(sizes) == len(raw) - model.result_.coincident < len(raw)
    release = model.transform(ds)
    assert release.data[ds.quasi_identifiers].drop_duplicates().shape[0] == len(sizes)
    assert release.private_manifest["metrics"]["discernibility"] == int((sizes.astype(np.int64) ** 2).sum())


def test_example_config_runs_through_veil_anonymize(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(REPO)
    cfg = load_config(EXAMPLE)
    assert cfg.algorithm.name == "mdav" and cfg.algorithm.options["k"] == 5
    out, manifest_path = tmp_path / "out.csv", tmp_path / "m.json"
    result = runner.invoke(app, ["anonymize", "--config", "examples/adult-mdav.yaml", "--out", str(out),
                                 "--manifest", str(manifest_path)])
    assert result.exit_code == 0, result.output
    published = json.loads(manifest_path.read_text(encoding="utf-8"))
    # the standardization is the input's: the curator's private file holds it, the manifest does not
    assert "standardization" not in published["recoding"] and "metrics" not in published
    manifest = combined(published, json.loads(private_path(manifest_path).read_text(encoding="utf-8")))
    assert manifest["algorithm"] == "mdav"
    assert manifest["output"]["rows"] == 30_162 and manifest["suppression"]["records"] == 0
    assert manifest["models"][0]["passed"] and manifest["models"][0]["level"] >= 5
    recoding = manifest["recoding"]
    assert recoding["standardization"]["age"]["kind"] == "numeric"
    assert recoding["standardization"]["sex"] == {"kind": "nominal", "mismatch": 1.0}
    assert sum(g["size"] for g in recoding["groups"]) == 30_162
    assert {"loss", "discernibility", "aecs"} <= set(manifest["metrics"])
    table = pd.read_csv(out, sep=";")
    assert list(table.columns) == ["sex", "age", "race", "marital-status", "education", "native-country",
                                   "workclass", "occupation", "salary-class"]
    original = pd.read_csv(REPO / "src" / "veil" / "resources" / "adult" / "adult.csv", sep=";")
    # The same records, shuffled with the secure source.
    assert manifest["output"]["order"] == "secure shuffle"
    assert sorted(table["occupation"]) == sorted(original["occupation"])
    assert list(table["occupation"]) != list(original["occupation"])
    assert table.groupby(["sex", "age", "race", "marital-status", "education", "native-country",
                          "workclass"]).size().min() >= 5


def test_config_options(tmp_path: Path):
    text = EXAMPLE.read_text(encoding="utf-8").replace("../src/", str(REPO / "src") + "/")
    text = text.replace("  # decimals: 1 ", "  decimals: {age: 1}\n  nominal: [education]  #", 1)
    config = tmp_path / "options.yaml"
    config.write_text(text, encoding="utf-8")
    anonymizer = load_config(config).anonymizer()
    assert isinstance(anonymizer, MDAV)
    assert anonymizer.k == 5 and anonymizer.decimals == {"age": 1} and anonymizer.nominal == ["education"]
    assert anonymizer.missing == "impute"  # the default


@pytest.mark.parametrize("edit, needle", [
    ("  k: 5                           # the group size", "k = 40000 is larger than the table's 30162 records"),
    ("  missing: impute", "algorithm.missing cannot be 'skip'"),
])
def test_bad_config_exits_2_and_writes_nothing(tmp_path: Path, edit: str, needle: str):
    text = EXAMPLE.read_text(encoding="utf-8").replace("../src/", str(REPO / "src") + "/")
    if "k: 5" in edit:
        text = text.replace("  k: 5 ", "  k: 40000 ", 1)
    else:
        text = text.replace("  missing: impute", "  missing: skip", 1)
    config = tmp_path / "bad.yaml"
    config.write_text(text, encoding="utf-8")
    out = tmp_path / "out.csv"
    result = runner.invoke(app, ["anonymize", "--config", str(config), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert needle in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]
