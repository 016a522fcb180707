"""``veil marginals``: publish anonymized marginals of a table as the ``marginals`` section of its
configuration says (Kifer and Gehrke, "Injecting utility into anonymized datasets", SIGMOD 2006).

The collection is the base table (veil's optimal full-domain generalization under the
configuration's ``models``, without suppression; or given levels; or none), the marginals the
section lists, and those the greedy search adds. It is checked against the section's privacy
models and refused, in one sentence naming the marginal and cell, when it fails one. Each
marginal is written as ``OUT/marginal-NN.csv`` and the manifest as ``OUT/manifest.json``, all of
them or none (:mod:`veil.output`).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.table import Table as RichTable

from veil.cli.anonymize import files_read
from veil.cli.console import Console, fails_cleanly, progress_bar, reads_tables, stage, terminal
from veil.errors import ColumnError, ConfigError, DataError, ParameterError, lower_first

if TYPE_CHECKING:
    from veil.config.specification import GivenMarginalSpec, MarginalsSpec
    from veil.marginals import MarginalCounter, MarginalRelease

# A release's marginal files: a folder holding others would mix two releases.
_MARGINAL_FILE = re.compile(r"^marginal-\d{2,}\.csv$")


def model_classes() -> dict:
    """The class of each privacy model of ``marginals.privacy``, by its configuration name (the
    keys of :data:`veil.config.schema.MARGINAL_MODELS`)."""
    from veil.marginals import KCombinatorialAnonymity, KLinkAnonymity, MaxEntLDiversity

    return {"k_link": KLinkAnonymity, "k_combinatorial": KCombinatorialAnonymity,
            "maxent_l_diversity": MaxEntLDiversity}


def _models(spec: MarginalsSpec) -> list:
    classes = model_classes()
    models = []
    for model in spec.privacy:
        try:
            models.append(classes[model.name](**model.options))
        except ParameterError as exc:
            raise ConfigError(f"{model.origin}: {model.name}: {lower_first(str(exc))}") from None
    return models


def _count(counter: MarginalCounter, given: GivenMarginalSpec, base: bool = False):
    """A marginal the configuration names, its mistakes reported at its line."""
    from veil.marginals import MarginalSpec

    try:
        spec = counter.base_spec(given.levels) if base else MarginalSpec.of(given.attributes, given.levels)
        return counter.count(spec)
    except (ColumnError, ParameterError) as exc:
        raise ConfigError(f"{given.origin}: {lower_first(str(exc))}") from None


def _refuse_other_marginals(out: Path, count: int) -> None:
    """Refuse a folder holding marginal files this release would leave beside its own."""
    if not out.is_dir():
        return
    from veil.marginals.release import marginal_file

    ours = {marginal_file(i) for i in range(count)}
    others = sorted(p.name for p in out.iterdir() if _MARGINAL_FILE.match(p.name) and p.name not in ours)
    if others:
        raise DataError(f"{str(out)!r} holds {others[0]} from another release, which this one ({count} marginals) "
                        "would leave beside its own; give an empty folder or remove the old release.")


def render_marginals(release: MarginalRelease, console: Console) -> None:
    """Print the published marginals, the privacy models' verdicts and the KL-divergence."""
    manifest = release.manifest()
    marginals = RichTable(title="Marginals", title_justify="left")
    for head in ("file", "marginal", "role", "cells"):
        marginals.add_column(head, justify="right" if head == "cells" else "left")
    for i, entry in enumerate(manifest["marginals"]):
        marginals.add_row(f"marginal-{i + 1:02d}.csv", entry["name"], entry["role"], f"{entry['cells']:,}")
    console.print(marginals)
    models = RichTable(title="Privacy of the collection", title_justify="left")
    for head in ("model", "level", "threshold", "verdict"):
        models.add_column(head, justify="right" if head in ("level", "threshold") else "left")
    for result in release.results:
        level = "—" if result.level is None else f"{result.level:.4g}"
        how = " (LP relaxation)" if result.method == "lp" else ""
        models.add_row(result.model, level, f"{result.threshold:g}", f"[green]pass[/]{how}")
    console.print(models)
    for result in release.results:
        if result.note:
            console.print(f"note: {result.note}", markup=False)
    algorithm = release.private_manifest()["algorithm"]  # the curator's terminal: the search's steps too
    for step in algorithm.get("steps", []):
        console.print(f"added {step['marginal']}: KL-divergence {step['kl_divergence']:.4f}", markup=False)
    maxent = algorithm["maxent"]
    console.print(f"KL-divergence of the data from the max-ent estimate: {release.kl:.4f} nats ({maxent['method']})")


