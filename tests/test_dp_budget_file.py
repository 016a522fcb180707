"""``--budget-file``: a release ledger that keeps one table's budget, and the dataset id that binds
the budget to the table's content as parsed. Budget files of earlier veil versions (sealed JSON)
are refused where a ledger is expected, and imported into a ledger once.
"""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from helpers import one_sentence_error, refused as one_sentence, veil
from test_ledger import sealed_budget_file
from veil.data.dataset import Dataset
from veil.dp import Accountant, Budget, BudgetFileError
from veil.dp.fingerprint import dataset_id
from veil.ledger import Ledger

PEOPLE = pd.DataFrame({"age": ["34", "45", "66", "70"], "sex": ["m", "f", "m", "f"]})


def test_a_budget_file_is_a_ledger_of_one_tables_budget(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    budget = tmp_path / "budget.db"
    one_sentence(veil("dp", "count", data, "--epsilon", "0.5", "--budget-file", budget), "does not exist", "--budget")
    assert not budget.exists()
    made = veil("dp", "count", data, "--epsilon", "0.5", "--budget-file", budget, "--budget", "1", "--json")
    assert made.exit_code == 0, made.output
    # The population is named after the table's file; the table's fingerprint is nowhere to be seen.
    assert json.loads(made.stdout)["budget"]["population"] == "people.csv"
    assert dataset_id(data) not in made.stdout
    with sqlite3.connect(budget) as conn:
        assert conn.execute("SELECT label, epsilon FROM charges").fetchall() == [("count", "0.5")]
        assert dataset_id(data) not in " ".join(map(str, conn.execute("SELECT * FROM datasets").fetchall()))
    shown = json.loads(veil("dp", "budget", budget, "--json").stdout)
    assert shown["dataset_id"] == "people.csv" and shown["spent"]["epsilon"] == 0.5
    assert shown["composition"] == "sequential" and [c["label"] for c in shown["charges"]] == ["count"]
    one_sentence(veil("dp", "count", data, "--epsilon", "0.1", "--budget-file", budget, "--budget", "3"),
                 "already has the budget")
    other = tmp_path / "other.csv"
    PEOPLE.head(3).to_csv(other, index=False)
    one_sentence(veil("dp", "count", other, "--epsilon", "0.1", "--budget-file", budget),
                 "keeps the budget of another table")
    one_sentence(veil("dp", "budget", budget, "--data", other), "keeps the budget of another table")
    assert veil("dp", "budget", budget, "--data", data, "--json").exit_code == 0
    assert Ledger(budget).verify().ok
    # The same file is a ledger to every ledger command.
    assert json.loads(veil("ledger", "status", "--ledger", budget, "--json").stdout)["populations"][0]["charges"] == 1


def test_an_earlier_veils_budget_file_is_refused_then_imported_once(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    old = Accountant(Budget(1), dataset_id=dataset_id(data))
    old.charge(0.25, label="count")
    sealed_budget_file(tmp_path / "budget.json", old)
    before = (tmp_path / "budget.json").read_bytes()
    one_sentence(veil("dp", "count", data, "--epsilon", "0.1", "--budget-file", tmp_path / "budget.json"),
                 "JSON budget file of an earlier veil", "veil ledger import")
    one_sentence(veil("dp", "budget", tmp_path / "budget.json"), "JSON budget file")
    ledger = tmp_path / "ledger.db"
    assert veil("ledger", "init", "--ledger", ledger).exit_code == 0
    imported = veil("ledger", "import", tmp_path / "budget.json", "--ledger", ledger)
    assert imported.exit_code == 0 and "as population budget.json" in imported.stdout, imported.output
    one_sentence(veil("ledger", "import", tmp_path / "budget.json", "--ledger", ledger), "imported once")
    assert (tmp_path / "budget.json").read_bytes() == before
    charged = veil("dp", "count", data, "--epsilon", "0.5", "--ledger", ledger, "--json")
    assert charged.exit_code == 0 and json.loads(charged.stdout)["budget"]["spent"]["epsilon"] == 0.75


def test_files_of_the_first_format_are_refused_with_what_they_have_left(tmp_path):
    old = Accountant(Budget(1), dataset_id="veil-data-1:x")
    old.charge(0.25, label="count")
    (tmp_path / "v1.json").write_text(old.to_json().replace('"version": 2', '"version": 1'), encoding="utf-8")
    ledger, _ = Ledger.init(tmp_path / "ledger.db")
    one_sentence_error(BudgetFileError, lambda: ledger.import_budget_file(tmp_path / "v1.json"), "older veil",
                       "ε = 0.75")
    (tmp_path / "v2.json").write_text(old.to_json(), encoding="utf-8")
    one_sentence_error(BudgetFileError, lambda: ledger.import_budget_file(tmp_path / "v2.json"), "no seal")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    one_sentence_error(BudgetFileError, lambda: ledger.import_budget_file(tmp_path / "bad.json"), "not valid JSON")
    assert ledger.populations() == []


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
