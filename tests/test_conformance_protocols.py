"""The LDP protocols' conformance suite (:mod:`veil.conformance.protocols`): every registered
frequency oracle keeps the contract, every protocol of veil is registered, and one broken on
purpose in each property is caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veil.conformance import PROTOCOLS, ConformanceError, ProtocolCase, check_protocol
from veil.ldp import GRR, OLH, OUE, PROTOCOLS as LDP_PROTOCOLS
from veil.ldp.protocols import Supports


@pytest.mark.parametrize("case", PROTOCOLS, ids=str)
def test_every_protocol_keeps_the_contract(case):
    check_protocol(case)


def test_every_protocol_of_veil_is_registered():
    assert set(LDP_PROTOCOLS.values()) <= {type(case.make()) for case in PROTOCOLS}


# --------------------------------------------------------------------------- broken on purpose

class BiasedGRR(GRR):
    """Adds a quarter of the estimate's standard deviation (of 200 users) to every estimate."""

    def estimate(self, reports_or_supports, n=None):
        return super().estimate(reports_or_supports, n) + 0.25 * math.sqrt(self.variance(200))


class LooseGRR(GRR):
    """Keeps the true value less often than it states."""

    def _perturb(self, values, source):
        out = super()._perturb(values, source)
        moved = source.bernoulli(0.1, len(values))
        out[moved] = (out[moved] + 1) % self.domain
        return out


class OverstatedOUE(OUE):
    """States twice its variance."""

    def variance(self, n, counts=None):
        return 2 * super().variance(n, counts)


class TellingOLH(OLH):
    """Reports the true hash more often than e^ε allows, and says so in its likelihoods."""

    @property
    def keep_probability(self):
        return math.exp(2 * self.epsilon) / (math.exp(2 * self.epsilon) + self.g - 1)

    @property
    def other_probability(self):
        return 1.0 / (math.exp(2 * self.epsilon) + self.g - 1)

    @property
    def p(self):
        return self.keep_probability


class UnfitGRR(GRR):
    """Marks even the secure source's supports not fit for release."""

    def perturb_and_aggregate(self, values, rng=None, *, chunk_size=None):
        out = super().perturb_and_aggregate(values, rng, chunk_size=chunk_size)
        return Supports(out.protocol, out.counts, out.n, False)


class LenientGRR(GRR):
    """Takes values outside its domain (wrapping them around)."""

    def perturb(self, values, rng=None):
        return super().perturb(np.asarray(values) % self.domain, rng)


@pytest.mark.parametrize("make, prop", [
    (lambda epsilon=1.0: BiasedGRR(epsilon, 8), "unbiased"),
    (lambda epsilon=1.0: LooseGRR(epsilon, 8), "unbiased"),
    (lambda epsilon=1.0: OverstatedOUE(epsilon, 8), "variance"),
    (lambda epsilon=1.0: TellingOLH(epsilon, 8), "privacy"),
    (lambda epsilon=1.0: UnfitGRR(epsilon, 8), "fitness"),
    (lambda epsilon=1.0: LenientGRR(epsilon, 8), "parameters"),
], ids=["biased", "keeps less than stated", "overstated variance", "above e^ε", "secure marked unfit",
        "value outside the domain"])
def test_a_broken_protocol_is_caught(make, prop):
    with pytest.raises(ConformanceError) as caught:
        check_protocol(ProtocolCase("broken", make))
    assert caught.value.property == prop, caught.value
