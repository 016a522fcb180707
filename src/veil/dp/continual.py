"""Continual release of a count: one noisy value per time step, at event, user or w-event level.

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
    Every step is charged to a :class:`~veil.dp.accountant.WindowAccountant` before any noise is
    drawn; a release that would overspend a window is refused and charges nothing.

Privacy spent, per step (fields of the result; all exact multiples of ``epsilon_unit``):

* ``epsilon_step[t]`` — the ε the releases at step t cost: ε (event level), ε/w (w-event), and
  for the tree ε/L at the steps where a new tree level first releases a node (t = 1, 2, 4, ...)
  and 0 otherwise (within a level the nodes cover disjoint steps, so a user's m units cost at most
  ε/L per level; levels compose sequentially);
* ``epsilon_cumulative[t]`` — the sum up to t (sequential composition of everything released so
  far: for the tree the user-level loss so far, reaching ε at t = 2^(L−1); for event and w-event
  level the loss of a user who is present at every step);
* ``epsilon_window[t]`` — the sum over the window of ``w`` steps ending at t (``w`` = 1 for event
  level unless given, ``w`` = T for the tree, the w of w-event level).

Accuracy, per step: ``variance``, ``std`` and a (1 − alpha) confidence interval ``low`` /
``high`` around the released value, computed from the **exact** distribution of a sum of k
i.i.d. Laplace variables (:func:`laplace_sum_half_width`), not a normal approximation.

Noise comes from :mod:`veil.dp.noise`: ``noise=None`` uses the secure OpenDP-backed source and the
result says ``fit_for_release=True``; an integer seed or a ``numpy.random.Generator`` runs a
reproducible experiment that is labelled not fit for release.

Not implemented: the adaptive w-event strategies (budget distribution / absorption of Kellaris
et al.), Honaker's variance-optimal tree estimator, discrete (geometric) noise for the tree.
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
from scipy import optimize, special

from veil.dp.accountant import Accountant, WindowAccountant, _exact
from veil.dp.mechanisms import _check_alpha, _check_epsilon, check_scale, release_label
from veil.dp.noise import NoiseSource, as_noise_source
from veil.errors import ParameterError

__all__ = ["ContinualRelease", "binary_tree_counts", "event_level_counts", "laplace_sum_half_width",
           "tree_levels", "w_event_counts"]

NoiseArg = NoiseSource | np.random.Generator | int | None


# ---------------------------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ContinualRelease:
    """A noisy series released at one protection level, with its per-step privacy and accuracy.

    Attributes:
        values: the noisy series (float array of length T): per-step counts or running counts.
        series: ``"count"`` or ``"running count"``.
        level: ``"event"``, ``"user"`` or ``"w-event"``.
        epsilon: the ε guaranteed at that level.
        w: the window the ``epsilon_window`` column sums over.
        epsilon_unit: the exact quantum every ε column is a multiple of.
        step_units, cumulative_units, window_units: the ε columns as exact integer multiples of
            ``epsilon_unit`` (so ``window_units.max() * epsilon_unit <= epsilon`` is checked exactly).
        epsilon_step, epsilon_cumulative, epsilon_window: the same as floats (each the correctly
            rounded value of the exact one).
        variance: the noise variance per step; ``std`` its square root.
        n_terms: how many i.i.d. Laplace draws of scale ``scale`` make up each step's noise.
        scale: the Laplace scale of every draw.
        alpha, low, high: the (1 − alpha) confidence interval for the true value at each step.
        guarantee: the privacy model, its parameters and a one-sentence statement.
        fit_for_release, noise_source: where the noise came from.
        details: mechanism-specific extras (for the tree: the noisy nodes per level).
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
        """The series as a pandas DataFrame, one row per step (step numbers start at 1)."""
        import pandas as pd
        return pd.DataFrame({"step": np.arange(1, self.T + 1), "value": self.values, "std": self.std,
                             "low": self.low, "high": self.high, "epsilon_step": self.epsilon_step,
                             "epsilon_cumulative": self.epsilon_cumulative,
                             "epsilon_window": self.epsilon_window})


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
    return eps, _exact(eps, "epsilon")


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
    j = np.arange(k, dtype=float)
    logw = (special.gammaln(2 * k - 1 - j) + j * math.log(2.0) - (2 * k - 1) * math.log(2.0)
            - special.gammaln(k) - special.gammaln(k - j))
    return np.exp(logw)


