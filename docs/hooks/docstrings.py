"""MkDocs hook: how veil's docstrings read on the site.

The docstrings are Google style with Sphinx cross-reference roles (``:class:`Release```,
``:meth:`~UtilityMetric.value```), which Markdown shows as the role's name beside the code. The
role's name is dropped, and ``~`` keeps only the last part of the name, as Sphinx prints it.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj|const):<code>(~?)([^<]*)</code>")


def _role(match: re.Match) -> str:
    name = match.group(2)
    return f"<code>{name.rsplit('.', 1)[-1] if match.group(1) else name}</code>"


def on_page_content(html: str, page, config, files) -> str:
    return ROLE.sub(_role, html)
