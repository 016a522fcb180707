"""Adaptive budgets for w-event privacy: budget distribution (BD) and budget absorption (BA).

Kellaris, Papadopoulos, Xiao and Papadias, "Differentially private event sequences over infinite
streams" (VLDB 2014). A mechanism is w-event ε-DP when any w consecutive time steps together
spend at most ε. The *uniform* split gives every step ε/w (:func:`veil.dp.continual.w_event_counts`);
when the statistics change slowly most of that budget buys nothing, so the two adaptive
strategies spend it only when the data moved. Each step t has two parts:

* **M_{t,1}, the private dissimilarity**, spending ε/(2w) at every step: the mean absolute
  difference between the true statistics c_t (d values) and the last release r_l,
  dis = (1/d) Σ_k |c_t[k] − r_l[k]|, plus Laplace noise of scale Δ/(d · ε/(2w)) (one user changes
  c_t by at most Δ in L1, so dis by at most Δ/d). Before the first publication r_l is the zero vector.
* **M_{t,2}, the publication**, with a budget ε_{t,2} chosen from what the window has left: the
  step publishes r_t = c_t + Laplace(Δ/ε_{t,2}) noise on every value when the noisy dissimilarity
  exceeds the error that publication would carry, err = Δ/ε_{t,2} (the mean absolute error of its
  noise); otherwise it repeats r_{t−1} and spends nothing on publication.

**BD** (budget distribution): the publication budget of a window is ε/2; the step may use half of
what the last w − 1 steps left of it, ε_{t,2} = (ε/2 − Σ_{i=t−w+1}^{t−1} ε_{i,2}) / 2, so budgets
decrease exponentially while publications follow each other and come back as old ones leave the
window.

**BA** (budget absorption): every step is allotted ε/(2w) for publication. A step that publishes
absorbs the allotments of the steps skipped since the previous publication's nullified ones,
ε_{t,2} = ε/(2w) · min(t_A, w) with t_A the number of those steps (itself included); the
t_A − 1 steps after it are then nullified (they repeat the release whatever the dissimilarity),
so no window holds more than ε/2 of publication budget.

Either way every window of w steps spends at most ε/2 on dissimilarities and ε/2 on
publications; :func:`veil.dp.continual.w_event_counts` and the histogram and sum releases charge
each part to a :class:`~veil.dp.window_accountant.WindowAccountant` before its noise is drawn, and the
tests check every window exactly. Budgets are kept exactly, as whole multiples of the grid
ε/(2w · 2³⁰): BD's halving is rounded down to it (spending less, never more), and a budget that
rounds to 0 skips the step.

The decision to publish depends on the data only through the noisy dissimilarity, which M_{t,1}
pays for; which steps published is therefore a function of DP outputs and can be shown.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from veil.dp.noise import NoiseSource
from veil.errors import ParameterError

__all__ = ["AdaptiveRun", "GRID_BITS", "budget_absorption", "budget_distribution"]

#: the budgets are whole multiples of ε / (2w · 2**GRID_BITS)
GRID_BITS = 30

Charge = Callable[[int, Fraction, str], object]


@dataclass(frozen=True)
class AdaptiveRun:
    """What an adaptive w-event strategy released, step by step.

    Attributes:
        values: the released statistics, shape (T, d): a fresh publication or a repeat.
        published: whether each step published (True) or repeated the last release (False).
        shown: for each step, the index of the publication it shows (−1: none yet, the zero vector).
        scales: the Laplace scale of the publication each step shows (NaN before the first).
        dissimilarity_units, publication_units: each step's two budgets as whole multiples of ``unit``.
        unit: ε / (2w · 2**GRID_BITS), exact.
        strategy: ``"bd"`` or ``"ba"``.
    """

    values: np.ndarray
    published: np.ndarray
    shown: np.ndarray
    scales: np.ndarray
    dissimilarity_units: np.ndarray
    publication_units: np.ndarray
    unit: Fraction
    strategy: str

    @property
    def step_units(self) -> np.ndarray:
        """Each step's whole budget, in units."""
        return self.dissimilarity_units + self.publication_units


