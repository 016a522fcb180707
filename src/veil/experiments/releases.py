"""Attacks across releases on Adult, against a careless publisher and a careful one.

From the bundled Adult table (30,162 records; quasi-identifiers sex, age, race, marital status,
education, native country, workclass; sensitive occupation) the experiment publishes, for each k:

* **same table, same order** (:mod:`veil.attacks.matching`): an optimal full-domain k-anonymous
  release (2 % suppression, suppressed records shown as ``*``) and a strict Mondrian k-anonymous
  release of the whole table. The careless publisher
  keeps the input order in both (``shuffle=False``); the careful one shuffles them (veil's default,
  with a seeded generator here so that the run can be repeated; a real release uses the secure
  source). Measure: rows joined by position left in a class smaller than k.
* **overlapping projections** (:mod:`veil.attacks.join`): one release of sex, age, race and
  marital status, and one of education, native country and workclass, each k-anonymous over its
  own quasi-identifiers (full-domain) and both publishing salary class and occupation as they are
  (the shared columns). Measure: records of the first in a joined group with fewer than k
  candidates, the adversary knowing all seven quasi-identifiers.
* **a sample of the population** (:mod:`veil.attacks.presence`): a k-anonymous full-domain release
  of a 10 % sample drawn with the seeded generator, attacked with the whole table as the
  population. Measure: people of the population whose membership probability is at least 1/2.

* **incremental versions** (:mod:`veil.attacks.correspondence`): T1, a random half of the table
  drawn with the seeded generator, and later T2, the whole table (T1 grown by the other half),
  each published as a strict Mondrian k-anonymous release made for itself alone. Measure: people
  of T1 left fewer than k candidates by the forward attack (in R1) and the cross attack (in R2),
  and people new in T2 by the backward attack, the adversary knowing each person's timestamp.

**Outputs** (written together, or none): ``releases.csv`` (one row per scenario, publisher and
k) and ``releases.png`` (the exposed shares as grouped bars).
"""

from __future__ import annotations

import io
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from veil.anonymize import FullDomain, Mondrian
from veil.attacks.correspondence import correspondence_attack
from veil.attacks.join import join_attack
from veil.attacks.matching import matching_attack
from veil.attacks.presence import membership_attack
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE, load_adult
from veil.data.dataset import Dataset
from veil.errors import ParameterError
from veil.models import KAnonymity
from veil.output import write_files

FILES = ("releases.csv", "releases.png")
DEFAULT_K = (5, 10)
# The two projections of the join scenario; education is published by both.
FIRST_PROJECTION = ("sex", "age", "race", "marital-status", "salary-class", "occupation")
SECOND_PROJECTION = ("education", "native-country", "workclass", "salary-class", "occupation")
# The membership probability at which a person of the population counts as exposed.
PRESENCE_LEVEL = 0.5
SAMPLE_SHARE = 0.1
# The share of the table in the first of the incremental versions.
FIRST_VERSION_SHARE = 0.5
SUPPRESSION = 0.02


@dataclass
class ReleasesResult:
    """The experiment's rows and timings.

    Attributes:
        rows: one dict per scenario, publisher and k: ``scenario``, ``publisher``, ``k``,
            ``attack``, ``records`` (the people attacked), ``exposed``, ``exposed_share``.
        seed: the seed of the generator (shuffles and the sample).
        seconds: wall-clock time of the run.
    """

    rows: list[dict] = field(default_factory=list)
    seed: int = 0
    seconds: float = 0.0

    @property
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def csv_text(self) -> str:
        return self.frame.to_csv(index=False)

    def png_bytes(self) -> bytes:
        return figure_png(self)

    def write(self, folder: str | os.PathLike) -> list[Path]:
        """Write ``releases.csv`` and ``releases.png`` into ``folder``, both or neither."""
        paths = [Path(folder) / name for name in FILES]
        write_files({paths[0]: self.csv_text(), paths[1]: self.png_bytes()}, make_folders=True)
        return paths


