"""The anonymize task: one candidate release of a workbench project, made in a worker process.

:func:`run` reads the configuration text the Anonymize page saved (its relative paths, ``data:
table.csv`` and ``hierarchies/COLUMN.csv``, read from the project's folder, as ``veil anonymize
--config config.yaml`` reads them there), anonymizes the table as ``veil anonymize`` does (the
secure shuffle unless the configuration's ``output:`` says otherwise) and writes into ``out``,
all together or nothing (:class:`veil.output.writer.OutputSet`):

=========================  ===================================================================
``release.csv``            the released table
``manifest.json``          its manifest (published with it)
``manifest.private.json``  the manifest's private file (the curator's)
``report.html``            the release's report (:mod:`veil.report`)
``config.yaml``            the exact configuration text used
``workbench.json``         ``{"label", "created", "algorithm", "metric", "models": [text, …]}``
``search.json``            the search as the release page shows it (:func:`search_document`)
=========================  ===================================================================

The worker renames ``out`` to the project's ``releases/ID`` once this returns, so a run that
fails, is cancelled or killed leaves no release. Only the anonymizers that generalize or
partition the table run here (fulldomain, mondrian, mdav, ace); a configuration asking for the αβ
algorithm or a method of statistical disclosure control is refused with its sentence.
"""
from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

from veil.errors import ConfigError
from veil.workbench.model_forms import describe_models

CONFIG_NAME = "config.yaml"
GENERALIZING = ("fulldomain", "mondrian", "mdav", "ace")
# the lattice nodes search.json describes: judging each again took 1 s for 2,000 on Adult, 0.4 s for 1,000
MAX_NODES = 1_000
FILES = ("release.csv", "manifest.json", "manifest.private.json", "report.html", "config.yaml", "workbench.json",
         "search.json")


def parse_config(folder: Path, text: str):
    """The :class:`veil.config.AnonymizationConfig` that ``text`` describes, its relative paths
    read from ``folder`` (the project's), its mistakes named as ``config.yaml, line N: …``.

    Raises:
        ConfigError: the text is not valid YAML or breaks the schema, or asks for an algorithm
            the workbench does not run (αβ, statistical disclosure control).
    """
    from veil.config.parser import Parser

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{CONFIG_NAME} is not valid YAML ({' '.join(str(exc).split())}); fix it or save the "
                          "form again.") from None
    cfg = Parser(CONFIG_NAME, Path(folder)).parse(root, None)
    if cfg.algorithm.name not in GENERALIZING:
        raise ConfigError(f"{CONFIG_NAME}: the workbench runs the fulldomain, mondrian, mdav and ace algorithms, "
                          f"not {cfg.algorithm.name}; run that one with veil anonymize --config config.yaml.")
    cfg.anonymizer()   # the algorithm's and the models' own checks, before any work
    return cfg


