"""``veil dp stream`` and the temporal leakage shown by ``veil dp budget``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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
    ("time,user\n1,a\n3,b\n2,a\n", ["--strict"], ["out of time order", "row 3 has time 2 after time 3"]),
    ("time,user\n1,a\nx,b\n", ["--strict"], ["row 2", "not a whole number"]),
    ("time,user\n1,a\n2\n", ["--strict"], ["line 3", "has 1 fields but the header has 2"]),
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


MALFORMED = [b"unknown,u1,home", b",u2,home", b"2.5,u3,work", b"1e400,u4,home", b"3,u5", b"3,u6,home,extra",
             b"2,u\xff,home", b'3,"u7,home']


def stream_files(tmp_path: Path, clean: list[bytes], extra: list[bytes]) -> tuple[Path, Path]:
    """The same events twice: in time order and well formed, then shuffled with malformed lines among them."""
    tidy, messy = tmp_path / "tidy.csv", tmp_path / "messy.csv"
    tidy.write_bytes(b"time,user,place\n" + b"".join(line + b"\n" for line in clean))
    lines = list(reversed(clean)) + extra
    np.random.default_rng(5).shuffle(lines)
    messy.write_bytes(b"time,user,place\n" + b"".join(line + b"\n" for line in lines))
    return tidy, messy


@pytest.mark.parametrize("query", [["--query", "count"],
                                   ["--query", "histogram", "--value-column", "place", "--categories", "home,work"]])
@pytest.mark.parametrize("level", [["--level", "event"], ["--level", "w-event", "--w", "2"],
                                   ["--level", "user", "--max-events", "2"]])
def test_malformed_events_are_left_out_by_a_public_rule_and_never_named(tmp_path, query, level):
    clean = [f"{t},u{u},{'home' if (t + u) % 3 else 'work'}".encode() for t in range(6) for u in range(t % 4 + 1)]
    tidy, messy = stream_files(tmp_path, clean, MALFORMED)
    runs = {}
    for name, path in (("tidy", tidy), ("messy", messy)):
        out = tmp_path / name
        result = invoke("dp", "stream", path, "--epsilon", "1", "--start", "0", "--end", "5", "--out", out,
                        "--seed", "4", *query, *level)
        assert result.exit_code == 0, result.output
        runs[name] = (result, out)
    (tidy_result, tidy_out), (messy_result, messy_out) = runs["tidy"], runs["messy"]
    # The same noisy releases as the tidy file's (same seed): each event counted at its own step,
    # the malformed ones left out; and nothing that names a row or a value the analyst cannot see.
    for name in ("releases.csv", "leakage.csv", "stream.json"):
        assert (messy_out / name).read_text() == (tidy_out / name).read_text()
    assert messy_result.stdout.replace("messy", "tidy") == tidy_result.stdout
    assert messy_result.stderr == tidy_result.stderr
    for secret in ("unknown", "2.5", "u7", "extra", "row", "line", "dropped", "left out"):
        assert secret not in messy_result.output


times = st.one_of(st.integers(-2, 8).map(str), st.sampled_from(["", "unknown", "2.5", "nan", "-inf", "1e300"]))
event_lists = st.lists(st.tuples(times, st.sampled_from(["a", "b", "c", ""])), max_size=25)


@settings(max_examples=150, deadline=None)
@given(event_lists, st.tuples(times, st.sampled_from(["a", "b", "z"])), st.integers(0, 25))
def test_one_event_more_changes_each_level_by_at_most_its_sensitivity(events, extra, where):
    # The rule for malformed and out-of-order events looks at each event alone, so one added
    # event (anywhere in the file, with any time) moves the counts by at most what the level
    # allows: 1 event at event level, one event per step at w-event level, m events at user level.
    from veil.dp.queries import _Columns
    from veil.dp.stream import _bounded, _events

    def counts(rows, level, **extra_settings) -> np.ndarray:
        s = StreamSettings(query="count", level=level, epsilon=1.0, start=0, end=5, **extra_settings)
        frame = pd.DataFrame(rows, columns=["time", "user"], dtype=object)
        step, user, _ = _events(_Columns(frame), s, strict=False)
        return np.bincount(step[_bounded(step, user, s)], minlength=s.steps)

    more = events[:where] + [extra] + events[where:]
    for level, options, bound in (("event", {}, 1), ("w-event", {"w": 2}, 2), ("user", {"max_events": 2}, 2)):
        change = np.abs(counts(more, level, **options) - counts(events, level, **options))
        assert change.sum() <= bound


def test_strict_names_the_malformed_event_safely(tmp_path):
    path = tmp_path / "e.csv"
    path.write_bytes(b"time,user\n1,a\n\x1b[2J" + b"9" * 5000 + b".5,b\n")
    result = invoke("dp", "stream", path, "--epsilon", "1", "--start", "0", "--end", "5", "--out", tmp_path / "o",
                    "--strict")
    assert_one_sentence(result, "row 2 of the events has time", "not a whole number")
    assert "\x1b" not in result.stderr and len(result.stderr) < 400


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
