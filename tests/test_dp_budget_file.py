"""The budget file: charges saved before noise, a seal that catches hand edits, one sentence for
every file that cannot be trusted, and the dataset id bound to the data's parsed content."""

from __future__ import annotations

import fcntl
import json
import os
from fractions import Fraction

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers import one_sentence_error
from veil.data.dataset import Dataset
from veil.dp import Accountant, Budget, BudgetExceededError, BudgetFileError, NoiseSource, TemporalAccountant
from veil.dp.accountant import ExponentialDiscount
from veil.dp.budget_file import BudgetFile, key_path
from veil.dp.fingerprint import dataset_id
from veil.dp.queries import dp_count
from veil.errors import ParameterError

DATASET = "veil-data-1:test"


class CountingNoise(NoiseSource):
    """A seeded source that counts its draws, to show that a charge not saved draws nothing."""

    def __init__(self):
        super().__init__(np.random.default_rng(0), _secure=False)
        self.draws = 0

    def discrete_laplace(self, values, scale):
        self.draws += 1
        return super().discrete_laplace(values, scale)


@pytest.fixture
def budget(tmp_path):
    """A budget file of ε = 1 with one charge of 0.1 on it."""
    bf = BudgetFile(tmp_path / "b.json")
    with bf.open(DATASET, create=Budget(1.0)) as acc:
        acc.charge(0.1, label="earlier")
    return bf


def sealed(bf: BudgetFile) -> dict:
    return json.loads(bf.path.read_text(encoding="utf-8"))


def rewrite(bf: BudgetFile, doc: dict) -> None:
    bf.path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


# --------------------------------------------------------------------------- charging through the file

def test_every_charge_is_saved_before_it_returns(budget):
    with budget.open(DATASET) as acc:
        acc.charge(0.2, label="second")
        assert [c["label"] for c in sealed(budget)["charges"]] == ["earlier", "second"]  # already on disk
        acc.postprocess("bar chart")
        assert sealed(budget)["charges"][-1]["kind"] == "postprocess"
    again = budget.read(DATASET)
    assert [c.label for c in again.charges] == ["earlier", "second", "bar chart"]
    assert again.spent().epsilon == Fraction(3, 10) and budget.lock_path.exists()


def test_nothing_is_written_until_the_first_charge(tmp_path):
    bf = BudgetFile(tmp_path / "new.json")
    with bf.open(DATASET, create=Budget(1.0)):
        pass
    assert not bf.path.exists()
    with bf.open(DATASET, create=Budget(1.0)) as acc, pytest.raises(BudgetExceededError):
        acc.charge(2.0, label="too much")
    assert not bf.path.exists()
    one_sentence_error(BudgetFileError, lambda: bf.read(DATASET), "does not exist")
    with pytest.raises(BudgetFileError, match="give the budget"), bf.open(DATASET):
        pass


def test_a_charge_that_cannot_be_saved_is_not_made_and_draws_no_noise(budget, monkeypatch):
    before = budget.path.read_bytes()

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("veil.dp.budget_file.os.replace", full_disk)
    noise = CountingNoise()
    with budget.open(DATASET) as acc:
        one_sentence_error(BudgetFileError, lambda: dp_count(pd.DataFrame({"a": [1, 2]}), 0.3, accountant=acc,
                                                             noise=noise), "cannot save", "not made")
        assert noise.draws == 0 and [c.label for c in acc.charges] == ["earlier"]
    assert budget.path.read_bytes() == before
    assert not list(budget.path.parent.glob(".veil-*.b.json.tmp"))


def test_an_accountant_cannot_be_charged_after_its_block(budget):
    with budget.open(DATASET) as acc:
        pass
    one_sentence_error(ParameterError, lambda: acc.charge(0.1, label="late"), "open the budget file again")
    assert len(budget.read(DATASET).charges) == 1


