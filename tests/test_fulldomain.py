"""Tests of optimal full-domain generalization (veil.anonymize.FullDomain).

1. Optimality, by property tests: on random small tables (10-200 rows, 2-4 quasi-identifiers
   with interval, masking and flat hierarchies, lattices of at most 100 nodes, 1-2 sensitive
   columns), random combinations of every privacy model, random suppression limits and every
   utility metric, the search's loss equals the least loss an exhaustive search finds over every
   node of the lattice, the node it picks is feasible, and it raises InfeasibleError exactly when
   no node is feasible. The same on the first 1,500 records of Adult (720 nodes), once per
   metric, also with a roll-up cache small enough to evict.
2. Models that are not monotonic under suppression (entropy ℓ, t-closeness, δ-disclosure) are
   never used to prune: hand-made tables whose optimum lies below an infeasible node.
3. The heuristic search: feasible answers; not proven optimal when cut short; the optimum on
   small lattices with monotonic models.
4. The textbook table (ARX's "Example 1"): the optimum for k = 2 worked out by hand.
5. Bad input: infeasible settings, k above the row count, a quasi-identifier without hierarchy,
   parameters out of range.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import veil.models
from veil import Dataset, EquivalenceClasses, Hierarchy, ParameterError, VeilError, builders, load_adult
from veil.anonymize import FullDomain, InfeasibleError
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE
from veil.metrics import METRICS, make_metric
from veil.models import (DeltaDisclosure, DistinctLDiversity, EntropyLDiversity, KAnonymity,
                         RecursiveCLDiversity, TCloseness)

PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
MAX_NODES = 100


# --------------------------------------------------------------------------------------------
# Random cases
#
# A case is described by a seed and a few structural choices, so that hypothesis prints a short,
# reproducible description; the table itself is drawn from the seed.

@dataclass(frozen=True)
class Case:
    n: int
    seed: int
    qi_kinds: tuple          # per quasi-identifier: ("int", widths) | ("mask", length) | ("flat",)
    sensitive_kinds: tuple   # per sensitive column: ("cat", has_hierarchy) | ("num", False)
    model_specs: tuple       # (class name, kwargs as a tuple of pairs)
    limit: float
    metric_key: str

    @property
    def qis(self) -> list[str]:
        return [f"q{j}" for j in range(len(self.qi_kinds))]

    @property
    def sensitive(self) -> list[str]:
        return [f"s{j}" for j in range(len(self.sensitive_kinds))]

    def frame(self) -> tuple[pd.DataFrame, dict]:
        rng = np.random.default_rng(self.seed)
        n = self.n
        data, hierarchies = {"id": [f"p{i}" for i in range(n)]}, {}

        def skewed(m: int) -> np.ndarray:
            p = rng.dirichlet(np.full(m, float(rng.choice([0.3, 1.0, 5.0]))))
            return rng.choice(m, n, p=p)

        for name, kind in zip(self.qis, self.qi_kinds):
            if kind[0] == "int":
                low, span = int(rng.integers(0, 60)), int(rng.integers(2, 40))
                values = low + skewed(span)
                hierarchies[name] = builders.intervals(values, list(kind[1]))
            elif kind[0] == "mask":
                pool = ["".join(str(d) for d in rng.integers(0, 3, kind[1])) for _ in range(int(rng.integers(1, 10)))]
                values = [pool[i] for i in skewed(len(pool))]
                hierarchies[name] = builders.masking(values)
            else:
                values = [f"c{i}" for i in skewed(int(rng.integers(1, 5)))]
                hierarchies[name] = builders.flat(values)
            data[name] = values
        for name, (kind, has_hierarchy) in zip(self.sensitive, self.sensitive_kinds):
            codes = skewed(int(rng.integers(1, 6)))
            if kind == "num":
                data[name] = codes * 5 + 1
            else:
                data[name] = [f"v{c}" for c in codes]
                if has_hierarchy:
                    hierarchies[name] = Hierarchy([[f"v{c}", f"g{c // 2}", "*"] for c in range(6)])
        data["label"] = [f"L{c}" for c in skewed(int(rng.integers(1, 4)))]
        return pd.DataFrame(data), hierarchies

    def dataset(self) -> Dataset:
        frame, hierarchies = self.frame()
        return Dataset(frame, quasi_identifiers=self.qis, sensitive=self.sensitive, identifying=["id"],
                       hierarchies=hierarchies)

    def models(self) -> list:
        return [getattr(veil.models, name)(**dict(kwargs)) for name, kwargs in self.model_specs]

    def metric(self):
        return metric_for(self.metric_key)


def metric_for(key: str):
    if METRICS[key].needs_label:
        return make_metric(key, label="label")
    if key == "workload":
        return make_metric(key, queries=100, seed=3)
    return make_metric(key)


QI_KINDS = [("int", (5,)), ("int", (5, 10)), ("int", (4, 8, 16)), ("mask", 2), ("mask", 3), ("flat",)]
LEVELS = {("int", (5,)): 3, ("int", (5, 10)): 4, ("int", (4, 8, 16)): 5, ("mask", 2): 3, ("mask", 3): 4,
          ("flat",): 2}

ALL_FAMILIES = ("KAnonymity", "AlphaKAnonymity", "DistinctLDiversity", "EntropyLDiversity",
                "RecursiveCLDiversity", "TCloseness", "DeltaDisclosure", "BetaLikeness")
# Not monotonic once failing classes may be suppressed (δ-disclosure is not monotonic at all).
NON_MONOTONIC_WITH_SUPPRESSION = ("AlphaKAnonymity", "EntropyLDiversity", "RecursiveCLDiversity",
                                  "TCloseness", "DeltaDisclosure", "BetaLikeness")
MONOTONIC_WITH_SUPPRESSION = ("KAnonymity", "DistinctLDiversity")
MONOTONIC_WITHOUT_SUPPRESSION = tuple(f for f in ALL_FAMILIES if f != "DeltaDisclosure")

LIMITS = st.one_of(st.just(0.0), st.floats(0.02, 0.3).map(lambda x: round(x, 3)))
POSITIVE_LIMITS = st.floats(0.05, 0.3).map(lambda x: round(x, 3))


def rounded(low: float, high: float, digits: int = 2):
    return st.floats(low, high).map(lambda x: round(x, digits))


@st.composite
def model_spec(draw, family: str, sensitive_kinds: tuple):
    names = [f"s{j}" for j in range(len(sensitive_kinds))]
    target = st.sampled_from([None] + names)
    if family == "KAnonymity":
        kwargs = {"k": draw(st.integers(1, 6))}
    elif family == "AlphaKAnonymity":
        kwargs = {"alpha": draw(rounded(0.3, 1.0)), "k": draw(st.none() | st.integers(1, 4)),
                  "sensitive": draw(target)}
    elif family == "DistinctLDiversity":
        kwargs = {"l": draw(st.integers(1, 3)), "sensitive": draw(target)}
    elif family == "EntropyLDiversity":
        kwargs = {"l": draw(rounded(1.0, 3.0)), "sensitive": draw(target)}
    elif family == "RecursiveCLDiversity":
        kwargs = {"c": draw(rounded(0.5, 4.0)), "l": draw(st.integers(1, 3)), "sensitive": draw(target)}
    elif family == "TCloseness":
        numeric = [n for n, k in zip(names, sensitive_kinds) if k[0] == "num"]
        with_hierarchy = [n for n, k in zip(names, sensitive_kinds) if k[1]]
        distances = ["equal"] + (["ordered"] if numeric else []) + (["hierarchical"] if with_hierarchy else [])
        distance = draw(st.sampled_from(distances))
        column = {"equal": target, "ordered": st.sampled_from(numeric),
                  "hierarchical": st.sampled_from(with_hierarchy or [None])}[distance]
        kwargs = {"t": draw(rounded(0.05, 0.8)), "distance": distance, "sensitive": draw(column)}
    elif family == "DeltaDisclosure":
        kwargs = {"delta": draw(rounded(0.2, 3.0)), "sensitive": draw(target)}
    else:
        kwargs = {"beta": draw(rounded(0.2, 5.0)), "enhanced": draw(st.booleans()), "sensitive": draw(target)}
    return family, tuple(kwargs.items())


@st.composite
def cases(draw, families=ALL_FAMILIES, limits=LIMITS, metrics=tuple(sorted(METRICS)), max_models: int = 3):
    n_qi = draw(st.integers(2, 4))
    kinds = draw(st.lists(st.sampled_from(QI_KINDS), min_size=n_qi, max_size=n_qi))
    # Keep the lattice small: make the widest hierarchies flat until it has at most MAX_NODES nodes.
    while math.prod(LEVELS[k] for k in kinds) > MAX_NODES:
        widest = max(range(n_qi), key=lambda j: LEVELS[kinds[j]])
        kinds[widest] = ("flat",)
    sensitive_kinds = tuple(draw(st.lists(
        st.one_of(st.tuples(st.just("cat"), st.booleans()), st.just(("num", False))), min_size=1, max_size=2)))
    chosen = draw(st.lists(st.sampled_from(families), min_size=1, max_size=max_models))
    specs = tuple(draw(model_spec(f, sensitive_kinds)) for f in chosen)
    return Case(n=draw(st.integers(10, 200)), seed=draw(st.integers(0, 2 ** 32 - 1)), qi_kinds=tuple(kinds),
                sensitive_kinds=sensitive_kinds, model_specs=specs, limit=draw(limits),
                metric_key=draw(st.sampled_from(metrics)))


# --------------------------------------------------------------------------------------------
# The exhaustive search the tests compare with

@dataclass(frozen=True)
class Node:
    feasible: bool
    loss: float
    suppressed: int


def exhaustive(ds: Dataset, models, limit: float, metric) -> dict[tuple, Node]:
    """Every node of the lattice, its classes read from the rows: failing classes fail any model;
    a node is feasible when their records fit in floor(limit · n) (plus 1e-9 against rounding)."""
    heights = [ds.generalizations[q].height for q in ds.quasi_identifiers]
    allowed = math.floor(limit * ds.num_rows + 1e-9)
    out = {}
    for levels in itertools.product(*(range(h + 1) for h in heights)):
        classes = EquivalenceClasses.from_dataset(ds, levels)
        passed = np.ones(classes.n_classes, dtype=bool)
        for model in models:
            passed &= model.evaluate(classes).class_passed
        failing = ~passed
        suppressed = int(classes.sizes[failing].sum())
        out[levels] = Node(suppressed <= allowed, metric.loss(classes, failing), suppressed)
    return out


def same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def below_an_infeasible_node(nodes: dict[tuple, Node], levels: tuple) -> bool:
    return any(not node.feasible and other != levels and all(o >= v for o, v in zip(other, levels))
               for other, node in nodes.items())


def check_optimal(case: Case) -> None:
    ds = case.dataset()
    nodes = exhaustive(ds, case.models(), case.limit, case.metric())
    feasible = {levels: node for levels, node in nodes.items() if node.feasible}
    search = FullDomain(case.models(), suppression_limit=case.limit, metric=case.metric())
    if not feasible:
        event("infeasible")
        with pytest.raises(InfeasibleError):
            search.fit(ds)
        return
    search.fit(ds)
    result = search.result_
    best = min(node.loss for node in feasible.values())
    assert result.levels in feasible, f"{result.levels} is not feasible"
    assert same(result.loss, best), f"search found {result.loss} at {result.levels}, the optimum is {best}"
    assert same(nodes[result.levels].loss, result.loss)
    assert result.suppressed_records == nodes[result.levels].suppressed
    assert result.proven_optimal is True
    assert result.nodes_total == len(nodes)
    assert 0 < result.nodes_checked <= len(nodes)
    assert search.levels_ == dict(zip(ds.quasi_identifiers, result.levels))
    optima = [levels for levels, node in feasible.items() if same(node.loss, best)]
    if all(below_an_infeasible_node(nodes, levels) for levels in optima):
        event("every optimum lies below an infeasible node")


# --------------------------------------------------------------------------------------------
# 1. Optimality against the exhaustive search

@settings(max_examples=200, **PROPERTY)
@given(case=cases())
def test_optimal_search_matches_exhaustive_search(case: Case):
    check_optimal(case)


@settings(max_examples=150, **PROPERTY)
@given(case=cases(families=NON_MONOTONIC_WITH_SUPPRESSION + ("KAnonymity",), limits=POSITIVE_LIMITS))
def test_optimal_with_suppression_and_models_that_are_not_monotonic(case: Case):
    check_optimal(case)


@settings(max_examples=50, **PROPERTY)
@given(case=cases(families=("KAnonymity", "DistinctLDiversity"), max_models=2))
def test_optimal_with_only_monotonic_models(case: Case):
    """Here predictive tagging does all the pruning it can."""
    check_optimal(case)


# Real data and a larger lattice: the first 1,500 records of the bundled Adult table with six of its
# quasi-identifiers and ARX's hierarchy files (2·5·2·3·4·3 = 720 nodes; the workclass hierarchy has a
# leaf the data lacks), one combination of models per metric.

ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "workclass"]
ADULT_CASES = [
    ("height", [KAnonymity(5), EntropyLDiversity(2.5, sensitive="occupation")], 0.05),
    ("precision", [KAnonymity(3), TCloseness(0.3, "hierarchical")], 0.1),
    ("discernibility", [veil.models.AlphaKAnonymity(0.6, k=3)], 0.03),
    ("aecs", [KAnonymity(4), veil.models.BetaLikeness(3, enhanced=True)], 0.04),
    ("loss", [KAnonymity(5), EntropyLDiversity(2.5)], 0.05),
    ("entropy", [RecursiveCLDiversity(3, 3), DeltaDisclosure(2.5)], 0.08),
    ("classification", [KAnonymity(10), DistinctLDiversity(3)], 0.02),
    ("kl", [KAnonymity(2), TCloseness(0.4)], 0.0),
    ("ig_pl", [KAnonymity(5), DeltaDisclosure(3)], 0.1),
    ("workload", [KAnonymity(3), veil.models.BetaLikeness(4)], 0.05),
]


@pytest.fixture(scope="module")
def adult_1500() -> Dataset:
    from veil.data.bundled import adult_csv, adult_hierarchies

    frame = pd.read_csv(adult_csv(), sep=";", nrows=1500, dtype=str, keep_default_na=False)
    files = adult_hierarchies()
    return Dataset(frame, quasi_identifiers=ADULT_QIS, sensitive=["occupation"],
                   hierarchies={c: files[c] for c in ADULT_QIS + ["occupation"]})


@pytest.mark.parametrize("metric, models, limit", ADULT_CASES, ids=[c[0] for c in ADULT_CASES])
def test_optimal_on_adult_matches_exhaustive_search(adult_1500, metric, models, limit, monkeypatch):
    def label_metric():
        # classification and ig_pl read salary-class, a column with no role (tracked by the search).
        return make_metric(metric, label="salary-class") if METRICS[metric].needs_label else metric_for(metric)

    nodes = exhaustive(adult_1500, models, limit, label_metric())
    feasible = [node.loss for node in nodes.values() if node.feasible]
    assert feasible, "the case was chosen to be feasible"
    result = FullDomain(models, suppression_limit=limit, metric=label_metric()).fit(adult_1500).result_
    assert same(result.loss, min(feasible))
    assert nodes[result.levels].feasible and result.proven_optimal
    # A small roll-up cache forces nodes to be rolled up again after their sources were evicted:
    # the same answer. (The cache is bounded by nodes, classes or bytes, whichever the module has.)
    import veil.anonymize.fulldomain as module

    bounds = {"CACHE_NODES": 3, "CACHE_CLASSES": 1500, "CACHE_BYTES": 40_000}
    bound = next((name for name in bounds if hasattr(module, name)), None)
    if bound is None:
        return
    monkeypatch.setattr(module, bound, bounds[bound])
    small_cache = FullDomain(models, suppression_limit=limit, metric=label_metric()).fit(adult_1500).result_
    assert same(small_cache.loss, result.loss) and nodes[small_cache.levels].feasible


# --------------------------------------------------------------------------------------------
# 2. Models that are not monotonic with suppression are never used to prune
#
# One quasi-identifier zip (masking: 11 -> 1* -> *) and a constant one, sex (flat). Each table is
# made so that level 0 of zip is feasible, level 1 is not, and level 2 is again: an optimum that
# lies below an infeasible node, which a search that tags with these models would miss.

def zip_table(groups: dict[str, str]) -> Dataset:
    rows = [(z, v) for z, values in groups.items() for v in values]
    df = pd.DataFrame({"zip": [z for z, _ in rows], "sex": ["F"] * len(rows), "s": [v for _, v in rows]})
    return Dataset(df, quasi_identifiers=["zip", "sex"], sensitive=["s"],
                   hierarchies={"zip": builders.masking(df["zip"]), "sex": builders.flat(df["sex"])})


NOT_MONOTONIC = {
    # Entropy 2-diversity, 4 of 10 records may go.
    # level 0: 11 {a,b} ℓ=2 ok; 12 {a,a,a,a} ℓ=1 fails (4 records); 21, 22 {c,d} ok -> 4 suppressed: feasible
    # level 1: 1* {a×5, b} ℓ = exp(H(5/6, 1/6)) = 1.57 fails (6 records) -> infeasible
    # level 2: * {a×5, b, c×2, d×2} ℓ = exp(H(.5, .1, .2, .2)) = 3.39 -> feasible
    "entropy": ({"11": "ab", "12": "aaaa", "21": "cd", "22": "cd"}, [EntropyLDiversity(2)], 0.4, 4),
    # 0.25-closeness (equal EMD), 3 of 11 records may go; table a: 6/11, b: 5/11.
    # level 0: 11 {a,b} EMD .045; 12 {a,a,a} EMD .455 fails (3); 21, 22 {b,b,a} EMD .212 -> feasible
    # level 1: 1* {a×4, b} EMD .8 - 6/11 = .255 fails (5 records) -> infeasible
    # level 2: one class, EMD 0 -> feasible
    "t-closeness": ({"11": "ab", "12": "aaa", "21": "bba", "22": "bba"}, [TCloseness(0.25)], 0.3, 3),
    # 0.5-disclosure, no suppression; table a: 21/30, b: 9/30.
    # level 0: 11 {a×8}: ln(1/.7) = .36; 12 {a×3, b×2}: ln(.4/.3) = .29; 21 {a×5, b×3}: .22;
    #          22 {a×5, b×4}: ln(.444/.3) = .39 -> all < .5, feasible
    # level 1: 1* {a×11, b×2}: |ln((2/13)/.3)| = .67 fails (13 records) -> infeasible
    # level 2: one class, δ = 0 -> feasible
    "δ-disclosure": ({"11": "a" * 8, "12": "aaabb", "21": "aaaaabbb", "22": "aaaaabbbb"},
                     [DeltaDisclosure(0.5)], 0.0, 0),
}


@pytest.mark.parametrize("metric", ["height", "loss", "discernibility"])
@pytest.mark.parametrize("name", list(NOT_MONOTONIC))
def test_optimum_below_an_infeasible_node_is_found(name, metric):
    groups, models, limit, suppressed = NOT_MONOTONIC[name]
    ds = zip_table(groups)
    nodes = exhaustive(ds, models, limit, make_metric(metric))
    # The premise: zip level 0 feasible, level 1 infeasible, level 2 feasible.
    assert [nodes[(z, 0)].feasible for z in range(3)] == [True, False, True]
    search = FullDomain(models, suppression_limit=limit, metric=metric).fit(ds)
    if metric == "height":
        assert search.result_.levels == (0, 0)
        assert search.result_.loss == 0
        assert search.result_.suppressed_records == suppressed
    best = min(node.loss for node in nodes.values() if node.feasible)
    assert same(search.result_.loss, best)
    assert search.result_.proven_optimal
    release = search.transform(ds)
    assert release.suppressed_records == search.result_.suppressed_records
    for model in models:
        assert model.evaluate(release.released_classes).passed


# --------------------------------------------------------------------------------------------
# 3. The heuristic search

@settings(max_examples=60, **PROPERTY)
@given(case=st.one_of(
    cases(families=MONOTONIC_WITH_SUPPRESSION, max_models=2),
    cases(families=MONOTONIC_WITHOUT_SUPPRESSION, limits=st.just(0.0))))
def test_heuristic_finds_the_optimum_with_monotonic_models(case: Case):
    """With monotonic feasibility every feasible node lies on a feasible path down from the top,
    so a descent that is not cut short sees them all."""
    ds = case.dataset()
    nodes = exhaustive(ds, case.models(), case.limit, case.metric())
    feasible = [node.loss for node in nodes.values() if node.feasible]
    search = FullDomain(case.models(), suppression_limit=case.limit, metric=case.metric(), search="heuristic")
    if not feasible:
        with pytest.raises(InfeasibleError):
            search.fit(ds)
        return
    result = search.fit(ds).result_
    assert nodes[result.levels].feasible
    assert same(result.loss, min(feasible))
    assert result.proven_optimal is True


@settings(max_examples=80, **PROPERTY)
@given(case=cases(), time_limit=st.sampled_from([None, 1e-9]))
def test_heuristic_answer_is_feasible_and_never_claims_too_much(case: Case, time_limit):
    ds = case.dataset()
    nodes = exhaustive(ds, case.models(), case.limit, case.metric())
    feasible = [node.loss for node in nodes.values() if node.feasible]
    search = FullDomain(case.models(), suppression_limit=case.limit, metric=case.metric(), search="heuristic",
                        time_limit=time_limit)
    top = tuple(ds.generalizations[q].height for q in ds.quasi_identifiers)
    try:
        result = search.fit(ds).result_
    except InfeasibleError:
        # Right when no node is feasible. The descent starts at the top, so it also gives up when
        # only the top is infeasible: test_heuristic_does_not_call_a_feasible_problem_infeasible.
        assert not feasible or not nodes[top].feasible
        return
    assert nodes[result.levels].feasible
    assert same(nodes[result.levels].loss, result.loss)
    assert result.suppressed_records == nodes[result.levels].suppressed
    assert result.loss >= min(feasible) - 1e-12 * max(1.0, abs(min(feasible)))
    if time_limit is not None:
        assert result.proven_optimal is False  # a limit of 1 ns always cuts the descent short
    limit_records = math.floor(case.limit * ds.num_rows + 1e-9)
    monotonic = all(m.monotonic_with_suppression if limit_records else m.monotonic for m in case.models())
    if not monotonic and result.proven_optimal:
        # Without monotonic models only a descent that expanded every node may claim the optimum.
        assert result.nodes_checked == result.nodes_total
    if result.proven_optimal:
        assert same(result.loss, min(feasible))


def test_heuristic_does_not_call_a_feasible_problem_infeasible():
    # Entropy 2-diversity, 4 of 8 records may go. Top: {a×6, b×2}, ℓ = exp(H(.75, .25)) = 1.75 fails
    # with all 8 records. Level 0: 11 {a,b} and 12 {a,b} have ℓ = 2; 21 {a×4} fails (4 records,
    # within the limit): feasible. The exact search finds level 0; the heuristic must not claim that
    # no generalization satisfies the model.
    ds = zip_table({"11": "ab", "12": "ab", "21": "aaaa"})
    models = [EntropyLDiversity(2)]
    exact = FullDomain(models, suppression_limit=0.5, metric="height").fit(ds)
    assert exact.result_.levels == (0, 0)
    heuristic = FullDomain(models, suppression_limit=0.5, metric="height", search="heuristic").fit(ds)
    assert heuristic.result_.suppressed_records <= 4
    # The descent expanded every node of this small lattice, so its answer is the optimum.
    assert heuristic.result_.nodes_checked == heuristic.result_.nodes_total
    assert heuristic.result_.levels == (0, 0) and heuristic.result_.proven_optimal


@pytest.fixture(scope="module")
def adult():
    return load_adult(ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE)


@pytest.mark.parametrize("search", ["heuristic", "optimal"])
def test_time_limit_cut_short_is_not_proven_optimal(adult, search):
    models = [KAnonymity(5), EntropyLDiversity(3, sensitive="occupation")]
    fitted = FullDomain(models, suppression_limit=0.02, metric="loss", search=search, time_limit=1e-6).fit(adult)
    result = fitted.result_
    assert result.proven_optimal is False
    assert result.nodes_checked < result.nodes_total
    # What it returns still satisfies the models within the limit.
    release = fitted.transform(adult)
    assert release.suppressed_records == result.suppressed_records <= math.floor(0.02 * adult.num_rows)
    for model in models:
        assert model.evaluate(release.released_classes).passed


def test_optimal_search_on_adult_is_proven_and_feasible(adult):
    models = [KAnonymity(5), EntropyLDiversity(3, sensitive="occupation")]
    fitted = FullDomain(models, suppression_limit=0.02, metric="loss").fit(adult)
    heuristic = FullDomain(models, suppression_limit=0.02, metric="loss", search="heuristic",
                           time_limit=1).fit(adult)
    assert fitted.result_.proven_optimal
    assert fitted.result_.nodes_checked < fitted.result_.nodes_total
    # No heuristic answer beats the proven optimum.
    assert heuristic.result_.loss >= fitted.result_.loss - 1e-12


def test_progress_reports_end_at_the_lattice_size(adult):
    calls = []
    FullDomain([KAnonymity(5)], metric="height").fit(adult, progress=lambda done, total: calls.append((done, total)))
    total = math.prod(adult.generalizations[q].height + 1 for q in adult.quasi_identifiers)
    assert calls and calls[-1] == (total, total)
    assert all(0 <= done <= t == total for done, t in calls)


# --------------------------------------------------------------------------------------------
# 4. The textbook table: ARX's "Example 1"
#
#   row  age  gender  zipcode      age: 34, 45 -> <50 ; 66, 70 -> >=50 ; -> *        (height 2)
#    1    34  male    81667        gender: value -> *                                 (height 1)
#    2    45  female  81675        zipcode: 81667 -> 8166* -> 816** -> 81*** -> 8**** -> *  (height 5)
#    3    66  male    81925
#    4    70  female  81931        lattice: 3 · 2 · 6 = 36 nodes
#    5    34  female  81931
#    6    70  male    81931
#    7    45  male    81931
#
# 2-anonymity, no suppression. Row 1 (zip 81667) shares its zip with row 2 (81675) first at level 2
# (816**) and with every other row only at level 3 (81***), so every 2-anonymous node has zip >= 2:
#   zip 2: rows 1 and 2 must share a class, so age >= 1 (34, 45 -> <50) and gender 1.
#          (1,1,2): {1,2} (<50,*,816**), {5,7} (<50,*,819**), {3,4,6} (>=50,*,819**)  -> 2-anonymous
#          height 1 + 1 + 2 = 4.
#   zip 3 with age + gender = 1: (1,0,3) leaves row 4 (>=50,female) alone, (0,1,3) row 3 (66) alone.
#   zip 4 or 5 with age = gender = 0: every (age, gender) pair is unique.
# So the least height is 4, reached only at (1,1,2).
# Discernibility at (1,1,2): 2² + 2² + 3² = 17, the least possible for 7 records in classes of at
# least 2 (7 = 2 + 2 + 3); every other 2-anonymous node merges these classes, e.g. (2,0,3):
# {1,3,6,7}, {2,4,5} -> 16 + 9 = 25, and (2,1,2): {1,2}, {3..7} -> 4 + 25 = 29.
# Precision is 1 - mean(level / height), so it weighs the columns differently from height:
#   (1,1,2): 1 - (1/2 + 1/1 + 2/5) / 3 = 1 - 1.9/3 = 0.367
#   (2,0,3): 1 - (2/2 + 0/1 + 3/5) / 3 = 1 - 1.6/3 = 0.467   <- the best 2-anonymous node
#   (1,1,3): 1 - 2.1/3 ; (2,1,2): 1 - 2.4/3 ; every other 2-anonymous node is above one of these.
# The search minimizes the loss 1 - precision: 1.6/3 at (2,0,3).

@pytest.fixture
def toy(arx_toy_csv, arx_toy_hierarchy_paths) -> Dataset:
    return Dataset(arx_toy_csv, quasi_identifiers=["age", "gender", "zipcode"], hierarchies=arx_toy_hierarchy_paths)


@pytest.mark.parametrize("metric, levels, loss", [("height", (1, 1, 2), 4.0),
                                                  ("discernibility", (1, 1, 2), 17.0),
                                                  ("precision", (2, 0, 3), 1.6 / 3)])
def test_textbook_optimum_for_2_anonymity(toy, metric, levels, loss):
    fitted = FullDomain([KAnonymity(2)], metric=metric).fit(toy)
    assert fitted.result_.levels == levels
    assert fitted.levels_ == dict(zip(["age", "gender", "zipcode"], levels))
    assert fitted.result_.loss == pytest.approx(loss, rel=1e-12)
    assert fitted.result_.suppressed_records == 0
    assert fitted.result_.proven_optimal
    if levels != (1, 1, 2):
        return
    release = fitted.transform(toy)
    assert sorted(release.released_classes.sizes.tolist()) == [2, 2, 3]
    metrics = release.private_manifest["metrics"]
    assert metrics["height"] == 4
    assert metrics["discernibility"] == 17
    assert metrics["precision"] == pytest.approx(1 - 1.9 / 3, rel=1e-12)
    assert metrics["aecs"] == pytest.approx(7 / 3, rel=1e-12)
    # The textbook's generalized table, its rows shuffled.
    assert list(release.data.columns) == ["age", "gender", "zipcode"]
    assert sorted(map(tuple, release.data.to_numpy().tolist())) == sorted(zip(
        ["<50", "<50", ">=50", ">=50", "<50", ">=50", "<50"], ["*"] * 7,
        ["816**", "816**", "819**", "819**", "819**", "819**", "819**"]))
    # Each record's own row, in the input's order when it is kept.
    assert fitted.transform(toy, shuffle=False).data.to_dict("list") == {
        "age": ["<50", "<50", ">=50", ">=50", "<50", ">=50", "<50"],
        "gender": ["*"] * 7,
        "zipcode": ["816**", "816**", "819**", "819**", "819**", "819**", "819**"],
    }


def test_textbook_suppression_trades_against_discernibility(toy):
    # With 1 of 7 records allowed out (limit 0.15 -> floor(1.05) = 1) a suppressed record costs
    # |D| = 7 in discernibility. E.g. (1,0,3): (<50,male) {1,7}, (<50,female) {2,5},
    # (>=50,male) {3,6}, (>=50,female) {4} suppressed -> 4 + 4 + 4 + 7 = 19 > 17, so (1,1,2) stays
    # optimal; for height, no node of height 3 has at most one record in a class below 2 (each
    # leaves at least two singletons), so the answer is still height 4.
    for metric, loss in (("discernibility", 17.0), ("height", 4.0)):
        fitted = FullDomain([KAnonymity(2)], suppression_limit=0.15, metric=metric).fit(toy)
        assert fitted.result_.loss == loss
        nodes = exhaustive(toy, [KAnonymity(2)], 0.15, make_metric(metric))
        assert min(n.loss for n in nodes.values() if n.feasible) == loss
    assert exhaustive(toy, [KAnonymity(2)], 0.15, make_metric("discernibility"))[(1, 0, 3)] == Node(True, 19.0, 1)


# --------------------------------------------------------------------------------------------
# 5. Bad input

@pytest.fixture
def patients() -> pd.DataFrame:
    return pd.DataFrame({
        "zip": ["13053", "13068", "13068", "13053", "14853", "14853", "14850", "14850"],
        "age": [28, 29, 21, 23, 50, 55, 47, 49],
        "disease": ["flu", "cancer", "flu", "cold", "cancer", "flu", "cold", "flu"],
    })


def patients_dataset(frame: pd.DataFrame, hierarchies=None) -> Dataset:
    if hierarchies is None:
        hierarchies = {"zip": builders.masking(frame["zip"]), "age": builders.intervals(frame["age"], [10, 20])}
    return Dataset(frame, quasi_identifiers=["zip", "age"], sensitive=["disease"], hierarchies=hierarchies)


@pytest.mark.parametrize("model, name", [(DistinctLDiversity(4), "distinct ℓ-diversity"),
                                         (EntropyLDiversity(4), "entropy ℓ-diversity"),
                                         (RecursiveCLDiversity(1, 3), "recursive")])
def test_infeasible_message_names_the_model_and_says_to_relax_it(patients, model, name):
    # Three distinct diseases: no node is 4-diverse, even the top.
    ds = patients_dataset(patients)
    with pytest.raises(InfeasibleError) as info:
        FullDomain([KAnonymity(2), model], suppression_limit=0.1).fit(ds)
    message = str(info.value)
    assert isinstance(info.value, VeilError)
    assert name in message and "relax" in message
    assert "\n" not in message and message.endswith(".")
    assert "k-anonymity" not in message  # the model that cannot be met, not the other


def test_k_above_the_row_count_is_a_parameter_error(patients):
    ds = patients_dataset(patients)
    for model in (KAnonymity(9), veil.models.AlphaKAnonymity(0.9, k=9)):
        with pytest.raises(ParameterError, match="k = 9 is larger than the table's 8 records"):
            FullDomain([model]).fit(ds)
    FullDomain([KAnonymity(8)]).fit(ds)  # k equal to the row count is fine: one class of everyone


def test_quasi_identifier_without_hierarchy_is_refused(patients):
    ds = patients_dataset(patients, hierarchies={"zip": builders.masking(patients["zip"])})
    with pytest.raises(ParameterError, match="'age' has no hierarchy"):
        FullDomain([KAnonymity(2)]).fit(ds)


@pytest.mark.parametrize("kwargs, words", [
    (dict(models=[]), "at least one privacy model"),
    (dict(models=[KAnonymity()]), "needs a threshold"),
    (dict(models=[KAnonymity(2)], suppression_limit=1.0), "[0, 1)"),
    (dict(models=[KAnonymity(2)], suppression_limit=-0.1), "[0, 1)"),
    (dict(models=[KAnonymity(2)], search="fast"), "unknown search"),
    (dict(models=[KAnonymity(2)], time_limit=0), "time limit must be positive"),
])
def test_parameters_out_of_range(kwargs, words):
    with pytest.raises(ParameterError) as info:
        FullDomain(**kwargs)
    assert words in str(info.value)


def test_unknown_metric_and_transform_before_fit(patients):
    ds = patients_dataset(patients)
    with pytest.raises(ParameterError, match="did you mean 'loss'"):
        FullDomain([KAnonymity(2)], metric="los").fit(ds)
    with pytest.raises(ParameterError, match="call fit before transform"):
        FullDomain([KAnonymity(2)]).transform(ds)
    with pytest.raises(ParameterError, match="label"):
        FullDomain([KAnonymity(2)], metric="classification").fit(ds)


def test_input_frame_is_not_modified(patients):
    before = patients.copy(deep=True)
    ds = patients_dataset(patients)
    FullDomain([KAnonymity(2), DistinctLDiversity(2)], suppression_limit=0.25).fit_transform(ds, shuffle=True, rng=1)
    pd.testing.assert_frame_equal(patients, before)
