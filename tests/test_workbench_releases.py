"""The workbench's release pages (issue 30): the list, one release, the comparison, the report with a
policy of its own, the downloads (never the private file) and the attack task.

The release folders are made once per module as ``veil anonymize`` makes them
(tests/workbench_releases_fixture.py): the demo's pair on the 3,016-row Adult subset.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.workbench_client import Bench
from tests.workbench_releases_fixture import (
    HTML_COLUMNS,
    HTML_VALUES,
    html_config,
    make_html_project,
    make_project,
    make_release,
)
from veil.errors import DataError
from veil.workbench.pages.releases import (
    DOWNLOADS,
    LATTICE_ROWS,
    ReleaseView,
    lattice_figure,
    lattice_rows,
    report_policy,
)
from veil.workbench.tasks import attack as attack_task

HTML_LABEL = '<script>alert("x")</script><b>bold</b>'


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A bench with one project and three releases: loss, discernibility (stars for suppressed
    records, no search.json) and one whose label is HTML."""
    bench = Bench(tmp_path_factory.mktemp("releases") / "data")
    project = make_project(bench.workspace)
    make_release(project, "r1", metric="loss", label="first")
    make_release(project, "r2", metric="discernibility", label="second", suppressed="star", search=False)
    make_release(project, "r3", metric="loss", label=HTML_LABEL)
    yield bench, project
    bench.jobs.stop_all()


class Progress:
    def __init__(self):
        self.stages = []

    def stage(self, text, total=0):
        self.stages.append(text)

    def __call__(self, done, total):
        pass


def test_the_list_shows_every_release_with_a_checkbox(made):
    bench, _ = made
    html = bench.text(bench.get("/p/adult/releases"))
    assert 'id="releases"' in html and 'id="compare"' in html
    for release_id in ("r1", "r2", "r3"):
        assert f'name="release" value="{release_id}"' in html
    assert "first" in html and "second" in html and "discernibility" in html and "5-anonymity" in html
    form = re.search(r'<form method="get" action="([^"]+)"', html)
    assert form and form.group(1) == "/p/adult/compare"


def test_comparing_two_releases_shows_both_side_by_side(made):
    bench, _ = made
    response = bench.get("/p/adult/compare?release=r1&release=r2")
    assert response.status_code == 200
    html = bench.text(response)
    table = html[html.index('id="comparison"'):]
    assert "first" in table and "second" in table
    assert "loss" in table and "discernibility" in table
    assert "highest prosecutor risk" in table and "average prosecutor risk" in table
    # the smallest class of each release: 1/5 for the first (k = 5 on the release), 1/6 for the second
    assert "0.2" in table and "0.1667" in table
    assert "entropy ℓ-diversity of occupation" in table and "l_entropy = 3.155" in table
    assert "error" not in table.split("</table>")[0].lower().replace("class=\"error\"", "")


def test_fewer_than_two_releases_is_a_message_not_a_comparison(made):
    bench, _ = made
    for query in ("", "?release=r1", "?release=r1&release=r1", "?release=r1&release=r2&release=r3&release=a&release=b"):
        response = bench.get(f"/p/adult/compare{query}")
        assert response.status_code == 400
        html = bench.text(response)
        assert 'id="comparison"' not in html and "choose between 2 and 4 releases" in html
        assert 'id="releases"' in html   # the list again, to choose from
    assert bench.get("/p/adult/compare?release=r1&release=nope").status_code == 404
    assert bench.get("/p/adult/compare?release=r1&release=..%2Fx").status_code == 404


