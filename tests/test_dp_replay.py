"""Nothing a DP consumer sees depends on the private table except the noisy answers (audit item 3).

The same session of commands is replayed on a table and on each of its neighbours — one record's
values changed, one record removed, one record added — in folders laid out alike, with the same
seeds and the same key. Every byte the analyst can see is collected: standard output and error of
every command (answers, ``--json``, budget lines, refusals), the files ``--out`` writes, ``veil dp
budget``, ``veil ledger status``/``history``/``verify``, and every row of the budget file and of
the shared ledger themselves (a budget file may be readable by those who query the data). They
must be identical once the noisy numbers are masked, together with what is fresh on every run:
times, the ledgers' random ids, the manifests' random nonces.

Hashes are masked too, and why that is sound is checked rather than assumed: a hash that an
analyst sees is either the SHA-256 of a noisy answer (and of what covers it: the manifest's seal)
or an entry of the log, and an entry's hash depends on the data only through the table's
*binding*, a MAC under the curator's key (:mod:`veil.ledger.binding`). The last test recomputes
the log of two neighbours with their bindings exchanged and finds every hash equal — so without
the key the hashes are as random as the binding, whatever the table.
"""

from __future__ import annotations

import json
import re
import sqlite3

import pandas as pd
import pytest
from typer.testing import CliRunner

from veil.cli import app

BASE = pd.DataFrame({"age": [20 + (i * 7) % 50 for i in range(60)], "sex": ["f", "m", "m"] * 20,
                     "zip": [f"130{i % 4}" for i in range(60)]})
NEIGHBOURS = {
    "changed": BASE.assign(age=BASE.age.where(BASE.index != 7, 88), sex=BASE.sex.where(BASE.index != 7, "f")),
    "removed": BASE.drop(index=11),
    "added": pd.concat([BASE, pd.DataFrame({"age": [99], "sex": ["m"], "zip": ["1309"]})], ignore_index=True),
}
OTHER = pd.DataFrame({"age": [30, 40], "sex": ["f", "m"], "zip": ["1301", "1302"]})

# The session: every command an analyst's curator might run, each in the world's folder.
SESSION = [
    ("dp", "count", "people.csv", "--epsilon", "0.1", "--budget-file", "budget.db", "--budget", "1", "--seed", "7"),
    ("dp", "count", "people.csv", "--epsilon", "0.1", "--budget-file", "budget.db", "--seed", "8", "--json"),
    ("dp", "sum", "people.csv", "--columns", "age", "--bounds", "0,100", "--epsilon", "0.1", "--budget-file",
     "budget.db", "--seed", "9", "--out", "sum", "--json"),
    ("dp", "mean", "people.csv", "--columns", "age", "--bounds", "0,100", "--epsilon", "0.1", "--budget-file",
     "budget.db", "--seed", "10"),
    ("dp", "quantile", "people.csv", "--columns", "age", "--bounds", "0,100", "--grid", "100", "--epsilon", "0.1",
     "--budget-file", "budget.db", "--seed", "11", "--json"),
    ("dp", "histogram", "people.csv", "--columns", "sex,zip", "--categories", "sex=f,m",
     "--categories", "zip=1300,1301,1302,1303", "--epsilon", "0.1", "--budget-file", "budget.db", "--seed", "12",
     "--out", "hist", "--json"),
    ("dp", "count", "people.csv", "--epsilon", "5", "--budget-file", "budget.db", "--seed", "13"),      # overspend
    ("dp", "count", "other.csv", "--epsilon", "0.1", "--budget-file", "budget.db", "--seed", "14"),    # other table
    ("dp", "budget", "budget.db"),
    ("dp", "budget", "budget.db", "--data", "people.csv", "--json"),
    ("dp", "budget", "budget.db", "--data", "other.csv"),
    ("ledger", "status", "--ledger", "budget.db"),
    ("ledger", "status", "--ledger", "budget.db", "--json"),
    ("ledger", "history", "--ledger", "budget.db", "--json"),
    ("ledger", "verify", "--ledger", "budget.db", "--json"),
    # a shared ledger: a named population, the table's own population, the gate
    ("ledger", "init", "--ledger", "shared.db", "--policy", "policy.yaml", "--json"),
    ("dp", "count", "people.csv", "--epsilon", "0.2", "--ledger", "shared.db", "--population", "survey", "--seed",
     "15", "--out", "q", "--json"),
    ("dp", "count", "people.csv", "--epsilon", "0.2", "--ledger", "shared.db", "--budget", "1", "--seed", "16",
     "--json"),
    ("dp", "count", "other.csv", "--epsilon", "0.2", "--ledger", "shared.db", "--population", "survey",
     "--seed", "17"),
    ("dp", "count", "people.csv", "--epsilon", "2", "--ledger", "shared.db", "--population", "survey", "--seed",
     "18"),
    ("publish", "q/manifest.json", "--population", "survey", "--ledger", "shared.db", "--json"),
    ("dp", "count", "people.csv", "--epsilon", "0.1", "--seed", "19", "--out", "free"),
    ("publish", "free/manifest.json", "--population", "survey", "--ledger", "shared.db"),
    ("ledger", "status", "--ledger", "shared.db", "--json"),
    ("ledger", "history", "--ledger", "shared.db"),
    ("ledger", "history", "--ledger", "shared.db", "--json"),
]
OUT_FOLDERS = ("sum", "hist", "q", "free")

