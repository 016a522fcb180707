"""DP queries over a table (count, sum, mean, quantile, histogram), post-processing, and ``veil dp``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import typer
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veil.data.dataset import Dataset
from veil.dp import (
    Accountant,
    Budget,
    BudgetExceededError,
    NoiseSource,
)
from veil.cli.dp import dp_app
from veil.ledger import Ledger, LedgerError
from veil.dp.fingerprint import dataset_id
from veil.dp.queries import (
    DEFAULT_GRID,
    QueryResult,
    consistent_total,
    dp_contingency,
    dp_count,
    dp_histogram,
    dp_mean,
    dp_quantile,
    dp_sum,
    integral,
    postprocess,
    quantile_grid,
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


CATEGORIES = {"sex": ["F", "M"], "race": ["a", "b", "c"]}


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
    r = dp_histogram(frame, ["sex", "race"], 1.0, categories=CATEGORIES, noise=4)
    assert r.sensitivity == 1.0 and r.value.shape == (2, 3)
    assert r.categories == (("F", "M"), ("a", "b", "c"))
    exact = pd.crosstab(frame.sex, frame.race).to_numpy()
    big = dp_histogram(frame, ["sex", "race"], 1e6, categories=CATEGORIES, noise=4)
    np.testing.assert_array_equal(big.value, exact)
    assert dp_contingency is dp_histogram


def test_gaussian_when_delta_positive(frame):
    r = dp_histogram(frame, "race", 1.0, 1e-6, categories={"race": CATEGORIES["race"]}, noise=5)
    assert r.mechanism == "gaussian" and r.delta == 1e-6
    assert np.all(r.low < r.value) and np.all(r.value < r.high)


def test_user_categories_avoid_disclosing_the_category_set(frame):
    r = dp_histogram(frame, "race", 1e6, categories={"race": ["a", "b", "z"]}, noise=6)
    assert r.categories == (("a", "b", "z"),)
    np.testing.assert_array_equal(r.value, [(frame.race == "a").sum(), (frame.race == "b").sum(), 0])
    assert not r.notes  # no disclosure warning when every axis has given categories
    flagged = dp_histogram(frame, "race", 1.0, data_categories=True)  # secure noise, categories from the data
    assert flagged.notes and not flagged.fit_for_release and "from the data" in flagged.not_fit_because[0]


def test_histogram_accepts_a_dataset_and_a_csv(frame, tmp_path):
    ds = Dataset(frame, quasi_identifiers=["sex"])
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    race = {"race": CATEGORIES["race"]}
    a = dp_histogram(ds, "race", 1e6, categories=race, noise=1).value
    b = dp_histogram(path, "race", 1e6, categories=race, noise=1).value
    np.testing.assert_array_equal(a, b)


def test_a_million_row_histogram_counts_every_row_once():
    # Speed is the benchmark's business (benchmarks/dp.py); here only the answer on a large table.
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.integers(0, 50, 1_000_000)})
    ds = Dataset(frame, quasi_identifiers=["x"])
    r = dp_histogram(ds, "x", 1.0, categories={"x": range(50)}, noise=NoiseSource.seeded(0))
    truth = np.bincount(frame["x"], minlength=50)
    assert r.value.shape == (50,) and np.abs(r.value - truth).max() < 40


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
@example(cells=[2.2250738585e-313], total=1.0, method="rescale")  # a subnormal sum once overflowed t / sum
def test_consistent_total_is_nonnegative_and_sums_to_total(cells, total, method):
    out = consistent_total(cells, total, method=method)
    assert np.all(out >= 0) and out.sum() == pytest.approx(total, rel=1e-9, abs=1e-6)
    rounded = integral(out, total=round(total))
    assert rounded.sum() == round(total) and np.all(np.abs(rounded - out) < 1 + 1e-9)


def test_least_squares_without_clipping_shifts_evenly():
    np.testing.assert_allclose(consistent_total([1.0, 2.0, 3.0], 9.0, nonnegative_cells=False), [2, 3, 4])


def test_histogram_totals_consistent_after_postprocessing(frame):
    acc = accountant(1.0)
    r = dp_histogram(frame, ["sex", "race"], 0.05, categories=CATEGORIES, accountant=acc, noise=10)
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
    lambda d, a, n: dp_sum(d, "agee", (0, 1), 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_quantile(d, "age", 1.5, (0, 100), 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_quantile(d, "age", 0.5, (0, 100), 1.0, delta=1e-6, accountant=a, noise=n),
    lambda d, a, n: dp_histogram(d, [], 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_histogram(d, ["sex", "sex"], 1.0, accountant=a, noise=n),
    lambda d, a, n: dp_histogram(d, "sex", 1.0, categories={"race": ["a"]}, accountant=a, noise=n),
    lambda d, a, n: dp_histogram(d, "sex", 1.0, accountant=a, noise=n),    # categories not public
    lambda d, a, n: dp_histogram(d, "sex", 1.0, categories={"sex": []}, accountant=a, noise=n),
    lambda d, a, n: dp_histogram(d, "sex", 1.0, categories={"sex": "FM"}, accountant=a, noise=n),
    lambda d, a, n: dp_quantile(d, "age", 0.5, (0, 100), 1.0, grid=0, accountant=a, noise=n),
    lambda d, a, n: dp_quantile(d, "age", 0.5, (1e15, 1e15 + 1), 1.0, grid=1000, accountant=a, noise=n),
    lambda d, a, n: dp_count(d, 1e-300, accountant=a, noise=n),            # noise scale 10^300
    lambda d, a, n: dp_sum(d, "age", (0, 100), 1e-300, accountant=a, noise=n),
    lambda d, a, n: dp_count(d, 5.0, accountant=a, noise=n),               # overspends
    lambda d, a, n: dp_histogram(d, "sex", 1.5, categories={"sex": ["F", "M"]}, accountant=a, noise=n),  # overspends
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
    r = cli("histogram", csv, "--epsilon", "1", "--columns", "sex,race", "--categories", "sex=F,M",
            "--categories", "race=a,b,c")
    assert r.exit_code == 0 and "noisy count" in r.output and "post-processing" in r.output


def test_cli_json_and_seed_warning(cli, csv):
    r = cli("mean", csv, "--epsilon", "1", "--columns", "age", "--bounds", "0,120", "--seed", "3", "--json")
    assert r.exit_code == 0
    assert "NOT fit for release" in r.stderr
    doc = json.loads(r.stdout)
    assert doc["fit_for_release"] is False and 0 <= doc["value"] <= 120 and doc["low"] <= doc["high"]
    r = cli("histogram", csv, "--epsilon", "1", "--columns", "race", "--data-categories", "--json")
    doc = json.loads(r.stdout)
    assert doc["categories"] == [["a", "b", "c"]] and sum(doc["value"]) >= 0
    assert doc["fit_for_release"] is False and "from the data" in r.stderr
    assert doc["sensitivity"] == 1.0


def test_cli_budget_file_create_charge_report(cli, csv, tmp_path):
    budget = tmp_path / "b.json"
    r = cli("count", csv, "--epsilon", "0.5", "--budget-file", budget)
    assert r.exit_code == 2 and "--budget" in r.stderr and not budget.exists()
    r = cli("count", csv, "--epsilon", "0.5", "--budget-file", budget, "--budget", "1", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["budget"]["left"]["epsilon"] == 0.5
    r = cli("sum", csv, "--epsilon", "0.25", "--columns", "age", "--bounds", "0,120", "--budget-file", budget)
    assert r.exit_code == 0
    acc = Ledger(budget).budget(csv.name)  # a budget file's population is named after the table's file
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
    ("histogram", "--epsilon", "0.1", "--columns", "race"),           # categories not public
    ("histogram", "--epsilon", "0.1", "--columns", "race", "--categories", "race=nope.txt"),
    ("histogram", "--epsilon", "0.1", "--columns", "race", "--categories", "race=a", "--hierarchy", "race=h.csv"),
    ("quantile", "--epsilon", "0.1", "--columns", "age", "--bounds", "0,9", "--grid", "0"),
    ("count", "--epsilon", "1e-300"),                                # noise scale 10^300
    ("sum", "--epsilon", "1e-300", "--columns", "age", "--bounds", "0,100"),
    ("quantile", "--epsilon", "1e-300", "--columns", "age", "--bounds", "0,100"),
    ("histogram", "--epsilon", "1e-300", "--columns", "race", "--categories", "race=a,b"),
    ("mean", "--epsilon", "1e-300", "--columns", "age", "--bounds", "0,100"),
    ("count", "--epsilon", "0.1", "--seed", "-1"),
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
    assert r.exit_code == 2 and "keeps the budget of another table" in r.stderr and budget.read_bytes() == before
    assert cli("budget", budget, "--data", csv).exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    for args in (("count", csv, "--epsilon", "0.1", "--budget-file", bad), ("budget", bad)):
        r = cli(*args)
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
        assert bad.read_text(encoding="utf-8") == "{not json"
    assert Ledger(budget).population_of(csv) is None and Ledger(budget).population_of(other).name == "other.csv"
    with pytest.raises(LedgerError):
        Ledger(budget).budget(csv.name)


def test_library_errors_are_parameter_errors(frame):
    with pytest.raises(ParameterError, match="bounds"):
        dp_sum(frame, "age", None, 1.0, noise=1)
    assert isinstance(dp_count(frame, 1.0, noise=1), QueryResult)


# --------------------------------------------------------------------------- quantiles on a public grid


def test_quantile_grid_is_exact_and_public():
    assert quantile_grid((0, 0.3), 3).tolist() == [0.0, 0.1, 0.2, 0.3]  # 3 × 0.1 would be 0.30000000000000004
    assert quantile_grid((17, 90), 73).tolist() == list(range(17, 91))
    assert len(quantile_grid((0, 1))) == DEFAULT_GRID + 1
    with pytest.raises(ParameterError, match="floating point"):
        quantile_grid((1e15, 1e15 + 1), 1000)


def test_the_audits_quantile_case_reaches_the_same_outputs_on_neighbours():
    """D = [1,3,3,3] and D' = [3,3,3], bounds (0, 3), q = 0: the textbook last step (a uniform point in
    a data-dependent interval) reaches values under D that it never reaches under D'. On the grid,
    both reach exactly the grid, every point with a probability within e^ε of the other's."""
    eps, grid = 1.0, 30
    points = quantile_grid((0, 3), grid)
    probabilities = []
    for data in ([1, 3, 3, 3], [3, 3, 3]):
        x = np.array(data, dtype=float)
        u = -np.abs((x[None, :] < points[:, None]).sum(axis=1) - 0.0 * len(x))  # by definition, row by row
        p = np.exp(eps * (u - u.max()) / 2)
        probabilities.append(p / p.sum())
        frame = pd.DataFrame({"x": data})
        drawn = {dp_quantile(frame, "x", 0.0, (0, 3), eps, grid=grid, noise=seed).value for seed in range(300)}
        assert drawn <= set(points.tolist())
    d, d2 = probabilities
    assert np.all(d > 0) and np.all(d2 > 0)                      # the same support: the whole grid
    assert np.all(np.abs(np.log(d / d2)) <= eps + 1e-12)        # and ε-DP point by point


