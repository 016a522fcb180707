"""The verdict at the top of a release's report, and the columns and warnings it rests on.

The summary is what a steward reads first and signs off: the table's name; each privacy model the
release was made for, with its threshold, its level on the release and whether it is met; the
**records at risk** (published records whose prosecutor re-identification risk, 1 / the size of
their class, exceeds the report's risk threshold: with the default 0.2, the records in classes of
fewer than 5); the records suppressed; the columns published unchanged; and every warning:

* those the release's manifest carries (rows kept in the input's order, a release that keeps
  next to nothing, risky columns published as is);
* the same judgements made again on the published table the report reads
  (:mod:`veil.anonymize.columns`, :mod:`veil.anonymize.useless`), so that a manifest written
  before veil judged them still gets them. Each sentence appears once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from veil.anonymize.columns import ColumnDisposition, ColumnProfile, column_dispositions, profile_column
from veil.anonymize.release import INPUT_ORDER_WARNING
from veil.anonymize.useless import useless_release_warnings
from veil.classes import EquivalenceClasses


@dataclass
class Summary:
    """The verdict of a release's report.

    Attributes:
        name: the table's name.
        algorithm: the algorithm that made the release.
        verdict: one sentence: the models met or failed, and how many warnings.
        models: per configured model: ``model``, ``sensitive``, ``threshold``, ``level``, ``passed``.
        records: published records judged (the suppressed ones left out).
        input_records: records of the input, or ``None`` when the manifest does not say.
        at_risk: published records whose prosecutor risk exceeds ``risk_threshold``.
        risk_threshold: that threshold.
        suppressed: records suppressed, and ``suppressed_share`` of the input.
        suppressed_style: ``"removed"`` or ``"shown as *"``.
        unchanged: the columns published as is.
        warnings: every warning, one sentence each.
    """

    name: str
    algorithm: str
    verdict: str
    models: list[dict]
    records: int
    input_records: int | None
    at_risk: int
    risk_threshold: float
    suppressed: int
    suppressed_share: float
    suppressed_style: str
    unchanged: list[str]
    warnings: list[str] = field(default_factory=list)

    @property
    def at_risk_share(self) -> float:
        """The records at risk as a share of the published records."""
        return self.at_risk / self.records if self.records else 0.0


def dataset_name(manifest: Mapping, name: str | None = None) -> str:
    """The table's name: ``name`` if given, else the manifest's input name, else the name of the
    data file its configuration names (without extension), else ``"the input table"``."""
    if name:
        return name
    given = (manifest.get("input") or {}).get("name")
    if isinstance(given, str) and given:
        return given
    config = manifest.get("config") or {}
    if isinstance(config.get("name"), str) and config["name"]:
        return config["name"]
    if isinstance(config.get("data"), str) and config["data"]:
        return os.path.splitext(os.path.basename(config["data"]))[0]
    return "the input table"


def report_columns(manifest: Mapping, published, classes: EquivalenceClasses) -> list[ColumnDisposition]:
    """Every input column with its role and disposition (from the manifest's ``columns``, or, for a
    manifest without them, from its roles and generalization levels), each column published as is
    judged on the published table.

    Args:
        manifest: the release's manifest.
        published: the published table (a pyarrow Table).
        classes: the published classes (suppressed records left out).
    """
    roles = manifest["roles"]
    qis = list(roles["quasi_identifiers"])
    columns = list((manifest.get("input") or {}).get("columns") or published.column_names)
    listed = {entry.get("name"): entry for entry in manifest.get("columns") or [] if isinstance(entry, Mapping)}
    node = manifest.get("node") or {}
    states = {}
    for j, q in enumerate(qis):
        entry = listed.get(q)
        if entry is not None:
            states[q] = (str(entry.get("disposition")), entry.get("level"), entry.get("height"))
            continue
        level = node.get(q)
        shown = len(np.unique(classes.keys[:, j])) if classes.n_classes else 0
        if shown <= 1 and level != 0:
            states[q] = ("suppressed", level, None)
        else:
            states[q] = ("as is" if level == 0 else "generalized", level, None)
    missing = (manifest.get("config") or {}).get("missing_values") or [""]
    missing = [str(m) for m in missing if m is not None]
    profiles: dict[str, ColumnProfile | None] = {}
    for name in columns:
        if name in qis or name in (roles.get("identifying") or []):
            continue
        profiles[name] = (profile_column(published.column(name), missing=missing)
                          if name in published.column_names else None)
    return column_dispositions(columns, roles, states, profiles)


def report_warnings(manifest: Mapping, columns: Sequence[ColumnDisposition],
                    classes: EquivalenceClasses) -> list[str]:
    """Every warning of the release, each once: the manifest's, then the ones the published table
    calls for (see the module notes)."""
    out = [str(w) for w in manifest.get("warnings") or []]
    if (manifest.get("output") or {}).get("shuffled") is False:
        out.append(INPUT_ORDER_WARNING)
    suppression = manifest.get("suppression") or {}
    share = suppression.get("share") if isinstance(suppression.get("share"), (int, float)) else 0.0
    loss = (manifest.get("metrics") or {}).get("loss")
    out += useless_release_warnings([c for c in columns if c.role == "quasi-identifying"],
                               released_classes=classes.n_classes, suppressed_share=float(share),
                               loss=loss if isinstance(loss, (int, float)) else None)
    out += [c.warning_sentence() for c in columns if c.warning]
    return list(dict.fromkeys(out))


def summarize(manifest: Mapping, *, name: str, models: list[dict], classes: EquivalenceClasses,
              risk_threshold: float, columns: Sequence[ColumnDisposition], warnings: list[str]) -> Summary:
    """The summary of a release's report (see the module notes).

    Args:
        manifest: the release's manifest.
        name: the table's name.
        models: the configured models with their levels and verdicts.
        classes: the published classes (suppressed records left out).
        risk_threshold: the prosecutor risk above which a record is at risk.
        columns: every column with its disposition.
        warnings: every warning.
    """
    sizes = classes.sizes[classes.sizes > 0]
    at_risk = int(sizes[1.0 / sizes > risk_threshold].sum()) if len(sizes) else 0
    suppression = manifest.get("suppression") or {}
    output = manifest.get("output") or {}
    failed = [m for m in models if not m["passed"]]
    if not models:
        verdict = "The manifest records no privacy model"
    elif failed:
        verdict = (f"The release fails {len(failed)} of its {len(models)} privacy models "
                   f"({', '.join(m['model'] for m in failed)})")
    else:
        verdict = f"The release meets {'its' if len(models) == 1 else f'all {len(models)} of its'} privacy model" \
                  + ("" if len(models) == 1 else "s")
    verdict += (f", with {len(warnings)} warning{'' if len(warnings) == 1 else 's'} below." if warnings
                else ", and nothing calls for a warning.")
    rows = (manifest.get("input") or {}).get("rows")
    return Summary(
        name=name, algorithm=str(manifest.get("algorithm", "unknown")), verdict=verdict, models=models,
        records=int(sizes.sum()), input_records=rows if isinstance(rows, int) else None, at_risk=at_risk,
        risk_threshold=risk_threshold, suppressed=int(suppression.get("records") or 0),
        suppressed_share=float(suppression.get("share") or 0.0),
        suppressed_style="removed" if output.get("suppressed", "remove") == "remove" else "shown as *",
        unchanged=[c.name for c in columns if c.disposition == "as is"], warnings=warnings)
