"""The workbench in a real browser (marker ``service``): headless Chromium, driven by Selenium, on a
real ``veil serve`` (tests/workbench_browser.py starts both and skips without them).

The steward's whole path on the bundled Adult table (30,162 rows), as ``veil demo`` takes it:
upload and confirm the delimiter; set the roles (occupation sensitive, salary-class insensitive,
the seven others quasi-identifiers); load ARX's hierarchy files and build marital-status's with
the grouping builder (ARX's groups, so that the search is the demo's and its first release is the
demo's, record for record); see the risk; anonymize twice with the demo's models (5-anonymity,
entropy 3-diversity of occupation, at most 2 % suppressed), for loss and then for
discernibility; compare the two releases; open a report; run the attacks; publish the first
through the ledger's gate, and see the second refused (intersected with the first, it pins a
person's occupation). Every page: no console error (a Content-Security-Policy violation is one),
no request leaving the machine, a screenshot (kept in test-artifacts/workbench/).

The guards' tests through Flask's test client are in test_workbench_guard.py; here the browser
sees what a person would: a page without the token refused, a cell holding HTML shown as text.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from tests import workbench_browser
from tests.workbench_browser import WAIT

served = workbench_browser.served   # the fixture: a veil serve and a browser, for the module

pytestmark = pytest.mark.service

ADULT = Path(__file__).resolve().parent.parent / "src" / "veil" / "resources" / "adult"
QUASI_IDENTIFIERS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass")
ROLES = {**{c: "quasi_identifier" for c in QUASI_IDENTIFIERS}, "occupation": "sensitive",
         "salary-class": "insensitive"}
BUILT = "marital-status"   # the hierarchy built in the page instead of loaded
MARITAL_GROUPS = ("spouse present: Married-civ-spouse, Married-AF-spouse\n"
                  "spouse not present: Divorced, Never-married, Separated, Widowed, Married-spouse-absent\n")
FINISHED = ("done", "failed", "cancelled", "interrupted")
HOSTILE = "<img src=x onerror=console.error('escaped-not')>"
HEADER = "<i>note</i>"


def sign_in(server, browser) -> None:
    """Open the address veil serve printed (its token becomes the browser's cookie)."""
    browser.open(server.url)
    browser.wait_for("#new-project")


def set_field(browser, form: str, name: str, value: str) -> None:
    """Give the field ``name`` of ``form`` the value ``value``, whatever kind of field it is."""
    fields = browser.find_all(f'{form} [name="{name}"]')
    assert fields, f"{form} has no field {name!r} on {browser.path}"
    field = fields[0]
    if field.tag_name == "select":
        browser.choose(f'{form} select[name="{name}"]', value)
    elif field.get_attribute("type") in ("radio", "checkbox"):
        browser.find(f'{form} [name="{name}"][value="{value}"]').click()
    else:
        field.clear()
        if value:
            field.send_keys(value)


def wait_run(browser) -> tuple[str, bool]:
    """On a run's page: wait until it has finished; its final state, and whether its progress bar
    was shown while it worked."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    seen = {"bar": False}

    def finished(driver):
        try:
            state = browser.find("#run-state").text.strip()
            if state == "running" and browser.find_all("progress"):
                seen["bar"] = True
            return state if state in FINISHED else False
        except WebDriverException:   # the page is being reloaded (its script does so when the run ends)
            return False

    browser.wait_for("#run-state")
    state = WebDriverWait(browser.driver, 3 * WAIT, poll_frequency=0.1).until(finished)
    browser.wait_loaded()
    return state, seen["bar"]


def anonymize(browser, project: str, metric: str, name: str, timings: dict) -> str:
    """Start a run of the demo's models for ``metric``, watch it to its end; the release's id."""
    browser.open(f"/p/{project}/anonymize")
    form = "#anonymize-form"
    browser.wait_for(form)
    for field, value in (("label", f"demo, {metric}"), ("k", "5"), ("l", "3"), ("l_kind", "entropy"),
                         ("suppression_limit", "2"), ("metric", metric), ("algorithm", "fulldomain")):
        set_field(browser, form, field, value)
    browser.check(f"{name}-form")
    started = time.monotonic()
    browser.submit("#start-run")
    assert "/runs/" in browser.path, f"#start-run led to {browser.path}: {browser.text()[:500]}"
    first_state = browser.text("#run-state").strip()
    if first_state == "running":
        browser.check(f"{name}-running")   # the progress bar and the Cancel button
    state, bar = wait_run(browser)
    timings[f"{name}-run"] = round(time.monotonic() - started, 2)
    assert state == "done", f"the {metric} run ended {state}: {browser.text()[:800]}"
    # the bar is on the page while the run works (a run over before the page loaded never shows it)
    assert bar or first_state == "done", "the run's page showed no progress bar while it worked"
    browser.check(f"{name}-run-done")
    link = browser.wait_for("#open-release")
    href = link.get_attribute("href")
    release = href.rstrip("/").rsplit("/", 1)[1]
    link.click()
    browser.wait_for("#chosen-node")
    for part in ("#lattice", "#utility", "#model-levels"):
        browser.wait_for(part, timeout=2)
    browser.check(f"{name}-release")
    return release


def test_a_page_opened_without_the_token_is_refused(served):
    server, browser = served
    browser.driver.delete_all_cookies()
    browser.open("/")
    assert "access token" in browser.text(), browser.text()
    assert not browser.find_all("#new-project")
    browser.shot("refused-without-token")
    # the browser logs the page's own status (403); the refusal must not log anything else (such
    # as its stylesheet and script, refused in turn for want of the token)
    errors = [e for e in browser.console_errors() if not e["message"].startswith(f"{server.base}/ - Failed to load")]
    assert not errors, "the refusal logs errors:\n" + "\n".join(e["message"] for e in errors)
    assert not browser.outside_requests()


def test_the_stewards_whole_path_on_adult(served, record_property):
    server, browser = served
    timings: dict[str, float] = {}
    started = last = time.monotonic()

    def lap(step: str) -> None:
        nonlocal last
        now = time.monotonic()
        timings[step] = round(now - last, 2)
        last = now

    # Projects: upload, confirm the sniffed delimiter
    sign_in(server, browser)
    browser.check("projects")
    browser.fill("#new-project input[name=name]", "adult")
    browser.find("#new-project input[type=file][name=table]").send_keys(str(ADULT / "adult.csv"))
    browser.submit("#upload")
    browser.wait_for("#preview")
    from selenium.webdriver.support.ui import Select
    assert Select(browser.find("select[name=delimiter]")).first_selected_option.get_attribute("value") == ";"
    assert "Married-civ-spouse" in browser.text("#preview")
    browser.check("upload-confirm")
    browser.submit("#confirm")
    browser.wait_for("#table-preview")
    assert browser.path == "/p/adult"
    assert browser.find_all("#download-config")
    browser.check("project")
    lap("upload")

    # Columns: roles, then ARX's hierarchy files, and age's built with the interval builder
    browser.open("/p/adult/columns")
    browser.wait_for("#save-roles")
    for column, role in ROLES.items():
        browser.choose(f'select[name="role-{column}"]', role)
    browser.submit("#save-roles")
    for column, role in ROLES.items():
        chosen = Select(browser.find(f'select[name="role-{column}"]')).first_selected_option.get_attribute("value")
        assert chosen == role, f"{column} is {chosen} after saving the roles"
    browser.check("columns-roles")
    for column in (*QUASI_IDENTIFIERS, "occupation"):
        if column == BUILT or (column == "occupation" and not browser.find_all(f"#hierarchy-upload-{column}")):
            continue   # BUILT's is built below; a sensitive column's hierarchy is optional
        browser.find(f"#hierarchy-upload-{column} input[type=file][name=file]").send_keys(
            str(ADULT / f"adult_hierarchy_{column}.csv"))
        browser.submit(f"#upload-hierarchy-{column}")
        browser.wait_for(f"#hierarchy-{column}")
        assert not browser.find_all(".field-error"), f"{column}'s hierarchy refused: {browser.text('.field-error')}"
    browser.check("columns-hierarchies-loaded")
    # marital-status's hierarchy built with the grouping builder: ARX's groups, so that the search
    # is the demo's (and its releases are veil demo's, record for record)
    builder = f"#builder-{BUILT}"
    browser.choose(f"{builder} select[name=builder]", "grouping")
    browser.fill(f"{builder} textarea[name=groups]", MARITAL_GROUPS)
    browser.submit(f"#preview-{BUILT}")
    browser.wait_for(f"#levels-{BUILT}")
    distinct = [row.find_elements("css selector", "td")[1].text.strip()
                for row in browser.find_all(f"#levels-{BUILT} tbody tr")]
    assert distinct == ["7", "2", "1"], distinct
    coverage = browser.text(f"#coverage-{BUILT}")
    assert coverage and " not " not in coverage, coverage
    browser.check("columns-builder-preview")
    browser.submit(f"#save-{BUILT}")
    browser.wait_for(f"#hierarchy-{BUILT}")
    assert not browser.find_all(".field-error"), browser.text(".field-error")
    browser.check("columns-builder-saved")
    # the built hierarchy is in the configuration: as its builder's settings, or as the file it wrote
    built = yaml.safe_load((server.data_dir / "adult" / "config.yaml").read_text(encoding="utf-8"))["hierarchies"]
    assert "grouping" in built[BUILT] or built[BUILT] == {"file": f"hierarchies/{BUILT}.csv"}, built[BUILT]
    lap("columns")

    # Risk: every model checked, the re-identification risks and both figures
    browser.open("/p/adult/risk")
    if browser.find_all("#run-state"):   # computed in a run: wait for it, then the page
        assert wait_run(browser)[0] == "done", browser.text()
        browser.open("/p/adult/risk")
    browser.wait_for("#models-check")
    browser.wait_for("#reidentification", timeout=2)
    for figure in ("img#class-sizes", "img#record-risks"):
        image = browser.wait_for(figure, timeout=2)
        assert image.get_attribute("src").startswith("data:image/"), figure
        assert browser.driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image), \
            f"{figure} did not render"
    browser.check("risk")
    lap("risk")

    # Anonymize twice, as veil demo does
    first = anonymize(browser, "adult", "loss", "anonymize-loss", timings)
    # the same release as veil demo's (and veil anonymize --config examples/adult-fulldomain.yaml)
    assert "30,162 records → 29,613 released, 549 suppressed" in browser.text(), browser.text()[:300]
    lap("anonymize-loss")
    second = anonymize(browser, "adult", "discernibility", "anonymize-discernibility", timings)
    lap("anonymize-discernibility")
    assert first != second

    # Compare them
    browser.open("/p/adult/releases")
    browser.wait_for("#releases")
    for release in (first, second):
        browser.find(f'input[name=release][value="{release}"]').click()
    browser.check("releases")
    browser.submit("#compare")
    browser.wait_for("#comparison")
    assert browser.path.startswith("/p/adult/compare?")
    browser.check("compare")
    lap("compare")

    # The first release's report, then its attacks
    browser.open(f"/p/adult/releases/{first}")
    for link in ("#open-report", "#download-release", "#download-manifest", "#download-report"):
        browser.wait_for(link, timeout=5)
    browser.open(browser.find("#open-report").get_attribute("href"))
    assert "5-anonymity" in browser.text() or "k-anonymity" in browser.text().lower(), browser.text()[:500]
    browser.check("report")
    browser.open(f"/p/adult/releases/{first}")
    browser.wait_for("#attack-form")
    browser.submit("#run-attacks")
    if "/runs/" in browser.path:
        state, _ = wait_run(browser)
        assert state == "done", browser.text()[:800]
        browser.check("attacks-run")
        browser.open(f"/p/adult/releases/{first}")
    browser.wait_for("#attacks")
    assert "homogeneity" in browser.text("#attacks").lower(), browser.text("#attacks")[:500]
    browser.check("attacks")
    lap("report-attacks")

    # DP queries: the project's population gets a budget, and a count spends part of it
    browser.open("/p/adult/dp")
    browser.wait_for("#budget-form")
    browser.fill("#budget-form input[name=epsilon]", "1")
    browser.fill("#budget-form input[name=delta]", "0.000001")
    browser.submit("#set-budget")
    browser.wait_for("#dp-form")
    browser.choose("#dp-form select[name=kind]", "count")
    browser.fill("#dp-form input[name=epsilon]", "0.1")
    browser.submit("#ask")
    assert browser.find_all("#answers .dp-answer"), browser.text()[:800]
    assert browser.text("#budget-left-epsilon").strip() == "0.9", browser.text("#budget-left")
    browser.check("dp")
    lap("dp")

    # Publish the first; the second is refused
    browser.open("/p/adult/publish")
    browser.wait_for("#publish-form")
    browser.choose("#publish-form select[name=release]", first)
    browser.submit("#publish")
    assert "published" in browser.wait_for("#decision").text.lower(), browser.text()[:800]
    browser.check("publish-first")
    browser.choose("#publish-form select[name=release]", second)
    browser.submit("#publish")
    decision = browser.wait_for("#decision").text.lower()
    assert "refused" in decision, browser.text()[:800]
    reasons = browser.find_all("#reasons li") or browser.find_all("#reasons")
    assert reasons and all(r.text.strip() for r in reasons), browser.text()[:800]
    assert "occupation" in browser.text("#reasons")
    for part in ("#ledger-history", "#budgets", "#verification"):
        browser.wait_for(part, timeout=2)
    browser.check("publish-second-refused")
    lap("publish")

    walk = round(time.monotonic() - started, 1)
    record_property("walk_seconds", walk)
    timings["screenshots"] = round(browser.shot_seconds, 2)
    (browser.shots / "walk-seconds.json").write_text(json.dumps({"walk": walk, **timings}, indent=1) + "\n",
                                                     encoding="utf-8")
    print(f"the walk took {walk} s: {timings}")


def test_a_cell_holding_html_is_shown_as_text(served, tmp_path):
    """A value or a column name holding HTML is shown as its text on every page that shows it: no
    element is made of it, and its script never runs (it would log a console error)."""
    server, browser = served
    table = tmp_path / "hostile.csv"
    table.write_text(f"place;{HEADER}\n{HOSTILE};<b>bold</b>\nLyon;plain\nLyon;plain\n", encoding="utf-8")
    sign_in(server, browser)
    browser.console_errors(), browser.outside_requests()
    browser.fill("#new-project input[name=name]", "hostile")
    browser.find("#new-project input[type=file][name=table]").send_keys(str(table))
    browser.submit("#upload")
    for page, box in (("confirm", "#preview"), ("project", "#table-preview")):
        browser.wait_for(box)
        shown = browser.text(box)
        assert HOSTILE in shown and "<b>bold</b>" in shown and HEADER in shown, shown
        assert not browser.find_all(f"{box} img, {box} b, {box} i")
        browser.check(f"hostile-{page}")
        if page == "confirm":
            browser.submit("#confirm")
    for page, ready in (("columns", "#save-roles"), ("risk", "main h1")):
        browser.open(f"/p/hostile/{page}")
        browser.wait_for(ready)
        assert not browser.find_all("main img[src=x], main b, main i"), page
        assert HEADER in browser.text("main") or page == "risk", browser.text("main")[:500]
        browser.check(f"hostile-{page}")


def test_the_checks_see_a_policy_violation_and_a_request_outside(served):
    """What the walk asserts is absent, the harness sees when it is there."""
    browser = served[1]
    page = ("<!DOCTYPE html><meta http-equiv='Content-Security-Policy' content=\"default-src 'self'\">"
            "<p style='color:red'>styled</p><img src='https://cdn.example.org/pixel.png'>")
    browser.driver.get("data:text/html;charset=utf-8," + quote(page))
    errors = [e["message"] for e in browser.console_errors()]
    assert any("Content Security Policy" in m and "inline style" in m for m in errors), errors
    assert browser.outside_requests() == ["https://cdn.example.org/pixel.png"]
