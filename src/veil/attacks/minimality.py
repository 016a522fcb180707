"""The minimality attack (Wong, Fu, Wang and Pei, "Minimality attack in privacy preserving data
publishing", VLDB 2007): the adversary knows the algorithm.

The adversary knows every person's quasi-identifiers (an external table, the *population*), the
privacy model, and how the publisher chose the release: a generalization that is *minimal* (no
less generalized one satisfies the model), or veil's optimal full-domain search, or Mondrian, or
Ace. He considers every input table that could have produced the release, I(O, A), each as likely
a priori (every assignment of the published sensitive values to the people consistent with the
published classes), weighted by the probability that the algorithm publishes O from it, and reads
each person's posterior of each sensitive value off them (Xiao, Tao and Koudas, TODS 2010, call a
release *transparently* ℓ-diverse when no posterior exceeds 1/ℓ).

The seed lecture's example: one quasi-identifier with values q1 and q2 under Q, a model that
wants P[Cancer = yes] ≤ ½ in every class, and the release Q yes, Q yes, Q no, Q no, q2 no, q2 no.
Of the tables two q1 people and four q2 people could have, only the one where both q1 people have
cancer needed any generalization, so P[Cancer = yes | q1] = 1.

**What the adversary knows of the algorithm** (a :class:`~veil.attacks.publisher.Publisher`):

* :class:`~veil.attacks.fulldomain_publishers.OptimalFullDomain` — veil's optimal full-domain
  search (:class:`~veil.anonymize.FullDomain`): the release's node N is returned from T iff N
  satisfies the models on T, no node with a lower loss (the metric reads only the
  quasi-identifiers) does, and, when other nodes tie with N on loss, the search finds N first;
  that last part is replayed with the search's own code (:mod:`veil.attacks.search_replay`). A
  heuristic or time-limited search cannot be replayed: the attack then reports the bound below
  and says why.
* :class:`~veil.attacks.fulldomain_publishers.MinimalFullDomain` — a minimal single-node
  generalization (Wong et al.'s setting): N satisfies the models on T and no node below N does.
* :class:`~veil.attacks.recoding_publishers.MinimalRecoding` — a minimal record-level
  generalization (the seed's example): the release satisfies the models on T and publishing any
  set of its generalized records with their original quasi-identifiers would not.
* :class:`~veil.attacks.recoding_publishers.MondrianProcess`,
  :class:`~veil.attacks.recoding_publishers.AceProcess` — the algorithm itself, run on each
  candidate (Ace's Assign is randomized: its draws are enumerated and the candidate weighted by
  the share that publishes O).

**Exactly on small tables.** The candidate inputs are enumerated
(:mod:`veil.attacks.candidate_inputs`): per class, every distinct arrangement of its published
values over its members when everyone's class is known (full-domain and strict Mondrian
releases), otherwise every arrangement of all published values over all people that some matching
of people to published rows allows (overlapping cells: relaxed Mondrian, Ace, record-level
recoding). Everyone's classes are found by :func:`~veil.attacks.locating.locate`. Posteriors are
exact fractions of the weights.

**A bound on large tables** (Adult): enumeration is out of reach (or the algorithm cannot be
replayed), and the attack says so (``exact_`` is ``False``) and reports a *lower bound* on the
number of people whose posterior exceeds the threshold τ (1/ℓ), from the class averages and the
classes the algorithm's choice does not touch (:mod:`veil.attacks.minimality_bound`). The count
is exact when every class is untouched; otherwise it is a lower bound, and the report says how
many people it is exact for.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from veil.attacks.candidate_inputs import count_tables, exact_posteriors
from veil.attacks.fulldomain_publishers import MinimalFullDomain, OptimalFullDomain
from veil.attacks.locating import locate
from veil.attacks.minimality_bound import exceeding_bound
from veil.attacks.published_classes import PublishedClasses
from veil.attacks.publisher import Publisher
from veil.attacks.recoding_publishers import AceProcess, MinimalRecoding, MondrianProcess
from veil.data.dataset import Dataset
from veil.errors import DataError, ParameterError

# The names users import from this module (the publishers' homes are the modules above).
__all__ = ["MAX_TABLES", "AceProcess", "MinimalFullDomain", "MinimalityAttack", "MinimalRecoding", "MondrianProcess",
           "OptimalFullDomain", "PublishedClasses", "Publisher", "locate"]

# Candidate inputs enumerated at most before the attack falls back to the bound.
MAX_TABLES = 200_000


class MinimalityAttack:
    """The minimality attack: posteriors over the inputs that could have produced a release.

    Args:
        publisher: what the adversary knows of the algorithm (a :class:`Publisher`).
        threshold: the posterior τ above which a person counts as exposed (default: the
            publisher's 1/ℓ).
        max_tables: enumerate at most this many candidate inputs; beyond, bound (see the module
            notes).
        values: the sensitive values whose posteriors count (as text; default every value), e.g.
            only ``yes`` when learning that someone does *not* have cancer is acceptable.

    Attributes (after :meth:`fit`):
        exact_: whether posteriors were computed exactly (enumeration, the algorithm replayed).
        unreplayable_: why the algorithm cannot be replayed exactly (then only the bound is
            reported), or ``None``.
        values_: the sensitive values (text).
        posterior_: exact mode: ``[people × values]`` posteriors; else ``None``.
        tables_: exact mode: the candidate inputs enumerated, and ``consistent_``: those the
            algorithm could have published the release from.
        person_class_: each person's class, or −1 when several classes cover them.
        exceeding_: the number of people whose posterior exceeds τ (exact mode), or a lower bound.
        exact_people_: the people for whom that is known exactly (everyone in exact mode).
        class_bound_: bound mode: per class, at least how many members exceed τ.

    Raises:
        ParameterError: a threshold outside (0, 1); no threshold can be found or given.
    """

    def __init__(self, publisher: Publisher, *, threshold: float | None = None, max_tables: int = MAX_TABLES,
                 values: Sequence[str] | None = None):
        if threshold is not None and not 0 < threshold < 1:
            raise ParameterError(f"the posterior threshold is a probability strictly between 0 and 1, not "
                                 f"{threshold:g}.")
        self.publisher = publisher
        self.threshold = threshold
        self.max_tables = int(max_tables)
        self.values = None if values is None else [str(v) for v in values]

    def fit(self, release, population: Dataset, *, sensitive: str | None = None,
            quasi_identifiers: Sequence[str] | None = None) -> "MinimalityAttack":
        """Attack ``release`` (a veil Release, a frame, a pyarrow Table or a path) knowing
        ``population`` (a Dataset of everyone's quasi-identifiers, with their hierarchies).

        Raises:
            ColumnError: the release or the population lacks a column.
            DataError: the population does not match the release (class sizes), or no input
                the algorithm could have published the release from exists.
            ParameterError: a value of ``values`` that the release's sensitive column does not hold.
        """
        from veil.anonymize.release import Release

        if isinstance(release, Release):
            quasi_identifiers = quasi_identifiers or release.dataset.quasi_identifiers
            sensitive = sensitive or self._sensitive_of(release)
        qis = list(quasi_identifiers or population.quasi_identifiers)
        if sensitive is None:
            raise ParameterError("name the sensitive column of the release to attack.")
        published = PublishedClasses.read(release, qis, sensitive)
        tau = self.threshold if self.threshold is not None else self.publisher.threshold()
        if tau is None:
            raise ParameterError("give the posterior threshold to report (the models name no ℓ to take 1/ℓ from).")
        if population.num_rows != int(published.sizes.sum()):
            raise DataError(f"the population has {population.num_rows:,} people and the release {int(published.sizes.sum()):,} "
                            "rows; the attack needs one row per person (a release without suppressed records).")
        indptr, covers = locate(published, population)
        n_cover = np.diff(indptr)
        if (n_cover == 0).any():
            p = int(np.flatnonzero(n_cover == 0)[0])
            raise DataError(f"person {p} of the population lies in no published class; the population does not "
                            "match the release.")
        unique = n_cover == 1
        person_class = np.full(len(n_cover), -1, dtype=np.int64)
        person_class[unique] = covers[indptr[:-1][unique]]
        located = bool(unique.all()) and np.array_equal(
            np.bincount(person_class, minlength=published.n_classes), published.sizes)
        if self.publisher.located and not located:
            raise DataError("some people lie in several published classes or the class sizes do not match the "
                            "population, so this is not a full-domain release of this population.")
        self.values_ = published.values
        held = published.values.astype(str)
        unknown = [] if self.values is None else [v for v in self.values if v not in held]
        if unknown:
            shown = ", ".join(held[:8].tolist()) + (f" and {len(held) - 8} more" if len(held) > 8 else "")
            raise ParameterError(f"the release's column '{sensitive}' holds no value {unknown[0]!r} to count; its "
                                 f"values are {shown}.")
        self.protected_ = np.ones(len(held), dtype=bool) if self.values is None else np.isin(held, self.values)
        self.threshold_ = float(tau)
        self.person_class_ = person_class
        self.published_ = published
        self.publisher.prepare(published, population, person_class if located else None)
        self.unreplayable_ = self.publisher.unreplayable
        if (self.unreplayable_ is None
                and count_tables(published, person_class if located else None) <= self.max_tables):
            self._enumerate(published, person_class if located else None, indptr, covers)
        else:
            self._bound(published, located)
        return self

    @property
    def count_exact_(self) -> bool:
        """Whether :attr:`exceeding_` is the exact number (else a lower bound)."""
        return self.exact_people_ == len(self.person_class_)

    @staticmethod
    def _sensitive_of(release) -> str:
        targets = {m.sensitive for m in release.models if getattr(m, "sensitive", None)}
        if len(targets) == 1:
            return targets.pop()
        if len(release.dataset.sensitive) == 1:
            return release.dataset.sensitive[0]
        raise ParameterError("the release has several sensitive columns; name the one to attack.")

    def _enumerate(self, published, person_class, indptr, covers) -> None:
        self.proven_ = None
        self.posterior_, self.tables_, self.consistent_ = exact_posteriors(self.publisher, published, person_class,
                                                                           indptr, covers)
        self.exact_ = True
        n = len(indptr) - 1
        exceeding = self.posterior_[:, self.protected_].max(axis=1) > self.threshold_ + 1e-12
        self.exceeding_ = int(exceeding.sum())
        self.exact_people_ = n
        self.class_bound_ = None

    def _bound(self, published, located) -> None:
        self.exact_ = False
        self.posterior_ = None
        self.tables_ = self.consistent_ = None
        bound = exceeding_bound(published, self.publisher, self.threshold_, self.protected_, located)
        self.proven_ = bound.proven
        self.class_bound_ = bound.class_bound
        self.exact_class_ = bound.exact_class
        self.exceeding_ = int(bound.class_bound.sum())
        self.exact_people_ = int(published.sizes[bound.exact_class].sum())

    def summary(self) -> dict:
        """The result as a JSON-ready dict."""
        n = len(self.person_class_)
        out = {"publisher": self.publisher.name, "people": n, "classes": self.published_.n_classes,
               "threshold": self.threshold_, "enumerated": self.exact_, "count_exact": self.count_exact_,
               "exceeding" if self.count_exact_ else "exceeding_at_least": self.exceeding_,
               "share": self.exceeding_ / n if n else 0.0, "people_known_exactly": self.exact_people_}
        if self.exact_:
            out.update({"inputs_enumerated": self.tables_, "inputs_consistent": self.consistent_})
        elif self.proven_ is not None:
            out["proven"] = self.proven_
        if not self.exact_:
            out["not_enumerated"] = self.unreplayable_ or "too many inputs to enumerate"
        return out

    def per_person(self, ids: Sequence | None = None) -> pd.DataFrame:
        """One row per person: class, most likely value and its posterior (exact mode), or the
        class frequency when it is exact and nothing otherwise (bound mode), and whether the
        posterior exceeds the threshold (``None`` when unknown)."""
        n = len(self.person_class_)
        frame = pd.DataFrame({"person": list(ids) if ids is not None else np.arange(n), "class": self.person_class_})
        protected = np.flatnonzero(self.protected_)
        if self.exact_:
            best = protected[self.posterior_[:, protected].argmax(axis=1)]
            frame["value"] = self.values_[best]
            frame["posterior"] = self.posterior_[np.arange(n), best]
            frame["exceeds"] = frame["posterior"] > self.threshold_ + 1e-12
            return frame
        if self.proven_ is not None:
            frame["value"], frame["posterior"] = None, np.nan
            frame["exceeds"] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
            return frame
        counts = self.published_.counts[:, protected]
        cls = np.maximum(self.person_class_, 0)
        known = (self.person_class_ >= 0) & self.exact_class_[cls]
        share = counts[cls].max(axis=1) / counts[cls].sum(axis=1)
        frame["value"] = np.where(known, self.values_[protected[counts[cls].argmax(axis=1)]], None)
        frame["posterior"] = np.where(known, share, np.nan)
        frame["exceeds"] = pd.array(np.where(known, share > self.threshold_ + 1e-12, False), dtype="boolean")
        frame.loc[~known, "exceeds"] = pd.NA
        return frame
