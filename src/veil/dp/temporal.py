"""Temporal privacy leakage of a continual release when a user's data is correlated in time.

Cao, Yoshikawa, Xiao and Xiong, "Quantifying differential privacy under temporal correlations"
(ICDE 2017) and "Quantifying differential privacy in continuous data release under temporal
correlations" (TKDE 2018). A user's value at each time step follows a Markov chain that the
adversary knows:

* the **backward** transition matrix P^B, ``P^B[i, j] = Pr(l_{t-1} = j | l_t = i)``;
* the **forward** transition matrix P^F, ``P^F[i, j] = Pr(l_t = j | l_{t-1} = i)``.

Both are row-stochastic (every row is a probability distribution). A mechanism M_t that is
ε_t-differentially private for the data at step t then leaks more than ε_t about the user's value
at t, because earlier and later releases carry information about it through the chain:

* backward privacy loss, BPL_1 = ε_1 and BPL_t = L^B(BPL_{t-1}) + ε_t;
* forward privacy loss, FPL_T = ε_T and FPL_t = L^F(FPL_{t+1}) + ε_t (T the last step);
* temporal privacy leakage, TPL_t = BPL_t + FPL_t − ε_t.

**L(α)** (Cao et al., the theorem on the linear-fractional program) is the most that a loss of α
at one step can become at the next through the matrix: the maximum, over ordered pairs of
distinct rows q, d of the matrix, of

    log  max_x  (q · x) / (d · x)   subject to  x_j ≤ e^α x_k for all j, k,  x > 0.

The theorem solves it in closed form: L_{q,d}(α) = log((q⁺(e^α − 1) + 1) / (d⁺(e^α − 1) + 1))
where q⁺ and d⁺ are the sums of q and d over the indices k whose ratio q_k / d_k exceeds that very
value. The paper finds those indices by iterative pruning: start from {k : q_k > d_k}, drop every
k whose ratio does not exceed the current value, and repeat until nothing changes
(:func:`temporal_loss`, vectorized over all pairs of rows at once; :class:`TemporalCorrelation`
evaluates the same maximum over the candidate index sets it prepares once per matrix).
L(0) = 0 and L(α) ≤ α; the identity matrix (strongest correlation) gives L(α) = α, so BPL grows
like sequential composition; a matrix of identical rows (no correlation) gives L(α) = 0 and
TPL_t = ε_t.

**Windows.** Cao et al.'s sequential composition under temporal correlation: the releases at the
w steps s = m − w + 1, …, m together leak BPL_s + FPL_m + Σ_{i=s+1}^{m−1} ε_i when w ≥ 2, and TPL_m
when w = 1 (:meth:`TemporalCorrelation.leakage`).

**The supremum.** With the same ε at every step, BPL_t increases towards the smallest fixed point
α* of α = L^B(α) + ε, which exists exactly when e^ε · Σ_{k : d_k = 0} q_k < 1 for every ordered
pair of rows (q, d) (the iteration jumps from one closed-form root to the next and stops at α*);
likewise FPL, and sup_t TPL_t = α^B* + α^F* − ε (:meth:`TemporalCorrelation.supremum`).

**Budget allocation.** Cao et al.'s upper-bound allocation: the largest constant ε whose supremum
of TPL stays within a target α, so that the leakage stays under α at every step of any horizon
(:meth:`TemporalCorrelation.allocate`).

The leakage figures are accounting computed in floating point (a logarithm of a ratio); the budget
an allocation hands out is rounded *down* to a multiple of 10⁻¹² and checked again, so the
rounding never favours the user.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from veil.errors import ParameterError

__all__ = ["Leakage", "LeakageTracker", "Supremum", "TemporalCorrelation", "check_transition_matrix", "temporal_loss"]

#: how far a row's sum may be from 1 and still count as a probability distribution
ROW_SUM_TOLERANCE = 1e-9
#: the grid an allocated budget is rounded down to
ALLOCATION_GRID = 10 ** 12


# --------------------------------------------------------------------------- checks

def check_transition_matrix(matrix: Any, name: str = "transition matrix") -> np.ndarray:
    """A transition matrix as a float array, refusing one that is not square and row-stochastic.

    Args:
        matrix: an n × n array-like of probabilities, n >= 1.
        name: how messages call it (``"backward transition matrix"``).

    Returns:
        A new float array (the input is never changed).

    Raises:
        ParameterError: not a square matrix of finite numbers, a negative entry, or a row whose
            sum differs from 1 by more than 1e-9 (the message names the row, counted from 1).
    """
    try:
        arr = np.array(matrix, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"the {name} must be a square matrix of numbers.") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ParameterError(f"the {name} must be a square matrix (n rows of n probabilities), got shape "
                             f"{arr.shape}.")
    if not np.all(np.isfinite(arr)):
        row = int(np.nonzero(~np.isfinite(arr).all(axis=1))[0][0]) + 1
        raise ParameterError(f"row {row} of the {name} holds a value that is not a finite number.")
    if np.any(arr < 0):
        row = int(np.nonzero((arr < 0).any(axis=1))[0][0]) + 1
        raise ParameterError(f"row {row} of the {name} has a negative entry; a transition matrix holds "
                             "probabilities.")
    sums = arr.sum(axis=1)
    off = np.abs(sums - 1.0) > ROW_SUM_TOLERANCE
    if np.any(off):
        row = int(np.nonzero(off)[0][0])
        raise ParameterError(f"row {row + 1} of the {name} sums to {sums[row]:.12g}, not 1; the matrix must be "
                             "row-stochastic (each row a probability distribution).")
    return arr


def _epsilons(epsilons: Any) -> np.ndarray:
    try:
        raw = np.asarray(epsilons, dtype=object)
        arr = np.array([float(e) for e in raw.ravel()], dtype=float).reshape(raw.shape)
    except (TypeError, ValueError):
        raise ParameterError("the per-step budgets ε_t must be numbers, one per time step.") from None
    if arr.ndim != 1 or arr.size < 1:
        raise ParameterError("the per-step budgets ε_t must be a non-empty sequence, one number per time step.")
    if not np.all(np.isfinite(arr)):
        raise ParameterError("the per-step budgets ε_t must be finite numbers.")
    if np.any(arr < 0):
        step = int(np.argmax(arr < 0))
        raise ParameterError(f"ε_t must be >= 0 at every step, got {arr[step]:g} at step {step + 1}.")
    return arr


def _window(w: Any) -> int:
    if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 1:
        raise ParameterError(f"the window length w must be a whole number >= 1, got {w!r}.")
    return int(w)


def _alpha(alpha: Any, name: str = "alpha") -> float:
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {alpha!r}.") from None
    if not math.isfinite(value) or value < 0:
        raise ParameterError(f"{name} must be a finite number >= 0, got {alpha!r}.")
    return value


# --------------------------------------------------------------------------- L(α): the theorem

def _row_pairs(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (q, d) of distinct rows, as two arrays of shape (pairs, n)."""
    n = matrix.shape[0]
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return matrix[i], matrix[j]