def test_the_budget_and_dataset_must_match(budget, tmp_path):
    with pytest.raises(ParameterError, match="already holds the budget"), budget.open(DATASET, create=Budget(2.0)):
        pass
    with budget.open(DATASET, create=Budget(1.0)) as acc:  # the same budget: fine
        assert acc.spent().epsilon == Fraction(1, 10)
    one_sentence_error(BudgetFileError, lambda: budget.read("veil-data-1:other"), "belongs to dataset")
    assert budget.read().dataset_id == DATASET  # without data: the file's own dataset
    temporal = TemporalAccountant(Budget(1.0), dataset_id=DATASET, discount=ExponentialDiscount(0.5))
    with BudgetFile(tmp_path / "t.json").open(DATASET, create=temporal) as acc:
        acc.charge(0.6, label="day 0", time=0)
    with BudgetFile(tmp_path / "t.json").open(DATASET) as acc:
        acc.charge(0.7, label="day 1", time=1)  # 0.6/2 + 0.7 = 1
        assert isinstance(acc, TemporalAccountant)
    with pytest.raises(ParameterError), budget.open(DATASET, create="1.0"):
        pass


def test_places_where_no_budget_can_be_kept(tmp_path):
    for path, words in ((tmp_path, "folder"), (tmp_path / "missing" / "b.json", "does not exist")):
        bf = BudgetFile(path)
        one_sentence_error(BudgetFileError, bf.check_place, words)
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    one_sentence_error(BudgetFileError, lambda: BudgetFile(tmp_path / "bin.json").read(), "UTF-8")


