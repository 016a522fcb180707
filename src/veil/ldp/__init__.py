"""Local differential privacy: frequency oracles (GRR, SUE / basic RAPPOR, OUE, BLH, OLH).

Each protocol is a small object with the client side (``perturb``, vectorized over users; the
secure source by default), the server side (``aggregate`` to support counts, ``estimate`` with the
unbiased estimator, ``perturb_and_aggregate`` for memory-light simulations) and the theory
(``p``, ``q``, ``variance``, ``privacy_ratio``) of Wang, Blocki, Li and Jha (USENIX Security
2017). ``choose_protocol`` picks the lowest-variance protocol for an ε and a domain size;
``postprocess`` clips and renormalizes estimates.
"""

from veil.ldp.protocols import (
                                BLH,
                                GRR,
                                OLH,
                                OUE,
                                PROTOCOLS,
                                SUE,
                                FrequencyOracle,
                                Reports,
                                Supports,
                                choose_protocol,
                                make_protocol,
                                postprocess,
                                universal_hash,
)
from veil.ldp.randomness import MERSENNE_61, Randomness, as_randomness

__all__ = [
                                "BLH",
                                "GRR",
                                "MERSENNE_61",
                                "OLH",
                                "OUE",
                                "PROTOCOLS",
                                "SUE",
                                "FrequencyOracle",
                                "Randomness",
                                "Reports",
                                "Supports",
                                "as_randomness",
                                "choose_protocol",
                                "make_protocol",
                                "postprocess",
                                "universal_hash",
]
