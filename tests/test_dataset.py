"""Datasets: loading from any source, roles, hierarchies, and the errors a user can cause
(veil.data.dataset, veil.data.bundled)."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import veil
from helpers import TEST_DATA, one_sentence_error
from veil import ColumnError, DataError, Dataset, Hierarchy, HierarchyError, VeilError
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, adult_csv as bundled_adult_csv, load_adult
from veil.data.io import read_table

ADULT_COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
                 "occupation", "salary-class"]


raises = one_sentence_error


@pytest.fixture(scope="module")
def adult_pandas_frame(adult_csv) -> pd.DataFrame:
    return pd.read_csv(adult_csv, sep=";")


@pytest.fixture
def adult_frame(adult_pandas_frame) -> pd.DataFrame:
    return adult_pandas_frame.copy()


# --------------------------------------------------------------------------- loading

@pytest.mark.parametrize("delimiter", [None, ";"], ids=["sniffed", "given"])
def test_adult_csv_just_works(adult_csv, delimiter):
    ds = Dataset(adult_csv, quasi_identifiers=["age", "sex"], sensitive="occupation", delimiter=delimiter)
    assert ds.num_rows == len(ds) == 30_162
    assert ds.columns == ADULT_COLUMNS
    assert ds.insensitive == ["race", "marital-status", "education", "native-country", "workclass",
                              "salary-class"]
    salary = ds.column("salary-class")
    assert salary.labels.tolist() == ["<=50K", ">50K"]
    assert salary.counts().tolist() == [22_654, 7_508]
    age = ds.column("age")
    assert age.cardinality == 72 and age.labels[0] == "17" and age.labels[-1] == "90"
    assert age.is_numeric and age.missing_code is None
    assert [ds.column(c).cardinality for c in ADULT_COLUMNS] == [2, 72, 5, 7, 16, 41, 7, 14, 2]
    assert ds.labels("sex")[ds.column("sex").codes[:2]].tolist() == ["Male", "Male"]


def test_same_codes_and_labels_from_every_source(adult_csv, adult_frame, tmp_path):
    parquet = tmp_path / "adult.parquet"
    adult_frame.to_parquet(parquet)
    sources = {
        "csv": adult_csv,
        "csv-str": str(adult_csv),
        "parquet": parquet,
        "pandas": adult_frame,
        "polars": pl.read_csv(adult_csv, separator=";"),
        "arrow": pa.Table.from_pandas(adult_frame, preserve_index=False),
        "table": read_table(adult_csv),
    }
    assert adult_frame["age"].dtype == np.int64  # pandas reads numbers, the CSV path reads text
    datasets = {k: Dataset(v, quasi_identifiers=ADULT_COLUMNS) for k, v in sources.items()}
    ref = datasets["csv"]
    for kind, ds in datasets.items():
        assert ds.columns == ADULT_COLUMNS, kind
        for name in ADULT_COLUMNS:
            assert ds.column(name).labels.tolist() == ref.column(name).labels.tolist(), (kind, name)
            assert np.array_equal(ds.column(name).codes, ref.column(name).codes), (kind, name)


def test_same_codes_with_missing_values_from_every_source(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_bytes(b"age,city\r\n25,Paris\r\n,Rome\r\n31,\r\n25,Paris\r\n")
    frame = pd.DataFrame({"age": [25.0, np.nan, 31.0, 25.0], "city": ["Paris", "Rome", None, "Paris"]})
    parquet = tmp_path / "t.parquet"
    frame.to_parquet(parquet)
    sources = [csv, parquet, frame, pl.DataFrame({"age": [25, None, 31, 25], "city": ["Paris", "Rome", None, "Paris"]})]
    for source in sources:
        ds = Dataset(source, quasi_identifiers=["age", "city"])
        assert ds.labels("age").tolist() == ["25", "31", ""], source
        assert ds.column("age").codes.tolist() == [0, 2, 1, 0]
        assert ds.labels("city").tolist() == ["Paris", "Rome", ""]
        assert ds.column("city").codes.tolist() == [0, 1, 2, 0]


def test_inputs_are_never_mutated(adult_frame, adult_hierarchy_paths):
    before = adult_frame.copy(deep=True)
    hierarchies = {c: adult_hierarchy_paths[c] for c in ("age", "sex", "education")}
    ds = Dataset(adult_frame, quasi_identifiers=["age", "sex", "education"], sensitive="occupation",
                 hierarchies=hierarchies, orders={"salary-class": ["<=50K", ">50K"]})
    ds.generalized_codes("age", 2)
    ds.column("salary-class")
    pd.testing.assert_frame_equal(adult_frame, before)
    assert ds.table.source is adult_frame

    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0], "b": ["x", None, "NULL"]})
    frame_before = frame.copy(deep=True)
    Dataset(frame, quasi_identifiers=["a", "b"], missing_values=("", "NULL"),
            hierarchies={"b": Hierarchy([["x", "*"]])})
    pd.testing.assert_frame_equal(frame, frame_before)

    pframe = pl.DataFrame({"a": [1.0, None, float("nan")], "b": ["x", None, "y"]})
    pbefore = pframe.clone()
    Dataset(pframe, quasi_identifiers=["a", "b"]).column("a")
    assert pframe.equals(pbefore)


def test_custom_missing_values(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"zip;sex\n81667;NULL\n81675;male\nNULL;\n")
    ds = Dataset(path, quasi_identifiers=["zip", "sex"], missing_values=("", "NULL"))
    assert ds.labels("zip").tolist() == ["81667", "81675", ""]
    assert ds.column("zip").codes.tolist() == [0, 1, 2]
    assert ds.column("zip").is_numeric
    assert ds.labels("sex").tolist() == ["male", ""]
    assert ds.column("sex").codes.tolist() == [1, 0, 1]


def test_orders_make_a_column_ordinal(toy_frame):
    ds = Dataset(toy_frame, quasi_identifiers="gender", orders={"gender": ["male", "female"]})
    assert ds.labels("gender").tolist() == ["male", "female"]
    assert ds.column("gender").codes.tolist() == [0, 1, 0, 1, 1, 0, 0]
    assert ds.column("gender").ordered


def test_roles(toy_frame):
    ds = Dataset(toy_frame, quasi_identifiers="age", sensitive=["zipcode"], identifying=("gender",))
    assert ds.quasi_identifiers == ["age"]
    assert ds.sensitive == ["zipcode"]
    assert ds.identifying == ["gender"]
    assert ds.insensitive == []
    assert "quasi_identifiers=['age']" in repr(ds) and "rows=7" in repr(ds)
    ds = Dataset(toy_frame, quasi_identifiers=["age", "zipcode"])
    assert ds.sensitive == [] and ds.insensitive == ["gender"]


def test_dataset_from_a_table_is_used_as_is(arx_toy_csv):
    table = read_table(arx_toy_csv)
    ds = Dataset(table, quasi_identifiers="age")
    assert ds.table is table
    assert ds.labels("age").tolist() == ["34", "45", "66", "70"]


# --------------------------------------------------------------------------- hierarchies

def test_arx_toy_with_its_hierarchies(arx_toy_csv, arx_toy_hierarchy_paths):
    ds = Dataset(arx_toy_csv, quasi_identifiers=["age", "gender", "zipcode"],
                 hierarchies={k: str(v) for k, v in arx_toy_hierarchy_paths.items()})
    assert set(ds.hierarchies) == {"age", "gender", "zipcode"}
    assert ds.labels("age", 1)[ds.generalized_codes("age", 1)].tolist() == [
        "<50", "<50", ">=50", ">=50", "<50", ">=50", "<50"]
    assert ds.labels("zipcode", 4)[ds.generalized_codes("zipcode", 4)].tolist() == ["8****"] * 7
    assert ds.labels("gender", 1).tolist() == ["*"]
    # level 0 counts the data's values; higher levels count the hierarchy's nodes (80000-89999)
    assert ds.radix("zipcode") == 4 and ds.radix("zipcode", 1) == 1000 and ds.radix("zipcode", 2) == 100
    assert ds.generalized_codes("age", 0) is ds.column("age").codes


def test_arx_toy2_with_its_hierarchies(arx_toy2_csv, arx_toy2_hierarchy_paths):
    ds = Dataset(arx_toy2_csv, quasi_identifiers=["ZIPCode", "Age"], sensitive=["Disease", "Salary"],
                 hierarchies=arx_toy2_hierarchy_paths)
    assert ds.labels("Age", 1)[ds.generalized_codes("Age", 1)].tolist() == [
        "[20,30[", "[20,30[", "[20,30[", ">=40", ">=40", ">=40", "[30,40[", "[30,40[", "[30,40["]
    assert ds.labels("Disease", 3).tolist() == ["respiratory&digestive disease"]
    assert ds.labels("ZIPCode", 5).tolist() == ["*****"]
    # Salary has numeric order: "10" comes after "9"
    assert ds.labels("Salary").tolist() == ["3", "4", "5", "6", "7", "8", "9", "10", "11"]


def test_all_adult_hierarchies_load(adult_csv, adult_hierarchy_paths):
    ds = Dataset(adult_csv, quasi_identifiers=ADULT_COLUMNS, hierarchies=adult_hierarchy_paths)
    heights = {c: ds.generalizations[c].height for c in ADULT_COLUMNS}
    assert heights == {"sex": 1, "age": 4, "race": 1, "marital-status": 2, "education": 3,
                       "native-country": 2, "workclass": 2, "occupation": 2, "salary-class": 1}
    for c in ADULT_COLUMNS:
        top = heights[c]
        assert ds.radix(c, top) == 1
        assert set(ds.generalized_codes(c, top).tolist()) == {0}


def test_hierarchy_that_does_not_cover_the_data(adult_frame):
    raises(HierarchyError,
           lambda: Dataset(adult_frame, quasi_identifiers="race",
                           hierarchies={"race": Hierarchy([["White", "*"], ["Black", "*"]], name="races")}),
           "races", "does not cover", "3 value", "'race'", "'Amer-Indian-Eskimo'", "'Asian-Pac-Islander'",
           "'Other'")


def test_hierarchy_file_that_does_not_cover_the_data(tmp_path, arx_toy_csv):
    path = tmp_path / "test_hierarchy_gender.csv"
    path.write_bytes(b"male;*\r\n")
    raises(HierarchyError, lambda: Dataset(arx_toy_csv, quasi_identifiers="gender", hierarchies={"gender": path}),
           "test_hierarchy_gender.csv", "'female'")


def test_malformed_hierarchy_file(tmp_path, arx_toy_csv):
    ragged = tmp_path / "ragged.csv"
    ragged.write_bytes(b"male;*\r\nfemale\r\n")
    raises(HierarchyError, lambda: Dataset(arx_toy_csv, quasi_identifiers="gender", hierarchies={"gender": ragged}),
           "ragged.csv", "row 2")
    two_parents = tmp_path / "tree.csv"
    two_parents.write_bytes(b"34;young;A\r\n45;young;B\r\n66;old;A\r\n70;old;A\r\n")
    raises(HierarchyError, lambda: Dataset(arx_toy_csv, quasi_identifiers="age", hierarchies={"age": two_parents}),
           "tree.csv", "'young'", "'A'", "'B'")


def test_missing_hierarchy_file(tmp_path, toy_frame):
    raises(HierarchyError,
           lambda: Dataset(toy_frame, quasi_identifiers="age", hierarchies={"age": tmp_path / "nope.csv"}),
           "nope.csv", "does not exist")


def test_generalized_codes_errors(toy_frame):
    ds = Dataset(toy_frame, quasi_identifiers=["age", "gender"],
                 hierarchies={"age": Hierarchy([["34", "<50", "*"], ["45", "<50", "*"], ["66", ">=50", "*"],
                                                ["70", ">=50", "*"]])})
    assert ds.generalized_codes("age", 1).tolist() == [0, 0, 1, 1, 0, 1, 0]
    raises(ColumnError, lambda: ds.generalized_codes("age", 3), "'age'", "0 to 2", "3")
    raises(ColumnError, lambda: ds.generalized_codes("gender", 1), "'gender'", "no hierarchy")
    raises(ColumnError, lambda: ds.generalized_codes("agee", 0), "'agee'", "'age'")


def test_negative_level_is_refused(toy_frame):
    ds = Dataset(toy_frame, quasi_identifiers="age",
                 hierarchies={"age": Hierarchy([["34", "*"], ["45", "*"], ["66", "*"], ["70", "*"]])})
    raises(ColumnError, lambda: ds.generalized_codes("age", -1), "'age'", "-1")


@pytest.mark.parametrize("method", ["labels", "radix"])
def test_labels_and_radix_without_a_hierarchy(toy_frame, method):
    ds = Dataset(toy_frame, quasi_identifiers=["age", "gender"])
    raises(ColumnError, lambda: getattr(ds, method)("gender", 1), "'gender'", "hierarchy")


# --------------------------------------------------------------------------- column and role errors

def test_unknown_column_suggests_the_closest_name(adult_csv):
    raises(ColumnError, lambda: Dataset(adult_csv, quasi_identifiers=["agee"]), "'agee'", "did you mean 'age'")
    raises(ColumnError, lambda: Dataset(adult_csv, quasi_identifiers="age", sensitive="ocupation"),
           "sensitive", "'ocupation'", "'occupation'")
    raises(ColumnError, lambda: Dataset(adult_csv, quasi_identifiers="age", identifying="salary"),
           "identifying", "'salary-class'")


def test_unknown_column_without_a_close_name_lists_the_columns(toy_frame):
    raises(ColumnError, lambda: Dataset(toy_frame, quasi_identifiers="xyzzy"),
           "'xyzzy'", "does not exist", "age, gender, zipcode")


def test_unknown_hierarchy_and_order_columns(toy_frame):
    h = Hierarchy([["34", "*"]])
    raises(ColumnError, lambda: Dataset(toy_frame, quasi_identifiers="age", hierarchies={"agee": h}),
           "hierarchy", "'agee'", "'age'")
    raises(ColumnError, lambda: Dataset(toy_frame, quasi_identifiers="age", orders={"gendr": ["male"]}),
           "order", "'gendr'", "'gender'")


def test_order_that_misses_a_value(toy_frame):
    raises(ColumnError, lambda: Dataset(toy_frame, quasi_identifiers="gender", orders={"gender": ["male"]}),
           "'gender'", "'female'")


def test_same_column_in_two_roles(toy_frame):
    raises(ColumnError, lambda: Dataset(toy_frame, quasi_identifiers=["age", "gender"], sensitive="age"),
           "'age'", "two roles", "quasi-identifier", "sensitive")
    raises(ColumnError, lambda: Dataset(toy_frame, quasi_identifiers="age", sensitive="zipcode",
                                        identifying="zipcode"),
           "'zipcode'", "sensitive", "identifying")


def test_same_column_twice_in_one_role(toy_frame):
    raises(ColumnError, lambda: Dataset(toy_frame, quasi_identifiers=["age", "age"]), "'age'", "twice")


@pytest.mark.parametrize("qis", [None, [], ()])
def test_no_quasi_identifier(toy_frame, qis):
    raises(ColumnError, lambda: Dataset(toy_frame, quasi_identifiers=qis, sensitive="age"), "quasi-identifier")


# --------------------------------------------------------------------------- data errors at the API level

def test_missing_file(tmp_path):
    raises(DataError, lambda: Dataset(tmp_path / "nope.csv", quasi_identifiers="a"), "nope.csv", "does not exist")
    raises(DataError, lambda: Dataset(str(tmp_path / "nope.parquet"), quasi_identifiers="a"), "does not exist")


def test_ragged_csv(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"a;b\r\n1;2\r\n3;4;5\r\n6\r\n")
    raises(DataError, lambda: Dataset(path, quasi_identifiers="a"), "line 3", "3 fields", "2")
    path.write_bytes(b"a;b\r\n1;2\r\n6\r\n3;4;5\r\n")
    raises(DataError, lambda: Dataset(path, quasi_identifiers="a"), "line 3", "1 fields")


def test_non_utf8_csv(tmp_path):
    path = tmp_path / "l.csv"
    path.write_bytes("city;n\nZürich;1\n".encode("cp1252"))
    raises(DataError, lambda: Dataset(path, quasi_identifiers="city"), "UTF-8")


def test_empty_and_header_only_csv(tmp_path):
    empty = tmp_path / "e.csv"
    empty.write_bytes(b"")
    raises(DataError, lambda: Dataset(empty, quasi_identifiers="a"), "empty")
    header = tmp_path / "h.csv"
    header.write_bytes(b"a;b\n")
    raises(DataError, lambda: Dataset(header, quasi_identifiers="a"), "no records")
    raises(DataError, lambda: Dataset(pd.DataFrame({"a": []}), quasi_identifiers="a"), "no records")


def test_duplicate_header_names(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"age;sex;age\n1;m;2\n")
    raises(DataError, lambda: Dataset(path, quasi_identifiers="sex"), "'age'", "twice")
    raises(DataError, lambda: Dataset(pd.DataFrame([[1, 2]], columns=["a", "a"]), quasi_identifiers="a"),
           "same name")


def test_unsupported_input():
    raises(DataError, lambda: Dataset([1, 2, 3], quasi_identifiers="a"), "list")


def test_every_error_is_a_veil_error():
    for exc in (veil.DataError, veil.ColumnError, veil.HierarchyError, veil.ParameterError):
        assert issubclass(exc, VeilError) and issubclass(exc, Exception)


# --------------------------------------------------------------------------- the bundled Adult

def test_reference_data_are_byte_exact_copies():
    # tests/data/SHA256SUMS holds the hash of each file as ARX ships it (tests/data/README.md): the
    # Adult veil bundles with its hierarchies, and the copies the tests read.
    def sha256(path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    lines = (TEST_DATA / "SHA256SUMS").read_text(encoding="ascii").splitlines()
    sums = {name: digest for digest, name in (line.split("  ") for line in lines)}
    for name, digest in sums.items():
        assert sha256(TEST_DATA.parents[1] / name) == digest, name
    assert sha256(bundled_adult_csv()) == sums["src/veil/resources/adult/adult.csv"]


def test_load_adult():
    ds = load_adult()
    assert ds.num_rows == 30_162
    assert ds.quasi_identifiers == list(ADULT_QUASI_IDENTIFIERS)
    assert ds.sensitive == ["occupation"]
    assert ds.insensitive == ["salary-class"]
    assert set(ds.generalizations) == set(ADULT_QUASI_IDENTIFIERS) | {"occupation"}
    assert ds.labels("education", 1)[ds.generalized_codes("education", 1)[0]] == "Undergraduate"
    small = load_adult(quasi_identifiers=["age"], sensitive=[])
    assert list(small.generalizations) == ["age"]


def test_a_csv_table_holds_its_role_columns_as_the_codes_with_the_same_texts(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("age;job;note\n30;;x\n25;NULL;y\n30;cook;z\n", encoding="utf-8")
    plain = read_table(csv).data
    ds = Dataset(csv, quasi_identifiers=["age"], sensitive=["job"], missing_values=("", "NULL"))
    age = ds.table.data.column("age")
    # age is verbatim: the table's column is the codes themselves, decoding to the file's texts.
    assert pa.types.is_dictionary(age.type)
    assert np.shares_memory(np.frombuffer(age.chunk(0).indices.buffers()[1], dtype=np.int32), ds.column("age").codes)
    for name in ("age", "job", "note"):
        assert ds.table.data.column(name).cast(pa.string()).to_pylist() == plain.column(name).to_pylist()
    # job's NULL is a missing marker, so its codes read '' there: the table keeps the reader's column.
    assert ds.labels("job").tolist() == ["cook", ""] and not ds.column("job").verbatim
