"""``veil dp query DATA --spec S --out DIR``, its specification file and JSON Schema, and ``veil dp
report`` of the folder it writes (issue 27, item 5 and its bad input).

Every refusal is one sentence, exit status 2, with nothing charged (the ledger's charges are the
same before and after) and nothing written (the --out folder does not appear).
"""

from __future__ import annotations

import json

import jsonschema
import pandas as pd
import pytest
import yaml

from veil.config.dp_query_spec import QUERY_SCHEMA, SHIPPED_QUERY_SCHEMA, load_query_spec, query_schema_text
from veil.errors import ConfigError

from helpers import refused, veil

# Visits: several rows per person; the person IDs and incomes are values no manifest may hold.
VISITS = pd.DataFrame({
    "person": [f"id-{n:04d}" for n in (11, 11, 11, 23, 23, 37, 41, 41, 58, 58, 58, 58)],
    "region": ["north", "north", "south", "south", "south", "east", "north", "north", "south", "east", "east", "east"],
    "income": [1234.5, 2345.25, 3456.75, 987.125, 4321.5, 1111.0, 2222.5, 3333.25, 4444.75, 555.5, 666.25, 777.75],
    "name": ["Ann", "Ann", "Ann", "Bob", "Bob", "Cy", "Di", "Di", "Ed", "Ed", "Ed", "Ed"],
})

SPEC = {"unit": {"person": {"id_column": "person", "max_rows": 2}},
        "group_by": {"columns": ["region"], "keys": ["north", "south", "east", "west"]},
        "aggregates": [{"aggregate": "count"}, {"aggregate": "sum", "column": "income", "low": 0, "high": 5000},
                       {"aggregate": "mean", "column": "income", "low": 0, "high": 5000, "name": "avg"}],
        "epsilon": 1.0}
VALIDATOR = jsonschema.Draft202012Validator(QUERY_SCHEMA)


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "visits.csv"
    VISITS.to_csv(path, index=False)
    return path


def write_spec(tmp_path, doc, name="spec.yaml") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc) if name.endswith(".json") else yaml.safe_dump(doc), encoding="utf-8")
    return path


def charges(budget_file) -> list:
    shown = veil("dp", "budget", budget_file, "--json")
    assert shown.exit_code == 0, shown.output
    return json.loads(shown.stdout)["charges"]


# ---------------------------------------------------------------------------------------------
# answers and manifest
# ---------------------------------------------------------------------------------------------

def test_a_query_writes_answers_with_intervals_and_a_manifest_of_the_transformation(tmp_path, data):
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "answers"
    done = veil("dp", "query", data, "--spec", spec, "--out", out, "--budget-file", tmp_path / "b.db",
                "--budget", "3")
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(out / "answers.csv", keep_default_na=False)
    assert list(frame.columns) == ["region", "count", "count_low", "count_high", "sum(income)", "sum(income)_low",
                                   "sum(income)_high", "avg", "avg_low", "avg_high"]
    assert list(frame["region"]) == ["north", "south", "east", "west"]  # every public key, the empty one too
    for name in ("count", "sum(income)", "avg"):
        assert (frame[f"{name}_low"] <= frame[name]).all() and (frame[name] <= frame[f"{name}_high"]).all()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["kind"] == "dp grouped query" and manifest["epsilon"] == "1" and manifest["delta"] == "0"
    assert manifest["unit"] == {"unit": "person", "id_column": "person", "max_rows": 2, "max_groups": None,
                                "max_rows_per_group": None}
    assert manifest["group_by"] == {"columns": ["region"], "keys": {"source": "list", "public": True, "other": False},
                                    "num_keys": 4}
    assert manifest["fit_for_release"] is True and manifest["alpha"] == 0.05
    sums = {a["name"]: a for a in manifest["aggregates"]}
    assert sums["sum(income)"]["bounds"] == [0.0, 5000.0]
    measurement = sums["sum(income)"]["measurements"][0]
    assert measurement["sensitivity"] == 2 * 5000 and measurement["mechanism"] == "laplace"
    assert measurement["scale"] == pytest.approx(2 * 5000 / (1 / 3))
    assert manifest["charge"]["population"] == "visits.csv" and isinstance(manifest["charge"]["seq"], int)
    assert manifest["release"]["file"] == "answers.csv" and manifest["seal"]["algorithm"] == "HMAC-SHA256"
    # the manifest describes the transformation, never the table
    text = (out / "manifest.json").read_text(encoding="utf-8")
    for value in [*VISITS["person"], *VISITS["name"], *map(str, VISITS["income"]), "north", "south"]:
        assert value not in text
    spent = charges(tmp_path / "b.db")
    assert len(spent) == 1 and spent[0]["epsilon"] == 1.0
    assert "grouped query count, sum(income), avg by region" in done.stdout


