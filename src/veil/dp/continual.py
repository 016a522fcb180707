"""Continual release of counts, histograms and sums: one noisy value (or row) per time step, at
event, user or w-event level.

A *count stream* is a sequence ``c_1, ..., c_T`` of non-negative whole numbers (how many events
happened at each time step). Three protection levels (Dwork et al. 2010; Kellaris et al. 2014),
three functions, one result type (:class:`ContinualRelease`):

:func:`event_level_counts` — event level.
    Neighbouring streams differ by **one event**: one step's count differs by 1. Each step's count
    gets Laplace noise of scale 1/ε, so each step's release is ε-DP and, since an event touches one
    step only, the whole series protects any single event with ε. Per-step variance 2/ε².

:func:`binary_tree_counts` — user level over a fixed horizon T (the binary-tree / counter
    mechanism of Dwork, Naor, Pitassi & Rothblum 2010 and Chan, Shi & Song 2011).
    Neighbouring streams differ by **one user's contribution**: ``sum_t |c_t - c'_t| <= m``
    (``max_contribution`` = m, default 1: every user adds at most one event to the whole stream,
    the classic setting; with m events a user may appear at up to m steps, at most m in all).
    The mechanism keeps the dyadic tree over steps 1..T: level j holds the sums of the complete
    blocks ``[k·2^j + 1, (k+1)·2^j]`` that end by T, for j = 0 .. L−1 with L = ⌊log2 T⌋ + 1
    (= log2(T) + 1 when T is a power of two). One unit of change at one step moves exactly one
    node per level by 1, so the tree's L1 sensitivity is m·L and every node gets Laplace noise of
    scale b = m·L/ε: the whole released tree, and everything computed from it, is ε-DP for that
    neighbouring relation. Released series (post-processing, free):

    * ``output="running"`` (default): the running count S_t = c_1 + ... + c_t, the sum of the
      k(t) = popcount(t) nodes of the dyadic decomposition of [1, t]; variance **2·b²·k(t)**
      ≤ 2·(mL/ε)²·L, i.e. error O(m·log^1.5 T / ε), polylogarithmic in T.
    * ``output="count"``: the per-step counts, read from the leaves (level 0); variance 2·b².
      (These are not the differences of the running counts; both come from the same tree.)

    The node ending at step t is available at step t, so the values at step t depend only on
    counts up to t: the batch computed here is exactly what the online mechanism would publish.

:func:`w_event_counts` — w-event level (Kellaris, Papadopoulos, Xiao & Papadias, VLDB 2014).
    Neighbouring streams differ by one user's data inside **any window of w consecutive steps**,
    changing each step's count in the window by at most 1. The *uniform* strategy gives every
    step ε/w: Laplace noise of scale w/ε per count, so any w consecutive steps spend exactly ε.
    The adaptive strategies of the same paper, budget distribution (``strategy="bd"``) and budget
    absorption (``"ba"``), spend the budget only at steps where the data moved
    (:mod:`veil.dp.wevent`). Every step is charged to a
    :class:`~veil.dp.window_accountant.WindowAccountant` before its noise is drawn; a release that would
    overspend a window is refused and charges nothing.

:func:`continual_histogram` and :func:`continual_sum` — the same three levels for a histogram (a
    counter per public bin: T × d counts, one event adds 1 to one bin) and for the sum of values
    clamped to a public bound Δ (one event changes one step's sum by at most Δ, so every noise
    scale is Δ times a count's).

Privacy spent, per step (fields of the result; all exact multiples of ``epsilon_unit``):

* ``epsilon_step[t]`` — the ε the releases at step t cost: ε (event level), ε/w (w-event,
  uniform), the step's dissimilarity and publication budgets (w-event, adaptive), and for the tree ε/L at the steps where a new tree level first releases a node (t = 1, 2, 4, ...)
  and 0 otherwise (within a level the nodes cover disjoint steps, so a user's m units cost at most
  ε/L per level; levels compose sequentially);
* ``epsilon_cumulative[t]`` — the sum up to t (sequential composition of everything released so
  far: for the tree the user-level loss so far, reaching ε at t = 2^(L−1); for event and w-event
  level the loss of a user who is present at every step);
* ``epsilon_window[t]`` — the sum over the window of ``w`` steps ending at t (``w`` = 1 for event
  level unless given, ``w`` = T for the tree, the w of w-event level).

Accuracy, per step: ``variance``, ``std`` and a (1 − alpha) confidence interval ``low`` /
``high`` around the released value, computed from the **exact** distribution of a sum of k
i.i.d. Laplace variables (:func:`laplace_sum_half_width`), not a normal approximation. A step
of an adaptive strategy that repeats an earlier publication carries that publication's noise;
its interval is for the true value at that publication (how far the data moved since is what the
strategy judged too small to pay for).

Noise comes from :mod:`veil.dp.noise`: ``noise=None`` uses the secure OpenDP-backed source and the
result says ``fit_for_release=True``; an integer seed or a ``numpy.random.Generator`` runs a
reproducible experiment that is labelled not fit for release.

Not implemented: Honaker's variance-optimal tree estimator, discrete (geometric) noise for the tree.
"""

from __future__ import annotations

