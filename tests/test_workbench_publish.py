"""The workbench's publish page (issue 30): a release through the ledger's gate, the decision and its
reasons kept as publication.json, and the ledger read-only (history, budgets, verification).

The demo's pair on the 3,016-row Adult subset (tests/workbench_releases_fixture.py): the release
optimized for loss is published; the one optimized for discernibility is refused, because together
with the first it pins one person's occupation.
"""
from __future__ import annotations

import json
import re
from html import unescape

import pytest

from tests.workbench_client import Bench, field_error
from tests.workbench_releases_fixture import (
    HTML_COLUMNS,
    HTML_VALUES,
    html_config,
    make_html_project,
    make_project,
    make_release,
)
from veil.ledger import Ledger

HTML_LABEL = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    bench = Bench(tmp_path_factory.mktemp("publish") / "data")
    project = make_project(bench.workspace, "adult")
    make_release(project, "r1", metric="loss", label="first", report=False)
    make_release(project, "r2", metric="discernibility", label=HTML_LABEL, report=False)
    yield bench, project
    bench.jobs.stop_all()


@pytest.fixture
def fresh(made, tmp_path):
    """A bench over a new data folder (no ledger) holding copies of the module's two releases."""
    import shutil

    bench = Bench(tmp_path / "data")
    project = make_project(bench.workspace, "adult")
    for release_id in ("r1", "r2"):
        shutil.copytree(made[1].release_dir(release_id), project.releases_dir / release_id)
    yield bench, project
    bench.jobs.stop_all()


def section(html: str, id_: str) -> str:
    start = html.index(f'id="{id_}"')
    return html[start:html.index("</section>", start) if "</section>" in html[start:] else None]


def test_before_any_publication_the_page_says_there_is_no_ledger(fresh):
    bench, _ = fresh
    html = bench.text(bench.get("/p/adult/publish"))
    assert 'id="publish-form"' in html and 'select name="release"' in html and 'id="publish"' in html
    assert 'value="r1"' in html and 'value="r2"' in html
    assert "No ledger yet" in section(html, "verification") and 'id="decision"' not in html
    assert not bench.workspace.ledger_path.exists()


def test_a_form_without_its_csrf_token_is_refused_and_nothing_is_recorded(fresh):
    bench, project = fresh
    response = bench.post("/p/adult/publish", {"release": "r1"}, csrf=False)
    assert response.status_code == 403
    assert not bench.workspace.ledger_path.exists()
    assert not (project.release_dir("r1") / "publication.json").exists()


@pytest.mark.parametrize("release", ["", "nope", "../r1", "r1/../r2"])
def test_an_unknown_release_is_refused_next_to_its_field(fresh, release):
    bench, _ = fresh
    response = bench.post("/p/adult/publish", {"release": release})
    assert response.status_code == 400
    assert field_error(bench.text(response), "release")
    assert not bench.workspace.ledger_path.exists()


def test_publish_the_first_then_the_second_is_refused_with_its_reasons(made):
    bench, project = made
    response = bench.post("/p/adult/publish", {"release": "r1"})
    assert response.status_code == 303 and response.headers["Location"].endswith("/p/adult/publish?release=r1")
    html = bench.text(bench.get(response.headers["Location"]))
    decision = re.search(r'id="decision"[^>]*>(.*?)</p>', html, re.DOTALL).group(1)
    assert "published" in decision and "refused" not in decision
    assert 'id="reasons"' in html
    first = json.loads((project.release_dir("r1") / "publication.json").read_text(encoding="utf-8"))
    assert first["published"] is True and first["population"] == "adult"

    response = bench.post("/p/adult/publish", {"release": "r2"})
    assert response.status_code == 303
    html = bench.text(bench.get("/p/adult/publish?release=r2"))
    decision = re.search(r'id="decision"[^>]*>(.*?)</p>', html, re.DOTALL).group(1)
    assert "refused" in decision
    reasons = re.findall(r"<li[^>]*>(.*?)</li>", section(html, "reasons").split("</ul>")[0], re.DOTALL)
    assert any("intersected with release 1" in unescape(r) and "occupation" in r for r in reasons)
    second = json.loads((project.release_dir("r2") / "publication.json").read_text(encoding="utf-8"))
    assert second["published"] is False and second["reasons"]

    # the ledger, read-only: its history lists both decisions, it verifies, the population is listed
    history = section(html, "ledger-history")
    assert "published release 1" in history and "refused" in history and "adult release r1" in history
    verification = section(html, "verification")
    assert "verified" in verification and "problems" not in verification
    assert "adult" in section(html, "budgets") and "no DP budget" in section(html, "budgets")
    ledger = Ledger(str(bench.workspace.ledger_path))
    try:
        assert [e["action"] for e in ledger.history("adult")][-2:] == ["publish", "refuse"]
    finally:
        ledger.close()

    # the releases page says which was published and which refused
    listing = bench.text(bench.get("/p/adult/releases"))
    assert "published" in listing and "refused" in listing

    # publishing the first again records nothing new
    entries = len(_history(bench))
    assert bench.post("/p/adult/publish", {"release": "r1"}).status_code == 303
    html = bench.text(bench.get("/p/adult/publish?release=r1"))
    assert "published already" in html and len(_history(bench)) == entries