def test_a_budget_made_for_a_person_level_query_protects_a_person(tmp_path, data):
    spec = write_spec(tmp_path, SPEC)
    done = veil("dp", "query", data, "--spec", spec, "--out", tmp_path / "o", "--budget-file", tmp_path / "b.db",
                "--budget", "3")
    assert done.exit_code == 0, done.output
    # a row-level query cannot spend that person-level budget
    rows = write_spec(tmp_path, {**SPEC, "unit": "rows"}, "rows.yaml")
    refused(veil("dp", "query", data, "--spec", rows, "--out", tmp_path / "o2", "--budget-file", tmp_path / "b.db"),
            "privacy units")
    assert len(charges(tmp_path / "b.db")) == 1 and not (tmp_path / "o2").exists()


def test_seeded_answers_repeat_and_are_labelled_not_fit(tmp_path, data):
    spec = write_spec(tmp_path, SPEC)
    runs = [veil("dp", "query", data, "--spec", spec, "--out", tmp_path / f"o{i}", "--seed", 5) for i in (1, 2)]
    assert all(r.exit_code == 0 for r in runs), runs[0].output
    assert "NOT fit for release" in runs[0].stderr
    one, two = ((tmp_path / f"o{i}" / "answers.csv").read_text() for i in (1, 2))
    assert one == two
    manifest = json.loads((tmp_path / "o1" / "manifest.json").read_text())
    assert manifest["fit_for_release"] is False and manifest["charge"] is None