def laplace_sum_tail(k: int, y: float) -> float:
    """P(|Y| > y) for Y the sum of k i.i.d. Laplace(0, 1) variables (exact)."""
    if y <= 0:
        return 1.0
    w = _sum_tail_weights(int(k))
    return float(min(1.0, 2.0 * np.dot(w, special.gammaincc(np.arange(1, k + 1), y))))


@lru_cache(maxsize=4096)
def laplace_sum_half_width(k: int, alpha: float = 0.05) -> float:
    """The h with P(|Y| > h) = alpha for Y the sum of k i.i.d. Laplace(0, 1); multiply by the scale.

    k = 1 gives ln(1/alpha), the Laplace mechanism's own bound.
    """
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
              step_units: np.ndarray, n_terms: np.ndarray, scale: float, alpha: float, guarantee: dict,
              source: NoiseSource, details: dict | None = None) -> ContinualRelease:
    step_units = step_units.astype(np.int64)
    cum = np.cumsum(step_units)
    win = _window_sum(step_units, w)
    n_terms = n_terms.astype(np.int64)
    variance = 2.0 * scale**2 * n_terms
    distinct, inverse = np.unique(n_terms, return_inverse=True)
    halves = np.array([laplace_sum_half_width(int(k), alpha) for k in distinct]) * scale
    half = halves[inverse]
    return ContinualRelease(
        values=values, series=series, level=level, epsilon=epsilon, w=w, epsilon_unit=unit,
        step_units=step_units, cumulative_units=cum, window_units=win,
        epsilon_step=_floats(step_units, unit), epsilon_cumulative=_floats(cum, unit),
        epsilon_window=_floats(win, unit), variance=variance, n_terms=n_terms, scale=scale, alpha=alpha,
        low=values - half, high=values + half, guarantee=guarantee, fit_for_release=source.fit_for_release,
        noise_source=source.description, details=details or {})


def _charge_window(accountant: WindowAccountant | None, T: int, per_step: Fraction, start: int | None,
                   label: str) -> list[int] | None:
    """Charge ``per_step`` at T consecutive steps, all or nothing; returns the steps charged."""
    if accountant is None:
        return None
    if not isinstance(accountant, WindowAccountant):
        raise ParameterError(f"accountant must be a WindowAccountant, got {type(accountant).__name__}.")
    if start is None:
        start = 0 if accountant.now is None else accountant.now + 1
    elif isinstance(start, bool) or not isinstance(start, numbers.Integral):
        raise ParameterError(f"start must be a whole-number time step, got {start!r}.")
    steps = list(range(int(start), int(start) + T))
    trial = copy.deepcopy(accountant)  # refuse the whole release before recording any of it
    for s in steps:
        trial.charge(s, per_step, label=f"{label} step {s}")
    for s in steps:
        accountant.charge(s, per_step, label=f"{label} step {s}")
    return steps


