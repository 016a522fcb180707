"""Tests of the utility metrics (veil.metrics).

1. Every metric by hand on ARX's "Example 1" table (7 rows, age / gender / zipcode) with a class
   label added, at two nodes and with a suppressed class; the arithmetic is in the comments.
2. The same values with ARX's own hierarchy files (the copies in tests/data).
3. Property tests on random small tables: each metric against a brute-force computation over the
   rows written from its docstring, the lower bounds (below the loss of every more general node
   under any suppression, never decreasing under roll-up) and the ranges of the values.
4. The registry: unknown keys, options, labels.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil import Dataset, EquivalenceClasses, Hierarchy, ParameterError, builders
from veil.errors import ColumnError
from veil.metrics import METRICS, UtilityMetric, evaluate_all, make_metric

ln, log2 = math.log, math.log2


def H(*probabilities: float) -> float:
    """Shannon entropy in nats."""
    return -sum(p * ln(p) for p in probabilities if p > 0)


# --------------------------------------------------------------------------------------------
# 1. ARX "Example 1" by hand
#
#   row  age  gender  zipcode  y        age hierarchy: 34, 45 -> <50 ; 66, 70 -> >=50 ; -> *
#    1    34  male    81667    a        gender: value -> *
#    2    45  female  81675    b        zipcode: 81667 -> 8166* -> 816** -> 81*** -> 8**** -> *
#    3    66  male    81925    a
#    4    70  female  81931    b        heights: age 2, gender 1, zipcode 5
#    5    34  female  81931    a        cardinalities: age 4, gender 2, zipcode 4 (|D| = 32)
#    6    70  male    81931    a        ranges: age 70 - 34 = 36, zipcode 81931 - 81667 = 264
#    7    45  male    81931    b
#
# Node B = (age 1, gender 1, zipcode 2):  {1,2} (<50,*,816**)  {5,7} (<50,*,819**)
#                                         {3,4,6} (>=50,*,819**)            sizes 2, 2, 3
# Node C = (age 2, gender 0, zipcode 3):  {1,3,6,7} (*,male,81***)  {2,4,5} (*,female,81***)
# B with the class {1,2} suppressed: "B/s".

TOY = pd.DataFrame({
    "age": [34, 45, 66, 70, 34, 70, 45],
    "gender": ["male", "female", "male", "female", "female", "male", "male"],
    "zipcode": [81667, 81675, 81925, 81931, 81931, 81931, 81931],
    "y": ["a", "b", "a", "b", "a", "a", "b"],
})
AGE = Hierarchy([["34", "<50", "*"], ["45", "<50", "*"], ["66", ">=50", "*"], ["70", ">=50", "*"]],
                name="age")


def toy_dataset(hierarchies=None) -> Dataset:
    hierarchies = hierarchies or {"age": AGE, "gender": builders.flat(TOY["gender"]),
                                  "zipcode": builders.masking(TOY["zipcode"])}
    return Dataset(TOY, quasi_identifiers=["age", "gender", "zipcode"], hierarchies=hierarchies)


def nodes(ds: Dataset):
    bottom = EquivalenceClasses.from_dataset(ds, track=["y"])
    b = bottom.roll_up([1, 1, 2])
    c = bottom.roll_up([2, 0, 3])
    labels = b.class_labels()
    s = ((labels["age"] == "<50") & (labels["zipcode"] == "816**")).to_numpy()
    assert b.sizes[s].tolist() == [2]
    return bottom, b, c, s


# Hand-computed value of each metric at B, C and B/s.
NCP_B1 = (11 / 36 + 1 + 8 / 264) / 3   # (<50,*,816**): age 34..45, gender both, zip 81667..81675
NCP_B2 = (11 / 36 + 1 + 6 / 264) / 3   # (<50,*,819**): zip 81925..81931
NCP_B3 = (4 / 36 + 1 + 6 / 264) / 3    # (>=50,*,819**): age 66..70
# non-uniform entropy, per column, Σ_rows log2(records in cell / records with the value):
#   record counts: age 34:2 45:2 66:1 70:2 ; <50: 4 ; >=50: 3 ; *: 7
#                  gender female:3 male:4 ; *: 7 ; zip 81667:1 81675:1 81925:1 81931:4 ; 816**: 2 ; 819**: 5 ; 81***: 7
NUE_B = ((4 * log2(4 / 2) + log2(3 / 1) + 2 * log2(3 / 2))      # age: rows 1,2,5,7 in <50; 3; 4,6
         + (4 * log2(7 / 4) + 3 * log2(7 / 3))                  # gender: all *
         + (2 * log2(2 / 1) + log2(5 / 1) + 4 * log2(5 / 4)))   # zip: rows 1,2 in 816**; 3; 4-7
NUE_C = ((6 * log2(7 / 2) + log2(7 / 1))                        # age *: 34, 45, 70 twice, 66 once
         + 0.0                                                  # gender kept
         + (3 * log2(7 / 1) + 4 * log2(7 / 4)))                 # zip 81***
# B/s: rows 1 and 2 now pay log2(7 / n(v)) on every column instead of their B cells
NUE_BS = (NUE_B - 2 * log2(4 / 2) - (log2(7 / 4) + log2(7 / 3)) - 2 * log2(2 / 1)
          + (log2(7 / 2) + log2(7 / 2)) + (log2(7 / 4) + log2(7 / 3)) + (log2(7 / 1) + log2(7 / 1)))

EXPECTED = {
    # height: Σ levels
    "height": (1 + 1 + 2, 2 + 0 + 3, 1 + 1 + 2),
    # precision: 1 - mean_j level/height; B: (1/2 + 1/1 + 2/5)/3 = 1.9/3; C: (2/2 + 0 + 3/5)/3
    # B/s: 5 kept rows pay 1.9/3, 2 suppressed rows pay 1: loss (5·1.9/3 + 2)/7 = 31/42
    "precision": (1 - 1.9 / 3, 1 - 1.6 / 3, 1 - 31 / 42),
    # discernibility: B 2²+2²+3² = 17; C 4²+3² = 25; B/s 2²+3² + 7·2 = 27
    "discernibility": (17, 25, 27),
    # aecs: 7/3; 7/2; kept 5 records in 2 classes
    "aecs": (7 / 3, 7 / 2, 5 / 2),
    # loss: size-weighted mean of the class penalties; C: every record pays (1 + 0 + 1)/3
    "loss": ((2 * NCP_B1 + 2 * NCP_B2 + 3 * NCP_B3) / 7, 2 / 3, (2 * 1 + 2 * NCP_B2 + 3 * NCP_B3) / 7),
    "entropy": (NUE_B, NUE_C, NUE_BS),
    # classification, label y: B classes {a,b} {a,b} {a,b,a} -> 1 + 1 + 1 minority records;
    # C: {a,a,a,b} {b,b,a} -> 1 + 1; B/s: 2 suppressed + 1 + 1
    "classification": (3 / 7, 2 / 7, 4 / 7),
    # KL: the 7 tuples are distinct, p = 1/7 each. B boxes all hold 2·2·2 = 8 tuples, so
    # q = size/(7·8): KL = (4/7) ln((1/7)/(2/56)) + (3/7) ln((1/7)/(3/56)).
    # C boxes 4·1·4 = 16: KL = (4/7) ln((1/7)/(4/112)) + (3/7) ln((1/7)/(3/112)).
    # B/s: 2 suppressed records spread over |D| = 32: + 2/(7·32) = 1/112 everywhere;
    # q = 1/112 (rows 1,2), 2/56 + 1/112 = 5/112 (rows 5,7), 3/56 + 1/112 = 1/16 (rows 3,4,6).
    "kl": ((4 / 7) * ln(4) + (3 / 7) * ln(8 / 3),
           (4 / 7) * ln(4) + (3 / 7) * ln(16 / 3),
           (2 / 7) * ln(16) + (2 / 7) * ln(16 / 5) + (3 / 7) * ln(16 / 7)),
    # IG/PL: label y has a:4 b:3. B: H(y|class) = (2/7)ln2 + (2/7)ln2 + (3/7)H(2/3,1/3),
    # PL = 7 - 2. C: H(y|class) = (4/7)H(3/4,1/4) + (3/7)H(1/3,2/3), PL = 7 - 3.
    # B/s: kept rows 3..7 have a:3 b:2; H(y|class) = (2/5)ln2 + (3/5)H(2/3,1/3); PL = 7 - 2.
    "ig_pl": ((H(4 / 7, 3 / 7) - (4 / 7) * ln(2) - (3 / 7) * H(2 / 3, 1 / 3)) / (5 + 1),
              (H(4 / 7, 3 / 7) - (4 / 7) * H(3 / 4, 1 / 4) - (3 / 7) * H(1 / 3, 2 / 3)) / (4 + 1),
              (H(3 / 5, 2 / 5) - (2 / 5) * ln(2) - (3 / 5) * H(2 / 3, 1 / 3)) / (5 + 1)),
    # workload of two queries, sanity 1: q1 = age in {34,45} (truth 4: rows 1,2,5,7),
    # q2 = gender male and zipcode 81931 (truth 2: rows 6,7).
    # B:  q1 = 2 + 2 + 0 = 4 (error 0); q2 = 0 + 2·(1/2)(1/2) + 3·(1/2)(1/2) = 1.25 (error .375)
    # C:  q1 = 7 · 2/4 = 3.5 (error .125); q2 = 4 · 1 · 1/4 = 1 (error .5)
    # B/s: q1 = 2 + 2·(2/4) = 3 (error .25); q2 = 0.5 + 0.75 + 2·(1/2)(1/4) = 1.5 (error .25)
    "workload": ((0 + 0.375) / 2, (0.125 + 0.5) / 2, (0.25 + 0.25) / 2),
}

OPTIONS = {"classification": {"label": "y"}, "ig_pl": {"label": "y"},
           "workload": {"queries": [{"age": [34, 45]}, {"gender": ["male"], "zipcode": [81931]}],
                        "sanity": 1}}


def toy_metric(key: str) -> UtilityMetric:
    return make_metric(key, **OPTIONS.get(key, {}))


def test_every_metric_has_a_hand_computed_value():
    assert set(EXPECTED) == set(METRICS)


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_hand_computed_values(key):
    _, b, c, s = nodes(toy_dataset())
    metric = toy_metric(key)
    got = (metric.value(b), metric.value(c), metric.value(b, s))
    assert got == pytest.approx(EXPECTED[key], rel=1e-12, abs=1e-12)
    # loss is the value, or its negation / complement when higher is better
    sign = -1 if metric.higher_is_better else 1
    for classes, mask, value in ((b, None, got[0]), (c, None, got[1]), (b, s, got[2])):
        loss = metric.loss(classes, mask)
        assert loss == pytest.approx(1 - value if key == "precision" else sign * value, abs=1e-12)
    # an all-False mask is no suppression
    assert metric.value(b, np.zeros(b.n_classes, bool)) == pytest.approx(got[0], abs=1e-12)


def test_hand_computed_bounds():
    bottom, b, c, s = nodes(toy_dataset())
    bound = {k: toy_metric(k).loss_bound(b) for k in METRICS}
    assert bound["height"] == 4
    assert bound["precision"] == pytest.approx(1.9 / 3)
    assert bound["discernibility"] == 17          # Σ size², whatever is suppressed
    assert bound["aecs"] == 2                     # the smallest class
    assert bound["loss"] == pytest.approx(EXPECTED["loss"][0])
    assert bound["entropy"] == pytest.approx(NUE_B)
    assert bound["classification"] == pytest.approx(3 / 7)
    assert bound["kl"] == pytest.approx(EXPECTED["kl"][0])
    assert bound["ig_pl"] == -math.inf and bound["workload"] == -math.inf
    # at the bottom every class is one tuple: the bounds that equal a value are 0 there
    assert toy_metric("kl").loss_bound(bottom) == 0
    assert toy_metric("entropy").loss_bound(bottom) == 0


def test_values_at_the_bottom():
    bottom, *_ = nodes(toy_dataset())
    values = {k: toy_metric(k).value(bottom) for k in METRICS}
    assert values["height"] == 0 and values["precision"] == 1 and values["loss"] == 0
    assert values["entropy"] == 0 and values["kl"] == 0 and values["workload"] == 0
    assert values["discernibility"] == 7 and values["aecs"] == 1
    # every tuple is its own class: no minority; IG = H(y), PL = 7 - 1
    assert values["classification"] == 0
    assert values["ig_pl"] == pytest.approx(H(4 / 7, 3 / 7) / 7)


def test_with_the_arx_hierarchy_files(arx_toy_csv, arx_toy_hierarchy_paths):
    ours = toy_dataset()
    arx = Dataset(arx_toy_csv, quasi_identifiers=["age", "gender", "zipcode"], hierarchies=arx_toy_hierarchy_paths,
                  delimiter=";")
    for node in ([1, 1, 2], [2, 0, 3], [0, 1, 4]):
        mine = EquivalenceClasses.from_dataset(ours, node)
        theirs = EquivalenceClasses.from_dataset(arx, node)
        # ARX's zipcode hierarchy has 10,000 leaves and its age hierarchy 100, but the cells hold
        # the same values present in the data, so every metric agrees.
        assert evaluate_all(mine) == pytest.approx(evaluate_all(theirs), rel=1e-12)
    b = EquivalenceClasses.from_dataset(arx, [1, 1, 2])
    got = evaluate_all(b)
    for key in ("height", "precision", "discernibility", "aecs", "loss", "entropy", "kl"):
        assert got[key] == pytest.approx(EXPECTED[key][0])


def test_evaluate_all_skips_what_does_not_apply():
    _, b, _, s = nodes(toy_dataset())
    without = evaluate_all(b, s)
    assert "classification" not in without and "ig_pl" not in without
    assert without["discernibility"] == 27
    withlabel = evaluate_all(b, s, label="y", options={"workload": OPTIONS["workload"]})
    assert set(withlabel) == set(METRICS)
    assert withlabel["workload"] == pytest.approx(EXPECTED["workload"][2])
    assert evaluate_all(b, keys=["dm", "kl"]) == {"discernibility": 17, "kl": pytest.approx(EXPECTED["kl"][0])}
    with pytest.raises(ParameterError, match="label"):
        evaluate_all(b, keys=["classification"])


# --------------------------------------------------------------------------------------------
# 2. the registry and its errors


def test_make_metric_builds_every_key():
    for key, cls in METRICS.items():
        metric = toy_metric(key)
        assert isinstance(metric, cls) and metric.key == key and metric.name
        assert cls.__doc__ and len(cls.__doc__) > 100
    assert make_metric("NCP").key == "loss" and make_metric("nue").key == "entropy"


def test_unknown_metric_names_the_closest():
    with pytest.raises(ParameterError, match="did you mean 'discernibility'"):
        make_metric("discernability")
    with pytest.raises(ParameterError, match="did you mean 'entropy'"):
        make_metric("entropie")
    with pytest.raises(ParameterError, match="use one of"):
        make_metric("zzzzzzzzzzzz")


def test_options_are_checked():
    for key in ("classification", "ig_pl"):
        with pytest.raises(ParameterError, match="label"):
            make_metric(key)
    with pytest.raises(ParameterError, match="no option 'label'"):
        make_metric("kl", label="y")
    with pytest.raises(ParameterError, match="queries"):
        make_metric("workload", queries=0)
    with pytest.raises(ParameterError, match="sanity"):
        make_metric("workload", sanity=-1)
    _, b, _, _ = nodes(toy_dataset())
    with pytest.raises(ColumnError, match="did you mean 'y'"):
        make_metric("classification", label="yy").value(b)
    with pytest.raises(ParameterError, match="not a quasi-identifier"):
        make_metric("workload", queries=[{"y": ["a"]}]).value(b)
    with pytest.raises(ParameterError, match="does not hold"):
        make_metric("workload", queries=[{"age": [35]}]).value(b)
    with pytest.raises(ParameterError, match="one bool per class"):
        make_metric("discernibility").value(b, np.zeros(b.n_classes + 1, bool))


def test_height_and_precision_need_hierarchy_levels():
    """A local-recoding release (cells from ranges) has no levels."""
    from veil.cells import Cells

    ds = toy_dataset()
    bottom = EquivalenceClasses.from_dataset(ds)

    class Local(EquivalenceClasses):
        def cells(self, j):
            cells = super().cells(j)
            if j != 0:
                return cells
            col = cells.column  # age codes 0..3 as two ranges: 34..45 and 66..70
            return Cells.from_ranges(col, np.array([0, 2]), np.array([1, 3]), np.array(["34-45", "66-70"]))

    keys = bottom.keys.copy()
    keys[:, 0] = (keys[:, 0] >= 2).astype(np.int32)
    local = Local(ds, bottom.levels, bottom.sizes, keys, bottom.row_class, {})
    with pytest.raises(ParameterError, match="full-domain"):
        make_metric("height").value(local)
    with pytest.raises(ParameterError, match="full-domain"):
        make_metric("precision").value(local)
    report = evaluate_all(local)
    assert "height" not in report and "precision" not in report
    assert make_metric("kl").loss_bound(local) == -math.inf
    # age ranges 34..45 and 66..70 on every record; the other columns are original
    assert report["loss"] == pytest.approx((4 * 11 / 36 + 3 * 4 / 36) / 3 / 7)
    assert report["discernibility"] == 7
    # rows 34, 34, 45, 45 lie in a cell of 4 records, 66 and 70, 70 in one of 3
    assert report["entropy"] == pytest.approx(4 * log2(4 / 2) + log2(3 / 1) + 2 * log2(3 / 2))
    # every class is still one tuple, now spread over 2 ages: q = 1/(7·2) where p = 1/7
    assert report["kl"] == pytest.approx(ln(2))


# --------------------------------------------------------------------------------------------
# 3. properties on random tables, against brute force over the rows

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = 1e-9
TEXTS = ["aab", "aba", "abb", "baa", "bab", "bba"]


@st.composite
def tables(draw):
    n = draw(st.integers(1, 25))
    kinds = draw(st.lists(st.sampled_from(["interval", "masking", "flat", "none"]), min_size=1, max_size=3))
    cols, hierarchies = {}, {}
    for j, kind in enumerate(kinds):
        name = f"q{j}"
        if kind == "interval":
            values = draw(st.lists(st.integers(0, 15), min_size=n, max_size=n))
        elif kind == "masking":
            values = draw(st.lists(st.sampled_from(TEXTS), min_size=n, max_size=n))
        else:
            values = draw(st.lists(st.sampled_from(["x", "y", "z", None]), min_size=n, max_size=n))
        cols[name] = values
        if kind == "interval":
            hierarchies[name] = builders.intervals(values, [2, 4])
        elif kind == "masking":
            hierarchies[name] = builders.masking(values)
        elif kind == "flat" and any(v is not None for v in values):
            hierarchies[name] = builders.flat(values)
    cols["y"] = draw(st.lists(st.sampled_from(["p", "q", "r"]), min_size=n, max_size=n))
    table = pd.DataFrame(cols)
    ds = Dataset(table, quasi_identifiers=[c for c in table.columns if c.startswith("q")],
                 hierarchies=hierarchies)
    return ds


def heights(ds: Dataset) -> list[int]:
    return [ds.generalizations[q].height if q in ds.generalizations else 0 for q in ds.quasi_identifiers]


def all_metrics() -> dict[str, UtilityMetric]:
    return {k: make_metric(k, **({"label": "y"} if METRICS[k].needs_label else
                                 {"queries": 25} if k == "workload" else {})) for k in METRICS}


class Rows:
    """Each row's original value and published cell (as a set of original values), per column."""

    def __init__(self, classes: EquivalenceClasses, suppressed: np.ndarray):
        ds = classes.dataset
        self.ds = ds
        self.n = ds.num_rows
        row_class = classes.row_class
        self.suppressed = suppressed[row_class]
        self.sizes = classes.sizes[row_class]
        self.row_class = row_class
        self.values, self.cells, self.columns = [], [], []
        for q, level in zip(ds.quasi_identifiers, classes.levels):
            col = ds.column(q)
            original = col.labels[col.codes]
            general = ds.labels(q, level)[ds.generalized_codes(q, level)]
            members = {g: set(original[general == g]) for g in set(general)}
            self.values.append(original)
            self.cells.append([members[g] for g in general])
            self.columns.append(col)


