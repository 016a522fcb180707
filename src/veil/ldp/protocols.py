"""Local DP frequency oracles: GRR, SUE (basic RAPPOR), OUE, BLH and OLH.

Each of ``n`` users holds one value in the domain ``{0, 1, …, d − 1}`` and sends the aggregator a
randomized report that satisfies ε-local differential privacy: for any two inputs ``v``, ``v'``
and any report ``y``, ``P[y | v] ≤ e^ε · P[y | v']``. The aggregator counts, for each value ``v``,
the reports that *support* ``v`` (``I_v``) and estimates how many users hold ``v``.

Wang, Blocki, Li and Jha (USENIX Security 2017) describe every protocol here as a *pure* protocol
with two numbers: ``p*`` = P[the report supports v | the user holds v] and ``q*`` = P[the report
supports v | the user holds another value]. Then

* the estimator ``ĉ(v) = (I_v − n·q*) / (p* − q*)`` is unbiased, and
* its variance is ``Var[ĉ(v)] = n·q*(1 − q*)/(p* − q*)² + c_v·(1 − p* − q*)/(p* − q*)``, where
  ``c_v`` is the true count of v.

``variance(n)`` returns the first term, which is the paper's Var* (the approximation it uses to
compare protocols; exact when c_v = 0, and the second term is small when f_v is); with
``counts=`` it returns the exact per-value variance, both terms. The paper's closed forms:

====== ========================================== ================================== =========================
name   p*                                         q*                                 Var*/n
====== ========================================== ================================== =========================
GRR    e^ε/(e^ε + d − 1)                          1/(e^ε + d − 1)                    (e^ε + d − 2)/(e^ε − 1)²
SUE    e^(ε/2)/(e^(ε/2) + 1)                      1/(e^(ε/2) + 1)                    e^(ε/2)/(e^(ε/2) − 1)²
OUE    1/2                                        1/(e^ε + 1)                        4e^ε/(e^ε − 1)²
BLH    e^ε/(e^ε + 1)                              1/2                                (e^ε + 1)²/(e^ε − 1)²
OLH    e^ε/(e^ε + g − 1), g = round(e^ε) + 1      1/g                                (e^ε − 1 + g)²/((e^ε − 1)²(g − 1))
====== ========================================== ================================== =========================

**Reports.** GRR: one int per user. SUE/OUE: an ``n × d`` boolean matrix (one bit per value) —
for a million users over 1,024 values that is 1 GB, so :meth:`perturb_and_aggregate` perturbs
users in chunks and keeps only the column sums (memory ``O(chunk · d)``). BLH/OLH: three arrays
``(y, a, b)``: the perturbed hash value ``y ∈ [0, g)`` and the user's hash seed ``(a, b)``.

**Hashing.** Local hashing uses the Carter–Wegman universal family
``h_{a,b}(x) = ((a·x + b) mod P) mod g`` with the Mersenne prime ``P = 2⁶¹ − 1``, ``a`` uniform in
``[1, P)`` and ``b`` uniform in ``[0, P)``, drawn per user. The client evaluates it with an exact
61-bit modular multiply built from 32-bit halves in ``uint64`` (no overflow, no Python ints). The
aggregator must evaluate every user's hash at every value (``n·d`` evaluations); it walks the
values in order with ``r ← (r + a) mod P`` (an add, a subtract and a minimum in ``uint64``), tests
``r ≡ y (mod g)`` without a division (a mask when g is a power of two, a multiply by the inverse
of g mod 2⁶⁴ when g is odd), over chunks of users that fit the cache, on all cores (NumPy
releases the GIL). Pairwise independence makes ``q* = 1/g`` up to the rounding of ``P`` into g
residues, a relative error below g/2⁶¹.

**Randomness.** ``rng=None`` (the default) draws the coins from the operating system's CSPRNG and
marks the reports ``fit_for_release=True``; a seed or a ``numpy.random.Generator`` is a
simulation, marked ``False`` (see :mod:`veil.ldp.randomness`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil.errors import ParameterError
from veil.ldp.randomness import MERSENNE_61, Randomness, as_randomness
from veil.parallel import map_threads

__all__ = [
    "BLH",
    "GRR",
    "OLH",
    "OUE",
    "PROTOCOLS",
    "SUE",
    "FrequencyOracle",
    "Reports",
    "Supports",
    "choose_protocol",
    "make_protocol",
    "postprocess",
    "universal_hash",
]

_P = np.uint64(MERSENNE_61)
_MASK32 = np.uint64(0xFFFFFFFF)
_MASK29 = np.uint64((1 << 29) - 1)
_SEED_BITS = 122  # a and b, 61 bits each
_MAX_EPSILON = 700.0  # e^ε must stay a finite float
# Below, e^ε − 1 keeps too few digits for p* − q* (and the estimator that divides by it) to mean anything.
_MIN_EPSILON = 1e-9


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class Reports:
    """What the clients sent.

    Attributes:
        protocol: the protocol's name (``"GRR"``, ``"OUE"``, …).
        data: GRR: int64 ``(n,)``; SUE/OUE: bool ``(n, d)``; BLH/OLH: a tuple ``(y, a, b)`` of
            ``(n,)`` arrays (int64 hash value, uint64 seeds). One user's report (``single``) has
            no users axis: an int64, ``d`` bits, or a triple of numbers.
        fit_for_release: True when the coins came from the secure source.
        single: the report of one user, made from a scalar value.
    """

    protocol: str
    data: Any
    fit_for_release: bool
    single: bool = False

    def __len__(self) -> int:
        if self.single:
            return 1
        return len(self.data[0]) if isinstance(self.data, tuple) else len(self.data)

    def batch(self) -> Any:
        """The data with a users axis (a single report becomes a batch of one)."""
        if not self.single:
            return self.data
        if isinstance(self.data, tuple):
            return tuple(np.asarray(part)[None] for part in self.data)
        return np.asarray(self.data)[None]


@dataclass(frozen=True)
class Supports:
    """The aggregate of n reports: ``counts[v]`` = the number of reports supporting v."""

    protocol: str
    counts: np.ndarray
    n: int
    fit_for_release: bool


# --------------------------------------------------------------------------- checks

def _check_epsilon(epsilon: Any) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating)):
        raise ParameterError(f"epsilon must be a number, got {epsilon!r}.")
    eps = float(epsilon)
    if not (eps > 0) or not math.isfinite(eps):
        raise ParameterError(f"epsilon must be a positive finite number, got {eps:g}.")
    if eps > _MAX_EPSILON:
        raise ParameterError(f"epsilon must be at most {_MAX_EPSILON:g} (e^epsilon overflows), got {eps:g}.")
    if eps < _MIN_EPSILON:
        raise ParameterError(f"epsilon must be at least {_MIN_EPSILON:g}, got {eps:g}: below, the report "
                             "probabilities p* and q* cannot be told apart in floating point and no count can be "
                             "estimated.")
    return eps


def _check_domain(domain: Any) -> int:
    if isinstance(domain, bool) or not isinstance(domain, (int, np.integer)):
        raise ParameterError(f"the domain size must be a whole number of values, got {domain!r}.")
    d = int(domain)
    if d < 2:
        raise ParameterError(f"the domain must hold at least 2 values, got {d}.")
    if d > 2**31:
        raise ParameterError(f"the domain may hold at most 2^31 values, got {d:,}.")
    return d


def _check_values(values: Any, d: int) -> np.ndarray:
    """One value per user as int64 codes in [0, d), or a sentence naming what is wrong."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ParameterError(f"values must be a one-dimensional array with one value per user, got shape {arr.shape}.")
    if arr.size == 0:
        raise ParameterError("there are no values: give at least one user's value.")
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise ParameterError(f"values must be whole-number codes 0..{d - 1}; user {first} holds {arr[first]!r}.")
    elif arr.dtype.kind not in "iu":
        raise ParameterError(f"values must be integer codes 0..{d - 1}, got an array of {arr.dtype}; "
                             "encode the categories as codes first.")
    outside = (arr < 0) | (arr >= d)
    if outside.any():
        where = np.flatnonzero(outside)
        shown = np.unique(arr[where])[:5]
        names = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in shown.tolist())
        more = f" and {len(np.unique(arr[where])) - len(shown)} more" if len(np.unique(arr[where])) > len(shown) else ""
        raise ParameterError(f"{len(where):,} value(s) lie outside the declared domain 0..{d - 1}: {names}{more} "
                             f"(first at user {int(where[0])}); encode them as codes below {d} or enlarge the domain.")
    return arr.astype(np.int64, copy=False)


