"""DP queries over a table (count, sum, mean, quantile, histogram), post-processing, and ``veil dp``."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veil.data.dataset import Dataset
from veil.dp import (
    Accountant,
    Budget,
    BudgetExceededError,
    BudgetFileError,
    NoiseSource,
)
from veil.dp.cli import dp_app
from veil.dp.queries import (
    QueryResult,
    consistent_total,
    dataset_id_of,
    dp_contingency,
    dp_count,
    dp_histogram,
    dp_mean,
    dp_quantile,
    dp_sum,
    integral,
    postprocess,
    sum_sensitivity,
)
from veil.errors import ColumnError, ParameterError, VeilError

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 2000
    return pd.DataFrame({
        "age": rng.integers(17, 91, n),
        "income": rng.normal(40_000, 15_000, n).round(2),
        "sex": rng.choice(["F", "M"], n),
        "race": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]),
    })


class CountingNoise(NoiseSource):
    """A seeded source that counts every draw, to prove no noise is drawn on errors."""

    def __init__(self, seed: int = 0):
        super().__init__(np.random.default_rng(seed), _secure=False)
        self.draws = 0

    def laplace(self, values, scale):
        self.draws += 1
        return super().laplace(values, scale)

    def discrete_laplace(self, values, scale):
        self.draws += 1
        return super().discrete_laplace(values, scale)

    def gaussian(self, values, scale):
        self.draws += 1
        return super().gaussian(values, scale)

    def gumbel_argmax(self, scores, scale):
        self.draws += 1
        return super().gumbel_argmax(scores, scale)


def accountant(eps=1.0, delta=0.0) -> Accountant:
    return Accountant(Budget(eps, delta), dataset_id="frame")


# --------------------------------------------------------------------------- sensitivities


def test_count_sensitivity_one_and_interval(frame):
    r = dp_count(frame, 1.0, noise=1)
    assert r.sensitivity == 1.0 and r.mechanism == "geometric"
    assert isinstance(r.value, int) and r.low <= r.value <= r.high
    assert r.fit_for_release is False and r.epsilon == 1.0 and r.delta == 0.0


@pytest.mark.parametrize("bounds, expected", [((0, 100), 100), ((-250, 10), 250), ((-3, -1), 3), ((2, 5), 5)])
def test_sum_sensitivity_is_largest_absolute_bound(frame, bounds, expected):
    assert sum_sensitivity(*bounds) == expected
    r = dp_sum(frame, "age", bounds, 1.0, noise=2)
    assert r.sensitivity == expected and r.bounds == tuple(map(float, bounds))


def test_sum_clamps_and_is_near_truth_at_large_epsilon(frame):
    r = dp_sum(frame, "age", (20, 60), 1e6, noise=3)
    assert r.value == pytest.approx(frame.age.clip(20, 60).sum(), abs=1.0)
    assert r.low < r.value < r.high


def test_histogram_sensitivity_one_and_every_cell(frame):
    r = dp_histogram(frame, ["sex", "race"], 1.0, noise=4)
    assert r.sensitivity == 1.0 and r.value.shape == (2, 3)
    assert r.categories == (("F", "M"), ("a", "b", "c"))
    exact = pd.crosstab(frame.sex, frame.race).to_numpy()
    big = dp_histogram(frame, ["sex", "race"], 1e6, noise=4)
    np.testing.assert_array_equal(big.value, exact)
    assert dp_contingency is dp_histogram


def test_gaussian_when_delta_positive(frame):
    r = dp_histogram(frame, "race", 1.0, 1e-6, noise=5)
    assert r.mechanism == "gaussian" and r.delta == 1e-6
    assert np.all(r.low < r.value) and np.all(r.value < r.high)


def test_user_categories_avoid_disclosing_the_category_set(frame):
    r = dp_histogram(frame, "race", 1e6, categories={"race": ["a", "b", "z"]}, noise=6)
    assert r.categories == (("a", "b", "z"),)
    np.testing.assert_array_equal(r.value, [(frame.race == "a").sum(), (frame.race == "b").sum(), 0])
    assert not r.notes  # no disclosure warning when every axis has given categories
    assert dp_histogram(frame, "race", 1.0, noise=6).notes  # data-derived categories are flagged


def test_histogram_accepts_a_dataset_and_a_csv(frame, tmp_path):
    ds = Dataset(frame, quasi_identifiers=["sex"])
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    a = dp_histogram(ds, "race", 1e6, noise=1).value
    b = dp_histogram(path, "race", 1e6, noise=1).value
    np.testing.assert_array_equal(a, b)


def test_ten_million_row_histogram_is_fast():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.integers(0, 50, 10_000_000)})
    ds = Dataset(frame, quasi_identifiers=["x"])
    ds.column("x")  # encoding is the table's load, not the query
    start = time.perf_counter()
    r = dp_histogram(ds, "x", 1.0, noise=NoiseSource.seeded(0))
    assert time.perf_counter() - start < 3.0
    assert r.value.shape == (50,) and abs(int(r.value.sum()) - 10_000_000) < 2_000


# --------------------------------------------------------------------------- mean and quantile


@SETTINGS
@given(lo=st.floats(-1e4, 1e4), width=st.floats(1e-3, 1e4), eps=st.floats(1e-3, 10), seed=st.integers(0, 2**31))
def test_mean_never_leaves_its_bounds(frame, lo, width, eps, seed):
    hi = lo + width
    r = dp_mean(frame, "income", (lo, hi), eps, noise=seed)
    assert lo <= r.value <= hi
    assert lo <= r.low <= r.high <= hi


def test_mean_is_near_truth_at_large_epsilon(frame):
    r = dp_mean(frame, "age", (0, 120), 1e5, noise=8)
    assert r.value == pytest.approx(frame.age.mean(), abs=0.01)
    assert r.low <= frame.age.mean() <= r.high


@SETTINGS
@given(q=st.floats(0, 1), eps=st.floats(1e-3, 5), seed=st.integers(0, 2**31))
def test_quantile_stays_within_bounds(frame, q, eps, seed):
    r = dp_quantile(frame, "income", q, (0, 60_000), eps, noise=seed)
    assert 0 <= r.value <= 60_000 and r.low is None


@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_quantile_is_near_truth_at_large_epsilon(frame, q):
    r = dp_quantile(frame, "age", q, (0, 120), 50.0, noise=9)
    assert abs(r.value - np.quantile(frame.age, q)) <= 2.0


def test_several_quantiles_split_epsilon_and_charge_once(frame):
    acc = accountant(2.0)
    r = dp_quantile(frame, "age", [0.25, 0.75], (0, 120), 1.0, accountant=acc, noise=1)
    assert r.value.shape == (2,) and len(acc.charges) == 1 and acc.charges[0].epsilon == 1


# --------------------------------------------------------------------------- post-processing


@SETTINGS
@given(cells=st.lists(st.floats(-50, 500), min_size=1, max_size=30), total=st.floats(0, 5000),
       method=st.sampled_from(["least_squares", "rescale"]))
def test_consistent_total_is_nonnegative_and_sums_to_total(cells, total, method):
    out = consistent_total(cells, total, method=method)
    assert np.all(out >= 0) and out.sum() == pytest.approx(total, rel=1e-9, abs=1e-6)
    rounded = integral(out, total=round(total))
    assert rounded.sum() == round(total) and np.all(np.abs(rounded - out) < 1 + 1e-9)


def test_least_squares_without_clipping_shifts_evenly():
    np.testing.assert_allclose(consistent_total([1.0, 2.0, 3.0], 9.0, nonnegative_cells=False), [2, 3, 4])


def test_histogram_totals_consistent_after_postprocessing(frame):
    acc = accountant(1.0)
    r = dp_histogram(frame, ["sex", "race"], 0.05, accountant=acc, noise=10)
    before = acc.to_json()
    p = postprocess(r, nonnegative=True, integral=True, consistent=True, total=len(frame))
    assert p.value.sum() == len(frame) and np.all(p.value >= 0) and p.value.dtype.kind == "i"
    assert p.epsilon == r.epsilon and p.postprocessing
    own = postprocess(r, integral=True, consistent=True)
    assert own.value.sum() == round(max(float(r.value.sum()), 0))
    assert acc.to_json() == before  # post-processing never touches the accountant


# --------------------------------------------------------------------------- errors: nothing charged, nothing drawn


BAD_CALLS = [
    lambda d, a, n: dp_count(d, 0, accountant=a, noise=n),
    lambda d, a, n: dp_count(d, -1, accountant=a, noise=n),
    lambda d, a, n: dp_count(d, 1.0, 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_count(d, 1.0, -0.1, accountant=a, noise=n),
    lambda d, a, n: dp_sum(d, "age", None, 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_sum(d, "age", (5, 5), 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_sum(d, "age", (0, float("inf")), 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_mean(d, "age", None, 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_mean(d, "sex", (0, 1), 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_sum(d, "agee", (0, 1), 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_quantile(d, "age", 1.5, (0, 100), 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_quantile(d, "age", 0.5, (0, 100), 1.0, delta=1e-6, accountant=a, noise=n),
    lambda d, a, n: dp_histogram(d, [], 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_histogram(d, ["sex", "sex"], 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_histogram(d, "sex", 1.0, categories={"race": ["a"]}, accountant=a, noise=n),
    lambda d, a, n: dp_count(d, 5.0, accountant=a, noise=n),               # overspends
    lambda d, a, n: dp_histogram(d, "sex", 1.5, accountant=a, noise=n),    # overspends
]


@pytest.mark.parametrize("call", BAD_CALLS)
def test_errors_charge_nothing_and_draw_nothing(frame, call):
    acc = accountant(1.0)
    acc.charge(0.25, label="earlier")
    before = acc.to_json()
    noise = CountingNoise()
    with pytest.raises(VeilError):
        call(frame, acc, noise)
    assert noise.draws == 0
    assert acc.to_json() == before


def test_overspending_is_refused_before_drawing(frame):
    acc = accountant(1.0)
    noise = CountingNoise()
    dp_count(frame, 0.6, accountant=acc, noise=noise)
    assert noise.draws == 1
    with pytest.raises(BudgetExceededError):
        dp_mean(frame, "age", (0, 100), 0.5, accountant=acc, noise=noise)
    assert noise.draws == 1 and len(acc.charges) == 1


def test_unknown_column_names_the_closest(frame):
    with pytest.raises(ColumnError, match="did you mean 'age'"):
        dp_sum(frame, "agee", (0, 1), 1.0, noise=1)


# --------------------------------------------------------------------------- CLI


@pytest.fixture()
def cli():
    app = typer.Typer()
    app.add_typer(dp_app, name="dp")

    @app.callback()
    def main() -> None:  # a group, so "dp" is a sub-command
        pass

    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["dp", *map(str, args)])


@pytest.fixture()
def csv(frame, tmp_path):
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def test_cli_answers_with_error_bars(cli, csv):
    r = cli("count", csv, "--epsilon", "1")
    assert r.exit_code == 0, r.output
    assert "answer:" in r.output and "95% interval" in r.output and "fit for release" in r.output
    r = cli("sum", csv, "--epsilon", "1", "--columns", "age", "--bounds", "0,120")
    assert r.exit_code == 0 and "sensitivity 120" in r.output
    r = cli("mean", csv, "--epsilon", "1", "--columns", "age", "--bounds=-10,120")
    assert r.exit_code == 0 and "interval" in r.output
    r = cli("quantile", csv, "--epsilon", "1", "--columns", "age", "--q", "0.5", "--bounds", "0,120")
    assert r.exit_code == 0 and "answer:" in r.output
    r = cli("histogram", csv, "--epsilon", "1", "--columns", "sex,race")
    assert r.exit_code == 0 and "noisy count" in r.output and "post-processing" in r.output


def test_cli_json_and_seed_warning(cli, csv):
    r = cli("mean", csv, "--epsilon", "1", "--columns", "age", "--bounds", "0,120", "--seed", "3", "--json")
    assert r.exit_code == 0
    assert "NOT fit for release" in r.stderr
    doc = json.loads(r.stdout)
    assert doc["fit_for_release"] is False and 0 <= doc["value"] <= 120 and doc["low"] <= doc["high"]
    r = cli("histogram", csv, "--epsilon", "1", "--columns", "race", "--json")
    doc = json.loads(r.stdout)
    assert doc["categories"] == [["a", "b", "c"]] and sum(doc["value"]) >= 0
    assert doc["sensitivity"] == 1.0


def test_cli_budget_file_create_charge_report(cli, csv, tmp_path):
    budget = tmp_path / "b.json"
    r = cli("count", csv, "--epsilon", "0.5", "--budget-file", budget)
    assert r.exit_code == 2 and "--budget" in r.stderr and not budget.exists()
    r = cli("count", csv, "--epsilon", "0.5", "--budget-file", budget, "--budget", "1", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["budget"]["left"]["epsilon"] == 0.5
    r = cli("sum", csv, "--epsilon", "0.25", "--columns", "age", "--bounds", "0,120", "--budget-file", budget)
    assert r.exit_code == 0
    acc = Accountant.load(budget, dataset_id_of(csv))
    assert [c.label for c in acc.charges] == ["count", "sum(age)"]
    r = cli("budget", budget)
    assert r.exit_code == 0 and "sum(age)" in r.stdout and "left ε = 0.25" in r.stdout
    doc = json.loads(cli("budget", budget, "--json").stdout)
    assert doc["spent"]["epsilon"] == 0.75 and [c["label"] for c in doc["charges"]] == ["count", "sum(age)"]
    assert cli("budget", budget, "--data", csv).exit_code == 0


BAD_CLI = [
    ("count", "--epsilon", "0"),
    ("count", "--epsilon", "-1"),
    ("count", "--epsilon", "1", "--delta", "1"),
    ("count", "--epsilon", "1", "--delta", "-0.5"),
    ("sum", "--epsilon", "0.1", "--columns", "age"),
    ("mean", "--epsilon", "0.1", "--columns", "age"),
    ("mean", "--epsilon", "0.1", "--columns", "age", "--bounds", "5"),
    ("mean", "--epsilon", "0.1", "--columns", "sex", "--bounds", "0,1"),
    ("quantile", "--epsilon", "0.1", "--columns", "age", "--bounds", "0,9", "--q", "2"),
    ("histogram", "--epsilon", "0.1", "--columns", "nope"),
    ("count", "--epsilon", "5"),                                     # overspends
    ("count", "--epsilon", "0.1", "--budget", "3"),                  # differs from the file's budget
]


@pytest.mark.parametrize("args", BAD_CLI)
def test_cli_bad_input_exit_2_one_line_nothing_written(cli, csv, tmp_path, args):
    budget = tmp_path / "b.json"
    assert cli("count", csv, "--epsilon", "0.5", "--budget-file", budget, "--budget", "1").exit_code == 0
    before = budget.read_bytes()
    r = cli(args[0], csv, *args[1:], "--budget-file", budget)
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.output
    assert budget.read_bytes() == before
    assert r.stdout == ""


def test_cli_refuses_budget_file_of_another_dataset_and_corrupt_files(cli, csv, frame, tmp_path):
    other = tmp_path / "other.csv"
    frame.head(100).to_csv(other, index=False)
    budget = tmp_path / "b.json"
    assert cli("count", other, "--epsilon", "0.5", "--budget-file", budget, "--budget", "1").exit_code == 0
    before = budget.read_bytes()
    r = cli("count", csv, "--epsilon", "0.1", "--budget-file", budget)
    assert r.exit_code == 2 and "belongs to dataset" in r.stderr and budget.read_bytes() == before
    assert cli("budget", budget, "--data", csv).exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    for args in (("count", csv, "--epsilon", "0.1", "--budget-file", bad), ("budget", bad)):
        r = cli(*args)
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
        assert bad.read_text(encoding="utf-8") == "{not json"
    with pytest.raises(BudgetFileError):
        Accountant.load(budget, dataset_id_of(csv))


def test_library_errors_are_parameter_errors(frame):
    with pytest.raises(ParameterError, match="bounds"):
        dp_sum(frame, "age", None, 1.0, noise=1)
    assert isinstance(dp_count(frame, 1.0, noise=1), QueryResult)
