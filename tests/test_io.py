"""Reading tables and writing files atomically (veil.data.io)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers import one_sentence_error
from veil.data.io import SNIFF_BYTES, Table, from_frame, read_csv, read_parquet, read_table, sniff_delimiter
from veil.errors import DataError
from veil.output import write_file as atomic_write_text

ADULT_COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
                 "occupation", "salary-class"]


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def data_error(call, *words) -> str:
    return one_sentence_error(DataError, call, *words)


# --------------------------------------------------------------------------- the Adult file

@pytest.mark.parametrize("delimiter", [None, ";"], ids=["sniffed", "given"])
def test_adult_reads_with_crlf_and_semicolons(adult_csv, delimiter):
    table = read_csv(adult_csv, delimiter)
    assert table.kind == "csv"
    assert table.delimiter == ";"
    assert table.num_rows == 30_162
    assert table.columns == ADULT_COLUMNS
    assert table.data.schema.types == [pa.string()] * 9
    first = table.data.slice(0, 1).to_pylist()[0]
    assert first == {"sex": "Male", "age": "39", "race": "White", "marital-status": "Never-married",
                     "education": "Bachelors", "native-country": "United-States", "workclass": "State-gov",
                     "occupation": "Adm-clerical", "salary-class": "<=50K"}
    last = table.data.slice(30_161, 1).to_pylist()[0]
    assert last["age"] == "52" and last["salary-class"] == ">50K"
    # CRLF must not leak into the last column
    salary = table.data.column("salary-class").to_pandas().value_counts().to_dict()
    assert salary == {"<=50K": 22_654, ">50K": 7_508}


def test_read_table_dispatches_paths_and_frames(adult_csv, tmp_path):
    assert read_table(adult_csv).kind == "csv"
    assert read_table(str(adult_csv)).num_rows == 30_162
    frame = pd.DataFrame({"a": [1, 2]})
    for name in ("t.parquet", "t.pq", "T.PARQUET"):
        frame.to_parquet(tmp_path / name)
        table = read_table(tmp_path / name)
        assert table.kind == "parquet" and table.num_rows == 2
    assert read_table(frame).kind == "pandas"
    assert read_table(pl.DataFrame({"a": [1]})).kind == "polars"
    assert read_table(pa.table({"a": [1]})).kind == "arrow"


def test_arx_toy_table(arx_toy_csv):
    table = read_csv(arx_toy_csv)
    assert table.columns == ["age", "gender", "zipcode"]
    assert table.num_rows == 7
    assert table.data.column("zipcode").to_pylist() == ["81667", "81675", "81925", "81931", "81931",
                                                         "81931", "81931"]


# --------------------------------------------------------------------------- CSV dialects

@pytest.mark.parametrize("delimiter", [";", ",", "\t", "|"])
def test_delimiter_is_sniffed(tmp_path, delimiter):
    text = delimiter.join(["a", "b", "c"]) + "\r\n" + delimiter.join(["1", "x y", ""]) + "\r\n"
    table = read_csv(write(tmp_path, "t.csv", text.encode()))
    assert table.delimiter == delimiter
    assert table.data.to_pylist() == [{"a": "1", "b": "x y", "c": ""}]


def test_sniff_delimiter_units():
    assert sniff_delimiter("a;b;c\n1;2;3\n") == ";"
    assert sniff_delimiter("a,b\n1,2\n") == ","
    # a comma inside the fields of a ;-file does not fool it
    assert sniff_delimiter("name;city\n\"Smith, J\";Paris\nDoe, A;Rome\n") == ";"
    # the delimiter giving the same field count on every line wins over a more frequent one
    assert sniff_delimiter("a;b,c,d\n1;2\n") == ";"
    # one column: nothing splits, fall back to ","
    assert sniff_delimiter("name\nalice\nbob\n") == ","
    # ragged lines: fall back to the candidate most frequent in the header
    assert sniff_delimiter("a|b|c\n1|2\n") == "|"


def test_sniffing_ignores_a_line_cut_at_the_sample_end():
    # ',' splits every whole line into 3 fields; the header has more '|' than ','.
    header = "a|b|c|d,e,f\n"
    line = "1|" + "x" * 10_000 + ",3,4\n"
    sample = header + line * 6
    sample += "1|" + "y" * (SNIFF_BYTES - len(sample) - 2)  # the last line, cut before its commas
    assert len(sample) == SNIFF_BYTES and len(sample.splitlines()) < 20
    assert sniff_delimiter(sample) == ","
    # the same line when it is complete (short file) does count, and breaks ','
    assert sniff_delimiter(header + line + "1|2\n") == "|"


def test_quoted_fields_bom_and_empty_cells(tmp_path):
    data = b'\xef\xbb\xbfname;note;n\r\n"Smith; J";"said ""hi""";\r\nDoe;;7\r\n'
    table = read_csv(write(tmp_path, "q.csv", data))
    assert table.columns == ["name", "note", "n"]
    assert table.data.to_pylist() == [{"name": "Smith; J", "note": 'said "hi"', "n": ""},
                                      {"name": "Doe", "note": "", "n": "7"}]
    # empty cells are text "", not nulls: the missing-value policy decides later
    assert table.data.column("n").null_count == 0


