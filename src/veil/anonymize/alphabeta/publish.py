"""The αβ algorithm: publish a randomized view of a table with (d,γ)-privacy.

Rastogi, Suciu and Hong, "The boundary between privacy and utility in data publishing", VLDB 2007,
Section 4. With ``D = D₁ × … × D_l`` the product of the attributes' public domains and I the
table's tuples:

1. every tuple of I is put into V with probability ``α + β``;
2. every tuple of D \\ I is put into V with probability ``β``;
3. V, α, β and D are published.

With α and β chosen per Theorem 4.3 (:func:`.parameters.choose_parameters`) the view is
(d,γ)-private against every d-independent adversary, and the estimator
``Q̃(V) = (n_V − β·n_D)/α`` answers every counting query without bias (:class:`.view.AlphaBetaView`).

**The instance is a set.** The paper's I is a set of tuples of D, and so is V: a tuple twice in V
would prove it came from I. Records that agree on every published attribute are therefore one
tuple of I, and the view's estimates count distinct tuples, not records.

**D is never enumerated** (Adult's nine attributes span about 10⁹ tuples). The kept tuples are one
exact coin per tuple of I; the inserted ones are the Bernoulli process of step 2 over the ranks of
D \\ I (:func:`.sampling.bernoulli_process`: a Binomial(m − n, β) number of them, uniform given
that number), and rank ``r`` of D \\ I is the tuple id ``r + #{s ∈ I : s − (its rank in I) ≤ r}``,
one ``searchsorted`` for all of them. No id of I and no id twice can be drawn, so nothing needs
rejecting. Publishing Adult at γ = 0.5, k = 1 inserts about 19,000 tuples and takes a few
milliseconds of coins.

**Randomness.** Without ``rng`` every coin comes from the operating system's CSPRNG and is exact
(:mod:`.sampling`); a seed or a ``numpy.random.Generator`` makes a reproducible experiment, and
the view then says it is not fit for release.

**Public domains.** Each attribute's domain comes from the ``domains`` given (a list of values, a
``range`` of integers, ``{min, max}``, a :class:`~veil.data.Hierarchy` or an
:class:`.domain.AttributeDomain`) or from the dataset's hierarchy for that column (its leaves).
Records holding a value outside the domain are left out of I by that fixed rule (their number is
:attr:`AlphaBeta.rows_outside_domain_`, which is not published). ``data_domains=True`` takes the
values found in the data for the attributes that have none; the view is then not fit for release.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from veil.anonymize.alphabeta.domain import AttributeDomain, Domain
from veil.anonymize.alphabeta.parameters import check_gamma, choose_parameters, exact, impossibility_note
from veil.anonymize.alphabeta.sampling import Coins, as_coins, bernoulli, bernoulli_process
from veil.anonymize.alphabeta.view import AlphaBetaView
from veil.anonymize.base import Anonymizer
from veil.data.dataset import Dataset
from veil.data.hierarchy import Hierarchy
from veil.errors import DataError, ParameterError

__all__ = ["AlphaBeta", "attribute_domain", "complement_ids"]


def attribute_domain(name: str, spec) -> AttributeDomain:
    """An attribute's domain from what a user gives: an :class:`AttributeDomain`, a
    :class:`Hierarchy` (its leaves), a ``range`` of integers (step 1), a mapping ``{min, max}``
    (the integers between), or a list of values.

    Raises:
        ParameterError: anything else, a ``range`` with a step other than 1, or a malformed domain.
    """
    if isinstance(spec, AttributeDomain):
        if spec.name != name:
            raise ParameterError(f"the domain given for '{name}' is the domain of '{spec.name}'.")
        return spec
    if isinstance(spec, Hierarchy):
        return AttributeDomain.hierarchy(name, spec)
    if isinstance(spec, range):
        if spec.step != 1 or len(spec) == 0:
            raise ParameterError(f"the range given for '{name}' must count up by 1 and hold at least one value.")
        return AttributeDomain.integers(name, spec.start, spec.stop - 1)
    if isinstance(spec, Mapping):
        if set(spec) != {"min", "max"}:
            raise ParameterError(f"the domain of '{name}' as a mapping takes exactly min and max.")
        return AttributeDomain.integers(name, spec["min"], spec["max"])
    if isinstance(spec, (str, bytes)) or not hasattr(spec, "__iter__"):
        raise ParameterError(f"the domain of '{name}' must be a list of values, a range, {{min, max}} or a "
                             f"hierarchy, not {spec!r}.")
    return AttributeDomain.values(name, list(spec))


def complement_ids(ranks: np.ndarray, instance: np.ndarray) -> np.ndarray:
    """The ids of D \\ I at the given ranks (0-based, in increasing id order), for the sorted
    distinct ids ``instance`` of I: rank ``r`` is id ``r + #{i : instance[i] − i ≤ r}``."""
    shifted = instance - np.arange(len(instance), dtype=np.int64)
    return np.asarray(ranks, dtype=np.int64) + np.searchsorted(shifted, ranks, side="right")


