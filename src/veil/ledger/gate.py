"""The publishing gate: what a release must pass before the ledger records it as published.

:func:`publish` takes a release that ``veil anonymize``, ``veil dp`` or ``veil synth`` wrote (its manifest, which
names and hashes the published file: :func:`veil.output.load_manifest` checks the pair) and

0. verifies the whole ledger (:mod:`veil.ledger.verification`: every population, dataset, charge
   and release row against the hash-chained, anchored log), so that a hand-edited ledger is refused
   rather than believed; a DP answer's manifest must carry a seal that verifies under the ledger's
   key (:mod:`veil.ledger.answers`), so that what is charged is what ``veil dp`` wrote (a synthetic
   table's, what ``veil synth`` wrote: :mod:`veil.synth.release`);
1. checks that the table the publisher holds is the population's (by its keyed binding; a
   population that is one table refuses any other), from which the targets of the attacks come;
2. re-checks the release's own models on the published file, as ``veil check --manifest`` does:
   every model the manifest reports must measure the same level there, and have passed (the
   levels that compare with the input's distribution, and that distribution, are in the
   manifest's private file, :mod:`veil.manifests`, which the gate reads beside the manifest);
3. runs the policy's checks of the release alone (membership disclosure against a population
   table), then every cross-release check of the policy (:mod:`veil.ledger.checks`) between the new
   release and every earlier release of the population that the ledger holds (it keeps each
   published file, compressed, so nobody needs to keep them);
4. in one transaction under the write lock, the whole ledger verified again: if another release
   of the population was published while the checks ran, goes back to 3 for it; registers the
   table, charges a DP release's (ε, δ) to the population's budget (or takes over the charge its
   query already made in this ledger), and records the release with its checks — or records the
   refusal with every reason, and nothing else.

Nothing leaves the ledger half-done: a refusal is recorded and charges or registers nothing, a
publication is recorded with its table and charge or not at all; a release refused for bad input
(exit 2) records nothing. (A population the policy defines is made first, as ``veil ledger init
--policy`` would make it: its definition comes from the policy, never from the release.)
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pyarrow as pa
from sqlalchemy import func, select

from veil.dp.budget import BudgetExceededError, Charge
from veil.dp.exact import exact
from veil.errors import ParameterError, VeilError
from veil.ledger import verification
from veil.ledger.binding import TableRef, binding, check_tag
from veil.ledger.checks import CrossReleaseCheck, Finding, ReleaseView, SingleReleaseCheck
from veil.ledger.errors import LedgerError, LedgerTamperedError
from veil.ledger.kinds import DIFFERENTIALLY_PRIVATE, MICRODATA, kind_of
from veil.ledger.policy import Policy
from veil.ledger.table_models import TABLE_MODELS, table_model_level
from veil.ledger.records import Population, charge_values, compress, decompress, sha256
from veil.ledger.schema import TABLES

CHARGES, RELEASES, DATASETS = TABLES["charges"], TABLES["releases"], TABLES["datasets"]

__all__ = ["Decision", "publish"]

# Levels that are better when larger (the others are better when smaller).
_HIGHER = ("k", "l_distinct", "l_entropy", "c_l_recursive")
# The sections of a release's private file the ledger keeps for the checks of later releases.
_KEPT_PRIVATE = ("generalization", "recoding")


@dataclass(frozen=True)
class Decision:
    """The gate's decision on one release.

    Attributes:
        published: whether the release was recorded as published.
        name: the release's name; ``release_id`` its number in the ledger when published.
        kind: its kind; ``population`` the population it was judged against.
        reasons: every reason it was refused, one sentence each (empty when published).
        findings: every cross-release check run, passed or not.
        recheck: the release's models as measured again on the published file.
        charge: the DP charge (its number in the ledger) the release was published with.
        entry: the log entry that records the decision.
        already: the same file was published to the population before (as ``release_id``);
            nothing was checked, charged or recorded again.
        warnings: what the release's own manifest warns a publisher about (e.g. rows kept in the
            input's order), which refuses nothing alone but is logged with the decision.
    """

    published: bool
    name: str
    kind: str
    population: str
    reasons: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    recheck: list[dict] = field(default_factory=list)
    release_id: int | None = None
    charge: int | None = None
    entry: int | None = None
    already: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str | None:
        """The first reason for a refusal."""
        return self.reasons[0] if self.reasons else None

    def to_dict(self) -> dict:
        return {"published": self.published, "name": self.name, "kind": self.kind, "population": self.population,
                "release_id": self.release_id, "charge": self.charge, "entry": self.entry, "already": self.already,
                "reasons": list(self.reasons), "findings": [f.to_dict() for f in self.findings],
                "recheck": list(self.recheck), "warnings": list(self.warnings)}


@dataclass(eq=False)
class _Candidate:
    """The release at the gate: ``manifest`` is the curator's view (the published manifest with
    its private file's sections, :func:`veil.manifests.combined`); ``private`` the private file."""

    manifest: dict
    manifest_text: bytes
    path: Path
    content: bytes
    kind: str
    name: str
    hierarchies: dict = field(default_factory=dict)
    orders: dict = field(default_factory=dict)
    private: dict | None = None
    manifest_path: Path | None = None

    @functools.cached_property
    def table(self) -> pa.Table:
        """The published table, read from the very bytes that were checked and will be stored."""
        return _table_from_bytes(self.content, self.file_name, self.manifest)

    def reading(self) -> bytes:
        """What a later reader needs besides the file and the published manifest (JSON): the
        hierarchies and orders, and the sections of the private file the checks of later releases
        read (the value map, the whole recoding), so that they never depend on the published
        manifest carrying private data."""
        doc = {"hierarchies": {c: h.rows() for c, h in sorted(self.hierarchies.items())},
               "orders": {c: list(o) for c, o in sorted(self.orders.items())}}
        kept = {key: self.private[key] for key in _KEPT_PRIVATE if key in (self.private or {})}
        if kept:
            doc["private"] = kept
        return json.dumps(doc, sort_keys=True, ensure_ascii=False).encode("utf-8")

    @property
    def file_name(self) -> str:
        return self.path.name