def _history(bench) -> list:
    ledger = Ledger(str(bench.workspace.ledger_path))
    try:
        return ledger.history(None)
    finally:
        ledger.close()


def test_a_budget_is_shown_total_spent_and_left(made):
    from veil.dp.budget import Budget

    bench, _ = made
    ledger, _ = Ledger.init(str(bench.workspace.ledger_path))
    try:
        ledger.add_population("survey", budget=Budget(1.5, 1e-6))
    finally:
        ledger.close()
    budgets = section(bench.text(bench.get("/p/adult/publish")), "budgets")
    row = re.search(r"<td>survey</td>(.*?)</tr>", budgets, re.DOTALL).group(1)
    numbers = re.findall(r'<td class="num">([^<]*)</td>', row)
    assert numbers[2:] == ["1.5", "0", "1.5", "1e-06", "0", "1e-06"]


def test_html_in_a_label_is_escaped(made):
    bench, _ = made
    html = bench.text(bench.get("/p/adult/publish"))
    assert HTML_LABEL not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_a_tampered_ledger_shows_its_problems(tmp_path):
    import sqlite3

    bench = Bench(tmp_path / "data")
    make_project(bench.workspace, "adult")
    ledger, _ = Ledger.init(str(bench.workspace.ledger_path))
    try:
        ledger.add_population("adult")
    finally:
        ledger.close()
    assert "verified" in section(bench.text(bench.get("/p/adult/publish")), "verification")
    with sqlite3.connect(bench.workspace.ledger_path) as db:
        db.execute("UPDATE log SET payload = replace(payload, 'adult', 'adulx') WHERE seq = 2")
    response = bench.get("/p/adult/publish")
    assert response.status_code == 200
    html = bench.text(response)
    assert "problems found" in section(html, "verification") and "entry 2" in section(html, "verification")


def test_two_publications_at_once_are_serialized_by_the_ledger(fresh):
    """Both releases submitted at the same moment, each by its own client (the server answers
    requests in threads): the ledger decides one after the other, so exactly one is published and
    the other, checked against it, refused; the ledger verifies."""
    import threading

    bench, project = fresh
    clients, answers = [], {}
    for _ in range(2):
        client = bench.app.test_client()
        client.get(f"/?token={bench.app.config['VEIL_TOKEN']}")
        clients.append(client)
    start = threading.Barrier(2)

    def submit(client, release_id):
        start.wait()
        answers[release_id] = client.post("/p/adult/publish", data={"release": release_id, "csrf_token": bench.csrf})

    threads = [threading.Thread(target=submit, args=(c, r)) for c, r in zip(clients, ("r1", "r2"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {r: a.status_code for r, a in answers.items()} == {"r1": 303, "r2": 303}
    decisions = [json.loads((project.release_dir(r) / "publication.json").read_text(encoding="utf-8"))
                 for r in ("r1", "r2")]
    assert sorted(d["published"] for d in decisions) == [False, True]
    ledger = Ledger(str(bench.workspace.ledger_path))
    try:
        assert ledger.verify().ok
        assert sorted(e["action"] for e in ledger.history("adult") if e["action"] in ("publish", "refuse")) == \
            ["publish", "refuse"]
    finally:
        ledger.close()


def test_html_in_column_names_values_and_labels_is_escaped_in_decisions_and_history(tmp_path):
    bench = Bench(tmp_path / "data")
    try:
        project = make_html_project(bench.workspace)
        make_release(project, "h1", document=html_config("loss"), label=HTML_VALUES[0], report=False)
        make_release(project, "h2", document=html_config("discernibility"), label=HTML_VALUES[1], report=False)
        for release_id in ("h1", "h2"):
            assert bench.post("/p/html/publish", {"release": release_id}).status_code == 303
            html = bench.text(bench.get(f"/p/html/publish?release={release_id}"))
            assert 'id="decision"' in html and 'id="ledger-history"' in html
            for raw in HTML_COLUMNS + HTML_VALUES:
                assert raw not in html, raw
        assert "&lt;i&gt;disease&lt;/i&gt;" in html   # the sensitive column, named in the re-check
    finally:
        bench.jobs.stop_all()
