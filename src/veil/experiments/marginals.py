"""Kifer and Gehrke's anonymized marginals on Adult ("Injecting utility into anonymized datasets",
SIGMOD 2006): how much of the data's structure a few marginals give back beside one anonymized
table, at the same privacy.

For each k (and one ℓ), on the bundled Adult table (quasi-identifiers sex, age, race,
marital-status, education, native-country, workclass; sensitive occupation):

1. **The single table.** veil's optimal full-domain generalization
   (:class:`veil.anonymize.FullDomain`) under k-anonymity and entropy ℓ-diversity of
   occupation, without suppression, minimizing the KL-divergence of the data from the table's
   max-ent distribution over the quasi-identifiers and occupation (the ``kl`` metric with
   ``sensitive="occupation"``): the best one table can do by the paper's own measure.
2. **The table plus marginals.** The greedy search (:class:`veil.marginals.GreedyMarginalSearch`)
   starts from that table, as one marginal, and adds up to ``max_marginals`` marginals of up to
   ``max_attributes`` attributes under k-link anonymity and MaxEnt entropy ℓ-diversity with the
   same k and ℓ, recording the KL-divergence after each addition.

The paper's finding is that the second is far below the first. **Outputs** (all of them or
none): ``marginals.csv`` (one row per k and number of marginals: the KL-divergence, the marginal
added, its cells), ``marginals.png`` (KL-divergence against the number of marginals, one line per
k) and ``collections.json`` (per k, the base table's levels and every chosen marginal).
"""

from __future__ import annotations

import io
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from veil.errors import DataError, ParameterError
from veil.experiments.csv_rows import rows_csv

DEFAULT_K = (2, 5, 10, 25, 50)
DEFAULT_L = 3.0
DEFAULT_MARGINALS = 5
DEFAULT_ATTRIBUTES = 3
FILES = ("marginals.csv", "marginals.png", "collections.json")
COLUMNS = ("k", "l", "marginals", "kl_divergence", "added", "cells", "base_levels", "base_classes", "seconds")


@dataclass
class MarginalsRun:
    """The experiment's results.

    Attributes:
        rows: one dict per k and number of marginals (0 is the single table), keys ``COLUMNS``.
        collections: per k, the base table's levels and the chosen marginals.
        config: the settings.
    """

    rows: list[dict] = field(default_factory=list)
    collections: list[dict] = field(default_factory=list)
    config: dict = field(default_factory=dict)

    def summary(self) -> list[tuple[int, float, float]]:
        """Per k: ``(k, KL of the single table, KL with the marginals)``."""
        out = []
        for k in self.config["k"]:
            kls = [r["kl_divergence"] for r in self.rows if r["k"] == k]
            out.append((k, kls[0], kls[-1]))
        return out


