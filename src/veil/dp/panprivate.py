"""Pan-private streaming: algorithms whose memory is itself differentially private at every moment.

Dwork, Naor, Pitassi, Rothblum and Yekhanin, "Pan-private streaming algorithms" (ICS 2010). A
streaming algorithm is *pan-private* when its internal state, and not only its output, is
differentially private: someone who seizes the memory (a subpoena, a break-in) learns no more
than the output alone would tell. Two kinds of intrusion:

* **a single unannounced intrusion**: the state is seen once, at a moment the algorithm never
  learns; then the state's distribution must be differentially private *at every moment*;
* **continual announced intrusions**: the state is seen many times, and the algorithm is told
  after each; it may then re-randomize its state.

Two algorithms, each with ``update`` (events arrive), ``state_`` (exactly what an intruder sees)
and ``release`` (the output, with fresh noise):

:class:`PanPrivateCounter` — the number of events.
    The memory holds one integer, started at discrete Laplace noise of scale m/ε (m: the most
    events one user adds, ``max_contribution``) and increased by every event. At any moment it is
    the true count so far plus that noise: ε-DP for neighbouring streams that differ by one user's
    at most m events. A release adds fresh noise of the same scale. With one unannounced
    intrusion and one release at the end, the two together are ε-DP as well: an event moves the
    count before the intrusion (seen in the state and in the release alike, hidden by the first
    noise) or the count after it (hidden by the release's noise), never both. k releases with an
    intrusion are (k + 1)ε-DP by composition.
    *Continual announced intrusions* (:meth:`PanPrivateCounter.announce_intrusion`): after each,
    fresh noise is added to the state, so what an intruder sees at consecutive intrusions differs
    by the count between them plus fresh noise; each event falls between exactly two of them, so
    any number of announced intrusions and the final release are ε-DP together.

:class:`PanPrivateDensity` — the fraction of a public universe of users who appeared at least once.
    Following Dwork et al., the memory holds one bit per user of a random sample M of the
    universe (m = |M| users; the sample does not depend on the data). Every bit starts drawn from
    D_0, Pr[1] = 1/2; whenever its user appears it is drawn again from D_1, Pr[1] = 1/2 + ε/4. A
    user's bit is therefore D_0-distributed if the user has not appeared yet and D_1-distributed
    if they have, independently of everything else, and the likelihood ratio of the two is at most
    max(1 + ε/2, 1/(1 − ε/2)) ≤ e^ε for ε ≤ 1: the state is ε-DP at every moment for
    neighbouring streams that differ in all the appearances of one user (user level). The release
    is the fraction θ of ones plus Laplace noise of scale 1/(ε m) (sensitivity 1/m), turned into
    the estimate (θ̃ − 1/2)/(p_1 − 1/2), since E[θ] = 1/2 + (p_1 − 1/2)·f for the fraction f of
    sampled users who appeared. With one unannounced intrusion, the state and one release are
    2ε-DP together (ε for each; the release's noise hides the user's final bit whatever the
    intruder saw); k releases and an intrusion are (k + 1)ε-DP.
    No continual-announced variant is given for it: a bit redrawn after an announced intrusion
    would have to be drawn from D_0 or D_1 according to whether its user has appeared, which is
    exactly what the state is built not to know; keeping the bits as they are leaks the
    appearances between intrusions, ε per intrusion.

The coins are exact: ``NoiseSource.bernoulli`` compares uniform 53-bit integers with an integer
threshold, so D_1's probability is p_1 = floor((1/2 + ε/4)·2⁵³)/2⁵³ exactly (rounded down, which
only lowers the likelihood ratio); the counter's noise is integer (OpenDP's discrete Laplace);
the density's release noise is OpenDP's floating-point-safe Laplace applied to θ. The guarantee
reports the state's exact ε from p_1. ``noise=None`` draws from the secure source (fit for
release); a seed or generator runs a reproducible experiment, labelled not fit for release.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from veil.dp.mechanisms import MAX_INTEGER_SCALE, _check_epsilon, check_scale, release_label
from veil.dp.noise import NoiseSource, as_noise_source
from veil.errors import ParameterError

__all__ = ["PanPrivateCounter", "PanPrivateDensity", "PanPrivateRelease"]

NoiseArg = NoiseSource | np.random.Generator | int | None


@dataclass(frozen=True)
class PanPrivateRelease:
    """One output of a pan-private algorithm.

    Attributes:
        value: the noisy answer (the count, or the estimated fraction of users who appeared).
        variance: its variance around the true answer (for the density, an upper bound that
            holds whatever the data).
        epsilon: the ε of the algorithm.
        guarantee: the privacy model, its parameters and a statement in words.
        fit_for_release: whether the noise came from the secure source.
        noise_source: where the noise came from.
    """

    value: float
    variance: float
    epsilon: float
    guarantee: dict
    fit_for_release: bool
    noise_source: str

    @property
    def std(self) -> float:
        return math.sqrt(self.variance)

    @property
    def label(self) -> str:
        return release_label(self.fit_for_release, ())


def _whole(value: Any, name: str, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ParameterError(f"{name} ({what}) must be a whole number >= {minimum}, got {value!r}.")
    return int(value)


def _discrete_laplace_variance(scale: float) -> float:
    """Variance of P(z) ∝ exp(−|z|/scale): 2a/(1 − a)² with a = e^(−1/scale)."""
    a = math.exp(-1.0 / scale)
    return 2.0 * a / (1.0 - a) ** 2


# --------------------------------------------------------------------------- the counter

class PanPrivateCounter:
    """A count of events whose memory is ε-DP at every moment (Dwork et al., ICS 2010).

    See the module notes for the guarantee under a single unannounced intrusion and under
    continual announced intrusions (:meth:`announce_intrusion`).

    Args:
        epsilon: ε > 0.
        max_contribution: m, the most events one user adds to the stream (1: event level).
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Attributes:
        state_: the integer the memory holds (the true count plus noise): what an intruder sees.
        scale_: the discrete Laplace scale m/ε of every noise draw.
        draws_: how many noise draws the state holds (1, plus one per announced intrusion).
        releases_: how many releases were made.

    Raises:
        ParameterError: ε <= 0, or m < 1.
    """

    def __init__(self, epsilon: float, *, max_contribution: int = 1, noise: NoiseArg = None):
        self.epsilon = _check_epsilon(epsilon)
        self.max_contribution = _whole(max_contribution, "max_contribution", "the most events one user adds", 1)
        self._source = as_noise_source(noise)
        self.scale_ = check_scale(self.max_contribution / self.epsilon, "discrete Laplace", self.epsilon,
                                  float(self.max_contribution), highest=MAX_INTEGER_SCALE)
        self.state_ = int(self._source.discrete_laplace(np.zeros(1, dtype=np.int64), self.scale_)[0])
        self.draws_ = 1
        self.releases_ = 0

    def update(self, events: int = 1) -> PanPrivateCounter:
        """Count ``events`` more events (a whole number >= 0).

        Raises:
            ParameterError: a negative or fractional number of events.
        """
        self.state_ += _whole(events, "events", "the number of new events", 0)
        return self

    def announce_intrusion(self) -> PanPrivateCounter:
        """Re-randomize the state after an intrusion the counter was told about (fresh noise added)."""
        self.state_ += int(self._source.discrete_laplace(np.zeros(1, dtype=np.int64), self.scale_)[0])
        self.draws_ += 1
        return self

    def release(self) -> PanPrivateRelease:
        """The noisy count: the state plus fresh discrete Laplace noise of scale m/ε."""
        value = int(self._source.discrete_laplace(np.array([self.state_], dtype=np.int64), self.scale_)[0])
        self.releases_ += 1
        k = self.releases_
        statement = (f"pan-private count with epsilon = {self.epsilon:g} for streams that differ by one user's at most "
                     f"{self.max_contribution} event(s): the memory is epsilon-DP at every moment; one unannounced "
                     f"intrusion and {k} release(s) are {'epsilon' if k == 1 else f'{k + 1}·epsilon'}-DP together; any "
                     f"number of announced intrusions (the state re-randomized after each) and one release at the end "
                     f"are epsilon-DP together.")
        guarantee = {"model": "pan-private epsilon-DP", "epsilon": self.epsilon, "max_contribution": self.max_contribution,
                     "scale": self.scale_, "releases": k, "statement": statement}
        variance = (self.draws_ + 1) * _discrete_laplace_variance(self.scale_)
        return PanPrivateRelease(float(value), variance, self.epsilon, guarantee, self._source.fit_for_release,
                                 self._source.description)


# --------------------------------------------------------------------------- the density estimator

class PanPrivateDensity:
    """The fraction of a public universe of users who appeared in a stream, with an ε-DP memory.

    Dwork et al.'s density estimator (ICS 2010); see the module notes.

    Args:
        universe: the public list of user ids the stream may contain (never taken from the
            data), or a whole number N for the ids 0 … N − 1. Appearances of other ids are left out.
        epsilon: ε, 0 < ε <= 1.
        sample_size: m, how many users of the universe the memory follows (default: all);
            drawn at random, independently of the data.
        noise: ``None`` (secure, fit for release), or a seed / Generator / NoiseSource (experiment).

    Attributes:
        state_: a copy of the sampled users' bits: what an intruder sees.
        sample_: the ids of the sampled users (public: they do not depend on the data).
        p1_: Pr[1] under D_1, exactly as drawn: floor((1/2 + ε/4)·2⁵³)/2⁵³.
        state_epsilon_: the state's exact ε, max(ln(2 p1_), −ln(2 (1 − p1_))) <= ε.
        releases_: how many releases were made.

    Raises:
        ParameterError: ε outside (0, 1], an empty or repetitive universe, or a sample size
            outside 1 … |universe|.
    """

    def __init__(self, universe: Any, epsilon: float, *, sample_size: int | None = None, noise: NoiseArg = None):
        eps = _check_epsilon(epsilon)
        if eps > 1:
            raise ParameterError(f"the pan-private density estimator needs epsilon <= 1 (its coins are 1/2 and "
                                 f"1/2 + epsilon/4), got {eps:g}.")
        self.epsilon = eps
        if isinstance(universe, numbers.Integral) and not isinstance(universe, bool):
            ids = pd.RangeIndex(_whole(universe, "universe", "the number of user ids", 1))
        else:
            ids = pd.Index(list(universe))
        if len(ids) == 0:
            raise ParameterError("the universe of user ids is empty; give the public list of users the stream may "
                                 "contain.")
        if not ids.is_unique:
            raise ParameterError("the universe of user ids names a user twice; give each id once.")
        m = len(ids) if sample_size is None else _whole(sample_size, "sample_size", "the users the memory follows", 1)
        if m > len(ids):
            raise ParameterError(f"sample_size = {m} is larger than the universe of {len(ids)} users.")
        self._source = as_noise_source(noise)
        # a uniformly random sample of m users (ranks of uniform draws; the sample is public)
        chosen = np.arange(m) if m == len(ids) else np.sort(np.argsort(self._source.uniform(len(ids)))[:m])
        self._ids = ids
        self._slot = np.full(len(ids), -1, dtype=np.int64)
        self._slot[chosen] = np.arange(m)
        self.sample_ = ids[chosen]
        self.p1_ = math.floor((0.5 + eps / 4) * 2.0**53) / 2.0**53
        self.state_epsilon_ = max(math.log(2 * self.p1_), -math.log(2 * (1 - self.p1_)))
        self._bits = self._source.bernoulli(0.5, m)
        self.releases_ = 0

    @property
    def state_(self) -> np.ndarray:
        return self._bits.copy()

    def update(self, users: Any) -> PanPrivateDensity:
        """Take in the appearances of ``users`` (a sequence of ids, in any order, repeats allowed):
        the bit of every sampled user among them is drawn again from D_1.

        Raises:
            ParameterError: ``users`` is not a sequence of ids.
        """
        given = np.atleast_1d(np.asarray(users))
        if given.ndim != 1:
            raise ParameterError("users must be a flat sequence of user ids.")
        if isinstance(self._ids, pd.RangeIndex) and given.dtype.kind in "iu":
            positions = np.where((given >= 0) & (given < len(self._ids)), given, -1)  # ids 0 … N − 1 are positions
        else:
            positions = self._ids.get_indexer(pd.Index(given.astype(object)))
        slots = self._slot[positions[positions >= 0]]
        slots = np.unique(slots[slots >= 0])
        self._bits[slots] = self._source.bernoulli(self.p1_, slots.shape[0])
        return self

    def release(self) -> PanPrivateRelease:
        """The estimated fraction of sampled users who appeared: (θ̃ − 1/2)/(p_1 − 1/2), θ̃ the
        fraction of ones plus Laplace noise of scale 1/(ε m)."""
        m = self._bits.shape[0]
        scale = check_scale(1.0 / (self.epsilon * m), "Laplace", self.epsilon * m, 1.0)
        theta = self._source.laplace(np.array([self._bits.mean()]), scale)[0]
        gain = self.p1_ - 0.5
        self.releases_ += 1
        k = self.releases_
        together = f"{k + 1}·epsilon" if k > 1 else "2·epsilon"
        statement = (f"pan-private density with epsilon = {self.epsilon:g} at user level (one user's every "
                     f"appearance): the memory is {self.state_epsilon_:.6g}-DP (<= epsilon) at every moment; one "
                     f"unannounced intrusion and {k} release(s) are {together}-DP together; {m} sampled users.")
        guarantee = {"model": "pan-private epsilon-DP", "level": "user", "epsilon": self.epsilon,
                     "state_epsilon": self.state_epsilon_, "sample_size": m, "scale": scale, "releases": k,
                     "statement": statement}
        variance = (0.25 / m + 2.0 * scale**2) / gain**2  # Var θ <= 1/(4m), whatever the data
        return PanPrivateRelease(float((theta - 0.5) / gain), variance, self.epsilon, guarantee,
                                 self._source.fit_for_release, self._source.description)
