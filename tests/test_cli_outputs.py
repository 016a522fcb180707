"""What the commands write: never over an input, one sentence when a folder cannot be written or the
disk is full (nothing left behind), and a release with its manifest that survive SIGKILL and
concurrent runs as a complete pair.

The tests run as root, for whom permissions do not block writes, so a denied folder is simulated
by ``os.access`` and a failing write by ``os.open``/``os.fsync`` raising the error the kernel
would raise.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veil.cli import app
from veil.manifests import load_private
from veil.output import _verified, load_manifest

runner = CliRunner()
SRC = Path(__file__).resolve().parents[1] / "src"


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def assert_one_sentence(result, *words) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A table of 600 people, an age hierarchy file, configurations for k = 3 and k = 4, two
    releases and the targets of an intersection attack."""
    rows = ["sex,age,zip,disease"]
    for i in range(600):
        rows.append(f"{'mf'[i % 2]},{20 + i % 40},{('13053', '13068', '14853')[i % 3]},"
                    f"{('flu', 'cold', 'cancer', 'hiv')[i % 4]}")
    (tmp_path / "people.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "age.csv").write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 60)),
                                      encoding="utf-8")
    for k in (3, 4):
        (tmp_path / f"k{k}.yaml").write_text(
            "data: people.csv\n"
            "columns: {quasi_identifiers: [sex, age, zip], sensitive: [disease]}\n"
            "hierarchies:\n  sex: {flat: {}}\n  age: {file: age.csv}\n  zip: {masking: {}}\n"
            f"models: [{{k_anonymity: {{k: {k}}}}}]\nsuppression_limit: 0.02\n", encoding="utf-8")
    (tmp_path / "a.csv").write_text("zip,age,disease\n130**,[20-29],flu\n130**,[20-29],cancer\n"
                                    "148**,[30-39],flu\n148**,[30-39],hiv\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("zip,age,disease\n1305*,[20-24],flu\n1305*,[20-24],hiv\n"
                                    "148**,[30-39],cold\n148**,[30-39],hiv\n", encoding="utf-8")
    (tmp_path / "targets.csv").write_text("name,zip,age\nAnn,13053,22\nBob,14853,35\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    return tmp_path


def anonymize(p: Path, out="out/r.csv", manifest="out/m.json", k=3):
    return invoke("anonymize", "--config", p / f"k{k}.yaml", "--out", p / out, "--manifest", p / manifest)


def intersection(p: Path, out):
    return invoke("attack", "intersection", p / "a.csv", p / "b.csv", "--targets", p / "targets.csv",
                  "--qi", "zip,age", "--sensitive", "disease", "--out", out)


# --------------------------------------------------------------------------- inputs are never replaced

@pytest.mark.parametrize("option, target", [
    ("--manifest", "age.csv"), ("--out", "age.csv"), ("--manifest", "k3.yaml"), ("--out", "people.csv"),
    ("--out", "./out/../people.csv")])
def test_anonymize_refuses_to_replace_any_file_it_reads(project, option, target):
    before = {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()}
    args = {"--out": project / "out" / "r.csv", "--manifest": project / "out" / "m.json"}
    args[option] = project / target
    result = invoke("anonymize", "--config", project / "k3.yaml", "--out", args["--out"],
                    "--manifest", args["--manifest"])
    assert_one_sentence(result, "is an input of this run")
    assert {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()} == before
    assert listing(project / "out") == []


def test_anonymize_refuses_a_hierarchy_reached_through_a_symbolic_link(project):
    (project / "out" / "h.json").symlink_to(project / "age.csv")
    assert_one_sentence(anonymize(project, manifest="out/h.json"), "is an input of this run")
    assert (project / "age.csv").read_text().startswith("20;20-29;*")


def test_init_never_replaces_its_table_even_with_force(project, monkeypatch):
    before = (project / "people.csv").read_bytes()
    monkeypatch.chdir(project)
    for out in ("people.csv", "./people.csv", str(project / "people.csv")):
        assert_one_sentence(invoke("init", "people.csv", "--out", out, "--force"), "is an input of this run")
    assert (project / "people.csv").read_bytes() == before


def test_intersection_refuses_to_replace_a_release_or_the_targets(project):
    for name in ("a.csv", "targets.csv"):
        assert_one_sentence(intersection(project, project / name), "is an input of this run")


# --------------------------------------------------------------------------- folders that cannot be written

def deny_writes_into(monkeypatch, folder: Path) -> None:
    """``os.access`` says the folder is not writable, as it would for an ordinary user."""
    real_access, denied = os.access, os.path.realpath(folder)

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and os.path.realpath(path) == denied:
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


@pytest.mark.parametrize("command", ["anonymize", "init", "demo", "intersection", "composition", "tradeoff"])
def test_an_unwritable_output_folder_is_one_sentence_before_any_work(project, monkeypatch, command):
    folder = project / "out"
    deny_writes_into(monkeypatch, folder)
    result = {
        "anonymize": lambda: anonymize(project),
        "init": lambda: invoke("init", project / "people.csv", "--out", folder / "p.yaml"),
        "demo": lambda: invoke("demo", "--out", folder / "demo"),
        "intersection": lambda: intersection(project, folder / "per-target.csv"),
        "composition": lambda: invoke("experiment", "composition", "--out", folder / "c"),
        "tradeoff": lambda: invoke("experiment", "tradeoff", "--out", folder / "t"),
    }[command]()
    assert_one_sentence(result, "permission denied", str(folder))
    assert listing(folder) == []


def fail_on_temporary_files(monkeypatch, code: int) -> None:
    """Opening one of the writer's temporary files fails with ``code`` (EACCES, ENOSPC, EROFS)."""
    real_open = os.open

    def refuse(path, *args, **kwargs):
        if os.path.basename(str(path)).startswith(".veil-"):
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)