import copy
import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from veil.dp.accountant import Accountant
from veil.dp.budget import BudgetExceededError
from veil.dp.exact import exact, show
from veil.dp.mechanisms import _check_alpha, _check_epsilon, check_scale, release_label
from veil.dp.noise import NoiseSource, as_noise_source
from veil.dp.wevent import budget_absorption, budget_distribution
from veil.dp.window_accountant import WindowAccountant
from veil.errors import ParameterError

__all__ = ["ContinualRelease", "LEVELS", "STRATEGIES", "binary_tree_counts", "continual_histogram", "continual_sum",
           "event_level_counts", "laplace_sum_half_width", "tree_levels", "w_event_counts"]

NoiseArg = NoiseSource | np.random.Generator | int | None


# ---------------------------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ContinualRelease:
    """A noisy series released at one protection level, with its per-step privacy and accuracy.

    Attributes:
        values: the noisy series: a float array of length T (per-step or running counts or sums),
            or of shape (T, d) for a histogram (one column per bin).
        series: ``"count"``, ``"running count"``, ``"histogram"``, ``"running histogram"``,
            ``"sum"`` or ``"running sum"``.
        level: ``"event"``, ``"user"`` or ``"w-event"``.
        epsilon: the ε guaranteed at that level.
        w: the window the ``epsilon_window`` column sums over.
        epsilon_unit: the exact quantum every ε column is a multiple of.
        step_units, cumulative_units, window_units: the ε columns as exact integer multiples of
            ``epsilon_unit`` (so ``window_units.max() * epsilon_unit <= epsilon`` is checked exactly).
        epsilon_step, epsilon_cumulative, epsilon_window: the same as floats (each the correctly
            rounded value of the exact one).
        variance: the noise variance per step (the same for every bin); ``std`` its square root.
        n_terms: how many i.i.d. Laplace draws of scale ``scale`` make up each step's noise.
        scale: the Laplace scale of every draw; an array of one scale per step for the adaptive
            w-event strategies, whose steps repeat the last publication (NaN before the first).
        alpha, low, high: the (1 − alpha) confidence interval for the true value at each step (for
            a step that repeats an earlier publication: for the true value at that publication).
        guarantee: the privacy model, its parameters and a one-sentence statement.
        fit_for_release, noise_source: where the noise came from.
        details: mechanism-specific extras (for the tree: the noisy nodes per level; for the
            adaptive strategies: which steps published).
        bins: the names of a histogram's bins (the columns of ``values``), else ``None``.
    """

    values: np.ndarray
    series: str
    level: str
    epsilon: float
    w: int
    epsilon_unit: Fraction
    step_units: np.ndarray
    cumulative_units: np.ndarray
    window_units: np.ndarray
    epsilon_step: np.ndarray
    epsilon_cumulative: np.ndarray
    epsilon_window: np.ndarray
    variance: np.ndarray
    n_terms: np.ndarray
    scale: float
    alpha: float
    low: np.ndarray
    high: np.ndarray
    guarantee: dict
    fit_for_release: bool
    noise_source: str
    details: dict = field(default_factory=dict)
    bins: tuple | None = None

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(self.variance)

    @property
    def T(self) -> int:
        return int(self.values.shape[0])

    @property
    def label(self) -> str:
        return release_label(self.fit_for_release, ())

    def to_frame(self):
        """The series as a pandas DataFrame, one row per step (step numbers start at 1), or per
        step and bin for a histogram."""
        import pandas as pd
        per_step = {"step": np.arange(1, self.T + 1), "std": self.std, "epsilon_step": self.epsilon_step,
                    "epsilon_cumulative": self.epsilon_cumulative, "epsilon_window": self.epsilon_window}
        if self.values.ndim == 1:
            return pd.DataFrame({"step": per_step["step"], "value": self.values, "std": self.std, "low": self.low,
                                 "high": self.high, **{k: v for k, v in per_step.items() if k.startswith("eps")}})
        d = self.values.shape[1]
        frame = pd.DataFrame({k: np.repeat(v, d) for k, v in per_step.items()})
        frame.insert(1, "bin", np.tile(np.asarray(self.bins if self.bins is not None else range(d), dtype=object), self.T))
        frame.insert(2, "value", self.values.ravel())
        frame.insert(4, "low", self.low.ravel())
        frame.insert(5, "high", self.high.ravel())
        return frame


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
def _check_counts(counts: Any) -> np.ndarray:
    try:
        arr = np.asarray(counts)
    except ValueError:  # ragged nesting
        raise ParameterError("counts must be a flat sequence of whole numbers, one per time step.") from None
    if arr.ndim != 1:
        raise ParameterError(f"counts must be a one-dimensional sequence (one count per time step), got shape "
                             f"{arr.shape}.")
    if arr.shape[0] < 1:
        raise ParameterError("counts is empty; a stream needs at least one time step (T >= 1).")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise ParameterError(f"counts must be whole numbers, got values of type {arr.dtype}.")
    if arr.dtype.kind == "f" and (not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))):
        raise ParameterError("counts must be whole numbers; a count stream cannot hold fractions, NaN or "
                             "infinity.")
    if np.any(arr < 0):
        raise ParameterError(f"counts must be non-negative, got {arr.min()} at step "
                             f"{int(np.argmin(arr)) + 1}.")
    if np.any(np.abs(arr) > 2.0**52):
        raise ParameterError("counts must stay below 2^52 so they are exact in floating point.")
    return arr.astype(np.int64)