def test_cells_stay_text(tmp_path):
    table = read_csv(write(tmp_path, "t.csv", b"zip,x\n02139,1.50\n00501,NULL\n"))
    assert table.data.column("zip").to_pylist() == ["02139", "00501"]
    assert table.data.column("x").to_pylist() == ["1.50", "NULL"]


def test_blank_lines_are_skipped(tmp_path):
    table = read_csv(write(tmp_path, "t.csv", b"a;b\n1;2\n\n3;4\n"))
    assert table.num_rows == 2


# --------------------------------------------------------------------------- CSV errors

def test_missing_file(tmp_path):
    data_error(lambda: read_csv(tmp_path / "nope.csv"), "nope.csv", "does not exist")
    data_error(lambda: read_table(tmp_path / "nope.csv"), "does not exist")


def test_folder_instead_of_file(tmp_path):
    data_error(lambda: read_csv(tmp_path), "folder")


def test_row_with_too_many_fields_names_the_line(tmp_path):
    path = write(tmp_path, "r.csv", b"a;b;c\n1;2;3\n4;5;6;7\n8;9;1\n")
    data_error(lambda: read_csv(path), "line 3", "4 fields", "3", "r.csv")


def test_row_with_too_few_fields_names_the_line(tmp_path):
    path = write(tmp_path, "r.csv", b"a;b;c\r\n1;2;3\r\n4;5;6\r\n4;5;6\r\n7;8\r\n")
    data_error(lambda: read_csv(path), "line 5", "2 fields", "r.csv")


def test_first_ragged_line_is_named(tmp_path):
    path = write(tmp_path, "r.csv", b"a,b,c\n1,2,3\n1,2\n1,2,3\n1,2,3,4\n")
    msg = data_error(lambda: read_csv(path, delimiter=","), "line 3")
    assert "line 5" not in msg


def test_ragged_line_after_the_sniffed_sample(tmp_path):
    body = b"a;b\n" + b"1;2\n" * (SNIFF_BYTES // 4 + 10) + b"1;2;3\n"
    line = body.count(b"\n")
    path = write(tmp_path, "r.csv", body)
    data_error(lambda: read_csv(path), f"line {line}", "3 fields")


@pytest.mark.parametrize("data", [
    "name;city\nJosé;Zürich\n".encode("latin-1"),
    "name;city\nab;cd\nef;Zürich".encode("latin-1"),  # the bad byte is in the last 4 bytes
    b"name;city\n" + b"ab;cd\n" * (SNIFF_BYTES // 6 + 10) + "ef;Zürich\n".encode("latin-1"),
], ids=["early", "at-the-end", "after-the-sample"])
def test_non_utf8_file(tmp_path, data):
    data_error(lambda: read_csv(write(tmp_path, "l.csv", data)), "l.csv", "UTF-8")


@pytest.mark.parametrize("data", [b"", b"\n\n", b"  \r\n"], ids=["empty", "newlines", "blank"])
def test_empty_file(tmp_path, data):
    data_error(lambda: read_csv(write(tmp_path, "e.csv", data)), "e.csv", "empty")


def test_header_only_file_is_an_empty_table(tmp_path):
    data_error(lambda: read_csv(write(tmp_path, "h.csv", b"a;b\r\n")), "h.csv", "no records")


def test_header_only_file_without_final_newline(tmp_path):
    data_error(lambda: read_csv(write(tmp_path, "h.csv", b"a;b")), "h.csv", "no records")


def test_duplicate_header_names(tmp_path):
    data_error(lambda: read_csv(write(tmp_path, "d.csv", b"a;b;a\n1;2;3\n")), "'a'", "twice")


def test_empty_header_name(tmp_path):
    data_error(lambda: read_csv(write(tmp_path, "d.csv", b"a;;c\n1;2;3\n")), "column 2", "no name")


# --------------------------------------------------------------------------- Parquet and frames

def test_parquet_roundtrip_keeps_types(tmp_path):
    frame = pd.DataFrame({"age": [39, 50, 38], "sex": ["Male", None, "Female"], "w": [1.5, np.nan, 2.0]})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    table = read_parquet(path)
    assert table.kind == "parquet" and table.num_rows == 3
    assert table.columns == ["age", "sex", "w"]
    assert pa.types.is_integer(table.data.schema.field("age").type)
    assert table.data.column("sex").to_pylist() == ["Male", None, "Female"]


def test_parquet_errors(tmp_path):
    data_error(lambda: read_parquet(tmp_path / "nope.parquet"), "nope.parquet", "does not exist")
    bad = write(tmp_path, "bad.parquet", b"not parquet at all")
    data_error(lambda: read_table(bad), "bad.parquet", "Parquet")
    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"a": pa.array([], pa.int64())}), empty)
    data_error(lambda: read_table(empty), "empty.parquet", "no records")


