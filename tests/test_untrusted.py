"""Text from outside made safe to show (veil.untrusted), and files a user names opened as regular
files within a bound (veil.inputs)."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veil.errors import ConfigError, DataError
from veil.inputs import check_regular_file, open_regular_file, read_bytes, read_text
from veil.untrusted import (BIDI_CONTROLS, ELLIPSIS, QUOTE_LIMIT, SENTENCE_LIMIT, quoted, safe_sentence, shown,
                            without_bidi_controls)

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


# ------------------------------------------------------------------ veil.untrusted

def test_shown_escapes_what_a_terminal_obeys_and_keeps_the_rest():
    assert shown("a\x1b]0;PWNED\x07b") == "a\\x1b]0;PWNED\\x07b"
    assert shown("\u202eevil") == "\\u202eevil"
    assert shown("caf\udce9") == "caf\\udce9"          # a byte of a file name that is not UTF-8
    assert shown("\x9b2J") == "\\x9b2J"                 # C1's one-byte CSI
    assert shown("Zürich, 東京, שלום") == "Zürich, 東京, שלום"
    assert shown("two\nlines\tand tab", keep="\n\t") == "two\nlines\tand tab"
    assert shown("two\nlines") == "two\\x0alines"


def test_quoted_quotes_like_repr_and_cuts_long_text():
    assert quoted("age") == "'age'" == repr("age")
    assert quoted("it's") == repr("it's")
    long = quoted("x" * 1000)
    assert long == "'" + "x" * (QUOTE_LIMIT - 1) + ELLIPSIS + "'"
    assert quoted("\x1b[2J") == "'\\x1b[2J'"


def test_safe_sentence_cuts_a_long_quoted_part_and_keeps_the_end():
    message = safe_sentence("column 'a' has the value '" + "y" * 5000 + "'; fix row 3.")
    assert len(message) < 400 and message.endswith("; fix row 3.") and ELLIPSIS in message
    assert len(safe_sentence("z" * 10_000)) == SENTENCE_LIMIT


@given(st.text(max_size=3000))
def test_a_safe_sentence_holds_nothing_a_terminal_obeys_and_is_bounded(text):
    message = safe_sentence(text)
    assert not UNSAFE.search(message)
    assert len(message) <= SENTENCE_LIMIT


@given(st.text(max_size=300), st.integers(min_value=1, max_value=200))
def test_shown_is_bounded_and_safe(text, limit):
    result = shown(text, limit)
    assert not UNSAFE.search(result)
    assert len(result) <= 6 * limit  # an escape is at most six characters
    if len(text) <= limit and not UNSAFE.search(text):
        assert result == text


@given(st.text(max_size=300))
def test_without_bidi_controls_leaves_no_bidi_control_and_nothing_else_changed(text):
    result = without_bidi_controls(text)
    assert not set(result) & BIDI_CONTROLS
    if not set(text) & BIDI_CONTROLS:
        assert result == text


# ------------------------------------------------------------------ veil.inputs

@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_a_regular_file_is_read(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("één\n", encoding="utf-8")
    assert read_text(path) == "één\n"
    assert read_bytes(path) == "één\n".encode("utf-8")
    assert check_regular_file(path) == path


@pytest.mark.parametrize("special, words", [("fifo", "a named pipe (FIFO)"), ("/dev/zero", "a device"),
                                            ("/dev/null", "a device")])
def test_what_is_not_a_regular_file_is_refused_without_reading(special, words, fifo):
    path = fifo if special == "fifo" else special
    for read in (read_text, read_bytes, check_regular_file, open_regular_file):
        with pytest.raises(DataError, match=re.escape(words)):
            read(path)


def test_a_missing_path_and_a_folder_are_named(tmp_path):
    with pytest.raises(ConfigError, match="configuration file '.*nope' does not exist; check the path"):
        read_text(tmp_path / "nope", "configuration file", error=ConfigError)
    with pytest.raises(DataError, match="is a folder"):
        read_text(tmp_path)
    with pytest.raises(FileNotFoundError):
        open_regular_file(tmp_path / "nope", keep_os_errors=True)
    with pytest.raises(IsADirectoryError):
        open_regular_file(tmp_path, keep_os_errors=True)
    with pytest.raises(DataError, match="named pipe"):
        os.mkfifo(tmp_path / "p")
        open_regular_file(tmp_path / "p", keep_os_errors=True)


def test_a_file_past_the_bound_is_refused(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 1001)
    assert read_bytes(path, limit=1001) == b"x" * 1001
    with pytest.raises(DataError, match="holds more than 1,000 bytes"):
        read_bytes(path, limit=1000)


def test_text_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(DataError, match="is not UTF-8 text"):
        read_text(path)