@fails_cleanly
@reads_tables
def marginals_command(
    data: Optional[Path] = typer.Argument(None, help="Table; overrides the config's data path."),
    config: Path = typer.Option(..., "--config", help="YAML configuration with a marginals section."),
    out: Path = typer.Option(..., "--out", help="Folder for marginal-NN.csv and manifest.json (created if missing)."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest instead of tables."),
) -> None:
    """Publish anonymized marginals of a table (Kifer and Gehrke, SIGMOD 2006).

    Starts from the base table (by default veil's optimal full-domain
    generalization under the configuration's models, without suppression),
    adds the marginals the configuration lists and, with marginals.search,
    those the greedy search picks to lower the KL-divergence of the data from
    the maximum-entropy estimate; checks the collection against
    marginals.privacy (k-link, k-combinatorial, MaxEnt ℓ-diversity) and refuses
    it, naming the marginal and cell, when one fails. Writes
    OUT/marginal-NN.csv and OUT/manifest.json, all of them or none.
    """
    from veil.config import load_config
    from veil.config.specification import GivenMarginalSpec
    from veil.marginals import GreedyMarginalSearch, MarginalCollection, MarginalCounter, MarginalRelease
    from veil.marginals.release import MANIFEST
    from veil.marginals.search import optimal_base
    from veil.output import check_targets

    cfg = load_config(config, data=data)
    spec = cfg.marginals
    if spec is None:
        raise ConfigError(f"{config}: there is no marginals section; add one, like "
                          "'marginals: {privacy: [{k_link: {k: 5}}], search: {max_marginals: 5}}'.")
    if out.exists() and not out.is_dir():
        raise DataError(f"{str(out)!r} is a file; give a folder for the marginals.")
    reads = files_read(cfg, config)
    check_targets([out / MANIFEST], reads=reads, make_folders=True)
    models = _models(spec)
    maxent = {"max_cells": spec.maxent.get("max_cells"), "tol": spec.maxent.get("tolerance"),
              "max_iter": spec.maxent.get("max_iterations")}
    maxent = {key: value for key, value in maxent.items() if value is not None}
    with stage(f"loading {cfg.data.name}"):
        counter = MarginalCounter(cfg.dataset(), spec.sensitive)
    start, roles, base = [], [], {}
    if spec.base == "optimal":
        with stage("searching the optimal base table"):
            table, found = optimal_base(counter, cfg.models())
        base = {"levels": dict(zip(counter.dataset.quasi_identifiers, found.levels)), "optimal": found.proven_optimal,
                "suppression_limit": 0.0}
    elif isinstance(spec.base, GivenMarginalSpec):
        table = _count(counter, spec.base, base=True)
        base = {"levels": dict(zip(table.attributes, table.levels))}
    if base:
        start.append(table)
        roles.append("base")
    for given in spec.publish:
        start.append(_count(counter, given))
        roles.append("given")
    if not start and spec.search is None:
        raise ConfigError(f"{config}: the marginals section publishes nothing; give a base table, marginals under "
                          "publish, or a search.")
    collection, steps, search_settings = MarginalCollection(counter, start, **maxent), None, None
    if spec.search is not None:
        search = GreedyMarginalSearch(models, **spec.search, **{("max_cells_maxent" if k == "max_cells" else k): v
                                                               for k, v in maxent.items()})
        with progress_bar("adding marginals") as progress:
            search.fit(counter, start, progress=progress)
        collection, steps = search.collection_, search.steps_
        roles += ["added"] * len(steps)
        search_settings = {"max_marginals": search.max_marginals, "max_attributes": search.max_attributes,
                           "max_cells": search.max_cells, "start_kl_divergence": search.start_kl_,
                           "stopped": search.stopped_}
    with stage("checking the collection"):
        release = MarginalRelease.from_collection(collection, models, roles=roles, steps=steps, search=search_settings)
    _refuse_other_marginals(out, len(collection))
    extra = {"config": cfg.to_dict(), **({"base": base} if base else {})}
    with stage(f"writing {out}"):
        written = release.write(out, reads=reads, extra=extra)
    if as_json:
        sys.stdout.write(written[-1].read_text(encoding="utf-8"))
        return
    console = terminal()
    render_marginals(release, console)
    console.print(f"wrote {len(written) - 2} marginals, {written[-1]} and {written[-2]} (private: keep it, do not "
                  "publish it)", soft_wrap=True, markup=False)
