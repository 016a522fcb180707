"""``veil dp stream`` and the temporal leakage shown by ``veil dp budget``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from veil.cli import app
from veil.dp.accountant import TemporalCorrelationAccountant, WindowAccountant
from veil.dp.stream import StreamSettings, release_stream
from veil.dp.temporal import TemporalCorrelation
from veil.ledger import Ledger

runner = CliRunner()
MATRIX = "0.8,0.1,0.1\n0.2,0.7,0.1\n0.3,0.3,0.4\n"


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def assert_one_sentence(result, *words) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


@pytest.fixture
def events(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    rows = [(t, f"u{u}", rng.choice(["home", "work", "gym"]), float(rng.integers(0, 200)))
            for t in range(40) for u in rng.choice(50, size=rng.poisson(12))]
    path = tmp_path / "events.csv"
    pd.DataFrame(rows, columns=["time", "user", "place", "amount"]).to_csv(path, index=False)
    return path


@pytest.fixture
def matrix(tmp_path: Path) -> Path:
    path = tmp_path / "p.csv"
    path.write_text(MATRIX, encoding="utf-8")
    return path


def test_stream_writes_releases_leakage_and_a_figure(tmp_path, events, matrix):
    out = tmp_path / "out"
    result = invoke("dp", "stream", events, "--epsilon", "0.5", "--start", "0", "--end", "39", "--out", out,
                    "--backward", matrix, "--forward", matrix, "--seed", "3")
    assert result.exit_code == 0, result.output
    assert "temporal privacy leakage under the correlations: at most" in result.stdout
    assert "NOT fit for release" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["leakage.csv", "privacy_loss.png", "releases.csv", "stream.json"]
    assert (out / "privacy_loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    releases = pd.read_csv(out / "releases.csv")
    assert list(releases["time"]) == list(range(40))
    leakage = pd.read_csv(out / "leakage.csv")
    expected = TemporalCorrelation(np.loadtxt(matrix, delimiter=","), np.loadtxt(matrix, delimiter=",")) \
        .leakage(np.full(40, 0.5))
    np.testing.assert_allclose(leakage["temporal"], expected.temporal)
    summary = json.loads((out / "stream.json").read_text())
    assert summary["fit_for_release"] is False and summary["level"] == "event"
    assert summary["temporal_correlation"]["supremum"] == pytest.approx(TemporalCorrelation(
        np.loadtxt(matrix, delimiter=","), np.loadtxt(matrix, delimiter=",")).supremum(0.5).window)


@pytest.mark.parametrize("extra, rows", [
    (["--query", "histogram", "--value-column", "place", "--categories", "home,work,gym", "--level", "w-event",
      "--w", "5", "--strategy", "ba"], 120),
    (["--query", "sum", "--value-column", "amount", "--bounds", "0,100", "--level", "user", "--max-events", "3"], 40),
])
def test_stream_histogram_and_sum(tmp_path, events, extra, rows):
    out = tmp_path / "out"
    result = invoke("dp", "stream", events, "--epsilon", "1", "--start", "0", "--end", "39", "--out", out,
                    "--seed", "1", "--json", *extra)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert len(pd.read_csv(out / "releases.csv")) == rows
    assert summary["guarantee"]["epsilon"] == 1.0 and len(summary["files"]) == 4


@pytest.mark.parametrize("query, extra", [
    ("histogram", {"categories": ("home", "work", "gym"), "value_column": "place"}),
    ("sum", {"bounds": (0, 100), "value_column": "amount"}),
])
def test_a_release_without_a_seed_draws_from_the_secure_sampler(events, query, extra):
    # the adaptive strategy draws one dissimilarity per step and a publication now and then
    s = StreamSettings(query=query, level="w-event", epsilon=1.0, start=0, end=39, w=4, strategy="bd", **extra)
    r = release_stream(events, s)
    summary = r.summary()
    assert r.release.fit_for_release and summary["fit_for_release"] is True
    assert summary["noise_source"].startswith("secure: OpenDP")
    assert int(r.release.window_units.max()) * r.release.epsilon_unit <= 1

def test_each_level_bounds_what_a_user_contributes(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("time,user\n" + "".join(f"{t},a\n{t},a\n" for t in range(10)), encoding="utf-8")

    def counts(level: str, **extra) -> np.ndarray:
        # an ε so large that the noise is negligible: the bounded counts show through
        s = StreamSettings(query="count", level=level, epsilon=1e6, start=0, end=9, **extra)
        return release_stream(path, s, noise=1).release.values

    np.testing.assert_allclose(counts("event"), np.full(10, 2), atol=1e-3)
    np.testing.assert_allclose(counts("w-event", w=2), np.ones(10), atol=1e-3)  # one event per user per step
    np.testing.assert_allclose(counts("user", max_events=4), [2, 2] + [0] * 8, atol=1e-3)  # the first m events


@pytest.mark.parametrize("body, options, words", [
    ("time,user\n1,a\n3,b\n2,a\n", [], ["out of time order", "row 3 has time 2 after time 3"]),
    ("time,user\n1,a\nx,b\n", [], ["row 2", "not a whole number"]),
    ("time,user\n1,a\n", ["--level", "w-event", "--w", "0"], ["w must be a whole number >= 1"]),
    ("time,user\n1,a\n", ["--level", "w-event"], ["needs the window length w"]),
    ("time,user\n1,a\n", ["--backward", "{bad}"], ["row 1 of the backward transition matrix", "sums to 0.9"]),
    ("time,user\n1,a\n", ["--query", "histogram"], ["public categories"]),
    ("time,user\n1,a\n", ["--end", "-1"], ["ends (end = -1) before it starts"]),
])
def test_stream_bad_input_is_one_sentence_and_writes_nothing(tmp_path, body, options, words):
    path = tmp_path / "e.csv"
    path.write_text(body, encoding="utf-8")
    bad = tmp_path / "bad.csv"
    bad.write_text("0.5,0.4\n0.5,0.5\n", encoding="utf-8")
    options = [str(bad) if o == "{bad}" else o for o in options]
    base = ["--start", "0", "--end", "5"] if "--end" not in options else ["--start", "0"]
    out = tmp_path / "out"
    assert_one_sentence(invoke("dp", "stream", path, "--epsilon", "1", "--out", out, *base, *options), *words)
    assert not out.exists()


def test_stream_refuses_a_negative_epsilon(tmp_path, events):
    assert_one_sentence(invoke("dp", "stream", events, "--epsilon", "-0.5", "--start", "0", "--end", "3",
                               "--out", tmp_path / "o"), "epsilon must be a positive")


def test_budget_shows_the_temporal_leakage_of_a_window_budget(tmp_path, matrix):
    path = tmp_path / "b.db"
    ledger, _ = Ledger.init(path)
    with ledger.open_budget("stream", create=WindowAccountant(3, 1.0, dataset_id="stream")) as acc:
        for step in range(6):
            acc.charge(step, 0.25)
    result = invoke("dp", "budget", path, "--backward", matrix, "--forward", matrix, "--w", "3")
    assert result.exit_code == 0, result.output
    p = np.loadtxt(matrix, delimiter=",")
    expected = TemporalCorrelation(p, p).leakage([0.25] * 6, 3).maximum
    assert f"{expected:.6g}" in result.stdout and "window 3" in result.stdout
    doc = json.loads(invoke("dp", "budget", path, "--backward", matrix, "--json").stdout)
    assert doc["temporal_leakage"]["maximum"] == pytest.approx(TemporalCorrelation(p, None).leakage([0.25] * 6).maximum)


def test_budget_shows_a_temporal_correlation_budget(tmp_path, matrix):
    path = tmp_path / "b.db"
    p = np.loadtxt(matrix, delimiter=",")
    ledger, _ = Ledger.init(path)
    with ledger.open_budget("s", create=TemporalCorrelationAccountant(2.0, dataset_id="s", backward=p)) as acc:
        acc.charge(0, 0.5)
        acc.charge(1, 0.5)
    result = invoke("dp", "budget", path)
    assert result.exit_code == 0, result.output
    assert "temporal correlation (Cao et al.)" in result.stdout and "backward 3×3" in result.stdout
    assert json.loads(invoke("dp", "budget", path, "--json").stdout)["composition"] == "temporal_correlation"


def test_budget_leakage_needs_steps(tmp_path, matrix):
    from veil.dp.accountant import Budget

    path = tmp_path / "b.db"
    ledger, _ = Ledger.init(path)
    with ledger.open_budget("s", create=Budget(1.0)) as acc:
        acc.charge(0.1, label="q")
    assert_one_sentence(invoke("dp", "budget", path, "--backward", matrix), "carry no time steps")