def test_rho_parquet_and_a_key_file_relative_to_the_spec(tmp_path, data):
    (tmp_path / "keys.csv").write_text("region\nwest\nnorth\n", encoding="utf-8")
    spec = write_spec(tmp_path, {**SPEC, "epsilon": None} | {"group_by": {"columns": ["region"], "file": "keys.csv"},
                                                             "rho": 0.5, "output": {"format": "parquet"}}, "s.json")
    doc = json.loads(spec.read_text())
    del doc["epsilon"]
    spec.write_text(json.dumps(doc))
    out = tmp_path / "o"
    done = veil("dp", "query", data, "--spec", spec, "--out", out, "--budget-file", tmp_path / "r.db",
                "--budget", "2,1e-6")
    assert done.exit_code == 0, done.output
    frame = pd.read_parquet(out / "answers.parquet")
    assert list(frame["region"]) == ["west", "north"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["rho"] == "0.5" and "epsilon" not in manifest and manifest["measure"] == "rho-zCDP"
    assert manifest["group_by"]["keys"] == {"source": "file", "public": True, "other": False, "file": "keys.csv"}
    assert {m["norm"] for a in manifest["aggregates"] for m in a["measurements"]} == {"L2"}


def test_the_table_may_come_from_the_spec(tmp_path, data):
    spec = write_spec(tmp_path, {**SPEC, "table": "visits.csv"})
    done = veil("dp", "query", "--spec", spec, "--out", tmp_path / "o", "--seed", 1)
    assert done.exit_code == 0, done.output
    refused(veil("dp", "query", "--spec", write_spec(tmp_path, SPEC, "n.yaml"), "--out", tmp_path / "o3"), "DATA")


def test_json_output(tmp_path, data):
    spec = write_spec(tmp_path, SPEC)
    done = veil("dp", "query", data, "--spec", spec, "--out", tmp_path / "o", "--seed", 2, "--json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert [r["region"] for r in doc["answers"]] == ["north", "south", "east", "west"]
    assert doc["manifest"]["kind"] == "dp grouped query" and "seal" not in doc["manifest"]


# ---------------------------------------------------------------------------------------------
# bad input: one sentence, exit 2, nothing charged, nothing written
# ---------------------------------------------------------------------------------------------

def _with(**changes):
    doc = json.loads(json.dumps(SPEC))
    for path, value in changes.items():
        where = doc
        keys = path.split("__")
        for key in keys[:-1]:
            where = where[int(key)] if isinstance(where, list) else where[key]
        last = keys[-1]
        if isinstance(where, list):
            where[int(last)] = value
        else:
            where[last] = value
    return doc


BAD = {
    "missing ID column": (_with(unit={"person": {"id_column": "customer", "max_rows": 2}}), ["customer"]),
    "bound not finite": (_with(aggregates__1__high=float("inf")), ["aggregates[1].high", "finite"]),
    "bound NaN": (_with(aggregates__1__low=float("nan")), ["aggregates[1].low", "finite"]),
    "bounds reversed": (_with(aggregates__2__low=5000, aggregates__2__high=0), ["low < high"]),
    "bounds equal": (_with(aggregates__1__low=7, aggregates__1__high=7), ["low < high"]),
    "aggregate on a text column": (_with(aggregates__1__column="name"), ["'name'", "text"]),
    "unknown aggregate column": (_with(aggregates__1__column="salary"), ["salary"]),
    "missing grouping column": (_with(group_by={"columns": ["city"], "keys": ["x"]}), ["city"]),
    "duplicate public key": (_with(group_by={"columns": ["region"], "keys": ["north", "north"]}), ["twice"]),
    "no person bound": (_with(unit={"person": {"id_column": "person"}}), ["max_rows"]),
}


def _assert_nothing_happened(tmp_path, out, before):
    assert not out.exists()
    assert charges(tmp_path / "b.db") == before


@pytest.fixture
def budget_file(tmp_path, data):
    first = veil("dp", "count", data, "--epsilon", "0.1", "--budget-file", tmp_path / "b.db", "--budget", "5")
    assert first.exit_code == 0, first.output
    return tmp_path / "b.db"


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_refused_before_anything_is_charged_or_written(tmp_path, data, budget_file, case):
    doc, words = BAD[case]
    doc = json.loads(json.dumps(doc).replace("Infinity", '"INF"').replace("NaN", '"NAN"'))
    spec = tmp_path / "bad.yaml"
    text = yaml.safe_dump(doc).replace("INF", ".inf").replace("NAN", ".nan")
    spec.write_text(text, encoding="utf-8")
    before = charges(budget_file)
    out = tmp_path / "out"
    refused(veil("dp", "query", data, "--spec", spec, "--out", out, "--budget-file", budget_file), *words)
    _assert_nothing_happened(tmp_path, out, before)


@pytest.mark.parametrize("content, words", [("region\n", ["is empty"]),
                                            ("region\nnorth\nsouth\nnorth\n", ["twice"]),
                                            ("", ["empty"]),
                                            ("place\nnorth\n", ["no column 'region'"])])
def test_a_key_file_empty_or_with_duplicates_is_refused(tmp_path, data, budget_file, content, words):
    (tmp_path / "keys.csv").write_text(content, encoding="utf-8")
    spec = write_spec(tmp_path, _with(group_by={"columns": ["region"], "file": "keys.csv"}))
    before = charges(budget_file)
    refused(veil("dp", "query", data, "--spec", spec, "--out", tmp_path / "out", "--budget-file", budget_file),
            "keys.csv", *words)
    _assert_nothing_happened(tmp_path, tmp_path / "out", before)


def test_a_budget_in_another_measure_than_the_ledgers_is_refused(tmp_path, data, budget_file):
    doc = {k: v for k, v in SPEC.items() if k != "epsilon"} | {"rho": 0.1, "unit": "rows"}
    spec = write_spec(tmp_path, doc)
    before = charges(budget_file)
    refused(veil("dp", "query", data, "--spec", spec, "--out", tmp_path / "out", "--budget-file", budget_file),
            "measure")
    _assert_nothing_happened(tmp_path, tmp_path / "out", before)


def test_a_query_that_does_not_fit_the_budget_writes_nothing(tmp_path, data, budget_file):
    spec = write_spec(tmp_path, {**_with(epsilon=9.0), "unit": "rows"})
    before = charges(budget_file)
    refused(veil("dp", "query", data, "--spec", spec, "--out", tmp_path / "out", "--budget-file", budget_file))
    _assert_nothing_happened(tmp_path, tmp_path / "out", before)


def test_an_out_that_cannot_be_written_is_refused_before_the_charge(tmp_path, data, budget_file):
    (tmp_path / "file").write_text("x")
    spec = write_spec(tmp_path, {**SPEC, "unit": "rows"})
    before = charges(budget_file)
    refused(veil("dp", "query", data, "--spec", spec, "--out", tmp_path / "file", "--budget-file", budget_file))
    assert charges(budget_file) == before and (tmp_path / "file").read_text() == "x"


INVALID_SPECS = {
    "unknown top key": ({**SPEC, "epsilonn": 1}, ["unknown key 'epsilonn'"]),
    "unknown unit key": (_with(unit={"person": {"id_column": "person", "max_row": 2}}),
                         ["unit.person", "unknown key 'max_row', perhaps 'max_rows'"]),
    "unknown aggregate key": (_with(aggregates__1={"aggregate": "sum", "column": "income", "low": 0, "high": 1,
                                                   "bins": 3}), ["aggregates[1] has an unknown key 'bins' (its keys are aggregate, column, low, high, name)"]),
    "wrong type": (_with(epsilon="one"), ["epsilon", "a number"]),
    "negative epsilon": (_with(epsilon=-1), ["epsilon", "above 0"]),
    "both prices": (_with(rho=0.5), ["only one of epsilon, rho"]),
    "no price": ({k: v for k, v in SPEC.items() if k != "epsilon"}, ["one of epsilon, rho"]),
    "two key sources": (_with(group_by={"columns": ["region"], "keys": ["a"], "domains": {"region": ["a"]}}),
                        ["group_by", "only one of keys, domains"]),
    "unknown aggregate": (_with(aggregates__0={"aggregate": "median"}), ["aggregates[0].aggregate", "count"]),
    "sum without bounds": (_with(aggregates__1={"aggregate": "sum", "column": "income"}), ["'low'"]),
    "unit misspelt": (_with(unit="row"), ["unit must be 'rows' or"]),
    "alpha out of range": (_with(alpha=1.5), ["alpha", "below 1"]),
    "bad format": ({**SPEC, "output": {"format": "xlsx"}}, ["output.format", "csv, parquet"]),
    "weights of another length": ({**SPEC, "weights": [1, 2]}, ["weights", "3"]),
    "max_rows not whole": (_with(unit={"person": {"id_column": "person", "max_rows": 2.5}}), ["max_rows"]),
    "empty aggregates": (_with(aggregates=[]), ["aggregates", "at least 1"]),
}


@pytest.mark.parametrize("case", sorted(INVALID_SPECS))
def test_a_spec_that_breaks_the_schema_is_refused_in_one_sentence(tmp_path, data, budget_file, case):
    doc, words = INVALID_SPECS[case]
    if case != "weights of another length":  # what JSON Schema cannot say (a length matching another list's)
        assert list(VALIDATOR.iter_errors(doc)), "the JSON Schema accepts it"
    spec = write_spec(tmp_path, doc, "bad.json")
    before = charges(budget_file)
    refused(veil("dp", "query", data, "--spec", spec, "--out", tmp_path / "out", "--budget-file", budget_file),
            "bad.json", *words)
    _assert_nothing_happened(tmp_path, tmp_path / "out", before)


def test_a_key_given_twice_in_the_file_or_bad_yaml_is_refused(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("epsilon: 1\nepsilon: 2\ngroup_by: {columns: [a], keys: [x]}\naggregates: [{aggregate: count}]\n")
    with pytest.raises(ConfigError, match="line 2: the key 'epsilon' is given twice"):
        load_query_spec(path)
    path.write_text("epsilon: [1\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_query_spec(path)
    path = tmp_path / "dup.json"
    path.write_text('{"epsilon": 1, "epsilon": 2}')
    with pytest.raises(ConfigError, match="given twice"):
        load_query_spec(path)


def test_private_keys_are_released_by_partition_selection_and_charge_delta(tmp_path, data):
    doc = _with(group_by={"columns": ["region"], "private": {"delta": 1e-6}})
    out = tmp_path / "out"
    done = veil("dp", "query", data, "--spec", write_spec(tmp_path, doc), "--out", out, "--budget-file",
                tmp_path / "b.db", "--budget", "3,1e-5")
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(out / "answers.csv", keep_default_na=False)
    # twelve rows of five people: no key reaches the threshold, and the answer says nothing of them
    assert list(frame.columns)[:2] == ["region", "count"] and len(frame) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["group_by"]["keys"] == {"source": "private", "public": False, "other": False, "delta": 1e-6,
                                            "threshold": None}
    spent = charges(tmp_path / "b.db")
    assert len(spent) == 1 and spent[0]["epsilon"] == 1.0 and spent[0]["delta"] == 1e-6
    for value in ("north", "south", "east"):
        assert value not in (out / "manifest.json").read_text(encoding="utf-8")


def test_private_keys_need_a_budget_with_a_delta(tmp_path, data):
    doc = _with(group_by={"columns": ["region"], "private": {"delta": 1e-6}})
    refused(veil("dp", "query", data, "--spec", write_spec(tmp_path, doc), "--out", tmp_path / "o", "--budget-file",
                 tmp_path / "b.db", "--budget", "3"), "δ")
    assert not (tmp_path / "o").exists()


def test_the_other_bucket_answers_the_rows_outside_the_public_keys(tmp_path, data):
    doc = _with(group_by={"columns": ["region"], "keys": ["north"], "other": True})
    out = tmp_path / "out"
    done = veil("dp", "query", data, "--spec", write_spec(tmp_path, doc), "--out", out, "--seed", 2)
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(out / "answers.csv", keep_default_na=False)
    assert list(frame["region"]) == ["north", "other"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["group_by"]["keys"]["other"] is True and manifest["group_by"]["num_keys"] == 2


def test_keys_from_a_hierarchy_level(tmp_path, data):
    (tmp_path / "regions.csv").write_text("north;NS\nsouth;NS\neast;EW\nwest;EW\n", encoding="utf-8")
    doc = _with(group_by={"columns": ["region"], "hierarchy": {"column": "region", "file": "regions.csv",
                                                               "level": 1}})
    out = tmp_path / "out"
    done = veil("dp", "query", data, "--spec", write_spec(tmp_path, doc), "--out", out, "--seed", 2)
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(out / "answers.csv", keep_default_na=False)
    assert list(frame["region"]) == ["NS", "EW"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["group_by"]["keys"] == {"source": "hierarchy", "public": True, "other": False,
                                            "column": "region", "level": 1}


@pytest.mark.parametrize("group, words", [
    ({"columns": ["region"], "private": {"delta": 1e-6}, "other": True}, "leave other out"),
    ({"columns": ["region", "name"], "hierarchy": {"column": "region", "file": "h.csv", "level": 1}},
     "groups by its one column")])
def test_a_grouping_the_api_cannot_answer_is_one_sentence(tmp_path, data, budget_file, group, words):
    spec = write_spec(tmp_path, _with(group_by=group))
    before = charges(budget_file)
    refused(veil("dp", "query", data, "--spec", spec, "--out", tmp_path / "out", "--budget-file", budget_file), words)
    _assert_nothing_happened(tmp_path, tmp_path / "out", before)


def test_variance_and_several_quantiles_are_answered_with_intervals(tmp_path, data):
    doc = {**SPEC, "aggregates": [
        {"aggregate": "variance", "column": "income", "low": 0, "high": 5000},
        {"aggregate": "quantiles", "column": "income", "quantiles": [0.25, 0.5, 0.75], "low": 0, "high": 5000,
         "bins": 32, "name": "q"}]}
    assert not list(VALIDATOR.iter_errors(doc))
    out = tmp_path / "o"
    done = veil("dp", "query", data, "--spec", write_spec(tmp_path, doc), "--out", out, "--seed", 3)
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(out / "answers.csv", keep_default_na=False)
    names = ["variance(income)", "q[0.25]", "q[0.5]", "q[0.75]"]
    assert list(frame.columns) == ["region"] + [f"{n}{s}" for n in names for s in ("", "_low", "_high")]
    for n in names:
        assert (frame[f"{n}_low"] <= frame[n]).all() and (frame[n] <= frame[f"{n}_high"]).all()
    assert ((0 <= frame["variance(income)"]) & (frame["variance(income)"] <= 2500 ** 2)).all()
    assert ((frame["q[0.25]"] <= frame["q[0.5]"]) & (frame["q[0.5]"] <= frame["q[0.75]"])).all()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    quantile = next(a for a in manifest["aggregates"] if a["name"] == "q")
    assert quantile["bins"] == 32 and quantile["resolution"] == pytest.approx(5000 / 32)
    shown = veil("dp", "report", out, "--json")
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.stdout)["answers"]
    assert [r["region"] for r in rows] == ["north", "south", "east", "west"] and set(frame.columns) == set(rows[0])
    text = veil("dp", "report", out)
    assert text.exit_code == 0 and all(f"{n} [95% interval]" in text.stdout for n in names), text.output


@pytest.mark.parametrize("entry, words", [
    ({"quantiles": [0.0, 0.5]}, "above 0"), ({"quantiles": [0.5, 1]}, "below 1"), ({"bins": 0}, "at least 1"),
    ({"method": "sorted"}, "auto, tree, flat")])
def test_quantiles_out_of_range_are_refused_by_the_schema(tmp_path, data, entry, words):
    doc = {**SPEC, "aggregates": [{"aggregate": "quantiles", "column": "income", "quantiles": [0.5], "low": 0,
                                   "high": 5000, **entry}]}
    assert list(VALIDATOR.iter_errors(doc))
    refused(veil("dp", "query", data, "--spec", write_spec(tmp_path, doc), "--out", tmp_path / "o", "--seed", 1),
            words)
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------------------------
# the schema
# ---------------------------------------------------------------------------------------------

def test_the_shipped_schema_is_the_one_the_module_holds():
    assert SHIPPED_QUERY_SCHEMA.read_text(encoding="utf-8") == query_schema_text()
    jsonschema.Draft202012Validator.check_schema(QUERY_SCHEMA)
    printed = veil("dp", "query-schema")
    assert printed.exit_code == 0 and printed.stdout == query_schema_text()


def test_valid_specs_pass_both_the_schema_and_the_loader(tmp_path):
    docs = [SPEC, {**SPEC, "unit": "rows", "alpha": 0.1, "weights": [1, 2, 3], "output": {"format": "parquet"}},
            _with(group_by={"columns": ["region", "x"], "domains": {"region": ["a"], "x": [1, 2]}}),
            _with(group_by={"columns": ["region", "x"], "keys": [["a", 1], ["b", 2]]})]
    for i, doc in enumerate(docs):
        assert not list(VALIDATOR.iter_errors(doc))
        load_query_spec(write_spec(tmp_path, doc, f"ok{i}.yaml"))


# ---------------------------------------------------------------------------------------------
# veil dp report
# ---------------------------------------------------------------------------------------------

def test_report_shows_the_folder_as_text_json_and_html(tmp_path, data):
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "o"
    assert veil("dp", "query", data, "--spec", spec, "--out", out, "--seed", 3).exit_code == 0
    frame = pd.read_csv(out / "answers.csv", keep_default_na=False)
    text = veil("dp", "report", out)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0].startswith("grouped query count, sum(income), avg by region: ε = 1, protecting a person")
    assert lines[1].split()[:2] == ["region", "count"]
    assert [line.split()[0] for line in lines[2:6]] == ["north", "south", "east", "west"]
    shown = json.loads(veil("dp", "report", out / "manifest.json", "--json").stdout)
    pd.testing.assert_frame_equal(pd.DataFrame(shown["answers"]), frame, check_dtype=False)
    html = veil("dp", "report", out, "--out", tmp_path / "r.html")
    assert html.exit_code == 0, html.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "avg by region" in page and "west" in page


def test_report_refuses_an_edited_answers_file_and_a_folder_of_something_else(tmp_path, data):
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "o"
    assert veil("dp", "query", data, "--spec", spec, "--out", out, "--seed", 3).exit_code == 0
    answers = out / "answers.csv"
    answers.write_text(answers.read_text().replace("north", "nort"))
    refused(veil("dp", "report", out), "answers.csv")
    (tmp_path / "empty").mkdir()
    refused(veil("dp", "report", tmp_path / "empty"), "manifest.json")


# ---------------------------------------------------------------------------------------------
# the checker and JSON Schema agree; the order of charge and writing
# ---------------------------------------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

from veil.config.dp_query_spec import check_document  # noqa: E402

_FULL = {"table": "t.csv", "unit": {"person": {"id_column": "p", "max_rows": 2, "max_groups": 1,
                                               "max_rows_per_group": 1}},
         "group_by": {"columns": ["a", "b"], "keys": [["x", 1], ["y", 2]], "other": False},
         "aggregates": [{"aggregate": "count", "name": "n"}, {"aggregate": "sum", "column": "c", "low": 0, "high": 1},
                        {"aggregate": "quantiles", "column": "c", "quantiles": [0.5], "low": 0, "high": 9, "bins": 4}],
         "epsilon": 1.0, "alpha": 0.05, "weights": [1, 1, 1], "output": {"format": "csv"}}


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _paths(value, prefix + (i,))


VALUES = st.one_of(st.sampled_from(["rows", "count", "sum", "csv", "parquet", "", "x", "p", 0, 1, -1, 2.5, 0.5, 1.0,
                                    True, False, None, [], {}, ["x"], [1, 2], {"person": {"id_column": "p"}},
                                    {"delta": 1e-6}, {"column": "a", "file": "h.csv", "level": 1}]),
                   st.integers(-3, 3), st.floats(-2, 2, allow_nan=False, allow_infinity=False))
PATHS = list(_paths(_FULL))[1:]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PATHS), st.one_of(VALUES, st.just("<delete>"), st.just("<extra>"))),
                max_size=3))
