"""Reading a CSV file for DP queries (``malformed="drop"``): every line is a record or is left
out, by a rule that looks at that line alone (:mod:`veil.data.lenient`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from veil.data import lenient
from veil.data.io import read_csv, read_table
from veil.errors import DataError, ParameterError

# Pieces of a line: text, numbers, delimiters, quotes (open, closed, doubled, mid-field), bytes
# that are not UTF-8 and a two-byte character.
PIECES = [b"a", b"17", b" ", b",", b";", b"\t", b'"', b'""', b'"x,y"', b'x"y', b"\xff", b"\xc3\xa9", b"\xc3"]
lines = st.lists(st.lists(st.sampled_from(PIECES), max_size=8).map(b"".join), max_size=12)
HEADERS = [b"a,b,c", b"a;b", b"a\tb\tc\td", b"name", b'"a,1",b']


def read(tmp_path: Path, content: bytes, name: str = "t.csv"):
    path = tmp_path / name
    path.write_bytes(content)
    table = read_csv(path, allow_empty=True, malformed="drop")
    return table.delimiter, table.data.to_pylist()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(HEADERS), lines, st.sampled_from([b"\n", b"\r\n", b"\r"]), st.booleans())
@example(b"a,b,c", [b'1,"x', b"2,3,4", b'5,6,"7'], b"\n", False)  # an open quote swallowed the lines after it
@example(b"a,b,c", [b"1,\xff,3,4", b"2,3,4"], b"\n", False)  # Arrow failed on a ragged line that is not UTF-8
def test_each_line_is_read_on_its_own(tmp_path, header, body, line_end, small_blocks):
    # The records read from a file are the records each of its lines gives alone, in order, and
    # the delimiter is the header's: no line decides how another one is read, so adding or removing
    # one line adds or removes at most one record (every query's sensitivity holds).
    with mock.patch.object(lenient, "BLOCK_SIZE", 64 if small_blocks else lenient.BLOCK_SIZE):
        delimiter, whole = read(tmp_path, header + line_end + line_end.join(body) + line_end)
        alone = []
        for line in body:
            each, rows = read(tmp_path, header + line_end + line + line_end, "one.csv")
            assert each == delimiter
            alone += rows
    assert whole == alone
    assert read(tmp_path, header + line_end, "header.csv")[0] == delimiter


def test_malformed_lines_are_left_out_and_the_others_read_as_written(tmp_path):
    content = (b'name,age\nann,31\nbob\ncid,40,extra\n"dee, jr",52\neve,\xff\n\nfay,"6\ngus,70\nhal,"8""\n'
               b'ivy,"9"x\n')
    assert read(tmp_path, content) == (",", [
        {"name": "ann", "age": "31"}, {"name": "dee, jr", "age": "52"}, {"name": "fay", "age": "6"},
        {"name": "gus", "age": "70"}, {"name": "hal", "age": '8"'}, {"name": "ivy", "age": "9x"}])


def test_the_delimiter_comes_from_the_header_alone(tmp_path):
    # Sniffed from the first lines, ';' would win here: the records split into more fields by it.
    content = b"a,b\n1;2;3,4\n5;6;7,8\n"
    assert read(tmp_path, content) == (",", [{"a": "1;2;3", "b": "4"}, {"a": "5;6;7", "b": "8"}])


def test_nothing_reaches_the_terminal(tmp_path):
    # Arrow decodes a skipped line's text before handing it over; for a line that is not UTF-8 it
    # used to print an "Exception ignored" report on standard error. (In a process of its own:
    # pytest catches such reports itself.)
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1,\xff,3\n4,5\n")
    code = ("import sys; from veil.data.io import read_csv; "
            "print(read_csv(sys.argv[1], malformed='drop').data.to_pylist())")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert done.stdout == "[{'a': '4', 'b': '5'}]\n" and done.stderr == ""


def test_a_table_whose_every_line_is_malformed_is_empty(tmp_path):
    assert read(tmp_path, b"a,b\n1\n2,3,4\n\xff,\xfe\n") == (",", [])


@pytest.mark.parametrize("content, words", [
    (b"", "is empty"),
    (b"\n\n", "is empty"),
    (b"\xffa,b\n1,2\n", "header row of"),
    (b'a,"b\n1,2\n', "opens a quote it does not close"),
    (b"a,a\n1,2\n", "appears twice"),
    (b"a," + b"b" * 70_000, "longer than"),
])
def test_the_header_is_the_curators_to_fix(tmp_path, content, words):
    with pytest.raises(DataError, match=words):
        read(tmp_path, content)


def test_an_empty_table_is_refused_unless_allowed(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1\n")
    with pytest.raises(DataError, match="no records"):
        read_csv(path, malformed="drop")


def test_strict_reading_still_refuses_and_names_the_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1,2\n3\n")
    with pytest.raises(DataError, match="line 3 of"):
        read_table(path, allow_empty=True)
    with pytest.raises(ParameterError, match="'refuse' or 'drop'"):
        read_table(path, malformed="skip")
