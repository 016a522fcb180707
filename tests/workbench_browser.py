"""A real ``veil serve`` and a real headless Chromium driving it, for the workbench's browser tests
(tests/test_workbench_browser.py, marker ``service``).

The server is ``python -m veil serve --port 0 --data-dir TMP`` in a process of its own; the
address it prints (``open http://127.0.0.1:PORT/?token=…``) is what the browser opens. The browser
is Debian's Chromium driven through Selenium with Debian's chromedriver named explicitly, so that
Selenium Manager never looks for (or downloads) a driver, and with a host-resolver rule that
resolves nothing but 127.0.0.1: nothing from outside could load even if a page asked for it, and
every such request is still seen in the performance log (:meth:`Browser.outside_requests`).

Where Chromium, chromedriver or Selenium cannot start, the tests are skipped with the reason,
unless ``VEIL_REQUIRE_SERVICES=1`` (CI sets it), which makes that a failure. The server gets
SIGTERM and the browser is quit at teardown, whatever happened.

Screenshots go to ``$VEIL_SCREENSHOTS`` or ``<repository>/test-artifacts/workbench/``, which the
test run keeps (and git ignores).
"""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
START_TIMEOUT = 60   # seconds for veil serve to print its address
WAIT = 30            # seconds an element or a run may take to appear
SHOT_HEIGHT = 2400   # pixels: a screenshot holds the page down to there (a longer one costs seconds)