def test_the_checker_agrees_with_json_schema(edits):
    doc = json.loads(json.dumps(_FULL))
    for path, value in edits:
        where = doc
        try:
            for key in path[:-1]:
                where = where[key]
            if isinstance(where, dict) != isinstance(path[-1], str):
                continue
            value = json.loads(json.dumps(value))
            if value == "<delete>":
                del where[path[-1]]
            elif value == "<extra>" and isinstance(where[path[-1]], dict):
                where[path[-1]]["surprise"] = 1
            else:
                where[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    assert (check_document(doc) is None) == (not list(VALIDATOR.iter_errors(doc))), doc


def test_text_cells_match_keys_written_as_numbers(tmp_path):
    table = tmp_path / "t.csv"
    pd.DataFrame({"region": ["n", "n", "s"], "year": [2023, 2024, 2024], "v": [1, 2, 3]}).to_csv(table, index=False)
    spec = write_spec(tmp_path, {"group_by": {"columns": ["region", "year"], "keys": [["n", 2024], ["s", 2024]]},
                                 "aggregates": [{"aggregate": "count"}], "epsilon": 1000})
    done = veil("dp", "query", table, "--spec", spec, "--out", tmp_path / "o", "--seed", 1)
    assert done.exit_code == 0, done.output
    frame = pd.read_csv(tmp_path / "o" / "answers.csv")
    assert list(frame["count"]) == [1, 1]  # ε = 1000: the noise is 0 with overwhelming probability


def test_a_write_that_fails_after_the_charge_leaves_the_budget_spent_and_no_file(tmp_path, data, budget_file,
                                                                                   monkeypatch):
    """The charge is committed before the noise is drawn (never an answer drawn unpaid); a write
    that fails afterwards publishes nothing, and the budget stays spent: the safe side."""
    from veil.errors import DataError
    from veil.output.writer import OutputSet

    def full_disk(self, *args, **kwargs):
        raise DataError("cannot write 'manifest.json': no space left on device; nothing was written.")

    kept = OutputSet.put_manifest
    monkeypatch.setattr(OutputSet, "put_manifest", full_disk)
    spec = write_spec(tmp_path, {**SPEC, "unit": "rows"})
    before = charges(budget_file)
    refused(veil("dp", "query", data, "--spec", spec, "--out", tmp_path / "out", "--budget-file", budget_file),
            "no space")
    monkeypatch.setattr(OutputSet, "put_manifest", kept)
    assert not (tmp_path / "out").exists()
    assert len(charges(budget_file)) == len(before) + 1