def _pruned(q: np.ndarray, d: np.ndarray, alpha: float) -> np.ndarray:
    """Cao et al.'s iterative pruning for every pair at once: the value of each pair's program,
    max (q·x)/(d·x), which is >= 1."""
    x = math.expm1(alpha)
    keep = q > d
    while True:
        q_plus = np.where(keep, q, 0.0).sum(axis=1)
        d_plus = np.where(keep, d, 0.0).sum(axis=1)
        value = (1.0 + q_plus * x) / (1.0 + d_plus * x)
        # an index stays while its ratio q_k / d_k exceeds the pair's value (d_k = 0: always, if q_k > 0)
        pruned = keep & (q > d * value[:, None])
        if np.array_equal(pruned, keep):
            return value
        keep = pruned


def temporal_loss(matrix: Any, alpha: float) -> float:
    """L(α) of Cao et al.: the most a privacy loss α at one step becomes at the next through ``matrix``.

    The maximum, over ordered pairs (q, d) of distinct rows, of the linear-fractional program
    log max (q·x)/(d·x) subject to x_j ≤ e^α x_k for all j, k, solved by the paper's closed-form
    theorem with its iterative pruning of the indices of each pair (see the module notes).

    Args:
        matrix: a row-stochastic n × n transition matrix (backward for BPL, forward for FPL).
        alpha: the privacy loss α >= 0 at the previous (backward) or next (forward) step.

    Returns:
        L(α), with 0 <= L(α) <= α.

    Raises:
        ParameterError: a matrix that is not row-stochastic (naming the row), or α < 0.
    """
    arr = check_transition_matrix(matrix)
    alpha = _alpha(alpha)
    if alpha == 0.0 or arr.shape[0] < 2:
        return 0.0
    q, d = _row_pairs(arr)
    value = _pruned(q, d, alpha)
    return float(math.log(max(1.0, float(value.max()))))