def run(project, params: dict, out: Path, progress) -> dict:
    """Make one candidate release of ``project`` into ``out`` (see the module's docstring).

    Args:
        project: the :class:`veil.workbench.projects.Project`.
        params: ``{"label": TEXT, "config": the configuration text saved}``.
        out: the run's output folder (``runs/ID/out``), renamed to ``releases/ID`` afterwards.
        progress: the worker's progress (``stage(text, total)`` and ``(done, total)``).

    Returns:
        ``{"release": ID}``, the run's id (the release's folder name).

    Raises:
        VeilError: the configuration is refused, the table or a hierarchy cannot be read, or no
            transformation satisfies the models (the run fails with that sentence).
    """
    from veil.manifests import put_private
    from veil.output.writer import OutputSet

    text = params["config"]
    progress.stage("reading the configuration")
    cfg = parse_config(project.root, text)
    targets = {name: out / name for name in FILES}
    # no output may be a file the run reads (as veil anonymize checks: veil.cli.anonymize.files_read)
    reads = [project.config_path, cfg.data, *(spec.path for spec in cfg.hierarchies.values() if spec.path),
             *cfg.populations()]
    progress.stage(f"reading {cfg.data.name}")
    ds = cfg.dataset()
    cfg.check_against(ds)
    anonymizer = cfg.anonymizer()
    fulldomain = cfg.algorithm.name == "fulldomain"
    progress.stage("searching the lattice" if fulldomain else f"partitioning ({cfg.algorithm.name})")
    started = time.perf_counter()
    anonymizer.fit(ds, progress=progress)
    seconds = time.perf_counter() - started
    progress.stage("transforming")
    release = anonymizer.transform(ds, suppressed=cfg.output.suppressed, shuffle=cfg.output.shuffle,
                                   rng=cfg.output.seed).guard_spreadsheets(cfg.output.spreadsheet_guard)
    notes = ds.stray_text_notes() if not fulldomain else []
    # the configuration as the project's folder reads it (data: table.csv), not where that folder is
    document = {**release.manifest, "config": _relative(cfg.to_dict(), project.root)}
    kept = kept_hierarchies(document, out)
    private = {**release.private_manifest, **({"notes": notes} if notes else {})}
    progress.stage("attacking the release for its report")
    from veil.report import release_report_of, render_html

    report_text = render_html(release_report_of(release))
    search = search_document(cfg, ds, anonymizer, release, seconds, progress)
    models = (yaml.safe_load(text) or {}).get("models") or []
    label = str(params.get("label") or "").strip() or "; ".join(describe_models(models))
    about = {"label": label, "created": datetime.now(UTC).isoformat(timespec="seconds"),
             "algorithm": cfg.algorithm.name, "metric": cfg.metric_spec.name, "models": describe_models(models)}
    progress.stage("writing the release")
    outputs = OutputSet(list(targets.values()) + list(kept), reads=reads, make_folders=True)
    with outputs:
        # the local engine's way (veil.engines.local): the table in pieces, never held whole
        outputs.put(targets["release.csv"], release.csv_chunks())
        outputs.put(targets["report.html"], report_text)
        outputs.put(targets["config.yaml"], text)
        for target, data in kept.items():
            outputs.put(target, data)
        outputs.put(targets["workbench.json"], json.dumps(about, indent=2, ensure_ascii=False) + "\n")
        outputs.put(targets["search.json"], json.dumps(search, indent=1, ensure_ascii=False) + "\n")
        put_private(outputs, targets["manifest.private.json"], private, describes={"release": targets["release.csv"]})
        outputs.put_manifest(targets["manifest.json"], document, describes={"release": targets["release.csv"]})
        outputs.commit()
    return {"release": out.parent.name}


def kept_hierarchies(document: dict, out: Path) -> dict[Path, bytes]:
    """The hierarchy files the release was made with, to keep in its folder (``hierarchies/``):
    a project's file may be edited or replaced on the Columns page afterwards, and the gate and
    the attacks need the one the manifest's SHA-256 names. The manifest's ``hierarchy_files``
    then name the copies relative to the release's folder (never a path of the curator's machine).

    Raises:
        DataError: a file changed while the run read it (its bytes no longer have the SHA-256
            the run recorded).
    """
    import hashlib

    from veil.errors import DataError

    named = document.get("hierarchy_files") or {}
    kept: dict[Path, bytes] = {}
    for column, entry in named.items():
        source = Path(entry["file"])
        data = source.read_bytes()
        if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            raise DataError(f"the hierarchy file of '{column}' changed while the run read it; start the run again.")
        target = out / "hierarchies" / source.name
        kept[target] = data
        named[column] = {**entry, "file": f"hierarchies/{source.name}"}
    return kept


def _relative(value, folder: Path):
    """``value`` (the configuration as plain data) with every path inside ``folder`` written
    relative to it."""
    if isinstance(value, dict):
        return {key: _relative(item, folder) for key, item in value.items()}
    if isinstance(value, list):
        return [_relative(item, folder) for item in value]
    if isinstance(value, str) and value.startswith(f"{folder}/"):
        return value[len(str(folder)) + 1:]
    return value


def _shown(key: str, value) -> str | None:
    if value is None:
        return None
    return f"{key} = {value}" if isinstance(value, str) else f"{key} = {value:.4g}"


