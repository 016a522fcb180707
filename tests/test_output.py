"""The writer of everything veil publishes (veil.output): sets of files that appear complete or not at
all, even under SIGKILL at any step; outputs that never replace an input; every operating-system
failure as one sentence; manifests that name and hash their release.

The crash tests fork a child that writes a set and kills itself with SIGKILL just before its n-th
file-system call (open, write to disk, rename, unlink), for every n until the child finishes;
after each kill a reader must see the complete old set or the complete new one, and the next
touch of the folder must leave no temporary file.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import stat

import pytest

from helpers import one_sentence_error
from veil.errors import DataError, ParameterError
from veil.output import OutputSet, check_targets, create_file, load_manifest, same_file, settle, write_files
from veil.output.reading import _verified

PAIR_KEY = "release"


def leftovers(*folders) -> list[str]:
    return sorted(name for folder in folders for name in os.listdir(folder) if name.startswith(".veil-"))


def write_pair(release, manifest, tag: str) -> None:
    with OutputSet([release, manifest]) as out:
        out.put(release, f"a;b\n{tag};1\n")
        out.put_manifest(manifest, {"tag": tag}, describes={PAIR_KEY: release})
        out.commit()


# --------------------------------------------------------------------------- writing

def test_a_set_is_written_exactly_and_leaves_nothing_else(tmp_path):
    files = {tmp_path / "a.csv": "x;y\r\n1;é\r\n", tmp_path / "b.png": b"\x89PNG\r\n\x1a\n\x00"}
    assert write_files(files) == list(files)
    assert (tmp_path / "a.csv").read_bytes() == "x;y\r\n1;é\r\n".encode()
    assert (tmp_path / "b.png").read_bytes() == b"\x89PNG\r\n\x1a\n\x00"
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "b.png"]


def test_a_file_put_in_pieces_is_written_and_hashed_whole(tmp_path):
    pieces = ["a;b\n", b"1;\xc3\xa9\n", memoryview(b"2;x\n")]
    with OutputSet([tmp_path / "r.csv"]) as out:
        described = out.put(tmp_path / "r.csv", iter(pieces))
        out.commit()
    data = "a;b\n1;é\n2;x\n".encode()
    assert (tmp_path / "r.csv").read_bytes() == data
    assert described == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_pieces_that_fail_midway_leave_nothing(tmp_path):
    def pieces():
        yield "a;b\n"
        raise RuntimeError("the release could not be made")

    with pytest.raises(RuntimeError):
        write_files({tmp_path / "r.csv": pieces()})
    assert os.listdir(tmp_path) == []


def test_create_file_never_replaces_and_one_of_racing_creators_wins(tmp_path):
    key = tmp_path / "private" / "key"
    assert create_file(key, "first\n", mode=0o600, folder_mode=0o700)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert not create_file(key, "second\n", mode=0o600)
    assert key.read_text() == "first\n" and os.listdir(key.parent) == ["key"]
    pids = []
    for i in range(8):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os._exit(0 if create_file(tmp_path / "raced", f"{i}\n") else 1)
        pids.append(pid)
    won = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 for pid in pids]
    assert sum(won) == 1 and (tmp_path / "raced").read_text() == f"{won.index(True)}\n"
    one_sentence_error(DataError, lambda: create_file(tmp_path / "missing" / "key", "x"), "cannot create",
                       "its folder no longer exists")


def test_a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path):
    old = tmp_path / "old.txt"
    old.write_text("old")
    old.chmod(0o640)
    old_mask = os.umask(0o027)
    try:
        write_files({old: "new", tmp_path / "new.txt": "new"})
    finally:
        os.umask(old_mask)
    assert stat.S_IMODE(old.stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_missing_folders_are_made_and_removed_again_when_nothing_is_written(tmp_path, monkeypatch):
    deep = tmp_path / "x" / "y"
    write_files({deep / "a.txt": "1"}, make_folders=True)
    assert (deep / "a.txt").read_text() == "1"
    monkeypatch.setattr(os, "fsync", _failing(errno.ENOSPC))
    with pytest.raises(DataError):
        write_files({tmp_path / "p" / "q" / "a.txt": "1"}, make_folders=True)
    assert sorted(os.listdir(tmp_path)) == ["x"]


def test_a_failed_put_removes_what_was_put_before(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("old a")
    real_open = os.open

    def refuse_b(path, *args, **kwargs):
        if ".b.txt." in str(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse_b)
    msg = one_sentence_error(DataError, lambda: write_files({tmp_path / "a.txt": "new a", tmp_path / "b.txt": "b"}),
                             "b.txt", "permission denied", "nothing was written")
    assert msg.startswith("cannot write")
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "old a"


def _failing(code: int):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))
    return fail


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "the disk is full"), (errno.EDQUOT, "quota"),
                                         (errno.EROFS, "read-only"), (errno.EIO, "input/output error")])
def test_every_os_error_is_one_sentence_and_nothing_is_left(tmp_path, monkeypatch, code, words):
    (tmp_path / "keep.csv").write_text("old")
    monkeypatch.setattr(os, "fsync", _failing(code))
    one_sentence_error(DataError, lambda: write_files({tmp_path / "keep.csv": "new", tmp_path / "m.json": "{}"}),
                       "keep.csv", words)
    assert sorted(os.listdir(tmp_path)) == ["keep.csv"]
    assert (tmp_path / "keep.csv").read_text() == "old"


def test_a_failing_rename_publishes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "replace", _failing(errno.EACCES))
    one_sentence_error(DataError, lambda: write_files({tmp_path / "a": "1", tmp_path / "b": "2"}),
                       "permission denied")
    assert os.listdir(tmp_path) == []


def test_an_unwritable_or_read_only_folder_is_refused_before_any_work(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    one_sentence_error(DataError, lambda: check_targets([tmp_path / "a.csv"]), "cannot write into the folder",
                       "permission denied")

    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(os, "statvfs", lambda path: ReadOnly())
    one_sentence_error(DataError, lambda: OutputSet([tmp_path / "a.csv"]), "read-only")
    one_sentence_error(DataError, lambda: check_targets([tmp_path / "new" / "a.csv"], make_folders=True),
                       "cannot create the folder", "read-only")


def test_targets_that_cannot_be_written_are_refused(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "file").write_text("x")
    one_sentence_error(DataError, lambda: check_targets([tmp_path / "sub"]), "is a folder")
    one_sentence_error(DataError, lambda: check_targets([tmp_path / "nope" / "a"]), "does not exist")
    one_sentence_error(DataError, lambda: check_targets([tmp_path / "file" / "a"], make_folders=True),
                       "is a file, not a folder")


# --------------------------------------------------------------------------- inputs are never replaced

def test_an_input_is_refused_however_it_is_named(tmp_path, monkeypatch):
    data = tmp_path / "people.csv"
    data.write_text("a\n1\n")
    (tmp_path / "link.csv").symlink_to(data)
    os.link(data, tmp_path / "hard.csv")
    monkeypatch.chdir(tmp_path)
    for name in ("people.csv", "./people.csv", str(data), "sub/../people.csv", "link.csv", "hard.csv"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        one_sentence_error(ParameterError, lambda: OutputSet([name], reads=[data]), "is an input of this run")
    assert data.read_text() == "a\n1\n"
    assert same_file("hard.csv", data) and not same_file("other.csv", data)


def test_two_outputs_on_one_file_are_refused(tmp_path):
    one_sentence_error(ParameterError, lambda: OutputSet([tmp_path / "a", tmp_path / "." / "a"]), "two outputs")


# --------------------------------------------------------------------------- manifests

def test_the_manifest_names_and_hashes_its_release_and_is_verified(tmp_path):
    release, manifest = tmp_path / "r.csv", tmp_path / "m.json"
    write_pair(release, manifest, "v1")
    doc = json.loads(manifest.read_text())
    assert doc[PAIR_KEY] == {"file": "r.csv", "sha256": hashlib.sha256(release.read_bytes()).hexdigest(),
                             "bytes": release.stat().st_size}
    assert load_manifest(manifest, release)["tag"] == "v1"
    assert load_manifest(manifest)["tag"] == "v1"


def test_a_release_in_another_folder_is_named_relative_to_the_manifest(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    write_pair(tmp_path / "a" / "r.csv", tmp_path / "b" / "m.json", "v1")
    assert json.loads((tmp_path / "b" / "m.json").read_text())[PAIR_KEY]["file"] == "../a/r.csv"
    assert load_manifest(tmp_path / "b" / "m.json", tmp_path / "a" / "r.csv")["tag"] == "v1"
    assert leftovers(tmp_path / "a", tmp_path / "b") == []


def test_an_unmatched_pair_is_rejected_in_one_sentence(tmp_path):
    release, manifest = tmp_path / "r.csv", tmp_path / "m.json"
    write_pair(release, manifest, "v1")
    release.write_text("a;b\nchanged;1\n")
    one_sentence_error(DataError, lambda: load_manifest(manifest), "does not match", "not published together")
    other = tmp_path / "other.csv"
    other.write_text("x")
    one_sentence_error(DataError, lambda: load_manifest(manifest, other), "describes", "not")
    release.unlink()
    one_sentence_error(DataError, lambda: load_manifest(manifest), "does not exist")
    manifest.write_text('{"tag": "hand-made"}')
    one_sentence_error(DataError, lambda: load_manifest(manifest), "does not name its release file")
    manifest.write_text("not json")
    one_sentence_error(DataError, lambda: load_manifest(manifest), "not a veil manifest")
    one_sentence_error(DataError, lambda: load_manifest(tmp_path / "none.json"), "does not exist")


# --------------------------------------------------------------------------- SIGKILL at every step

STEPS = ("open", "fsync", "replace", "unlink", "rename")


def run_child_killed_at(step: int, work) -> bool:
    """Fork a child that runs ``work`` and SIGKILLs itself just before its ``step``-th file-system
    call; returns whether it finished (``step`` was beyond its last call)."""
    pid = os.fork()
    if pid == 0:  # the child
        try:
            count = [0]
            for name in STEPS:
                real = getattr(os, name)

                def counted(*args, _real=real, **kwargs):
                    count[0] += 1
                    if count[0] == step:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return _real(*args, **kwargs)

                setattr(os, name, counted)
            work()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return False
    assert os.WEXITSTATUS(status) == 0
    return True


def _state(release, manifest) -> str:
    """``v1`` or ``v2``: which complete pair a reader sees (it settles the folders first)."""
    doc = load_manifest(manifest, release)
    assert release.read_text() == f"a;b\n{doc['tag']};1\n"
    return doc["tag"]


@pytest.mark.parametrize("layout", ["one folder", "two folders"])
def test_a_pair_killed_at_any_step_is_old_or_new_never_mixed(tmp_path, layout):
    one, two = tmp_path / "one", tmp_path / ("two" if layout == "two folders" else "one")
    one.mkdir()
    two.mkdir(exist_ok=True)
    release, manifest = one / "release.csv", two / "manifest.json"
    seen, step = set(), 0
    while True:
        step += 1
        write_pair(release, manifest, "v1")
        finished = run_child_killed_at(step, lambda: write_pair(release, manifest, "v2"))
        if step % 2:  # the next writer in the folder settles it, as any reader does
            OutputSet([one / "unrelated.txt", two / "unrelated.json"])
            assert leftovers(one, two) == [], f"killed at step {step}"
        seen.add(_state(release, manifest))
        assert leftovers(one, two) == [], f"killed at step {step}"
        if finished:
            break
    assert seen == {"v1", "v2"} and step > 8


def test_three_files_killed_at_any_step_appear_together_or_not_at_all(tmp_path):
    names = [tmp_path / n for n in ("t.csv", "t.md", "t.png")]
    step = 0
    while True:
        step += 1
        write_files({p: "old" for p in names})
        finished = run_child_killed_at(step, lambda: write_files({p: "new" for p in names}))
        settle(tmp_path)
        contents = {p.read_text() for p in names}
        assert len(contents) == 1, f"mixed set after a kill at step {step}"
        assert leftovers(tmp_path) == []
        if finished:
            break


def test_a_reader_that_does_not_settle_rejects_the_half_renamed_pair(tmp_path):
    release, manifest = tmp_path / "release.csv", tmp_path / "manifest.json"
    write_pair(release, manifest, "v1")

    def killed_after_renaming_the_release():
        real = os.replace

        def replace(source, target):
            real(source, target)
            if str(target).endswith("release.csv"):
                os.kill(os.getpid(), signal.SIGKILL)

        os.replace = replace
        write_pair(release, manifest, "v2")

    assert not run_child_killed_at(0, killed_after_renaming_the_release)
    # The new release sits beside the old manifest until someone settles the folder.
    assert release.read_text() == "a;b\nv2;1\n" and json.loads(manifest.read_text())["tag"] == "v1"
    one_sentence_error(DataError, lambda: _verified(manifest, None, PAIR_KEY), "does not match")
    assert any(n.endswith(".commit") for n in leftovers(tmp_path))
    assert _state(release, manifest) == "v2"  # settling completes the committed set
    assert leftovers(tmp_path) == []


def test_settling_the_other_folder_of_a_committed_set_completes_the_whole_set(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    release, manifest = one / "release.csv", two / "manifest.json"
    write_pair(release, manifest, "v1")

    def killed_at_the_commit():
        real = os.replace

        def replace(source, target):
            real(source, target)
            if str(target).endswith(".commit"):
                os.kill(os.getpid(), signal.SIGKILL)

        os.replace = replace
        write_pair(release, manifest, "v2")

    assert not run_child_killed_at(0, killed_at_the_commit)
    assert sorted(n.rsplit(".", 1)[1] for n in leftovers(one)) == ["link", "tmp"]
    settle(one)  # only the release's folder is touched: the record in the other is found through the link
    assert leftovers(one, two) == []
    assert _verified(manifest, release, PAIR_KEY)["tag"] == "v2"


def test_leftovers_of_a_recycled_pid_are_removed_and_a_live_writers_are_kept(tmp_path):
    recycled = tmp_path / f".veil-{os.getpid()}-1-abcd.0.release.csv.tmp"  # our pid, another start time
    recycled.write_text("half a release")
    with OutputSet([tmp_path / "a.csv"]) as live:
        live.put(tmp_path / "a.csv", "mine")
        ours = leftovers(tmp_path)
        settle(tmp_path)
        assert not recycled.exists()
        assert leftovers(tmp_path) == [n for n in ours if n != recycled.name]
        live.commit()
    assert leftovers(tmp_path) == []


# --------------------------------------------------------------------------- concurrency

def test_concurrent_writers_leave_one_complete_pair_and_readers_always_see_one(tmp_path):
    release, manifest = tmp_path / "release.csv", tmp_path / "manifest.json"
    write_pair(release, manifest, "start")
    children = []
    for child in range(6):
        pid = os.fork()
        if pid == 0:
            try:
                for i in range(8):
                    write_pair(release, manifest, f"c{child}-{i}")
            finally:
                os._exit(0)
        children.append(pid)
    for _ in range(20):  # read while they write: always one complete pair (the hash is checked under the lock)
        assert load_manifest(manifest, release)["tag"]
    for pid in children:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert _state(release, manifest).endswith("-7")
    assert leftovers(tmp_path) == []
