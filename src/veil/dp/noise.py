"""Where DP noise comes from: a secure source for real releases, a seeded one for experiments.

Two modes, one interface (:class:`NoiseSource`):

* **secure** (``NoiseSource.secure()``, the default of every mechanism): noise is drawn by the
  OpenDP library's samplers, which are floating-point-safe (they sample on an exact grid with
  discrete Laplace / discrete Gaussian arithmetic and round the *input*, so the output does not
  leak low-order bits the way textbook ``x + numpy.random.laplace()`` does) and driven by
  OpenDP's cryptographically secure RNG, or, for integer noise, by the same exact algorithm
  vectorized over bulk bytes of the operating system's CSPRNG (OpenDP reads a few bytes per
  call, per sample, which made a 10,000-cell table cost 0.1 s of noise). Results are not
  reproducible and are labelled ``fit_for_release=True``. What each draw uses:

  ========================== ===================================================================
  Laplace                    ``opendp.measurements.make_laplace`` applied to the values themselves
  discrete Laplace           the exact sampler OpenDP uses (Canonne, Kamath and Steinke 2020),
                             vectorized, on bulk bytes from the operating system's CSPRNG
                             (:mod:`veil.dp.discrete_laplace`); ``make_geometric`` for a scale
                             above 2^62
  Gaussian                   ``make_gaussian`` applied to the values
  discrete Gaussian          ``make_gaussian`` on 64-bit integers: OpenDP's exact sampler
                             (Canonne, Kamath and Steinke 2020, Algorithm 3)
  exponential mechanism      ``make_noisy_max`` under zCDP, i.e. Gumbel-max, which selects index
                             *i* with probability ∝ exp(score_i / scale) exactly
  report-noisy-max           ``make_noisy_max`` under pure DP (exponential noise, MS20)
  randomized response        the coin OpenDP's ``make_randomized_response_bool`` and
                             ``make_randomized_response`` toss (Bernoulli of the exact float
                             probability; another category uniformly), on bulk CSPRNG bytes
  radius of planar Laplace   |L1| + |L2| with L1, L2 drawn by ``make_laplace`` (a Gamma(2) draw)
  uniform angle              the operating system's CSPRNG (``secrets``), 53-bit grid; this one
                             is cryptographically secure but *not* floating-point-safe, see
                             :meth:`NoiseSource.uniform`
  ========================== ===================================================================

  OpenDP is used only as a sampler here; veil states the guarantee itself (and the tests check
  that OpenDP's own privacy maps agree).

* **seeded** (``NoiseSource.seeded(seed_or_generator)``): the same distributions drawn from a
  ``numpy.random.Generator``; reproducible, fast, and labelled ``fit_for_release=False``. Use it
  for experiments and tests, never for publishing.
"""

from __future__ import annotations

import importlib.util
import math
import os
import secrets
from functools import lru_cache
from typing import Any

import numpy as np

from veil.dp import discrete_laplace
from veil.dp.planar_radius import planar_radius_quantile
from veil.errors import ParameterError, VeilError
from veil.randomness import RandomSource, bernoulli_dyadic, uniform_below

__all__ = ["NoiseSource", "as_noise_source"]


def _opendp():
    """Import OpenDP with the ``contrib`` features enabled, or say how to get it."""
    try:
        import opendp.prelude as dp
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise VeilError("Secure DP noise needs the OpenDP library; install it with `pip install opendp`, "
                        "or pass a seeded rng for an experiment that will not be released.") from exc
    dp.enable_features("contrib")
    return dp


# OpenDP measurements are cheap to build but not free; cache them by their scale.
@lru_cache(maxsize=256)
def _laplace_float(scale: float):
    dp = _opendp()
    return dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float),
                             scale=scale)


@lru_cache(maxsize=256)
def _geometric_int(scale: float):
    dp = _opendp()
    return dp.m.make_geometric(dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=scale)


@lru_cache(maxsize=256)
def _gaussian_float(scale: float):
    dp = _opendp()
    return dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                              scale=scale)


@lru_cache(maxsize=256)
def _discrete_gaussian_int(scale: float):
    dp = _opendp()
    return dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T="i64")), dp.l2_distance(T="i64"), scale=scale)


