"""MkDocs hook: every character of a code block takes one column, whatever font draws it.

The command outputs in the guides are tables drawn with box characters, and they hold ℓ, δ, β, ∞,
ε, ≥, →. A reader's monospace font may lack some of them; the browser then draws those from
another font, whose characters are wider or narrower, and the table's columns no longer line up.
Here every character beyond ASCII inside a ``<pre>`` block is put in a ``<span class="one-column">``,
which the site's stylesheet makes exactly one character wide (``1ch`` of the code font): the
glyph may come from any font, the column it takes does not change.
"""

from __future__ import annotations

import re

PRE = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.S)
TAG = re.compile(r"(<[^>]*>)")
WIDE = re.compile(r"[^\x00-\x7f]")


def one_column(html: str) -> str:
    """``html`` with each non-ASCII character of its ``<pre>`` blocks in a one-column span (the
    text between tags only; tags, attributes and entities are left alone)."""

    def block(found: re.Match) -> str:
        parts = TAG.split(found.group(2))
        for i in range(0, len(parts), 2):   # the text between the tags
            parts[i] = WIDE.sub(lambda c: f'<span class="one-column">{c.group(0)}</span>', parts[i])
        return found.group(1) + "".join(parts) + found.group(3)

    return PRE.sub(block, html)


def on_page_content(html: str, **kwargs) -> str:
    return one_column(html)