def brute_force(key: str, metric: UtilityMetric, classes: EquivalenceClasses, suppressed: np.ndarray) -> float:
    """The metric from its definition, one row at a time."""
    r = Rows(classes, suppressed)
    n, d = r.n, len(r.values)
    rows = range(n)
    if key == "height":
        return sum(classes.levels)
    if key == "precision":
        hs = heights(r.ds)
        return 1 - sum(d if r.suppressed[i] else sum(lv / h if h else 0 for lv, h in zip(classes.levels, hs))
                       for i in rows) / (n * d)
    if key == "discernibility":
        return sum(n if r.suppressed[i] else r.sizes[i] for i in rows)
    if key == "aecs":
        kept = [i for i in rows if not r.suppressed[i]]
        return len(kept) / len({r.row_class[i] for i in kept}) if kept else n
    if key == "loss":
        def penalty(j, cell):
            col = r.columns[j]
            if col.is_numeric:
                nums = [float(v) for v in cell if v != ""]
                everything = [float(v) for v in col.labels if v != ""]
                width = max(everything) - min(everything) if everything else 0
                return (max(nums) - min(nums)) / width if nums and width else 0
            return (len(cell) - 1) / (col.cardinality - 1) if col.cardinality > 1 else 0
        return sum(1 if r.suppressed[i] else sum(penalty(j, r.cells[j][i]) for j in range(d)) / d
                   for i in rows) / n
    if key == "entropy":
        total = 0.0
        for j in range(d):
            count = Counter(r.values[j])
            for i in rows:
                in_cell = n if r.suppressed[i] else sum(count[v] for v in r.cells[j][i])
                total += log2(in_cell / count[r.values[j][i]])
        return total
    if key == "kl":
        tuples = list(zip(*r.values))
        p = Counter(tuples)
        n_supp = int(r.suppressed.sum())
        domain = math.prod(col.cardinality for col in r.columns)
        q = {}
        for i in rows:
            box = math.prod(len(r.cells[j][i]) for j in range(d))
            own = 0 if r.suppressed[i] else r.sizes[i] / (n * box)
            q[tuples[i]] = own + n_supp / (n * domain)
        return sum(c / n * ln((c / n) / q[x]) for x, c in p.items())
    label = r.ds.column("y")
    y = label.labels[label.codes]
    kept = [i for i in rows if not r.suppressed[i]]
    groups: dict[int, list[str]] = {}
    for i in kept:
        groups.setdefault(r.row_class[i], []).append(y[i])
    if key == "classification":
        minority = sum(len(g) - max(Counter(g).values()) for g in groups.values())
        return (minority + n - len(kept)) / n
    if key == "ig_pl":
        if not kept:
            return 0.0
        m = len(kept)
        h_y = H(*(c / m for c in Counter(y[i] for i in kept).values()))
        h_given = sum(len(g) / m * H(*(c / len(g) for c in Counter(g).values())) for g in groups.values())
        return (h_y - h_given) / (n - min(len(g) for g in groups.values()) + 1)
    if key == "workload":
        errors = []
        n_supp = int(r.suppressed.sum())
        for query in metric.predicates(r.ds):
            cols = {r.ds.quasi_identifiers.index(name): set(values) for name, values in query.items()}
            truth = sum(all(r.values[j][i] in allowed for j, allowed in cols.items()) for i in rows)
            estimate = sum(math.prod(len(r.cells[j][i] & allowed) / len(r.cells[j][i])
                                     for j, allowed in cols.items()) for i in kept)
            estimate += n_supp * math.prod(len(allowed) / r.columns[j].cardinality
                                           for j, allowed in cols.items())
            errors.append(abs(estimate - truth) / max(truth, max(1, 0.001 * n)))
        return float(np.mean(errors))
    raise AssertionError(key)