@lru_cache(maxsize=256)
def _noisy_max(scale: float, gumbel: bool):
    dp = _opendp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    measure = dp.zero_concentrated_divergence() if gumbel else dp.max_divergence()
    return dp.m.make_noisy_max(*space, measure, scale=scale)


def _exact_coins(prob: float, lowest: float, size: int) -> np.ndarray:
    """``size`` coins that are True with probability ``prob`` exactly (the float's own value, as
    OpenDP's ``sample_bernoulli_float`` draws it), from the operating system's CSPRNG.

    Raises:
        ParameterError: ``prob`` is not in [``lowest``, 1), where randomized response stays a
            randomization (OpenDP's own bounds).
    """
    prob = float(prob)
    if not lowest <= prob < 1.0:
        raise ParameterError(f"The probability of a truthful report must lie in [{lowest:g}, 1), got {prob!r}.")
    numerator, denominator = prob.as_integer_ratio()
    return bernoulli_dyadic(numerator, denominator.bit_length() - 1, size, os.urandom)


def _check_scale(scale: Any) -> float:
    """A noise scale as a float; OpenDP would fail on an infinite one, numpy silently on a negative one.

    (The mechanisms refuse scales outside what they can compute with before they draw; this guards
    direct use of a NoiseSource.)
    """
    try:
        value = float(scale)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(f"The noise scale must be a positive finite number, got {scale!r}.")
    return value


def _finite_floats(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"The {what} must be finite numbers; remove NaN and infinite values before releasing.")
    return arr