def _reading_aids(manifest: dict, hierarchies, orders, folder: Path | None = None) -> tuple[dict, dict]:
    """The hierarchies and value orders of the release's columns: those given, else the files the
    manifest names (checked by their SHA-256), else the files and orders its configuration names
    (``veil anonymize`` records them in the manifest), else the hierarchies its private file keeps."""
    from veil.data.hierarchy import Hierarchy
    from veil.manifests import referenced_hierarchy

    roles = manifest.get("roles") or {}
    columns = list(roles.get("quasi_identifiers") or []) + list(roles.get("sensitive") or [])
    config = manifest.get("config") or {}
    found: dict = {c: Hierarchy(rows, name=f"the hierarchy of '{c}' in the release's private file")
                   for c, rows in (manifest.get("hierarchy_rows") or {}).items() if c in columns and rows}
    for column, spec in (config.get("hierarchies") or {}).items():
        path = spec.get("file") if isinstance(spec, dict) else None
        if column in columns and path and Path(path).is_file():
            found[column] = path
    for column in columns:
        if column not in (hierarchies or {}):
            named = referenced_hierarchy(manifest, column, folder)
            if named is not None:
                found[column] = named
    found.update(hierarchies or {})
    loaded = {c: h if isinstance(h, Hierarchy) else Hierarchy.read_csv(h) for c, h in found.items()}
    given_orders = {c: [str(v) for v in o] for c, o in (config.get("orders") or {}).items() if c in columns}
    given_orders.update({c: [str(v) for v in o] for c, o in (orders or {}).items()})
    return loaded, given_orders


def _load_candidate(manifest, name: str | None, hierarchies, orders, private=None) -> _Candidate:
    from veil.manifests import combined, load_private
    from veil.output.reading import load_manifest

    manifest_path = Path(manifest)
    published = load_manifest(manifest_path)
    secret = load_private(manifest_path, published, private)
    doc = combined(published, secret)
    release = manifest_path.parent / doc["release"]["file"]
    try:
        content = release.read_bytes()
        manifest_text = manifest_path.read_bytes()
    except OSError as exc:
        raise LedgerError(f"cannot read the release {str(release)!r} ({exc.strerror}).") from None
    if sha256(content) != doc["release"]["sha256"] or _parsed(manifest_text) != published:
        raise LedgerError(f"the release {str(release)!r} changed while it was read; publish it again.")
    kind = kind_of(doc, f"manifest {str(manifest_path)!r}")
    if name is None:
        name = f"{manifest_path.resolve().parent.name}/{release.name}"
    elif not isinstance(name, str) or not name.strip():
        raise ParameterError(f"a release's name must be a non-empty text, got {name!r}.")
    aids = _reading_aids(doc, hierarchies, orders, manifest_path.parent)
    return _Candidate(doc, manifest_text, release, content, kind, name, *aids, private=secret,
                      manifest_path=manifest_path)