@SETTINGS
@given(values=st.lists(st.integers(-20, 120), min_size=1, max_size=60), q=st.floats(0, 1),
       grid=st.integers(1, 200))
def test_quantile_scores_match_the_definition(values, q, grid):
    from veil.dp.queries import _clamped_values, _quantile_scores

    frame = pd.DataFrame({"v": values})
    points = quantile_grid((0, 100), grid)
    clamped = np.clip(np.array(values, dtype=float), 0, 100)
    expected = -np.abs((clamped[None, :] < points[:, None]).sum(axis=1) - q * len(values))
    np.testing.assert_allclose(_quantile_scores(*_clamped_values(frame, "v", 0, 100), points, q), expected)


# --------------------------------------------------------------------------- column types never come from values


@pytest.fixture
def with_unknown(frame, tmp_path):
    """The frame as CSV, and again with one more record whose age is 'unknown'."""
    plain, odd = tmp_path / "plain.csv", tmp_path / "odd.csv"
    frame.to_csv(plain, index=False)
    frame.astype({"age": str}).pipe(lambda f: pd.concat([f, f.head(1).assign(age="unknown")])).to_csv(odd,
                                                                                                     index=False)
    return plain, odd


@pytest.mark.parametrize("query", [
    lambda d: dp_sum(d, "age", (0, 120), 1e6, noise=1).value,
    lambda d: dp_mean(d, "age", (0, 120), 1e6, noise=1).value,
    lambda d: dp_quantile(d, "age", 0.5, (0, 120), 1e3, noise=1).value,
])
def test_a_text_cell_in_a_numeric_query_is_missing_never_a_refusal(with_unknown, query):
    plain, odd = with_unknown
    assert query(odd) == pytest.approx(query(plain), abs=1e-6)


