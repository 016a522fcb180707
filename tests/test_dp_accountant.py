"""The privacy-budget accountant: composition arithmetic, refusal before recording, JSON."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.dp.accountant import (
    Accountant,
    Budget,
    BudgetExceededError,
    BudgetFileError,
    Charge,
    ExponentialDiscount,
    FilterAccountant,
    HyperbolicDiscount,
    TemporalAccountant,
    TemporalCorrelationAccountant,
    WindowAccountant,
    advanced_composition,
    from_json,
)
from veil.dp.exact import from_text, to_text
from veil.errors import ParameterError, VeilError

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def acc(epsilon=1.0, delta=0.0, **kw) -> Accountant:
    return Accountant(Budget(epsilon, delta), dataset_id="adult", **kw)


# --------------------------------------------------------------------------- sequential, exact

def test_ten_charges_of_a_tenth_exhaust_one_exactly():
    a = acc(1.0)
    for i in range(10):
        assert a.can_afford(0.1)
        a.charge(0.1, label=f"q{i}")
    assert a.spent().epsilon == 1 and a.spent().method == "sequential"
    assert a.remaining() == (0, 0)
    assert not a.can_afford(1e-12)
    with pytest.raises(BudgetExceededError, match="q10"):
        a.charge(1e-12, label="q10")


def test_sequential_sums_are_exact_decimals():
    a = acc(3.0, 1e-5)
    for eps, d in [(0.1, 1e-6), (0.2, 2e-6), (0.7, 0), (Decimal("0.3"), "0.000001"), ("1/3", 0)]:
        a.charge(eps, d, label="q")
    eps, delta = a.spent()
    assert eps == Fraction(13, 10) + Fraction(1, 3)
    assert delta == Fraction(4, 10 ** 6)
    assert a.remaining() == (Fraction(3) - eps, Fraction(1, 10 ** 5) - delta)


def test_numpy_and_integer_inputs_are_accepted():
    a = acc(2)
    a.charge(np.float64(0.25), label="a")
    a.charge(np.float32(0.5), label="b")
    a.charge(1, label="c")
    assert math.isclose(float(a.spent().epsilon), 1.75, rel_tol=1e-6)


def test_postprocessing_is_free():
    a = acc(1.0)
    a.charge(0.4, label="histogram")
    before = a.spent()
    rec = a.postprocess("smooth the histogram")
    assert rec.kind == "postprocess" and rec.epsilon == 0 and rec.delta == 0
    assert a.spent() == before
    assert [r["counted"] for r in a.report()] == [Fraction(2, 5), 0]


# --------------------------------------------------------------------------- refusal before recording

def test_overspend_raises_before_recording_and_names_the_query():
    a = acc(1.0, 1e-6)
    a.charge(0.8, label="mean age")
    state = a.to_json()
    with pytest.raises(BudgetExceededError) as info:
        a.charge(0.3, label="median income")
    message = str(info.value)
    assert "median income" in message and "0.3" in message and "0.2" in message and "adult" in message
    assert message.count(".") >= 1 and "\n" not in message
    assert info.value.requested == (Fraction(3, 10), 0) and info.value.remaining[0] == Fraction(1, 5)
    assert isinstance(info.value, VeilError)
    assert a.to_json() == state and len(a.charges) == 1
    with pytest.raises(BudgetExceededError, match="δ"):
        a.charge(0.1, 2e-6, label="gaussian")
    assert a.to_json() == state
    a.charge(0.2, 1e-6, label="last")  # what is left is still all there
    assert tuple(a.spent()) == (1, Fraction(1, 10 ** 6))


def test_delta_refused_when_budget_has_none():
    a = acc(1.0)
    with pytest.raises(BudgetExceededError, match="δ"):
        a.charge(0.1, 1e-9, label="gaussian")
    assert a.charges == ()


@pytest.mark.parametrize("epsilon", [0, -0.1, float("nan"), float("inf"), True, "abc", None])
def test_bad_epsilon(epsilon):
    a = acc()
    with pytest.raises(ParameterError):
        a.charge(epsilon, label="q")
    with pytest.raises(ParameterError):
        Budget(epsilon)
    assert a.charges == ()


def test_zero_epsilon_points_to_postprocess():
    with pytest.raises(ParameterError, match="post-processing"):
        acc().charge(0, label="q")


@pytest.mark.parametrize("delta", [1, 1.5, -0.1, float("nan")])
def test_bad_delta(delta):
    with pytest.raises(ParameterError):
        acc(1.0, 0.5).charge(0.1, delta, label="q")
    with pytest.raises(ParameterError):
        Budget(1.0, delta)


def test_bad_labels_and_dataset_ids():
    with pytest.raises(ParameterError, match="label"):
        acc().charge(0.1, label="")
    with pytest.raises(ParameterError, match="dataset_id"):
        Accountant(Budget(1), dataset_id="")
    with pytest.raises(ParameterError):
        Accountant(1.0, dataset_id="x")
    with pytest.raises(ParameterError):
        acc(composition="renyi")


# --------------------------------------------------------------------------- parallel

def test_parallel_group_costs_the_largest_partition():
    a = acc(1.0)
    with a.parallel("histogram by age") as g:
        g.charge(0.5, partition="age<30")
        g.charge(0.5, partition="30<=age<60")
        g.charge(0.3, partition="age>=60")
        assert g.spent() == (Fraction(1, 2), 0)
    assert a.spent().epsilon == Fraction(1, 2)
    a.charge(0.25, label="count")
    assert a.spent().epsilon == Fraction(3, 4)
    rows = a.report()
    assert rows[0]["kind"] == "parallel" and rows[0]["label"] == "histogram by age"
    assert rows[0]["counted"] == Fraction(1, 2)
    assert [r["counted"] for r in rows[1:4]] == [None, None, None]
    assert rows[4]["counted"] == Fraction(1, 4)


def test_same_partition_twice_adds_up_within_a_group():
    a = acc(1.0)
    with a.parallel("g") as g:
        g.charge(0.4, partition="a")
        g.charge(0.3, partition="b")
        g.charge(0.2, partition="a")
        assert g.can_afford(0.7, partition="b")       # b would reach 1.0: the group costs 1.0
        assert not g.can_afford(0.8, partition="b")   # b would reach 1.1
        assert g.can_afford(0.4, partition="a")       # a would reach 1.0
        with pytest.raises(BudgetExceededError, match="partition 'a' of parallel group 'g'"):
            g.charge(0.5, partition="a")
    assert a.spent().epsilon == Fraction(6, 10)


def test_parallel_group_misuse():
    a = acc(1.0)
    with a.parallel("g") as g:
        g.charge(0.1, partition="a")
    with pytest.raises(ParameterError, match="closed"):
        g.charge(0.1, partition="b")
    with pytest.raises(ParameterError, match="already exists"), a.parallel("g"):
        pass
    with pytest.raises(ParameterError, match="parallel group"):
        a.charge(0.1, label="q", partition="a")
    with pytest.raises(ParameterError, match="parallel group"):
        a.charge(0.1, label="q", group="h")


# --------------------------------------------------------------------------- advanced composition

def test_advanced_composition_formula_by_hand():
    # k = 10, ε = 0.1, δ' = 1e-5: √(2·10·ln 1e5)·0.1 + 10·0.1·(e^0.1 − 1)
    #   ln 1e5 = 11.512925464970229, √230.25850929940458 = 15.174271293851463
    #   e^0.1 − 1 = 0.10517091807564771
    by_hand = 15.174271293851463 * 0.1 + 1.0 * 0.10517091807564771
    assert math.isclose(by_hand, 1.6225980474607940, rel_tol=1e-12)
    assert math.isclose(advanced_composition(10, 0.1, 1e-5), by_hand, rel_tol=1e-12)
    assert advanced_composition(0, 0.1, 1e-5) == 0
    with pytest.raises(ParameterError):
        advanced_composition(10, 0.1, 0)


def test_better_bound_is_reported():
    a = acc(10.0)
    for _ in range(10):
        a.charge(0.1, label="q")
    spent = a.spent(delta_prime=1e-5)
    assert spent.method == "sequential" and spent.epsilon == 1  # 1.0 < 1.6226
    assert math.isclose(spent.advanced[0], 1.6225980474607940, rel_tol=1e-12)
    assert spent.advanced[1] == Fraction(1, 10 ** 5)

    b = acc(20.0)
    for _ in range(1000):
        b.charge(0.01, label="q")
    spent = b.spent(delta_prime=1e-5)
    # √(2·1000·ln 1e5)·0.01 + 1000·0.01·(e^0.01 − 1) = 1.5174271293851463 + 0.10050167084168
    assert spent.method == "advanced"
    assert math.isclose(spent.epsilon, 1.5174271293851463 + 0.1005016708416805, rel_tol=1e-12)
    assert spent.delta == Fraction(1, 10 ** 5) and spent.sequential == (10, 0)


def test_advanced_accountant_admits_what_sequential_refuses():
    seq = acc(2.0, 1e-3)
    adv = acc(2.0, 1e-3, composition="advanced", advanced_delta_prime=1e-5)
    for i in range(1000):
        adv.charge(0.01, label=f"q{i}")
        if i < 200:
            seq.charge(0.01, label=f"q{i}")
    with pytest.raises(BudgetExceededError):
        seq.charge(0.01, label="q200")
    spent = adv.spent()
    assert spent.method == "advanced" and spent.epsilon <= 2
    assert spent.delta == Fraction(1, 10 ** 5)
    # early on the sequential bound is the better one
    early = acc(2.0, 1e-3, composition="advanced", advanced_delta_prime=1e-5)
    early.charge(0.5, label="q")
    assert early.spent().method == "sequential" and early.spent().epsilon == Fraction(1, 2)
    left, _ = adv.remaining()
    assert left >= 0 and (left == 0 or adv.can_afford(left * 0.999))


def test_advanced_needs_a_delta():
    with pytest.raises(ParameterError, match="delta"):
        acc(1.0, composition="advanced")
    with pytest.raises(ParameterError, match="advanced_delta_prime"):
        acc(1.0, 1e-6, composition="advanced", advanced_delta_prime=1e-5)
    with pytest.raises(ParameterError):
        acc(1.0, 1e-6, advanced_delta_prime=1e-7)
    assert acc(1.0, 1e-6, composition="advanced").delta_prime == Fraction(1, 2 * 10 ** 6)


# --------------------------------------------------------------------------- JSON

def test_json_round_trip(tmp_path):
    a = acc(2.0, 1e-5, composition="advanced", advanced_delta_prime=2e-6)
    a.charge(0.1, 1e-6, label="mean age")
    with a.parallel("by sex") as g:
        g.charge(0.3, partition="F")
        g.charge(0.2, partition="M", label="men")
    a.postprocess("bar chart")
    a.charge("1/3", label="third")
    text = a.to_json()
    doc = json.loads(text)
    assert doc["version"] == 2 and doc["dataset_id"] == "adult" and doc["composition"] == "advanced"
    assert doc["charges"][0] == {**doc["charges"][0], "label": "mean age", "epsilon": "0.1",
                                 "delta": "0.000001", "group": None, "kind": "query"}
    assert doc["charges"][-1]["epsilon"] == "1/3"
    b = from_json(text, dataset_id="adult")
    assert isinstance(b, Accountant)
    assert b.charges == a.charges and b.spent() == a.spent() and b.budget == a.budget
    assert b.delta_prime == a.delta_prime and b.to_json() == text
    with pytest.raises(ParameterError, match="already exists"), b.parallel("by sex"):
        pass
    b.charge(0.1, label="more")
    assert b.spent().epsilon == a.spent().epsilon + Fraction(1, 10)
    assert from_json(a.to_json().replace('"version": 2', '"version": 1'), dataset_id="adult").charges == a.charges


def test_another_datasets_budget_is_refused():
    a = acc()
    a.charge(0.5, label="q")
    with pytest.raises(BudgetFileError, match="belongs to dataset 'adult', not 'census'") as info:
        from_json(a.to_json(), dataset_id="census", source="b.json")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("mangle", [
    lambda t: t[: len(t) // 2],
    lambda t: "",
    lambda t: "[1, 2]",
    lambda t: t.replace('"veil-dp-budget"', '"something-else"'),
    lambda t: t.replace('"version": 2', '"version": "one"'),
    lambda t: t.replace('"dataset_id": "adult"', '"dataset_id": 7'),
    lambda t: t.replace('"epsilon": "0.5"', '"epsilon": "-0.5"'),
    lambda t: t.replace('"epsilon": "0.5"', '"epsilon": 0.5'),
    lambda t: t.replace('"epsilon": "0.5"', '"epsilon": "lots"'),
    lambda t: t.replace('"epsilon": "0.5"', '"epsilon": "0.9"'),   # edited to overspend
    lambda t: t.replace('"label": "q2"', '"label": ""'),
    lambda t: t.replace('"kind": "query"', '"kind": "refund"'),
    lambda t: t.replace('"composition": "sequential"', '"composition": "magic"'),
    lambda t: t.replace('"charges": [', '"charges": {"x": ['),
    lambda t: t.replace('"budget": {', '"budget": {"epsilon": "0", "x": {'),
])
def test_corrupt_files_are_refused_in_one_sentence(mangle):
    a = acc(1.0)
    a.charge(0.5, label="q1")
    a.charge(0.5, label="q2")
    with pytest.raises(BudgetFileError) as info:
        from_json(mangle(a.to_json()), dataset_id="adult", source="b.json")
    message = str(info.value)
    assert "\n" not in message and message.endswith(".")


def test_newer_schema_and_another_kind_of_accountant():
    text = acc().to_json().replace('"version": 2', '"version": 99')
    with pytest.raises(BudgetFileError, match="newer"):
        from_json(text, dataset_id="adult")
    with pytest.raises(BudgetFileError, match="WindowAccountant"):
        Accountant.from_json(WindowAccountant(2, 1.0, dataset_id="adult").to_json(), dataset_id="adult")


class FailingSink:
    """A sink (what a budget file installs) that fails on its n-th call, like a full disk."""

    def __init__(self, fail_on: int):
        self.calls, self.fail_on = 0, fail_on

    def __call__(self, accountant):
        self.calls += 1
        if self.calls == self.fail_on:
            raise OSError("disk full")


@pytest.mark.parametrize("make, charge", [
    (lambda: acc(1.0, 1e-6), lambda a: a.charge(0.2, 1e-7, label="q")),
    (lambda: acc(1.0, 1e-6, composition="advanced"), lambda a: a.charge(0.2, label="q")),
    (lambda: TemporalAccountant(Budget(1.0, 1e-6), dataset_id="adult", discount=ExponentialDiscount(0.5)),
     lambda a: a.charge(0.2, 1e-7, label="q", time=len(a.charges))),
    (lambda: WindowAccountant(3, 1.0, dataset_id="adult", delta=1e-6), lambda a: a.charge(len(a.charges), 0.2)),
])
def test_a_charge_the_sink_cannot_keep_is_taken_back(make, charge):
    a = make()
    a._sink = FailingSink(fail_on=2)
    charge(a)
    before, spent = a.to_json(), a.spent()
    with pytest.raises(OSError):
        charge(a)
    assert a.to_json() == before and a.spent() == spent and len(a.charges) == 1
    charge(a)  # the sink works again: the totals go on from where they were
    assert len(a.charges) == 2 and a._sink.calls == 3


# --------------------------------------------------------------------------- temporal discounting

def test_temporal_discounting_arithmetic():
    t = TemporalAccountant(Budget(1.0), dataset_id="adult", discount=ExponentialDiscount(0.5))
    t.charge(0.5, label="day 0", time=0)
    assert t.spent(time=1).epsilon == Fraction(1, 4)
    t.charge(0.75, label="day 1", time=1)  # 0.5·½ + 0.75 = 1 exactly
    assert t.spent().epsilon == 1
    with pytest.raises(BudgetExceededError, match="day 1b"):
        t.charge(0.01, label="day 1b", time=1)
    # at time 2: 0.5·¼ + 0.75·½ = 0.5
    assert t.spent(time=2).epsilon == Fraction(1, 2)
    t.charge(0.5, label="day 2", time=2)
    assert t.spent().epsilon == 1
    with pytest.raises(ParameterError, match="before"):
        t.charge(0.1, label="late", time=1)


def test_hyperbolic_and_custom_discounts():
    h = TemporalAccountant(Budget(1.0), dataset_id="x", discount=HyperbolicDiscount(1))
    h.charge(0.3, label="a", time=0)
    h.charge(0.3, label="b", time=1)
    assert h.spent(time=4).epsilon == Fraction(3, 50) + Fraction(3, 40)  # 0.3/5 + 0.3/4
    # a weight like 1/3 is rounded up (never in the user's favour), to 18 decimals
    assert h._weight(2) == Fraction(333333333333333334, 10 ** 18)
    window_like = TemporalAccountant(Budget(1.0), dataset_id="x", discount=lambda i: 1.0 if i < 3 else 0.0)
    window_like.charge(1.0, label="a", time=0)
    assert not window_like.can_afford(0.1, time=2)
    assert window_like.can_afford(1.0, time=3)


@pytest.mark.parametrize("g, match", [
    (lambda i: 1 / (1 + i) if i != 5 else 0.9, "non-increasing"),
    (lambda i: 0.5 ** i if i < 100 else 0.6, "non-increasing"),
    (lambda i: 0.9, "g\\(0\\) = 1"),
    (lambda i: 1.0 if i == 0 else 2.0, "\\[0, 1\\]"),
    (lambda i: 1.0 if i < 3 else 1 / 0, "failed at g\\(3\\)"),
    ("exp", "function"),
])
def test_bad_discounts(g, match):
    with pytest.raises(ParameterError, match=match):
        TemporalAccountant(Budget(1.0), dataset_id="x", discount=g)
    with pytest.raises(ParameterError):
        ExponentialDiscount(1.5)
    with pytest.raises(ParameterError):
        HyperbolicDiscount(-1)


def test_temporal_json_round_trip():
    t = TemporalAccountant(Budget(1.0, 1e-6), dataset_id="x", discount=ExponentialDiscount(0.9))
    t.charge(0.4, 1e-7, label="a", time=0)
    t.charge(0.4, label="b", time=3)
    u = from_json(t.to_json(), dataset_id="x")
    assert isinstance(u, TemporalAccountant) and u.discount == ExponentialDiscount(0.9)
    assert u.charges == t.charges and u.spent(time=5) == t.spent(time=5)
    c = TemporalAccountant(Budget(1.0), dataset_id="x", discount=lambda i: 0.5 ** i)
    c.charge(0.4, label="a", time=0)
    with pytest.raises(BudgetFileError, match="custom discount"):
        from_json(c.to_json(), dataset_id="x")
    d = TemporalAccountant.from_json(c.to_json(), dataset_id="x", discount=lambda i: 0.5 ** i)
    assert d.spent(time=1).epsilon == Fraction(1, 5)
    with pytest.raises(BudgetFileError, match="discount"):
        from_json(t.to_json(), dataset_id="x", discount=ExponentialDiscount(0.5))


# --------------------------------------------------------------------------- w-event windows

def test_w_event_window_slides_and_forgets():
    w = WindowAccountant(3, 1.0, dataset_id="stream")
    w.charge(0, 0.5)
    w.charge(1, 0.5)
    with pytest.raises(BudgetExceededError, match="steps 0..2"):
        w.charge(2, 0.1, label="tick 2")
    assert [c.step for c in w.charges] == [0, 1]
    w.charge(3, 0.5)           # window 1..3 holds 0.5 + 0.5: step 0 has left it
    assert w.spent().epsilon == 1
    assert w.spent(step=5).epsilon == Fraction(1, 2)
    assert w.spent(step=6).epsilon == 0
    assert w.remaining(step=4) == (Fraction(1, 2), 0)
    for step in range(6, 16):
        w.charge(step, 1.0 / 3 if step % 3 else 0.25, label=f"tick {step}")
    with pytest.raises(ParameterError, match="before"):
        w.charge(5, 0.1)
    with pytest.raises(ParameterError):
        WindowAccountant(0, 1.0, dataset_id="s")
    with pytest.raises(ParameterError):
        WindowAccountant(2.5, 1.0, dataset_id="s")
    v = from_json(w.to_json(), dataset_id="stream")
    assert isinstance(v, WindowAccountant) and v.w == 3 and v.charges == w.charges


def test_w_one_is_event_level():
    w = WindowAccountant(1, 0.5, dataset_id="s")
    for step in range(5):
        w.charge(step, 0.5)
    assert not w.can_afford(4, 0.1)


# --------------------------------------------------------------------------- properties

DECIMALS = st.integers(1, 400).map(lambda n: n / 1000)  # 0.001 .. 0.4, as a user would type them


@SETTINGS
@given(st.lists(st.tuples(DECIMALS, st.sampled_from([None, ("g1", "a"), ("g1", "b"), ("g2", "a"), ("g2", "c")])),
                max_size=40),
       st.integers(1, 30).map(lambda n: n / 10))
def test_affordable_charges_never_exceed_the_budget(ops, budget):
    a = acc(budget)
    expected_solo, parts = Fraction(0), {}
    for eps, where in ops:
        group, partition = where if where else (None, None)
        affordable = a.can_afford(eps, partition=partition, group=group)
        before = a.to_json()
        if affordable:
            a.charge(eps, label="q", partition=partition, group=group)
            if where:
                parts.setdefault(group, {}).setdefault(partition, Fraction(0))
                parts[group][partition] += Fraction(str(eps))
            else:
                expected_solo += Fraction(str(eps))
        else:
            with pytest.raises(BudgetExceededError):
                a.charge(eps, label="q", partition=partition, group=group)
            assert a.to_json() == before
        spent = a.spent().epsilon
        assert spent <= Fraction(str(budget))
        assert spent == expected_solo + sum((max(p.values()) for p in parts.values()), Fraction(0))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 3), DECIMALS), max_size=40), st.integers(1, 5),
       st.integers(1, 10).map(lambda n: n / 10))
def test_windows_never_exceed(ops, w, budget):
    acct = WindowAccountant(w, budget, dataset_id="s")
    step = 0
    for gap, eps in ops:
        step += gap
        if acct.can_afford(step, eps):
            acct.charge(step, eps)
        else:
            with pytest.raises(BudgetExceededError):
                acct.charge(step, eps)
    per_step = {}
    for c in acct.charges:
        per_step[c.step] = per_step.get(c.step, Fraction(0)) + c.epsilon
    for end in range(step + w + 1):
        assert sum((e for s, e in per_step.items() if end - w < s <= end), Fraction(0)) <= Fraction(str(budget))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 3), DECIMALS), max_size=30),
       st.sampled_from([ExponentialDiscount(0.5), ExponentialDiscount(0.9), HyperbolicDiscount(1)]))
def test_discounted_spend_never_exceeds(ops, g):
    t = TemporalAccountant(Budget(1.0), dataset_id="s", discount=g)
    time = 0
    for gap, eps in ops:
        time += gap
        if t.can_afford(eps, time=time):
            t.charge(eps, label="q", time=time)
        for later in (time, time + 1, time + 7):
            assert t.spent(time=later).epsilon <= 1


def test_charge_records_are_plain_data():
    a = acc()
    c = a.charge(0.1, label="q")
    assert isinstance(c, Charge) and c.label == "q" and c.epsilon == Fraction(1, 10) and c.at
    assert "adult" in repr(a) and "q" in a.format_report()


# --------------------------------------------------------------------------- where the parts live

def test_the_accountant_module_still_names_everything_it_named():
    """veil.dp.accountant keeps the Accountant and still names every accountant, value and reader
    it named before they had modules of their own: the very objects of their new homes."""
    import veil.dp.accountant as old_path
    from veil.dp import (budget, budget_file, correlation_accountant, discounting, filter_accountant,
                         window_accountant)

    homes = {"Accountant": old_path, "ParallelGroup": old_path, "advanced_composition": old_path,
             "Budget": budget, "BudgetExceededError": budget, "Charge": budget, "Spent": budget,
             "BudgetFileError": budget_file, "from_document": budget_file, "from_json": budget_file,
             "ExponentialDiscount": discounting, "HyperbolicDiscount": discounting, "TemporalAccountant": discounting,
             "WindowAccountant": window_accountant, "FilterAccountant": filter_accountant,
             "TemporalCorrelationAccountant": correlation_accountant, "step_epsilons": correlation_accountant}
    assert set(old_path.__all__) == set(homes)
    for name, home in homes.items():
        assert getattr(old_path, name) is getattr(home, name), name
        assert getattr(home, name).__module__ == home.__name__, name


@pytest.mark.parametrize("make", [
    lambda: acc(1.0, 1e-6),
    lambda: acc(1.0, 1e-6, composition="advanced"),
    lambda: TemporalAccountant(Budget(1.0), dataset_id="adult", discount=HyperbolicDiscount(0.5)),
    lambda: WindowAccountant(3, 1.0, dataset_id="adult"),
    lambda: FilterAccountant(Budget(1.0, 1e-6), dataset_id="adult", rule="basic"),
    lambda: TemporalCorrelationAccountant(1.0, dataset_id="adult", backward=[[0.9, 0.1], [0.2, 0.8]], w=2),
])
def test_every_kind_of_budget_is_read_back_by_the_class_that_wrote_it(make):
    a = make()
    b = from_json(a.to_json(), dataset_id="adult")
    assert type(b) is type(a) and b.to_json() == a.to_json()
    assert type(type(a).from_json(a.to_json(), dataset_id="adult")) is type(a)


def test_a_subclass_does_not_take_over_reading_budgets():
    class Audited(Accountant):
        """A user's accountant that adds nothing to the composition rules it reads."""

    kept = Audited(Budget(1.0), dataset_id="adult").to_json()
    assert type(from_json(kept, dataset_id="adult")) is Accountant


@pytest.mark.parametrize("x, text", [(Fraction(1, 10), "0.1"), (Fraction(-5, 4), "-1.25"), (Fraction(1, 3), "1/3"),
                                     (Fraction(7), "7"), (Fraction(1, 10 ** 6), "0.000001")])
def test_numbers_are_kept_as_their_exact_text(x, text):
    assert to_text(x) == text and from_text(text) == x


@SETTINGS
@given(st.fractions())
def test_a_number_kept_as_text_reads_back_exactly(x):
    assert from_text(to_text(x)) == x


def test_a_number_not_kept_as_text_is_refused():
    with pytest.raises(TypeError, match="not kept as text"):
        from_text(0.5)