def _parsed(text: bytes):
    try:
        return json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _table_from_bytes(content: bytes, file_name: str, manifest: dict | None = None) -> pa.Table:
    """A published file's bytes read exactly as veil reads the file itself (CSV or Parquet, by its
    name), and as released when its manifest says it was written with the spreadsheet guard."""
    import pyarrow.parquet as pq

    from veil.data.io import read_csv_bytes
    from veil.spreadsheet import is_guarded, unguard_table

    if Path(file_name).suffix.lower() in (".parquet", ".pq"):
        return pq.read_table(pa.BufferReader(content))
    table = read_csv_bytes(content, file_name).data
    return unguard_table(table) if is_guarded(manifest) else table


# ---------------------------------------------------------------------- the release's own models

def _require_private(candidate: _Candidate, manifest) -> None:
    """Refuse to re-check a release whose manifest keeps some model's level in a private file
    that was not found.

    Raises:
        LedgerError: a model's level is in the missing private file (one sentence saying what to pass).
    """
    from veil.manifests import is_split, missing_private

    if candidate.private is not None or not is_split(candidate.manifest):
        return
    hidden = [row.get("model", "a model") for row in candidate.manifest.get("models") or [] if "level" not in row]
    if hidden:
        raise LedgerError(missing_private(manifest, f"the level of {hidden[0]} (and the input's distribution it is "
                                                    "measured against)"))


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return a == b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def _recheck(candidate: _Candidate) -> tuple[list[dict], list[str]]:
    """Each model of the manifest measured on the published file; the problems, one sentence each."""
    from veil.check import check
    from veil.data.dataset import Dataset

    manifest = candidate.manifest
    rows = manifest.get("models") or []
    roles = manifest.get("roles") or {}
    if not rows:
        return [], []
    sensitive_columns = roles.get("sensitive") or []
    dataset = Dataset(candidate.table, quasi_identifiers=roles.get("quasi_identifiers") or [],
                      sensitive=sensitive_columns,
                      hierarchies={c: h for c, h in candidate.hierarchies.items() if c in sensitive_columns},
                      orders={c: o for c, o in candidate.orders.items() if c in sensitive_columns})
    results, problems, reports = [], [], {}
    join = _join_model(manifest, candidate.hierarchies) if any(row.get("key") == "join" for row in rows) else None
    for row in rows:
        c = float(row.get("c", 2.0))
        if c not in reports:
            reports[c] = check(dataset, c=c, manifest=manifest, join=join).to_dict()
        report = reports[c]
        key, sensitive = row["key"], row.get("sensitive")
        if key in TABLE_MODELS:   # a model of the whole table's risk reads the sampling design
            measured = table_model_level(manifest, candidate.table, row)
        elif sensitive is None:
            measured = report.get(key)
        else:
            levels = [report["by_sensitive"].get(s, {}).get(key) for s in sensitive.split(", ")]
            if any(v is None for v in levels):
                measured = None
            else:
                numbers = [math.inf if v == "inf" else v for v in levels]
                measured = min(numbers) if key in _HIGHER else max(numbers)
                measured = "inf" if measured == math.inf else measured
        results.append({"model": row["model"], "sensitive": sensitive, "manifest": row["level"],
                        "published": measured, "passed": row.get("passed")})
        what = row["model"] + (f" of '{sensitive}'" if sensitive else "")
        if row.get("passed") is not True:
            problems.append(f"the release's own manifest says {what} failed (threshold {row['threshold']:g}).")
        elif measured is None:
            hint = {"t_hierarchical": " without its hierarchy; give it (--hierarchy COL=FILE)",
                    "join": " without the earlier release, which only a configuration's join model names (anonymize "
                            "with one)"}.get(key, "")
            problems.append(f"{what} cannot be measured on the published file{hint}, so the release cannot be "
                            "checked.")
        elif not _same(measured, row["level"]) and key == "join":
            # a hierarchy built by the configuration is not kept with the release, only a file's
            problems.append(f"{what} measures {measured} on the published file but {row['level']} in its manifest; "
                            "a column it shares with the earlier release at another level is joined through its "
                            "hierarchy, so give it (--hierarchy COL=FILE).")
        elif not _same(measured, row["level"]):
            problems.append(f"{what} measures {measured} on the published file but {row['level']} in its manifest; "
                            "the file is not what was anonymized.")
    return results, problems