def run_marginals(*, k: Sequence[int] = DEFAULT_K, l: float = DEFAULT_L, max_marginals: int = DEFAULT_MARGINALS,
                  max_attributes: int = DEFAULT_ATTRIBUTES, max_cells: int | None = None,
                  progress: Callable[[int, int], None] | None = None) -> MarginalsRun:
    """Run the experiment on the bundled Adult table.

    Args:
        k: the values of k (k-anonymity of the table, k-link anonymity of the marginals).
        l: ℓ of entropy ℓ-diversity (of the table, and MaxEnt ℓ-diversity of the collection).
        max_marginals: the most marginals the search adds to the table.
        max_attributes: the most attributes in one added marginal.
        max_cells: the most cells in one added marginal (``None``: no limit).
        progress: called with the values of k done and their number.

    Raises:
        ParameterError: no k, a k below 1, ℓ below 1, or a bad budget.
        InfeasibleError: no full-domain table satisfies k-anonymity and ℓ-diversity.
    """
    from veil.data.bundled import load_adult
    from veil.marginals import GreedyMarginalSearch, KLinkAnonymity, MarginalCounter, MaxEntLDiversity
    from veil.marginals.search import optimal_base
    from veil.models import EntropyLDiversity, KAnonymity

    ks = sorted({int(v) for v in k})
    if not ks:
        raise ParameterError("give at least one k.")
    if ks[0] < 1:
        raise ParameterError(f"k must be at least 1, not {ks[0]}.")
    if not (math.isfinite(l) and l >= 1):
        raise ParameterError(f"ℓ must be a finite number of at least 1, not {l}.")
    searches = {value: GreedyMarginalSearch([KLinkAnonymity(value), MaxEntLDiversity(l)], max_marginals=max_marginals,
                                            max_attributes=max_attributes, max_cells=max_cells) for value in ks}
    adult = load_adult()
    sensitive = adult.sensitive[0]
    counter = MarginalCounter(adult)
    run = MarginalsRun(config={"k": ks, "l": l, "max_marginals": max_marginals, "max_attributes": max_attributes,
                               "max_cells": max_cells, "records": counter.n, "attributes": list(counter.attributes),
                               "sensitive": sensitive, "suppression_limit": 0.0,
                               "base_metric": f"kl (sensitive={sensitive})", "variant": "entropy"})
    for done, value in enumerate(ks):
        began = time.perf_counter()
        base, found = optimal_base(counter, [KAnonymity(value), EntropyLDiversity(l, sensitive=sensitive)])
        levels = found.levels
        search = searches[value].fit(counter, [base])
        seconds = time.perf_counter() - began
        base_levels = " ".join(f"{q}={lv}" for q, lv in zip(adult.quasi_identifiers, levels))
        common = {"k": value, "l": l, "base_levels": base_levels, "base_classes": int(len(base.counts)),
                  "seconds": round(seconds, 3)}
        run.rows.append({**common, "marginals": 0, "kl_divergence": search.start_kl_, "added": "", "cells": ""})
        for i, step in enumerate(search.steps_, start=1):
            run.rows.append({**common, "marginals": i, "kl_divergence": step.kl, "added": step.marginal.label,
                             "cells": step.cells})
        run.collections.append({
            "k": value, "l": l, "base": {"levels": dict(zip(adult.quasi_identifiers, levels)),
                                         "kl_divergence": search.start_kl_, "optimal": found.proven_optimal},
            "marginals": [{"attributes": list(s.marginal.attributes), "levels": dict(zip(s.marginal.attributes,
                                                                                       s.marginal.levels)),
                           "cells": s.cells, "kl_divergence": s.kl} for s in search.steps_],
            "kl_divergence": search.kl_, "stopped": search.stopped_, "search_seconds": round(seconds, 3)})
        if progress is not None:
            progress(done + 1, len(ks))
    return run


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def csv_text(run: MarginalsRun) -> str:
    return rows_csv(COLUMNS, run.rows, _cell)


def collections_json(run: MarginalsRun) -> str:
    return json.dumps({"experiment": "marginals", "paper": "Kifer and Gehrke, SIGMOD 2006", "config": run.config,
                       "collections": run.collections}, indent=2, ensure_ascii=False) + "\n"


def figure_png(run: MarginalsRun) -> bytes:
    """KL-divergence against the number of marginals, one line per k."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for k in run.config["k"]:
        rows = [r for r in run.rows if r["k"] == k]
        ax.plot([r["marginals"] for r in rows], [r["kl_divergence"] for r in rows], marker="o", ms=3.5,
                label=f"k = {k}")
    ax.set_xlabel("marginals added to the anonymized table")
    ax.set_ylabel("KL-divergence (nats)")
    ax.set_ylim(bottom=0)
    ax.grid(True, color="0.9", lw=0.6)
    ax.legend(fontsize=8, frameon=False)
    cfg = run.config
    ax.set_title(f"Adult ({cfg['records']:,} records): k-anonymous, entropy {cfg['l']:g}-diverse table plus\n"
                 f"k-link, MaxEnt {cfg['l']:g}-diverse marginals (≤ {cfg['max_attributes']} attributes each)",
                 fontsize=9)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def write_marginals(run: MarginalsRun, out: str | os.PathLike) -> list[Path]:
    """Write ``marginals.csv``, ``marginals.png`` and ``collections.json`` into the folder
    ``out`` (created if missing): all three appear, or none does.

    Raises:
        DataError: ``out`` is a file, or cannot be written.
    """
    from veil.output import write_files

    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise DataError(f"{str(folder)!r} is a file; give a folder for the experiment's outputs.")
    return write_files({folder / FILES[0]: csv_text(run), folder / FILES[1]: figure_png(run),
                        folder / FILES[2]: collections_json(run)}, make_folders=True)