def _run(strategy: str, values: np.ndarray, epsilon: Fraction, w: int, sensitivity: float, noise: NoiseSource,
         charge: Charge | None) -> AdaptiveRun:
    if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 1:
        raise ParameterError("the statistics must form a table of T >= 1 steps by d >= 1 values.")
    T, d = values.shape
    share = 1 << GRID_BITS          # ε/(2w) in units: each step's dissimilarity budget and BA allotment
    half = w * share                # ε/2 in units: a window's publication budget
    unit = epsilon / (2 * w * share)
    dis_scale = sensitivity / (d * float(share * unit))
    out = np.empty_like(values, dtype=float)
    published = np.zeros(T, dtype=bool)
    shown = np.full(T, -1, dtype=np.int64)
    scales = np.full(T, np.nan)
    pub_units = np.zeros(T, dtype=np.int64)
    last = np.zeros(d)
    last_index, last_scale = -1, np.nan
    nullified_until = -1            # BA: the last step the previous publication nullified
    for t in range(T):  # each step's budget depends on the decisions before it: a recurrence over time
        if charge is not None:
            charge(t, share * unit, "dissimilarity")
        dis = float(np.abs(values[t] - last).mean())
        noisy = float(noise.laplace(np.array([dis]), dis_scale)[0])
        if strategy == "bd":
            budget = (half - int(pub_units[max(0, t - w + 1):t].sum())) // 2
        elif t <= nullified_until:
            budget = 0
        else:
            budget = share * min(t - nullified_until, w)
        if budget <= 0 or noisy <= sensitivity / float(budget * unit):
            budget = 0
        if budget > 0:
            if charge is not None:
                charge(t, budget * unit, "publication")
            last_scale = sensitivity / float(budget * unit)
            last = noise.laplace(values[t].astype(float), last_scale)
            last_index = t
            published[t] = True
            pub_units[t] = budget
            if strategy == "ba":
                nullified_until = t + budget // share - 1
        out[t] = last
        shown[t] = last_index
        scales[t] = last_scale
    dis_units = np.full(T, share, dtype=np.int64)
    return AdaptiveRun(out, published, shown, scales, dis_units, pub_units, unit, strategy)


def _check(values, epsilon: Fraction, w: int, sensitivity: float) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if not np.all(np.isfinite(arr)):
        raise ParameterError("the statistics must be finite numbers.")
    if not isinstance(epsilon, Fraction) or epsilon <= 0:
        raise ParameterError(f"epsilon must be a positive exact number, got {epsilon!r}.")
    if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 1:
        raise ParameterError(f"the window length w must be a whole number >= 1, got {w!r}.")
    if not (np.isfinite(sensitivity) and sensitivity > 0):
        raise ParameterError(f"the sensitivity must be a positive finite number, got {sensitivity!r}.")
    return arr


def budget_distribution(values, epsilon: Fraction, w: int, *, noise: NoiseSource, sensitivity: float = 1.0,
                        charge: Charge | None = None) -> AdaptiveRun:
    """Kellaris et al.'s budget distribution (BD): w-event ε-DP release of a stream of statistics.

    Args:
        values: the true statistics per step, shape (T,) or (T, d); one user changes a step's
            values by at most ``sensitivity`` in L1.
        epsilon: the budget of any window of w steps (exact).
        w: the window length, w >= 1.
        noise: the noise source.
        sensitivity: Δ, the L1 sensitivity of one step's statistics.
        charge: called as ``charge(t, ε, part)`` before every noise draw (t counted from 0,
            ``part`` ``"dissimilarity"`` or ``"publication"``), so an accountant can refuse first.

    Raises:
        ParameterError: statistics that are not finite, ε <= 0, w < 1, Δ <= 0.
    """
    return _run("bd", _check(values, epsilon, w, sensitivity), epsilon, w, float(sensitivity), noise, charge)


def budget_absorption(values, epsilon: Fraction, w: int, *, noise: NoiseSource, sensitivity: float = 1.0,
                      charge: Charge | None = None) -> AdaptiveRun:
    """Kellaris et al.'s budget absorption (BA): w-event ε-DP release of a stream of statistics.

    Args:
        values: the true statistics per step, shape (T,) or (T, d).
        epsilon: the budget of any window of w steps (exact).
        w: the window length, w >= 1.
        noise: the noise source.
        sensitivity: Δ, the L1 sensitivity of one step's statistics.
        charge: called as ``charge(t, ε, part)`` before every noise draw (see :func:`budget_distribution`).

    Raises:
        ParameterError: statistics that are not finite, ε <= 0, w < 1, Δ <= 0.
    """
    return _run("ba", _check(values, epsilon, w, sensitivity), epsilon, w, float(sensitivity), noise, charge)