def _join_model(manifest: dict, hierarchies: dict):
    """Join k-anonymity against the earlier release the release's configuration names, to measure
    (not check) on the published file; ``None`` when the configuration names none."""
    from veil.models import JoinKAnonymity

    options = next((entry["join"] for entry in (manifest.get("config") or {}).get("models") or []
                    if isinstance(entry, dict) and isinstance(entry.get("join"), dict)), {})
    if not options.get("earlier"):
        return None
    # the quasi-identifiers' hierarchies join a shared column published at two levels, as at anonymization
    return JoinKAnonymity(options["earlier"], manifest=options.get("manifest"), sensitive=options.get("sensitive"),
                          hierarchies=hierarchies)


# ---------------------------------------------------------------------- the earlier releases

def _earlier(ledger, pop: Population, after: int, *, read: bool) -> tuple[list[ReleaseView], int]:
    """The population's microdata releases numbered above ``after``, read back from the ledger (when
    ``read``), and the newest release number of the population."""
    from veil.data.hierarchy import Hierarchy
    from veil.manifests import combined

    with ledger._reading() as conn:
        newest = conn.execute(select(func.max(RELEASES.c.id)).where(RELEASES.c.population_id == pop.id)).scalar()
        rows = conn.execute(select(RELEASES).where(RELEASES.c.population_id == pop.id, RELEASES.c.id > after,
                                                   RELEASES.c.kind.in_(MICRODATA)).order_by(RELEASES.c.id)).all() \
            if read else []
    views = []
    for row in rows:
        where = f"release {row.id} of {ledger._where}"
        content = decompress(row.content, where)
        manifest_text = decompress(row.manifest, where)
        if sha256(content) != row.file_sha256 or sha256(manifest_text) != row.manifest_sha256:
            raise LedgerTamperedError(f"{where} was changed after it was published (its hash does not match); "
                                      "restore the ledger from a backup.")
        reading = json.loads(decompress(row.reading, where))
        name = f"release {row.id} ({row.name!r}, published {row.at[:19].replace('T', ' ')} by {row.by})"
        hierarchies = {c: Hierarchy(rows, name=c) for c, rows in reading["hierarchies"].items()}
        # the published manifest with what the ledger kept of its private file (older entries kept
        # everything in the manifest itself)
        manifest = combined(json.loads(manifest_text), reading.get("private"))
        views.append(ReleaseView(name, row.kind, _table_from_bytes(content, row.file_name, manifest), manifest,
                                 hierarchies, reading["orders"]))
    return views, max(after, newest or 0)


# ---------------------------------------------------------------------- the gate

