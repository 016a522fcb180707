"""A stream of events released over time at a chosen protection level, with its privacy-loss report.

``veil dp stream`` without the terminal. The input is a table of events, one row each, with a
time step, a user and a value. What the release relies on is public and given by the caller,
never read from the data: the horizon of time steps [start, end] (events outside it are left
out), the histogram's categories (other values are left out), the sum's bounds (values are
clamped to them; cells that are not numbers are left out), w and m.

Malformed events
----------------
One malformed event never decides whether anything is released. By a public rule applied to each
event on its own:

* an event whose time is not a whole number (empty, ``unknown``, ``2.5``) is on no step of the
  public time grid and is left out, as an event outside the horizon is;
* an event out of time order counts at its own time step: the release reads the events in time
  order (a stable sort: events at the same step keep the order of the rows), so the order of
  the rows never matters except between events at the same step;
* a CSV line that is not a well-formed record is left out (:mod:`veil.data.lenient`).

Each is a fixed transformation of one event that never looks at another, so adding or removing
one event changes what is counted by that event alone, and every level's sensitivity holds.
(Dropping an event that comes *after* a later one in the file would not: one added event with a
late time, put first, would drop every event after it.) How many events were left out is
reported nowhere. ``strict=True`` (``--strict``) refuses instead, at the first such event,
naming its row: for a curator checking their file.

Per step, the query counts the events (``count``), counts them per category of the value
(``histogram``, a counter per bin) or sums their clamped values (``sum``). Each level bounds what
one person can contribute before anything is computed, taking events in time order:

* ``event``: nothing to bound; neighbouring streams differ by one event;
* ``w-event``: each user's first event at each step is kept (one event per user per step);
* ``user``: each user's first m events in all are kept (``max_events``).

Events whose user cell is empty all count as one unknown user, which only bounds them more.
The release is :func:`veil.dp.continual.event_level_counts` and its siblings (one noisy value per
step, or per step and bin) with the privacy each step spent; given backward and forward
transition matrices, the report adds Cao et al.'s temporal privacy leakage of every step and
window (:mod:`veil.dp.temporal`). At user level every event of a user is protected together, so
the correlation between them adds nothing and no leakage is computed.

Nothing the output shows depends on the data beyond the noisy values: not the number of events
kept or left out, not which categories occur.
"""

from __future__ import annotations

import io
import json
import math
import numbers
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veil.dp.continual import (STRATEGIES, ContinualRelease, binary_tree_counts, continual_histogram, continual_sum,
                               event_level_counts, w_event_counts)
from veil.dp.noise import NoiseSource
from veil.dp.queries import _Columns
from veil.dp.temporal import Leakage, Supremum, TemporalCorrelation, check_transition_matrix
from veil.errors import DataError, ParameterError
from veil.inputs import read_text
from veil.output import write_files

__all__ = ["FILES", "LEVELS", "QUERIES", "StreamRelease", "StreamSettings", "read_transition_matrix",
           "release_stream"]

LEVELS = ("event", "user", "w-event")
QUERIES = ("count", "histogram", "sum")
#: what :meth:`StreamRelease.write` puts in its folder
FILES = ("releases.csv", "leakage.csv", "privacy_loss.png", "stream.json")