@st.composite
def lattice_walks(draw):
    """A random table, a node, a more general node, and a suppression mask on each."""
    ds = draw(tables())
    hs = heights(ds)
    low = [draw(st.integers(0, h)) for h in hs]
    high = [draw(st.integers(lv, h)) for lv, h in zip(low, hs)]
    node = EquivalenceClasses.from_dataset(ds, low, track=["y"])
    general = node.roll_up(high)
    mask_node = np.array(draw(st.lists(st.booleans(), min_size=node.n_classes, max_size=node.n_classes)))
    mask_general = np.array(draw(st.lists(st.booleans(), min_size=general.n_classes,
                                          max_size=general.n_classes)))
    return ds, node, general, mask_node, mask_general


@SETTINGS
@given(lattice_walks())
def test_metrics_agree_with_brute_force(walk):
    ds, node, general, mask_node, mask_general = walk
    for key, metric in all_metrics().items():
        for classes, mask in ((node, mask_node), (general, mask_general), (general, None)):
            got = metric.value(classes, mask)
            want = brute_force(key, metric, classes, np.zeros(classes.n_classes, bool) if mask is None else mask)
            assert math.isfinite(got), key
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9), key


@SETTINGS
@given(lattice_walks())
def test_bounds_hold_and_never_decrease(walk):
    ds, node, general, mask_node, mask_general = walk
    for key, metric in all_metrics().items():
        bound = metric.loss_bound(node)
        assert bound < math.inf, key
        if bound == -math.inf:
            continue
        assert bound <= metric.loss(node) + TOL, key
        assert bound <= metric.loss(node, mask_node) + TOL, key
        assert bound <= metric.loss(general) + TOL, key
        assert bound <= metric.loss(general, mask_general) + TOL, key
        assert bound <= metric.loss(general, np.ones(general.n_classes, bool)) + TOL, key
        assert bound <= metric.loss_bound(general) + TOL, key