def test_schema_types_are_used_as_they_are(frame, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    typed, text = tmp_path / "typed.parquet", tmp_path / "text.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), typed)
    as_text = frame.astype({"age": str})
    as_text.loc[0, "age"] = "unknown"
    pq.write_table(pa.Table.from_pandas(as_text, preserve_index=False), text)
    exact = float(frame.age.sum())
    assert dp_sum(typed, "age", (0, 120), 1e6, noise=2).value == pytest.approx(exact, abs=1e-3)
    assert dp_sum(text, "age", (0, 120), 1e6, noise=2).value == pytest.approx(exact - frame.age[0], abs=1e-3)
    # a text column holds no numbers: the sum runs over no values, it is not refused
    assert dp_sum(frame, "sex", (0, 1), 1e6, noise=2).value == pytest.approx(0.0, abs=1e-3)


def test_cli_numeric_queries_run_with_an_unknown_cell(cli, with_unknown):
    _, odd = with_unknown
    for args in (("mean", "--bounds", "0,120"), ("quantile", "--bounds", "0,120", "--grid", "120")):
        r = cli(args[0], odd, "--epsilon", "1", "--columns", "age", *args[1:], "--json")
        assert r.exit_code == 0, r.output
        assert 0 <= json.loads(r.stdout)["value"] <= 120


# --------------------------------------------------------------------------- public categories


def test_one_record_with_a_new_value_changes_no_cell(frame):
    """The audit's Martian: with public categories the released cells are the same with or without him."""
    martian = pd.concat([frame, frame.head(1).assign(race="Martian")], ignore_index=True)
    a = dp_histogram(frame, "race", 1e6, categories={"race": ["a", "b", "c"]}, noise=3)
    b = dp_histogram(martian, "race", 1e6, categories={"race": ["a", "b", "c"]}, noise=3)
    assert a.categories == b.categories and np.array_equal(a.value, b.value) and b.fit_for_release is False
    assert dp_histogram(martian, "race", 1.0, categories={"race": ["a", "b", "c"]}).fit_for_release
    with pytest.raises(ParameterError, match="must be public"):
        dp_histogram(martian, "race", 1.0)


def test_categories_from_a_hierarchy_match_numbers_and_count_missing_cells(tmp_path):
    from veil.data.hierarchy import Hierarchy

    frame = pd.DataFrame({"age": [25.0, 25.0, 30.0, np.nan, 99.0], "sex": ["f", "m", "f", None, "x"]})
    ages = Hierarchy([["25", "20-29"], ["30", "30-39"], ["40", "40-49"], ["NULL", "?"]])
    r = dp_histogram(frame, ["age", "sex"], 1e6, categories={"age": ages, "sex": ["f", "m", ""]}, noise=1)
    assert r.categories == (("25", "30", "40", "NULL"), ("f", "m", ""))
    # 99 is not a leaf and 'x' not a category: that record is left out; the missing age counts under NULL
    assert r.value.tolist() == [[1, 1, 0], [1, 0, 0], [0, 0, 0], [0, 0, 1]]


def test_cli_categories_from_lists_files_and_hierarchies(cli, csv, tmp_path):
    races = tmp_path / "races.txt"
    races.write_text("a\nb\nc\nMartian\n")
    hierarchy = tmp_path / "sex.csv"
    hierarchy.write_text("F;*\nM;*\n")
    r = cli("histogram", csv, "--epsilon", "1", "--columns", "race,sex", "--categories", f"race={races}",
            "--hierarchy", f"sex={hierarchy}", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["categories"] == [["a", "b", "c", "Martian"], ["F", "M"]] and doc["fit_for_release"] is True
    r = cli("histogram", csv, "--epsilon", "1", "--columns", "race", "--categories", "race=a,b", "--json")
    assert json.loads(r.stdout)["categories"] == [["a", "b"]]
    r = cli("histogram", csv, "--epsilon", "1", "--columns", "race")
    assert r.exit_code == 2 and "--categories race=" in r.stderr and "--data-categories" in r.stderr


def test_numbers_match_categories_by_value_whatever_the_other_cells_hold():
    numbers = pd.DataFrame({"age": ["25", "25", "30"]})
    with_text = pd.DataFrame({"age": ["25", "25", "30", "unknown"]})
    for frame in (numbers, with_text):
        r = dp_histogram(frame, "age", 1e6, categories={"age": ["25.0", "30", "40"]}, noise=1)
        assert r.value.tolist() == [2, 1, 0]


@pytest.mark.parametrize("query", [
    ["count"],
    ["sum", "--columns", "age", "--bounds", "0,100"],
    ["mean", "--columns", "age", "--bounds", "0,100"],
    ["quantile", "--columns", "age", "--bounds", "0,100", "--grid", "1", "--q", "0.5"],
    ["histogram", "--columns", "sex", "--categories", "sex=F,M"],
])
def test_an_empty_table_is_answered_like_any_other(tmp_path, query):
    # Refusing a table because it has no records would tell the analyst that it is empty.
    empty = tmp_path / "empty.csv"
    empty.write_text("age,sex\n")
    result = CliRunner().invoke(dp_app, [*query, str(empty), "--epsilon", "1", "--seed", "3", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["value"] is not None and answer["epsilon"] == 1


def test_an_empty_table_is_still_refused_where_nothing_is_private(tmp_path):
    from veil.data.io import read_csv
    from veil.errors import DataError

    empty = tmp_path / "empty.csv"
    empty.write_text("age,sex\n")
    with pytest.raises(DataError, match="no records"):
        read_csv(empty)
    assert read_csv(empty, allow_empty=True).num_rows == 0


def test_an_empty_frame_is_answered_like_any_other():
    import polars as pl

    frames = (pd.DataFrame({"age": pd.Series([], dtype=object)}), pl.DataFrame({"age": pl.Series([], dtype=pl.String)}))
    for frame in frames:
        assert dp_count(frame, 1.0, noise=1).value == dp_count(pd.DataFrame({"age": ["1"]}), 1.0, noise=1).value - 1
        assert dp_histogram(frame, "age", 1.0, categories={"age": ["1", "2"]}, noise=1).value.shape == (2,)


QUERIES = [
    ["count"],
    ["count", "--columns", "sex"],
    ["sum", "--columns", "age", "--bounds", "0,100"],
    ["mean", "--columns", "age", "--bounds", "0,100"],
    ["quantile", "--columns", "age", "--bounds", "0,100", "--grid", "10", "--q", "0.5"],
    ["histogram", "--columns", "sex,age", "--categories", "sex=F,M", "--categories", "age=30,41,52"],
]
TIDY = b"age,sex\n30,F\n41,M\n52,F\n41,M\n"
MESSY = b'age,sex\n30,F\n41\n41,M\n"52,F\n52,F,x\n\xff9,M\n,,\n52,F\n41,M\n'


@pytest.mark.parametrize("query", QUERIES)
def test_a_malformed_line_is_left_out_by_a_public_rule_and_never_named(tmp_path, query):
    # A ragged line, a line that is not UTF-8 and an open quote are not records: the answer is the
    # one the well-formed lines give (the same seeded noise), and nothing says which lines or how many.
    tidy, messy = tmp_path / "tidy.csv", tmp_path / "messy.csv"
    tidy.write_bytes(TIDY)
    messy.write_bytes(MESSY)
    answers = []
    for path in (tidy, messy):
        result = CliRunner().invoke(dp_app, [*query, str(path), "--epsilon", "1", "--seed", "3", "--json"])
        assert result.exit_code == 0, result.output
        answers.append(result)
    assert json.loads(answers[0].stdout) == json.loads(answers[1].stdout)
    assert answers[0].stderr == answers[1].stderr
    assert "line" not in answers[1].output and "malformed" not in answers[1].output
    assert dataset_id(messy) == dataset_id(tidy)
    strict = CliRunner().invoke(dp_app, [*query, str(messy), "--epsilon", "1", "--seed", "3", "--strict"])
    assert strict.exit_code == 2 and strict.stdout == ""
    assert strict.stderr.startswith("error: ") and len(strict.stderr.strip().splitlines()) == 1


def test_strict_refuses_the_first_malformed_line_and_names_it(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"age,sex\n30,F\n41\n52,F\n")
    result = CliRunner().invoke(dp_app, ["count", str(path), "--epsilon", "1", "--strict"])
    assert result.exit_code == 2
    assert result.stderr == f"error: line 3 of {str(path)!r} has 1 fields but the header has 2 (delimiter ','); fix " \
                            "that row or give --delimiter.\n"