def _check_whole(value: Any, name: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"{name} ({what}) must be a whole number >= 1, got {value!r}.")
    return int(value)


def _exact_epsilon(epsilon: Any) -> tuple[float, Fraction]:
    eps = _check_epsilon(epsilon)
    if isinstance(epsilon, Fraction):
        return eps, epsilon
    if isinstance(epsilon, numbers.Integral) and not isinstance(epsilon, bool):
        return eps, Fraction(int(epsilon))
    return eps, exact(eps, "epsilon")


# ---------------------------------------------------------------------------------------------
# exact quantiles of a sum of k i.i.d. Laplace(1) variables
# ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=1024)
def _sum_tail_weights(k: int) -> np.ndarray:
    """w_j with P(Y > y) = sum_j w_j Q(j+1, y) for y >= 0, Y = sum of k i.i.d. Laplace(1).

    From the density of Y (the difference of two Gamma(k, 1) variables):
    f(y) = e^{-|y|} / (2^{2k-1} (k-1)!) · sum_{j<k} (2k-2-j)! 2^j |y|^j / (j! (k-1-j)!),
    integrated term by term (Q is the regularized upper incomplete gamma function).
    """
    from scipy import special
    j = np.arange(k, dtype=float)
    logw = (special.gammaln(2 * k - 1 - j) + j * math.log(2.0) - (2 * k - 1) * math.log(2.0)
            - special.gammaln(k) - special.gammaln(k - j))
    return np.exp(logw)


def laplace_sum_tail(k: int, y: float) -> float:
    """P(|Y| > y) for Y the sum of k i.i.d. Laplace(0, 1) variables (exact)."""
    from scipy import special
    if y <= 0:
        return 1.0
    w = _sum_tail_weights(int(k))
    return float(min(1.0, 2.0 * np.dot(w, special.gammaincc(np.arange(1, k + 1), y))))


@lru_cache(maxsize=4096)
def laplace_sum_half_width(k: int, alpha: float = 0.05) -> float:
    """The h with P(|Y| > h) = alpha for Y the sum of k i.i.d. Laplace(0, 1); multiply by the scale.

    k = 1 gives ln(1/alpha), the Laplace mechanism's own bound.
    """
    from scipy import optimize
    k = _check_whole(k, "k", "the number of Laplace terms")
    alpha = _check_alpha(alpha)
    if k == 1:
        return math.log(1.0 / alpha)
    hi = math.sqrt(2.0 * k / alpha) + 1.0  # Chebyshev: P(|Y| > hi) < alpha
    return float(optimize.brentq(lambda h: laplace_sum_tail(k, h) - alpha, 0.0, hi, xtol=1e-12, rtol=1e-12))


# ---------------------------------------------------------------------------------------------
# shared assembly
# ---------------------------------------------------------------------------------------------
def _floats(units: np.ndarray, unit: Fraction) -> np.ndarray:
    """``units * unit`` as correctly rounded floats (one Fraction product per distinct value)."""
    distinct, inverse = np.unique(units, return_inverse=True)
    table = np.array([float(int(u) * unit) for u in distinct], dtype=float)
    return table[inverse].reshape(units.shape)


def _window_sum(units: np.ndarray, w: int) -> np.ndarray:
    c = np.concatenate([[0], np.cumsum(units)])
    t = np.arange(1, units.shape[0] + 1)
    return c[t] - c[np.maximum(t - w, 0)]


def _assemble(values: np.ndarray, *, series: str, level: str, epsilon: float, w: int, unit: Fraction,
              step_units: np.ndarray, n_terms: np.ndarray, scale: float | np.ndarray, alpha: float, guarantee: dict,
              source: NoiseSource, details: dict | None = None, bins: tuple | None = None) -> ContinualRelease:
    step_units = step_units.astype(np.int64)
    cum = np.cumsum(step_units)
    win = _window_sum(step_units, w)
    n_terms = n_terms.astype(np.int64)
    variance = 2.0 * np.square(scale) * n_terms
    distinct, inverse = np.unique(n_terms, return_inverse=True)
    half = np.array([laplace_sum_half_width(int(k), alpha) for k in distinct])[inverse] * scale
    if values.ndim == 2:
        half = half[:, None]
    return ContinualRelease(
        values=values, series=series, level=level, epsilon=epsilon, w=w, epsilon_unit=unit,
        step_units=step_units, cumulative_units=cum, window_units=win,
        epsilon_step=_floats(step_units, unit), epsilon_cumulative=_floats(cum, unit),
        epsilon_window=_floats(win, unit), variance=variance, n_terms=n_terms, scale=scale, alpha=alpha,
        low=values - half, high=values + half, guarantee=guarantee, fit_for_release=source.fit_for_release,
        noise_source=source.description, details=details or {}, bins=bins)


# ---------------------------------------------------------------------------------------------
# what is released: counts, histograms or sums, and what one event or user changes in them
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Query:
    """A stream of statistics and the neighbouring relation its guarantee is stated for."""

    name: str           # "count", "histogram" or "sum"
    sensitivity: float  # Δ: the most one event (or one user at one step) changes one step's statistics, in L1
    event: str          # what one event changes, in words
    step: str           # what one user's data at one step changes, in words

    def user(self, m: int) -> str:
        return {"count": f"sum over steps of |c_t - c'_t| <= {m}",
                "histogram": f"L1 change over all steps and bins <= {m}",
                "sum": f"L1 change over all steps <= {m}·{self.sensitivity:g}"}[self.name]