@SETTINGS
@given(lattice_walks())
def test_ranges_of_the_values(walk):
    ds, node, general, mask_node, mask_general = walk
    metrics = all_metrics()
    n = ds.num_rows
    bottom = EquivalenceClasses.from_dataset(ds, track=["y"])
    for classes, mask in ((node, mask_node), (general, mask_general), (bottom, None)):
        values = {k: m.value(classes, mask) for k, m in metrics.items()}
        assert all(math.isfinite(v) for v in values.values()), values
        assert values["discernibility"] >= n
        for key in ("loss", "precision", "classification"):
            assert 0 <= values[key] <= 1, key
        assert 1 <= values["aecs"] <= n
        for key in ("kl", "entropy", "workload", "ig_pl", "height"):
            assert values[key] >= 0, key
    at_bottom = {k: m.value(bottom) for k, m in metrics.items()}
    assert at_bottom["kl"] == 0 and at_bottom["entropy"] == 0 and at_bottom["workload"] == 0
    assert at_bottom["loss"] == 0 and at_bottom["precision"] == 1 and at_bottom["height"] == 0


def test_cache_is_per_dataset():
    """One metric object serves two datasets without mixing their constants."""
    metric = make_metric("kl")
    first, second = toy_dataset(), Dataset(TOY.iloc[:4], quasi_identifiers=["age", "gender", "zipcode"],
                                           hierarchies={"age": AGE})
    a = metric.value(EquivalenceClasses.from_dataset(first, [1, 1, 2]))
    b = metric.value(EquivalenceClasses.from_dataset(second, [1, 0, 0]))
    assert a == pytest.approx(EXPECTED["kl"][0])
    # second: rows 1-4 are distinct; age 1 makes boxes {34,45} and {66,70} -> q = 1/(4·2)
    assert b == pytest.approx(ln(2))


