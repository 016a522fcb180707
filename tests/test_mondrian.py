"""Tests of Mondrian multidimensional partitioning (veil.anonymize.Mondrian).

1. Properties, on random small tables (numeric quasi-identifiers with and without missing
   values, categorical ones with a hierarchy (some without a single root), without one, and with
   a given order; one or two sensitive columns) and random combinations of k-anonymity,
   (α,k)-anonymity, the ℓ-diversity family, the t-closeness family, δ-disclosure and β-likeness,
   in both modes and both ways of splitting categorical columns:
   * every release satisfies its models, or the whole table fails one and fit says which;
   * every record lies in its class's box, and every box is tight: the range of its records'
     values, the set of their values, or their lowest common hierarchy node (in relaxed mode
     too, so the bounds are recomputed from the records after each split);
   * strict partitions never overlap and cover every record;
   * the published rows keep the input's order, and grouping them by their published
     quasi-identifiers gives back exactly the classes (so a checker reading the table agrees);
   * the information loss is no worse than the all-in-one class, and (strict, numeric columns)
     no worse than the single median cut on the widest column when that cut is allowed.
2. Hand-checked examples: Li et al.'s t-closeness table with k = 3 (strict and relaxed); missing
   values split off like an extreme value; relaxed ties, overlapping boxes and merged classes; a
   merged relaxed class failing δ-disclosure collapsed into its split-tree ancestor; the
   hierarchy split on Adult.
3. The release object: manifest boxes, shuffling, polars in and out.
4. Bad input: k above the row count, a model the whole table fails (named), allow_single_class,
   unknown columns, options and modes, transform misuse.
5. The configuration path: examples/adult-mondrian.yaml through ``veil anonymize`` (rows in the
   input's order; a model the whole table fails exits 2 naming it and writes nothing), and the
   configuration options.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from veil import ColumnError, Dataset, EquivalenceClasses, Hierarchy, ParameterError, VeilError, load_adult
from veil.anonymize import InfeasibleError, Mondrian
from veil.cells import Cells
from veil.manifests import private_path
from veil.metrics import make_metric
from veil.models import (AlphaKAnonymity, BetaLikeness, DeltaDisclosure, DistinctLDiversity, EntropyLDiversity,
                         KAnonymity, RecursiveCLDiversity, TCloseness)

REPO = Path(__file__).resolve().parents[1]
PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LOSS = make_metric("loss")


# --------------------------------------------------------------------------------------------
# Random cases

@dataclass(frozen=True)
class Case:
    n: int
    seed: int
    qi_kinds: tuple         # per quasi-identifier: "num", "num_missing", "cat_h", "cat_h_forest", "cat", "ord"
    sensitive_kinds: tuple  # per sensitive column: "cat", "cat_h", "num"
    model_specs: tuple      # (name, parameter, parameter, sensitive column index)

    @property
    def qis(self) -> list[str]:
        return [f"q{j}" for j in range(len(self.qi_kinds))]

    @property
    def sensitive(self) -> list[str]:
        return [f"s{j}" for j in range(len(self.sensitive_kinds))]

    def dataset(self) -> Dataset:
        rng = np.random.default_rng(self.seed)
        n = self.n
        data, hierarchies, orders = {"id": np.arange(n)}, {}, {}

        def skewed(m: int) -> np.ndarray:
            p = rng.dirichlet(np.full(m, float(rng.choice([0.3, 1.0, 5.0]))))
            return rng.choice(m, n, p=p)

        for name, kind in zip(self.qis, self.qi_kinds):
            if kind.startswith("num"):
                values = (int(rng.integers(0, 50)) + skewed(int(rng.integers(2, 30)))).astype(float)
                if kind == "num_missing":
                    values[rng.random(n) < 0.2] = np.nan
                data[name] = values
            else:
                m = int(rng.integers(2, 9))
                codes = skewed(m)
                data[name] = np.array([f"v{c}" for c in codes], dtype=object)
                if kind.startswith("cat_h"):
                    group = int(rng.integers(2, 4))
                    rows = [[f"v{c}", f"g{c // group}"] + ([] if kind == "cat_h_forest" else ["*"])
                            for c in range(m)]
                    hierarchies[name] = Hierarchy(rows)
                elif kind == "ord":
                    orders[name] = [f"v{c}" for c in rng.permutation(m)]
        for name, kind in zip(self.sensitive, self.sensitive_kinds):
            m = int(rng.integers(2, 6))
            codes = skewed(m)
            if kind == "num":
                data[name] = codes * 10
            else:
                data[name] = np.array([f"d{c}" for c in codes], dtype=object)
                if kind == "cat_h":
                    hierarchies[name] = Hierarchy([[f"d{c}", f"h{c % 2}", "*"] for c in range(m)])
        frame = pd.DataFrame(data)
        # Only values that occur may appear in an order.
        for name, order in orders.items():
            present = set(frame[name])
            orders[name] = [v for v in order if v in present]
        return Dataset(frame, quasi_identifiers=self.qis, sensitive=self.sensitive, hierarchies=hierarchies,
                       orders=orders)

    def models(self) -> list:
        out = []
        for name, a, b, s in self.model_specs:
            sensitive = self.sensitive[s % len(self.sensitive)]
            kind = self.sensitive_kinds[s % len(self.sensitive)]
            if name == "k":
                out.append(KAnonymity(int(a)))
            elif name == "alpha":
                out.append(AlphaKAnonymity(a, k=int(b), sensitive=sensitive))
            elif name == "l_distinct":
                out.append(DistinctLDiversity(int(a), sensitive=sensitive))
            elif name == "l_entropy":
                out.append(EntropyLDiversity(a, sensitive=sensitive))
            elif name == "c_l":
                out.append(RecursiveCLDiversity(c=b, l=int(a), sensitive=sensitive))
            elif name == "t":
                distance = {"num": "ordered", "cat_h": "hierarchical"}.get(kind, "equal") if b > 0.5 else "equal"
                out.append(TCloseness(a, distance=distance, sensitive=sensitive))
            elif name == "delta":
                out.append(DeltaDisclosure(a, sensitive=sensitive))
            elif name == "beta":
                out.append(BetaLikeness(a, enhanced=b > 0.5, sensitive=sensitive))
        return out


MODEL_SPECS = st.one_of(
    st.tuples(st.just("k"), st.integers(1, 5), st.just(0), st.just(0)),
    st.tuples(st.just("alpha"), st.sampled_from([0.5, 0.7, 1.0]), st.integers(1, 3), st.integers(0, 1)),
    st.tuples(st.just("l_distinct"), st.integers(1, 3), st.just(0), st.integers(0, 1)),
    st.tuples(st.just("l_entropy"), st.sampled_from([1.0, 1.5, 2.0]), st.just(0), st.integers(0, 1)),
    st.tuples(st.just("c_l"), st.integers(1, 2), st.sampled_from([1.5, 3.0]), st.integers(0, 1)),
    st.tuples(st.just("t"), st.sampled_from([0.2, 0.4, 0.8]), st.sampled_from([0.0, 1.0]), st.integers(0, 1)),
    st.tuples(st.just("delta"), st.sampled_from([0.7, 1.5, 3.0]), st.just(0), st.integers(0, 1)),
    st.tuples(st.just("beta"), st.sampled_from([1.0, 3.0]), st.sampled_from([0.0, 1.0]), st.integers(0, 1)),
)

CASES = st.builds(
    Case,
    n=st.integers(6, 90),
    seed=st.integers(0, 2**32 - 1),
    qi_kinds=st.lists(st.sampled_from(["num", "num_missing", "cat_h", "cat_h_forest", "cat", "ord"]),
                      min_size=1, max_size=4).map(tuple),
    sensitive_kinds=st.lists(st.sampled_from(["cat", "cat_h", "num"]), min_size=1, max_size=2).map(tuple),
    model_specs=st.lists(MODEL_SPECS, min_size=1, max_size=3).map(tuple),
)


# --------------------------------------------------------------------------------------------
# Helpers

def covered(cells: Cells) -> np.ndarray:
    """bool [cells × codes]: which original codes each cell covers."""
    card = cells.column.cardinality
    return np.stack([cells.overlap(np.eye(card)[c]) > 0 for c in range(card)], axis=1)


def single_class(ds: Dataset) -> EquivalenceClasses:
    """The whole table as one class (each cell covering every value)."""
    n = ds.num_rows
    cells = []
    for q in ds.quasi_identifiers:
        col = ds.column(q)
        cells.append(Cells.from_sets(col, np.array([0, col.cardinality]), np.arange(col.cardinality),
                                     np.array(["*"], dtype=object)))
    return EquivalenceClasses.from_partition(ds, np.zeros(n, dtype=np.int64),
                                             np.zeros((1, len(cells)), dtype=np.int64), cells)


def whole_table_fails(ds: Dataset, models) -> list:
    whole = single_class(ds)
    return [m for m in models if not m.evaluate(whole).passed]


def expected_cover(ds: Dataset, name: str, kind: str, codes: np.ndarray) -> np.ndarray:
    """What a tight cell over records holding ``codes`` covers."""
    col = ds.column(name)
    card = col.cardinality
    out = np.zeros(card, dtype=bool)
    present = np.unique(codes)
    if kind == "set":
        out[present] = True
    elif kind == "range":
        values = present[present != col.missing_code] if col.missing_code is not None else present
        if len(values):
            out[values.min():values.max() + 1] = True
        if col.missing_code is not None and (present == col.missing_code).any():
            out[col.missing_code] = True
    else:
        lut = ds.generalizations[name].lut
        for level in range(lut.shape[1]):
            nodes = np.unique(lut[present, level])
            if len(nodes) == 1:
                return lut[:, level] == nodes[0]
        out[:] = True  # the virtual root above a forest
    return out


def check_release(ds: Dataset, mondrian: Mondrian, release) -> None:
    """Every property a Mondrian release must have (see the module notes)."""
    n = ds.num_rows
    classes = release.classes
    rc = classes.row_class
    qis = ds.quasi_identifiers
    # Nothing suppressed; every record published once, in a shuffled order (put back in the
    # input's order by the id each row publishes).
    assert release.suppressed_records == 0 and release.table.num_rows == n
    ids = np.asarray(release.table.column("id").to_pylist())
    assert sorted(ids.tolist()) == list(range(n))
    in_input_order = release.table.take(np.argsort(ids))
    # Every record is in exactly one class, and in its class's box; each box is tight.
    assert rc.min() >= 0 and np.array_equal(np.bincount(rc, minlength=classes.n_classes), classes.sizes)
    order = np.argsort(rc, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(classes.sizes)])
    members = [covered(classes.cells(j)) for j in range(len(qis))]
    for j, q in enumerate(qis):
        codes = ds.column(q).codes
        assert members[j][classes.keys[rc, j], codes].all()
        kind = mondrian.kinds_[q]
        for c in range(classes.n_classes):
            rows = order[bounds[c]:bounds[c + 1]]
            want = expected_cover(ds, q, kind, codes[rows])
            assert np.array_equal(members[j][classes.keys[c, j]], want), (q, kind, c)
    # Strict partitions never overlap.
    if mondrian.mode == "strict":
        assert mondrian.partitions_found_ == classes.n_classes
        for a in range(classes.n_classes):
            for b in range(a + 1, classes.n_classes):
                assert any(not (members[j][classes.keys[a, j]] & members[j][classes.keys[b, j]]).any()
                           for j in range(len(qis))), (a, b)
    # Grouping the published rows by their quasi-identifiers gives back the classes.
    published = in_input_order.select(qis).to_pandas()
    label_group = published.groupby(qis, sort=False, dropna=False).ngroup().to_numpy()
    pairs = set(zip(label_group.tolist(), rc.tolist()))
    assert len(pairs) == classes.n_classes == len(set(label_group.tolist()))
    # Information loss: no worse than the whole table as one class.
    assert LOSS.value(classes) <= LOSS.value(single_class(ds)) + 1e-12


# --------------------------------------------------------------------------------------------
# 1. Properties

@settings(max_examples=200, **PROPERTY)
@given(case=CASES, mode=st.sampled_from(["strict", "relaxed"]), categorical=st.sampled_from(["hierarchy", "order"]))
def test_every_release_satisfies_its_models_and_is_a_tight_partition(case: Case, mode: str, categorical: str):
    ds = case.dataset()
    models = case.models()
    failing = whole_table_fails(ds, models)
    mondrian = Mondrian(models, mode=mode, categorical=categorical)
    if failing:
        event("the whole table fails a model")
        with pytest.raises(InfeasibleError, match=re.escape(failing[0].name)):
            mondrian.fit(ds)
        return
    release = mondrian.fit_transform(ds)
    event(f"classes: {'1' if release.classes.n_classes == 1 else '2-5' if release.classes.n_classes <= 5 else '6+'}")
    for model in models:
        result = model.evaluate(release.released_classes)
        assert result.passed, (model, result.level)
    assert all(row["passed"] for row in release.model_levels())
    check_release(ds, mondrian, release)


def _median_cut_loss(ds: Dataset, models) -> float | None:
    """Loss of the single strict median cut on the widest column (the first with two values:
    at the root every column spans its whole range), or None when the cut is not allowed."""
    n = ds.num_rows
    for j, q in enumerate(ds.quasi_identifiers):
        codes = ds.column(q).codes
        if codes.min() < codes.max():
            break
    else:
        return None
    ordered = np.sort(codes)
    median = ordered[(n - 1) // 2]
    left = codes <= median if median < ordered[-1] else codes < median
    row_class = np.where(left, 0, 1)
    cells = []
    for q in ds.quasi_identifiers:
        col = ds.column(q)
        qc = col.codes
        low = [qc[row_class == c].min() for c in (0, 1)]
        high = [qc[row_class == c].max() for c in (0, 1)]
        cells.append(Cells.from_ranges(col, np.array(low), np.array(high), np.array(["a", "b"], dtype=object)))
    halves = EquivalenceClasses.from_partition(ds, row_class, np.array([[0] * len(cells), [1] * len(cells)]),
                                               cells)
    if not all(m.evaluate(halves).passed for m in models):
        return None
    return LOSS.value(halves)


@settings(max_examples=100, **PROPERTY)
@given(case=st.builds(Case, n=st.integers(6, 90), seed=st.integers(0, 2**32 - 1),
                      qi_kinds=st.lists(st.just("num"), min_size=1, max_size=3).map(tuple),
                      sensitive_kinds=st.lists(st.sampled_from(["cat", "num"]), min_size=1, max_size=1).map(tuple),
                      model_specs=st.lists(MODEL_SPECS, min_size=1, max_size=2).map(tuple)))
def test_loss_is_no_worse_than_a_single_median_cut(case: Case):
    ds = case.dataset()
    models = case.models()
    if whole_table_fails(ds, models):
        return
    baseline = _median_cut_loss(ds, models)
    release = Mondrian(models).fit_transform(ds)
    loss = LOSS.value(release.classes)
    assert loss <= LOSS.value(single_class(ds)) + 1e-12
    event("median cut allowed" if baseline is not None else "median cut refused")
    if baseline is not None:
        assert loss <= baseline + 1e-12


# --------------------------------------------------------------------------------------------
# 2. Hand-checked examples

@pytest.fixture
def toy2(arx_toy2_csv) -> Dataset:
    return Dataset(arx_toy2_csv, quasi_identifiers=["ZIPCode", "Age"], sensitive=["Disease"], delimiter=";")


def _classes_by_rows(release) -> dict[tuple, tuple]:
    """Published (ZIPCode, Age) labels → the 1-based row numbers holding them."""
    frame = release.data
    out: dict[tuple, list] = {}
    for i, (z, a) in enumerate(zip(frame["ZIPCode"], frame["Age"]), start=1):
        out.setdefault((z, a), []).append(i)
    return {k: tuple(v) for k, v in out.items()}


def test_t_closeness_paper_table_strict_k3(toy2: Dataset, arx_toy2_csv):
    # Both columns span their whole range, so ZIPCode (listed first) is cut at its median 47677:
    # rows 1, 2, 7, 8, 9 (zip <= 47677) and rows 3, 4, 5, 6. Neither half can be cut again:
    # every median cut of 5 records on either column leaves 2 on one side, and of 4 records 2.
    # The paper's table has no id: its records are named by their row, so the order is kept.
    release = Mondrian([KAnonymity(3)]).fit_transform(toy2, shuffle=False)
    assert _classes_by_rows(release) == {("[47602-47677]", "[22-36]"): (1, 2, 7, 8, 9),
                                         ("[47678-47909]", "[27-52]"): (3, 4, 5, 6)}
    boxes = [p["box"] for p in release.recoding["partitions"]]
    assert {"ZIPCode": {"min": 47602, "max": 47677}, "Age": {"min": 22, "max": 36}} in boxes
    assert release.data["Disease"].tolist() == pd.read_csv(arx_toy2_csv, sep=";")["Disease"].tolist()


def test_t_closeness_paper_table_relaxed_k3(toy2: Dataset):
    # Relaxed: the 9 records ordered by ZIPCode are cut 4 | 5; neither half reaches 2k = 6.
    mondrian = Mondrian([KAnonymity(3)], mode="relaxed")
    release = mondrian.fit_transform(toy2, shuffle=False)  # records named by their row, as above
    assert _classes_by_rows(release) == {("[47602-47673]", "[22-36]"): (2, 7, 8, 9),
                                         ("[47677-47909]", "[27-52]"): (1, 3, 4, 5, 6)}
    assert mondrian.rounds_ == 2


def test_t_closeness_paper_table_with_diversity(toy2: Dataset):
    release = Mondrian([KAnonymity(3), DistinctLDiversity(3)]).fit_transform(toy2)
    assert DistinctLDiversity(3).evaluate(release.released_classes).passed
    assert release.classes.n_classes == 2


def _numeric_with_missing(values, k: int):
    # ``row`` (insensitive) puts the shuffled release back in the input's order.
    frame = pd.DataFrame({"age": values, "s": ["a", "b"] * (len(values) // 2), "row": range(len(values))})
    ds = Dataset(frame, quasi_identifiers=["age"], sensitive=["s"])
    mondrian = Mondrian([KAnonymity(k)])
    return ds, mondrian, mondrian.fit_transform(ds)


def test_missing_values_are_split_off_like_an_extreme_value():
    # 1..10 and four missing: the median 7 cuts 1..7 | 8, 9, 10, ∅ ×4; the second half's median
    # is the missing value, its largest, so it is cut below: 8..10 | ∅ ×4.
    values = [float(v) for v in range(1, 11)] + [np.nan] * 4
    ds, mondrian, release = _numeric_with_missing(values, 2)
    assert release.data.sort_values("row")["age"].tolist() == (["[1-2]"] * 2 + ["[3-4]"] * 2 + ["[5-7]"] * 3
                                                             + ["[8-10]"] * 3 + [""] * 4)
    boxes = [p["box"]["age"] for p in release.recoding["partitions"]]
    assert {"min": None, "max": None, "missing": True} in boxes
    check_release_basic(ds, release)


def test_missing_values_share_a_cell_with_the_largest_values():
    values = [float(v) for v in range(1, 11)] + [np.nan] * 2
    ds, mondrian, release = _numeric_with_missing(values, 3)
    assert release.data.sort_values("row")["age"].tolist() == (["[1-3]"] * 3 + ["[4-6]"] * 3 + ["[7-9]"] * 3
                                                             + ["10 or missing"] * 3)
    boxes = [p["box"]["age"] for p in release.recoding["partitions"]]
    assert {"min": 10, "max": 10, "missing": True} in boxes
    # The loss reads the numeric span of the cell (10 to 10) and ignores the missing value.
    assert LOSS.value(release.classes) == pytest.approx((3 * 2 + 3 * 2 + 3 * 2 + 0) / 9 / 12)
    check_release_basic(ds, release)


def check_release_basic(ds: Dataset, release) -> None:
    for model in release.models:
        assert model.evaluate(release.released_classes).passed
    assert release.table.num_rows == ds.num_rows


def test_relaxed_ties_go_either_way_and_identical_boxes_merge():
    # Ten 5s and two 6s. Strict: 5s | 6s. Relaxed: 5 ×6 | 5 ×4, 6, 6, then 5, 5, 5 | 5, 6, 6: the
    # two all-5 partitions publish the same cell, so they are one class of 9.
    frame = pd.DataFrame({"x": [5] * 10 + [6] * 2, "s": list("ab") * 6, "row": range(12)})
    ds = Dataset(frame, quasi_identifiers=["x"], sensitive=["s"])
    strict = Mondrian([KAnonymity(2)]).fit_transform(ds)
    assert strict.data.sort_values("row")["x"].tolist() == ["5"] * 10 + ["6"] * 2
    mondrian = Mondrian([KAnonymity(2)], mode="relaxed")
    relaxed = mondrian.fit_transform(ds)
    assert mondrian.partitions_found_ == 3 and mondrian.n_partitions_ == 2
    assert sorted(relaxed.classes.sizes.tolist()) == [3, 9]
    labels = relaxed.data.sort_values("row")["x"].tolist()  # in the input's order
    assert labels.count("5") == 9 and labels.count("[5-6]") == 3
    assert labels[10:] == ["[5-6]", "[5-6]"]
    # The boxes overlap: 5 lies in both.
    boxes = [p["box"]["x"] for p in relaxed.recoding["partitions"]]
    assert sorted((b["min"], b["max"]) for b in boxes) == [(5, 5), (5, 6)]


def test_partitions_whose_distinct_cells_print_alike_are_one_class():
    # Values q1 and q2 generalize to "*" one level below the root "*": a partition holding p1 and
    # q1 (the root) and one holding q1 and q2 (the lower node) both publish "*".
    from veil.anonymize.mondrian import _dimension, _publish

    frame = pd.DataFrame({"zip": ["p1", "q1", "q1", "q2", "p1", "p2"], "s": list("abcabc")})
    hierarchy = Hierarchy([["p1", "p*", "*"], ["p2", "p*", "*"], ["q1", "*", "*"], ["q2", "*", "*"]])
    ds = Dataset(frame, quasi_identifiers=["zip"], sensitive=["s"], hierarchies={"zip": hierarchy})
    dims = [_dimension(ds, "zip", "hierarchy")]
    classes, keys, boxes, class_of_part = _publish(ds, dims, np.array([0, 0, 1, 1, 2, 2]))
    assert class_of_part.tolist() == [1, 1, 0]
    assert classes.sizes.tolist() == [2, 4]
    assert classes.counts("s").tolist() == [[0, 1, 1], [2, 1, 1]]
    star = keys[1, 0]
    assert classes.cells(0).labels[star] == "*" and classes.cells(0).coverage()[star] == 4  # the root covers all
    assert sorted(boxes[0][star]["any_of"], key=lambda b: b["level"]) == [{"node": "*", "level": 1},
                                                                         {"node": "*", "level": 2}]
    assert boxes[0][keys[0, 0]] == {"node": "p*", "level": 1}


def test_relaxed_union_failing_delta_disclosure_is_collapsed():
    # A table Hypothesis found: relaxed partitions with identical cells pass δ-disclosure one by
    # one, but not as the one class the table shows; they are collapsed into their lowest common
    # ancestor in the split tree, which passed.
    case = Case(n=75, seed=0, qi_kinds=("num",), sensitive_kinds=("cat",), model_specs=(("delta", 0.7, 0, 0),))
    ds = case.dataset()
    mondrian = Mondrian(case.models(), mode="relaxed")
    release = mondrian.fit_transform(ds)
    assert mondrian.collapsed_ > 0 and release.recoding["collapsed"] == mondrian.collapsed_
    assert mondrian.partitions_found_ > mondrian.n_partitions_ > 1
    assert DeltaDisclosure(0.7).evaluate(release.released_classes).passed
    check_release(ds, mondrian, release)


@pytest.mark.parametrize("mode", ["strict", "relaxed"])
def test_value_sets_of_a_column_with_many_values(mode: str):
    # More values than fit a bit mask: sets are grouped by hashing, then checked.
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"id": np.arange(400), "c": [f"w{v:03d}" for v in rng.integers(0, 100, 400)],
                          "x": rng.integers(0, 5, 400), "s": rng.integers(0, 4, 400)})
    ds = Dataset(frame, quasi_identifiers=["c", "x"], sensitive=["s"])
    mondrian = Mondrian([KAnonymity(3)], mode=mode)
    release = mondrian.fit_transform(ds)
    assert mondrian.kinds_["c"] == "set" and ds.column("c").cardinality > 62
    assert any(label.startswith("{") for label in release.data["c"])
    check_release(ds, mondrian, release)


def test_adult_hierarchy_split_publishes_nodes():
    ds = load_adult()
    mondrian = Mondrian([KAnonymity(5), EntropyLDiversity(2)])
    release = mondrian.fit_transform(ds)
    assert mondrian.kinds_ == {"sex": "hierarchy", "age": "range", "race": "hierarchy",
                               "marital-status": "hierarchy", "education": "hierarchy",
                               "native-country": "hierarchy", "workclass": "hierarchy"}
    assert KAnonymity(5).evaluate(release.released_classes).passed
    assert EntropyLDiversity(2).evaluate(release.released_classes).passed
    # Published categorical values are hierarchy nodes (or the values themselves).
    for q in ("marital-status", "workclass"):
        nodes = set().union(*[set(level) for level in ds.generalizations[q].labels])
        assert set(release.data[q]) <= nodes
    education = release.recoding["partitions"][0]["box"]["education"]
    assert set(education) == {"node", "level"}
    # A hierarchy split is multi-way and never cuts a node in two: strict boxes are disjoint, so
    # the classes are what grouping the table by its published values gives.
    assert release.data.groupby(ds.quasi_identifiers).ngroups == release.classes.n_classes
    # Splitting on the order instead loses less here, and both beat the whole table.
    order = Mondrian([KAnonymity(5), EntropyLDiversity(2)], categorical="order").fit_transform(ds)
    assert LOSS.value(order.classes) < LOSS.value(release.classes) < 0.5


def test_per_column_choice_splits_a_numeric_column_along_its_hierarchy():
    ds = load_adult()
    mondrian = Mondrian([KAnonymity(5)], categorical={"age": "hierarchy", "education": "order"})
    release = mondrian.fit_transform(ds)
    assert mondrian.kinds_["age"] == "hierarchy" and mondrian.kinds_["education"] == "set"
    assert mondrian.kinds_["sex"] == "hierarchy"
    age_nodes = set().union(*[set(level) for level in ds.generalizations["age"].labels])
    assert set(release.data["age"]) <= age_nodes
    assert KAnonymity(5).evaluate(release.released_classes).passed


# --------------------------------------------------------------------------------------------
# 3. The release object

def test_manifest_records_every_partitions_box_and_is_json():
    ds = load_adult()
    release = Mondrian([KAnonymity(10)], mode="relaxed").fit_transform(ds)
    manifest = json.loads(release.manifest_text())
    assert manifest["algorithm"] == "mondrian"
    recoding = manifest["recoding"]
    assert recoding["mode"] == "relaxed" and recoding["satisfied"] is True
    partitions = recoding["partitions"]
    assert len(partitions) == manifest["classes"]["released"] == release.classes.n_classes
    assert sum(p["size"] for p in partitions) == ds.num_rows
    assert all(set(p["box"]) == set(ds.quasi_identifiers) for p in partitions)
    # An adversary locates a record's class from its values: the first record is in a box
    # that holds its age.
    first = release.classes.row_class[0]
    age = int(ds.table.data.column("age")[0].as_py())
    box = partitions[first]["box"]["age"]
    assert box["min"] <= age <= box["max"]
    assert "metrics" not in manifest and {"rounds", "seconds"}.isdisjoint(recoding)  # the curator's
    metrics = release.private_manifest["metrics"]
    assert metrics["loss"] > 0 and "height" not in metrics


def test_shuffle_permutes_rows_and_keeps_them():
    ds = load_adult()
    mondrian = Mondrian([KAnonymity(5)]).fit(ds)
    plain = mondrian.transform(ds, shuffle=False).data
    shuffled = mondrian.transform(ds, rng=7).data
    assert not plain.equals(shuffled)
    key = list(plain.columns)
    assert plain.sort_values(key).reset_index(drop=True).equals(shuffled.sort_values(key).reset_index(drop=True))


def test_polars_in_polars_out():
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"age": [23, 25, 31, 35, 40, 44, 52, 58], "sex": ["m", "f"] * 4,
                          "disease": ["a", "b", "c", "a", "b", "c", "a", "b"]})
    ds = Dataset(frame, quasi_identifiers=["age", "sex"], sensitive=["disease"])
    release = Mondrian([KAnonymity(2)]).fit_transform(ds)
    assert isinstance(release.data, pl.DataFrame)
    assert sorted(release.data["disease"].to_list()) == sorted(frame["disease"].to_list())
    assert isinstance(frame["age"][0], int)  # the input is untouched


def test_progress_reaches_every_record():
    ds = load_adult()
    calls = []
    Mondrian([KAnonymity(5)]).fit(ds, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (ds.num_rows, ds.num_rows)
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)


def test_deterministic():
    ds = load_adult()
    a = Mondrian([KAnonymity(4)], mode="relaxed").fit_transform(ds)
    b = Mondrian([KAnonymity(4)], mode="relaxed").fit_transform(ds)
    # The same partitions, publishing the same rows (each release in its own shuffled order).
    assert a.recoding["partitions"] == b.recoding["partitions"]
    assert np.array_equal(a.classes.row_class, b.classes.row_class)
    by_all = [(c, "ascending") for c in a.table.column_names]
    assert a.table.sort_by(by_all).equals(b.table.sort_by(by_all))


# --------------------------------------------------------------------------------------------
# 4. Bad input

@pytest.fixture
def small() -> Dataset:
    frame = pd.DataFrame({"age": [20, 30, 40, 50, 60, 70], "city": list("abcabc"), "s": list("xxyyzz")})
    return Dataset(frame, quasi_identifiers=["age", "city"], sensitive=["s"])


def test_k_larger_than_the_table(small: Dataset):
    with pytest.raises(ParameterError, match="k = 7 is larger than the table's 6 records"):
        Mondrian([KAnonymity(7)]).fit(small)
    with pytest.raises(ParameterError, match="larger than the table"):
        Mondrian([AlphaKAnonymity(0.9, k=9)]).fit(small)


def test_a_model_the_whole_table_fails_is_named(small: Dataset):
    with pytest.raises(InfeasibleError, match="distinct ℓ-diversity at 4.*reaches 3") as info:
        Mondrian([KAnonymity(2), DistinctLDiversity(4)]).fit(small)
    assert isinstance(info.value, VeilError)
    assert "allow_single_class" in str(info.value)


def test_allow_single_class_publishes_the_table_as_one_class(small: Dataset):
    mondrian = Mondrian([KAnonymity(2), DistinctLDiversity(4)], allow_single_class=True)
    release = mondrian.fit_transform(small)
    assert mondrian.satisfied_ is False and release.classes.n_classes == 1
    assert release.suppressed_records == 0
    assert release.data["age"].tolist() == ["[20-70]"] * 6
    assert release.data["city"].tolist() == ["{a,b,c}"] * 6
    levels = {row["key"]: row["passed"] for row in release.model_levels()}
    assert levels == {"k": True, "l_distinct": False}
    assert release.recoding["satisfied"] is False
    # A table that passes is partitioned as usual.
    assert Mondrian([KAnonymity(2)], allow_single_class=True).fit(small).n_partitions_ == 2  # 20-40 | 50-70


def test_no_allowed_split_is_one_class_not_an_error(small: Dataset):
    release = Mondrian([TCloseness(0.0)]).fit_transform(small)
    assert release.classes.n_classes == 1


def test_unknown_columns(small: Dataset):
    with pytest.raises(ColumnError, match="'cty'.*did you mean 'city'"):
        Dataset(small.table, quasi_identifiers=["age", "cty"])
    with pytest.raises(ColumnError, match="'s', which is not a quasi-identifier"):
        Mondrian([KAnonymity(2)], categorical={"s": "order"}).fit(small)
    with pytest.raises(ParameterError, match="column 'city' has no hierarchy"):
        Mondrian([KAnonymity(2)], categorical={"city": "hierarchy"}).fit(small)
    # Splitting on the order is fine for a column without order (text order, published as sets).
    release = Mondrian([KAnonymity(2)], categorical="order").fit_transform(small)
    assert KAnonymity(2).evaluate(release.released_classes).passed


def test_bad_options(small: Dataset):
    with pytest.raises(ParameterError, match="mode 'loose'"):
        Mondrian([KAnonymity(2)], mode="loose")
    with pytest.raises(ParameterError, match="'tree'"):
        Mondrian([KAnonymity(2)], categorical="tree")
    with pytest.raises(ParameterError, match="'tree'"):
        Mondrian([KAnonymity(2)], categorical={"city": "tree"})
    with pytest.raises(ParameterError, match="at least one privacy model"):
        Mondrian([])
    with pytest.raises(ParameterError, match="needs a threshold"):
        Mondrian([KAnonymity()])
    with pytest.raises(ParameterError, match="suppression limit"):
        Mondrian([KAnonymity(2)], suppression_limit=1.0)
    with pytest.raises(ParameterError, match="ordered-distance t-closeness"):
        Mondrian([TCloseness(0.5, distance="ordered")]).fit(small)
    no_sensitive = Dataset(small.table, quasi_identifiers=["age"])
    with pytest.raises(ParameterError, match="needs a sensitive column"):
        Mondrian([EntropyLDiversity(2)]).fit(no_sensitive)


def test_transform_misuse(small: Dataset):
    with pytest.raises(ParameterError, match="call fit before transform"):
        Mondrian([KAnonymity(2)]).transform(small)
    mondrian = Mondrian([KAnonymity(2)]).fit(small)
    other = Dataset(small.table, quasi_identifiers=["age", "city"], sensitive=["s"])
    with pytest.raises(ParameterError, match="fitted on"):
        mondrian.transform(other)
    with pytest.raises(ParameterError, match="'remove'd or shown as 'star'"):
        mondrian.transform(small, suppressed="hide")


# --------------------------------------------------------------------------------------------
# 5. The configuration path

def test_example_config_runs_through_veil_anonymize(tmp_path: Path, monkeypatch):
    from typer.testing import CliRunner

    from veil.cli import app
    from veil.config import load_config

    monkeypatch.chdir(REPO)
    config = load_config(REPO / "examples" / "adult-mondrian.yaml")
    assert config.algorithm.name == "mondrian"
    assert dict(config.algorithm.options) == {"mode": "strict", "categorical": "hierarchy",
                                              "allow_single_class": False}
    assert isinstance(config.anonymizer(), Mondrian)

    out, manifest_path = tmp_path / "out.csv", tmp_path / "manifest.json"
    # --keep-order, so that the published rows can be compared with the input record by record.
    result = CliRunner().invoke(app, ["anonymize", "--config", "examples/adult-mondrian.yaml", "--out", str(out),
                                      "--manifest", str(manifest_path), "--keep-order"])
    assert result.exit_code == 0, result.output
    source = pd.read_csv(REPO / "src" / "veil" / "resources" / "adult" / "adult.csv", sep=";", dtype=str)
    released = pd.read_csv(out, sep=";", dtype=str, keep_default_na=False)
    assert list(released.columns) == list(source.columns)
    assert len(released) == len(source)
    # The unchanged columns match record by record, and every published age range holds the
    # record's age.
    assert released["occupation"].tolist() == source["occupation"].tolist()
    assert released["salary-class"].tolist() == source["salary-class"].tolist()
    ranges = released["age"].str.strip("[]").str.split("-", expand=True)
    low = ranges[0].astype(int)
    high = ranges[1].fillna(ranges[0]).astype(int)
    age = source["age"].astype(int)
    assert ((low <= age) & (age <= high)).all()
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    assert manifest["config"]["algorithm"] == {"name": "mondrian", "mode": "strict", "categorical": "hierarchy",
                                               "allow_single_class": False}
    assert all(row["passed"] for row in manifest["models"])
    assert len(manifest["recoding"]["partitions"]) == manifest["classes"]["released"]
    assert json.loads(private_path(manifest_path).read_text(encoding="utf-8"))["suppression"]["records"] == 0
    assert manifest["output"]["order"] == "input order" and manifest["config"]["output"]["shuffle"] is False


def test_cli_refuses_a_model_the_whole_table_fails(tmp_path: Path):
    from typer.testing import CliRunner

    from veil.cli import app

    text = (REPO / "examples" / "adult-mondrian.yaml").read_text(encoding="utf-8")
    text = text.replace("../src/veil/resources", str(REPO / "src" / "veil" / "resources"))
    text = text.replace("  - k_anonymity: {k: 5}",
                        "  - k_anonymity: {k: 5}\n  - distinct_l_diversity: {l: 20, sensitive: occupation}")
    config = tmp_path / "bad.yaml"
    config.write_text(text, encoding="utf-8")
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(app, ["anonymize", "--config", str(config), "--out", str(out)])
    assert result.exit_code == 2
    assert "distinct ℓ-diversity at 20" in result.output and "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]
    # allow_single_class publishes the table as one class instead.
    config.write_text(text.replace("allow_single_class: false", "allow_single_class: true"), encoding="utf-8")
    result = CliRunner().invoke(app, ["anonymize", "--config", str(config), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(pd.read_csv(out, sep=";", dtype=str).drop_duplicates(["age", "sex", "race"])) == 1


def test_config_options_are_checked(tmp_path: Path):
    from veil.config import load_config
    from veil.errors import ConfigError

    text = (REPO / "examples" / "adult-mondrian.yaml").read_text(encoding="utf-8")
    text = text.replace("../src/veil/resources", str(REPO / "src" / "veil" / "resources"))
    path = tmp_path / "mondrian.yaml"
    path.write_text(text.replace("categorical: hierarchy", "categorical: tree"), encoding="utf-8")
    with pytest.raises(ConfigError, match="categorical"):
        load_config(path)
    relaxed = text.replace("mode: strict", "mode: relaxed").replace("categorical: hierarchy", "categorical: order")
    path.write_text(relaxed, encoding="utf-8")
    anonymizer = load_config(path).anonymizer()
    assert anonymizer.mode == "relaxed" and anonymizer.categorical == "order"
    # Options left out take Mondrian's defaults.
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(("categorical:", "allow_single"))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = load_config(path)
    assert dict(config.algorithm.options) == {"mode": "strict"}
    anonymizer = config.anonymizer()
    assert anonymizer.categorical == "hierarchy" and anonymizer.allow_single_class is False
