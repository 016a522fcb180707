"""The workbench's guards, through Flask's test client: the access token, the CSRF token, the Host
header and the bind address (the browser tests, test_workbench_browser.py, repeat the path)."""
from __future__ import annotations

import pytest

from tests.workbench_client import Bench
from veil.errors import ParameterError
from veil.workbench.security import TOKEN_COOKIE, check_bind, project_name


def test_no_page_answers_without_the_token(tmp_path):
    app = Bench(tmp_path / "d").app
    fresh = app.test_client()
    for url in ("/", "/static/workbench.css", "/p/x", "/?token=wrong"):
        response = fresh.get(url)
        assert response.status_code == 403, url
        assert "access token" in response.get_data(as_text=True)


def test_the_token_in_the_link_becomes_a_strict_cookie_and_leaves_the_address(tmp_path):
    app = Bench(tmp_path / "d").app
    fresh = app.test_client()
    response = fresh.get(f"/?token={app.config['VEIL_TOKEN']}&x=1")
    assert response.status_code == 303 and response.headers["Location"] == "/?x=1"
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(f"{TOKEN_COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert fresh.get("/").status_code == 200


def test_a_form_without_its_csrf_token_is_refused(bench):
    assert bench.post("/p/x/runs/20260101-000000-abcdef/cancel", csrf=False).status_code == 403
    wrong = bench.post("/p/x/runs/20260101-000000-abcdef/cancel", {"csrf_token": "nope"}, csrf=False)
    assert wrong.status_code == 403 and "reload the page" in bench.text(wrong)


def test_a_request_for_another_host_is_refused(bench):
    assert bench.get("/", headers={"Host": "evil.example:8765"}).status_code == 400
    assert bench.get("/", headers={"Host": "localhost:8765"}).status_code == 200


def test_every_page_forbids_outside_content(bench):
    policy = bench.get("/").headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.4", "::", "example.org"])
def test_a_non_local_bind_is_refused_unless_explicit(host):
    with pytest.raises(ParameterError, match="--allow-remote"):
        check_bind(host, allow_remote=False)
    check_bind(host, allow_remote=True)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_a_local_bind_needs_nothing(host):
    check_bind(host, allow_remote=False)


@pytest.mark.parametrize("name", ["../x", "a/b", "..", ".hidden", "a\\b", "", "x" * 65, "a\x00b"])
def test_a_project_name_cannot_be_a_path(name):
    with pytest.raises(ParameterError):
        project_name(name)


def test_a_server_on_every_interface_answers_the_names_other_machines_use(tmp_path):
    app = Bench(tmp_path / "d", hosts=("*",)).app
    other = {"Host": "192.168.1.4:8765"}
    client = app.test_client()
    assert client.get("/", headers=other).status_code == 403   # the token still guards it
    assert client.get(f"/?token={app.config['VEIL_TOKEN']}", headers=other).status_code == 303
    assert client.get("/", headers=other).status_code == 200
    local = Bench(tmp_path / "e", hosts=("192.168.1.4",)).app.test_client()
    assert local.get("/", headers={"Host": "evil.example"}).status_code == 400


def test_a_refusal_without_the_token_loads_nothing_else(tmp_path):
    app = Bench(tmp_path / "d").app
    html = app.test_client().get("/p/x").get_data(as_text=True)
    assert "access token" in html and "<link rel=\"stylesheet\"" not in html and "<script" not in html