@pytest.mark.parametrize("code, words", [(errno.EACCES, "permission denied"), (errno.ENOSPC, "the disk is full"),
                                         (errno.EROFS, "read-only")])
@pytest.mark.parametrize("command", ["anonymize", "init", "intersection"])
def test_a_failing_write_is_one_sentence_and_leaves_nothing(project, monkeypatch, command, code, words):
    folder = project / "out"
    (folder / "r.csv").write_text("an earlier release")
    fail_on_temporary_files(monkeypatch, code)
    result = {
        "anonymize": lambda: anonymize(project),
        "init": lambda: invoke("init", project / "people.csv", "--out", folder / "p.yaml"),
        "intersection": lambda: intersection(project, folder / "per-target.csv"),
    }[command]()
    assert_one_sentence(result, words, "nothing was written")
    assert listing(folder) == ["r.csv"] and (folder / "r.csv").read_text() == "an earlier release"


def test_a_disk_that_fills_while_the_release_is_written_leaves_the_old_pair(project, monkeypatch):
    assert anonymize(project).exit_code == 0
    before = {name: (project / "out" / name).read_bytes() for name in ("r.csv", "m.json", "m.private.json")}
    real_fsync, calls = os.fsync, []

    def fills_on_the_manifest(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fills_on_the_manifest)
    assert_one_sentence(anonymize(project, k=4), "the disk is full")
    assert {name: (project / "out" / name).read_bytes() for name in ("r.csv", "m.json", "m.private.json")} == before
    assert listing(project / "out") == ["m.json", "m.private.json", "r.csv"]


# --------------------------------------------------------------------------- the published pair

def test_the_manifest_names_and_hashes_the_release(project):
    result = invoke("anonymize", "--config", project / "k3.yaml", "--out", project / "out" / "r.csv",
                    "--manifest", project / "out" / "m.json", "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed == load_manifest(project / "out" / "m.json", project / "out" / "r.csv")
    assert printed["release"]["file"] == "r.csv" and len(printed["release"]["sha256"]) == 64


def test_without_a_manifest_file_the_printed_manifest_still_names_the_release(project):
    result = invoke("anonymize", "--config", project / "k3.yaml", "--out", project / "out" / "r.csv", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["release"]["bytes"] == (project / "out" / "r.csv").stat().st_size


CRASHING_VEIL = """
import os, signal, sys
import veil.output

class KilledAt:
    '''The os module as the writer sees it, SIGKILLing the process before its n-th file call.'''
    def __init__(self, step):
        self.step, self.calls = step, 0
    def __getattr__(self, name):
        real = getattr(os, name)
        if name not in ("open", "fsync", "replace", "unlink"):
            return real
        def counted(*args, **kwargs):
            self.calls += 1
            if self.calls == self.step:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return counted

veil.output.os = KilledAt(int(sys.argv[1]))
from veil.cli import main
sys.argv = ["veil", *sys.argv[2:]]
main()
"""


def veil_process(project: Path, k: int, kill_at: int = 0) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-c", CRASHING_VEIL, str(kill_at), "anonymize", "--config",
                             str(project / f"k{k}.yaml"), "--out", str(project / "out" / "r.csv"), "--manifest",
                             str(project / "out" / "m.json"), "--json"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def k_of(doc: dict) -> int:
    return doc["config"]["models"][0]["k_anonymity"]["k"]


def test_veil_killed_while_publishing_leaves_the_old_or_the_new_pair(project):
    """Real ``veil anonymize`` processes SIGKILLed at the writer's file calls: 12 (committed,
    nothing renamed), 15 (the release renamed, not the private file nor the manifest), 16 (the
    manifest alone not renamed), 19 (all renamed, the record left) and 3 (a temporary file written,
    nothing committed). In a folder without leftovers the writer's 19 calls are: lock the folder
    (1), three temporary files (2-7), the record (8-13), the renames (14-16), syncing the folder
    and removing the record (17-19)."""
    out = project / "out"
    assert anonymize(project, k=3).exit_code == 0
    for kill_at, k, published in ((12, 4, True), (15, 3, True), (16, 4, True), (19, 3, True), (3, 4, False)):
        before = k_of(_verified(out / "m.json", None, "release"))
        proc = veil_process(project, k, kill_at)
        proc.wait(timeout=300)
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
        if published:
            manifest = load_manifest(out / "m.json", out / "r.csv")
            assert k_of(manifest) == k, f"killed at {kill_at}"
            assert load_private(out / "m.json", manifest) is not None  # the private file of the same release
            assert listing(out) == ["m.json", "m.private.json", "r.csv"]
    # Killed before the commit: the old pair stands, beside a temporary file that the next run
    # into the folder removes.
    assert k_of(_verified(out / "m.json", None, "release")) == before
    assert any(name.startswith(".veil-") for name in listing(out))
    assert anonymize(project, k=4).exit_code == 0
    assert listing(out) == ["m.json", "m.private.json", "r.csv"]


def test_two_runs_into_one_folder_leave_one_complete_pair(project):
    procs = [veil_process(project, k) for k in (3, 4)]
    for proc in procs:
        assert proc.wait(timeout=300) == 0, proc.stderr.read().decode()
    manifest = load_manifest(project / "out" / "m.json", project / "out" / "r.csv")
    assert k_of(manifest) in (3, 4) and load_private(project / "out" / "m.json", manifest) is not None
    assert listing(project / "out") == ["m.json", "m.private.json", "r.csv"]
