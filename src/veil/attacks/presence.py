"""The membership attack: how likely each person of a population is to be in a release.

The adversary holds a public population table (a voter list) and a syntactic release of a sample
of it. For a person whose quasi-identifiers, generalized as the release publishes them, form a
tuple shared by ``f`` released records and ``F`` population records, the probability that the
person is in the released table is ``f / F`` (Nergiz, Atzori and Clifton, SIGMOD 2007, the
quantity δ-presence bounds); a person whose tuple is not published is not in it (probability 0).
A probability of 1 is a disclosed membership: every population record with that tuple is in the
release.

A full-domain release is attacked from the raw population: each quasi-identifier of the
population is generalized through its hierarchy to the level the release's manifest names
(:func:`veil.population.publish_population`), so that a person whose value no released
record holds still reads as the release would publish them (the release's value map would leave
them unmatched, and call them outside the release). A quasi-identifier the manifest gives no
level (a release by local recoding, or no manifest) is compared as published. Tuples are matched
as integer codes of one factorization over both tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from veil.attacks.intersection import (_as_published, _load_manifest, _release_name, _roles, published_table,
                                      published_texts)
from veil.classes import STAR, group_rows
from veil.population import publish_population, release_levels
from veil.data.io import read_table
from veil.errors import ColumnError, DataError, ParameterError

# Probabilities at or above which a person counts as exposed, by default.
DEFAULT_EXPOSED = 1.0


class PopulationMismatchError(DataError):
    """The population table does not cover the release (a published tuple it holds fewer times)."""


@dataclass(frozen=True, eq=False)
class MembershipResult:
    """The membership attack's outcome.

    Attributes:
        quasi_identifiers: the columns matched.
        probability: per population record, the probability that it is in the release.
        released: per population record, the released records sharing its published tuple (f).
        matching: per population record, the population records sharing it (F).
        release_rows: rows of the release.
        exposed_at: the probability at or above which a person counts as exposed.
        notes: remarks worth a reader's attention (one sentence each).
    """

    quasi_identifiers: list[str]
    probability: np.ndarray
    released: np.ndarray
    matching: np.ndarray
    release_rows: int
    exposed_at: float
    notes: list[str] = field(default_factory=list)

    @property
    def exposed(self) -> np.ndarray:
        """Population rows whose membership probability reaches :attr:`exposed_at`."""
        return np.flatnonzero(self.probability >= self.exposed_at - 1e-12)

    def summary(self) -> dict:
        """A JSON-ready summary."""
        n = len(self.probability)
        return {"attack": "presence", "quasi_identifiers": self.quasi_identifiers, "population": n,
                "release_rows": self.release_rows, "exposed_at": self.exposed_at,
                "exposed": int(len(self.exposed)),
                "max_probability": float(self.probability.max()) if n else 0.0,
                "mean_probability": float(self.probability.mean()) if n else 0.0,
                "expected_members": float(self.probability.sum()),
                "outside_release": int((self.released == 0).sum()), "notes": list(self.notes)}


def membership_attack(release, population, *, quasi_identifiers: str | Sequence[str] | None = None,
                      exposed_at: float = DEFAULT_EXPOSED, delimiter: str | None = None) -> MembershipResult:
    """Compute, for each person of a population, the probability that they are in a release.

    Args:
        release: a veil ``Release``, a :class:`~veil.attacks.intersection.PublishedRelease`
            (table with its manifest, and the hierarchies of its quasi-identifiers, else those its
            configuration names) or a released table (a path or a frame).
        population: the population table (a path or a frame) with every quasi-identifier, raw.
        quasi_identifiers: the columns the adversary matches on; default: the manifest's.
        exposed_at: the probability in (0, 1] at or above which a person counts as exposed.
        delimiter: the CSV delimiter of tables given as paths (sniffed when ``None``).

    Raises:
        ParameterError: ``exposed_at`` outside (0, 1]; no quasi-identifier named or in the manifest.
        ColumnError: the release or the population lacks a quasi-identifier.
        PopulationMismatchError: a published tuple is held by more released records than
            population records (the population does not cover the release).
        DataError: a table or manifest cannot be read; a quasi-identifier the release generalizes
            has no hierarchy, or one that does not cover the population.
    """
    if not 0 < exposed_at <= 1:
        raise ParameterError(f"the exposure probability must be in (0, 1], not {exposed_at}.")
    published = _as_published(release)
    name = _release_name(published, 1)
    manifest = _load_manifest(published.manifest, name)
    table = published_table(published, delimiter)
    pop = read_table(population, delimiter).data
    qis = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers or [])
    qis = qis or _roles(manifest)[0]
    if not qis:
        raise ParameterError("name the quasi-identifiers the adversary matches on (--qi); no manifest lists them.")
    for where, columns in ((name, table.column_names), ("the population table", pop.column_names)):
        missing = [q for q in qis if q not in columns]
        if missing:
            raise ColumnError(f"{where} has no column '{missing[0]}', named as a quasi-identifier; "
                              "both tables need every quasi-identifier.")
    if release_levels(manifest):
        # A curator's view of the manifest (the gate's) carries the private file's hierarchies too.
        folder = None if published.manifest is None or isinstance(published.manifest, Mapping) else \
            str(Path(published.manifest).parent)
        pop = publish_population(pop, manifest, qis, hierarchies=published.hierarchies, private=manifest,
                                 folder=folder, where=name)
    codes, radices = [], []
    n_rel = table.num_rows
    for q in qis:
        released = published_texts(table.column(q))
        people = published_texts(pop.column(q))
        code, labels = pd.factorize(np.concatenate([released, people]))
        codes.append(code.astype(np.int64))
        radices.append(max(len(labels), 1))
    tuple_of, keys = group_rows(codes, radices)
    tuple_of = np.asarray(tuple_of, dtype=np.int64)
    f = np.bincount(tuple_of[:n_rel], minlength=len(keys))
    big_f = np.bincount(tuple_of[n_rel:], minlength=len(keys))
    starred = _all_star(table, qis)
    notes = []
    if starred.any():
        # Rows published as all '*' are suppressed records: they match anyone, so they are set
        # aside rather than credited to one tuple.
        f = f - np.bincount(tuple_of[:n_rel][starred], minlength=len(keys))
        notes.append(f"{int(starred.sum()):,} rows of {name} are all '{STAR}' (suppressed records); they could be "
                     "anyone and are not counted in any person's probability.")
    uncovered = (f > big_f)
    if uncovered.any():
        raise PopulationMismatchError(
            f"{int(uncovered.sum()):,} published tuples of {name} are held by more released records than "
            "population records; the population must contain every released record.")
    person = tuple_of[n_rel:]
    released_count = f[person]
    matching = big_f[person]
    probability = np.where(matching > 0, released_count / np.maximum(matching, 1), 0.0)
    unmatched = int((released_count == 0).sum())
    if unmatched:
        notes.append(f"{unmatched:,} people of the population share no published tuple: they are not in the "
                     "release (or in its suppressed rows).")
    return MembershipResult(qis, probability, released_count, matching, n_rel, float(exposed_at), notes)



def _all_star(table, qis: Sequence[str]) -> np.ndarray:
    starred = np.ones(table.num_rows, dtype=bool)
    for q in qis:
        starred &= published_texts(table.column(q)) == STAR
    return starred