def _integers(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind in "iub":
        return arr.astype(np.int64)
    farr = _finite_floats(arr, what)
    if np.any(farr != np.round(farr)) or np.any(np.abs(farr) > 2.0**62):
        raise ParameterError(f"The {what} must be whole numbers within ±2^62 for integer (geometric) noise.")
    return farr.astype(np.int64)


class NoiseSource(RandomSource):
    """A source of DP noise: ``secure`` (OpenDP, for releases) or ``seeded`` (numpy, experiments).

    Every method takes the *true* values and returns the noisy ones, so the secure mode can hand
    the values to OpenDP unchanged (adding OpenDP noise drawn at zero to a float afterwards would
    reintroduce the floating-point leak the safe samplers remove).
    """

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def secure(cls) -> "NoiseSource":
        """Noise for a real release: OpenDP samplers, cryptographically secure, not reproducible."""
        if importlib.util.find_spec("opendp") is None:
            _opendp()  # fail now, with the sentence; OpenDP itself is loaded when a draw needs it
        return cls(None, _secure=True)

    # ---- labels -------------------------------------------------------------------------------
    @property
    def description(self) -> str:
        if self._secure:
            return "secure: OpenDP floating-point-safe samplers with a cryptographically secure RNG"
        return "seeded experiment: numpy.random.Generator, reproducible, NOT fit for release"

    # ---- additive noise -----------------------------------------------------------------------
    def laplace(self, values: Any, scale: float) -> np.ndarray:
        """``values`` + Laplace(0, ``scale``) noise, element-wise; same shape, float."""
        arr, scale = _finite_floats(values, "values to release"), _check_scale(scale)
        if self._secure:
            out = _laplace_float(float(scale))(arr.ravel().tolist())
            return np.asarray(out, dtype=float).reshape(arr.shape)
        return arr + self._rng.laplace(0.0, scale, size=arr.shape)

    def discrete_laplace(self, values: Any, scale: float) -> np.ndarray:
        """``values`` + discrete Laplace noise, P(z) ∝ exp(−|z|/``scale``); int64, same shape."""
        arr, scale = _integers(values, "values to release"), _check_scale(scale)
        if self._secure:
            if discrete_laplace.supports(scale):
                return arr + discrete_laplace.sample(scale, arr.size, os.urandom).reshape(arr.shape)
            out = _geometric_int(float(scale))(arr.ravel().tolist())
            return np.asarray(out, dtype=np.int64).reshape(arr.shape)
        # The difference of two i.i.d. geometric variables on {0, 1, ...} with ratio a is
        # discrete Laplace with P(z) ∝ a^|z|.
        p = -np.expm1(-1.0 / scale)  # 1 - a
        g = self._rng.geometric(p, size=(2,) + arr.shape).astype(np.int64) - 1
        return arr + g[0] - g[1]

    def gaussian(self, values: Any, scale: float) -> np.ndarray:
        """``values`` + N(0, ``scale``²) noise, element-wise; same shape, float."""
        arr, scale = _finite_floats(values, "values to release"), _check_scale(scale)
        if self._secure:
            out = _gaussian_float(float(scale))(arr.ravel().tolist())
            return np.asarray(out, dtype=float).reshape(arr.shape)
        return arr + self._rng.normal(0.0, scale, size=arr.shape)

    # ---- selection ----------------------------------------------------------------------------
    def discrete_gaussian(self, values: Any, scale: float) -> np.ndarray:
        """``values`` + discrete Gaussian noise, P(z) ∝ exp(−z²/(2·``scale``²)); int64, same shape.

        Secure: OpenDP's exact sampler (``make_gaussian`` on 64-bit integers, Canonne, Kamath and
        Steinke 2020, Algorithm 3). Seeded: the same algorithm in floating point from the numpy
        generator (an experiment): Y discrete Laplace of scale t = ⌊σ⌋ + 1, kept with probability
        exp(−(|Y| − σ²/t)²/(2σ²)), repeated until kept.
        """
        arr, scale = _integers(values, "values to release"), _check_scale(scale)
        if self._secure:
            out = _discrete_gaussian_int(float(scale))(arr.ravel().tolist())
            return np.asarray(out, dtype=np.int64).reshape(arr.shape)
        t = math.floor(scale) + 1
        p = -math.expm1(-1.0 / t)
        out = np.empty(arr.size, dtype=np.int64)
        pending = np.arange(arr.size)
        while len(pending):
            g = self._rng.geometric(p, size=(2, len(pending))).astype(np.int64) - 1
            y = g[0] - g[1]
            keep = self._rng.random(len(pending)) < np.exp(-(np.abs(y) - scale**2 / t) ** 2 / (2 * scale**2))
            out[pending[keep]] = y[keep]
            pending = pending[~keep]
        return arr + out.reshape(arr.shape)

    def _argmax_rows(self, scores: Any, scale: float, gumbel: bool) -> np.ndarray:
        arr, scale = _finite_floats(scores, "scores"), _check_scale(scale)
        rows = arr.reshape(-1, arr.shape[-1])
        if self._secure:
            meas = _noisy_max(float(scale), gumbel)
            idx = np.fromiter((meas(row.tolist()) for row in rows), dtype=np.int64, count=len(rows))
        else:
            noise = (self._rng.gumbel(0.0, scale, size=rows.shape) if gumbel
                     else self._rng.exponential(scale, size=rows.shape))
            idx = np.argmax(rows + noise, axis=1).astype(np.int64)
        return idx.reshape(arr.shape[:-1])

    def gumbel_argmax(self, scores: Any, scale: float) -> np.ndarray:
        """Index of max(score + Gumbel(scale)) along the last axis: P(i) ∝ exp(score_i / scale)."""
        return self._argmax_rows(scores, scale, gumbel=True)

    def exponential_argmax(self, scores: Any, scale: float) -> np.ndarray:
        """Index of max(score + Exponential(scale)) along the last axis (report-noisy-max, MS20)."""
        return self._argmax_rows(scores, scale, gumbel=False)

    # ---- randomized response ------------------------------------------------------------------
    def flip_bits(self, bits: Any, keep_prob: float) -> np.ndarray:
        """Warner's coin: each bit is reported truthfully with probability ``keep_prob``, else flipped.

        Raises:
            ParameterError: ``keep_prob`` is not in [1/2, 1).
        """
        arr = np.asarray(bits, dtype=bool)
        if self._secure:
            keep = _exact_coins(keep_prob, 0.5, arr.size).reshape(arr.shape)
            return np.where(keep, arr, ~arr)
        flip = self._rng.random(arr.shape) >= keep_prob
        return arr ^ flip

    def randomize_categories(self, codes: Any, k: int, keep_prob: float) -> np.ndarray:
        """k-ary RR on codes 0..k-1: keep with ``keep_prob``, else a uniformly chosen *other* code.

        Raises:
            ParameterError: ``keep_prob`` is not in [1/k, 1).
        """
        arr = np.asarray(codes, dtype=np.int64)
        if self._secure:
            keep = _exact_coins(keep_prob, 1.0 / k, arr.size).reshape(arr.shape)
            shift = 1 + uniform_below(int(k) - 1, os.urandom, arr.size).astype(np.int64).reshape(arr.shape)
            return np.where(keep, arr, (arr + shift) % k)
        keep = self._rng.random(arr.shape) < keep_prob
        shift = self._rng.integers(1, k, size=arr.shape)
        return np.where(keep, arr, (arr + shift) % k)

    # ---- continuous helpers (planar Laplace) --------------------------------------------------
    def uniform(self, size: int | tuple[int, ...]) -> np.ndarray:
        """Uniform draws on [0, 1).

        Secure mode: 53 random bits per draw from the operating system's CSPRNG (``secrets``),
        i.e. the grid {j·2⁻⁵³}. Cryptographically secure, but the value is then used in floating
        point (for an angle), so it is not floating-point-safe in Mironov's sense.
        """
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        n = int(np.prod(shape, dtype=np.int64))
        if self._secure:
            raw = np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64)
            return ((raw >> np.uint64(11)).astype(np.float64) * 2.0**-53).reshape(shape)
        return self._rng.random(shape)

    def bernoulli(self, prob: float, size: int | tuple[int, ...]) -> np.ndarray:
        """Coins that are True with probability ``floor(prob·2⁵³)/2⁵³`` exactly (never more than ``prob``).

        Each coin compares a uniform 53-bit integer with the integer threshold ``floor(prob·2⁵³)``:
        exact arithmetic, no floating point in the draw. Secure mode reads the integers from the
        operating system's CSPRNG (``secrets``); seeded mode from the generator.
        """
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        if not 0.0 <= prob <= 1.0:
            raise ParameterError(f"A coin's probability must lie in [0, 1], got {prob!r}.")
        threshold = np.uint64(math.floor(prob * 2.0**53))  # exact: scaling by a power of two
        n = int(np.prod(shape, dtype=np.int64))
        if self._secure:
            words = np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64) >> np.uint64(11)
        else:
            words = self._rng.integers(0, 1 << 53, size=n, dtype=np.uint64)
        return (words < threshold).reshape(shape)

    def gamma2(self, size: int | tuple[int, ...], scale: float) -> np.ndarray:
        """Gamma(shape 2, ``scale``) draws: the radius of planar Laplace noise.

        Secure mode: |L1| + |L2| with L1, L2 ~ Laplace(``scale``) from OpenDP (|Laplace| is
        exponential, and the sum of two exponentials is Gamma(2)). Seeded mode: the inverse CDF
        with the −1 branch of Lambert W (Andrés et al., CCS 2013).
        """
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        scale = _check_scale(scale)
        if self._secure:
            n = int(np.prod(shape, dtype=np.int64))
            lap = np.abs(np.asarray(_laplace_float(scale)([0.0] * (2 * n)), dtype=float))
            return (lap[:n] + lap[n:]).reshape(shape)
        return planar_radius_quantile(self._rng.random(shape), 1.0 / scale)


def as_noise_source(noise: "NoiseSource | np.random.Generator | int | None") -> NoiseSource:
    """Normalize the ``noise=`` argument of a mechanism.

    ``None`` → the secure source (a real release); a ``NoiseSource`` → itself; a
    ``numpy.random.Generator`` or an ``int`` seed → a seeded source (an experiment, not for release).
    """
    if noise is None:
        return NoiseSource.secure()
    if isinstance(noise, NoiseSource):
        return noise
    if isinstance(noise, (np.random.Generator, int, np.integer)) and not isinstance(noise, bool):
        return NoiseSource.seeded(noise)
    raise ParameterError("The noise argument must be None (secure), a NoiseSource, a numpy.random.Generator "
                         "or an integer seed.")
