"""Fast sums of a dense table over some of its axes (marginalization), planned once per shape.

``ndarray.sum`` over several non-trailing axes of a large table, or over all but a short trailing
axis, walks the memory with small strides and is many times slower than a contiguous sum. A
:class:`Reduction` merges adjacent axes that are both kept or both summed, then sums the blocks
from the innermost: a trailing summed block as a contiguous row sum (a short one as a sum of strided columns), a summed block before a kept
one as a batched product with a vector of ones (before a short one, as strided column sums). The result is the same marginal, with the kept
axes in their order.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


class Reduction:
    """The sum of tables of shape ``shape`` over the axes not in ``keep``; calling it on a table
    gives the marginal with the kept axes in order, shaped ``out_shape`` (default: the kept axes'
    sizes)."""

    def __init__(self, shape: Sequence[int], keep: Sequence[int], out_shape: Sequence[int] | None = None):
        shape = tuple(int(s) for s in shape)
        kept = set(keep)
        self.shape = shape
        self.out_shape = tuple(out_shape) if out_shape is not None else tuple(shape[i] for i in sorted(kept))
        blocks: list[list] = []   # [kept?, size]
        for i, s in enumerate(shape):
            k = i in kept
            if s == 1:
                continue
            if blocks and blocks[-1][0] == k:
                blocks[-1][1] *= s
            else:
                blocks.append([k, s])
        self.identity = all(k for k, _ in blocks)
        # The steps: from the innermost, each either ("rows", r) sums a trailing block of r, or
        # ("mid", r, k) sums a block of r before a trailing kept block of k.
        self.steps = []
        self.ones = {}
        while any(not k for k, _ in blocks):
            if not blocks[-1][0]:
                r = blocks.pop()[1]
                self.steps.append(("rows", r, 1))
            else:
                k = blocks.pop()[1]
                r = blocks.pop()[1]
                self.steps.append(("mid", r, k))
                self.ones.setdefault(r, np.ones(r))
                if blocks and blocks[-1][0]:
                    k *= blocks.pop()[1]
                blocks.append([True, k])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.identity:
            return x.reshape(self.out_shape)
        for kind, r, k in self.steps:
            if kind == "rows":
                x = x.reshape(-1, r)
                # a short row sums faster as strided columns than by numpy's reduction
                x = sum(x[:, i] for i in range(r)) if r <= 4 else x.sum(axis=1)
            elif k <= 4:
                x = x.reshape(-1, r, k)
                x = np.stack([x[:, :, j].sum(axis=1) for j in range(k)], axis=-1)
            else:
                x = x.reshape(-1, r, k)
                if len(x) >= 8:
                    x = np.matmul(self.ones[r], x)
                else:   # numpy's batched product is slow on few batches
                    x = x.sum(axis=1) if k >= 64 else np.einsum("ork->ok", x)
        return x.reshape(self.out_shape)


def reduction(shape: Sequence[int], axes: Sequence[int], out_shape: Sequence[int] | None = None) -> Reduction:
    """The :class:`Reduction` that sums tables of ``shape`` over ``axes``."""
    summed = set(axes)
    return Reduction(shape, [i for i in range(len(shape)) if i not in summed], out_shape)
