"""Domain compression of rare values, as MST does (McKenna, Sheldon and Miklau, JPC 2021, Section 4).

A value whose *noisy* 1-way count is below 3σ is rare: its measured count is mostly noise. MST
merges a column's rare values into one new value, so that the 2-way marginals it measures later
have fewer cells (less noise in all) and the model spends no cells on values it cannot estimate.
The compression is chosen from DP outputs only (the noisy counts), so it is public: it may travel
with the release, and expanding a merged value back (uniformly among the rare values it stands
for) is post-processing.

On the compressed domain a column's kept values come first, in their order, and the merged value
last. The 1-way measurement is re-expressed on it: the kept cells unchanged, the merged cell the
sum of the rare cells' noisy counts, whose noise has standard deviation σ√k for k rare values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ColumnCompression", "Compression", "compress_column"]

#: a value is rare when its noisy count is below this many σ (the paper's threshold)
THRESHOLD = 3


@dataclass(frozen=True)
class ColumnCompression:
    """One column's compression: ``kept`` original codes (compressed codes 0..len(kept) − 1) and the
    ``rare`` original codes merged into the value ``len(kept)``; ``rare`` is empty or has >= 2 codes."""

    name: str
    size: int
    kept: tuple[int, ...]
    rare: tuple[int, ...]

    @property
    def compressed_size(self) -> int:
        """Values on the compressed domain."""
        return len(self.kept) + (1 if self.rare else 0)

    @property
    def lookup(self) -> np.ndarray:
        """Original code → compressed code."""
        table = np.empty(self.size, dtype=np.int64)
        table[list(self.kept)] = np.arange(len(self.kept), dtype=np.int64)
        if self.rare:
            table[list(self.rare)] = len(self.kept)
        return table

    def compress_measurement(self, noisy: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray | float]:
        """The 1-way noisy counts on the compressed domain and their σ per cell (σ√k on the merged cell)."""
        noisy = np.asarray(noisy, dtype=float)
        if not self.rare:
            return noisy, sigma
        values = np.concatenate([noisy[list(self.kept)], [noisy[list(self.rare)].sum()]])
        sigmas = np.full(len(values), float(sigma))
        sigmas[-1] = float(sigma) * np.sqrt(len(self.rare))
        return values, sigmas

    def expand_axis(self, values: np.ndarray, axis: int) -> np.ndarray:
        """A marginal's axis on the compressed domain → the original domain, the merged value's mass
        shared equally among the rare values it stands for (what :meth:`Compression.expand` draws)."""
        if not self.rare:
            return values
        values = np.moveaxis(np.asarray(values, dtype=float), axis, 0)
        out = np.empty((self.size,) + values.shape[1:])
        out[list(self.kept)] = values[: len(self.kept)]
        out[list(self.rare)] = values[len(self.kept)] / len(self.rare)
        return np.moveaxis(out, 0, axis)

    def describe(self) -> dict:
        """For a manifest: the original codes merged into one value (public: chosen from noisy counts)."""
        return {"column": self.name, "merged_codes": list(self.rare)}


def compress_column(name: str, noisy: np.ndarray, sigma: float) -> ColumnCompression:
    """The compression of one column from its noisy 1-way counts: values below 3σ merged (when >= 2)."""
    noisy = np.asarray(noisy, dtype=float)
    rare = tuple(int(i) for i in np.flatnonzero(noisy < THRESHOLD * sigma))
    if len(rare) < 2:
        rare = ()
    merged = set(rare)
    kept = tuple(i for i in range(len(noisy)) if i not in merged)
    return ColumnCompression(name, len(noisy), kept, rare)


@dataclass(frozen=True)
class Compression:
    """The compression of every column of a domain (an identity for the columns with no rare values)."""

    columns: tuple[ColumnCompression, ...]

    @classmethod
    def identity(cls, names: Sequence[str], sizes: Sequence[int]) -> Compression:
        return cls(tuple(ColumnCompression(n, int(s), tuple(range(int(s))), ()) for n, s in zip(names, sizes)))

    @property
    def active(self) -> bool:
        """Whether any column is compressed."""
        return any(c.rare for c in self.columns)

    @property
    def sizes(self) -> dict[str, int]:
        """The compressed domain's sizes, in column order."""
        return {c.name: c.compressed_size for c in self.columns}

    def forward(self, codes: np.ndarray) -> np.ndarray:
        """Codes of the original domain → codes of the compressed domain (a new array)."""
        out = np.empty_like(codes, dtype=np.int64)
        for j, col in enumerate(self.columns):
            out[:, j] = col.lookup[codes[:, j]] if col.rare else codes[:, j]
        return out

    def expand(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Codes of the compressed domain → the original domain: a merged value becomes one of the
        rare values it stands for, uniformly at random (a public post-processing)."""
        out = np.empty_like(codes, dtype=np.int64)
        for j, col in enumerate(self.columns):
            if not col.rare:
                out[:, j] = codes[:, j]
                continue
            back = np.array(col.kept + (0,), dtype=np.int64)[codes[:, j]]
            merged = codes[:, j] == len(col.kept)
            picks = rng.integers(0, len(col.rare), size=int(merged.sum()))
            back[merged] = np.asarray(col.rare, dtype=np.int64)[picks]
            out[:, j] = back
        return out

    def expand_marginal(self, values: np.ndarray, clique: Sequence[str]) -> np.ndarray:
        """A marginal on ``clique`` over the compressed domain → over the original domain."""
        by_name = {c.name: c for c in self.columns}
        for axis, name in enumerate(clique):
            values = by_name[name].expand_axis(values, axis)
        return values

    def describe(self) -> list[dict]:
        """The merged codes of every compressed column (public)."""
        return [c.describe() for c in self.columns if c.rare]

    @staticmethod
    def of(measured: Mapping[str, tuple[np.ndarray, float]]) -> Compression:
        """The compression of every column from its noisy 1-way counts and σ, in the mapping's order."""
        return Compression(tuple(compress_column(n, y, s) for n, (y, s) in measured.items()))
