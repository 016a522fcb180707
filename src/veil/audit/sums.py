"""When answered SUM queries determine a record: an exact, incremental basis of their row space.

A SUM query over the records ``Q`` is the 0/1 row vector ``q`` with ``q_i = 1`` for ``i ∈ Q``; its
answer is ``q·x``. Over real values with no bounds, the answers of the queries ``q₁ … q_k``
determine ``x_i`` exactly when the unit vector ``e_i`` lies in their row space (Chin and
Özsoyoglu's classical criterion, which Kenthapadi, Mishra and Nissim, PODS 2005, recall as a
simulatable auditor for sums: whether ``e_i`` is in the span depends on the queries only, never
on their answers). The state is safe while no ``e_i`` is in the span; a new query is denied when
adding it would put one there.

**Exactly, incrementally.** The row space is kept in reduced row echelon form over the rationals:
each basis row is an integer vector over a positive denominator, reduced by their gcd, with a
pivot column where it is 1 and every other row 0. In reduced form a unit vector lies in the span
iff some row has a single non-zero entry (the coefficients of a combination are its entries at the
pivots, so ``e_i`` can only be the row whose pivot is ``i``). A new query is reduced against the
rows whose pivots it holds (one weighted sum, since the coefficients are the query's own entries
at the pivots), then, if anything is left, its pivot column is eliminated from the rows that hold
it: one integer-preserving update per touched row (``E·N_k − N_k[p]·M`` over ``D_k·E``, then the
gcd), never a re-solve. Entries are ``int64`` while every product provably fits; otherwise the
basis switches, once, to Python integers (exact, slower).

**Atoms.** Records that every answered query treats alike (the same set of queries holds them)
have equal columns, so the basis is kept over these *atoms* instead of records. A record in an
atom of two or more can never be determined (swapping it with its twin changes no answer), so a
record is revealed exactly when a row's single non-zero entry sits on an atom of one record. A
query that holds part of an atom splits it; the new atom's column is a copy of the old one, which
leaves the row space unchanged. Memory and time per query are O(rank × atoms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Entries stay int64 while every intermediate provably stays below this bound.
_INT64_SAFE = 1 << 62


@dataclass(eq=False)
class SumPlan:
    """The effect of answering one SUM query, computed before deciding.

    Attributes:
        dependent: the query is a combination of the answered ones (its answer adds nothing).
        revealed: the record that answering would determine, or ``None``.
    """

    dependent: bool
    revealed: int | None
    _row: tuple | None = None  # (pivot, numerators, denominator) of the new basis row
    _updates: tuple | None = None  # (row indices, new numerators, new denominators)


def _as_int(value) -> int:
    """A numpy or Python integer as a Python integer (for bounds that must not overflow)."""
    return int(value)


class SumState:
    """The answered SUM queries over ``n`` records, as an exact reduced basis over atoms.

    Attributes:
        rank: the dimension of the span of the answered queries.
        atom_of: the atom of every record.
        atom_size: the number of records of each atom.
    """

    def __init__(self, n: int):
        self.n = n
        self.atom_of = np.zeros(n, dtype=np.int64)
        self.atom_size = np.array([n], dtype=np.int64)
        # The basis numerators live in a buffer that grows by doubling in both directions.
        self._buffer = np.zeros((8, 8), dtype=np.int64)
        self.den = np.zeros(0, dtype=np.int64)
        self.pivot = np.zeros(0, dtype=np.int64)
        self.answered = 0

    @property
    def num(self) -> np.ndarray:
        """The basis rows' numerators, ``[rank × atoms]`` (a view of the buffer)."""
        return self._buffer[:len(self.pivot), :len(self.atom_size)]

    def _reserve(self, rows: int, columns: int) -> None:
        have_rows, have_columns = self._buffer.shape
        if rows <= have_rows and columns <= have_columns:
            return
        new_rows = max(rows, 2 * have_rows) if rows > have_rows else have_rows
        new_columns = max(columns, 2 * have_columns) if columns > have_columns else have_columns
        grown = np.zeros((new_rows, new_columns), dtype=self._buffer.dtype)
        grown[:have_rows, :have_columns] = self._buffer
        self._buffer = grown

    @property
    def answered_any(self) -> bool:
        return self.answered > 0

    @property
    def rank(self) -> int:
        return len(self.pivot)

    @property
    def exact_integers(self) -> bool:
        """Whether the basis has switched to Python integers (an entry outgrew int64)."""
        return self._buffer.dtype == object

    def _widen(self) -> None:
        self._buffer = self._buffer.astype(object)
        self.den = self.den.astype(object)

    def _fits(self, bound: int) -> bool:
        if self.exact_integers:
            return True
        if bound < _INT64_SAFE:
            return True
        self._widen()
        return False

    def _split(self, rows: np.ndarray) -> np.ndarray:
        """Split the atoms the query holds in part; return the query as a 0/1 vector over atoms."""
        n_atoms = len(self.atom_size)
        atoms = self.atom_of[rows]
        held = np.bincount(atoms, minlength=n_atoms)
        partial = np.flatnonzero((held > 0) & (held < self.atom_size))
        if len(partial):
            new_id = np.full(n_atoms, -1, dtype=np.int64)
            new_id[partial] = n_atoms + np.arange(len(partial))
            moved = rows[new_id[atoms] >= 0]
            self.atom_of[moved] = new_id[self.atom_of[moved]]
            rank = len(self.pivot)
            self._reserve(rank, n_atoms + len(partial))
            self._buffer[:rank, n_atoms:n_atoms + len(partial)] = self._buffer[:rank, partial]
            self.atom_size[partial] -= held[partial]
            self.atom_size = np.concatenate([self.atom_size, held[partial]])
        q = np.zeros(len(self.atom_size), dtype=self.num.dtype)
        q[np.unique(self.atom_of[rows])] = 1
        return q

    def plan(self, rows: np.ndarray) -> SumPlan:
        """What answering the SUM over ``rows`` would do to the basis (nothing is changed but the
        atoms, which only refine)."""
        q = self._split(rows)
        chosen = np.flatnonzero(q[self.pivot] != 0) if self.rank else np.zeros(0, dtype=np.int64)
        if len(chosen):
            dens = [_as_int(d) for d in self.den[chosen]]
            common = math.lcm(*dens)
            weights = [common // d for d in dens]
            bound = common + sum(w * _as_int(np.abs(self.num[k]).max()) for w, k in zip(weights, chosen.tolist()))
            self._fits(bound)
            q = q.astype(self.num.dtype)
            weights = np.array(weights, dtype=self.num.dtype)
            residual = common * q - weights @ self.num[chosen]
        else:
            residual = q
        nonzero = np.flatnonzero(residual != 0)
        if not len(nonzero):
            return SumPlan(dependent=True, revealed=None)
        # The pivot: the smallest entry in magnitude keeps the numbers small.
        magnitudes = np.abs(residual[nonzero])
        p = int(nonzero[np.argmin(magnitudes)])
        lead = _as_int(residual[p])
        row = residual if lead > 0 else -residual
        scale = math.gcd(_as_int(np.gcd.reduce(row[nonzero])), abs(lead))
        row = row // scale
        den = abs(lead) // scale
        hit = np.flatnonzero(self.num[:, p] != 0) if self.rank else np.zeros(0, dtype=np.int64)
        updated, new_dens = None, None
        if len(hit):
            coef = self.num[hit, p]
            bound = den * _as_int(np.abs(self.num[hit]).max()) + _as_int(np.abs(coef).max()) * _as_int(
                np.abs(row).max())
            if not self._fits(bound):
                row = row.astype(object)
                coef = self.num[hit, p]
            updated = den * self.num[hit] - np.multiply.outer(coef, row)
            new_dens = self.den[hit] * den
            g = np.gcd(np.gcd.reduce(updated, axis=1), new_dens)
            updated = updated // g[:, None]
            new_dens = new_dens // g
        revealed = None
        singles = [(p, row)] if len(nonzero) == 1 else []
        if updated is not None:
            single_rows = np.flatnonzero(np.count_nonzero(updated, axis=1) == 1)
            singles += [(int(np.flatnonzero(updated[r])[0]), None) for r in single_rows.tolist()]
        for atom, _ in singles:
            if self.atom_size[atom] == 1:
                revealed = int(np.flatnonzero(self.atom_of == atom)[0])
                break
        return SumPlan(dependent=False, revealed=revealed, _row=(p, row, den),
                       _updates=None if updated is None else (hit, updated, new_dens))

    def commit(self, plan: SumPlan) -> None:
        """Add the query planned by :meth:`plan` (the last plan made) to the basis."""
        self.answered += 1
        if plan.dependent:
            return
        p, row, den = plan._row
        updates = plan._updates
        wide = self.exact_integers or row.dtype == object or (updates is not None and updates[1].dtype == object)
        if wide:
            if not self.exact_integers:
                self._widen()
            row = row.astype(object)
        if updates is not None:
            hit, updated, new_dens = updates
            self.num[hit] = updated.astype(self.num.dtype)
            self.den[hit] = new_dens
        rank = len(self.pivot)
        self._reserve(rank + 1, len(row))
        self._buffer[rank, :len(row)] = row
        self.den = np.concatenate([self.den, np.array([den], dtype=self.den.dtype)])
        self.pivot = np.concatenate([self.pivot, [p]])

    def determined(self) -> np.ndarray:
        """The records the answered queries determine (none while the auditor holds)."""
        if not self.rank:
            return np.zeros(0, dtype=np.int64)
        singles = np.flatnonzero(np.count_nonzero(self.num, axis=1) == 1)
        atoms = [int(np.flatnonzero(self.num[r])[0]) for r in singles.tolist()]
        atoms = [a for a in atoms if self.atom_size[a] == 1]
        return np.flatnonzero(np.isin(self.atom_of, atoms))