def publish(ledger, manifest, *, population: str, data=None, policy: Policy | None = None,
            hierarchies=None, orders=None, delimiter: str | None = None, name: str | None = None,
            private=None) -> Decision:
    """Judge a release against its population's history and record the decision (see the module notes).

    Args:
        ledger: the ledger.
        manifest: the path of the manifest ``veil anonymize`` or ``veil dp`` wrote with the release.
        population: the population the release is about; made from the policy's definition
            when the ledger does not have it yet.
        data: the population's table as the publisher holds it (a path, frame or pyarrow Table):
            needed for microdata releases, whose attacks target every person in it.
        policy: the policy (default: :class:`~veil.ledger.policy.Policy`'s defaults).
        hierarchies: per sensitive column, a hierarchy its hierarchical t-closeness needs.
        orders: per column, the order of its values (ordered t-closeness on text).
        delimiter: the CSV delimiter of ``data``.
        name: what to call the release (default: its folder and file name).
        private: the path of the manifest's private file (default: the one beside it, when it is
            there; see :mod:`veil.manifests`).

    Returns:
        The decision, already recorded.

    Raises:
        DataError: the manifest and its release do not match, or cannot be read; the private file
            given is missing or belongs to another release; the policy's population table cannot
            be read, lacks a quasi-identifier or does not cover the release
            (:class:`~veil.attacks.presence.PopulationMismatchError`).
        LedgerError: the population is unknown (and the policy does not define it), the table
            belongs to another population, a microdata release comes without its table, or
            the release's kind cannot be judged.
        LedgerTamperedError: the ledger fails verification.
    """
    policy = Policy() if policy is None else policy
    if not isinstance(policy, Policy):
        raise ParameterError(f"policy must be a veil.ledger.policy.Policy, got {type(policy).__name__}.")
    candidate = _load_candidate(manifest, name, hierarchies, orders, private)
    defined = policy.population(population)
    if defined is not None:
        ledger.add_population(population, budget=defined.template(), key_column=defined.key_column,
                              relation=defined.relation)
    else:
        _require_population(ledger, population)
    pop = ledger.population(population)
    earlier = _same_release(ledger, pop, candidate)
    if earlier is not None:
        return earlier
    reasons: list[str] = []
    recheck: list[dict] = []
    table = None
    if data is not None:
        table = data if isinstance(data, TableRef) else TableRef.of(data, delimiter=delimiter)
        with ledger._reading() as conn:
            ledger._held(conn, pop, table, ledger._key(conn))  # refuses another population's table, writes nothing
    view = None
    if candidate.kind in MICRODATA:
        if table is None:
            raise LedgerError(f"publishing a {candidate.kind} release needs the population's table as you hold it "
                              "(--data), whose people the gate attacks it on.")
        rows = (candidate.manifest.get("input") or {}).get("rows")
        if pop.key_column is None and rows is not None and rows != table.rows:
            raise LedgerError(f"the release was made from a table of {rows:,} rows, and the table given is another; "
                              "give the table it was made from.")
        if policy.recheck:
            _require_private(candidate, manifest)
            recheck, problems = _recheck(candidate)
            reasons += problems
        if candidate.kind == "perturbation" and candidate.manifest.get("fit_for_release") is not True:
            # a seeded method (veil.sdc) is a reproducible experiment: anyone with the seed undoes it
            why = "; ".join(candidate.manifest.get("not_fit_because") or []) or "its manifest does not say it is"
            reasons.append(f"the perturbed table is not fit for release ({why}).")
        view = ReleaseView(f"the new release ({candidate.name!r})", candidate.kind, candidate.table,
                           candidate.manifest, candidate.hierarchies, candidate.orders)
    else:
        _check_answer(ledger, pop, candidate, table)
        if candidate.manifest.get("fit_for_release") is not True:
            why = "; ".join(candidate.manifest.get("not_fit_because") or []) or "its manifest does not say it is"
            what = "synthetic data" if candidate.kind == "synthetic" else "answer"
            reasons.append(f"the {what} is not fit for release ({why}).")
    # The checks of the release alone run once; the cross-release ones against every earlier release.
    findings: list[Finding] = [check.run(view) for check in policy.checks
                               if isinstance(check, SingleReleaseCheck) and view is not None and check.applies(view)]
    cross = [check for check in policy.checks if isinstance(check, CrossReleaseCheck)]
    seen = 0
    while True:
        earlier, seen = _earlier(ledger, pop, seen, read=view is not None)
        for other in earlier:
            for check in cross:
                if check.applies(view, other):
                    findings.append(check.run(view, other, table.table.data))
        decision = _decide(ledger, pop, candidate, policy, seen, reasons, findings, recheck, table)
        if decision is not None:
            return decision


def _require_population(ledger, name: str) -> None:
    """Refuse a population the ledger does not hold, saying how to add one.

    Raises:
        LedgerError: the ledger has no population ``name``.
    """
    known = [pop.name for pop in ledger.populations()]
    if name in known:
        return
    listed = (f"it has {', '.join(repr(n) for n in known[:5])}{', …' if len(known) > 5 else ''}" if known
              else "it has none yet")
    key = name if re.fullmatch(r"[A-Za-z0-9_.-]+", name) else json.dumps(name, ensure_ascii=False)
    raise LedgerError(f"{ledger._where} has no population {name!r} ({listed}); add it by defining it in a policy "
                      f"file, 'policy: {{populations: {{{key}: {{}}}}}}', and giving that file to --policy here or to "
                      "veil ledger init --policy.")


