"""The aggregate protocol (issue 27): an aggregate post-processes its own noisy measurements into
its output columns and record entry, so a new aggregate runs through a grouped query with no change
in veil.dp.grouped_query."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.dp import Query
from veil.dp.aggregate_protocol import Aggregate, Measurement, Noisy, Output
from veil.dp.aggregates import count


@dataclass(frozen=True)
class Spread(Aggregate):
    """A test aggregate: the count of rows with ``column`` present, reported in two columns (the
    count and its complement to a public total), from one measurement."""

    column: str
    total: int = 100
    name: str = "spread"
    low: float = 0.0
    high: float = 1.0

    def measurements(self):
        return (Measurement(f"{self.name}.present", True, 1.0),)

    def statistics(self):
        return (("count", self.column),)

    def post_process(self, noisy: tuple[Noisy, ...], alpha: float) -> Output:
        (cell,) = noisy
        v = cell.values
        return Output({f"{self.name}.in": (v, v - cell.half, v + cell.half),
                       f"{self.name}.out": (self.total - v, self.total - v - cell.half, self.total - v + cell.half)},
                      "exact, for the test")


def test_a_new_aggregate_runs_through_the_query_unchanged():
    table = pd.DataFrame({"g": ["a", "a", "b"], "x": [1.0, None, 2.0]})
    answer = Query(table).group_by("g", keys=["a", "b", "c"]).agg(count(), Spread("x")).evaluate(1e9, rng=1)
    frame = answer.to_pandas()
    assert frame["spread.in"].tolist() == [1, 1, 0]
    assert frame["spread.out"].tolist() == [99, 99, 100]
    assert (frame["spread.in_low"] <= frame["spread.in"]).all()
    entry = answer.record["aggregates"][1]
    assert entry["name"] == "spread" and entry["aggregate"] == "spread" and entry["interval"] == "exact, for the test"
    assert [m["label"] for m in entry["measurements"]] == ["spread.present"]
    assert np.isfinite(entry["measurements"][0]["half_width"])
