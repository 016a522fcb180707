"""The public keys of a grouped query: the groups it answers, given before the data is read.

A grouped DP query answers exactly the keys it is given, every one of them (an empty group is
answered like any other), so that which cells appear never depends on the data. The keys come
from public knowledge: a list of key tuples (:meth:`PublicKeys.from_list`) or the cross product
of declared domains (:meth:`PublicKeys.from_domains`), the ``KeySet`` of Tumult Analytics.
Rows whose key is not among them are dropped (an "other" bucket for them is planned).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.errors import ParameterError

__all__ = ["MAX_KEYS", "PublicKeys"]

#: The most keys a grouped query answers (one noisy cell each per aggregate).
MAX_KEYS = 10_000_000


def _columns(columns) -> tuple[str, ...]:
    names = (columns,) if isinstance(columns, str) else tuple(columns)
    if not names or not all(isinstance(c, str) and c for c in names):
        raise ParameterError(f"group_by needs one or more column names, got {columns!r}.")
    if len(set(names)) != len(names):
        raise ParameterError(f"group_by names a column twice: {list(names)!r}.")
    return names


@dataclass(frozen=True)
class PublicKeys:
    """The public key set: the grouping columns and the key tuples, in answer order.

    Attributes:
        columns: the grouping columns.
        keys: one tuple per key, one value per column, no duplicates.
    """

    columns: tuple[str, ...]
    keys: tuple[tuple, ...]

    @classmethod
    def from_list(cls, columns, keys: Sequence) -> "PublicKeys":
        """Keys given as a list; with one column a key may be a bare value instead of a 1-tuple.

        Raises:
            ParameterError: no columns, an empty list, a key of the wrong length, or a duplicate.
        """
        names = _columns(columns)
        if isinstance(keys, (str, bytes)) or not isinstance(keys, Sequence) or not len(keys):
            raise ParameterError("the public keys must be a non-empty list of key tuples.")
        out = []
        for key in keys:
            key = (key,) if len(names) == 1 and not isinstance(key, tuple) else key
            if not isinstance(key, tuple) or len(key) != len(names):
                raise ParameterError(f"every key needs one value per grouping column {list(names)}, got {key!r}.")
            out.append(key)
        if len(out) > MAX_KEYS:
            raise ParameterError(f"at most {MAX_KEYS:,} keys are answered, got {len(out):,}.")
        if len(set(out)) != len(out):
            seen, dup = set(), None
            for key in out:
                if key in seen:
                    dup = key
                    break
                seen.add(key)
            raise ParameterError(f"the public keys list {dup!r} twice; give each key once.")
        return cls(names, tuple(out))

    @classmethod
    def from_domains(cls, domains: Mapping[str, Sequence]) -> "PublicKeys":
        """The cross product of declared domains, ``{column: [values]}``, in the order given.

        Raises:
            ParameterError: no columns, an empty domain, or a value listed twice in a domain.
        """
        if not isinstance(domains, Mapping) or not domains:
            raise ParameterError("domains must map each grouping column to its list of public values.")
        names = _columns(list(domains))
        values = []
        for name in names:
            dom = domains[name]
            if isinstance(dom, (str, bytes)) or not isinstance(dom, Sequence) or not len(dom):
                raise ParameterError(f"the domain of '{name}' must be a non-empty list of values.")
            if len(set(dom)) != len(dom):
                raise ParameterError(f"the domain of '{name}' lists a value twice; give each value once.")
            values.append(list(dom))
        size = int(np.prod([len(v) for v in values], dtype=object))
        if size > MAX_KEYS:
            raise ParameterError(f"the domains make {size:,} keys; at most {MAX_KEYS:,} are answered.")
        return cls(names, tuple(itertools.product(*values)))

    def __len__(self) -> int:
        return len(self.keys)

    def index_of_rows(self, frame: pd.DataFrame) -> np.ndarray:
        """The key index of each row of ``frame`` (int64), -1 for a row whose key is not public."""
        if len(self.columns) == 1:
            index = pd.Index([k[0] for k in self.keys], dtype=object)
            rows = pd.Index(frame[self.columns[0]].astype(object))
        else:
            index = pd.MultiIndex.from_tuples(self.keys, names=self.columns)
            rows = pd.MultiIndex.from_frame(frame[list(self.columns)].astype(object))
        return np.asarray(index.get_indexer(rows), dtype=np.int64)

    def frame(self) -> pd.DataFrame:
        """The keys as a frame, one column per grouping column."""
        return pd.DataFrame(list(self.keys), columns=list(self.columns))
