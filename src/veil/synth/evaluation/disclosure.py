"""veil's own disclosure checks of the synthetic table against the real one.

- exact copies: the share of synthetic records identical, on every column, to some real training
  record;
- real-unique matches: the share of synthetic records whose quasi-identifier combination matches
  exactly one real record (such a synthetic record points at one real person, and whatever else
  it says may be read as that person's);
- k-anonymity of the synthetic table on the quasi-identifiers: its smallest class size k (the
  fewest synthetic records sharing a combination) and the share of its records in classes of
  fewer than :data:`SMALL_CLASS` records.

A real record drawn at random also matches real records by chance, so when a holdout is given the
same numbers are computed for the holdout against the training table: the baseline a synthetic
table should not exceed. Counts come from mixed-radix keys, not from loops over records.

Why not veil's class core (:mod:`veil.classes`, :mod:`veil.risk`): its journalist risk treats the
released table as a sample of the population (:func:`veil.classes.match_population` refuses a
class with more records than the population holds with its values, or none), which a synthetic
table is not: it may hold combinations no real record has, or more copies of one than the real
table. Its prosecutor risk (1/f in the released table) assumes the target is a record of the
released table, and no real person is. What both models ask of a synthetic table is measured
here instead: the smallest class k (the same definition as veil's check) and the real-unique
matches (a synthetic record whose combination one real record holds: journalist risk 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.synth.evaluation.keys import counts_in, joint_keys
from veil.synth.evaluation.sections import Row, Section, share

SMALL_CLASS = 5


@dataclass(frozen=True)
class TableDisclosure:
    """The checks of one released-like table (the synthetic one, or the holdout) against the training table."""
    rows: int
    exact_copies: int
    real_unique_matches: int
    smallest_class: int
    in_small_classes: int

    def to_dict(self) -> dict:
        return {"rows": self.rows, "exact_copies": self.exact_copies,
                "exact_copy_share": self.exact_copies / self.rows,
                "real_unique_matches": self.real_unique_matches,
                "real_unique_match_share": self.real_unique_matches / self.rows,
                "smallest_class": self.smallest_class, "in_small_classes": self.in_small_classes,
                "small_class_share": self.in_small_classes / self.rows}


@dataclass(frozen=True)
class Disclosure:
    """The checks of the synthetic table, and of the holdout as a baseline when given."""
    quasi_identifiers: tuple[str, ...]
    synthetic: TableDisclosure
    baseline: TableDisclosure | None

    def to_dict(self) -> dict:
        return {"quasi_identifiers": list(self.quasi_identifiers), "small_class": SMALL_CLASS,
                "synthetic": self.synthetic.to_dict(),
                "holdout_baseline": None if self.baseline is None else self.baseline.to_dict()}

    def section(self) -> Section:
        s, b = self.synthetic, self.baseline

        def pair(value: float, base: float | None) -> str:
            return share(value) if base is None else f"{share(value)} (holdout {share(base)})"

        against = ("" if b is None else " The number in brackets is the same share for holdout records, real "
                   "records the synthesizer never saw: what chance gives.")
        qis = ", ".join(self.quasi_identifiers)
        rows = (Row("exact copies of real records", pair(s.exact_copies / s.rows, b and b.exact_copies / b.rows),
                    "Share of synthetic records identical on every column to a real training record; lower is "
                    "better." + against),
                Row("matches of a real-unique record", pair(s.real_unique_matches / s.rows,
                                                          b and b.real_unique_matches / b.rows),
                    f"Share of synthetic records whose quasi-identifiers ({qis}) match exactly one real record, which "
                    f"they then point at; lower is better." + against),
                Row("smallest class size k", f"{s.smallest_class}" + ("" if b is None else f" (holdout {b.smallest_class})"),
                    "The fewest synthetic records sharing one combination of the quasi-identifiers (the table is "
                    "k-anonymous for this k); higher is better."),
                Row(f"records in classes below {SMALL_CLASS}", pair(s.in_small_classes / s.rows,
                                                                   b and b.in_small_classes / b.rows),
                    f"Share of synthetic records whose quasi-identifier combination fewer than {SMALL_CLASS} "
                    f"synthetic records share; lower is better."))
        return Section("Privacy: copies, uniqueness and k-anonymity", rows)


def _check(table: np.ndarray, training: np.ndarray, sizes: Sequence[int], qis: Sequence[int]) -> TableDisclosure:
    d = len(sizes)
    t_full, r_full = joint_keys([table, training], sizes, range(d))
    copies = int(np.sum(counts_in(r_full, t_full) > 0))
    t_qi, r_qi = joint_keys([table, training], sizes, qis)
    unique_matches = int(np.sum(counts_in(r_qi, t_qi) == 1))
    class_size = counts_in(t_qi, t_qi)
    return TableDisclosure(table.shape[0], copies, unique_matches, int(class_size.min()),
                           int(np.sum(class_size < SMALL_CLASS)))


def disclosure(real: np.ndarray, synthetic: np.ndarray, names: Sequence[str], sizes: Sequence[int], *,
               quasi_identifiers: Sequence[int], holdout: np.ndarray | None) -> Disclosure:
    """The checks of the module's docstring on checked code tables, ``quasi_identifiers`` as
    column indices (the caller's default: every column)."""
    baseline = None if holdout is None else _check(holdout, real, sizes, quasi_identifiers)
    return Disclosure(tuple(names[j] for j in quasi_identifiers), _check(synthetic, real, sizes, quasi_identifiers),
                      baseline)
