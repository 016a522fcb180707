"""A graphical model on a junction tree: log-potentials per clique, their calibrated marginals.

The model is the distribution ``p(x) ∝ exp(Σ_C θ_C(x_C))`` over the cliques ``C`` of a junction
tree, scaled to ``total`` records. Sum-product belief propagation on the tree, in log space (a
pass from the leaves to the root, then back), gives every clique's marginal exactly (Koller and
Friedman, *Probabilistic Graphical Models*, 2009, ch. 10); the marginal on any other set of
columns is then a variable elimination over the smallest subtree covering them, with the
calibrated clique marginals divided by their separators' as factors. This is the model that
Private-PGM fits (McKenna, Sheldon and Miklau, ICML 2019; see :mod:`veil.synth.estimation`).
"""

from __future__ import annotations

import math
import string
from typing import Mapping, Sequence

import numpy as np

from veil.errors import ParameterError
from veil.synth._junction_tree import JunctionTree, check_cliques, tree_cells
from veil.synth._reduction import reduction


def _logsumexp(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``log Σ exp(a)`` over ``axes``, keeping them as length-1 axes."""
    if not axes:
        return a
    m = a.max(axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.log(np.exp(a - m).sum(axis=axes, keepdims=True)) + m


def calibrate(tree: JunctionTree, potentials: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The probability marginal of every clique of ``tree`` under ``potentials`` (log-potentials,
    one array per clique shaped as the clique), by sum-product belief propagation.

    The messages are computed on ``exp(θ_C − max θ_C)`` with every message rescaled to a maximum
    of 1 (scale factors cancel when the beliefs are normalized), which needs one exponential per
    clique; when that may have underflowed (a belief whose largest cell is below 1e-150), the same
    passes run in log space.
    """
    out = _calibrate_linear(tree, potentials)
    return out if out is not None else _calibrate_log(tree, potentials)


def _calibrate_linear(tree: JunctionTree, potentials: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    m = len(tree.cliques)
    inner = [None] * m
    up = [None] * m
    for c in reversed(tree.order):
        b = np.subtract(potentials[c], potentials[c].max())
        np.exp(b, out=b)
        for k in tree.children[c]:
            b *= up[k]
        inner[c] = b
        if tree.parent[c] >= 0:
            msg = tree.child_sum[c](b)
            top = msg.max()
            if not top > 0:
                return None
            up[c] = msg / top
    beliefs = [None] * m
    beliefs[0] = inner[0]
    for c in tree.order:
        for k in tree.children[c]:
            # where the child's message is 0 so is the child's whole table: the ratio is moot there
            with np.errstate(divide="ignore"):
                inverse = np.where(up[k] > 0, 1.0 / up[k], 0.0)
            msg = tree.parent_sum[k](beliefs[c] * inverse)
            top = msg.max()
            if not top > 0:
                return None
            inner[k] *= msg / top
            beliefs[k] = inner[k]
    for b in beliefs:
        # Every factor is at most 1, so a belief whose largest cell is still above 1e-150 lost to
        # underflow only cells below 1e-308 of the scale: negligible. Else the log passes decide.
        if not b.max() >= 1e-150:
            return None
        b /= b.sum()
    return beliefs


def _calibrate_log(tree: JunctionTree, potentials: Sequence[np.ndarray]) -> list[np.ndarray]:
    m = len(tree.cliques)
    inner = [None] * m
    up = [None] * m
    for c in reversed(tree.order):
        b = potentials[c]
        for k in tree.children[c]:
            b = b + up[k]
        inner[c] = b
        if tree.parent[c] >= 0:
            up[c] = _logsumexp(b, tree.child_axes[c]).reshape(tree.parent_shape[c])
    beliefs = [None] * m
    beliefs[0] = inner[0]
    for c in tree.order:
        for k in tree.children[c]:
            with np.errstate(invalid="ignore"):
                diff = np.where(np.isfinite(up[k]), beliefs[c] - up[k], -np.inf)
            msg = _logsumexp(diff, tree.parent_axes[k]).reshape(tree.child_shape[k])
            beliefs[k] = inner[k] + msg
    out = []
    for b in beliefs:
        p = np.exp(b - b.max())
        p /= p.sum()
        out.append(p)
    return out


def _letters(columns: Sequence[str], index: Mapping[str, int]) -> str:
    return "".join(string.ascii_letters[index[c]] for c in columns)


class GraphicalModel:
    """A graphical model over categorical columns: a junction tree, a log-potential per clique,
    and the number of records it stands for. Immutable after construction.

    Attributes:
        names: the columns in code order; ``sizes``: each column's number of codes.
        cliques: the junction tree's cliques (tuples of columns in code order).
        total: the number of records the marginals count.

    Args:
        tree: the junction tree.
        potentials: one log-potential array per clique of the tree, shaped as the clique.
        total: the number of records (positive).
    """

    def __init__(self, tree: JunctionTree, potentials: Sequence[np.ndarray], total: float):
        if not (total > 0 and math.isfinite(total)):
            raise ParameterError(f"the model's total {total!r} is not a positive number; give a positive total.")
        if len(potentials) != len(tree.cliques):
            raise ParameterError("the model needs one potential per clique of its junction tree; give them.")
        pots = []
        for c, p in enumerate(potentials):
            p = np.array(p, dtype=float)
            if p.shape != tree.shapes[c]:
                raise ParameterError(f"the potential of clique {tree.cliques[c]!r} has shape {p.shape}, "
                                     f"not {tree.shapes[c]}; shape it as the clique.")
            p.flags.writeable = False
            pots.append(p)
        self.tree = tree
        self.names = tree.names
        self.sizes = dict(tree.sizes)
        self.cliques = tree.cliques
        self.total = float(total)
        self.potentials = tuple(pots)
        probs = calibrate(tree, pots)
        for p in probs:
            p.flags.writeable = False
        self._probs = tuple(probs)

    def __repr__(self) -> str:
        return f"GraphicalModel(columns={len(self.names)}, cliques={len(self.cliques)}, cells={self.cells}, total={self.total:g})"

    @property
    def cells(self) -> int:
        """The sum over the junction tree's cliques of their cell counts."""
        return self.tree.cells

    def clique_marginal(self, i: int) -> np.ndarray:
        """The probability marginal (summing to 1) of the tree's ``i``-th clique."""
        return self._probs[i]

    def project(self, clique: Sequence[str]) -> np.ndarray:
        """The model's marginal (counts summing to ``total``) on any set of columns, with axes in
        the order given; by variable elimination over the junction tree when no clique holds them.

        Raises:
            ParameterError: an unknown column, or a column named twice.
        """
        clique = tuple(clique)
        check_cliques(self.sizes, [clique], "marginal")
        return self._project_probs(clique) * self.total

    def _project_probs(self, clique: tuple[str, ...]) -> np.ndarray:
        tree = self.tree
        if not clique:
            return np.array(1.0)
        home = tree.containing(clique)
        if home is not None:
            src = tree.cliques[home]
            axes, _ = tree.plan(src, clique)
            out = reduction(tree.shapes[home], axes)(self._probs[home])
            held = [x for x in src if x in clique]
            return out.transpose([held.index(x) for x in clique])
        nodes = tree.steiner(clique)
        involved = sorted({x for c in nodes for x in tree.cliques[c]}, key=self.names.index)
        if len(involved) > len(string.ascii_letters):
            raise ParameterError(f"this marginal spans cliques holding {len(involved)} columns, more than "
                                 f"{len(string.ascii_letters)}; ask for a marginal on fewer or closer columns.")
        index = {n: i for i, n in enumerate(involved)}
        kept = set(nodes)
        operands = []
        for c in nodes:
            p = self._probs[c]
            q = tree.parent[c]
            if q >= 0 and q in kept and tree.separator[c]:
                sep = np.einsum(f"{_letters(tree.cliques[c], index)}->{_letters(tree.separator[c], index)}", p)
                sep = sep.reshape(tree.child_shape[c])
                with np.errstate(divide="ignore", invalid="ignore"):
                    p = np.where(sep > 0, p / np.where(sep > 0, sep, 1.0), 0.0)
            operands.append(p)
            operands.append(_letters(tree.cliques[c], index))
        spec = ",".join(operands[1::2]) + "->" + _letters(clique, index)
        out = np.einsum(spec, *operands[0::2], optimize="greedy")
        return out / out.sum()

    def sample(self, rows: int, rng: np.random.Generator, method: str = "systematic") -> np.ndarray:
        """``rows`` records drawn from the model, as an ``(rows, d)`` ``int64`` code matrix; see
        :func:`veil.synth.sampling.sample`."""
        from veil.synth.sampling import sample

        return sample(self, rows, rng, method)


def model_cells(sizes: Mapping[str, int], cliques: Sequence[tuple[str, ...]]) -> int:
    """The size (Σ of its cliques' cell counts) of the junction tree a model over ``cliques``
    (and every column of ``sizes``) would have, without fitting it: AIM's model-size measure.

    Raises:
        ParameterError: a clique naming an unknown column or one column twice.
    """
    check_cliques(sizes, cliques)
    return tree_cells(sizes, cliques)
