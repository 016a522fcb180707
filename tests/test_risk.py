"""Re-identification risk: prosecutor, marketer and journalist, checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil import (DataError, Dataset, EquivalenceClasses, ParameterError, builders,
                  reidentification_risk)


def classes_of(table: pd.DataFrame, qis, levels=None, **kwargs) -> EquivalenceClasses:
    return EquivalenceClasses.from_dataset(Dataset(table, quasi_identifiers=qis, **kwargs), levels)


@pytest.fixture
def sized():
    # classes of sizes 1, 2, 3, 4 (n = 10)
    table = pd.DataFrame({"q": ["a"] + ["b"] * 2 + ["c"] * 3 + ["d"] * 4})
    return classes_of(table, "q")


def test_prosecutor_and_marketer_by_hand(sized):
    risk = reidentification_risk(sized)
    assert risk.prosecutor_max == 1.0                  # 1 / smallest class
    assert risk.prosecutor_avg == pytest.approx(0.4)   # 4 classes / 10 records
    assert risk.marketer == pytest.approx(0.4)         # no population: classes / n
    # default threshold 0.2: per-record risks 1, ½, ⅓, ¼ all exceed it
    assert risk.threshold == 0.2 and risk.prosecutor_at_risk == pytest.approx(1.0)
    assert risk.journalist_max is None and risk.journalist_avg is None and risk.journalist_at_risk is None
    assert risk.k is None and risk.records_below_k is None


@pytest.mark.parametrize("threshold, share", [
    (0.3, 0.6),   # risks 1, ½, ⅓ > 0.3: 1 + 2 + 3 records
    (0.5, 0.1),   # ½ is not above ½: only the singleton
    (0.25, 0.6),  # ¼ is not above ¼
    (0.26, 0.6),
    (0.24, 1.0),
    (1.0, 0.0),
])
def test_share_of_records_above_threshold(sized, threshold, share):
    assert reidentification_risk(sized, threshold=threshold).prosecutor_at_risk == pytest.approx(share)


@pytest.mark.parametrize("k, below", [(1, 0), (2, 1), (3, 3), (4, 6), (5, 10)])
def test_records_below_k(sized, k, below):
    risk = reidentification_risk(sized, k=k)
    assert risk.k == k and risk.records_below_k == below


@pytest.mark.parametrize("kwargs", [dict(threshold=0), dict(threshold=-0.1), dict(threshold=1.5),
                                    dict(k=0), dict(k=-3)])
def test_bad_parameters(sized, kwargs):
    with pytest.raises(ParameterError):
        reidentification_risk(sized, **kwargs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 6), min_size=1, max_size=60), st.floats(0.01, 1.0), st.integers(1, 8))
def test_prosecutor_risk_from_class_sizes(values, threshold, k):
    table = pd.DataFrame({"q": values})
    risk = reidentification_risk(classes_of(table, "q"), threshold=threshold, k=k)
    sizes = table["q"].value_counts()
    record_risk = 1 / table["q"].map(sizes)
    n = len(values)
    assert risk.prosecutor_max == pytest.approx(1 / sizes.min())
    assert risk.prosecutor_avg == pytest.approx(record_risk.mean())  # = classes / n
    assert risk.prosecutor_avg == pytest.approx(len(sizes) / n)
    assert risk.marketer == pytest.approx(len(sizes) / n)
    assert risk.prosecutor_at_risk == pytest.approx((record_risk > threshold).mean())
    assert risk.records_below_k == int((table["q"].map(sizes) < k).sum())


# --------------------------------------------------------------------------------------------
# journalist risk against a population


@pytest.fixture
def sample_and_population():
    # population: A ×4, B ×2, C ×3; sample (a subset): A ×1, B ×2
    population = pd.DataFrame({"zip": ["A"] * 4 + ["B"] * 2 + ["C"] * 3, "s": list("xyxyxyxyx")})
    sample = pd.DataFrame({"zip": ["B", "A", "B"], "s": ["x", "y", "y"]})
    return sample, population


def test_journalist_by_hand(sample_and_population):
    sample, population = sample_and_population
    classes = classes_of(sample, "zip", sensitive="s")
    pop = Dataset(population, quasi_identifiers="zip")
    risk = reidentification_risk(classes, threshold=0.3, population=pop)
    # sample classes: A (f=1, F=4), B (f=2, F=2); n = 3
    assert risk.journalist_max == pytest.approx(1 / 2)                  # 1 / smallest matched F
    assert risk.journalist_avg == pytest.approx((1 * 1 / 4 + 2 * 1 / 2) / 3)
    assert risk.journalist_at_risk == pytest.approx(2 / 3)             # B's records: ½ > 0.3
    assert risk.marketer == pytest.approx((1 / 4 + 2 / 2) / 3)          # (1/n) Σ f/F
    # prosecutor figures are unchanged by the population
    assert risk.prosecutor_max == 1.0 and risk.prosecutor_avg == pytest.approx(2 / 3)
    assert reidentification_risk(classes, threshold=0.5, population=pop).journalist_at_risk == 0


def test_journalist_with_generalized_classes():
    ages = [21, 23, 27, 34, 36, 38, 41, 45, 52, 58]
    population = pd.DataFrame({"age": ages})
    sample = pd.DataFrame({"age": [23, 36, 38]})
    hierarchy = builders.intervals(ages, [10])
    classes = classes_of(sample, "age", {"age": 1}, hierarchies={"age": hierarchy})
    # sample classes at level 1: 20-29 (f=1), 30-39 (f=2); population: 20-29 has 3, 30-39 has 3
    risk = reidentification_risk(classes, population=Dataset(population, quasi_identifiers="age"))
    assert risk.journalist_max == pytest.approx(1 / 3)
    assert risk.journalist_avg == pytest.approx(1 / 3)
    assert risk.marketer == pytest.approx((1 / 3 + 2 / 3) / 3)
    assert risk.journalist_at_risk == pytest.approx(1.0)  # ⅓ > 0.2


def test_journalist_population_read_as_text_matches_numbers(tmp_path):
    # The sample has integer ages, the population comes from a CSV (text cells): classes are
    # matched on their labels, not on each table's own codes.
    sample = pd.DataFrame({"age": [30, 40, 40]})
    csv = tmp_path / "population.csv"
    csv.write_text("age;x\n30;a\n30;b\n40;c\n40;d\n40;e\n50;f\n")
    pop = Dataset(csv, quasi_identifiers="age", delimiter=";")
    risk = reidentification_risk(classes_of(sample, "age"), population=pop)
    assert risk.journalist_max == pytest.approx(1 / 2)
    assert risk.journalist_avg == pytest.approx((1 / 2 + 2 / 3) / 3)


def test_sample_class_absent_from_population(sample_and_population):
    sample, population = sample_and_population
    sample = pd.concat([sample, pd.DataFrame({"zip": ["D"], "s": ["x"]})], ignore_index=True)
    with pytest.raises(DataError):
        reidentification_risk(classes_of(sample, "zip"), population=Dataset(population, quasi_identifiers="zip"))


def test_sample_class_larger_than_in_population(sample_and_population):
    sample, population = sample_and_population
    sample = pd.concat([sample, pd.DataFrame({"zip": ["B"], "s": ["x"]})], ignore_index=True)  # B ×3 > 2
    with pytest.raises(DataError):
        reidentification_risk(classes_of(sample, "zip"), population=Dataset(population, quasi_identifiers="zip"))


def test_population_without_a_quasi_identifier(sample_and_population):
    sample, _ = sample_and_population
    other = Dataset(pd.DataFrame({"area": ["A", "B"]}), quasi_identifiers="area")
    with pytest.raises(DataError):
        reidentification_risk(classes_of(sample, "zip"), population=other)


def test_population_equal_to_sample_gives_prosecutor_figures(sized):
    table = pd.DataFrame({"q": ["a"] + ["b"] * 2 + ["c"] * 3 + ["d"] * 4})
    risk = reidentification_risk(sized, population=Dataset(table, quasi_identifiers="q"))
    assert risk.journalist_max == risk.prosecutor_max
    assert risk.journalist_avg == pytest.approx(risk.prosecutor_avg)
    assert risk.journalist_at_risk == pytest.approx(risk.prosecutor_at_risk)
    assert risk.marketer == pytest.approx(0.4)
    np.testing.assert_array_equal(sized.sizes, [1, 2, 3, 4])