def _count_query() -> _Query:
    return _Query("count", 1.0, "one step's count by 1", "the count by at most 1")


def _check_table(counts: Any, bins: Any) -> tuple[np.ndarray, tuple | None]:
    """Histogram counts as a (T, d) int64 array, and the bins' names (public, given by the caller)."""
    try:
        arr = np.asarray(counts)
    except ValueError:
        raise ParameterError("counts must be a table of whole numbers, one row per step and one column per bin.") \
            from None
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ParameterError(f"counts must be a table of T >= 1 steps by d >= 1 bins, got shape {arr.shape}.")
    _check_counts(arr.ravel())
    if bins is not None:
        bins = tuple(bins)
        if len(bins) != arr.shape[1]:
            raise ParameterError(f"{len(bins)} bin names were given for {arr.shape[1]} columns of counts.")
    return arr.astype(np.int64), bins


def _check_sums(sums: Any, bound: Any) -> tuple[np.ndarray, float]:
    arr = np.asarray(sums, dtype=float) if np.ndim(sums) else np.array([])
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ParameterError("sums must be a one-dimensional sequence, one sum per time step.")
    if not np.all(np.isfinite(arr)):
        raise ParameterError("sums must be finite numbers.")
    try:
        b = float(bound)
    except (TypeError, ValueError):
        raise ParameterError(f"bound must be a number, got {bound!r}.") from None
    if not (math.isfinite(b) and b > 0):
        raise ParameterError(f"bound (the largest |value| one event contributes) must be a positive finite number, "
                             f"got {bound!r}.")
    if np.any(np.abs(arr) > 2.0**52):
        raise ParameterError("sums must stay below 2^52 in absolute value.")
    return arr, b


def _start(accountant: WindowAccountant, start: int | None) -> int:
    if start is None:
        return 0 if accountant.now is None else accountant.now + 1
    if isinstance(start, bool) or not isinstance(start, numbers.Integral):
        raise ParameterError(f"start must be a whole-number time step, got {start!r}.")
    return int(start)


def _charge_window(accountant: WindowAccountant | None, T: int, per_step: Fraction, start: int | None,
                   label: str) -> list[int] | None:
    """Charge ``per_step`` at T consecutive steps, all or nothing; returns the steps charged."""
    if accountant is None:
        return None
    if not isinstance(accountant, WindowAccountant):
        raise ParameterError(f"accountant must be a WindowAccountant, got {type(accountant).__name__}.")
    steps = list(range(_start(accountant, start), _start(accountant, start) + T))
    trial = copy.deepcopy(accountant)  # refuse the whole release before recording any of it
    for s in steps:
        trial.charge(s, per_step, label=f"{label} step {s}")
    for s in steps:
        accountant.charge(s, per_step, label=f"{label} step {s}")
    return steps


def _series(q: _Query, running: bool = False) -> str:
    return ("running " if running else "") + q.name


def _out(values: np.ndarray, q: _Query) -> np.ndarray:
    """A count's or sum's single column as a series; a histogram keeps its columns."""
    return values if q.name == "histogram" else values[:, 0]


# ---------------------------------------------------------------------------------------------
# event level
# ---------------------------------------------------------------------------------------------
def _event(x: np.ndarray, eps: float, eps_exact: Fraction, q: _Query, *, w: int, alpha: float,
           accountant: WindowAccountant | None, start: int | None, label: str, src: NoiseSource,
           bins: tuple | None) -> ContinualRelease:
    T = x.shape[0]
    scale = check_scale(q.sensitivity / eps, "Laplace", eps, q.sensitivity)
    _charge_window(accountant, T, eps_exact, start, label)
    values = src.laplace(x.astype(float), scale)
    guarantee = {"model": "epsilon-DP", "level": "event", "epsilon": eps, "delta": 0.0, "scale": scale,
                 "statement": (f"event-level epsilon-DP with epsilon = {eps:g}: streams that differ by one event "
                               f"({q.event}) are indistinguishable; each of the {x.size} values gets Laplace noise of "
                               f"scale {scale:g}.")}
    return _assemble(_out(values, q), series=_series(q), level="event", epsilon=eps, w=w, unit=eps_exact,
                     step_units=np.ones(T, dtype=np.int64), n_terms=np.ones(T, dtype=np.int64), scale=scale,
                     alpha=alpha, guarantee=guarantee, source=src, bins=bins)