def run_releases(k: Sequence[int] = DEFAULT_K, *, seed: int = 0, dataset: Dataset | None = None) -> ReleasesResult:
    """Run the four scenarios for every k (see the module).

    Args:
        k: the values of k, each at least 2.
        seed: the seed of the generator that shuffles the careful publisher's releases and
            draws the sample and the first incremental version.
        dataset: the table (default: the bundled Adult with the roles above); it needs the
            seven quasi-identifiers with their hierarchies and occupation.

    Raises:
        ParameterError: a k below 2, no k, or a seed that is not a whole number 0 or more.
        InfeasibleError: no generalization meets a k within the suppression limit.
    """
    ks = [int(v) for v in k]
    if not ks or min(ks) < 2:
        raise ParameterError("give values of k of at least 2, e.g. 5,10.")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"the seed must be a whole number 0 or more, not {seed!r}.")
    started = time.perf_counter()
    ds = dataset if dataset is not None else load_adult(ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE)
    rng = np.random.default_rng(seed)
    table = ds.table.data
    rows = []
    for kk in ks:
        fulldomain = FullDomain([KAnonymity(kk)], suppression_limit=SUPPRESSION).fit(ds)
        mondrian = Mondrian([KAnonymity(kk)]).fit(ds)
        for publisher, shuffle in (("careless", False), ("careful", True)):
            generator = rng if shuffle else None
            # Suppressed records are shown as '*' so that both releases hold every row.
            first = fulldomain.transform(ds, suppressed="star", shuffle=shuffle, rng=generator)
            second = mondrian.transform(ds, shuffle=shuffle, rng=generator)
            result = matching_attack(first, second, quasi_identifiers=list(ds.quasi_identifiers), k=kk)
            exposed = len(result.exposed) if result.linkable else 0
            rows.append(_row("same table, same order", publisher, kk, "matching", result.rows[0], exposed))
        projections = []
        for columns in (FIRST_PROJECTION, SECOND_PROJECTION):
            qis = [c for c in columns if c in ds.quasi_identifiers]
            part = Dataset(table.select(list(columns)), quasi_identifiers=qis,
                           sensitive=[s for s in columns if s in ds.sensitive],
                           hierarchies={q: ds.hierarchies[q] for q in qis if q in ds.hierarchies})
            # The careless publisher keeps the input order (the join needs no order: the shared
            # columns link the projections).
            projections.append(FullDomain([KAnonymity(kk)], suppression_limit=SUPPRESSION)
                               .fit_transform(part, shuffle=False))
        result = join_attack(projections[0], projections[1], quasi_identifiers=list(ds.quasi_identifiers), k=kk)
        rows.append(_row("overlapping projections", "careless", kk, "join", len(result.before), len(result.exposed)))
        chosen = np.sort(rng.choice(ds.num_rows, size=int(round(SAMPLE_SHARE * ds.num_rows)), replace=False))
        sample = Dataset(table.take(chosen), quasi_identifiers=ds.quasi_identifiers, sensitive=ds.sensitive,
                         hierarchies=ds.hierarchies)
        release = FullDomain([KAnonymity(kk)], suppression_limit=SUPPRESSION).fit_transform(sample, shuffle=False)
        result = membership_attack(release, table.select(list(ds.quasi_identifiers)), exposed_at=PRESENCE_LEVEL)
        rows.append(_row("sample of the population", "careless", kk, "presence", len(result.probability),
                         len(result.exposed)))
        chosen = np.sort(rng.choice(ds.num_rows, size=int(round(FIRST_VERSION_SHARE * ds.num_rows)), replace=False))
        earlier = Dataset(table.take(chosen), quasi_identifiers=ds.quasi_identifiers, sensitive=ds.sensitive,
                          hierarchies=ds.hierarchies)
        new = np.ones(ds.num_rows, dtype=bool)
        new[chosen] = False
        # The careless publisher's versions, in the input's order (the attack matches classes,
        # not positions).
        result = correspondence_attack(Mondrian([KAnonymity(kk)]).fit_transform(earlier, shuffle=False),
                                       Mondrian([KAnonymity(kk)]).fit_transform(ds, shuffle=False),
                                       table.select(list(ds.quasi_identifiers)), k=kk, new=new)
        for attack, exposed, people in (("forward", result.exposed_forward, ~new),
                                        ("cross", result.exposed_cross, ~new),
                                        ("backward", result.exposed_backward, new)):
            rows.append(_row("incremental versions", "careless", kk, attack, int(people.sum()), int(exposed.sum())))
    return ReleasesResult(rows, seed, time.perf_counter() - started)


def _row(scenario: str, publisher: str, k: int, attack: str, records: int, exposed: int) -> dict:
    return {"scenario": scenario, "publisher": publisher, "k": k, "attack": attack, "records": int(records),
            "exposed": int(exposed), "exposed_share": exposed / records if records else 0.0}


def figure_png(result: ReleasesResult) -> bytes:
    """The exposed share per scenario and publisher, one group of bars per k (matplotlib, Agg)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    frame = result.frame
    label = (lambda r: f"{r.scenario}\n({r.publisher}, {r.attack})")
    labels = list(dict.fromkeys(label(r) for r in frame.itertuples()))
    ks = sorted(frame["k"].unique())
    fig = Figure(figsize=(13, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(len(ks), 1)
    positions = np.arange(len(labels))
    for i, kk in enumerate(ks):
        part = frame[frame["k"] == kk]
        shares = {label(r): 100 * r.exposed_share for r in part.itertuples()}
        ax.bar(positions + i * width, [shares.get(name, 0.0) for name in labels], width, label=f"k = {kk}")
    ax.set_xticks(positions + width * (len(ks) - 1) / 2)
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("% of people exposed")
    ax.set_title("Attacks across releases of Adult")
    ax.legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
