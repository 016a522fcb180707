"""The published view of the αβ algorithm and its estimator for counting queries.

Rastogi, Suciu and Hong (VLDB 2007, Section 4) publish ``V``, ``α``, ``β`` and ``D``, and a reader
estimates a counting query Q by

    Q̃(V) = (n_V − β·n_D) / α,

``n_V`` being the tuples of V that satisfy Q and ``n_D`` those of D. Since a tuple of I is in V
with probability α + β and a tuple of D \\ I with probability β, ``E[n_V] = α·Q(I) + β·n_D``: the
estimator is unbiased. Its variance is
``[Q(I)·(α + β)(1 − α − β) + (n_D − Q(I))·β(1 − β)]/α²``; the **standard error** reported is that
formula with Q(I) replaced by the estimate clipped to [0, n_D] (a plug-in estimate, computed from
the view alone).

:class:`AlphaBetaView` holds V (the tuples as codes of the public domain, sorted, so their order
says nothing about which were kept and which inserted), the parameters and the domain; it
answers queries, and writes and reads the view with its manifest as one set of files
(:mod:`veil.output`).
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from veil.anonymize.alphabeta.domain import Domain
from veil.anonymize.alphabeta.parameters import AlphaBetaParameters
from veil.anonymize.alphabeta.queries import CountingQuery, ResolvedQueries, count_matching
from veil.errors import DataError, ParameterError

__all__ = ["ALGORITHM", "AlphaBetaView", "Answers", "Estimate", "RELEASE_KIND"]

#: the algorithm's name in configurations and manifests
ALGORITHM = "alphabeta"
#: the kind of release a manifest describes (what the release ledger records)
RELEASE_KIND = "αβ view"
PAPER = "Rastogi, Suciu and Hong, The boundary between privacy and utility in data publishing, VLDB 2007"
ESTIMATOR = "(n_V - beta * n_D) / alpha"


@dataclass(frozen=True)
class Estimate:
    """One counting query's answer from a view.

    Attributes:
        query: the query's text.
        view_count: n_V. domain_count: n_D (exact).
        estimate: Q̃(V). standard_error: its plug-in standard error (module notes).
    """

    query: str
    view_count: int
    domain_count: int
    estimate: float
    standard_error: float


@dataclass(frozen=True)
class Answers:
    """Many queries' answers, as arrays in the queries' order (see :class:`Estimate`)."""

    queries: tuple[CountingQuery, ...]
    view_count: np.ndarray
    domain_count: np.ndarray
    estimate: np.ndarray
    standard_error: np.ndarray

    def __len__(self) -> int:
        return len(self.queries)

    def __getitem__(self, i: int) -> Estimate:
        return Estimate(self.queries[i].text(), int(self.view_count[i]), int(self.domain_count[i]), float(self.estimate[i]),
                        float(self.standard_error[i]))

    def to_frame(self) -> pd.DataFrame:
        """One row per query: query, estimate, standard_error, n_V, n_D."""
        return pd.DataFrame({"query": [q.text() for q in self.queries], "estimate": self.estimate,
                             "standard_error": self.standard_error, "n_V": self.view_count,
                             "n_D": self.domain_count})

    def csv_text(self) -> str:
        """:meth:`to_frame` as CSV."""
        return self.to_frame().to_csv(index=False, lineterminator="\n", float_format="%.10g")


class AlphaBetaView:
    """V, α, β and D: what the αβ algorithm publishes, and the estimator that reads it.

    Args:
        codes: the view's tuples as a ``rows × l`` matrix of domain codes.
        domain: the public domain D.
        parameters: α, β, d, γ (:class:`AlphaBetaParameters`).
        randomness: how the coins were drawn (a description for the manifest).
        fit_for_release: whether the view may be published (secure coins and a public domain).
        not_fit_because: why not, one sentence each.
        notes: sentences a reader should see (e.g. Theorem 3.3's warning).

    Attributes:
        codes: as given, sorted by tuple.
    """

    def __init__(self, codes: np.ndarray, domain: Domain, parameters: AlphaBetaParameters, *,
                 randomness: str = "", fit_for_release: bool = False, not_fit_because: Sequence[str] = (),
                 notes: Sequence[str] = ()):
        codes = np.asarray(codes, dtype=np.int64).reshape(-1, len(domain))
        order = np.argsort(domain.encode(codes), kind="stable")
        self.codes = codes[order]
        self.domain = domain
        self.parameters = parameters
        self.randomness = randomness
        self.fit_for_release = bool(fit_for_release)
        self.not_fit_because = tuple(not_fit_because)
        self.notes = tuple(notes)

    def __len__(self) -> int:
        return self.codes.shape[0]

    def __repr__(self) -> str:
        p = self.parameters
        return (f"AlphaBetaView({len(self):,} tuples of {self.domain.size:,}; alpha={float(p.alpha):.6g}, "
                f"beta={float(p.beta):.6g}, d={float(p.d):.3g}, gamma={float(p.gamma):g})")

    # -- the table --------------------------------------------------------------------------------
    @property
    def data(self) -> pd.DataFrame:
        """The view as a table of text values, one column per attribute."""
        return pd.DataFrame({a.name: a.label_texts(self.codes[:, j]) for j, a in enumerate(self.domain.attributes)})

    def csv_text(self, delimiter: str = ",") -> str:
        """The view as CSV text."""
        return self.data.to_csv(index=False, sep=delimiter, lineterminator="\n")

    # -- the estimator ----------------------------------------------------------------------------
    def resolve(self, queries: Sequence[CountingQuery | dict]) -> ResolvedQueries:
        """The queries against the view's domain (see :class:`.queries.ResolvedQueries`).

        Raises:
            ColumnError: a condition on a column the view does not have.
            ParameterError: a value outside a column's domain, or a malformed query.
        """
        return ResolvedQueries(queries, self.domain)

    def answer(self, queries: Sequence[CountingQuery | dict]) -> Answers:
        """Estimate many counting queries: ``Q̃ = (n_V − β·n_D)/α`` with standard errors.

        Args:
            queries: :class:`CountingQuery` objects or mappings ``{column: value(s) | {min, max}}``.

        Raises:
            ColumnError, ParameterError: as :meth:`resolve`.
        """
        resolved = self.resolve(queries)
        view_count = count_matching(self.codes, resolved)
        estimate, error = self.estimates(view_count, resolved.domain_counts)
        return Answers(tuple(resolved.queries), view_count, resolved.domain_counts, estimate, error)

    def estimate(self, query: CountingQuery | dict) -> Estimate:
        """Estimate one counting query (see :meth:`answer`)."""
        return self.answer([query])[0]

    def estimates(self, view_count, domain_count) -> tuple[np.ndarray, np.ndarray]:
        """Q̃ and its plug-in standard error from the counts ``n_V`` and ``n_D``."""
        p = self.parameters
        alpha, beta = float(p.alpha), float(p.beta)
        n_d = np.asarray(domain_count, dtype=float)
        estimate = (np.asarray(view_count, dtype=float) - beta * n_d) / alpha
        plugged = np.clip(estimate, 0.0, n_d)
        return estimate, np.sqrt(p.variance(plugged, n_d))

    # -- publishing -------------------------------------------------------------------------------
    def manifest(self, delimiter: str = ",") -> dict:
        """JSON-ready: what the paper publishes besides V (α, β, D) and what a reader must know
        (d, γ, the estimator, the view's CSV ``delimiter``, whether the view is fit for release and
        why not)."""
        from veil import __version__

        params = self.parameters
        return {
            "veil": __version__,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "algorithm": ALGORITHM,
            "release_kind": RELEASE_KIND,
            "paper": PAPER,
            "privacy": {"model": "(d,gamma)-privacy against d-independent adversaries (Theorem 4.3)",
                        "d": float(params.d), "gamma": float(params.gamma),
                        "k": None if params.k is None else float(params.k)},
            "parameters": params.to_dict(),
            "domain": self.domain.describe(),
            "estimator": {"formula": ESTIMATOR, "alpha_exact": str(params.alpha), "beta_exact": str(params.beta),
                          "m": self.domain.size, "view_rows": len(self),
                          "standard_error": "plug-in: the variance with Q(I) replaced by the estimate clipped to "
                                            "[0, n_D]"},
            "view": {"rows": len(self), "columns": self.domain.names, "order": "sorted by tuple",
                     "delimiter": delimiter},
            "randomness": self.randomness,
            "fit_for_release": self.fit_for_release,
            "not_fit_because": list(self.not_fit_because),
            "notes": list(self.notes),
        }

    def write(self, view: str | os.PathLike, manifest: str | os.PathLike, *, delimiter: str = ",",
              extra: dict | None = None, reads=()) -> list[Path]:
        """Write the view (CSV) and its manifest (JSON) as one set: both appear or neither does.
        The manifest names the view and its SHA-256 under ``release``.

        Args:
            view: where the view (CSV) goes.
            manifest: where its manifest (JSON) goes.
            delimiter: the view's CSV delimiter.
            extra: entries added to the manifest.
            reads: files the run read, which no output may replace.

        Raises:
            DataError: a folder is missing or unwritable, or the disk is full.
            ParameterError: an output is an input, or both paths are one file.
        """
        from veil.output.writer import OutputSet

        doc = {**self.manifest(delimiter), **(extra or {})}
        with OutputSet([view, manifest], reads=reads) as outputs:
            outputs.put(view, self.csv_text(delimiter))
            outputs.put_manifest(manifest, doc, describes={"release": view})
            return outputs.commit()

    @classmethod
    def read(cls, view: str | os.PathLike, manifest: str | os.PathLike) -> "AlphaBetaView":
        """Read a view and its manifest back, checking that they were published together.

        Raises:
            DataError: the pair does not match (:func:`veil.output.load_manifest`), the manifest is
                not an αβ manifest, or the view holds a column or a value outside the domain.
            ParameterError: the manifest's parameters or domain are malformed.
        """
        from veil.output.reading import load_manifest

        doc = load_manifest(manifest, view)
        if doc.get("algorithm") != ALGORITHM:
            raise DataError(f"{str(manifest)!r} describes a {doc.get('algorithm')!r} release, not an αβ view; give the "
                            "manifest written with the view.")
        domain = Domain.from_description(doc.get("domain") or {})
        params = AlphaBetaParameters.from_dict(doc.get("parameters") or {})
        if params.m != domain.size:
            raise ParameterError("the manifest's m does not match its domain; give the manifest written with the view.")
        delimiter = (doc.get("view") or {}).get("delimiter", ",")
        try:
            table = pd.read_csv(view, sep=delimiter, dtype=str, keep_default_na=False, na_filter=False)
        except (OSError, ValueError, pd.errors.ParserError) as exc:
            raise DataError(f"cannot read the view {str(view)!r}: {exc}.") from None
        if list(table.columns) != domain.names:
            raise DataError(f"the view {str(view)!r} has the columns {', '.join(table.columns)}, but its manifest "
                            f"names {', '.join(domain.names)}; give the manifest written with the view.")
        codes = np.empty((len(table), len(domain)), dtype=np.int64)
        for j, attribute in enumerate(domain.attributes):
            values, inverse = np.unique(table[attribute.name].to_numpy(dtype=object), return_inverse=True)
            lookup = attribute.codes_of_values(values)
            if (lookup < 0).any():
                bad = values[int(np.flatnonzero(lookup < 0)[0])]
                raise DataError(f"the view {str(view)!r} holds {bad!r} in column '{attribute.name}', which is not in "
                                "its domain; give the view and manifest as they were published.")
            codes[:, j] = lookup[inverse]
        return cls(codes, domain, params, randomness=str(doc.get("randomness", "")),
                   fit_for_release=bool(doc.get("fit_for_release")), not_fit_because=doc.get("not_fit_because", ()),
                   notes=doc.get("notes", ()))