def _check_n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or int(n) < 1:
        raise ParameterError(f"n, the number of users, must be a whole number of at least 1, got {n!r}.")
    return int(n)


# --------------------------------------------------------------------------- hashing

def _mulmod61(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``(a·x) mod (2⁶¹ − 1)`` for uint64 arrays below 2⁶¹ − 1, exactly, with 32-bit halves."""
    a_hi, a_lo = a >> np.uint64(32), a & _MASK32
    x_hi, x_lo = x >> np.uint64(32), x & _MASK32
    hh = a_hi * x_hi                  # < 2^58, weight 2^64 ≡ 8
    mid = a_hi * x_lo + a_lo * x_hi   # < 2^62, weight 2^32
    ll = a_lo * x_lo                  # < 2^64, exact in uint64
    # mid·2^32 = (mid >> 29)·2^61 + (mid mod 2^29)·2^32 ≡ (mid >> 29) + (mid mod 2^29)·2^32
    s = ((hh << np.uint64(3)) + (mid >> np.uint64(29)) + ((mid & _MASK29) << np.uint64(32))
         + (ll >> np.uint64(61)) + (ll & _P))  # < 3·2^61 + 2^33
    s = (s & _P) + (s >> np.uint64(61))
    return np.minimum(s, s - _P)  # s − P wraps to a huge number when s < P


def universal_hash(a: Any, b: Any, x: Any, g: int) -> np.ndarray:
    """``h_{a,b}(x) = ((a·x + b) mod P) mod g`` with ``P = 2⁶¹ − 1``, element-wise, exact; int64.

    ``a`` must lie in ``[1, P)``, ``b`` and ``x`` in ``[0, P)``.
    """
    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    x = np.asarray(x).astype(np.uint64)
    with np.errstate(over="ignore"):  # the wrap of r − P is intended (NumPy warns for 0-d inputs)
        r = _mulmod61(a, x) + b
        r = np.minimum(r, r - _P)
    return (r % np.uint64(g)).astype(np.int64)


def _support_kernel(a: np.ndarray, b: np.ndarray, y: np.ndarray, g: int, d: int) -> np.ndarray:
    """``counts[v]`` = #users with ``h_{a,b}(v) = y``, for one chunk of users (the hot loop)."""
    r = b.copy()
    step = np.empty_like(r)
    test = np.empty_like(r)
    hit = np.empty(len(r), dtype=bool)
    counts = np.empty(d, dtype=np.int64)
    if g & (g - 1) == 0:  # power of two: r mod g is a mask
        mode, mask, target = 0, np.uint64(g - 1), y.astype(np.uint64)
    elif g % 2 == 1:  # odd: g | (r + g − y)  ⟺  (r + g − y)·g⁻¹ mod 2⁶⁴ ≤ ⌊(2⁶⁴ − 1)/g⌋
        mode, inv, limit = 1, np.uint64(pow(g, -1, 1 << 64)), np.uint64((2**64 - 1) // g)
        shift = (np.uint64(g) - y.astype(np.uint64))
    else:
        mode, gg, target = 2, np.uint64(g), y.astype(np.uint64)
    for v in range(d):
        if mode == 0:
            np.bitwise_and(r, mask, out=test)
            np.equal(test, target, out=hit)
        elif mode == 1:
            np.add(r, shift, out=test)
            np.multiply(test, inv, out=test)
            np.less_equal(test, limit, out=hit)
        else:
            np.floor_divide(r, gg, out=test)
            np.multiply(test, gg, out=test)
            np.subtract(r, test, out=test)
            np.equal(test, target, out=hit)
        counts[v] = np.count_nonzero(hit)
        if v + 1 < d:  # r ← (r + a) mod P
            np.add(r, a, out=r)
            np.subtract(r, _P, out=step)
            np.minimum(r, step, out=r)
    return counts


_HASH_CHUNK = 1 << 16  # users per kernel call: a few 512 KB arrays, about a core's L2 cache


def _lh_supports(y: np.ndarray, a: np.ndarray, b: np.ndarray, g: int, d: int, threads: int | None) -> np.ndarray:
    def job(start: int) -> np.ndarray:
        stop = start + _HASH_CHUNK
        return _support_kernel(a[start:stop], b[start:stop], y[start:stop], g, d)

    # threads=None: every core, or $VEIL_THREADS (veil.parallel).
    parts = map_threads(job, range(0, len(y), _HASH_CHUNK), threads)
    return np.sum(parts, axis=0, dtype=np.int64) if parts else np.zeros(d, dtype=np.int64)


# --------------------------------------------------------------------------- protocols

class FrequencyOracle:
    """A pure LDP frequency oracle over the domain ``0..domain − 1`` (see the module notes).

    Attributes:
        epsilon: the privacy loss ε of one report.
        domain: d, the number of values.
    """

    name = "?"
    description = ""

    def __init__(self, epsilon: float, domain: int) -> None:
        self.epsilon = _check_epsilon(epsilon)
        self.domain = _check_domain(domain)
        # Every coin must stay a real coin: a probability that rounds to 1 (or 0) in floating point
        # would send some value unrandomized, and p* = q* would make variance() divide by zero.
        if not all(0.0 < c < 1.0 for c in self._coins()) or not self.p > self.q:
            raise ParameterError(f"epsilon = {self.epsilon:g} is too large for {self.name} over {self.domain:,} "
                                 "values: a report probability rounds to 1 in floating point, so some reports would "
                                 "not be randomized; use a smaller epsilon.")

    def _coins(self) -> tuple[float, ...]:
        """The probabilities the client's coins are drawn with."""
        return self.p, self.q

    def __repr__(self) -> str:
        return f"{self.name}(epsilon={self.epsilon:g}, domain={self.domain})"

    # ---- theory ---------------------------------------------------------------------------------
    @property
    def p(self) -> float:
        """p*: P[the report supports v | the user holds v]."""
        raise NotImplementedError

    @property
    def q(self) -> float:
        """q*: P[the report supports v | the user holds another value]."""
        raise NotImplementedError

    def privacy_ratio(self) -> float:
        """max over reports y and inputs v, v' of P[y | v] / P[y | v']: e^ε for every protocol."""
        raise NotImplementedError

    def output_probability(self, report: Any, value: int) -> float:
        """P[this single report | the user holds ``value``] (for checking the LDP ratio)."""
        raise NotImplementedError

    @property
    def report_bits(self) -> int:
        """Bits one report takes on the wire."""
        raise NotImplementedError

    def variance(self, n: int, counts: Any = None) -> Any:
        """Variance of the count estimate ĉ(v) for n users.

        Without ``counts``: the paper's Var* = n·q*(1 − q*)/(p* − q*)², the same for every v (exact
        for a value nobody holds). With ``counts`` (the true count of each value, an array of
        length d or a number): the exact variance, Var* + c_v·(1 − p* − q*)/(p* − q*).
        """
        n = _check_n(n)
        p, q = self.p, self.q
        base = n * q * (1 - q) / (p - q) ** 2
        if counts is None:
            return base
        c = np.asarray(counts, dtype=float)
        return base + c * (1 - p - q) / (p - q)

    # ---- client ---------------------------------------------------------------------------------
    def perturb(self, values: Any, rng: Any = None) -> Reports:
        """Randomize each user's value (vectorized over users); ``rng=None`` is the secure source.

        ``values`` is one code per user, or a single code (a scalar): a client randomizing its own
        value gets one report of that shape (``Reports.single``; see :class:`Reports`), which the
        server aggregates like any other.
        """
        source = as_randomness(rng)
        arr = np.asarray(values)
        single = arr.ndim == 0
        data = self._perturb(_check_values(arr.reshape(1) if single else arr, self.domain), source)
        if single:
            data = tuple(part[0] for part in data) if isinstance(data, tuple) else data[0]
        return Reports(self.name, data, source.fit_for_release, single)

    def perturb_and_aggregate(self, values: Any, rng: Any = None, *, chunk_size: int | None = None) -> Supports:
        """Perturb and aggregate in chunks of users, keeping only the support counts.

        Gives the same distribution as ``aggregate(perturb(values))`` without ever holding all
        reports: the way to simulate unary encodings with many users over a large domain.
        """
        source = as_randomness(rng)
        arr = np.asarray(values)
        arr = _check_values(arr.reshape(1) if arr.ndim == 0 else arr, self.domain)
        size = chunk_size or self._chunk_size()
        counts = np.zeros(self.domain, dtype=np.int64)
        for start in range(0, len(arr), size):
            counts += self._aggregate_checked(self._perturb(arr[start:start + size], source))
        return Supports(self.name, counts, len(arr), source.fit_for_release)

    def _chunk_size(self) -> int:
        return 1 << 20

    def _perturb(self, values: np.ndarray, source: Randomness) -> Any:
        raise NotImplementedError

    # ---- server ---------------------------------------------------------------------------------
    def aggregate(self, reports: Any) -> np.ndarray:
        """Support counts I_v (int64, length d) of the reports."""
        return self._aggregate_checked(self._unwrap(reports))

    def _unwrap(self, reports: Any) -> Any:
        if isinstance(reports, Reports):
            if reports.protocol != self.name:
                raise ParameterError(f"these reports were made by {reports.protocol}, not {self.name}; "
                                     f"aggregate them with {reports.protocol}.")
            reports = reports.batch()
        return self._check_reports(reports)

    def _check_reports(self, data: Any) -> Any:
        raise NotImplementedError

    def _aggregate_checked(self, data: Any) -> np.ndarray:
        raise NotImplementedError

    def _reports_length(self, data: Any) -> int:
        return len(data)

    def estimate(self, reports_or_supports: Any, n: int | None = None) -> np.ndarray:
        """Unbiased count estimates ĉ(v) = (I_v − n·q*)/(p* − q*) for every value v (float64).

        Accepts :class:`Reports`, :class:`Supports`, raw reports (n taken from them), or support
        counts as an array of length d together with ``n``.
        """
        x = reports_or_supports
        if isinstance(x, Supports):
            if x.protocol != self.name:
                raise ParameterError(f"these support counts come from {x.protocol}, not {self.name}.")
            supports, n = x.counts, x.n
        elif n is not None and not isinstance(x, (Reports, tuple, list)) and np.ndim(x) == 1:
            n = _check_n(n)
            supports = np.asarray(x)
            if supports.shape != (self.domain,):
                raise ParameterError(f"support counts for {self.name} must be one number per value "
                                     f"({self.domain}), got {supports.shape[0]}.")
        else:
            data = self._unwrap(x)
            supports, n = self._aggregate_checked(data), self._reports_length(data)
        return (np.asarray(supports, dtype=float) - n * self.q) / (self.p - self.q)


class GRR(FrequencyOracle):
    """Generalized randomized response (direct encoding): report the true value with probability
    p = e^ε/(e^ε + d − 1), else one of the other d − 1 values uniformly."""

    name = "GRR"
    description = "generalized randomized response (direct encoding)"

    @property
    def p(self) -> float:
        return math.exp(self.epsilon) / (math.exp(self.epsilon) + self.domain - 1)

    @property
    def q(self) -> float:
        return 1.0 / (math.exp(self.epsilon) + self.domain - 1)

    def privacy_ratio(self) -> float:
        return self.p / self.q

    def output_probability(self, report: Any, value: int) -> float:
        return self.p if int(report) == int(value) else self.q

    @property
    def report_bits(self) -> int:
        return max(1, math.ceil(math.log2(self.domain)))

    def _perturb(self, values: np.ndarray, source: Randomness) -> np.ndarray:
        keep = source.bernoulli(self.p, len(values), rounding="down")
        out = values.copy()
        moved = np.flatnonzero(~keep)
        out[moved] = (values[moved] + 1 + source.integers(self.domain - 1, len(moved))) % self.domain
        return out

    def _check_reports(self, data: Any) -> np.ndarray:
        arr = np.asarray(data)
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise ParameterError(f"GRR reports must be one integer per user (a 1-D array), got shape {arr.shape} "
                                 f"of {arr.dtype}.")
        if arr.size and (arr.min() < 0 or arr.max() >= self.domain):
            raise ParameterError(f"GRR reports must lie in 0..{self.domain - 1}; found {int(arr.min())}..{int(arr.max())}.")
        return arr

    def _aggregate_checked(self, data: np.ndarray) -> np.ndarray:
        return np.bincount(data, minlength=self.domain).astype(np.int64)


class _UnaryEncoding(FrequencyOracle):
    """Unary encoding: one bit per value; the user's bit is kept as 1 with probability p, every
    other bit becomes 1 with probability q."""

    @property
    def report_bits(self) -> int:
        return self.domain

    def privacy_ratio(self) -> float:
        p, q = self.p, self.q
        return (p * (1 - q)) / (q * (1 - p))

    def output_probability(self, report: Any, value: int) -> float:
        bits = np.asarray(report, dtype=bool)
        if bits.shape != (self.domain,):
            raise ParameterError(f"a {self.name} report is {self.domain} bits, got shape {bits.shape}.")
        others = np.delete(bits, int(value))
        ones = int(others.sum())
        own = self.p if bits[int(value)] else 1 - self.p
        return own * self.q ** ones * (1 - self.q) ** (len(others) - ones)

    def _chunk_size(self) -> int:
        return max(1, (1 << 22) // self.domain)

    def _perturb(self, values: np.ndarray, source: Randomness) -> np.ndarray:
        n = len(values)
        bits = source.bernoulli(self.q, (n, self.domain), rounding="up")
        bits[np.arange(n), values] = source.bernoulli(self.p, n, rounding="down")
        return bits

    def _check_reports(self, data: Any) -> np.ndarray:
        arr = np.asarray(data)
        if arr.ndim != 2 or arr.shape[1] != self.domain:
            raise ParameterError(f"{self.name} reports must be a matrix with one row per user and {self.domain} "
                                 f"columns of bits, got shape {arr.shape}.")
        if arr.dtype != bool:
            if arr.dtype.kind not in "iu" or (arr.size and (arr.min() < 0 or arr.max() > 1)):
                raise ParameterError(f"{self.name} reports must hold only 0/1 bits.")
        return arr

    def _aggregate_checked(self, data: np.ndarray) -> np.ndarray:
        if data.dtype == bool:
            return np.count_nonzero(data, axis=0).astype(np.int64)
        return data.sum(axis=0, dtype=np.int64)


class SUE(_UnaryEncoding):
    """Symmetric unary encoding (basic RAPPOR): p = e^(ε/2)/(e^(ε/2) + 1), q = 1 − p."""

    name = "SUE"
    description = "symmetric unary encoding (basic RAPPOR)"

    @property
    def p(self) -> float:
        half = math.exp(self.epsilon / 2)
        return half / (half + 1)

    @property
    def q(self) -> float:
        return 1.0 / (math.exp(self.epsilon / 2) + 1)


class OUE(_UnaryEncoding):
    """Optimized unary encoding: p = 1/2, q = 1/(e^ε + 1)."""

    name = "OUE"
    description = "optimized unary encoding"

    @property
    def p(self) -> float:
        return 0.5

    @property
    def q(self) -> float:
        return 1.0 / (math.exp(self.epsilon) + 1)


class _LocalHashing(FrequencyOracle):
    """Local hashing: hash the value into [0, g) with the user's own universal hash, then report
    the hash by g-ary randomized response (keep with p' = e^ε/(e^ε + g − 1))."""

    threads: int | None = None  # None: every core, or $VEIL_THREADS

    @property
    def g(self) -> int:
        raise NotImplementedError

    @property
    def keep_probability(self) -> float:
        """p': P[report y = h(v) | v]; every other y has q' = 1/(e^ε + g − 1)."""
        return math.exp(self.epsilon) / (math.exp(self.epsilon) + self.g - 1)

    @property
    def other_probability(self) -> float:
        return 1.0 / (math.exp(self.epsilon) + self.g - 1)

    def _coins(self) -> tuple[float, ...]:
        return self.keep_probability, self.other_probability

    @property
    def p(self) -> float:
        return self.keep_probability

    @property
    def q(self) -> float:
        return 1.0 / self.g

    def privacy_ratio(self) -> float:
        # The hash is drawn independently of the value, so its probability cancels; what is left
        # is g-ary randomized response: p'/q'.
        return self.keep_probability / self.other_probability

    def output_probability(self, report: Any, value: int) -> float:
        """P[y | v, the user's hash (a, b)] for a report ``(y, a, b)``."""
        y, a, b = report
        hashed = int(universal_hash(np.uint64(a), np.uint64(b), np.uint64(value), self.g))
        return self.keep_probability if int(y) == hashed else self.other_probability

    @property
    def report_bits(self) -> int:
        return max(1, math.ceil(math.log2(self.g))) + _SEED_BITS

    def _perturb(self, values: np.ndarray, source: Randomness) -> tuple:
        n = len(values)
        a = source.hash_seeds(1, n)
        b = source.hash_seeds(0, n)
        y = universal_hash(a, b, values, self.g)
        moved = np.flatnonzero(~source.bernoulli(self.keep_probability, n, rounding="down"))
        if self.g > 1:
            y[moved] = (y[moved] + 1 + source.integers(self.g - 1, len(moved))) % self.g
        return y, a, b

    def _check_reports(self, data: Any) -> tuple:
        if not isinstance(data, (tuple, list)) or len(data) != 3:
            raise ParameterError(f"{self.name} reports must be three arrays (y, a, b): the hash value and the "
                                 "user's hash seed.")
        y, a, b = (np.asarray(part) for part in data)
        if any(part.ndim != 1 for part in (y, a, b)) or not len(y) == len(a) == len(b):
            raise ParameterError(f"{self.name} reports must be three 1-D arrays (y, a, b) of one length, got shapes "
                                 f"{y.shape}, {a.shape}, {b.shape}.")
        if any(part.dtype.kind not in "iu" for part in (y, a, b)):
            raise ParameterError(f"{self.name} reports must hold integers.")
        if y.size and (y.min() < 0 or y.max() >= self.g):
            raise ParameterError(f"{self.name} hash values y must lie in 0..{self.g - 1}; "
                                 f"found {int(y.min())}..{int(y.max())}.")
        if a.dtype.kind == "i" and a.size and a.min() < 0 or b.dtype.kind == "i" and b.size and b.min() < 0:
            raise ParameterError(f"{self.name} hash seeds must be non-negative.")
        a = a.astype(np.uint64)
        b = b.astype(np.uint64)
        if a.size and (a.min() < 1 or a.max() >= _P or b.max() >= _P):
            raise ParameterError(f"{self.name} hash seeds must have a in [1, 2^61 − 1) and b in [0, 2^61 − 1).")
        return y.astype(np.int64), a, b

    def _reports_length(self, data: tuple) -> int:
        return len(data[0])

    def _chunk_size(self) -> int:
        return 1 << 21

    def _aggregate_checked(self, data: tuple) -> np.ndarray:
        y, a, b = data
        return _lh_supports(y, a, b, self.g, self.domain, self.threads)


class BLH(_LocalHashing):
    """Binary local hashing (Bassily and Smith 2015): g = 2."""

    name = "BLH"
    description = "binary local hashing"

    @property
    def g(self) -> int:
        return 2


class OLH(_LocalHashing):
    """Optimized local hashing (Wang et al. 2017): g = round(e^ε) + 1."""

    name = "OLH"
    description = "optimized local hashing"

    def __init__(self, epsilon: float, domain: int) -> None:
        eps = _check_epsilon(epsilon)
        if math.exp(eps) > 2**31:
            raise ParameterError(f"OLH needs epsilon ≤ {math.log(2**31):.1f} (its hash range round(e^ε) + 1 must "
                                 f"stay below 2^31), got {eps:g}; at such an epsilon use GRR.")
        super().__init__(eps, domain)

    @property
    def g(self) -> int:
        return int(round(math.exp(self.epsilon))) + 1


PROTOCOLS = {cls.name.lower(): cls for cls in (GRR, SUE, OUE, BLH, OLH)}


def make_protocol(name: str, epsilon: float, domain: int) -> FrequencyOracle:
    """The protocol called ``name`` (grr, sue, oue, blh, olh, or ``auto`` for :func:`choose_protocol`)."""
    key = str(name).strip().lower()
    if key == "auto":
        return choose_protocol(epsilon, domain)
    if key not in PROTOCOLS:
        raise ParameterError(f"unknown protocol {name!r}; choose one of {', '.join(PROTOCOLS)} or auto.")
    return PROTOCOLS[key](epsilon, domain)


def choose_protocol(epsilon: float, domain: int, *, tolerance: float = 0.05) -> FrequencyOracle:
    """The protocol with the lowest estimator variance (Var*) for this ε and domain size.

    OUE's variance 4e^ε/(e^ε − 1)² is the optimum that OLH reaches only when e^ε + 1 is a whole
    number (it rounds g), so OLH is within a few per cent of OUE and never below it. Protocols
    within ``tolerance`` (relative) of the lowest variance count as tied, and the tie goes to the
    smaller report (OLH's log₂ g + 122 bits against OUE's d bits): GRR wins for small domains
    (d < 3e^ε + 2), OUE for mid-size ones, OLH for large ones. ``tolerance=0`` picks strictly by
    variance.
    """
    eps, d = _check_epsilon(epsilon), _check_domain(domain)
    if not tolerance >= 0:
        raise ParameterError(f"tolerance must be a non-negative number, got {tolerance!r}.")
    candidates = []
    for cls in (GRR, SUE, OUE, BLH, OLH):
        try:
            candidates.append(cls(eps, d))
        except ParameterError:
            continue  # this ε is too large for it (OUE, whose p* is 1/2, always runs)
    best = min(c.variance(1) for c in candidates)
    tied = [c for c in candidates if c.variance(1) <= best * (1 + tolerance)]
    return min(tied, key=lambda c: (c.report_bits, c.variance(1)))


def postprocess(estimates: Any, n: int, clip: bool = True, renormalize: bool = True) -> np.ndarray:
    """Make estimates look like counts: optional and free (post-processing costs no privacy).

    ``clip`` sets negative estimates to 0; ``renormalize`` then scales the estimates so they add
    up to n (if nothing positive is left, every value gets n/d). Both trade the estimator's
    unbiasedness for a lower error on the small counts; leave them off to average estimates.
    """
    n = _check_n(n)
    est = np.array(estimates, dtype=float)
    if est.ndim != 1 or not np.all(np.isfinite(est)):
        raise ParameterError("estimates must be a one-dimensional array of finite numbers.")
    if clip:
        est = np.maximum(est, 0.0)
    if renormalize:
        total = est.sum()
        est = est * (n / total) if total > 0 else np.full(len(est), n / len(est))
    return est