class AlphaBeta(Anonymizer):
    """The αβ algorithm of Rastogi, Suciu and Hong (VLDB 2007), see the module notes.

    Args:
        gamma: γ, the bound on the adversary's posterior Pr[t | V], in (0, 1).
        d: the adversary's prior bound d, in (0, γ); or
        k: the prior bound as ``d = k·n/m`` (n the distinct tuples of the table, m = |D|).
        domains: per attribute, its public domain (see :func:`attribute_domain`), or ``"data"``
            for the values found in the data (the view is then not fit for release); attributes
            without one use the dataset's hierarchy.
        attributes: the attributes to publish (default: the quasi-identifiers, then the
            sensitive columns). Other columns are not published.
        data_domains: take the data's values as the domain of attributes that have none (the
            view is then not fit for release).
        rng: ``None`` for secure coins (a release), or a seed / ``numpy.random.Generator`` /
            :class:`.sampling.Coins` for an experiment.

    Attributes:
        domain_: the domain D. parameters_: α, β, d, γ. instance_: the sorted distinct tuple ids
        of I. n_: |I|. records_: the records in the domain. rows_outside_domain_: the records
        left out. notes_: sentences published with the view (how d was set; Theorem 3.3's
        warning when d came from k). warnings_: sentences for the publisher only (Theorem 3.3's
        warning when d was given: it depends on n, which the view then does not disclose).

    Raises:
        ParameterError: at construction, γ outside (0, 1) or neither/both of d and k.
    """

    def __init__(self, gamma, *, d=None, k=None, domains: Mapping[str, object] | None = None,
                 attributes: Sequence[str] | None = None, data_domains: bool = False,
                 rng: Coins | np.random.Generator | int | None = None):
        if k is None:
            choose_parameters(gamma, m=1, d=d)      # checks γ, d and d < γ now, before any data is read
        else:
            check_gamma(gamma)
            if exact(k, "k") <= 0:
                raise ParameterError(f"k must be positive, not {k}.")
        self.gamma = gamma
        self.d = d
        self.k = k
        self.domains = dict(domains or {})
        self.attributes = None if attributes is None else list(attributes)
        self.data_domains = data_domains
        self.rng = rng

    def __repr__(self) -> str:
        prior = f"d={self.d}" if self.k is None else f"k={self.k}"
        return f"AlphaBeta(gamma={self.gamma}, {prior})"

    def _domain(self, dataset: Dataset) -> Domain:
        names = self.attributes if self.attributes is not None else dataset.quasi_identifiers + dataset.sensitive
        if not names:
            raise ParameterError("the αβ algorithm needs at least one attribute to publish.")
        for name in list(self.domains) + list(names):
            dataset.column(name)                        # an unknown column: one sentence with a suggestion
        unused = [name for name in self.domains if name not in names]
        if unused:
            raise ParameterError(f"a domain is given for '{unused[0]}', which is not published; publish it or drop "
                                 "its domain.")
        attributes = []
        for name in names:
            if isinstance(self.domains.get(name), str) and self.domains[name] == "data":
                attributes.append(AttributeDomain.from_data(dataset.column(name)))
            elif name in self.domains:
                attributes.append(attribute_domain(name, self.domains[name]))
            elif name in dataset.hierarchies:
                attributes.append(AttributeDomain.hierarchy(name, dataset.hierarchies[name]))
            elif self.data_domains:
                attributes.append(AttributeDomain.from_data(dataset.column(name)))
            else:
                raise ParameterError(f"the domain of '{name}' must be public, not read from the data: give its values, "
                                     "a range or a hierarchy, or allow domains from the data, which makes the view "
                                     "not fit for release.")
        return Domain(attributes)

    def _instance(self, dataset: Dataset, domain: Domain) -> tuple[np.ndarray, int]:
        """The sorted distinct tuple ids of the records in the domain, and how many records are not."""
        codes = np.column_stack([a.codes_of(dataset.column(a.name)) for a in domain.attributes])
        inside = (codes >= 0).all(axis=1)
        return np.unique(domain.encode(codes[inside])), int((~inside).sum())

    def fit(self, dataset: Dataset, progress=None) -> "AlphaBeta":
        """Fix the domain, read the instance and choose α and β (Theorem 4.3).

        Raises:
            ColumnError: an attribute or a domain's column is not in the dataset.
            ParameterError: an attribute without a public domain (and ``data_domains`` off), a
                malformed domain, a domain of 2⁶³ tuples or more, or d ≥ γ once d = k·n/m.
            DataError: no record lies in the domain (with ``k``, d = k·n/m needs n > 0).
        """
        domain = self._domain(dataset)
        instance, outside = self._instance(dataset, domain)
        if self.k is not None and len(instance) == 0:
            raise DataError("no record has all its values in the domain, so d = k·n/m cannot be set; check the "
                            "domains or give d.")
        self.domain_ = domain
        self.instance_ = instance
        self.n_ = len(instance)
        self.records_ = dataset.num_rows - outside
        self.rows_outside_domain_ = outside
        self.parameters_ = choose_parameters(self.gamma, m=domain.size, d=self.d, k=self.k, n=self.n_)
        impossible = impossibility_note(self.parameters_, max(self.n_, 1))
        if self.k is not None:
            # α and β already disclose n, so whether Theorem 3.3 applies discloses nothing more.
            self.notes_ = tuple(([impossible] if impossible else []) + [
                "alpha and beta were set from k and the number of distinct tuples n (d = k·n/m), so they disclose "
                "n, as in the paper; give d instead to make them independent of the data."])
            self.warnings_ = ()
        else:
            # With d given, the view says nothing about n; whether Theorem 3.3 applies depends on n, so
            # it is said to the publisher only.
            self.notes_ = ()
            self.warnings_ = (impossible,) if impossible else ()
        return self

    def transform(self, dataset: Dataset | None = None) -> AlphaBetaView:
        """Draw the view: keep each tuple of I with probability α + β, insert each tuple of D \\ I
        with probability β (module notes).

        Args:
            dataset: a table to publish with the fitted domain and parameters (default: the one
                fitted).

        Raises:
            ParameterError: the anonymizer was not fitted.
        """
        if not hasattr(self, "parameters_"):
            raise ParameterError("fit the αβ anonymizer before transforming.")
        instance = self.instance_ if dataset is None else self._instance(dataset, self.domain_)[0]
        params, domain = self.parameters_, self.domain_
        coins = as_coins(self.rng)
        kept = instance[bernoulli(coins, params.keep_probability, len(instance))]
        ranks = bernoulli_process(coins, domain.size - len(instance), params.insert_probability)
        ids = np.sort(np.concatenate([kept, complement_ids(ranks, instance)]))
        reasons = []
        if not coins.fit_for_release:
            reasons.append("the coins were seeded (a reproducible experiment), so the view is not fit for release")
        from_data = [a.name for a in domain.attributes if not a.public]
        if from_data:
            reasons.append(f"the domain of {', '.join(from_data)} was read from the data, and publishing it discloses "
                           "that some record holds each of its values")
        return AlphaBetaView(domain.decode(ids), domain, params, randomness=coins.description,
                             fit_for_release=not reasons, not_fit_because=reasons, notes=self.notes_)