def _check_answer(ledger, pop: Population, candidate: _Candidate, table: TableRef | None) -> None:
    """A DP answer's manifest must be the one ``veil dp`` sealed, and the answer drawn from a table
    of the population (when the manifest names its table).

    Raises:
        LedgerError: no seal, another key's, a seal that does not verify (the manifest or the
            answer was edited), or the answer was drawn from another table.
    """
    from veil.ledger.answers import check_seal

    synthetic = candidate.kind == "synthetic"
    where = f"the {'synthetic data' if synthetic else 'answer'}'s manifest {str(candidate.manifest_path)!r}"
    with ledger._reading() as conn:
        key = ledger._key(conn)
        check_seal(candidate.manifest, key, where, "veil synth" if synthetic else "veil dp")
        named = candidate.manifest.get("table")
        if named is None:
            return
        bindings = [pop.fingerprint] + list(conn.execute(select(DATASETS.c.fingerprint)
                                                         .where(DATASETS.c.population_id == pop.id)).scalars())
    if table is not None:
        bindings.append(binding(key, table.fingerprint))
    if not (isinstance(named, dict) and isinstance(named.get("nonce"), str) and isinstance(named.get("tag"), str)
            and check_tag(key, named["nonce"], named["tag"], bindings)):
        raise LedgerError(f"the answer was not drawn from a table of population {pop.name!r}; give the table it was "
                          "drawn from (--data) to register it, or publish it to its own population.")


def _same_release(ledger, pop: Population, candidate: _Candidate) -> Decision | None:
    """The decision that published this very file to the population, if one did (its manifest may have been
    written again since: its time of writing changes, the table does not)."""
    with ledger._reading() as conn:
        verification.require(conn, ledger.store, ledger._where, ledger._id(conn), lock=False)
        row = conn.execute(select(RELEASES).where(RELEASES.c.population_id == pop.id,
                                                  RELEASES.c.file_sha256 == sha256(candidate.content))
                           .order_by(RELEASES.c.id).limit(1)).first()
    if row is None:
        return None
    # the warnings it was published with, as its stored manifest gave them
    stored = json.loads(decompress(row.manifest, f"release {row.id}'s manifest"))
    warnings = [str(w) for w in stored.get("warnings") or []] if isinstance(stored, dict) else []
    return Decision(True, row.name, row.kind, pop.name, release_id=row.id, charge=row.charge_seq, entry=row.log_seq,
                    already=True, warnings=warnings)


def _decide(ledger, pop: Population, candidate: _Candidate, policy: Policy, seen: int, reasons: list[str],
            findings: list[Finding], recheck: list[dict], table: TableRef | None) -> Decision | None:
    """Record the decision in one transaction on a ledger verified whole under its lock, or return
    ``None`` when the population got a release after ``seen`` while the checks ran (the caller
    checks that one too and comes back). A refusal records the refusal and nothing else; a
    publication registers the table (when new), charges and records the release together."""
    refusals = list(reasons) + [f.reason for f in findings if not f.passed]
    record = {"name": candidate.name, "kind": candidate.kind, "file_name": candidate.file_name,
              "file_sha256": sha256(candidate.content), "manifest_sha256": sha256(candidate.manifest_text)}
    warnings = [str(w) for w in candidate.manifest.get("warnings") or []]
    extra = {"findings": [f.to_dict() for f in findings], "recheck": recheck, "policy": policy.to_dict(),
             "policy_sha256": policy.digest, "warnings": warnings}
    base = dict(name=candidate.name, kind=candidate.kind, population=pop.name, findings=list(findings),
                recheck=list(recheck), warnings=warnings)
    with ledger._writing() as w:
        newest = w.conn.execute(select(func.max(RELEASES.c.id)).where(RELEASES.c.population_id == pop.id)).scalar()
        if (newest or 0) > seen:
            return None
        charge_seq, new_charge = None, None
        if not refusals and candidate.kind in DIFFERENTIALLY_PRIVATE:
            try:
                charge_seq, new_charge = _dp_charge(ledger, w, pop, candidate)
            except (BudgetExceededError, LedgerError) as exc:
                refusals.append(str(exc))
        if refusals:
            w.note("refuse", pop.name, {"release": record, "reason": refusals[0], "reasons": refusals, **extra})
            return Decision(False, reasons=refusals, entry=w.head.seq, **base)
        if table is not None:
            ledger._register(w, pop, table)
        if new_charge is not None:
            charge_seq = w.add("charges", charge_values(new_charge, pop, w.by), action="charge",
                               population=pop.name, extra={"release": candidate.name})
        values = {"population_id": pop.id, "dataset_id": None, "kind": candidate.kind, "name": candidate.name,
                  "manifest": compress(candidate.manifest_text), "manifest_sha256": record["manifest_sha256"],
                  "file_name": candidate.file_name, "file_sha256": record["file_sha256"],
                  "content": compress(candidate.content), "reading": compress(candidate.reading()),
                  "charge_seq": charge_seq, "by": w.by, "at": w.at}
        checks = [f.reason for f in findings]
        if recheck:
            checks.append(f"{len(recheck)} models re-checked on the published file")
        release_id = w.add("releases", values, action="publish", population=pop.name,
                           extra={"checks": checks, **extra})
        return Decision(True, release_id=release_id, charge=charge_seq, entry=w.head.seq, **base)