def event_level_counts(counts: Any, epsilon: float, *, w: int = 1, alpha: float = 0.05,
                       accountant: WindowAccountant | None = None, start: int | None = None,
                       label: str = "event-level count", noise: NoiseArg = None) -> ContinualRelease:
    """Release every step's count with Laplace noise of scale 1/ε (event-level ε-DP).

    Args:
        counts: the true count per time step (non-negative whole numbers), T = len(counts) >= 1.
        epsilon: the ε each step spends; it protects any single event.
        w: the window ``epsilon_window`` reports over (default 1, the event-level view).
        alpha: miss probability of the per-step confidence intervals.
        accountant: an optional :class:`WindowAccountant` charged ε at each of T consecutive steps
            from ``start`` (default: the step after its latest charge), all or nothing, before noise.
        start: the accountant's step of the first count.
        label: the label of the accountant's charges.
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Raises:
        ParameterError: bad counts, ε, w or alpha.
        BudgetExceededError: the accountant refuses; nothing was charged and no noise drawn.
    """
    c = _check_counts(counts)
    eps, eps_exact = _exact_epsilon(epsilon)
    w = _check_whole(w, "w", "the window length")
    alpha = _check_alpha(alpha)
    return _event(c[:, None], eps, eps_exact, _count_query(), w=w, alpha=alpha, accountant=accountant, start=start,
                  label=label, src=as_noise_source(noise), bins=None)


# ---------------------------------------------------------------------------------------------
# user level: the binary-tree mechanism
# ---------------------------------------------------------------------------------------------
def _tree(x: np.ndarray, L: int, scale: float, running: bool, src: NoiseSource):
    """The binary-tree mechanism on every column of ``x`` (shape (n, d)) at once.

    Level j holds the sums of the complete blocks of 2^j steps that end by the last step seen;
    every node of every column gets Laplace noise of ``scale`` in one draw. Returns the released
    values (running sums from the dyadic decomposition of [1, t], or the leaves), the number of
    noisy nodes in each step's value, and the noisy nodes per level (each of shape (nodes, d)).
    """
    n, d = x.shape
    csum = np.concatenate([np.zeros((1, d)), np.cumsum(x, axis=0)])  # prefix sums make every level one gather
    sizes = [n >> j for j in range(L)]  # complete nodes available so far at each level
    true_nodes = [csum[np.arange(1, k + 1) << j] - csum[np.arange(k) << j] for j, k in enumerate(sizes)]
    flat = np.concatenate(true_nodes).ravel()
    noisy_flat = src.laplace(flat, scale).reshape(-1, d)  # one draw for the whole tree (one OpenDP call)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    noisy = [noisy_flat[offsets[j]:offsets[j + 1]] for j in range(L)]
    if not running:
        return noisy[0].copy(), np.ones(n, dtype=np.int64), noisy
    t = np.arange(1, n + 1, dtype=np.int64)
    values = np.zeros((n, d))
    n_terms = np.zeros(n, dtype=np.int64)
    for j in range(L):  # add the level-j node when bit j of t is set
        bit = ((t >> j) & 1).astype(bool)
        values[bit] += noisy[j][(t[bit] >> j) - 1]
        n_terms += bit
    return values, n_terms, noisy


def tree_levels(horizon: int) -> int:
    """L = ⌊log2 T⌋ + 1, the number of tree levels that hold a complete node for a horizon T."""
    return _check_whole(horizon, "horizon", "the number of time steps T").bit_length()


def _user(x: np.ndarray, eps: float, eps_exact: Fraction, q: _Query, *, horizon: int | None, m: int,
          running: bool, alpha: float, accountant: Accountant | None, label: str, src: NoiseSource,
          bins: tuple | None) -> ContinualRelease:
    n = x.shape[0]
    T = n if horizon is None else _check_whole(horizon, "horizon", "the number of time steps T")
    if T < n:
        raise ParameterError(f"the horizon T = {T} is shorter than the {n} steps given; set horizon >= the steps.")
    if accountant is not None and not isinstance(accountant, Accountant):
        raise ParameterError(f"accountant must be a sequential Accountant, got {type(accountant).__name__}.")
    L = T.bit_length()
    scale = check_scale(m * q.sensitivity * L / eps, "Laplace", eps, float(m * q.sensitivity * L))
    if accountant is not None:
        accountant.charge(eps_exact, label=label)
    values, n_terms, noisy = _tree(x.astype(float), L, scale, running, src)
    # privacy per step: each level costs ε/L (parallel within a level); level j starts at step 2^j
    step_units = np.zeros(n, dtype=np.int64)
    first = (1 << np.arange(L)) - 1
    step_units[first[first < n]] = 1
    guarantee = {"model": "epsilon-DP", "level": "user", "epsilon": eps, "delta": 0.0, "scale": scale,
                 "horizon": T, "levels": L, "max_contribution": m,
                 "statement": (f"user-level epsilon-DP with epsilon = {eps:g} over a horizon of T = {T} steps for "
                               f"streams that differ by one user's contribution of at most {m} event(s) in total "
                               f"({q.user(m)}): binary-tree mechanism with {L} levels, Laplace noise of scale "
                               f"{scale:g} on every node.")}
    details = {"nodes": [_out(level, q) for level in noisy], "levels": L, "horizon": T, "max_contribution": m}
    return _assemble(_out(values, q), series=_series(q, running), level="user", epsilon=eps, w=T,
                     unit=eps_exact / L, step_units=step_units, n_terms=n_terms, scale=scale, alpha=alpha,
                     guarantee=guarantee, source=src, details=details, bins=bins)