def unavailable(reason: str):
    """Skip for want of the browser, or fail when the run demands its services (CI)."""
    if os.environ.get("VEIL_REQUIRE_SERVICES") == "1":
        pytest.fail(f"VEIL_REQUIRE_SERVICES=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def screenshot_dir() -> Path:
    """Where the screenshots are kept: ``$VEIL_SCREENSHOTS`` or ``test-artifacts/workbench/``."""
    folder = Path(os.environ.get("VEIL_SCREENSHOTS") or ROOT / "test-artifacts" / "workbench")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Server:
    """``veil serve --port 0`` over a data folder, in a process of its own."""

    def __init__(self, data_dir: Path, *extra: str):
        self.data_dir = Path(data_dir)
        self.lines: list[str] = []
        env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONUNBUFFERED": "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "veil", "serve", "--port", "0", "--data-dir", str(self.data_dir), *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        self.url = self._address()
        parts = urlsplit(self.url)
        self.base = f"{parts.scheme}://{parts.netloc}"

    def _address(self) -> str:
        """The ``open …`` line's address, read as the server prints it."""
        deadline = time.monotonic() + START_TIMEOUT
        pending = b""
        stream = self.process.stdout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([stream], [], [], 0.2)
            if ready:
                chunk = os.read(stream.fileno(), 4096)
                if not chunk:
                    break
                pending += chunk
                *whole, pending = pending.split(b"\n")
                for line in whole:
                    text = line.decode(errors="replace")
                    self.lines.append(text)
                    if text.startswith("open http"):
                        return text.split(" ", 1)[1].strip()
            elif self.process.poll() is not None:
                break
        self.stop()
        raise RuntimeError("veil serve did not print its address:\n" + "\n".join(self.lines + [pending.decode()]))

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not stopped within 15 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class Browser:
    """Headless Chromium under Selenium, with the helpers the browser tests need."""

    def __init__(self, profile: Path, base: str):
        os.environ.setdefault("SE_AVOID_STATS", "true")   # Selenium Manager: no usage statistics
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.base = base
        self.shots = screenshot_dir()
        for old in self.shots.glob("[0-9][0-9]-*.png"):   # an earlier run's
            old.unlink()
        self.taken: list[Path] = []
        self.all_errors: list[dict] = []
        self.shot_seconds = 0.0
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                     "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1", "--no-first-run",
                     "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--disable-default-apps", "--window-size=1280,1000", "--lang=en-US"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(WAIT)
        # what the browser loaded for itself before any page of the workbench (its new-tab page)
        self.driver.get("about:blank")
        self.driver.get_log("browser")
        self.driver.get_log("performance")

    # -- navigation and lookup -------------------------------------------------------------------
    def open(self, path: str) -> None:
        """Load ``path`` (``/p/x/risk``) or an absolute address."""
        self.driver.get(path if "://" in path else self.base + path)

    @property
    def path(self) -> str:
        """The path (and query) of the page shown."""
        parts = urlsplit(self.driver.current_url)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    def find(self, css: str):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css: str) -> list:
        from selenium.webdriver.common.by import By
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def wait_for(self, css: str, timeout: float = WAIT):
        """The element ``css`` once the page shows it (fails with the page's text after ``timeout``)."""
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.ui import WebDriverWait

        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(
                expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css)))
        except TimeoutException:
            pytest.fail(f"{css} did not appear on {self.path} within {timeout:g} s; the page says:\n{self.text()[:1500]}",
                        pytrace=False)

    def text(self, css: str = "body") -> str:
        found = self.find_all(css)
        return found[0].text if found else ""

    def submit(self, css: str) -> None:
        """Click the submit button ``css`` and wait for the next page to load."""
        button = self.find(css)
        old = self.find("html")
        button.click()
        self.wait_stale(old)

    def wait_stale(self, element, timeout: float = WAIT) -> None:
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(expected_conditions.staleness_of(element))
        self.wait_loaded(timeout)

    def wait_loaded(self, timeout: float = WAIT) -> None:
        """Wait until the page shown has loaded."""
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.support.ui import WebDriverWait

        def loaded(driver) -> bool:
            try:
                return driver.execute_script("return document.readyState") == "complete"
            except WebDriverException:   # between two documents
                return False

        WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(loaded)

    def choose(self, css: str, value: str) -> None:
        """Select the option ``value`` of the select ``css``."""
        from selenium.webdriver.support.ui import Select
        Select(self.find(css)).select_by_value(value)

    def fill(self, css: str, value: str) -> None:
        field = self.find(css)
        field.clear()
        if value:
            field.send_keys(value)

    # -- what the pages did ----------------------------------------------------------------------
    def console_errors(self) -> list[dict]:
        """The browser log's SEVERE entries since the last call (console.error, a script error, a
        resource that failed to load, a Content-Security-Policy violation)."""
        found = [entry for entry in self.driver.get_log("browser") if entry.get("level") == "SEVERE"]
        self.all_errors.extend(found)
        return found

    def outside_requests(self) -> list[str]:
        """Every address the pages asked for since the last call that is not this server's machine
        (host other than 127.0.0.1) nor a ``data:`` address, from the performance log."""
        outside = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"]).get("message", {})
            if message.get("method") != "Network.requestWillBeSent":
                continue
            url = message.get("params", {}).get("request", {}).get("url", "")
            parts = urlsplit(url)
            if parts.scheme != "data" and parts.hostname != "127.0.0.1":
                outside.append(url)
        return outside

    def shot(self, name: str) -> Path:
        """A PNG of the page (beyond the window, down to SHOT_HEIGHT pixels), ``NN-name.png`` in the screenshots folder."""
        started = time.monotonic()
        height = self.driver.execute_script("return document.documentElement.scrollHeight") or 600
        clip = {"x": 0, "y": 0, "width": 1280, "height": min(int(height), SHOT_HEIGHT), "scale": 1}
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True, "optimizeForSpeed": True, "clip": clip})
        path = self.shots / f"{len(self.taken) + 1:02d}-{name}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        self.taken.append(path)
        self.shot_seconds += time.monotonic() - started
        return path

    def check(self, name: str) -> None:
        """A screenshot of the page shown, and no console error nor outside request since the last check."""
        self.shot(name)
        errors, outside = self.console_errors(), self.outside_requests()
        assert not errors, f"{name} ({self.path}) logs errors:\n" + "\n".join(e["message"] for e in errors)
        assert not outside, f"{name} ({self.path}) asks for addresses outside the machine: {outside}"

    def quit(self) -> None:
        self.driver.quit()


def start_browser(profile: Path, base: str) -> Browser:
    """A :class:`Browser`, or a skip (a failure under VEIL_REQUIRE_SERVICES=1) with the reason it cannot start."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        unavailable("Selenium is not installed; pip install -e '.[test]'")
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            unavailable(f"{path} is missing (Debian package {package})")
    from selenium.common.exceptions import WebDriverException
    try:
        return Browser(profile, base)
    except (WebDriverException, OSError) as error:
        unavailable(f"Chromium could not start under chromedriver: {str(error).strip().splitlines()[0][:300]}")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(server, browser): a ``veil serve`` over a fresh data folder and a browser that has not yet
    opened it (it holds no access cookie)."""
    pytest.importorskip("flask", reason="the workbench needs the serve extra (Flask)")
    pytest.importorskip("waitress", reason="the workbench needs the serve extra (waitress)")
    folder = tmp_path_factory.mktemp("workbench-browser")
    server = Server(folder / "data")
    try:
        browser = start_browser(folder / "chromium-profile", server.base)
        try:
            yield server, browser
        finally:
            browser.quit()
    finally:
        server.stop()
        shutil.rmtree(folder / "chromium-profile", ignore_errors=True)
