"""Benedetti–Franconi individual, global and household risk (veil.risk.individual), on a table
worked out by hand, against the negative-binomial series summed term by term, and as threshold
models (veil.models.risk) in full-domain generalization."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil import Dataset
from veil.anonymize import MDAV, Ace, FullDomain, Mondrian
from veil.classes import EquivalenceClasses
from veil.data.hierarchy import Hierarchy
from veil.errors import ParameterError
from veil.models import AverageRisk, RecordsAtRisk
from veil.risk import benedetti_franconi, key_frequencies, sample_risk

# The hand-computed table: 12 records, two quasi-identifiers, sampling weights, households.
#   key (sex, age)   rows   weights         f   F̂    p = f/F̂
#   k1 (M, young)    0      10              1   10   1/10
#   k2 (M, old)      1-2    4, 6            2   10   1/5
#   k3 (F, young)    3-5    1, 1, 1         3   3    1      (the sample is the population)
#   k4 (F, old)      6-9    2, 2, 2, 2      4   8    1/2
#   k5 (M, middle)   10-11  1.5, 1.5        2   3    2/3
TABLE = pd.DataFrame({
    "sex": ["M", "M", "M", "F", "F", "F", "F", "F", "F", "F", "M", "M"],
    "age": ["young", "old", "old", "young", "young", "young", "old", "old", "old", "old", "middle", "middle"],
    "w": [10, 4, 6, 1, 1, 1, 2, 2, 2, 2, 1.5, 1.5],
    "hid": ["h1", "h2", "h2", "h1", "h3", "h4", "h5", "h6", "h7", "h5", "h8", "h9"],
    "stratum": ["a", "a", "a", "a", "a", "a", "a", "a", "b", "b", "a", "a"],
})

# r = E[1/F | f] = ∫₀¹ s^(f−1)/(1 + x s) ds with x = q/p, q = 1 − p:
# k1: f = 1, r = p·ln(1/p)/q = 0.1·ln 10/0.9                                 = 0.255842788...
R1 = 0.1 * math.log(10) / 0.9
# k2: f = 2, r = p/q − (p/q)²·ln(1/p) = 0.25 − 0.0625·ln 5                    = 0.149410130...
R2 = 0.25 - 0.0625 * math.log(5)
# k3: F̂ = f = 3, r = 1/f                                                     = 0.333333333...
R3 = 1 / 3
# k4: f = 4, x = 1: ∫ s³/(1+s) ds = ∫ (s² − s + 1 − 1/(1+s)) ds = 1/3 − 1/2 + 1 − ln 2 = 5/6 − ln 2
#                                                                             = 0.140186152...
R4 = 5 / 6 - math.log(2)
# k5: f = 2, p/q = 2: r = 2 − 4·ln(3/2)                                        = 0.378139567...
R5 = 2 - 4 * math.log(1.5)
ROW_RISK = [R1, R2, R2, R3, R3, R3, R4, R4, R4, R4, R5, R5]


def hand_dataset(**roles) -> Dataset:
    return Dataset(TABLE, quasi_identifiers=["sex", "age"], **roles)


def test_frequencies_by_hand():
    freq = key_frequencies(EquivalenceClasses.from_dataset(hand_dataset(weight="w")))
    # Classes are numbered in the order of their keys' codes (sex F < M; age middle < old < young).
    by_row = {row: (int(freq.sample[g]), float(freq.population[g])) for row, g in enumerate(freq.group)}
    assert by_row[0] == (1, 10.0)
    assert by_row[1] == by_row[2] == (2, 10.0)
    assert by_row[3] == (3, 3.0)
    assert by_row[6] == (4, 8.0)
    assert by_row[10] == (2, 3.0)
    assert int(freq.sample.sum()) == 12


def test_without_weights_the_sample_is_the_population():
    freq = key_frequencies(EquivalenceClasses.from_dataset(hand_dataset()))
    assert np.array_equal(freq.population, freq.sample.astype(float))
    risk = sample_risk(EquivalenceClasses.from_dataset(hand_dataset()))
    # r = 1/f: one class per key, so the expected re-identifications are the 5 classes.
    assert risk.expected_reidentifications == pytest.approx(5.0)
    assert risk.record[0] == 1.0 and risk.record[6] == pytest.approx(0.25)


def test_individual_and_global_risk_by_hand():
    risk = sample_risk(EquivalenceClasses.from_dataset(hand_dataset(weight="w")))
    assert risk.record == pytest.approx(ROW_RISK, rel=1e-12)
    # Σ f_k r_k = R1 + 2 R2 + 3·(1/3) + 4 R4 + 2 R5 = 0.25584 + 0.29882 + 1 + 0.56074 + 0.75628
    expected = R1 + 2 * R2 + 1 + 4 * R4 + 2 * R5
    assert expected == pytest.approx(2.871687, abs=1e-6)
    assert risk.expected_reidentifications == pytest.approx(expected, rel=1e-12)
    assert risk.rate == pytest.approx(expected / 12, rel=1e-12)
    assert risk.max == pytest.approx(R5)
    # records above 0.3: k3 (3 records) and k5 (2 records) → 5/12
    assert risk.share_above(0.3) == pytest.approx(5 / 12)
    assert risk.household is None


def test_household_risk_by_hand():
    risk = sample_risk(EquivalenceClasses.from_dataset(hand_dataset(weight="w", household="hid")))
    # h1 = rows 0 (k1) and 3 (k3): 1 − (1 − R1)(1 − 1/3); h2 = rows 1, 2 (k2): 1 − (1 − R2)²;
    # h5 = rows 6, 9 (k4): 1 − (1 − R4)²; every other household has one member: its own risk.
    h1 = 1 - (1 - R1) * (1 - R3)
    h2 = 1 - (1 - R2) ** 2
    h5 = 1 - (1 - R4) ** 2
    expected = [h1, h2, h2, h1, R3, R3, h5, R4, R4, h5, R5, R5]
    assert risk.household == pytest.approx(expected, rel=1e-12)
    assert risk.household_expected == pytest.approx(sum(expected), rel=1e-12)
    assert risk.share_above(0.5, household=True) == pytest.approx(2 / 12)  # h1 = 0.5039 twice


def test_strata_split_the_key_groups():
    freq = key_frequencies(EquivalenceClasses.from_dataset(hand_dataset(weight="w", strata="stratum")))
    # k4's records fall in strata a (rows 6, 7) and b (rows 8, 9): two groups, f = 2, F̂ = 4 each.
    assert freq.group[6] == freq.group[7] != freq.group[8] == freq.group[9]
    assert (int(freq.sample[freq.group[6]]), float(freq.population[freq.group[6]])) == (2, 4.0)
    risk = sample_risk(EquivalenceClasses.from_dataset(hand_dataset(weight="w", strata="stratum")))
    # f = 2, p = 1/2, p/q = 1: r = 1 − ln 2
    assert risk.record[6] == pytest.approx(1 - math.log(2), rel=1e-12)
    assert risk.record[0] == pytest.approx(R1)


def test_suppressed_records_belong_to_no_group():
    classes = EquivalenceClasses.from_dataset(hand_dataset(weight="w", household="hid"))
    keep = classes.sizes != 1  # drops k1 (row 0)
    risk = sample_risk(classes.subset(keep))
    assert np.isnan(risk.record[0]) and np.isnan(risk.household[0])
    assert risk.record[1:] == pytest.approx(ROW_RISK[1:])
    # h1 now holds only row 3: its risk is k3's.
    assert risk.household[3] == pytest.approx(R3)
    assert risk.rate == pytest.approx((sum(ROW_RISK) - R1) / 11)


def negative_binomial_series(f: int, big: float) -> float:
    """Σ_h (1/h)·C(h−1, f−1)·p^f·q^(h−f), summed term by term until the terms vanish."""
    p = min(f / big, 1.0)
    q = 1 - p
    if q == 0:
        return 1 / f
    total, h = 0.0, f
    log_term = f * math.log(p)  # log P(F = f)
    while True:
        term = math.exp(log_term) / h
        total += term
        if term < 1e-18 * total and h > f + 10:
            return total
        # P(F = h+1)/P(F = h) = h·q/(h − f + 1)
        log_term += math.log(h * q / (h - f + 1))
        h += 1


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.floats(1.0, 30.0))
def test_vectorized_risk_matches_the_series(f, ratio):
    big = f * ratio
    assert benedetti_franconi(np.array([f]), np.array([big]))[0] == pytest.approx(
        negative_binomial_series(f, big), rel=1e-9)


def test_extremes_give_no_warning_and_stay_in_range():
    f = np.array([1, 2, 3, 5, 49, 50, 1000, 1, 2, 3, 7])
    big = np.array([1, 2, 3 + 1e-13, 5 * (1 + 1e-15), 49e9, 50e12, 1e15, 1e300, 2e300, 3.0, 7.0])
    with np.errstate(all="raise"):
        r = benedetti_franconi(f, big)
    assert np.all((r > 0) & (r <= 1))
    assert r[0] == 1.0 and r[1] == 0.5
    assert r[2] == pytest.approx(1 / 3) and r[3] == pytest.approx(1 / 5)
    # weights below 1 (F̂ < f) are taken as the population itself
    assert benedetti_franconi(np.array([4]), np.array([2.0]))[0] == pytest.approx(0.25)


def test_approx_is_sdcmicros_default():
    f, big = np.array([1, 2, 4]), np.array([10.0, 10.0, 8.0])
    approx = benedetti_franconi(f, big, method="approx")
    # f ≤ 2 exact; f = 4, p = 1/2: p/(f − q) = 0.5/3.5
    assert approx == pytest.approx([R1, R2, 0.5 / 3.5])


@pytest.mark.parametrize("sample,population,method", [
    ([0], [1.0], "exact"), ([1], [0.0], "exact"), ([1], [np.inf], "exact"), ([1, 2], [3.0], "exact"),
    ([1], [2.0], "bayes"),
])
def test_bad_arguments_are_one_sentence(sample, population, method):
    with pytest.raises(ParameterError) as info:
        benedetti_franconi(np.array(sample), np.array(population), method)
    assert str(info.value).count(". ") == 0 and str(info.value).endswith(".")


# ---- models -------------------------------------------------------------------------------

def test_average_risk_verdicts():
    classes = EquivalenceClasses.from_dataset(hand_dataset(weight="w"))
    rate = (R1 + 2 * R2 + 1 + 4 * R4 + 2 * R5) / 12  # 0.23931
    assert AverageRisk(0.24).evaluate(classes).passed
    result = AverageRisk(0.2).evaluate(classes)
    assert not result.passed and result.level == pytest.approx(rate)
    failing = AverageRisk(0.2).failing(classes)
    # the riskiest class first: k5 (R5 = 0.378); the rest: (R1 + 2R2 + 1 + 4R4)/10 = 0.2115 > 0.2,
    # then k3 (1/3): (R1 + 2R2 + 4R4)/7 = 0.1648 ≤ 0.2.
    sizes = classes.sizes
    assert sorted(sizes[failing].tolist()) == [2, 3]
    assert AverageRisk(0.2).evaluate(classes.subset(~failing)).passed


def test_records_at_risk_verdicts():
    classes = EquivalenceClasses.from_dataset(hand_dataset(weight="w"))
    model = RecordsAtRisk(0.3, 0.2)
    result = model.evaluate(classes)
    assert result.level == pytest.approx(5 / 12) and not result.passed
    # k3 and k5 are at risk (5 records); suppressing k3 leaves 2/9 > 0.2, then k5 leaves 0/7.
    failing = model.failing(classes)
    assert sorted(classes.sizes[failing].tolist()) == [2, 3]
    assert RecordsAtRisk(0.3, 0.5).evaluate(classes).passed


def test_household_model_needs_a_household_column():
    classes = EquivalenceClasses.from_dataset(hand_dataset(weight="w"))
    with pytest.raises(ParameterError, match="household column"):
        AverageRisk(0.1, household=True).evaluate(classes)


@pytest.mark.parametrize("make", [lambda: AverageRisk(1.5), lambda: AverageRisk(-0.1), lambda: RecordsAtRisk(2, 0.1),
                                  lambda: RecordsAtRisk(0.1, 1.2), lambda: AverageRisk(0.1, method="x")])
def test_bad_model_parameters(make):
    with pytest.raises(ParameterError):
        make()


def _survey(n: int, seed: int, **roles) -> Dataset:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "zip": rng.choice(["1301", "1302", "1303", "1304", "1401", "1402"], n),
        "w": rng.uniform(1, 40, n).round(1),
        "hid": rng.integers(0, n // 2, n),
        "region": rng.choice(["north", "south", "east"], n),
    })
    ages = [str(a) for a in range(18, 90)]
    age = Hierarchy([[a, f"{int(a) // 10 * 10}s", "*"] for a in ages])
    zips = Hierarchy([[z, z[:3] + "*", "*"] for z in ["1301", "1302", "1303", "1304", "1401", "1402"]])
    return Dataset(frame, quasi_identifiers=["age", "zip"], hierarchies={"age": age, "zip": zips}, weight="w",
                   household="hid", **roles)


@pytest.mark.parametrize("model,limit,suppresses", [
    (AverageRisk(0.03), 0.0, False), (AverageRisk(0.03), 0.1, True),
    (RecordsAtRisk(0.1, 0.05), 0.0, False), (RecordsAtRisk(0.1, 0.05), 0.1, True),
    (AverageRisk(0.1, household=True), 0.0, False), (AverageRisk(0.1, household=True), 0.1, True),
])
def test_fulldomain_finds_a_release_that_passes_when_checked_again(model, limit, suppresses):
    dataset = _survey(400, 3)
    anonymizer = FullDomain([model], suppression_limit=limit).fit(dataset)
    suppressed = anonymizer.result_.suppressed_records
    assert suppressed <= math.floor(limit * 400 + 1e-9)
    assert (suppressed > 0) == suppresses  # with the limit, a finer node with some records suppressed wins
    release = anonymizer.transform(dataset, rng=0)
    # the released records, measured again (the suppressed ones removed), pass the model
    assert all(row["passed"] for row in release.model_levels())
    classes = EquivalenceClasses.from_dataset(dataset, anonymizer.result_.levels)
    failing = model.failing(classes)
    assert int(classes.sizes[failing].sum()) == suppressed
    assert model.evaluate(classes.subset(~failing)).passed


@pytest.mark.parametrize("strata", [None, "region"])
def test_rolled_up_frequencies_equal_those_read_from_the_rows(strata):
    dataset = _survey(300, 5, strata=strata)
    bottom = EquivalenceClasses.from_dataset(dataset)
    for levels in [(1, 0), (1, 1), (2, 2)]:
        rolled = bottom.roll_up(levels)
        direct = EquivalenceClasses.from_dataset(dataset, levels)
        a, b = key_frequencies(rolled), key_frequencies(direct)
        assert np.array_equal(a.sample, b.sample) and np.array_equal(a.group, b.group)
        assert np.allclose(a.population, b.population)
        assert np.array_equal(a.group_class, b.group_class)
        assert np.allclose(sample_risk(rolled).record, sample_risk(direct).record)


@pytest.mark.parametrize("build", [
    lambda m: Mondrian([m]),
    lambda m: MDAV([m], k=3),
    lambda m: Ace([m], l=2),
])
def test_anonymizers_judging_one_group_at_a_time_refuse_table_models(build):
    with pytest.raises(ParameterError) as info:
        build(AverageRisk(0.1))
    assert "condition on the whole table" in str(info.value) and str(info.value).count(". ") == 0


def test_a_missing_household_id_is_a_household_of_its_own():
    frame = TABLE.copy()
    frame.loc[[0, 1], "hid"] = None  # rows 0 (k1) and 1 (k2) have no household ID
    risk = sample_risk(EquivalenceClasses.from_dataset(Dataset(frame, quasi_identifiers=["sex", "age"], weight="w",
                                                               household="hid")))
    assert risk.household[0] == pytest.approx(R1) and risk.household[1] == pytest.approx(R2)
    assert risk.household[2] == pytest.approx(R2)  # h2 keeps row 2 alone
    assert risk.household[3] == pytest.approx(R3)  # h1 keeps row 3 alone


def test_a_fractional_sample_frequency_is_refused():
    with pytest.raises(ParameterError, match="whole number"):
        benedetti_franconi(np.array([1.5]), np.array([3.0]))
