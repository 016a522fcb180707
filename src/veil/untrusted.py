"""Text that came from outside veil (a column name, a cell, a path, a line of a query file) made
safe to show a person: on a terminal, in one line of an error message, or in a report's page.

Such text can hold what a terminal or a page obeys instead of showing: control characters (C0,
DEL and C1: ``ESC ]0;title BEL`` renames the terminal's window, ``ESC [2J`` clears it), the
bidirectional controls of Unicode (U+202E RIGHT-TO-LEFT OVERRIDE shows the text after it, the
message's own words included, in reverse), line and paragraph separators (a second line that
looks like veil's), and lone surrogates (bytes of a file name that are not UTF-8, which no
terminal encoding can print). It can also be of any length: a 20 MB cell quoted whole is a 20 MB
error line.

* :func:`shown` writes each such character as its escape (``\\x1b``, ``\\u202e``), as Python's
  ``repr`` does, and shortens the text to a bound with an ellipsis;
* :func:`quoted` is the text shortened and quoted as ``repr`` quotes it (``'age'``), for a
  message that names what the user gave;
* :func:`safe_sentence` is the last guard of a whole message: every such character escaped, each
  long quoted part shortened, and the sentence kept to :data:`SENTENCE_LIMIT` characters;
* :func:`without_bidi_controls` escapes the bidirectional controls alone (a report isolates data
  text with HTML, and keeps its legitimate right-to-left letters).
"""

from __future__ import annotations

import re
import unicodedata

#: Characters of a value a message quotes before it is cut with an ellipsis.
QUOTE_LIMIT = 80
#: Characters of a whole message (an error sentence) before its middle is cut.
SENTENCE_LIMIT = 1000
ELLIPSIS = "…"

#: Unicode's explicit bidirectional formatting characters (UAX #9): ALM, LRM, RLM, the embeddings,
#: overrides and their pop (U+202A–U+202E), and the isolates (U+2066–U+2069).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_SEPARATORS = frozenset("\u2028\u2029")
_BIDI = re.compile("[" + "".join(sorted(BIDI_CONTROLS)) + "]")
# A part of a message quoted as repr quotes: '…' or "…", backslash escapes inside.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def _unsafe(char: str) -> bool:
    if char in BIDI_CONTROLS or char in _SEPARATORS:
        return True
    return unicodedata.category(char) in ("Cc", "Cs")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _cut(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:max(limit - 1, 0)] + ELLIPSIS


def shown(text: object, limit: int | None = None, keep: str = "") -> str:
    """``text`` as a terminal or a message may show it.

    Args:
        text: any text (anything else is shown as ``str`` shows it).
        limit: the most characters of ``text`` kept; a longer text ends in an ellipsis (…) after
            ``limit - 1`` of them. ``None`` keeps it whole.
        keep: control characters left as they are (``"\n"`` for text printed on several lines).

    Returns:
        The text, each control character (C0, DEL, C1), bidirectional control, line or paragraph
        separator and lone surrogate written as its escape (``\\x1b``, ``\\u202e``); nothing else
        is changed.
    """
    text = _cut(str(text), limit)
    if all(not _unsafe(c) or c in keep for c in text):
        return text
    return "".join(_escape(c) if _unsafe(c) and c not in keep else c for c in text)


def quoted(text: object, limit: int = QUOTE_LIMIT) -> str:
    """``text`` quoted for a message, as ``repr`` quotes it (``'age'``), cut to ``limit``
    characters with an ellipsis; every character ``repr`` would not print is escaped."""
    return repr(_cut(str(text), limit))


def safe_sentence(sentence: str, limit: int = SENTENCE_LIMIT, quote_limit: int = 4 * QUOTE_LIMIT) -> str:
    """A message made safe to print as one bounded line, whoever built it.

    Every character :func:`shown` escapes is escaped; a quoted part longer than ``quote_limit``
    characters is cut with an ellipsis inside its quotes; a sentence still longer than ``limit``
    keeps its beginning and its end (what to fix) around an ellipsis.
    """
    text = shown(sentence)

    def shorten(match: re.Match) -> str:
        part = match.group(0)
        if len(part) <= quote_limit + 2:
            return part
        # Escapes were written before: cutting one in half leaves harmless text.
        return part[0] + part[1:quote_limit] + ELLIPSIS + part[-1]

    text = _QUOTED.sub(shorten, text)
    if len(text) > limit:
        tail = limit // 3
        text = text[:limit - tail - 1] + ELLIPSIS + text[-tail:]
    return text


def without_bidi_controls(text: object) -> str:
    """``text`` with each bidirectional control written as its escape (``\\u202e``), every other
    character as it is."""
    return _BIDI.sub(lambda m: _escape(m.group(0)), str(text))


__all__ = ["BIDI_CONTROLS", "QUOTE_LIMIT", "SENTENCE_LIMIT", "quoted", "safe_sentence", "shown",
           "without_bidi_controls"]