def test_the_release_page_has_every_part(made):
    bench, _ = made
    html = bench.text(bench.get("/p/adult/releases/r1"))
    for part in ("chosen-node", "lattice", "utility", "model-levels", "attack-form", "run-attacks", "open-report",
                 "download-release", "download-manifest", "download-report"):
        assert f'id="{part}"' in html, part
    assert 'class="chosen"' in html and "chosen</strong>" in html
    figure = re.search(r'<img class="figure" id="lattice-figure" src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert figure and base64.b64decode(figure.group(1)).startswith(b"<svg")
    assert "style=" not in html and "<svg" not in html   # the CSP forbids inline style; figures are images


def test_a_release_without_search_json_still_shows_its_node_and_utility(made):
    bench, _ = made
    html = bench.text(bench.get("/p/adult/releases/r2"))
    node = html[html.index('id="chosen-node"'):html.index('id="lattice"')]
    assert "age" in node and "workclass" in node
    utility = html[html.index('id="utility"'):html.index('id="model-levels"')]
    assert "discernibility" in utility and "loss" in utility


def test_a_missing_release_or_project_is_404(made):
    bench, _ = made
    for url in ("/p/adult/releases/nope", "/p/adult/releases/..", "/p/nope/releases", "/p/adult/releases/R1",
                "/p/adult/releases/nope/report", "/p/adult/releases/nope/download/release"):
        assert bench.get(url).status_code == 404, url


def test_downloads_give_the_release_files_as_attachments(made):
    bench, project = made
    folder = project.release_dir("r1")
    for kind, (file, _) in DOWNLOADS.items():
        response = bench.get(f"/p/adult/releases/r1/download/{kind}")
        assert response.status_code == 200, kind
        assert response.data == (folder / file).read_bytes()
        assert response.headers["Content-Disposition"].startswith("attachment")
        response.close()


@pytest.mark.parametrize("kind", ["private", "manifest.private.json", "../manifest.private.json",
                                  "..%2Fmanifest.private.json", "%2e%2e/manifest.private.json", "config",
                                  "workbench", "search", "attacks", "publication", "release.csv", "MANIFEST"])
def test_the_private_file_and_any_other_kind_cannot_be_downloaded(made, kind):
    bench, _ = made
    response = bench.get(f"/p/adult/releases/r1/download/{kind}")
    assert response.status_code == 404
    private = (made[1].release_dir("r1") / "manifest.private.json").read_bytes()
    assert private not in response.data


@settings(max_examples=40, deadline=None)
@given(kind=st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/?#%"), min_size=1,
                    max_size=30).filter(lambda k: k not in DOWNLOADS and k not in (".", "..")))
def test_any_kind_but_the_three_is_404(made, kind):
    bench, _ = made
    assert bench.get(f"/p/adult/releases/r1/download/{kind}").status_code == 404


def test_the_report_has_a_policy_of_its_own(made):
    bench, project = made
    response = bench.get("/p/adult/releases/r1/report")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert html == (project.release_dir("r1") / "report.html").read_text(encoding="utf-8")
    policy = response.headers["Content-Security-Policy"]
    assert policy == report_policy(html) and policy != bench.get("/").headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "sandbox" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and "script-src" not in policy and "'self'" not in policy
    # every inline <style> of the report, and nothing else, is allowed by its hash
    blocks = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)
    assert blocks
    allowed = set(re.findall(r"'sha256-([^']+)'", policy))
    assert allowed == {base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() for b in blocks}


def test_a_report_without_style_allows_none():
    assert "style-src 'none'" in report_policy("<p>x</p>")
    assert "img-src data:" in report_policy('<img src="data:image/png;base64,AA">')


def test_the_attack_task_writes_attacks_json_and_leaves_the_release_alone(made):
    _, project = made
    folder = project.release_dir("r2")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    progress = Progress()
    result = attack_task.run(project, {"release": "r2"}, project.root / "unused", progress)
    assert result["release"] == "r2" and isinstance(result["exposed"], int)
    found = json.loads((folder / "attacks.json").read_text(encoding="utf-8"))
    assert found["sensitive"] == ["occupation"] and "occupation" in found["attacks"]
    # the starred suppressed records are left out, as the report reads the release
    assert found["rows"] == json.loads((folder / "manifest.json").read_text())["output"]["rows"] - \
        json.loads((folder / "manifest.private.json").read_text())["suppression"]["records"]
    assert found["attacks"]["occupation"]["similarity"]["level"] == 1   # the private file's hierarchy
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.name != "attacks.json"}
    assert after == before
    assert progress.stages and not list(folder.glob(".*.tmp"))


def test_the_attack_task_on_a_missing_release_writes_nothing(made):
    from veil.workbench.projects import NotFound

    _, project = made
    for release_id in ("nope", "../r1", None):
        with pytest.raises(NotFound):
            attack_task.run(project, {"release": release_id}, project.root / "unused", Progress())


def test_the_attack_task_refuses_an_altered_release(made, tmp_path):
    import shutil

    _, project = made
    copy = tmp_path / "copy"
    shutil.copytree(project.release_dir("r1"), copy)
    (copy / "release.csv").write_text((copy / "release.csv").read_text() + "x;x;x;x;x;x;x;x;x\n")
    with pytest.raises(DataError):
        attack_task.attack_folder(copy)
    assert not (copy / "attacks.json").exists()