# ---------------------------------------------------------------------------------------------
# event level
# ---------------------------------------------------------------------------------------------
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
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Raises:
        ParameterError: bad counts, ε, w or alpha.
        BudgetExceededError: the accountant refuses; nothing was charged and no noise drawn.
    """
    c = _check_counts(counts)
    eps, eps_exact = _exact_epsilon(epsilon)
    w = _check_whole(w, "w", "the window length")
    alpha = _check_alpha(alpha)
    T = c.shape[0]
    src = as_noise_source(noise)
    scale = check_scale(1.0 / eps, "Laplace", eps, 1.0)
    _charge_window(accountant, T, eps_exact, start, label)
    values = src.laplace(c.astype(float), scale)
    guarantee = {"model": "epsilon-DP", "level": "event", "epsilon": eps, "delta": 0.0, "scale": scale,
                 "statement": (f"event-level epsilon-DP with epsilon = {eps:g}: streams that differ by one event "
                               f"(one step's count by 1) are indistinguishable; each of the {T} counts gets "
                               f"Laplace noise of scale {scale:g}.")}
    return _assemble(values, series="count", level="event", epsilon=eps, w=w, unit=eps_exact,
                     step_units=np.ones(T, dtype=np.int64), n_terms=np.ones(T, dtype=np.int64), scale=scale,
                     alpha=alpha, guarantee=guarantee, source=src)


# ---------------------------------------------------------------------------------------------
# user level: the binary-tree mechanism
# ---------------------------------------------------------------------------------------------
def tree_levels(horizon: int) -> int:
    """L = ⌊log2 T⌋ + 1, the number of tree levels that hold a complete node for a horizon T."""
    return _check_whole(horizon, "horizon", "the number of time steps T").bit_length()


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
        accountant: an optional sequential :class:`Accountant`, charged ε once before noise is drawn.
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Raises:
        ParameterError: bad counts, ε, horizon, m, output or alpha.
        BudgetExceededError: the accountant refuses; nothing was charged and no noise drawn.
    """
    c = _check_counts(counts)
    eps, eps_exact = _exact_epsilon(epsilon)
    n = c.shape[0]
    T = n if horizon is None else _check_whole(horizon, "horizon", "the number of time steps T")
    if T < n:
        raise ParameterError(f"the horizon T = {T} is shorter than the {n} counts given; set horizon >= len(counts).")
    m = _check_whole(max_contribution, "max_contribution", "the most one user changes the stream in total")
    if output not in ("running", "count"):
        raise ParameterError(f"output must be 'running' or 'count', got {output!r}.")
    alpha = _check_alpha(alpha)
    if accountant is not None and not isinstance(accountant, Accountant):
        raise ParameterError(f"accountant must be a sequential Accountant, got {type(accountant).__name__}.")
    src = as_noise_source(noise)
    L = T.bit_length()
    scale = check_scale(m * L / eps, "Laplace", eps, float(m * L))
    if accountant is not None:
        accountant.charge(eps_exact, label=label)

    # level j: the complete blocks of 2^j steps that end by the last step seen (prefix sums make it one gather)
    csum = np.concatenate([[0], np.cumsum(c)])
    sizes = [n >> j for j in range(L)]  # complete nodes available so far at each level
    true_nodes = [csum[(np.arange(1, s + 1) << j)] - csum[(np.arange(s) << j)] for j, s in enumerate(sizes)]
    flat = np.concatenate(true_nodes).astype(float) if n else np.zeros(0)
    noisy_flat = src.laplace(flat, scale)  # one draw for the whole tree (one OpenDP call when secure)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    noisy = [noisy_flat[offsets[j]:offsets[j + 1]] for j in range(L)]

    t = np.arange(1, n + 1, dtype=np.int64)
    if output == "running":
        values = np.zeros(n, dtype=float)
        n_terms = np.zeros(n, dtype=np.int64)
        for j in range(L):  # add the level-j node when bit j of t is set
            bit = ((t >> j) & 1).astype(bool)
            idx = (t[bit] >> j) - 1
            values[bit] += noisy[j][idx]
            n_terms += bit
        series = "running count"
    else:
        values = noisy[0].copy()
        n_terms = np.ones(n, dtype=np.int64)
        series = "count"

    # privacy per step: each level costs ε/L (parallel within a level); level j starts at step 2^j
    step_units = np.zeros(n, dtype=np.int64)
    first = (1 << np.arange(L)) - 1
    step_units[first[first < n]] = 1
    unit = eps_exact / L
    guarantee = {"model": "epsilon-DP", "level": "user", "epsilon": eps, "delta": 0.0, "scale": scale,
                 "horizon": T, "levels": L, "max_contribution": m,
                 "statement": (f"user-level epsilon-DP with epsilon = {eps:g} over a horizon of T = {T} steps for "
                               f"streams that differ by one user's contribution of at most {m} event(s) in total "
                               f"(sum over steps of |c_t - c'_t| <= {m}): binary-tree mechanism with {L} levels, "
                               f"Laplace noise of scale {scale:g} on every node.")}
    details = {"nodes": noisy, "levels": L, "horizon": T, "max_contribution": m}
    return _assemble(values, series=series, level="user", epsilon=eps, w=T, unit=unit, step_units=step_units,
                     n_terms=n_terms, scale=scale, alpha=alpha, guarantee=guarantee, source=src, details=details)