def binary_tree_counts(counts: Any, epsilon: float, *, horizon: int | None = None, max_contribution: int = 1,
                       output: str = "running", alpha: float = 0.05, accountant: Accountant | None = None,
                       label: str = "binary-tree continual count", noise: NoiseArg = None) -> ContinualRelease:
    """User-level continual count over a horizon T with the binary-tree (counter) mechanism.

    Args:
        counts: the true count per step for the steps seen so far (length <= horizon).
        epsilon: the user-level ε for the whole horizon.
        horizon: T, fixed in advance (default: ``len(counts)``); the tree and its noise scale
            depend on T only, so releasing a prefix of the stream does not change the guarantee.
        max_contribution: m, the most a user can change the stream in total, sum_t |c_t − c'_t| <= m.
        output: ``"running"`` (running counts from the dyadic decomposition, variance 2b²·popcount(t))
            or ``"count"`` (per-step counts from the leaves, variance 2b²), b = m·L/ε.
        alpha: miss probability of the per-step confidence intervals.
        accountant: an optional sequential :class:`Accountant`, charged ε once before noise is drawn.
        label: the label of the accountant's charge.
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Raises:
        ParameterError: bad counts, ε, horizon, m, output or alpha.
        BudgetExceededError: the accountant refuses; nothing was charged and no noise drawn.
    """
    c = _check_counts(counts)
    eps, eps_exact = _exact_epsilon(epsilon)
    m = _check_whole(max_contribution, "max_contribution", "the most one user changes the stream in total")
    if output not in ("running", "count"):
        raise ParameterError(f"output must be 'running' or 'count', got {output!r}.")
    alpha = _check_alpha(alpha)
    return _user(c[:, None], eps, eps_exact, _count_query(), horizon=horizon, m=m, running=output == "running",
                 alpha=alpha, accountant=accountant, label=label, src=as_noise_source(noise), bins=None)


# ---------------------------------------------------------------------------------------------
# w-event level
# ---------------------------------------------------------------------------------------------
STRATEGIES = ("uniform", "bd", "ba")
_STRATEGY_NAMES = {"bd": "budget distribution", "ba": "budget absorption"}


def _window_accountant(accountant: WindowAccountant | None, eps_exact: Fraction, w: int,
                       dataset_id: str) -> WindowAccountant:
    if accountant is None:
        return WindowAccountant(w, eps_exact, dataset_id=dataset_id)
    if not isinstance(accountant, WindowAccountant):
        raise ParameterError(f"accountant must be a WindowAccountant, got {type(accountant).__name__}.")
    if accountant.w != w:
        raise ParameterError(f"the accountant's window is w = {accountant.w}, not w = {w}; use an accountant "
                             "kept for the same window.")
    return accountant


def _wevent(x: np.ndarray, eps: float, eps_exact: Fraction, q: _Query, *, w: int, strategy: str, alpha: float,
            accountant: WindowAccountant | None, start: int | None, dataset_id: str, label: str, src: NoiseSource,
            bins: tuple | None) -> ContinualRelease:
    if strategy not in STRATEGIES:
        raise ParameterError(f"strategy must be 'uniform', 'bd' (budget distribution) or 'ba' (budget absorption), "
                             f"got {strategy!r}.")
    T = x.shape[0]
    accountant = _window_accountant(accountant, eps_exact, w, dataset_id)
    base = {"model": "epsilon-DP", "level": "w-event", "epsilon": eps, "delta": 0.0, "w": w, "strategy": strategy}
    window = (f"w-event epsilon-DP with epsilon = {eps:g} and w = {w}: any {w} consecutive steps spend at most epsilon "
              f"in total for streams that differ by one user's data within them (changing {q.step} at each step)")
    if strategy == "uniform":
        per_step = eps_exact / w
        scale = check_scale(w * q.sensitivity / eps, "Laplace", eps, float(w * q.sensitivity))
        steps = _charge_window(accountant, T, per_step, start, label)
        values = src.laplace(x.astype(float), scale)
        guarantee = {**base, "scale": scale,
                     "statement": f"{window} (uniform split, epsilon/w = {float(per_step):g} per step, Laplace noise "
                                  f"of scale {scale:g} on every value)."}
        return _assemble(_out(values, q), series=_series(q), level="w-event", epsilon=eps, w=w, unit=per_step,
                         step_units=np.ones(T, dtype=np.int64), n_terms=np.ones(T, dtype=np.int64), scale=scale,
                         alpha=alpha, guarantee=guarantee, source=src, bins=bins,
                         details={"accountant": accountant, "steps": (steps[0], steps[-1])})
    first = _start(accountant, start)
    # Before any noise: a window that ends at or after `first` sees at most the w − 1 steps before
    # it, and the strategy spends at most ε in any window, so if those steps leave ε no charge
    # below can fail.
    before = sum((c.epsilon for c in accountant.charges if c.kind == "query" and first - w < c.step < first),
                 Fraction(0))
    if before + eps_exact > accountant.budget.epsilon:
        raise BudgetExceededError(
            f"release {label!r} needs a window budget of epsilon = {eps:g} from step {first} on, but the {w - 1} steps "
            f"before it already spent {show(before)} of {accountant.budget} for dataset {accountant.dataset_id!r}; "
            "ask for less or start later.", label=label, requested=(eps_exact, Fraction(0)),
            remaining=(accountant.budget.epsilon - before, accountant.budget.delta))
    run = (budget_distribution if strategy == "bd" else budget_absorption)(
        x.astype(float), eps_exact, w, noise=src, sensitivity=q.sensitivity,
        charge=lambda t, amount, part: accountant.charge(first + t, amount, label=f"{label} step {first + t} {part}"))
    guarantee = {**base, "published": int(run.published.sum()),
                 "statement": (f"{window} ({_STRATEGY_NAMES[strategy]} of Kellaris et al.: epsilon/(2w) per step on a "
                               f"private dissimilarity, at most epsilon/2 per window on publications, made only when "
                               f"the data moved more than their noise; {int(run.published.sum())} of {T} steps "
                               f"published, Laplace noise of scale sensitivity/epsilon_t on their values).")}
    details = {"accountant": accountant, "steps": (first, first + T - 1), "published": run.published,
               "shown": run.shown}
    return _assemble(_out(run.values, q), series=_series(q), level="w-event", epsilon=eps, w=w, unit=run.unit,
                     step_units=run.step_units, n_terms=np.ones(T, dtype=np.int64), scale=run.scales, alpha=alpha,
                     guarantee=guarantee, source=src, details=details, bins=bins)


