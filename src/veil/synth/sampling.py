"""Records drawn from a graphical model, clique by clique along its junction tree.

The columns of the root clique are drawn first, jointly from its marginal; then each clique's
columns that its parent does not hold are drawn given the separator's values, from the clique's
marginal divided by the separator's. Along a junction tree this draws from the model's joint
distribution exactly (each clique's new columns are independent of everything drawn before given
the separator).

Two ways to draw the counts of each group of records that share the separator's values:

- ``"independent"``: ordinary categorical draws, i.e. a multinomial of the group's size;
- ``"systematic"``: the group's size ``n`` times the conditional probabilities gives expected
  counts ``e_j``; each value gets ``⌊e_j⌋`` records, and the ``r = n − Σ⌊e_j⌋`` left over go by
  systematic sampling on the fractional parts: with one uniform offset ``u``, value ``j`` gets one
  more when an integer lies in ``[F_{j−1} − u, F_j − u)`` of their running sums ``F``. Every count is
  then ``⌊e_j⌋`` or ``⌈e_j⌉``, its expectation is ``e_j``, and the sample's marginals deviate from
  the model's far less than independent draws do (Madow, "On the theory of systematic sampling",
  1949).

Within a group the drawn values are given to its records in a random order. Randomness comes only
from ``rng``.
"""

from __future__ import annotations

import math

import numpy as np

from veil.errors import ParameterError

METHODS = ("systematic", "independent")
# The most cells (groups × values) one vectorized allocation handles at once.
_CHUNK_CELLS = 1 << 22


def systematic_counts(expected: np.ndarray, n: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Integer counts, row by row, with sum ``n[g]`` and each ``⌊expected⌋`` or ``⌈expected⌉``:
    the floors plus the remainder allocated by systematic sampling on the fractional parts with
    one uniform offset per row.

    Args:
        expected: ``(groups, values)`` non-negative expected counts whose rows sum to ``n``.
        n: ``(groups,)`` integer row totals.
    """
    floors = np.floor(expected)
    frac = expected - floors
    floors = floors.astype(np.int64)
    rest = n - floors.sum(axis=1)
    cum = np.cumsum(frac, axis=1)
    # The running sums must end exactly at the remainder despite rounding.
    scale = np.where(cum[:, -1] > 0, rest / np.where(cum[:, -1] > 0, cum[:, -1], 1.0), 0.0)
    cum *= scale[:, None]
    cum[:, -1] = rest
    u = rng.random(len(n))[:, None]
    marks = np.ceil(cum - u).astype(np.int64)
    marks = np.maximum(marks, 0)
    extra = np.diff(np.concatenate([np.zeros((len(n), 1), dtype=np.int64), marks], axis=1), axis=1)
    return floors + extra


def _allocate(cond: np.ndarray, n: np.ndarray, rng: np.random.Generator, method: str) -> np.ndarray:
    """Counts per (group, value): ``n[g]`` records of group ``g`` over values drawn from ``cond[g]``."""
    if method == "independent":
        return rng.multinomial(n, cond)
    return systematic_counts(cond * n[:, None], n, rng)


def _conditional(joint: np.ndarray) -> np.ndarray:
    """Rows of ``joint`` normalized to sum to 1 (uniform where a row is all 0)."""
    s = joint.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(s > 0, joint / np.where(s > 0, s, 1.0), 1.0 / joint.shape[1])
    out = np.maximum(out, 0.0)
    return out / out.sum(axis=1, keepdims=True)


def sample(model, rows: int, rng: np.random.Generator, method: str = "systematic") -> np.ndarray:
    """``rows`` records drawn from ``model`` (a :class:`veil.synth.graphical_model.GraphicalModel`),
    as an ``(rows, d)`` ``int64`` matrix of codes in the model's column order.

    Args:
        model: the model.
        rows: the number of records (a non-negative integer).
        rng: the only source of randomness.
        method: ``"systematic"`` (systematic rounding of each group's expected counts) or
            ``"independent"`` (categorical draws).

    Raises:
        ParameterError: ``rows`` negative or not an integer, an unknown method, or no generator.
    """
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 0:
        raise ParameterError(f"rows={rows!r} is not a non-negative integer; give the number of records.")
    if method not in METHODS:
        raise ParameterError(f"method={method!r} is not a sampling method; use 'systematic' or 'independent'.")
    if not isinstance(rng, np.random.Generator):
        raise ParameterError("rng must be a numpy.random.Generator; give one.")
    rows = int(rows)
    tree = model.tree
    names = tree.names
    col = {n: j for j, n in enumerate(names)}
    out = np.zeros((rows, len(names)), dtype=np.int64)
    if rows == 0:
        return out
    for c in tree.order:
        clique = tree.cliques[c]
        sep = tree.separator[c] if tree.parent[c] >= 0 else ()
        new = tuple(x for x in clique if x not in sep)
        if not new:
            continue
        probs = model.clique_marginal(c)
        # The clique's marginal with the separator's axes first, then the new columns'.
        order = [clique.index(x) for x in sep] + [clique.index(x) for x in new]
        sep_shape = tuple(tree.sizes[x] for x in sep)
        new_shape = tuple(tree.sizes[x] for x in new)
        joint = probs.transpose(order).reshape(math.prod(sep_shape), math.prod(new_shape))
        if sep:
            keys = np.ravel_multi_index(tuple(out[:, col[x]] for x in sep), sep_shape)
        else:
            keys = np.zeros(rows, dtype=np.int64)
        # Records in a random order, then grouped by their separator values (stable): each group's
        # drawn values go to its records in that random order.
        perm = rng.permutation(rows)
        grouped = perm[np.argsort(keys[perm], kind="stable")]
        groups, counts = np.unique(keys[grouped], return_counts=True)
        values = np.empty(rows, dtype=np.int64)
        width = joint.shape[1]
        step = max(1, _CHUNK_CELLS // width)
        at = 0
        for lo in range(0, len(groups), step):
            g, n = groups[lo:lo + step], counts[lo:lo + step]
            alloc = _allocate(_conditional(joint[g]), n, rng, method)
            drawn = np.repeat(np.tile(np.arange(width, dtype=np.int64), len(g)), alloc.ravel())
            values[at:at + len(drawn)] = drawn
            at += len(drawn)
        assert at == rows
        cells = np.unravel_index(values, new_shape)
        for x, v in zip(new, cells):
            out[grouped, col[x]] = v
    return out