def search_document(cfg, ds, anonymizer, release, seconds: float, progress=None) -> dict:
    """``search.json``: what the release page shows of the search and its outcome.

    Keys: ``algorithm``, ``metric``, ``quasi_identifiers``, ``heights`` (each hierarchy's
    height, 0 without one), ``chosen`` (the chosen level per quasi-identifier; ``None`` for the
    partitioning algorithms), ``nodes`` (full-domain only: the lattice's nodes, each with
    ``levels``, ``anonymous`` — every model met within the suppression limit — and ``score``, the
    metric's value where the node is anonymous, by height; at most :data:`MAX_NODES`, those
    nearest the chosen node when the lattice is larger, ``truncated`` then true; the verdicts
    are measured again here, the search itself keeping no record of them), ``search``
    (nodes checked by the search, proven optimal), ``models`` (each model's required and achieved
    level on the release), ``utility`` (every metric that applies, as the CLI prints them),
    ``suppressed``, ``records`` and ``seconds`` (of the search).
    """
    qis = list(ds.quasi_identifiers)
    heights = [ds.generalizations[q].height if q in ds.generalizations else 0 for q in qis]
    result = getattr(anonymizer, "result_", None) if cfg.algorithm.name == "fulldomain" else None
    chosen = list(result.levels) if result is not None else None
    nodes, truncated = ([], False) if chosen is None else _nodes(ds, anonymizer, heights, chosen, progress)
    models = [{"model": row["model"], "sensitive": row["sensitive"],
               "required": _shown(row["key"], row["threshold"]), "achieved": _shown(row["key"], row["level"]),
               "passed": row["passed"], **({"c": row["c"]} if "c" in row else {})}
              for row in release.model_levels()]
    private = release.private_manifest
    return {"algorithm": cfg.algorithm.name, "metric": cfg.metric_spec.name, "quasi_identifiers": qis,
            "heights": heights, "chosen": chosen, "nodes": nodes, "truncated": truncated,
            "search": ({k: v for k, v in private["search"].items() if k != "metric"} if "search" in private else None),
            "models": models, "utility": dict(private.get("metrics", {})),
            "suppressed": int(release.suppressed_records), "records": int(ds.num_rows),
            "seconds": round(seconds, 4)}


def _around(heights: list[int], chosen: list[int], limit: int) -> tuple[list[tuple[int, ...]], bool]:
    """The nodes of the lattice nearest the chosen one (breadth first, one level of one
    quasi-identifier a step), at most ``limit``; whether the lattice holds more."""
    from collections import deque

    start = tuple(chosen)
    seen, queue = {start}, deque([start])
    while queue and len(seen) < limit:
        node = queue.popleft()
        for j, height in enumerate(heights):
            for step in (-1, 1):
                level = node[j] + step
                if 0 <= level <= height:
                    near = node[:j] + (level,) + node[j + 1:]
                    if near not in seen and len(seen) < limit:
                        seen.add(near)
                        queue.append(near)
    total = 1
    for height in heights:
        total *= height + 1
    return sorted(seen, key=lambda levels: (sum(levels), levels)), total > len(seen)


def _nodes(ds, anonymizer, heights: list[int], chosen: list[int], progress) -> tuple[list[dict], bool]:
    """The lattice's nodes (all of them, or the :data:`MAX_NODES` nearest the chosen one) with
    each one's verdict and score. The nodes go up by height, and each one's classes are rolled up
    from a node one level below it when that one was listed (only the last height is kept), else
    from the bottom's."""
    import math

    from veil.anonymize.fulldomain import failing_classes
    from veil.classes import EquivalenceClasses

    picked, truncated = _around(heights, chosen, MAX_NODES)
    models = anonymizer.models
    metric = anonymizer._metric()
    track = [name for name in ds.sensitive if any(m.needs_sensitive for m in models)]
    track += [name for name in getattr(metric, "track", ()) if name not in track]
    base = EquivalenceClasses.from_dataset(ds, track=track)
    limit = math.floor(anonymizer.suppression_limit * ds.num_rows + 1e-9)
    below_height: dict[tuple, EquivalenceClasses] = {}   # the listed nodes one level lower
    this_height: dict[tuple, EquivalenceClasses] = {}
    height = 0
    if progress is not None:
        progress.stage("describing the lattice", total=len(picked))
    out = []
    for done, levels in enumerate(picked):
        if sum(levels) != height:   # the next height (the nodes listed are connected: no height is skipped)
            height = sum(levels)
            below_height, this_height = this_height, {}
        below = (levels[:j] + (levels[j] - 1,) + levels[j + 1:] for j in range(len(levels)) if levels[j])
        source = next((below_height[node] for node in below if node in below_height), base)
        classes = source.roll_up(list(levels))
        this_height[levels] = classes
        failing = failing_classes(classes, models)
        anonymous = int(classes.sizes[failing].sum()) <= limit
        score = float(metric.loss(classes, failing)) if anonymous else None
        out.append({"levels": list(levels), "anonymous": bool(anonymous),
                    "score": None if score is None or not math.isfinite(score) else score})
        if progress is not None:
            progress(done + 1, len(picked))
    return out, truncated
