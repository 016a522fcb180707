"""Iterative proportional fitting (Deming and Stephan, "On a least squares adjustment of a sampled
frequency table when the expected marginal totals are known", 1940) of a dense table of
probabilities to a collection of marginals.

Each cycle scales the table, marginal by marginal, so that it has that marginal's probabilities;
started from a uniform table, the cycles converge to the maximum-entropy distribution with those
marginals (:mod:`veil.marginals.maxent` uses it when the collection is not decomposable). When the
estimate lies on the boundary (cells that every marginal allows but every consistent distribution
makes 0), IPF only creeps towards 0 there; without those cells it converges geometrically
(Fienberg and Rinaldo 2012), so a slow fit looks for them with one linear program and starts
again without them.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import scipy.optimize
import scipy.sparse

from veil.data.hierarchy import Generalization
from veil.marginals.contingency import ContingencyTable, cell_sizes, mixed_radix

# IPF cycles after which a fit that has not converged looks for cells that must be 0, and the
# most candidate cells that search (one linear program) may take.
_BOUNDARY_CHECK = 100
_SUPPORT_LP_CELLS = 200_000

# A marginal as IPF reads it: the table's axes it spans, the index of the marginal's cell for each
# cell of those axes (an array of their shape), and the marginal's probabilities, dense.
Plan = tuple[tuple[int, ...], np.ndarray, np.ndarray]


def fit(marginals: Sequence[ContingencyTable], domains: Mapping[str, Generalization], levels: Mapping[str, int],
        names: Sequence[str], n: int, *, tol: float, max_iter: int) -> tuple[np.ndarray, int, float]:
    """The dense table of probabilities over the attributes ``names``, each at its level in
    ``levels``, fitted to ``marginals`` (each counting ``n`` records) by iterative proportional
    fitting.

    The fit starts uniform over the cells that cover some value of the data (a hierarchy node may
    cover none): the log of each cell's size lies in the span of the constraints, so IPF from
    there reaches the same distribution as from the cell sizes. It stops when, over a whole cycle,
    no marginal is further than ``tol`` from its target in any cell, or after ``max_iter`` cycles.

    Returns:
        ``(table, cycles, residual)``: the table (axes in the order of ``names``), the cycles run
        and the last cycle's largest residual; the fit converged when ``residual <= tol``, which
        the caller checks.
    """
    shape = [domains[a].radix(levels[a]) for a in names]
    present = np.ones(shape, dtype=bool)
    for i, name in enumerate(names):
        held = cell_sizes(domains[name], levels[name]) > 0
        present &= held.reshape([-1 if j == i else 1 for j in range(len(shape))])
    start = present / present.sum()
    plans = [plan(m, names, shape, domains, levels, n) for m in marginals]
    table, used, residual = cycles(start.copy(), plans, min(max_iter, _BOUNDARY_CHECK), tol)
    if residual > tol:
        # Slow convergence: the estimate may lie on the boundary, where cells that every
        # marginal allows are 0 in every consistent distribution and IPF only creeps towards
        # 0 there. Without those cells it converges geometrically (Fienberg and Rinaldo 2012).
        found = support(plans, present)
        if found is not None and (present & ~found).any():
            table = np.where(found, start, 0.0)
        table, more, residual = cycles(table, plans, max_iter - used, tol)
        used += more
    return table, used, residual


def cycles(table: np.ndarray, plans: Sequence[Plan], budget: int, tol: float) -> tuple[np.ndarray, int, float]:
    """Up to ``budget`` IPF cycles on ``table`` (scaled in place), stopping once a cycle's largest
    residual (how far a marginal was from its target before it was fitted) is at most ``tol``.

    Returns:
        ``(table, cycles run, the last cycle's largest residual)``.
    """
    shape = table.shape
    residual, used = np.inf, 0
    for used in range(1, budget + 1):
        residual = 0.0
        for axes, index, target in plans:
            others = tuple(i for i in range(len(shape)) if i not in axes)
            current = np.bincount(index.ravel(), weights=table.sum(axis=others).ravel(), minlength=len(target))
            residual = max(residual, float(np.abs(current - target).max()))
            ratio = np.divide(target, current, out=np.zeros_like(target), where=current > 0)
            table *= ratio[index].reshape([shape[i] if i in axes else 1 for i in range(len(shape))])
        if residual <= tol:
            break
    return table, used, residual


def support(plans: Sequence[Plan], present: np.ndarray) -> np.ndarray | None:
    """The cells some distribution consistent with the marginals makes positive (a bool table),
    or ``None`` when there are more than ``_SUPPORT_LP_CELLS`` candidates or the program fails.

    One linear program: maximize ``Σ y`` subject to ``A t = λ b``, ``0 ≤ y ≤ 1``, ``y ≤ t``,
    ``t, λ ≥ 0``, where ``A t = b`` says that ``t`` has the marginals ``b``. Scaling a
    consistent ``t`` makes ``y = 1`` on its support, so the optimum is 1 exactly on the union
    of the supports.
    """
    shape = present.shape
    axes_all = len(shape)
    allowed = present.copy()
    for axes, index, target in plans:
        allowed &= (target[index] > 0).reshape([shape[i] if i in axes else 1 for i in range(axes_all)])
    cells = np.flatnonzero(allowed)
    n = len(cells)
    if n > _SUPPORT_LP_CELLS:
        return None
    rows, cols, b, offset = [], [], [], 0
    coords = np.unravel_index(cells, shape)
    for axes, index, target in plans:
        rows.append(offset + index[tuple(coords[i] for i in axes)])
        cols.append(np.arange(n))
        b.append(target)
        offset += len(target)
    membership = scipy.sparse.csr_matrix((np.ones(n * len(plans)), (np.concatenate(rows), np.concatenate(cols))),
                                         shape=(offset, n))
    eye = scipy.sparse.identity(n, format="csr")
    a_eq = scipy.sparse.hstack([membership, scipy.sparse.csr_matrix((offset, n)),
                                scipy.sparse.csr_matrix(-np.concatenate(b)[:, None])])
    a_ub = scipy.sparse.hstack([-eye, eye, scipy.sparse.csr_matrix((n, 1))])
    result = scipy.optimize.linprog(np.concatenate([np.zeros(n), -np.ones(n), [0.0]]), A_ub=a_ub,
                                    b_ub=np.zeros(n), A_eq=a_eq, b_eq=np.zeros(offset),
                                    bounds=[(0, None)] * n + [(0, 1)] * n + [(0, None)], method="highs")
    if result.status != 0:
        return None
    found = np.zeros(shape, dtype=bool)
    found.flat[cells[result.x[n:2 * n] > 0.5]] = True
    return found


def plan(m: ContingencyTable, names: Sequence[str], shape: Sequence[int], domains: Mapping[str, Generalization],
         levels: Mapping[str, int], n: int) -> Plan:
    """Marginal ``m`` as IPF reads it on the table over ``names`` (each at its level in
    ``levels``, of the given ``shape``): the table's axes it spans, the index of ``m``'s cell for
    each cell of those axes (an array of their shape), and ``m``'s probabilities (its counts over
    ``n``), dense."""
    axes = tuple(sorted(names.index(a) for a in m.attributes))
    radices = [domains[names[i]].radix(m.levels[m.attributes.index(names[i])]) for i in axes]
    index = np.zeros([shape[i] for i in axes], dtype=np.int64)
    for k, i in enumerate(axes):
        name = names[i]
        level = m.levels[m.attributes.index(name)]
        codes = domains[name].level_map(levels[name], level).astype(np.int64)
        index = index * radices[k] + codes.reshape([-1 if j == k else 1 for j in range(len(axes))])
    target = np.zeros(int(np.prod(radices)))
    ordered = [m.attributes.index(names[i]) for i in axes]
    target[mixed_radix([m.cells[:, j] for j in ordered], radices)] = m.counts / n
    return axes, index, target