def test_a_held_lock_makes_others_wait_then_give_up_in_one_sentence(budget):
    fd = os.open(budget.lock_path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another open file description: the same as another process
    try:
        waiting = BudgetFile(budget.path, timeout=0.2)

        def charge():
            with waiting.open(DATASET) as acc:
                acc.charge(0.1, label="blocked")

        one_sentence_error(BudgetFileError, charge, "locked by another process")
    finally:
        os.close(fd)
    with budget.open(DATASET) as acc:
        acc.charge(0.1, label="after")


def test_temporaries_of_a_killed_save_are_removed(budget):
    # the writer's temporary of a save killed half-way (this pid with another start time: a process that ended)
    stale = budget.path.parent / f".veil-{os.getpid()}-1-dead.0.b.json.tmp"
    stale.write_text("half a budget")
    other = budget.path.parent / ".b.json.bak.k1ll3d_x.tmp"  # another budget file's: not ours to remove
    other.write_text("x")
    with budget.open(DATASET):
        pass
    assert not stale.exists() and other.exists()


# --------------------------------------------------------------------------- the seal

@pytest.mark.parametrize("edit, words", [
    (lambda d: d.update(charges=[]), "changed after veil sealed it"),                      # charges deleted
    (lambda d: d["budget"].update(epsilon="100"), "changed after veil sealed it"),         # budget raised
    (lambda d: d["charges"][0].update(kind="postprocess", epsilon="0"), "changed after"),  # made free
    (lambda d: d["charges"][0].update(epsilon="0.01"), "changed after veil sealed it"),
    (lambda d: d.update(dataset_id="veil-data-1:elsewhere"), "changed after veil sealed it"),
    (lambda d: d.pop("seal"), "has no seal"),
    (lambda d: d.update(seal="trust me"), "malformed seal"),
    (lambda d: d["seal"].update(mac="0" * 64), "changed after veil sealed it"),
])
def test_hand_edits_are_caught_in_one_sentence(budget, edit, words):
    doc = sealed(budget)
    edit(doc)
    rewrite(budget, doc)
    one_sentence_error(BudgetFileError, lambda: budget.read(), words)
    with pytest.raises(BudgetFileError), budget.open(DATASET):
        pass
    assert sealed(budget) == doc  # refused, never reset


def test_reformatting_keeps_the_seal(budget):
    doc = sealed(budget)
    budget.path.write_text(json.dumps(doc, indent=None, sort_keys=True), encoding="utf-8")
    assert budget.read(DATASET).spent().epsilon == Fraction(1, 10)


def test_another_key_is_told_apart_from_an_edit(budget, tmp_path, monkeypatch):
    monkeypatch.setenv("VEIL_KEY_FILE", str(tmp_path / "other.key"))
    one_sentence_error(BudgetFileError, lambda: budget.read(), "was sealed with key", "there is none")
    with BudgetFile(tmp_path / "c.json").open(DATASET, create=Budget(1.0)) as acc:
        acc.charge(0.1, label="makes the other key")
    one_sentence_error(BudgetFileError, lambda: budget.read(), "VEIL_KEY_FILE", "that one is")


def test_the_key_is_made_once_private_and_checked(tmp_path, monkeypatch):
    path = tmp_path / "config" / "veil" / "budget.key"
    monkeypatch.setenv("VEIL_KEY_FILE", str(path))
    assert key_path() == path and not path.exists()
    with BudgetFile(tmp_path / "b.json").open(DATASET, create=Budget(1.0)) as acc:
        acc.charge(0.1, label="q")
    assert oct(path.stat().st_mode & 0o777) == "0o600" and len(path.read_text().strip()) == 64
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    key = path.read_bytes()
    with BudgetFile(tmp_path / "b.json").open(DATASET) as acc:
        acc.charge(0.1, label="q2")
    assert path.read_bytes() == key  # made once
    path.write_text("not a key\n")
    one_sentence_error(BudgetFileError, lambda: BudgetFile(tmp_path / "b.json").read(), "does not hold a veil key")


def test_default_key_place_is_the_config_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("VEIL_KEY_FILE")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert key_path() == tmp_path / "xdg" / "veil" / "budget.key"


def test_files_of_an_older_veil_are_refused_with_how_to_migrate(budget):
    old = Accountant(Budget(1.0), dataset_id="sha256:" + "ab" * 32)
    old.charge(0.25, label="count")
    budget.path.write_text(old.to_json().replace('"version": 2', '"version": 1'), encoding="utf-8")
    one_sentence_error(BudgetFileError, lambda: budget.read(), "older veil", "new budget file",
                       "ε = 0.75")


# --------------------------------------------------------------------------- the dataset id

def test_dataset_id_follows_the_content_as_parsed(tmp_path):
    rows = "age;sex;zip\n34;m;81667\n45;f;81675\n66;m;81925\n"
    variants = {
        "plain.csv": rows.encode(),
        "crlf.csv": rows.replace("\n", "\r\n").encode(),
        "no_final_newline.csv": rows.rstrip("\n").encode(),
        "bom.csv": b"\xef\xbb\xbf" + rows.encode(),
        "quoted.csv": rows.replace("m;", '"m";').encode(),
        "reordered_rows.csv": ("age;sex;zip\n66;m;81925\n34;m;81667\n45;f;81675\n").encode(),
        "reordered_columns.csv": ("zip,age,sex\n81667,34,m\n81675,45,f\n81925,66,m\n").encode(),
    }
    ids = set()
    for name, content in variants.items():
        (tmp_path / name).write_bytes(content)
        ids.add(dataset_id(tmp_path / name))
    assert len(ids) == 1
    same = ids.pop()
    different = {
        "value.csv": rows.replace("45", "46"),
        "row.csv": rows + "70;f;81931\n",
        "duplicate.csv": rows + "34;m;81667\n",
        "name.csv": rows.replace("zip", "zipcode"),
        "missing.csv": rows.replace("45;", ";"),
    }
    for name, content in different.items():
        (tmp_path / name).write_text(content)
        assert dataset_id(tmp_path / name) != same, name


def test_dataset_id_of_frames_parquet_and_datasets(tmp_path):
    frame = pd.DataFrame({"age": [34, 45, 66], "sex": ["m", "f", None]})
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    assert dataset_id(frame) == dataset_id(path) == dataset_id(pa.Table.from_pandas(frame, preserve_index=False))
    assert dataset_id(Dataset(frame, quasi_identifiers=["age"])) == dataset_id(frame)
    frame.to_csv(tmp_path / "t.csv", index=False)
    assert dataset_id(tmp_path / "t.csv") == dataset_id(frame)  # an empty cell and a null are both missing
    assert dataset_id(frame.assign(age=frame.age.astype(float))) == dataset_id(frame)  # 34.0 is written 34
    assert dataset_id(frame.iloc[::-1]) == dataset_id(frame)
