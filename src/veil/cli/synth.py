"""``veil synth``: differentially private synthetic data of a table, as the ``synth:`` section of a
configuration says (:mod:`veil.config.synth_section`; the Python API is :func:`veil.synth.synthesize`).

``veil synth DATA --config C --out DIR [--seed S] [--no-evaluate] [--holdout FILE] [--shadow-runs N]
[--table NAME] [--json]`` writes into DIR, all of them or none (:mod:`veil.output`):

- the synthetic table (``synthetic.csv``, or the ``--table`` name: ``.parquet`` writes Parquet);
- ``manifest.json``: public and sealed, what the DP guarantee covers (:mod:`veil.synth.release`);
- ``report.html``: the evaluation against the private table, for the curator only.

Order of work: the configuration, the options, the output targets, the table and the holdout are
read and checked, and the table encoded in the public domain, before the mechanism draws any noise,
so a refused run writes nothing (and nothing is ever charged here: ``veil publish`` charges the
population's budget when it publishes the table and its manifest). A seeded run (``--seed`` or
``seed:``) is reproducible and marked not fit for release; ``veil publish`` refuses it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from veil.cli.console import fails_cleanly, reads_tables, stage, terminal
from veil.errors import DataError


def _frame(path: Path, delimiter, columns):
    """The table as pandas (a CSV's cells as text, as veil reads them), and its ledger fingerprint.

    Raises:
        DataError: the table cannot be read.
    """
    from veil.ledger.binding import TableRef

    ref = TableRef.of(path, delimiter=delimiter)
    present = [c for c in columns if c in ref.table.data.column_names]
    return ref.table.data.select(present).to_pandas(), ref.fingerprint


@fails_cleanly
@reads_tables
def synth_command(
    data: Optional[Path] = typer.Argument(None, help="The private table (CSV or Parquet); overrides the config's "
                                                     "data path."),
    config: Path = typer.Option(..., "--config", help="YAML configuration with a synth section."),
    out: Path = typer.Option(..., "--out", help="Folder for the synthetic table, manifest.json and report.html "
                                                "(created if missing)."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="Seed the run: reproducible, and NOT fit for "
                                                                   "release (default: the config's, else secure)."),
    no_evaluate: bool = typer.Option(False, "--no-evaluate", help="Skip the evaluation (the report then holds "
                                                                  "none)."),
    holdout: Optional[Path] = typer.Option(None, "--holdout", help="Rows of the same population NOT synthesized "
                                                                   "from: the membership attack's control."),
    shadow_runs: Optional[int] = typer.Option(None, "--shadow-runs", min=0, help="Training runs of the "
                                              "shadow-model membership attack, each a fit of the mechanism on "
                                              "holdout records (0 skips it; default: the config's, else 16 for "
                                              "mst and 8 for aim)."),
    table_name: str = typer.Option("synthetic.csv", "--table", help="The synthetic table's file name in OUT; "
                                                                    ".parquet or .pq writes Parquet."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest instead of a summary."),
) -> None:
    """Make differentially private synthetic data of a table (MST or AIM).

    Reads the synth section of the configuration (mechanism, budget as
    epsilon and delta or rho, the public domain of every column, the
    workload, rows, seed), fits the mechanism to noisy marginals of the
    table, samples the synthetic rows and evaluates them against the real
    ones. Writes the synthetic table, its sealed manifest (public: the
    mechanism, budget, noise scales and seed policy; nothing read from the
    table) and report.html (the evaluation: NOT private, for your decision
    only), all or none. Publish with veil publish, which charges the budget.
    """
    from veil.config.synth_file import load_synth
    from veil.output.writer import OutputSet
    from veil.synth.api import synthesize
    from veil.synth.release import output_paths, write_synthetic_release
    from veil.synth.section_domain import section_domain

    cfg = load_synth(config, data=data)
    spec = cfg.spec
    held_path = holdout if holdout is not None else spec.holdout
    if held_path is not None and not Path(held_path).is_file():
        raise DataError(f"holdout table {str(held_path)!r} does not exist; check the path.")
    if out.exists() and not out.is_dir():
        raise DataError(f"{str(out)!r} is a file; give a folder for the synthetic data.")
    report = True
    paths = output_paths(out, table_name, report)
    reads = list(cfg.reads) + ([Path(held_path)] if held_path is not None else [])
    outputs = OutputSet(paths, reads=reads, make_folders=True)  # its targets checked before any work
    with outputs:
        with stage(f"reading {cfg.data.name}"):
            frame, fingerprint = _frame(cfg.data, cfg.delimiter, spec.columns)
            held = None
            if held_path is not None and not no_evaluate:
                held, _ = _frame(Path(held_path), cfg.delimiter, spec.columns)
            domain = section_domain(spec, frame)
        options = {"max_model_cells": spec.max_model_cells} if spec.max_model_cells is not None else {}
        runs = shadow_runs if shadow_runs is not None else spec.shadow_runs
        options.update({k: v for k, v in (("shadow_runs", runs), ("shadow_trials", spec.shadow_trials))
                        if v is not None})
        with stage(f"synthesizing with {spec.mechanism}"):
            release = synthesize(frame, domain, mechanism=spec.mechanism, epsilon=spec.epsilon, delta=spec.delta,
                                 rho=spec.rho, workload=spec.workload_argument(), rows=spec.rows,
                                 rng=seed if seed is not None else spec.seed, evaluate=not no_evaluate,
                                 holdout=held, target=spec.target, quasi_identifiers=spec.quasi_identifiers,
                                 **options)
        with stage(f"writing {out}"):
            manifest = write_synthetic_release(release, out, table_name=table_name, report=report,
                                               fingerprint=fingerprint, reads=reads, outputs=outputs,
                                               title=f"Synthetic data of {cfg.data.name}", source=cfg.data.name)
    if as_json:
        sys.stdout.write(json.dumps({k: v for k, v in manifest.items() if k != "seal"}, indent=2,
                                    ensure_ascii=False) + "\n")
    else:
        _summary(manifest, paths)
    if not release.fit_for_release:
        sys.stdout.flush()
        terminal(stderr=True, soft_wrap=True).print(
            f"warning: not fit for release ({'; '.join(release.unfit_reasons)}).", markup=False)


def _summary(manifest: dict, paths) -> None:
    """What was made and written, in two lines (nothing of the evaluation: that is in the report)."""
    console = terminal(soft_wrap=True)
    budget = manifest["budget"]
    cost = f"ε = {budget['epsilon']}, δ = {budget['delta']} (ρ = {budget['rho']})" if budget["epsilon"] is not None \
        else f"ρ = {budget['rho']}"
    console.print(f"{manifest['rows']:,} synthetic rows of {len(manifest['domain'])} columns by "
                  f"{manifest['mechanism']}, {cost}, {len(manifest['measurements'])} noisy marginals, randomness "
                  f"{manifest['randomness']}", markup=False)
    console.print(f"wrote {paths[0]}, {paths[1]} and {paths[2]} (the report is private: keep it, do not publish "
                  "it)", markup=False)