class _Chain:
    """One transition matrix prepared so that L(α) is one small vectorized expression.

    By the theorem, the indices a pair (q, d) keeps at its optimum are those whose ratio q_k / d_k
    exceeds a threshold: one of the n prefixes of the indices sorted by that ratio. So
    L(α) = log max over every pair and prefix of (q⁺(e^α − 1) + 1)/(d⁺(e^α − 1) + 1), the same
    value the iterative pruning finds (:func:`temporal_loss`; the tests compare both with a
    linear program). The sums (q⁺, d⁺) of every prefix are computed once; a prefix whose q⁺ is no
    larger and d⁺ no smaller than another's can never attain the maximum and is dropped.
    """

    def __init__(self, matrix: np.ndarray):
        self.matrix = matrix
        q, d = _row_pairs(matrix)
        self.pairs = len(q)
        # the mass of q where d is 0, per pair: a pair whose e^ε times it reaches 1 lets the loss grow
        # without bound (the supremum)
        self.disjoint = np.where(d == 0, q, 0.0).sum(axis=1) if self.pairs else np.zeros(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(q > 0, q / d, -np.inf)          # d_k = 0 < q_k: +inf, first in every prefix
        order = np.argsort(-ratio, axis=1, kind="stable")
        a = np.cumsum(np.take_along_axis(q, order, axis=1), axis=1).ravel()
        b = np.cumsum(np.take_along_axis(d, order, axis=1), axis=1).ravel()
        a, b = np.concatenate([[0.0], a]), np.concatenate([[0.0], b])  # the empty set: L = 0
        # the Pareto front: by increasing d⁺ (larger q⁺ first among ties), keep a point only when
        # its q⁺ beats every point before it
        by = np.lexsort((-a, b))
        a, b = a[by], b[by]
        best_before = np.concatenate([[-np.inf], np.maximum.accumulate(a)[:-1]])
        front = a > best_before
        self.q_plus, self.d_plus = a[front], b[front]

    def _values(self, alpha: float) -> np.ndarray:
        x = math.expm1(alpha)
        return (1.0 + self.q_plus * x) / (1.0 + self.d_plus * x)

    def loss(self, alpha: float) -> float:
        if alpha == 0.0 or self.pairs == 0:
            return 0.0
        return float(math.log(max(1.0, float(self._values(alpha).max()))))

    def bounded(self, epsilon: float) -> bool:
        """Whether α = L(α) + ε has a finite solution."""
        return self.pairs == 0 or bool(math.exp(epsilon) * float(self.disjoint.max()) < 1.0)

    def fixed_point(self, epsilon: float) -> float:
        """The smallest α with α = L(α) + ε (the supremum of BPL or FPL); ``inf`` when there is none.

        Each step takes the sums (q⁺, d⁺) that attain L at the current α and jumps to the root of
        α = log((q⁺(e^α − 1) + 1)/(d⁺(e^α − 1) + 1)) + ε; the roots only grow, never pass α*, and
        there are finitely many, so the jumps end at α*.
        """
        if self.pairs == 0:
            return epsilon
        if not self.bounded(epsilon):
            return math.inf
        alpha = epsilon
        for _ in range(self.q_plus.shape[0] + 8):
            k = int(np.argmax(self._values(alpha)))
            root = _root(float(self.q_plus[k]), float(self.d_plus[k]), epsilon)
            if root <= alpha * (1 + 1e-15):
                break
            alpha = root
        return alpha


def _root(q: float, d: float, epsilon: float) -> float:
    """The positive root α of α = log((q(e^α − 1) + 1)/(d(e^α − 1) + 1)) + ε, i.e. y = e^α solving
    d y² + (1 − d − e^ε q) y − e^ε (1 − q) = 0."""
    e = math.exp(epsilon)
    c = e * (1.0 - q)
    if d == 0.0:
        return math.log(c / (1.0 - e * q))
    b = 1.0 - d - e * q
    disc = math.sqrt(b * b + 4.0 * d * c)
    # the form without cancellation for either sign of b
    y = (disc - b) / (2.0 * d) if b <= 0 else 2.0 * c / (b + disc)
    return math.log(y)


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class Leakage:
    """The privacy loss of a release at every step under temporal correlation (Cao et al.).

    Steps are counted from 1. All arrays have one entry per step.

    Attributes:
        epsilon: ε_t, what each step's release costs on its own (0 where nothing was released).
        backward: BPL_t, the backward privacy loss.
        forward: FPL_t, the forward privacy loss (the horizon is the last step given).
        temporal: TPL_t = BPL_t + FPL_t − ε_t, the temporal privacy leakage at step t.
        w: the window length of ``window``.
        window: the leakage of the releases at the w steps ending at t (fewer at the start):
            TPL_t when w = 1, else BPL_s + FPL_t + Σ_{s<i<t} ε_i with s = max(1, t − w + 1).
        sequential: Σ_{i<=t} ε_i, what sequential composition charges up to t (the identity
            matrix's BPL).
    """

    epsilon: np.ndarray
    backward: np.ndarray
    forward: np.ndarray
    temporal: np.ndarray
    w: int
    window: np.ndarray
    sequential: np.ndarray

    @property
    def maximum(self) -> float:
        """The largest leakage of any window of w steps: what the release guarantees."""
        return float(self.window.max())

    def to_frame(self, first_step: int = 1):
        """The columns as a pandas DataFrame, one row per step numbered from ``first_step``.

        Args:
            first_step: the number of the first step.
        """
        import pandas as pd

        steps = np.arange(first_step, first_step + self.epsilon.shape[0])
        return pd.DataFrame({"step": steps, "epsilon": self.epsilon, "sequential": self.sequential,
                             "backward": self.backward, "forward": self.forward, "temporal": self.temporal,
                             f"window_{self.w}": self.window})


@dataclass(frozen=True)
class Supremum:
    """The leakage as the horizon and the step grow without bound, for the same ε at every step.

    Attributes:
        epsilon: the ε released at every step.
        backward, forward: the suprema of BPL and FPL (``inf`` when they grow without bound).
        temporal: the supremum of TPL, backward + forward − ε.
        w: the window length of ``window``.
        window: the supremum of the leakage of w consecutive steps: ``temporal`` for w = 1, else
            backward + forward + (w − 2) ε.
    """

    epsilon: float
    backward: float
    forward: float
    temporal: float
    w: int
    window: float

    @property
    def exists(self) -> bool:
        """Whether the leakage stays bounded (it does unless some pair of rows lets it grow)."""
        return math.isfinite(self.window)


# --------------------------------------------------------------------------- the model

class TemporalCorrelation:
    """The temporal correlations an adversary knows: backward and forward transition matrices.

    Cao, Yoshikawa, Xiao and Xiong (ICDE 2017; TKDE 2018); see the module notes for the
    definitions of BPL, FPL, TPL, L(α), the windows, the supremum and the allocation.

    Args:
        backward: P^B, ``P^B[i, j] = Pr(value at t−1 is j | value at t is i)``, or ``None`` when the
            adversary knows no backward correlation (then L^B = 0).
        forward: P^F, ``P^F[i, j] = Pr(value at t is j | value at t−1 is i)``, or ``None`` (L^F = 0).

    Attributes:
        backward, forward: the validated matrices (new float arrays) or ``None``.

    Raises:
        ParameterError: a matrix that is not square and row-stochastic (the message names the
            matrix and the row).
    """

    def __init__(self, backward: Any = None, forward: Any = None):
        self.backward = None if backward is None else check_transition_matrix(backward, "backward transition matrix")
        self.forward = None if forward is None else check_transition_matrix(forward, "forward transition matrix")
        if self.backward is not None and self.forward is not None and self.backward.shape != self.forward.shape:
            raise ParameterError(f"the backward and forward transition matrices must be over the same values, got "
                                 f"{self.backward.shape[0]} and {self.forward.shape[0]} values.")
        self._chains = {"backward": None if self.backward is None else _Chain(self.backward),
                        "forward": None if self.forward is None else _Chain(self.forward)}

    def __repr__(self) -> str:
        shape = lambda m: "None" if m is None else f"{m.shape[0]}×{m.shape[1]}"  # noqa: E731
        return f"TemporalCorrelation(backward={shape(self.backward)}, forward={shape(self.forward)})"

    # -- L(α)

    def loss(self, alpha: float, direction: str = "backward") -> float:
        """L^B(α) or L^F(α) by Cao et al.'s theorem (0 when that matrix is not known).

        Args:
            alpha: the privacy loss α >= 0 at the neighbouring step.
            direction: ``"backward"`` or ``"forward"``.

        Raises:
            ParameterError: α < 0 or an unknown direction.
        """
        if direction not in self._chains:
            raise ParameterError(f"direction must be 'backward' or 'forward', got {direction!r}.")
        chain = self._chains[direction]
        return 0.0 if chain is None else chain.loss(_alpha(alpha))

    def _recurrence(self, eps: np.ndarray, direction: str) -> np.ndarray:
        chain = self._chains[direction]
        order = eps if direction == "backward" else eps[::-1]
        out = np.empty_like(order)
        previous = 0.0
        for t, e in enumerate(order):  # each step depends on the one before: a recurrence over time
            previous = e + (chain.loss(previous) if chain is not None and t else 0.0)
            out[t] = previous
        return out if direction == "backward" else out[::-1]

    def backward_loss(self, epsilons: Any) -> np.ndarray:
        """BPL_t for every step: BPL_1 = ε_1, BPL_t = L^B(BPL_{t−1}) + ε_t.

        Args:
            epsilons: ε_t >= 0 per step (0 where nothing was released).

        Raises:
            ParameterError: an empty sequence, or an ε_t that is negative or not a finite number.
        """
        return self._recurrence(_epsilons(epsilons), "backward")

    def forward_loss(self, epsilons: Any) -> np.ndarray:
        """FPL_t for every step of a horizon ending at the last step: FPL_T = ε_T, FPL_t = L^F(FPL_{t+1}) + ε_t.

        Args:
            epsilons: ε_t >= 0 per step.

        Raises:
            ParameterError: as :meth:`backward_loss`.
        """
        return self._recurrence(_epsilons(epsilons), "forward")

    def leakage(self, epsilons: Any, w: int = 1) -> Leakage:
        """BPL, FPL, TPL and the leakage of every window of w steps (Cao et al.'s composition).

        Args:
            epsilons: ε_t >= 0 per step, the horizon being the last step.
            w: the window length, w >= 1 (1: the leakage of each step's value, TPL_t).

        Raises:
            ParameterError: w < 1, or a bad ε_t (see :meth:`backward_loss`).
        """
        eps = _epsilons(epsilons)
        w = _window(w)
        bpl = self._recurrence(eps, "backward")
        fpl = self._recurrence(eps, "forward")
        tpl = bpl + fpl - eps
        return Leakage(eps, bpl, fpl, tpl, w, _windows(eps, bpl, fpl, tpl, w), np.cumsum(eps))

    # -- the supremum and the allocation

    def supremum(self, epsilon: float, w: int = 1) -> Supremum:
        """The suprema of BPL, FPL, TPL and of a window's leakage, for ε at every step.

        Args:
            epsilon: the ε > 0 released at every step.
            w: the window length, w >= 1.

        Raises:
            ParameterError: ε <= 0 or w < 1.
        """
        eps = _alpha(epsilon, "epsilon")
        if eps == 0:
            raise ParameterError("epsilon must be greater than 0.")
        w = _window(w)
        sup = {name: eps if chain is None else chain.fixed_point(eps) for name, chain in self._chains.items()}
        b, f = sup["backward"], sup["forward"]
        temporal = b + f - eps
        window = temporal if w == 1 else b + f + (w - 2) * eps
        return Supremum(eps, b, f, temporal, w, window)

    def allocate(self, alpha: float, w: int = 1) -> Fraction:
        """Cao et al.'s upper-bound allocation: the largest ε, the same at every step, whose
        supremum of leakage (of each step, or of each window of w steps) is at most ``alpha``.

        Released with this ε at every step, the leakage stays within α at every step of any
        horizon. The ε is rounded down to a multiple of 10⁻¹² and its supremum checked again.

        Args:
            alpha: the target leakage α > 0.
            w: the window length, w >= 1.

        Returns:
            The per-step budget, exact (a Fraction on the grid).

        Raises:
            ParameterError: α <= 0, w < 1, correlations under which the leakage grows without
                bound for every ε > 0 (a pair of rows with disjoint supports), or an α so small
                that the budget rounds to 0.
        """
        target = _alpha(alpha)
        if target == 0:
            raise ParameterError("alpha, the target leakage, must be greater than 0.")
        w = _window(w)
        cap = math.inf
        for name, chain in self._chains.items():
            if chain is None or chain.pairs == 0:
                continue
            worst = float(chain.disjoint.max())
            if worst >= 1.0:
                k = int(np.argmax(chain.disjoint))
                i, j = np.nonzero(~np.eye(chain.matrix.shape[0], dtype=bool))
                raise ParameterError(
                    f"rows {i[k] + 1} and {j[k] + 1} of the {name} transition matrix have disjoint supports, so the "
                    "leakage grows without bound for every epsilon > 0 and no constant budget keeps it under "
                    "alpha; check a finite horizon with leakage() instead.")
            if worst > 0:
                cap = min(cap, -math.log(worst))

        def excess(eps: float) -> float:
            return self.supremum(eps, w).window - target

        hi = min(target, cap)
        if math.isfinite(cap) and hi == cap:
            hi = math.nextafter(cap, 0.0)
        lo = 0.0
        if excess(hi) <= 0:
            lo = hi
        else:
            for _ in range(200):
                mid = (lo + hi) / 2
                if mid in (lo, hi):
                    break
                if excess(mid) <= 0:
                    lo = mid
                else:
                    hi = mid
        eps = Fraction(math.floor(lo * ALLOCATION_GRID), ALLOCATION_GRID)
        while eps > 0 and excess(float(eps)) > 0:
            eps -= Fraction(1, ALLOCATION_GRID)
        if eps <= 0:
            raise ParameterError(f"alpha = {target:g} is too small to allocate a budget of at least 1e-12 per step "
                                 "under these correlations; raise alpha.")
        return eps


def _windows(eps: np.ndarray, bpl: np.ndarray, fpl: np.ndarray, tpl: np.ndarray, w: int) -> np.ndarray:
    """The leakage of the window of w steps ending at each step (clipped at the first step)."""
    if w == 1:
        return tpl.copy()
    m = np.arange(eps.shape[0])
    s = np.maximum(m - w + 1, 0)
    cum = np.concatenate([[0.0], np.cumsum(eps)])
    inner = cum[m] - cum[np.minimum(s + 1, m)]  # Σ ε_i for s < i < m
    return np.where(s == m, tpl, bpl[s] + fpl + inner)


class LeakageTracker:
    """The leakage of a stream that grows one release at a time, updated instead of recomputed.

    A release added at step k changes BPL only from k on, and FPL only back to the first earlier
    step where the recurrence comes out equal to what it was (from there back nothing changes);
    with correlations that fade, that is a few steps, so a budget that checks every window at
    every charge (:class:`veil.dp.correlation_accountant.TemporalCorrelationAccountant`) does not redo the
    whole horizon each time. Steps are indices 0, 1, … from the first release. A tracker never
    changes: :meth:`with_step` returns a new one.

    Args:
        correlation: the transition matrices.
        w: the window length, w >= 1.

    Raises:
        ParameterError: w < 1.
    """

    def __init__(self, correlation: TemporalCorrelation, w: int = 1):
        self.correlation = correlation
        self.w = _window(w)
        self._eps: list[float] = []
        self._bpl: list[float] = []
        self._fpl: list[float] = []
        self._cum: list[float] = [0.0]
        self._best: list[float] = []  # the largest leakage of the windows ending at or before each step

    @property
    def worst(self) -> float:
        """The largest leakage of a window of w steps so far (0 before any release)."""
        return self._best[-1] if self._best else 0.0

    @property
    def steps(self) -> int:
        """How many steps the tracker follows (from the first release to the latest)."""
        return len(self._eps)

    def _loss(self, direction: str, alpha: float) -> float:
        chain = self.correlation._chains[direction]
        return 0.0 if chain is None else chain.loss(alpha)

    def with_step(self, index: int, total: float) -> LeakageTracker:
        """A new tracker in which step ``index`` released ``total`` in all.

        Args:
            index: the step, never before the latest one (a later one leaves ε = 0 in between).
            total: ε of everything released at that step, a new release included.

        Raises:
            ParameterError: a step before the latest one, or a negative total.
        """
        if index < len(self._eps) - 1 or index < 0:
            raise ParameterError(f"step index {index} is before the latest release; a stream only moves forward.")
        if not total >= 0:
            raise ParameterError(f"ε_t must be >= 0 at every step, got {total!r} at step index {index}.")
        eps = self._eps + [0.0] * (index + 1 - len(self._eps))
        eps[index] = float(total)
        n = len(eps)
        start = min(index, len(self._eps))  # the first step whose ε is new
        bpl = self._bpl[:start]
        for i in range(start, n):  # a recurrence over time steps
            bpl.append(eps[i] + (self._loss("backward", bpl[i - 1]) if i else 0.0))
        fpl = [0.0] * n
        fpl[n - 1] = eps[n - 1]
        changed = 0
        for i in range(n - 2, -1, -1):
            value = eps[i] + self._loss("forward", fpl[i + 1])
            if i < index and i < len(self._fpl) and value == self._fpl[i]:
                fpl[:i + 1] = self._fpl[:i + 1]
                changed = i + 1
                break
            fpl[i] = value
        cum = self._cum[:start + 1]
        for i in range(start, n):
            cum.append(cum[-1] + eps[i])
        # the windows ending at or after the first step whose FPL changed; the others are as before
        m = np.arange(changed, n)
        s = np.maximum(m - self.w + 1, 0)
        b, f, e, c = (np.asarray(v) for v in (bpl, fpl, eps, cum))
        tail = np.where(s == m, b[m] + f[m] - e[m], b[s] + f[m] + c[m] - c[np.minimum(s + 1, m)])
        before = self._best[changed - 1] if changed else -math.inf
        new = LeakageTracker.__new__(LeakageTracker)
        new.correlation, new.w = self.correlation, self.w
        new._eps, new._bpl, new._fpl, new._cum = eps, bpl, fpl, cum
        new._best = self._best[:changed] + np.maximum.accumulate(np.maximum(tail, before)).tolist()
        return new