def _dp_charge(ledger, w, pop: Population, candidate: _Candidate) -> tuple[int | None, Charge | None]:
    """The charge a DP release is published with: the one its query made in this ledger, or a new one.

    Raises:
        LedgerError: the population has no budget or keeps it in a way a release alone cannot
            be charged to; the release names a charge of another ledger, population or cost,
            or one already published.
        BudgetExceededError: a new charge does not fit.
    """
    from veil.dp.accountant import Accountant

    doc = candidate.manifest
    in_rho = isinstance(doc, dict) and "rho" in doc
    try:
        # a ρ-zCDP answer's manifest names its ρ and no ε; the charge row keeps the ρ where others keep ε
        epsilon, delta = (exact(doc["rho"], "rho"), Fraction(0)) if in_rho else \
            (exact(doc["epsilon"], "epsilon"), exact(doc.get("delta", "0"), "delta"))
        label = doc["label" if candidate.kind == "synthetic" else "query"]  # what veil synth / veil dp charged
    except (KeyError, TypeError, VeilError):
        raise LedgerError("the DP release's manifest does not say what it cost (epsilon, delta, query); publish "
                          "what veil dp wrote.") from None
    if pop.budget is None:
        raise LedgerError(f"population {pop.name!r} has no privacy budget, so no DP release can be charged to it.")
    if candidate.kind == "synthetic" and pop.unit is not None and pop.unit.is_person:
        raise LedgerError(f"population {pop.name!r} protects {pop.unit}, and veil synth protects a row; publish the "
                          "synthetic data to a population whose budget protects rows.")
    kept_in_rho = pop.budget["composition"] == "zcdp"
    if in_rho != kept_in_rho:
        kept = "ρ-zCDP" if kept_in_rho else "(ε, δ)"
        raise LedgerError(f"population {pop.name!r} keeps its budget in {kept} and the "
                          f"answer cost {'ρ' if in_rho else 'ε'}, so it cannot be charged to it; publish it to a "
                          "population whose budget is in the answer's measure.")
    named = doc.get("charge")
    if named:
        if named.get("ledger_id") != w.ledger_id:
            raise LedgerError(f"the answer was charged in another ledger ({named.get('ledger_id')}); publish it "
                              "through that one.")
        row = w.conn.execute(select(CHARGES).where(CHARGES.c.seq == named.get("seq"))).first()
        if row is None or row.population_id != pop.id or exact(row.epsilon, "epsilon") != epsilon \
                or exact(row.delta, "delta") != delta or row.label != label:
            raise LedgerError(f"the answer names charge {named.get('seq')} of this ledger, which is not its query's "
                              f"charge to population {pop.name!r}; publish what veil dp wrote.")
        taken = w.conn.execute(select(RELEASES.c.id).where(RELEASES.c.charge_seq == row.seq)).scalar()
        if taken is not None:
            raise LedgerError(f"the answer of charge {row.seq} was already published, as release {taken}.")
        return row.seq, None
    rows = w.conn.execute(select(CHARGES).where(CHARGES.c.population_id == pop.id).order_by(CHARGES.c.seq)).all()
    accountant = ledger._accountant(pop, rows)
    if type(accountant) is not Accountant and not in_rho:
        raise LedgerError(f"population {pop.name!r} counts its budget by {accountant.composition} composition, which "
                          "needs each query's time step; charge the query when it is drawn (veil dp --ledger).")
    if pop.relation != "add-remove":
        raise LedgerError(f"population {pop.name!r} keeps its budget under substitution of a record, and veil's "
                          "queries are private under adding or removing one.")
    return None, (accountant.charge(rho=epsilon, label=label) if in_rho else
                  accountant.charge(epsilon, delta, label=label))