def w_event_counts(counts: Any, epsilon: float, w: int, *, strategy: str = "uniform", alpha: float = 0.05,
                   accountant: WindowAccountant | None = None, start: int | None = None,
                   dataset_id: str = "continual count", label: str = "w-event count",
                   noise: NoiseArg = None) -> ContinualRelease:
    """w-event ε-DP continual count: the uniform split (ε/w per step, Laplace scale w/ε) or
    Kellaris et al.'s adaptive budget distribution (``"bd"``) or absorption (``"ba"``).

    Any window of w consecutive steps spends at most ε (exactly ε under the uniform split, fewer
    for the first w − 1 windows), which the :class:`WindowAccountant` checks step by step before
    any noise is drawn (:mod:`veil.dp.wevent` for the adaptive strategies).

    Args:
        counts: the true count per step; a user changes each step's count by at most 1.
        epsilon: the budget of any window of w consecutive steps.
        w: the window length, w >= 1 (w = 1 is event level, w = T is user level for a user with at
            most one event per step).
        strategy: ``"uniform"``, ``"bd"`` or ``"ba"``.
        alpha: miss probability of the per-step confidence intervals.
        accountant: the stream's WindowAccountant (its w must equal ``w``); default a fresh one
            with budget ε. Charged from ``start`` (default: the step after its latest charge): the
            uniform split all or nothing, the adaptive strategies after checking that the window
            before ``start`` leaves ε for them.
        start: the accountant's step of the first count.
        dataset_id: the dataset id of the fresh accountant made when none is given.
        label: the label of the accountant's charges.
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Raises:
        ParameterError: bad counts, ε, w, strategy, alpha, or an accountant with another window.
        BudgetExceededError: a window would exceed the accountant's budget; nothing was charged.
    """
    c = _check_counts(counts)
    eps, eps_exact = _exact_epsilon(epsilon)
    w = _check_whole(w, "w", "the window length")
    alpha = _check_alpha(alpha)
    return _wevent(c[:, None], eps, eps_exact, _count_query(), w=w, strategy=strategy, alpha=alpha,
                   accountant=accountant, start=start, dataset_id=dataset_id, label=label, src=as_noise_source(noise),
                   bins=None)


# ---------------------------------------------------------------------------------------------
# histograms and sums, at any level
# ---------------------------------------------------------------------------------------------
LEVELS = ("event", "user", "w-event")


def _release(x: np.ndarray, epsilon: Any, q: _Query, *, level: str, w: int | None, strategy: str,
             horizon: int | None, max_contribution: int, running: bool, alpha: float, accountant, start,
             dataset_id: str, label: str, noise: NoiseArg, bins: tuple | None) -> ContinualRelease:
    eps, eps_exact = _exact_epsilon(epsilon)
    alpha = _check_alpha(alpha)
    if level not in LEVELS:
        raise ParameterError(f"level must be 'event', 'user' or 'w-event', got {level!r}.")
    if running and level != "user":
        raise ParameterError("running totals are released at user level only (the binary tree); leave running out.")
    if level != "w-event" and strategy != "uniform":
        raise ParameterError("a strategy applies to w-event level only; leave strategy out.")
    if level == "w-event" and w is None:
        raise ParameterError("w-event level needs the window length w.")
    src = as_noise_source(noise)
    if level == "event":
        return _event(x, eps, eps_exact, q, w=1 if w is None else _check_whole(w, "w", "the window length"),
                      alpha=alpha, accountant=accountant, start=start, label=label, src=src, bins=bins)
    if level == "user":
        m = _check_whole(max_contribution, "max_contribution", "the most events one user adds in total")
        return _user(x, eps, eps_exact, q, horizon=horizon, m=m, running=running, alpha=alpha, accountant=accountant,
                     label=label, src=src, bins=bins)
    return _wevent(x, eps, eps_exact, q, w=_check_whole(w, "w", "the window length"), strategy=strategy, alpha=alpha,
                   accountant=accountant, start=start, dataset_id=dataset_id, label=label, src=src, bins=bins)


