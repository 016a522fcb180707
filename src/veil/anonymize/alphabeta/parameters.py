"""The parameters of the αβ algorithm: (d,γ)-privacy (Theorem 4.3) and (ρ,ε)-usefulness (Theorem 4.4).

Rastogi, Suciu and Hong, "The boundary between privacy and utility in data publishing", VLDB 2007:

* An adversary is **d-independent** (Definition 2.1) when its prior makes the tuples of the
  domain D independent and gives each tuple ``t`` a probability ``Pr[t] ≤ d`` of being in the
  instance I, or 1. The paper writes ``d = k·n/m`` with ``n = |I|`` and ``m = |D|``: an
  adversary ``k`` times better informed than the uniform prior ``n/m``.
* An algorithm is **(d,γ)-private** (Definition 2.3) when for every such adversary, every tuple
  with ``Pr[t] ≤ d`` and every published view V: ``Pr[t | V] ≤ γ`` (no positive leakage) and
  ``Pr[t | V] ≥ (d/γ)·Pr[t]`` (no negative leakage).
* **Theorem 4.3**: the αβ algorithm is (d,γ)-private, for ``d < γ``, when
  ``β/(α + β) ≥ d(1 − γ)/(γ(1 − d))`` and ``α + β ≤ 1 − d/γ``.
* An algorithm is **(ρ,ε)-useful** (Definition 2.5) when it has an estimator Q̃ with
  ``Pr[|Q(I) − Q̃(V)| ≥ ρ√n] ≤ ε`` for every counting query Q. The αβ estimator is
  ``Q̃(V) = (n_V − β·n_D)/α`` (n_V: the tuples of V satisfying Q; n_D: those of D), unbiased, and
  Theorem 4.4 states the algorithm is (ρ,ε)-useful with ``ρ`` of the order of ``√(k/γ)``.

**Which α and β.** Both conditions of Theorem 4.3 are met with equality:
``α + β = 1 − d/γ`` and ``β = (α + β)·d(1 − γ)/(γ(1 − d))``. This pair minimizes the variance of
*every* counting query at once: with ``s = α + β`` and ``r = β/s``, the estimator's variance
``[Q(I)·s(1 − s) + (n_D − Q(I))·β(1 − β)]/α²`` falls as ``s`` grows and rises with ``r``, so the
largest ``s`` and the smallest ``r`` the theorem allows are best. α and β are exact fractions
(γ, d and k are read as the decimals they are written as), so the conditions hold exactly and
the coins of :mod:`.sampling` realize exactly these probabilities.

**The usefulness bound.** The seed states Theorem 4.4 without its constants; veil's bound is
Chebyshev's inequality on the estimator's exact variance, maximized over all counting queries
(``Q(I) = n`` and ``n_D = m``)::

    ε(ρ) = min(1, Var_max / (ρ²·n)),   Var_max = [n·s(1 − s) + (m − n)·β(1 − β)] / α².

With the parameters above, ``Var_max/n ≈ k(1 − γ)/γ``: ``ρ = √(k/(γε))`` suffices, the
``ρ ∝ √(k/γ)`` trade-off of the paper. :func:`parameters_for_usefulness` turns it around: given
the error wanted, the smallest γ (the strongest privacy) that reaches it.

**Theorem 3.3** (the impossibility): no meaningful algorithm is (d,γ)-private when
``d ≥ (1/c)·(γ/(1 − γ))·n/√m`` for a constant c, i.e. when ``k`` is of the order of ``√m``. αβ is
still private then, but its estimates drown in the inserted tuples; :func:`impossibility_note`
says so (taking c = 1, since the paper leaves it unnamed).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from veil.errors import ParameterError

__all__ = ["AlphaBetaParameters", "check_gamma", "choose_parameters", "exact", "impossibility_note", "parameters_for_usefulness",
           "prior_bound"]


def exact(value, name: str) -> Fraction:
    """A number as the exact fraction it is written as: ``0.1`` (or ``"0.1"``) is 1/10, not the
    binary double nearest to it.

    Raises:
        ParameterError: not a finite number.
    """
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a number, not {value!r}.")
    try:
        if isinstance(value, Fraction):
            return value
        if isinstance(value, numbers.Integral):
            return Fraction(int(value))
        if isinstance(value, numbers.Real):
            number = float(value)
            if not math.isfinite(number):
                raise ValueError
            return Fraction(repr(number))
        if isinstance(value, str):
            return Fraction(value.strip())
    except (ValueError, ZeroDivisionError):
        pass
    raise ParameterError(f"{name} must be a finite number, not {value!r}.")


def check_gamma(gamma) -> Fraction:
    """γ as an exact fraction.

    Raises:
        ParameterError: γ outside (0, 1).
    """
    g = exact(gamma, "gamma")
    if not 0 < g < 1:
        raise ParameterError(f"gamma (the bound on the posterior) must lie strictly between 0 and 1, not {gamma}.")
    return g


def prior_bound(k, n: int, m: int) -> Fraction:
    """The prior bound ``d = k·n/m`` of an adversary ``k`` times better informed than ``n/m``.

    Raises:
        ParameterError: ``k`` not positive, or ``n``, ``m`` not positive with ``n ≤ m``.
    """
    kk = exact(k, "k")
    if kk <= 0:
        raise ParameterError(f"k must be positive, not {k}.")
    if not 0 < n <= m:
        raise ParameterError(f"the instance must hold between 1 and the domain's {m:,} tuples, not {n:,}.")
    return kk * n / m


@dataclass(frozen=True)
class AlphaBetaParameters:
    """The α and β of the αβ algorithm with the privacy they give.

    Attributes:
        alpha, beta: exact fractions; a tuple of I is kept with probability α + β, a tuple of
            D \\ I inserted with probability β.
        d: the adversary's prior bound; gamma: the posterior bound.
        m: the domain's size |D|.
        k: the multiple of n/m the prior bound was given as (``None`` when d was given).
        n: the instance's size, when it was used to compute d from k (``None`` otherwise).
    """

    alpha: Fraction
    beta: Fraction
    d: Fraction
    gamma: Fraction
    m: int
    k: Fraction | None = None
    n: int | None = None

    @property
    def keep_probability(self) -> Fraction:
        return self.alpha + self.beta

    @property
    def insert_probability(self) -> Fraction:
        return self.beta

    def conditions(self) -> dict[str, bool]:
        """Both conditions of Theorem 4.3, checked in exact arithmetic."""
        d, g, s = self.d, self.gamma, self.alpha + self.beta
        return {"beta_share": s > 0 and self.beta / s >= d * (1 - g) / (g * (1 - d)),
                "keep_probability": s <= 1 - d / g}

    def variance(self, true_count, domain_count) -> np.ndarray:
        """Var[Q̃(V)] for a query that ``true_count`` tuples of I and ``domain_count`` of D satisfy:
        ``[Q(I)·(α + β)(1 − α − β) + (n_D − Q(I))·β(1 − β)]/α²`` (vectorized)."""
        s, b, a = float(self.alpha + self.beta), float(self.beta), float(self.alpha)
        q = np.asarray(true_count, dtype=float)
        return (q * s * (1 - s) + (np.asarray(domain_count, dtype=float) - q) * b * (1 - b)) / (a * a)

    def max_variance(self, n: int) -> float:
        """The largest variance of any counting query on an instance of ``n`` tuples."""
        return float(self.variance(n, self.m))

    def usefulness_bound(self, rho: float, n: int) -> float:
        """ε such that the view is (ρ,ε)-useful for an instance of ``n`` tuples: Chebyshev's
        inequality on the largest variance, ``min(1, Var_max/(ρ²n))`` (see the module notes)."""
        if rho <= 0:
            return 1.0
        return min(1.0, self.max_variance(n) / (rho * rho * n))

    def rho_for(self, epsilon: float, n: int) -> float:
        """The ρ the bound gives for a failure probability ``epsilon``: ``√(Var_max/(ε·n))``."""
        return math.sqrt(self.max_variance(n) / (epsilon * n))

    def expected_inserted(self, n: int) -> float:
        """The expected number of inserted tuples, ``β·(m − n)``."""
        return float(self.beta) * (self.m - n)

    def to_dict(self) -> dict:
        """JSON-ready: each fraction as a float and exactly (``"p/q"``)."""
        out = {}
        for name in ("alpha", "beta", "d", "gamma"):
            value = getattr(self, name)
            out[name] = float(value)
            out[f"{name}_exact"] = str(value)
        out["keep_probability"] = float(self.keep_probability)
        out["insert_probability"] = float(self.beta)
        out["m"] = self.m
        if self.k is not None:
            out["k"] = float(self.k)
            out["k_exact"] = str(self.k)
        return out

    @classmethod
    def from_dict(cls, doc: dict) -> "AlphaBetaParameters":
        """Read :meth:`to_dict`'s output back, from the exact fractions.

        Raises:
            ParameterError: a missing or malformed entry, parameters that break Theorem 4.3, or a
                decimal entry (``alpha`` …) that disagrees with its exact fraction (an edited manifest).
        """
        try:
            values = {name: Fraction(str(doc[f"{name}_exact"])) for name in ("alpha", "beta", "d", "gamma")}
            m = int(doc["m"])
            k = Fraction(str(doc["k_exact"])) if doc.get("k_exact") is not None else None
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            raise ParameterError("the αβ parameters must give alpha_exact, beta_exact, d_exact, gamma_exact and m; "
                                 "give the manifest written with the view.") from None
        params = cls(m=m, k=k, **values)
        if not (params.alpha > 0 and all(params.conditions().values())):
            raise ParameterError("the αβ parameters given do not satisfy Theorem 4.3; give the manifest written "
                                 "with the view.")
        shown = {**values, "keep_probability": params.keep_probability, "insert_probability": params.beta,
                 **({"k": k} if k is not None else {})}
        for name, exact in shown.items():
            given = doc.get(name)
            if given is None:
                continue
            try:
                agrees = math.isclose(float(given), float(exact), rel_tol=1e-9, abs_tol=0.0)
            except (TypeError, ValueError):
                agrees = False
            if not agrees:
                raise ParameterError(f"the αβ parameters give {name} = {given!r} but {name} exactly {exact}, so the "
                                     "manifest was edited; give the manifest written with the view.")
        return params


def choose_parameters(gamma, *, m: int, d=None, k=None, n: int | None = None) -> AlphaBetaParameters:
    """α and β per Theorem 4.3, the pair that minimizes every query's variance (module notes).

    Args:
        gamma: the posterior bound γ, in (0, 1).
        m: the domain's size |D|.
        d: the prior bound d, in (0, γ); or
        k: with ``n``, the prior bound as ``d = k·n/m``.
        n: the instance's size (needed with ``k``).

    Raises:
        ParameterError: γ outside (0, 1); neither or both of d and k; k without n; d ≤ 0 or
            d ≥ γ (Theorem 4.3 needs d < γ).
    """
    g = check_gamma(gamma)
    if d is not None and k is not None:
        raise ParameterError("give the adversary's prior bound as either d or k (d = k·n/m), not both.")
    if d is None and k is None:
        raise ParameterError("give the adversary's prior bound, as d or as k (d = k·n/m).")
    kk = None
    if k is not None:
        if n is None:
            raise ParameterError("k needs the instance's size n to give d = k·n/m.")
        dd = prior_bound(k, n, m)
        kk = exact(k, "k")
    else:
        dd = exact(d, "d")
        n = None
    if dd <= 0:
        raise ParameterError(f"d (the prior bound) must be positive, not {float(dd):g}.")
    if dd >= g:
        given = f"d = {float(dd):.6g}" + (f" (k·n/m with k = {float(kk):g})" if kk is not None else "")
        raise ParameterError(f"{given} is not below gamma = {float(g):g}; Theorem 4.3 needs d < gamma, so raise "
                             "gamma or lower " + ("k." if kk is not None else "d."))
    keep = 1 - dd / g
    beta = keep * dd * (1 - g) / (g * (1 - dd))
    return AlphaBetaParameters(alpha=keep - beta, beta=beta, d=dd, gamma=g, m=int(m), k=kk, n=n)


def impossibility_note(params: AlphaBetaParameters, n: int) -> str | None:
    """A sentence when the prior is strong enough for Theorem 3.3's impossibility to apply:
    ``d ≥ (γ/(1 − γ))·n/√m`` (its constant taken as 1), else ``None``."""
    g = float(params.gamma)
    threshold = g / (1 - g) * n / math.sqrt(params.m)
    if float(params.d) < threshold:
        return None
    k = float(params.d) * params.m / n
    return (f"the prior bound d = {float(params.d):.3g} (k = {k:.3g}) is of the order of n/√m (k ≥ γ/(1 − γ)·√m = "
            f"{g / (1 - g) * math.sqrt(params.m):.3g}): by Theorem 3.3 of Rastogi et al. no algorithm is both "
            "private and useful against such an adversary, so the estimates will be mostly noise.")


def parameters_for_usefulness(rho: float, epsilon: float, *, n: int, m: int, d=None, k=None) -> AlphaBetaParameters:
    """The strongest privacy (smallest γ) whose usefulness bound reaches (ρ, ε), with its α and β.

    The bound ``Var_max/(ρ²n)`` falls as γ grows, so γ is found by bisection, then written as a
    decimal of 6 significant digits rounded up (and checked) so that the bound holds.

    Raises:
        ParameterError: ρ or ε not positive, ε ≥ 1, a bad d or k, or (ρ, ε) out of reach even as
            γ approaches 1 (the largest γ tried is 1 − 10⁻⁹).
    """
    if not (isinstance(rho, numbers.Real) and rho > 0 and math.isfinite(rho)):
        raise ParameterError(f"rho must be a positive number, not {rho}.")
    if not (isinstance(epsilon, numbers.Real) and 0 < epsilon < 1):
        raise ParameterError(f"epsilon must lie strictly between 0 and 1, not {epsilon}.")
    prior = prior_bound(k, n, m) if k is not None else (exact(d, "d") if d is not None else None)
    if prior is None or prior <= 0:
        raise ParameterError("give the adversary's prior bound as a positive d or k.")

    def bound(gamma: float) -> float:
        if exact(gamma, "gamma") <= prior:
            return math.inf
        return choose_parameters(gamma, m=m, d=prior).usefulness_bound(rho, n)

    top = 1 - 1e-9
    if float(prior) >= top or bound(top) > epsilon:
        raise ParameterError(f"no gamma below 1 gives (rho, epsilon) = ({rho:g}, {epsilon:g}) against d = "
                             f"{float(prior):.3g}; accept a larger rho or epsilon.")
    low, high = float(prior), top
    for _ in range(80):
        middle = (low + high) / 2
        if bound(middle) > epsilon:
            low = middle
        else:
            high = middle
    digits = 6
    gamma = Fraction(math.ceil(high * 10 ** digits), 10 ** digits)
    while gamma >= 1 or bound(float(gamma)) > epsilon:
        digits += 1
        gamma = Fraction(math.ceil(high * 10 ** digits), 10 ** digits)
    params = choose_parameters(gamma, m=m, d=prior)
    if k is not None:
        params = AlphaBetaParameters(params.alpha, params.beta, params.d, params.gamma, m, exact(k, "k"), n)
    return params
