"""Helpers shared by the test modules."""

from __future__ import annotations

import pytest

from veil.errors import VeilError


def one_sentence_error(exc_type, call, *words) -> str:
    """Run ``call``, expect a one-sentence ``exc_type`` (a VeilError) whose message holds every
    word, and return the message."""
    with pytest.raises(exc_type) as info:
        call()
    msg = str(info.value)
    assert isinstance(info.value, VeilError)
    assert "\n" not in msg, f"not one sentence: {msg!r}"
    for word in words:
        assert word in msg, f"{word!r} not in {msg!r}"
    return msg