def test_run_attacks_from_the_page_then_see_them_and_compare(made):
    bench, project = made
    assert not (project.release_dir("r1") / "attacks.json").exists()
    refused = bench.post("/p/adult/releases/r1/attack", csrf=False)
    assert refused.status_code == 403 and not project.runs_dir.exists()
    response = bench.post("/p/adult/releases/r1/attack")
    assert response.status_code == 303
    run_id = response.headers["Location"].rstrip("/").split("/")[-1]
    assert response.headers["Location"].endswith(f"/p/adult/runs/{run_id}")
    deadline = time.monotonic() + 120
    while bench.jobs.status(project, run_id)["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.1)
    status = bench.jobs.status(project, run_id)
    assert status["state"] == "done", status
    assert status["result"]["release"] == "r1"
    assert 'id="open-release"' in bench.text(bench.get(f"/p/adult/runs/{run_id}"))
    html = bench.text(bench.get("/p/adult/releases/r1"))
    assert 'id="attacks"' in html and "background knowledge" in html
    compared = bench.text(bench.get("/p/adult/compare?release=r1&release=r3"))
    assert "homogeneity on occupation" in compared and "not attacked" in compared


def test_an_attack_on_a_missing_release_starts_nothing(made):
    bench, project = made
    runs = set(project.runs_dir.iterdir()) if project.runs_dir.exists() else set()
    assert bench.post("/p/adult/releases/nope/attack").status_code == 404
    assert (set(project.runs_dir.iterdir()) if project.runs_dir.exists() else set()) == runs


def test_html_in_a_label_is_escaped_everywhere(made):
    bench, _ = made
    for url in ("/p/adult/releases", "/p/adult/releases/r3", "/p/adult/compare?release=r1&release=r3"):
        html = bench.text(bench.get(url))
        assert "<script>alert" not in html and "<b>bold</b>" not in html, url
        assert "&lt;script&gt;alert(" in html, url


def test_html_in_column_names_and_values_is_escaped_everywhere(tmp_path):
    bench = Bench(tmp_path / "data")
    try:
        project = make_html_project(bench.workspace)
        make_release(project, "h1", document=html_config("loss"), label=HTML_VALUES[0])
        make_release(project, "h2", document=html_config("discernibility"), label=HTML_VALUES[1])
        attack_task.run(project, {"release": "h1"}, project.root / "unused", Progress())
        pages = ["/p/html/releases", "/p/html/releases/h1", "/p/html/releases/h2",
                 "/p/html/compare?release=h1&release=h2"]
        for url in pages:
            response = bench.get(url)
            assert response.status_code == 200, url
            html = bench.text(response)
            for raw in HTML_COLUMNS + HTML_VALUES:
                assert raw not in html, (url, raw)
        release = bench.text(bench.get("/p/html/releases/h1"))
        assert "&lt;b&gt;age&lt;/b&gt;" in release and 'id="attacks"' in release
        assert "&lt;i&gt;disease&lt;/i&gt;" in release
    finally:
        bench.jobs.stop_all()


def test_the_lattice_lists_the_chosen_node_first_then_the_best_scored(tmp_path):
    nodes = [{"levels": [a, b], "anonymous": a + b >= 3, "score": float(a * 1000 + b)}
             for a in range(30) for b in range(30)]
    view = ReleaseView("x", tmp_path, search={"quasi_identifiers": ["a", "b"], "chosen": [20, 5], "nodes": nodes})
    rows, total = lattice_rows(view)
    assert total == 900 and len(rows) == LATTICE_ROWS
    assert rows[0]["levels"] == [20, 5] and rows[0]["chosen"] and not any(r["chosen"] for r in rows[1:])
    anonymous = [r["score"] for r in rows[1:] if r["anonymous"]]
    assert anonymous == sorted(anonymous) and rows[1]["levels"] == [0, 3]
    assert lattice_figure(view).startswith("data:image/svg+xml;base64,")
    # a partitioning algorithm, or no search recorded: no rows, no figure, nothing breaks
    assert lattice_rows(ReleaseView("y", tmp_path, search={"chosen": None, "nodes": []})) == ([], 0)
    assert lattice_figure(ReleaseView("y", tmp_path)) is None


@settings(max_examples=50, deadline=None)
@given(blocks=st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="<"),
                               max_size=40), max_size=4),
       text=st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="<"), max_size=40))
def test_the_report_policy_allows_exactly_its_style_blocks(blocks, text):
    html = text + "".join(f"<style>{b}</style><p>{text}</p>" for b in blocks)
    policy = report_policy(html)
    allowed = set(re.findall(r"'sha256-([^']+)'", policy))
    read = [b.replace("\r\n", "\n").replace("\r", "\n") for b in blocks]   # as the browser's parser reads them
    assert allowed == {base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() for b in read}
    assert "unsafe" not in policy and "script-src" not in policy and policy.endswith("sandbox")
