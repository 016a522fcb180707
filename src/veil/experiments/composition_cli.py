"""``veil experiment composition``: the composition attack of Ganta et al. reproduced on Adult.

The lead registers it (e.g. ``experiment_app.command("composition")(composition_command)``).
Errors a user can cause are one sentence on standard error with exit status 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from veil.attacks.intersection_cli import parse_levels
from veil.clitools import fails_cleanly, progress_bar, split_names, stage
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE, load_adult
from veil.errors import ParameterError
from veil.experiments.composition import (DEFAULT_K, DEFAULT_PAIRS, FILES, CompositionSettings, check_settings,
                                          run_composition)
from veil.output import check_targets


def _integers(text: str, option: str) -> tuple[int, ...]:
    values = []
    for part in split_names(text):
        try:
            values.append(int(part))
        except ValueError:
            raise ParameterError(f"{option} takes whole numbers separated by commas, not {part!r}.") from None
    if not values:
        raise ParameterError(f"{option} names no value.")
    return tuple(values)


@fails_cleanly
def composition_command(
    out: Path = typer.Option(Path("veil-composition"), "--out", help="Folder for composition.csv, .md, .png "
                                                                     "and .json."),
    k: str = typer.Option(",".join(map(str, DEFAULT_K)), "--k", help="Values of k, comma-separated."),
    releases: str = typer.Option("2", "--releases", help="Number of releases n, 2 to 4 (or a list: 2,3,4)."),
    pairs: str = typer.Option(",".join(DEFAULT_PAIRS), "--pairs",
                              help="Algorithm combinations: mondrian, mdav or fulldomain joined by '-', "
                                   "alternating over the releases (or one per release)."),
    overlap: int = typer.Option(5000, "--overlap", help="People in every release (the paper's P)."),
    size: Optional[int] = typer.Option(None, "--size", help="Records per subset, overlap included "
                                                            "(default: the overlap plus an equal share of the rest)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generator that draws the subsets (recorded)."),
    variants: str = typer.Option("k", "--variants", help="k (k-anonymity), l (plus entropy ℓ-diversity), "
                                                         "t (plus t-closeness), comma-separated."),
    l: float = typer.Option(3.0, "--l", help="ℓ of the ℓ-diversity variant."),
    t: float = typer.Option(0.2, "--t", help="t of the t-closeness variant."),
    confidence: str = typer.Option("1,1/2,1/3,1/4,1/5", "--confidence",
                                   help="Confidence levels C in (0, 1] for PVP_C (1, the perfect breach, always)."),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON instead of the table."),
) -> None:
    """Reproduce the composition attack of Ganta, Kasiviswanathan and Smith (KDD 2008) on Adult.

    Draws subsets of the bundled Adult table that share an overlap population, anonymizes each
    independently (Mondrian, MDAV, …) for every k and variant, runs the intersection attack on
    the overlap population and writes a table (CSV and Markdown), a figure (PNG) and the settings
    with the seed (JSON) into --out, all or nothing.
    """
    if out.exists() and not out.is_dir():
        raise ParameterError(f"{str(out)!r} is a file; give a folder for the experiment's outputs.")
    settings = CompositionSettings(
        k=_integers(k, "--k"), releases=_integers(releases, "--releases"), pairs=tuple(split_names(pairs)),
        overlap=overlap, size=size, seed=seed, variants=tuple(split_names(variants)), l=l, t=t,
        confidence=tuple(parse_levels(confidence)))
    check_targets([out / name for name in FILES], make_folders=True)
    dataset = load_adult(ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE)
    check_settings(settings, dataset.num_rows)  # refuse bad settings before any work
    with progress_bar("composition experiment") as progress:
        result = run_composition(settings, progress=progress, dataset=dataset)
    with stage(f"writing {out}"):
        paths = result.write(out)
    if as_json:
        sys.stdout.write(json.dumps({"info": result.info, "rows": result.rows}, indent=2, ensure_ascii=False) + "\n")
        return
    sys.stdout.write(result.markdown())
    console = Console(highlight=False)
    console.print(f"wrote {', '.join(str(p) for p in paths)} in {result.info['seconds']['total']:.1f} s",
                  markup=False)
