"""The workload of an adaptive synthesizer: the marginals the user cares about, and AIM's candidates.

A workload is a list of weighted cliques (tuples of column names); by default every 2-way and every
3-way clique of the domain, each of weight 1. AIM (McKenna, Mullins, Sheldon and Miklau, PVLDB 2022,
Section 4.2) chooses what to measure among the *downward closure* of the workload (every non-empty
subset of a workload clique) and weighs a candidate r by how much it overlaps the workload:
w_r = Σ over workload cliques s of c_s·|r ∩ s|.

Cliques are put in the domain's column order, so that a clique named twice in another order is one
clique (its weight the sum).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from typing import Any

from veil.errors import ParameterError

__all__ = ["candidate_weights", "default_workload", "downward_closure", "normalize_workload"]

Clique = tuple[str, ...]


def default_workload(names: Sequence[str]) -> tuple[tuple[Clique, float], ...]:
    """Every 2-way and 3-way clique of the columns, weight 1 (the 1-way clique when there is one column)."""
    names = tuple(names)
    if len(names) == 1:
        return ((names, 1.0),)
    cliques = [c for k in (2, 3) for c in itertools.combinations(names, k)]
    return tuple((c, 1.0) for c in cliques)


def _clique(entry: Any, names: Sequence[str], order: dict[str, int]) -> Clique:
    if isinstance(entry, str):
        entry = (entry,)
    try:
        cols = tuple(entry)
    except TypeError:
        raise ParameterError(f"A workload entry must be a tuple of column names, got {entry!r}.") from None
    if not cols:
        raise ParameterError("A workload clique is empty; name at least one column in each.")
    for col in cols:
        if not isinstance(col, str) or col not in order:
            raise ParameterError(f"The workload names an unknown column {col!r}; the domain's columns are "
                                 f"{', '.join(names)}.")
    if len(set(cols)) != len(cols):
        raise ParameterError(f"The workload clique {cols!r} names a column twice; name each column once.")
    return tuple(sorted(cols, key=order.__getitem__))


def _is_weighted(entry: Any) -> bool:
    return (isinstance(entry, (tuple, list)) and len(entry) == 2 and not isinstance(entry[0], str)
            and isinstance(entry[1], numbers.Real) and not isinstance(entry[1], bool))


def normalize_workload(workload, names: Sequence[str]) -> tuple[tuple[Clique, float], ...]:
    """The workload as (clique in column order, weight) pairs, duplicates merged.

    Args:
        workload: ``None`` (every 2- and 3-way clique, :func:`default_workload`), or a sequence whose
            entries are cliques (a tuple of column names, or one name) or (clique, weight) pairs.
        names: the domain's columns, in order.

    Raises:
        ParameterError: the workload is empty, names an unknown column or one twice, has an empty
            clique, or a weight that is not a positive finite number.
    """
    names = tuple(names)
    if workload is None:
        return default_workload(names)
    if isinstance(workload, (str, bytes)) or not isinstance(workload, Sequence):
        raise ParameterError("The workload must be a list of cliques (tuples of column names) or of "
                             "(clique, weight) pairs.")
    order = {n: i for i, n in enumerate(names)}
    merged: dict[Clique, float] = {}
    for entry in workload:
        if _is_weighted(entry):
            clique, weight = _clique(entry[0], names, order), float(entry[1])
            if not (math.isfinite(weight) and weight > 0):
                raise ParameterError(f"The workload weight of {clique!r} must be a positive finite number, "
                                     f"got {entry[1]!r}.")
        else:
            clique, weight = _clique(entry, names, order), 1.0
        merged[clique] = merged.get(clique, 0.0) + weight
    if not merged:
        raise ParameterError("The workload is empty; give at least one clique, or none for every 2- and 3-way one.")
    return tuple(merged.items())


def downward_closure(workload: Sequence[tuple[Clique, float]]) -> tuple[Clique, ...]:
    """Every non-empty subset of a workload clique (each in its clique's order), smallest first."""
    seen: dict[Clique, None] = {}
    for clique, _ in workload:
        for k in range(1, len(clique) + 1):
            for sub in itertools.combinations(clique, k):
                seen.setdefault(sub, None)
    return tuple(sorted(seen, key=len))


def candidate_weights(workload: Sequence[tuple[Clique, float]]) -> dict[Clique, float]:
    """AIM's weight of every candidate r of the downward closure: w_r = Σ_s c_s·|r ∩ s|."""
    return {r: sum(c * len(set(r) & set(s)) for s, c in workload) for r in downward_closure(workload)}