# ---------------------------------------------------------------------------------------------
# w-event level
# ---------------------------------------------------------------------------------------------
def w_event_counts(counts: Any, epsilon: float, w: int, *, alpha: float = 0.05,
                   accountant: WindowAccountant | None = None, start: int | None = None,
                   dataset_id: str = "continual count", label: str = "w-event count",
                   noise: NoiseArg = None) -> ContinualRelease:
    """w-event ε-DP continual count, uniform strategy: every step spends ε/w (Laplace scale w/ε).

    Any window of w consecutive steps spends exactly ε (fewer for the first w − 1 windows), which
    the :class:`WindowAccountant` checks step by step before any noise is drawn.

    Args:
        counts: the true count per step; a user changes each step's count by at most 1.
        epsilon: the budget of any window of w consecutive steps.
        w: the window length, w >= 1 (w = 1 is event level, w = T is user level for a user with at
            most one event per step).
        accountant: the stream's WindowAccountant (its w must equal ``w``); default a fresh one
            with budget ε. Charged ε/w at T consecutive steps from ``start`` (default: the step
            after its latest charge), all or nothing.
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Raises:
        ParameterError: bad counts, ε, w, alpha, or an accountant with another window.
        BudgetExceededError: a window would exceed the accountant's budget; nothing was charged.
    """
    c = _check_counts(counts)
    eps, eps_exact = _exact_epsilon(epsilon)
    w = _check_whole(w, "w", "the window length")
    alpha = _check_alpha(alpha)
    T = c.shape[0]
    if accountant is None:
        accountant = WindowAccountant(w, eps_exact, dataset_id=dataset_id)
    elif not isinstance(accountant, WindowAccountant):
        raise ParameterError(f"accountant must be a WindowAccountant, got {type(accountant).__name__}.")
    elif accountant.w != w:
        raise ParameterError(f"the accountant's window is w = {accountant.w}, not w = {w}; use an accountant "
                             "kept for the same window.")
    src = as_noise_source(noise)
    per_step = eps_exact / w
    scale = check_scale(w / eps, "Laplace", eps, float(w))
    steps = _charge_window(accountant, T, per_step, start, label)
    values = src.laplace(c.astype(float), scale)
    guarantee = {"model": "epsilon-DP", "level": "w-event", "epsilon": eps, "delta": 0.0, "w": w, "scale": scale,
                 "strategy": "uniform",
                 "statement": (f"w-event epsilon-DP with epsilon = {eps:g} and w = {w}: any {w} consecutive steps "
                               f"spend at most epsilon in total (uniform split, epsilon/w = {float(per_step):g} per "
                               f"step, Laplace noise of scale {scale:g} per count).")}
    return _assemble(values, series="count", level="w-event", epsilon=eps, w=w, unit=per_step,
                     step_units=np.ones(T, dtype=np.int64), n_terms=np.ones(T, dtype=np.int64), scale=scale,
                     alpha=alpha, guarantee=guarantee, source=src,
                     details={"accountant": accountant, "steps": (steps[0], steps[-1])})
