"""What a grouped DP query (``veil dp query``) reads from the table and says about its keys: the
table typed for its aggregates, and how the group keys were given (never their values)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from veil.config.dp_query_spec import QuerySpec
from veil.errors import ColumnError


def typed_frame(columns, spec: QuerySpec) -> pd.DataFrame:
    """The table as pandas, each aggregated column as numbers (a cell that is not one: missing).

    Raises:
        ColumnError: an aggregated column that is text (by its type, or in a CSV by veil's rule).
    """
    frame = columns.table.data.to_pandas()
    for agg in spec.document["aggregates"]:
        name = agg.get("column")
        if name is None or name not in frame.columns or pd.api.types.is_numeric_dtype(frame[name].dtype):
            continue
        col = columns.column(name)
        if not col.is_numeric:
            label = agg.get("name") or f"{agg['aggregate']}({name})"
            raise ColumnError(f"{label} needs a numeric column, but '{name}' holds text; aggregate a column of "
                              "numbers, or count it.")
        frame[name] = np.asarray(col.numeric, dtype=float)[col.codes]
    return frame


def keys_given(spec: QuerySpec) -> dict:
    """How the keys were given, for the manifest (their source, never their values)."""
    group = spec.document["group_by"]
    for source in ("keys", "domains", "file", "hierarchy", "private"):
        if source in group:
            break
    out = {"source": {"keys": "list"}.get(source, source), "public": source != "private",
           "other": bool(group.get("other", False))}
    if source == "file":
        out["file"] = Path(group["file"]).name
    if source == "hierarchy":
        out.update(column=group["hierarchy"]["column"], level=group["hierarchy"]["level"])
    if source == "private":
        out.update(delta=group["private"]["delta"], threshold=group["private"].get("threshold"))
    return out
