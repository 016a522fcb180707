"""A signed-in test client of the workbench over a fresh data folder (Flask's test client: no
server, no browser), shared by the workbench's page tests."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

flask = pytest.importorskip("flask", reason="the workbench needs the serve extra (Flask)")

from veil.workbench import create_app
from veil.workbench.security import CSRF_FIELD

ADULT_SUBSET = Path(__file__).parent / "data" / "adult_subset.csv"   # 3,016 rows, ;-separated


class Bench:
    """The application, a client holding the access cookie, and the CSRF token for its forms."""

    def __init__(self, data_dir: Path, **options):
        self.data_dir = Path(data_dir)
        self.app = create_app(self.data_dir, **options)
        self.client = self.app.test_client()
        response = self.client.get(f"/?token={self.app.config['VEIL_TOKEN']}")
        assert response.status_code == 303
        self.csrf = self.app.config["VEIL_CSRF"]

    @property
    def workspace(self):
        return self.app.extensions["veil_workspace"]

    @property
    def jobs(self):
        return self.app.extensions["veil_jobs"]

    def get(self, url: str, **options):
        return self.client.get(url, **options)

    def post(self, url: str, data: dict | None = None, *, csrf: bool = True, **options):
        """POST a form, with its CSRF token unless ``csrf`` is false."""
        data = dict(data or {})
        if csrf:
            data.setdefault(CSRF_FIELD, self.csrf)
        return self.client.post(url, data=data, **options)

    def text(self, response) -> str:
        return response.get_data(as_text=True)


def field_error(html: str, field: str) -> str | None:
    """The message shown next to ``field`` (the _forms.html.j2 ``error`` macro), if any."""
    found = re.search(rf'id="error-{re.escape(field)}"[^>]*>(.*?)</p>', html, re.DOTALL)
    return found.group(1).strip() if found else None