@dataclass(frozen=True)
class StreamSettings:
    """What a stream release asks for; all of it public.

    Args:
        query: ``"count"``, ``"histogram"`` or ``"sum"``.
        level: ``"event"``, ``"user"`` or ``"w-event"``.
        epsilon: ε at that level (per step, per user, or per window of w steps).
        start: the first time step of the horizon.
        end: the last time step of the horizon (end >= start).
        w: the window length (w-event level; at event level the window the report sums over).
        strategy: ``"uniform"``, ``"bd"`` or ``"ba"`` (w-event level).
        max_events: m, the events kept per user (user level).
        categories: the histogram's public categories.
        bounds: the sum's public (lo, hi).
        time_column: the column of time steps.
        user_column: the column of user ids.
        value_column: the column of values (histogram and sum).

    Raises:
        ParameterError: an unknown query, level or strategy; ε <= 0; end < start; w < 1; m < 1;
            a histogram without categories or a sum without bounds (lo < hi).
    """

    query: str
    level: str
    epsilon: float
    start: int
    end: int
    w: int | None = None
    strategy: str = "uniform"
    max_events: int = 1
    categories: tuple | None = None
    bounds: tuple | None = None
    time_column: str = "time"
    user_column: str = "user"
    value_column: str = "value"

    def __post_init__(self):
        if self.query not in QUERIES:
            raise ParameterError(f"the query must be 'count', 'histogram' or 'sum', got {self.query!r}.")
        if self.level not in LEVELS:
            raise ParameterError(f"the level must be 'event', 'user' or 'w-event', got {self.level!r}.")
        if self.strategy not in STRATEGIES:
            raise ParameterError(f"the strategy must be 'uniform', 'bd' or 'ba', got {self.strategy!r}.")
        eps = float(self.epsilon)
        if not (math.isfinite(eps) and eps > 0):
            raise ParameterError(f"epsilon must be a positive finite number, got {self.epsilon!r}.")
        for name in ("start", "end"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ParameterError(f"{name} must be a whole-number time step, got {value!r}.")
        if self.end < self.start:
            raise ParameterError(f"the horizon ends (end = {self.end}) before it starts (start = {self.start}).")
        if self.end - self.start >= 10 ** 7:
            raise ParameterError("the horizon holds more than 10,000,000 time steps; choose a coarser time step.")
        if self.w is not None and (isinstance(self.w, bool) or not isinstance(self.w, numbers.Integral)
                                   or self.w < 1):
            raise ParameterError(f"the window length w must be a whole number >= 1, got {self.w!r}.")
        if self.level == "w-event" and self.w is None:
            raise ParameterError("w-event level needs the window length w.")
        if self.strategy != "uniform" and self.level != "w-event":
            raise ParameterError("a strategy applies to w-event level only; leave it out.")
        if isinstance(self.max_events, bool) or not isinstance(self.max_events, numbers.Integral) \
                or self.max_events < 1:
            raise ParameterError(f"max_events must be a whole number >= 1, got {self.max_events!r}.")
        if self.query == "histogram" and not self.categories:
            raise ParameterError("a histogram needs its public categories; they are never read from the data.")
        if self.query == "sum":
            if self.bounds is None or len(self.bounds) != 2 or not float(self.bounds[0]) < float(self.bounds[1]):
                raise ParameterError("a sum needs public bounds lo < hi to clamp the values to; they are never read "
                                     "from the data.")

    @property
    def steps(self) -> int:
        return int(self.end - self.start + 1)


@dataclass(frozen=True)
class StreamRelease:
    """A released stream and its privacy-loss report.

    Attributes:
        settings: what was asked.
        release: the noisy series with the privacy each step spent (:class:`ContinualRelease`).
        correlation: the transition matrices the leakage was computed with, or ``None``.
        leakage: BPL, FPL, TPL and window leakage per step, or ``None`` (no matrices, or user level).
        supremum: the leakage's supremum when every step spent the same ε, else ``None``.
    """

    settings: StreamSettings
    release: ContinualRelease
    correlation: TemporalCorrelation | None
    leakage: Leakage | None
    supremum: Supremum | None

    @property
    def times(self) -> np.ndarray:
        return np.arange(self.settings.start, self.settings.end + 1)

    def releases_frame(self) -> pd.DataFrame:
        """The released values: one row per step (per step and category for a histogram)."""
        frame = self.release.to_frame().drop(columns=["epsilon_cumulative", "epsilon_window"])
        frame.insert(0, "time", frame.pop("step") + self.settings.start - 1)
        return frame

    def leakage_frame(self) -> pd.DataFrame:
        """The privacy spent per step and, with matrices, the temporal leakage of every step and window."""
        r = self.release
        frame = pd.DataFrame({"time": self.times, "epsilon": r.epsilon_step, "sequential": r.epsilon_cumulative,
                              f"window_spend_{r.w}": r.epsilon_window})
        if self.leakage is not None:
            lk = self.leakage
            frame["backward"], frame["forward"], frame["temporal"] = lk.backward, lk.forward, lk.temporal
            frame[f"window_leakage_{lk.w}"] = lk.window
        return frame

    def summary(self) -> dict:
        """Settings, guarantee and leakage as a JSON-ready dict (nothing about the data but the noisy values)."""
        s, r = self.settings, self.release
        doc = {"query": s.query, "level": s.level, "epsilon": float(s.epsilon), "horizon": [s.start, s.end],
               "w": s.w, "strategy": s.strategy if s.level == "w-event" else None,
               "max_events": s.max_events if s.level == "user" else None,
               "categories": list(s.categories) if s.categories else None,
               "bounds": list(map(float, s.bounds)) if s.bounds is not None else None,
               "guarantee": r.guarantee, "fit_for_release": r.fit_for_release, "noise_source": r.noise_source,
               "epsilon_spent_max_window": float(r.epsilon_window.max()),
               "temporal_correlation": None}
        if self.correlation is not None:
            tc = {"backward": None if self.correlation.backward is None else self.correlation.backward.tolist(),
                  "forward": None if self.correlation.forward is None else self.correlation.forward.tolist()}
            if self.leakage is None:
                tc["note"] = ("user level protects every event of a user together; the correlation between them adds "
                              "nothing")
            else:
                worst = int(np.argmax(self.leakage.window))
                tc.update({"w": self.leakage.w, "max_leakage": self.leakage.maximum,
                           "max_leakage_time": int(self.times[worst]), "max_temporal": float(self.leakage.temporal.max())})
                if self.supremum is not None:
                    tc["supremum"] = self.supremum.window if self.supremum.exists else None
            doc["temporal_correlation"] = tc
        return _json_ready(doc)

    def figure_png(self) -> bytes:
        """The privacy loss over time as a PNG (matplotlib, Agg backend)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        s, r, times = self.settings, self.release, self.times
        fig = Figure(figsize=(10, 5), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        ax.step(times, r.epsilon_step, where="mid", color="grey", label="ε spent at the step")
        ax.plot(times, r.epsilon_cumulative, color="black", linestyle=":", label="sequential composition (Σ ε)")
        if r.w > 1:
            ax.plot(times, r.epsilon_window, color="tab:purple", label=f"ε spent in the last {r.w} steps")
        if self.leakage is not None:
            lk = self.leakage
            ax.plot(times, lk.backward, color="tab:blue", label="backward privacy loss (BPL)")
            ax.plot(times, lk.forward, color="tab:orange", label="forward privacy loss (FPL)")
            ax.plot(times, lk.temporal, color="tab:red", linewidth=2, label="temporal privacy leakage (TPL)")
            if lk.w > 1:
                ax.plot(times, lk.window, color="tab:green", label=f"leakage of {lk.w} consecutive steps")
            if self.supremum is not None and self.supremum.exists:
                ax.axhline(self.supremum.window, color="tab:red", linestyle="--", linewidth=1,
                           label="supremum as the stream goes on")
        top = max(float(np.max(r.epsilon_window)), float(self.leakage.maximum) if self.leakage is not None else 0.0)
        ax.set_ylim(0, top * 1.6 if top > 0 else 1)  # the cumulative sum may grow far beyond; keep the rest readable
        ax.set_xlabel("time step")
        ax.set_ylabel("privacy loss (ε)")
        ax.set_title(f"Privacy loss over time: {s.query} at {s.level} level, ε = {float(s.epsilon):g}"
                     + (f", w = {s.w}" if s.w else ""))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        return buffer.getvalue()

    def write(self, folder: str | Path, *, reads=()) -> list[Path]:
        """Write ``releases.csv``, ``leakage.csv``, ``privacy_loss.png`` and ``stream.json`` into
        ``folder`` (made when missing), all of them or none.

        Args:
            folder: the output folder.
            reads: the files the run read, which no output may replace.

        Raises:
            DataError: a file cannot be written; nothing is left behind.
            ParameterError: an output would replace a file the run read.
        """
        folder = Path(folder)
        if folder.exists() and not folder.is_dir():
            raise DataError(f"{str(folder)!r} is a file; give a folder for the stream's outputs.")
        files = {folder / FILES[0]: self.releases_frame().to_csv(index=False),
                 folder / FILES[1]: self.leakage_frame().to_csv(index=False),
                 folder / FILES[2]: self.figure_png(),
                 folder / FILES[3]: json.dumps(self.summary(), indent=2, ensure_ascii=False) + "\n"}
        return write_files(files, reads=reads, make_folders=True)


def _json_ready(value):
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.ndarray):
        return _json_ready(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


# --------------------------------------------------------------------------- reading

def read_transition_matrix(path: str | Path, name: str = "transition matrix") -> np.ndarray:
    """A transition matrix from a text file: one row per line, numbers separated by commas,
    semicolons or spaces, no header.

    Args:
        path: the file.
        name: how messages call it.

    Raises:
        DataError: the file cannot be read.
        ParameterError: a cell that is not a number, rows of different lengths, or a matrix that
            is not square and row-stochastic (naming the row).
    """
    where = f"the {name} file {str(path)!r}"
    text = read_text(path, f"the {name} file", encoding="utf-8-sig")  # a regular file, of a document's size
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        cells = [c for c in re.split(r"[,;\s]+", line.strip()) if c]
        if not cells:
            continue
        try:
            rows.append([float(c) for c in cells])
        except ValueError:
            raise ParameterError(f"line {number} of {where} holds something that is not a number.") from None
    if not rows or len({len(r) for r in rows}) != 1:
        raise ParameterError(f"{where} must hold n rows of n numbers each.")
    return check_transition_matrix(rows, f"{name} in {str(path)!r}")


def _events(cols: _Columns, s: StreamSettings, strict: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step index (0 … T − 1), user code and row of every event on a step of the horizon, in time
    order (see the module notes); with ``strict``, refusing a time that is not a whole number or
    out of order."""
    column, steps = cols.numbers(s.time_column)
    times = steps[column.codes]
    whole = np.isfinite(times) & (times == np.round(times))
    if strict:
        _refuse_malformed(column, times, whole, s)
    users = cols.column(s.user_column).codes.astype(np.int64)
    rows = np.nonzero(whole & (times >= s.start) & (times <= s.end))[0]
    rows = rows[np.argsort(times[rows], kind="stable")]
    return (times[rows] - s.start).astype(np.int64), users[rows], rows


def _refuse_malformed(column, times: np.ndarray, whole: np.ndarray, s: StreamSettings) -> None:
    """``strict``: refuse the first event whose time is not a whole number, then the first out of order.

    Raises:
        ParameterError: naming the row (the curator's own file) and its time, shown safely.
    """
    if not whole.all():
        row = int(np.argmax(~whole))
        raise ParameterError(f"row {row + 1} of the events has time {_shown(column.labels[column.codes[row]])}, not a "
                             f"whole number; the column {_shown(s.time_column)} must hold time steps (or leave out "
                             "--strict to leave such events out).")
    back = np.diff(times) < 0
    if back.any():
        i = int(np.argmax(back))
        raise ParameterError(f"the events are out of time order: row {i + 2} has time {times[i + 1]:g} after time "
                             f"{times[i]:g} in row {i + 1}; sort them by time (or leave out --strict to count each "
                             "event at its own time).")


def _shown(value: Any, limit: int = 40) -> str:
    """A cell quoted for a message: control and other unprintable characters escaped, at most
    ``limit`` characters of it (a local helper, until messages share one)."""
    text = str(value)
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


def _bounded(step: np.ndarray, user: np.ndarray, s: StreamSettings) -> np.ndarray:
    """The events each level keeps (positions into the events, in time order)."""
    if s.level == "event":
        return np.arange(step.shape[0])
    if s.level == "w-event":  # a user's first event at each step
        _, first = np.unique(user * s.steps + step, return_index=True)
        return np.sort(first)
    order = np.argsort(user, kind="stable")  # user level: a user's first m events
    sorted_users = user[order]
    starts = np.concatenate([[0], np.nonzero(np.diff(sorted_users))[0] + 1])
    rank = np.arange(order.shape[0]) - np.repeat(starts, np.diff(np.concatenate([starts, [order.shape[0]]])))
    return np.sort(order[rank < s.max_events])


def _bins(cols: _Columns, s: StreamSettings) -> np.ndarray:
    """The bin of every category of the value column (−1: not one of the public categories)."""
    column = cols.column(s.value_column)
    wanted = [str(c).strip() for c in s.categories]
    numeric = pd.to_numeric(pd.Series(wanted, dtype=object), errors="coerce").to_numpy(dtype=float)
    labels = np.asarray(column.labels, dtype=object)
    label_numbers = pd.to_numeric(pd.Series(labels, dtype=object), errors="coerce").to_numpy(dtype=float)
    out = np.full(labels.shape[0], -1, dtype=np.int64)
    for b, (text, number) in enumerate(zip(wanted, numeric)):  # a loop over the public categories
        hit = (labels == text) | (np.isfinite(number) & (label_numbers == number))
        out[hit & (out < 0)] = b
    return out[column.codes]


def release_stream(data: Any, settings: StreamSettings, *, correlation: TemporalCorrelation | None = None,
                   delimiter: str | None = None, noise: NoiseSource | np.random.Generator | int | None = None,
                   strict: bool = False) -> StreamRelease:
    """Release a stream of events at the settings' level, with its privacy-loss report.

    Args:
        data: the events: a CSV or Parquet path, or a pandas or polars DataFrame, one row per event.
        settings: the query, level, ε, horizon and the other public parameters.
        correlation: backward and forward transition matrices for the temporal leakage, or ``None``.
        delimiter: the CSV delimiter (default: sniffed).
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).
        strict: refuse the first malformed event (a time that is not a whole number, an event out of
            time order, a malformed CSV line) instead of the public rule of the module notes.

    Raises:
        DataError: the events cannot be read (with ``strict``, a malformed CSV line).
        ColumnError: a column the settings name does not exist.
        ParameterError: bad settings; with ``strict``, a time that is not a whole number or events
            out of time order.
    """
    s = settings
    cols = _Columns(data, delimiter, strict=strict)
    step, user, rows = _events(cols, s, strict)
    keep = _bounded(step, user, s)
    step, rows = step[keep], rows[keep]
    T = s.steps
    common = {"alpha": 0.05, "noise": noise}
    if s.query == "count":
        counts = np.bincount(step, minlength=T)
        if s.level == "event":
            release = event_level_counts(counts, s.epsilon, w=s.w or 1, **common)
        elif s.level == "user":
            release = binary_tree_counts(counts, s.epsilon, max_contribution=s.max_events, output="count", **common)
        else:
            release = w_event_counts(counts, s.epsilon, s.w, strategy=s.strategy, **common)
    elif s.query == "histogram":
        bins = _bins(cols, s)[rows]
        inside = bins >= 0
        d = len(s.categories)
        counts = np.bincount(step[inside] * d + bins[inside], minlength=T * d).reshape(T, d)
        release = continual_histogram(counts, s.epsilon, level=s.level, bins=tuple(str(c) for c in s.categories),
                                      w=s.w, strategy=s.strategy, max_contribution=s.max_events, **common)
    else:
        lo, hi = float(s.bounds[0]), float(s.bounds[1])
        column, values = cols.numbers(s.value_column)
        v = values[column.codes][rows]
        inside = np.isfinite(v)
        sums = np.bincount(step[inside], weights=np.clip(v[inside], lo, hi), minlength=T)
        release = continual_sum(sums, s.epsilon, bound=max(abs(lo), abs(hi)), level=s.level, w=s.w,
                                strategy=s.strategy, max_contribution=s.max_events, **common)
    leakage = supremum = None
    if correlation is not None and s.level != "user":
        w = s.w or 1
        leakage = correlation.leakage(release.epsilon_step, w)
        per_step = release.step_units
        if np.all(per_step == per_step[0]) and per_step[0] > 0:  # the same ε at every step
            supremum = correlation.supremum(float(release.epsilon_step[0]), w)
    return StreamRelease(s, release, correlation, leakage, supremum)