def test_from_frame_keeps_the_source_and_does_not_modify_it():
    frame = pd.DataFrame({"a": [1, 2, None], "b": ["x", None, "z"], 3: [True, False, True]})
    before = frame.copy(deep=True)
    table = from_frame(frame)
    assert table.source is frame
    assert table.columns == ["a", "b", "3"]
    assert table.data.column("b").to_pylist() == ["x", None, "z"]
    pd.testing.assert_frame_equal(frame, before)

    pframe = pl.DataFrame({"a": [1, None], "b": ["x", "y"]})
    pbefore = pframe.clone()
    ptable = from_frame(pframe)
    assert ptable.source is pframe and ptable.kind == "polars"
    assert pframe.equals(pbefore)


def test_frame_errors():
    data_error(lambda: from_frame(pd.DataFrame({"a": []})), "no records")
    data_error(lambda: from_frame(pl.DataFrame({"a": []})), "no records")
    data_error(lambda: from_frame(pd.DataFrame([[1, 2]], columns=["a", "a"])), "same name")
    data_error(lambda: read_table(42), "int", "DataFrame")
    data_error(lambda: read_table({"a": [1]}), "dict")


def test_table_properties():
    t = Table(pa.table({"x": [1, 2, 3], "y": ["a", "b", "c"]}), "arrow")
    assert t.columns == ["x", "y"] and t.num_rows == 3 and t.delimiter == ","


# --------------------------------------------------------------------------- atomic writes

def test_atomic_write_creates_exact_text_and_leaves_nothing_else(tmp_path):
    target = tmp_path / "out.csv"
    atomic_write_text(target, "a;b\r\n1;é\r\n")
    assert target.read_bytes() == "a;b\r\n1;é\r\n".encode("utf-8")  # no newline translation
    assert os.listdir(tmp_path) == ["out.csv"]


def test_atomic_write_replaces_an_existing_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    atomic_write_text(str(target), "new")
    assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_atomic_write_failure_leaves_no_temporary_and_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "ok \ud800 not encodable")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_atomic_write_failure_on_a_new_file_leaves_nothing(tmp_path):
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(tmp_path / "new.txt", "\ud800")
    assert os.listdir(tmp_path) == []


def test_atomic_write_refuses_a_missing_folder(tmp_path):
    data_error(lambda: atomic_write_text(tmp_path / "nope" / "out.txt", "x"), "nope", "does not exist")
    assert os.listdir(tmp_path) == []


def test_atomic_write_to_a_relative_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    atomic_write_text("rel.txt", "x")
    assert (tmp_path / "rel.txt").read_text() == "x"
    assert os.listdir(tmp_path) == ["rel.txt"]


def test_atomic_write_onto_a_folder_leaves_no_temporary(tmp_path):
    (tmp_path / "sub").mkdir()
    with pytest.raises(Exception):
        atomic_write_text(tmp_path / "sub", "x")
    assert os.listdir(tmp_path) == ["sub"]
    assert os.listdir(tmp_path / "sub") == []


def test_atomic_write_onto_a_folder_is_a_data_error(tmp_path):
    (tmp_path / "sub").mkdir()
    data_error(lambda: atomic_write_text(tmp_path / "sub", "x"), "sub", "folder")
