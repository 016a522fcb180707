"""Local DP frequency oracles: the ε-LDP ratio, unbiasedness, variance against theory, hashing,
the chooser, post-processing, bad input and the CLI."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

import veil
from veil.ldp import (
    BLH,
    GRR,
    MERSENNE_61,
    OLH,
    OUE,
    SUE,
    Randomness,
    Reports,
    Supports,
    choose_protocol,
    make_protocol,
    postprocess,
    universal_hash,
)
from veil.cli.ldp import ldp_app

ALL = (GRR, SUE, OUE, BLH, OLH)
EPSILONS = (0.1, 0.5, 1.0, math.log(3), 2.0, 4.0)


# ------------------------------------------------------------------------------- ε-LDP ratio

@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("eps", EPSILONS)
def test_privacy_ratio_is_e_to_the_epsilon(cls, eps):
    proto = cls(eps, 16)
    assert proto.privacy_ratio() == pytest.approx(math.exp(eps), rel=1e-12)


def _enumerated_ratio(proto, outputs, values):
    worst = 0.0
    for out in outputs:
        probs = [proto.output_probability(out, v) for v in values]
        worst = max(worst, max(probs) / min(probs))
    return worst


@pytest.mark.parametrize("eps", (0.5, 1.0, 3.0))
def test_ratio_by_enumerating_every_output(eps):
    d = 4
    grr = GRR(eps, d)
    assert _enumerated_ratio(grr, range(d), range(d)) == pytest.approx(math.exp(eps), rel=1e-12)
    assert sum(grr.output_probability(y, 0) for y in range(d)) == pytest.approx(1.0)
    for cls in (SUE, OUE):
        proto = cls(eps, d)
        outputs = [np.array(bits, dtype=bool) for bits in itertools.product((0, 1), repeat=d)]
        assert _enumerated_ratio(proto, outputs, range(d)) == pytest.approx(math.exp(eps), rel=1e-12)
        assert sum(proto.output_probability(o, 2) for o in outputs) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    for cls in (BLH, OLH):
        proto = cls(eps, 8)
        worst = 0.0
        for a, b in zip(rng.integers(1, MERSENNE_61, 20, dtype=np.uint64), rng.integers(0, MERSENNE_61, 20, dtype=np.uint64)):
            outputs = [(y, a, b) for y in range(proto.g)]
            assert sum(proto.output_probability(o, 3) for o in outputs) == pytest.approx(1.0)
            worst = max(worst, _enumerated_ratio(proto, outputs, range(8)))
        assert worst == pytest.approx(math.exp(eps), rel=1e-12)


def test_theory_matches_the_papers_closed_forms():
    n = 1000
    for eps in EPSILONS:
        e = math.exp(eps)
        assert GRR(eps, 50).variance(n) == pytest.approx(n * (e + 48) / (e - 1) ** 2)
        h = math.exp(eps / 2)
        assert SUE(eps, 50).variance(n) == pytest.approx(n * h / (h - 1) ** 2)
        assert OUE(eps, 50).variance(n) == pytest.approx(n * 4 * e / (e - 1) ** 2)
        assert BLH(eps, 50).variance(n) == pytest.approx(n * (e + 1) ** 2 / (e - 1) ** 2)
        olh = OLH(eps, 50)
        g = olh.g
        assert g == round(e) + 1
        assert olh.q == 1 / g and olh.p == pytest.approx(e / (e + g - 1))
        assert olh.variance(n) == pytest.approx(n * (e - 1 + g) ** 2 / ((e - 1) ** 2 * (g - 1)))
        # the exact variance adds c_v (1 − p − q)/(p − q)
        oue = OUE(eps, 50)
        assert oue.variance(n, 10) == pytest.approx(oue.variance(n) + 10 * (0.5 - oue.q) / (0.5 - oue.q))


# ------------------------------------------------------------------------------- statistics

def _truth(d, n, seed=7):
    weights = 1.0 / np.arange(1, d + 1)
    return np.random.default_rng(seed).choice(d, size=n, p=weights / weights.sum())


@pytest.mark.parametrize("cls", ALL)
def test_unbiased_and_variance_within_ten_percent_at_100k(cls):
    n, d, runs, eps = 100_000, 64, 50, 1.0  # 3,200 squared errors: the ratio has a standard error of 2.5 %
    values = _truth(d, n)
    truth = np.bincount(values, minlength=d)
    proto = cls(eps, d)
    rng = np.random.default_rng(2024)
    estimates = np.array([proto.estimate(proto.perturb_and_aggregate(values, rng=rng)) for _ in range(runs)])
    var = proto.variance(n, truth)
    # unbiased: the mean of the runs lies within its confidence interval for every value
    z = (estimates.mean(axis=0) - truth) / np.sqrt(var / runs)
    assert np.max(np.abs(z)) < 4.5
    assert abs(z.mean()) < 4.5 / math.sqrt(d)
    # variance: the squared errors, normalized by each value's exact variance, average 1
    ratio = np.mean((estimates - truth) ** 2 / var)
    assert ratio == pytest.approx(1.0, abs=0.10)


def test_perturb_then_aggregate_equals_chunked_path_in_distribution_and_shapes():
    values = _truth(16, 5000)
    for cls in ALL:
        proto = cls(1.0, 16)
        reports = proto.perturb(values, rng=3)
        assert isinstance(reports, Reports) and len(reports) == 5000 and not reports.fit_for_release
        supports = proto.aggregate(reports)
        assert supports.shape == (16,) and supports.dtype == np.int64
        assert np.allclose(proto.estimate(reports), proto.estimate(supports, n=5000))
        chunked = proto.perturb_and_aggregate(values, rng=3, chunk_size=777)
        assert isinstance(chunked, Supports) and chunked.n == 5000
    bits = OUE(1.0, 16).perturb(values, rng=0).data
    assert bits.shape == (5000, 16) and bits.dtype == bool


def test_seeded_runs_reproduce_and_secure_runs_are_labelled():
    values = _truth(8, 2000)
    for cls in ALL:
        proto = cls(1.0, 8)
        a = proto.estimate(proto.perturb(values, rng=11))
        b = proto.estimate(proto.perturb(values, rng=11))
        assert np.array_equal(a, b)
        secure = proto.perturb(values)
        assert secure.fit_for_release
        assert proto.estimate(secure).shape == (8,)
    assert Randomness.secure().fit_for_release and not Randomness.seeded(1).fit_for_release


def test_secure_coins_have_the_right_rates():
    src = Randomness.secure()
    coins = src.bernoulli(0.3, 200_000)
    assert abs(coins.mean() - 0.3) < 5 * math.sqrt(0.3 * 0.7 / 200_000)
    ints = src.integers(7, 70_000)
    assert ints.min() == 0 and ints.max() == 6
    assert np.all(np.abs(np.bincount(ints) - 10_000) < 500)
    seeds = src.hash_seeds(1, 10_000)
    assert seeds.min() >= 1 and seeds.max() < MERSENNE_61 and len(np.unique(seeds)) == 10_000
    u = src.uniform(1000)
    assert u.min() >= 0 and u.max() < 1


# ------------------------------------------------------------------------------- hashing

def test_universal_hash_matches_python_big_integers():
    rng = np.random.default_rng(5)
    a = rng.integers(1, MERSENNE_61, 2000, dtype=np.uint64)
    b = rng.integers(0, MERSENNE_61, 2000, dtype=np.uint64)
    x = rng.integers(0, MERSENNE_61, 2000, dtype=np.uint64)
    x[:3] = [0, 1, MERSENNE_61 - 1]
    a[:3] = [MERSENNE_61 - 1, 1, MERSENNE_61 - 1]
    for g in (2, 3, 4, 6, 21, 1 << 20):
        got = universal_hash(a, b, x, g)
        want = [((int(ai) * int(xi) + int(bi)) % MERSENNE_61) % g for ai, bi, xi in zip(a, b, x)]
        assert got.tolist() == want


@pytest.mark.parametrize("eps", (0.6, 1.0, 2.0))  # g = 3 (odd), 4 (power of two), 8; BLH g = 2
def test_server_support_counts_match_a_direct_evaluation(eps):
    d = 50
    for proto in (OLH(eps, d), BLH(eps, d)):
        y, a, b = proto.perturb(_truth(d, 3000), rng=1).data
        direct = np.zeros(d, dtype=np.int64)
        for v in range(d):
            direct[v] = np.count_nonzero(universal_hash(a, b, np.full(len(a), v), proto.g) == y)
        assert np.array_equal(proto.aggregate((y, a, b)), direct)
    olh6 = OLH(math.log(5), d)  # g = 6: even, not a power of two
    assert olh6.g == 6
    y, a, b = olh6.perturb(_truth(d, 3000), rng=1).data
    direct = [np.count_nonzero(universal_hash(a, b, np.full(len(a), v), 6) == y) for v in range(d)]
    assert olh6.aggregate((y, a, b)).tolist() == direct


def test_hash_family_is_uniform_and_seeds_differ_per_user():
    proto = OLH(2.0, 1024)
    _, a, b = proto.perturb(np.zeros(20_000, dtype=np.int64), rng=9).data
    assert len(np.unique(a)) == len(a) and len(np.unique(b)) == len(b)
    g = 8
    hashed = universal_hash(a, b, np.full(len(a), 12345), g)
    counts = np.bincount(hashed, minlength=g)
    expected = len(a) / g
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 30  # 7 degrees of freedom: far beyond the 0.999 quantile (24.3)
    # pairwise: two values collide with probability 1/g over the users' seeds
    other = universal_hash(a, b, np.full(len(a), 777), g)
    assert abs(np.mean(hashed == other) - 1 / g) < 5 * math.sqrt((1 / g) * (1 - 1 / g) / len(a))


# ------------------------------------------------------------------------------- chooser, postprocess

def test_chooser_picks_grr_for_small_domains_and_olh_for_large_ones():
    assert isinstance(choose_protocol(1.0, 2), GRR)
    assert isinstance(choose_protocol(1.0, 5), GRR)
    assert isinstance(choose_protocol(4.0, 100), GRR)  # d < 3e^ε + 2 ≈ 165.8
    assert isinstance(choose_protocol(1.0, 10_000), OLH)
    assert isinstance(choose_protocol(0.5, 100_000), OLH)
    strict = choose_protocol(1.0, 10_000, tolerance=0)
    assert isinstance(strict, OUE)  # OUE's variance is the optimum; OLH's is within a few per cent
    for eps, d in ((0.5, 3), (1.0, 64), (2.0, 1024), (3.0, 100)):
        chosen = choose_protocol(eps, d, tolerance=0)
        assert chosen.variance(1000) == min(cls(eps, d).variance(1000) for cls in ALL)
    assert isinstance(make_protocol("auto", 1.0, 10_000), OLH)


def test_postprocess_clips_and_sums_to_n():
    est = np.array([-50.0, 30.0, 120.0, -10.0])
    out = postprocess(est, 100)
    assert np.all(out >= 0) and out.sum() == pytest.approx(100)
    assert out[0] == 0 and out[2] / out[1] == pytest.approx(4.0)
    assert np.array_equal(postprocess(est, 100, clip=False, renormalize=False), est)
    assert np.array_equal(postprocess(est, 100, renormalize=False), np.maximum(est, 0))
    assert postprocess(np.array([-1.0, -2.0]), 10).tolist() == [5.0, 5.0]
    assert est[0] == -50.0  # the input is not changed


# ------------------------------------------------------------------------------- bad input

def _one_sentence(exc_info):
    text = str(exc_info.value)
    assert text and text.count("\n") == 0 and text.rstrip().endswith((".", ")"))
    return text


@pytest.mark.parametrize("cls", ALL)
def test_bad_parameters_are_refused_with_one_sentence(cls):
    for eps in (0, -1, float("nan"), float("inf"), 1e-300, 1e-10, 701):
        with pytest.raises(veil.ParameterError) as exc:
            cls(eps, 10)
        assert "epsilon" in _one_sentence(exc)
    for d in (1, 0, -3):
        with pytest.raises(veil.ParameterError) as exc:
            cls(1.0, d)
        assert "domain" in _one_sentence(exc)
    proto = cls(1.0, 10)
    with pytest.raises(veil.ParameterError) as exc:
        proto.perturb([1, 2, 12, 3, -1, 12], rng=0)
    text = _one_sentence(exc)
    assert "12" in text and "-1" in text and "outside the declared domain" in text
    with pytest.raises(veil.ParameterError):
        proto.perturb([1.5, 2], rng=0)
    with pytest.raises(veil.ParameterError):
        proto.perturb(np.zeros((3, 2), dtype=int), rng=0)
    with pytest.raises(veil.ParameterError):
        proto.perturb(10, rng=0)


@pytest.mark.parametrize("cls, eps, d", [(GRR, 40.0, 2), (SUE, 80.0, 8), (BLH, 40.0, 8)])
def test_an_epsilon_that_would_send_values_unrandomized_is_refused(cls, eps, d):
    """At such an ε a keep probability rounds to 1: the coin would never flip (no noise at all)."""
    with pytest.raises(veil.ParameterError) as exc:
        cls(eps, d)
    assert "not be randomized" in _one_sentence(exc)
    assert choose_protocol(eps, d).p < 1  # the chooser skips what cannot run


@pytest.mark.parametrize("cls", ALL)
def test_the_smallest_and_largest_epsilon_give_finite_figures(cls):
    for eps in (1e-9, 20.0):
        proto = cls(eps, 1 << 20)
        assert 0 < proto.q < proto.p < 1
        assert math.isfinite(proto.variance(1000)) and proto.variance(1000) > 0
        assert np.all(np.isfinite(proto.estimate(np.zeros(1 << 20), n=1000)))


@pytest.mark.parametrize("cls", ALL)
def test_a_client_randomizes_a_single_value(cls):
    proto = cls(1.0, 16)
    one = proto.perturb(5, rng=3)
    assert isinstance(one, Reports) and one.single and len(one) == 1
    shape = {"GRR": (), "SUE": (16,), "OUE": (16,)}.get(cls.name)
    if shape is None:
        assert isinstance(one.data, tuple) and all(np.ndim(part) == 0 for part in one.data)
    else:
        assert np.shape(one.data) == shape
    assert proto.output_probability(one.data, 5) > 0
    assert proto.aggregate(one).sum() >= 0 and proto.aggregate(one).shape == (16,)
    assert np.array_equal(proto.aggregate(one), proto.aggregate(proto.perturb([5], rng=3)))  # the same coins
    assert proto.estimate(one).shape == (16,)
    assert proto.perturb(np.int64(5)).fit_for_release  # the secure source by default


def test_reports_of_the_wrong_shape_are_refused():
    cases = [
        (GRR(1.0, 8), np.zeros((5, 8), dtype=int)),
        (GRR(1.0, 8), np.array([0, 9])),
        (OUE(1.0, 8), np.zeros((5, 7), dtype=bool)),
        (SUE(1.0, 8), np.zeros(8, dtype=bool)),
        (OUE(1.0, 8), np.full((2, 8), 2)),
        (OLH(1.0, 8), np.zeros(8, dtype=int)),
        (OLH(1.0, 8), (np.zeros(3, dtype=int), np.ones(4, dtype=np.uint64), np.zeros(3, dtype=np.uint64))),
        (OLH(1.0, 8), (np.full(3, 4), np.ones(3, dtype=np.uint64), np.zeros(3, dtype=np.uint64))),
        (BLH(1.0, 8), (np.zeros(3, dtype=int), np.zeros(3, dtype=np.uint64), np.zeros(3, dtype=np.uint64))),
    ]
    for proto, reports in cases:
        with pytest.raises(veil.ParameterError) as exc:
            proto.aggregate(reports)
        _one_sentence(exc)
    with pytest.raises(veil.ParameterError, match="made by OUE, not OLH"):
        OLH(1.0, 8).aggregate(OUE(1.0, 8).perturb([1, 2], rng=0))
    with pytest.raises(veil.ParameterError):
        OUE(1.0, 8).estimate(np.zeros(7), n=10)


# ------------------------------------------------------------------------------- CLI

@pytest.fixture
def cli():
    app = typer.Typer()
    app.add_typer(ldp_app, name="ldp")
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["ldp", *args])


def test_cli_simulate_prints_mse_beside_variance(cli):
    result = cli("simulate", "--protocol", "grr,oue,olh,auto", "--epsilon", "1", "--domain", "32",
                 "--users", "20000", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [r["protocol"] for r in doc["protocols"]] == ["GRR", "OUE", "OLH", "OUE"]  # 3e + 2 < 32
    assert doc["fit_for_release"] is False and doc["users"] == 20000
    assert "true counts" in doc["not_fit_because"][0] and "NOT fit for release" in result.stderr
    for row in doc["protocols"]:
        assert 0.5 < row["mse_over_variance"] < 2.0
    text = cli("simulate", "--protocol", "all", "--epsilon", "2", "--domain", "16", "--users", "5000")
    assert text.exit_code == 0 and "MSE" in text.stdout and "BLH" in text.stdout


def test_cli_reads_a_column_and_names_values_outside_the_domain(cli, tmp_path):
    path = tmp_path / "users.csv"
    path.write_text("age,job\n" + "".join(f"{i % 40},{'abcde'[i % 5]}\n" for i in range(2000)))
    ok = cli("simulate", "--protocol", "olh", "--epsilon", "1", "--data", str(path), "--column", "job", "--json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["domain"] == 5
    assert any("from the data" in why for why in json.loads(ok.stdout)["not_fit_because"])
    secure = cli("simulate", "--protocol", "grr", "--epsilon", "1", "--domain", "5", "--data", str(path),
                 "--column", "job", "--secure", "--json")
    assert secure.exit_code == 0 and json.loads(secure.stdout)["fit_for_release"] is False  # never a release
    bad = cli("simulate", "--protocol", "grr", "--epsilon", "1", "--domain", "32", "--data", str(path),
              "--column", "age")
    assert bad.exit_code == 2 and "outside the declared domain" in bad.stderr and "32, 33" in bad.stderr
    small = cli("simulate", "--protocol", "grr", "--epsilon", "1", "--domain", "3", "--data", str(path),
                "--column", "job")
    assert small.exit_code == 2 and "d, e" in small.stderr


@pytest.mark.parametrize("args, words", [
    (("--epsilon", "0", "--domain", "8", "--users", "10"), "epsilon"),
    (("--epsilon", "1", "--domain", "1", "--users", "10"), "domain"),
    (("--epsilon", "1", "--domain", "8", "--users", "10", "--protocol", "xyz"), "unknown protocol"),
    (("--epsilon", "1", "--users", "10"), "--domain"),
    (("--epsilon", "1e-300", "--domain", "8", "--users", "10"), "epsilon"),
    (("--epsilon", "1", "--domain", "8", "--users", "10", "--seed", "-1"), "seed"),
    (("--epsilon", "60", "--domain", "2", "--users", "10", "--protocol", "grr"), "not be randomized"),
])
def test_cli_bad_input_exits_2_with_a_sentence(cli, args, words):
    result = cli("simulate", *args)
    assert result.exit_code == 2
    assert words in result.stderr and "Traceback" not in result.output