def continual_histogram(counts: Any, epsilon: float, *, level: str, bins: Any = None, w: int | None = None,
                        strategy: str = "uniform", horizon: int | None = None, max_contribution: int = 1,
                        running: bool = False, alpha: float = 0.05, accountant=None, start: int | None = None,
                        dataset_id: str = "continual histogram", label: str = "continual histogram",
                        noise: NoiseArg = None) -> ContinualRelease:
    """Continual release of a histogram: a noisy counter per bin at every step, at one protection level.

    * ``level="event"``: neighbouring streams differ by one event, which adds 1 to one bin of one
      step; every count gets Laplace noise of scale 1/ε (each step ε, the bins in parallel).
    * ``level="user"``: one user adds at most m events in all (``max_contribution``): the
      binary-tree mechanism runs on every bin with noise of scale m·L/ε (a user's events change
      the nodes of all the bins' trees by at most m·L in L1); ``running=True`` releases the
      running counts of every bin, else the per-step counts.
    * ``level="w-event"``: one user has at most one event per step; any w consecutive steps spend
      at most ε, split uniformly (scale w/ε) or by Kellaris et al.'s adaptive strategies
      (``strategy="bd"`` or ``"ba"``, :mod:`veil.dp.wevent`, whose dissimilarity is the mean over
      the bins).

    The bins are public: the caller fixes them before looking at the data (which categories occur
    is itself a disclosure).

    Args:
        counts: the true counts, a table of T steps by d bins (non-negative whole numbers).
        epsilon: ε at the chosen level (per step, per user, or per window of w steps).
        level: ``"event"``, ``"user"`` or ``"w-event"``.
        bins: the names of the d bins (for the result's frame), or ``None``.
        w: the window length (w-event level; at event level the window ``epsilon_window`` reports over).
        strategy: ``"uniform"``, ``"bd"`` or ``"ba"`` (w-event level).
        horizon: T of the binary tree (user level; default: the steps given).
        max_contribution: m (user level).
        running: release running counts (user level).
        alpha: miss probability of the confidence intervals.
        accountant: a :class:`WindowAccountant` (event and w-event level) or a sequential
            :class:`Accountant` (user level), charged before any noise is drawn.
        start: the accountant's step of the first row (event and w-event level).
        dataset_id: the dataset id of the fresh window accountant made at w-event level when none is given.
        label: the label of the accountant's charges.
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Raises:
        ParameterError: bad counts, bins, ε, level, w, strategy, horizon, m or alpha.
        BudgetExceededError: the accountant refuses; nothing was charged and no noise drawn.
    """
    x, bins = _check_table(counts, bins)
    q = _Query("histogram", 1.0, "one bin of one step by 1", "the bins by at most 1 in total")
    return _release(x, epsilon, q, level=level, w=w, strategy=strategy, horizon=horizon,
                    max_contribution=max_contribution, running=running, alpha=alpha, accountant=accountant,
                    start=start, dataset_id=dataset_id, label=label, noise=noise, bins=bins)


def continual_sum(sums: Any, epsilon: float, *, bound: float, level: str, w: int | None = None,
                  strategy: str = "uniform", horizon: int | None = None, max_contribution: int = 1,
                  running: bool = False, alpha: float = 0.05, accountant=None, start: int | None = None,
                  dataset_id: str = "continual sum", label: str = "continual sum",
                  noise: NoiseArg = None) -> ContinualRelease:
    """Continual release of a sum per step, at one protection level.

    Every event contributes one value clamped to [−``bound``, ``bound``] (a public bound, never
    taken from the data: :mod:`veil.dp.stream` clamps the values to public bounds before summing),
    so one event changes one step's sum by at most Δ = ``bound``:

    * ``level="event"``: Laplace noise of scale Δ/ε on every step's sum;
    * ``level="user"``: a user contributes at most m events (``max_contribution``), changing the
      sums by at most m·Δ in all: the binary tree with noise of scale m·Δ·L/ε; ``running=True``
      releases the running sums;
    * ``level="w-event"``: one event per user per step; uniform split (scale w·Δ/ε) or Kellaris et
      al.'s BD / BA.

    Args:
        sums: the true sum per step of the clamped values, T >= 1.
        epsilon: ε at the chosen level.
        bound: Δ > 0, the largest |value| one event contributes after clamping.
        level: ``"event"``, ``"user"`` or ``"w-event"``.
        w: the window length (w-event level; at event level the window ``epsilon_window`` reports over).
        strategy: ``"uniform"``, ``"bd"`` or ``"ba"`` (w-event level).
        horizon: T of the binary tree (user level).
        max_contribution: m (user level).
        running: release running sums (user level).
        alpha: miss probability of the confidence intervals.
        accountant: as :func:`continual_histogram`.
        start: the accountant's step of the first sum (event and w-event level).
        dataset_id: the dataset id of the fresh window accountant made at w-event level when none is given.
        label: the label of the accountant's charges.
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Raises:
        ParameterError: bad sums, bound, ε, level, w, strategy, horizon, m or alpha.
        BudgetExceededError: the accountant refuses; nothing was charged and no noise drawn.
    """
    x, b = _check_sums(sums, bound)
    q = _Query("sum", b, f"one step's sum by at most {b:g}", f"the sum by at most {b:g}")
    return _release(x[:, None], epsilon, q, level=level, w=w, strategy=strategy, horizon=horizon,
                    max_contribution=max_contribution, running=running, alpha=alpha, accountant=accountant,
                    start=start, dataset_id=dataset_id, label=label, noise=noise, bins=None)
