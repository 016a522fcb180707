"""The minimum local suppression to k-anonymity, as an integer program (small tables only).

Records with the same quasi-identifier tuple are interchangeable, so the program counts them: for
each distinct tuple t (held by w_t records) and each suppression pattern P (a set of columns),
the integer y[t,P] in 0..w_t is how many of t's records get pattern P, and the binary z[t,P]
says whether any does. Minimize Σ |P|·y[t,P] subject to

* Σ_P y[t,P] = w_t (every record gets one pattern);
* y[t,P] ≤ w_t·z[t,P];
* Σ_{t',Q} a(t,P,t',Q)·y[t',Q] ≥ k·z[t,P]: a record of tuple t with pattern P has at least k
  records in its class, where a(t,P,t',Q) = 1 when a record (t,P) counts a record (t',Q) in its
  class: under ``"any"`` when t and t' agree on every column outside P ∪ Q; under
  ``"category"`` when P = Q and t and t' agree outside P. (A record always counts itself: t = t'
  agree everywhere, and exactly one of its patterns is used.)

The program is solved by SciPy's HiGHS branch and bound with a relative gap of 0; the solver's
dual bound, rounded up, is a proven lower bound on the minimum.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from veil.errors import ParameterError

# Largest number of (distinct tuple, pattern) pairs the program is built for.
LIMIT = 1024
TIME_LIMIT = 30.0
# The second program (sparing important columns among the minima) only refines a proven minimum:
# any solution it finds has the minimal count, so it gets a short time and a 5 % gap.
SECOND_TIME_LIMIT = 2.0


def exact_suppression(values: np.ndarray, k: int, matching: str,
                      rank: np.ndarray | None = None) -> tuple[np.ndarray | None, bool, int]:
    """``(pattern, proven, bound)``: a bit mask of suppressed columns per record (``None`` when
    the solver found no solution in its time), whether it is proven minimal, and the solver's
    proven lower bound.

    With ``rank`` (each column's place in the order of suppression, 0 suppressed first), a
    proven minimum is followed by a second program: the same constraints with the number of
    cells fixed at the minimum, minimizing Σ rank over the suppressed cells, so that among the
    minimal suppressions one sparing the important columns is returned (within 5 % of the least
    Σ rank, or the best found in :data:`SECOND_TIME_LIMIT` seconds; any solution of it has the
    minimal count).

    Raises:
        ParameterError: the program would have more than :data:`LIMIT` pairs of a distinct
            tuple and a pattern.
    """
    import scipy.optimize
    import scipy.sparse

    n, m = values.shape
    tuples, inverse, weight = np.unique(values, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    T, P = len(tuples), 1 << m
    V = T * P
    if V > LIMIT:
        raise ParameterError(f"the optimal method handles at most {LIMIT} pairs of a distinct record and a "
                             f"suppression pattern, and this table has {T} distinct records over {m} "
                             f"quasi-identifiers ({V} pairs); use method='greedy'.")
    bits = ((np.arange(P)[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)   # [P × m]
    differ = tuples[:, None, :] != tuples[None, :, :]                             # [T × T × m]
    if matching == "any":
        blocked = np.zeros((T, P, T, P), dtype=bool)
        for c in range(m):
            blocked |= (differ[:, None, :, None, c] & ~bits[None, :, None, None, c]
                        & ~bits[None, None, None, :, c])
        counts = ~blocked
    else:
        apart = np.zeros((T, P, T), dtype=bool)
        for c in range(m):
            apart |= differ[:, None, :, c] & ~bits[None, :, None, c]
        same = np.eye(P, dtype=bool)
        counts = ~apart[:, :, :, None] & same[None, :, None, :]
    counts = counts.reshape(V, V).astype(np.float64)
    size = bits.sum(axis=1)
    cost = np.concatenate([np.tile(size, T).astype(np.float64), np.zeros(V)])
    w = np.repeat(weight, P).astype(np.float64)
    eye = scipy.sparse.identity(V, format="csr")
    one_pattern = scipy.sparse.hstack([scipy.sparse.kron(scipy.sparse.identity(T), np.ones((1, P))),
                                       scipy.sparse.csr_matrix((T, V))])
    indicator = scipy.sparse.hstack([eye, -scipy.sparse.diags(w)])
    enough = scipy.sparse.hstack([scipy.sparse.csr_matrix(counts), -k * eye])
    constraints = [
        scipy.optimize.LinearConstraint(one_pattern, weight.astype(np.float64), weight.astype(np.float64)),
        scipy.optimize.LinearConstraint(indicator, -np.inf, 0.0),
        scipy.optimize.LinearConstraint(enough, 0.0, np.inf),
    ]
    bounds = scipy.optimize.Bounds(np.zeros(2 * V), np.concatenate([w, np.ones(V)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = scipy.optimize.milp(cost, constraints=constraints, integrality=np.ones(2 * V), bounds=bounds,
                                     options={"time_limit": TIME_LIMIT, "mip_rel_gap": 0.0})
    dual = getattr(result, "mip_dual_bound", None)
    bound = math.ceil(dual - 1e-6) if dual is not None and np.isfinite(dual) else 0
    if result.x is None:
        return None, False, bound
    proven = result.status == 0
    solution = result.x
    if proven:
        bound = max(bound, round(float(result.fun)))
        if rank is not None and bound > 0:
            spent = np.concatenate([np.tile(bits.astype(np.float64) @ np.asarray(rank, dtype=np.float64), T),
                                    np.zeros(V)])
            fixed = scipy.optimize.LinearConstraint(cost[None, :], bound, bound)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                second = scipy.optimize.milp(spent, constraints=[*constraints, fixed], integrality=np.ones(2 * V),
                                             bounds=bounds, options={"time_limit": SECOND_TIME_LIMIT,
                                                                     "mip_rel_gap": 0.05})
            if second.x is not None and round(float(cost @ np.rint(second.x))) == bound:
                solution = second.x
    y = np.rint(solution[:V]).astype(np.int64).reshape(T, P)
    pattern = np.empty(n, dtype=np.int64)
    order = np.argsort(inverse, kind="stable")
    starts = np.r_[0, np.cumsum(weight)[:-1]]
    for t in range(T):
        rows = order[starts[t]:starts[t] + weight[t]]
        pattern[rows] = np.repeat(np.arange(P, dtype=np.int64), y[t])
    return pattern, proven, bound