# What differs between runs whatever the data (masked): times, random ids and nonces, and the hashes
# named below — each a hash of a noisy answer or of what covers it, or of a log entry (see the
# module notes and the last test). Any other hex string — a fingerprint of the table — is kept, and
# would differ.
_FRESH = [
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(\+00:00)?"), "<time>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"(head:? entry \d+ )[0-9a-f]{64}\b"), r"\1<hash>"),
    (re.compile(r"veil-table-1:[0-9a-f]{64}\b"), "<binding>"),
]
_HASHED = {"hash", "prev", "mac", "sha256", "file_sha256", "manifest_sha256", "tag", "nonce", "policy_sha256"}
_NOISY_KEYS = {"value", "low", "high"}


def _masked_text(text: str) -> str:
    for pattern, mask in _FRESH:
        text = pattern.sub(mask, text)
    lines = []
    for line in text.splitlines():
        # the noisy answer's lines: the numbers there are the noisy answers and their intervals
        if re.match(r"^(answer: |  q = |post-processing \(free\): consistent total|(f|m)\s+\d{4}\s)", line):
            line = re.sub(r"-?[\d,]+(\.\d+)?", "<n>", line)
        lines.append(line)
    return "\n".join(lines)


def _masked_json(value, key=None):
    """Noisy values replaced by their shape and type; what depends on them (hashes) masked."""
    if key in _NOISY_KEYS:
        return _shape(value)
    if key in _HASHED and isinstance(value, str):
        return "<hash>"
    if key == "postprocessing":
        return [re.sub(r"\d+", "<n>", p) for p in value]
    if key == "release" and isinstance(value, dict) and "bytes" in value:  # the size of the noisy answer's file
        return {**_masked_json(value), "bytes": "<n>"}
    if isinstance(value, dict):
        return {k: _masked_json(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked_json(v) for v in value]
    if isinstance(value, str):
        return _masked_text(value)
    return value


def _shape(value):
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


def _seen(text: str):
    text = text.strip()
    if text.startswith("{"):
        try:
            return _masked_json(json.loads(text))
        except ValueError:
            pass
    return _masked_text(text)


def _dump(database) -> dict:
    """Every row of every table of an SQLite ledger (releases' blobs hold the noisy answers: by size)."""
    with sqlite3.connect(database) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        out = {}
        for name in names:
            cursor = conn.execute(f'SELECT * FROM "{name}"')
            columns = [d[0] for d in cursor.description]
            out[name] = [[_cell(column, cell) for column, cell in zip(columns, row)] for row in cursor.fetchall()]
        return out


def _cell(column: str, cell):
    if isinstance(cell, bytes):
        return "<blob>"
    if isinstance(cell, str) and cell.startswith("{"):
        return _masked_json(json.loads(cell))
    return _masked_json(cell, column)


def replay(folder, table: pd.DataFrame, monkeypatch) -> list:
    folder.mkdir()
    table.to_csv(folder / "people.csv", index=False)
    OTHER.to_csv(folder / "other.csv", index=False)
    (folder / "policy.yaml").write_text("policy:\n  populations:\n    survey:\n      budget: {epsilon: 1.0}\n")
    monkeypatch.chdir(folder)
    seen = []
    for command in SESSION:
        result = CliRunner().invoke(app, list(command))
        seen.append((command, result.exit_code, _seen(result.stdout), _seen(result.stderr)))
    for name in OUT_FOLDERS:
        for file in sorted((folder / name).iterdir()):
            seen.append((name, file.name, _seen(file.read_text())))
    seen.append(("budget file", _dump(folder / "budget.db")))
    seen.append(("shared ledger", _dump(folder / "shared.db")))
    return seen


@pytest.fixture
def base(tmp_path, monkeypatch):
    return replay(tmp_path / "base", BASE, monkeypatch)


@pytest.mark.parametrize("neighbour", NEIGHBOURS)
def test_a_neighbouring_table_changes_nothing_the_analyst_sees_but_the_noisy_answers(base, tmp_path, monkeypatch,
                                                                                     neighbour):
    codes = [entry[1] for entry in base[:len(SESSION)]]
    # the session did what it should: answers, two refusals of the budget file, a refused overspend, …
    assert codes == [0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 2, 1, 0, 1, 0, 0, 0], codes
    other = replay(tmp_path / neighbour, NEIGHBOURS[neighbour], monkeypatch)
    for mine, theirs in zip(base, other):
        assert mine == theirs
    assert len(base) == len(other)


def test_the_log_hashes_depend_on_the_table_only_through_its_keyed_binding(tmp_path, monkeypatch):
    """A table and two neighbours, each replayed with a frozen clock and ledger id and with the
    binding replaced by one fixed value: every entry hash is the same. Where the hashes differ in
    real use, only the binding — a MAC under the curator's key — made them differ."""
    import veil.dp.accountant as accountant_module
    import veil.ledger.ledger as ledger_module
    from veil.ledger import binding as binding_module

    fixed = "veil-table-1:" + "0" * 64
    monkeypatch.setattr(binding_module, "binding", lambda key, fingerprint: fixed)
    monkeypatch.setattr(ledger_module, "binding", lambda key, fingerprint: fixed)
    monkeypatch.setattr("uuid.uuid4", lambda: "00000000-0000-0000-0000-000000000000")
    hashes = []
    for name, table in (("base", BASE), ("changed", NEIGHBOURS["changed"]), ("removed", NEIGHBOURS["removed"]),
                        ("added", NEIGHBOURS["added"])):
        clock = iter(f"2026-01-01T00:00:{s:02d}.000+00:00" for s in range(60))
        monkeypatch.setattr(ledger_module, "_now", lambda: next(clock))
        monkeypatch.setattr(accountant_module, "_now", lambda: "2026-01-01T00:00:00+00:00")
        folder = tmp_path / name
        folder.mkdir()
        table.to_csv(folder / "people.csv", index=False)
        monkeypatch.chdir(folder)
        for command in SESSION[:2]:
            assert CliRunner().invoke(app, list(command)).exit_code == 0
        history = json.loads(CliRunner().invoke(app, ["ledger", "history", "--ledger", "budget.db", "--json"]).stdout)
        hashes.append([e["hash"] for e in history["entries"]])
    assert len(hashes[0]) == 5 and hashes[0] == hashes[1] == hashes[2] == hashes[3]