def test_workload_grouping_gives_the_same_answers(monkeypatch):
    """Answering over distinct cell combinations (many classes) equals answering per class."""
    import veil.metrics.workload as workload

    rng = np.random.default_rng(5)
    n = 400
    table = pd.DataFrame({"a": rng.integers(0, 30, n), "b": rng.choice(list("uvwxyz"), n),
                          "c": rng.integers(0, 12, n), "d": rng.choice(["m", "f"], n)})
    ds = Dataset(table, quasi_identifiers=["a", "b", "c", "d"],
                 hierarchies={"a": builders.intervals(table["a"], [5, 10]), "b": builders.flat(table["b"]),
                              "c": builders.intervals(table["c"], [3, 6])})
    results = []
    for threshold in (0, 1 << 62):
        monkeypatch.setattr(workload, "_GROUP_ABOVE", threshold)
        metric = make_metric("workload", queries=200, max_attributes=4)
        bottom = EquivalenceClasses.from_dataset(ds, [0, 0, 0, 0])
        node = bottom.roll_up([1, 0, 1, 0])
        mask = node.sizes < 3
        results.append([metric.value(bottom), metric.value(node), metric.value(node, mask)])
    assert results[0][0] == 0
    assert results[0] == pytest.approx(results[1], rel=1e-12)


@pytest.mark.skipif(not hasattr(EquivalenceClasses, "subset"), reason="EquivalenceClasses.subset is absent")
@SETTINGS
@given(lattice_walks())
def test_dropped_classes_count_as_suppressed(walk):
    """Classes with the suppressed ones dropped score as the full classes with a mask."""
    ds, node, general, mask_node, mask_general = walk
    kept = general.subset(~mask_general)
    for key, metric in all_metrics().items():
        assert metric.value(kept) == pytest.approx(metric.value(general, mask_general), rel=1e-9, abs=1e-12), key
