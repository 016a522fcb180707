"""The browser workbench (`veil serve`, issue 30) as a steward uses it, beside veil's command line.

What is measured, on a real ``python -m veil serve --port 0 --data-dir TMP`` process driven over
HTTP with urllib (no browser: the pages' own time, not a browser's rendering), the way a browser
talks to it: the address the server prints (``open http://…?token=…``) is opened once, the cookie
it sets is kept, and every form sends the CSRF token its page carries (the hidden ``csrf_token``
input). A step's time is its request and the redirect the browser follows (303 to the next page),
until that page's last byte.

1. **Startup**: from the process's start to the first 200 answer of ``/`` (cold: a new process
   each time), beside ``veil --help`` as a whole process; best of ``--repeat`` each.
2. **The steward's path on Adult** (the bundled 30,162 rows): upload (multipart form), confirm
   (the sniffed ``;``), the roles of the Columns page (the 7 quasi-identifiers, occupation
   sensitive), the 7 ARX hierarchy files loaded one by one, the Anonymize form with ``veil demo``'s
   models (k = 5, entropy ℓ = 3 on occupation, 2 % suppression, metric loss, full-domain), then
   the run from its POST to the status JSON saying ``done`` (polled every 20 ms). The run is
   paired with ``veil anonymize --config <the project's config.yaml> --out … --manifest …
   --report …`` as a whole process (the same work: both write the release, its manifest, its
   private file and the report), ``--repeat`` pairs; the ratio is the median of the pairs'.
   Then the GET latency of the Risk page, a release's page and the comparison of two releases.
3. **Responsiveness**: Adult resampled with replacement (the operating system's secure source, no
   seed) to ``--workbench-rows`` records (1,000,000), written as CSV and uploaded through the same
   form (with ``--max-upload`` raised to fit); while an anonymize run works on it, one client
   fetches the project's page back to back and another the run's status JSON every 0.1 s, until
   each has at least 50 answers (another run is started if one ends first). The same two clients
   on the idle server afterwards give the baseline; p50, p95 and the largest of each.
4. **Memory**: the peak resident memory (``VmHWM`` of ``/proc/PID/status``) of the server and of
   the worker process of each large run (its pid from ``runs/ID/pid``, sampled every 20 ms while
   it lives, since a finished worker's memory is gone), beside ``veil anonymize`` on the same
   large table, its peak from GNU time (``/usr/bin/time -v``).

There is no peer to drive: ARX's desktop GUI and sdcMicro's Shiny sdcApp are interactive
applications (and R is not installed), so the comparison is with veil's own command line on the
same work, as ratios. Results go to ``workbench.json`` and ``workbench.md``.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

from harness import fmt_time, machine, machine_sentence, read_adult_polars, wrap
from processes import MissingTool, peak_memory, timed, veil_command
from timing import SAMPLES, progress

ROWS = 1_000_000
QUASI_IDENTIFIERS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass")
SENSITIVE = "occupation"
ADULT = Path(__file__).resolve().parents[1] / "src" / "veil" / "resources" / "adult"
# the Anonymize form as `veil demo` sets its models
MODELS_FORM = {"k": "5", "l": "3", "l_kind": "entropy", "c": "", "t": "", "distance": "equal",
               "sensitive": SENSITIVE, "suppression_limit": "2", "metric": "loss", "metric_label": "",
               "algorithm": "fulldomain"}
LATENCY_SAMPLES = 50
STATUS_PAUSE_S = 0.1
POLL_S = 0.02
MAX_LARGE_RUNS = 6
FINISHED = ("done", "failed", "cancelled", "interrupted")
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


class WorkbenchError(RuntimeError):
    """The workbench answered what a steward's browser would not expect (the message quotes it)."""


def spread(values: list[float]) -> dict:
    return {"best_s": min(values), "median_s": statistics.median(values), "worst_s": max(values), "runs": len(values)}


def percentiles(values: list[float]) -> dict:
    """p50, p95 (nearest rank) and the largest of ``values``, and how many."""
    ordered = sorted(values)
    rank = max(0, -(-95 * len(ordered) // 100) - 1)
    return {"p50_s": statistics.median(ordered), "p95_s": ordered[rank], "max_s": ordered[-1], "n": len(ordered)}


def vm_hwm(pid: int) -> int | None:
    """The peak resident memory of a live process in bytes (``VmHWM``), ``None`` once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


# ------------------------------------------------------------------------------- the server and its client

class Server:
    """A ``python -m veil serve --port 0`` process and a client that holds its cookie."""

    def __init__(self, data_dir: Path, max_upload_mib: int = 200):
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "veil", "serve", "--port", "0", "--data-dir", str(data_dir),
             "--max-upload", str(max_upload_mib)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        self.data_dir = data_dir
        url = None
        for line in self.process.stdout:
            if line.startswith("open "):
                url = line.split(" ", 1)[1].strip()
                break
        if url is None:
            raise WorkbenchError(f"veil serve printed no address: {self.process.stderr.read()[-800:]}")
        self.printed_s = time.perf_counter() - self.started
        parts = urllib.parse.urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        status, body, _ = self.get(url)   # the token for the cookie, then the 303 to /
        self.first_200_s = time.perf_counter() - self.started
        if status != 200:
            raise WorkbenchError(f"the printed address answered {status}")
        found = _CSRF.search(body)
        if found is None:
            raise WorkbenchError("the projects page carries no csrf_token field")
        self.csrf = found.group(1)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """SIGTERM (what Ctrl-C does), then wait for it to end."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()

    def _open(self, request: urllib.request.Request) -> tuple[int, str, str]:
        try:
            with self.opener.open(request, timeout=600) as response:
                return response.status, response.read().decode("utf-8", "replace"), response.geturl()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode("utf-8", "replace"), error.geturl()

    def get(self, path: str) -> tuple[int, str, str]:
        """GET ``path`` (or a whole URL), redirects followed: the status, the body, the final URL."""
        return self._open(urllib.request.Request(path if path.startswith("http") else self.base + path))

    def timed_get(self, path: str) -> float:
        start = time.perf_counter()
        status, body, _ = self.get(path)
        seconds = time.perf_counter() - start
        if status != 200:
            raise WorkbenchError(f"GET {path} answered {status}: {_message(body)}")
        return seconds

    def post(self, path: str, fields: dict[str, str], files: dict[str, tuple[str, bytes]] | None = None,
             expect: str | None = None) -> tuple[float, str]:
        """Submit a form as a browser does (multipart when it sends ``files``), the CSRF token
        added and the redirect followed; its time and the final URL.

        Raises:
            WorkbenchError: the answer is not 200, or not at a URL holding ``expect``.
        """
        fields = {**fields, "csrf_token": self.csrf}
        if files:
            boundary = "----veilbench" + secrets.token_hex(12)
            body = bytearray()
            for key, value in fields.items():
                body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{key}\"\r\n\r\n"
                         f"{value}\r\n").encode()
            for key, (filename, content) in files.items():
                body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{key}\"; filename=\"{filename}\"\r\n"
                         "Content-Type: text/csv\r\n\r\n").encode() + content + b"\r\n"
            body += f"--{boundary}--\r\n".encode()
            request = urllib.request.Request(self.base + path, data=bytes(body), method="POST",
                                             headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        else:
            request = urllib.request.Request(self.base + path, data=urllib.parse.urlencode(fields).encode(),
                                             method="POST",
                                             headers={"Content-Type": "application/x-www-form-urlencoded"})
        start = time.perf_counter()
        status, body, final = self._open(request)
        seconds = time.perf_counter() - start
        if status != 200 or (expect is not None and expect not in final):
            raise WorkbenchError(f"POST {path} answered {status} at {final}: {_message(body)}")
        return seconds, final

    def status(self, project: str, run_id: str) -> dict:
        status, body, _ = self.get(f"/p/{project}/runs/{run_id}/status.json")
        if status != 200:
            raise WorkbenchError(f"the status of run {run_id} answered {status}")
        return json.loads(body)

    def wait(self, project: str, run_id: str, started: float, watch=None) -> float:
        """Poll the run's status JSON every 20 ms until it is finished; seconds from ``started``.

        Raises:
            WorkbenchError: the run ended other than ``done``.
        """
        while True:
            state = self.status(project, run_id)
            if state["state"] in FINISHED:
                seconds = time.perf_counter() - started
                if state["state"] != "done":
                    raise WorkbenchError(f"run {run_id} ended {state['state']}: {state.get('message')}")
                return seconds
            if watch is not None:
                watch()
            time.sleep(POLL_S)


def _message(body: str) -> str:
    """The error sentences of a refused page, for the exception's message."""
    found = re.findall(r'class="(?:error|form-error)[^"]*"[^>]*>([^<]+)<', body)
    return "; ".join(found)[:600] or body[:300]


# ------------------------------------------------------------------------------- the steward's path

def make_project(server: Server, name: str, table: Path) -> dict[str, float]:
    """Upload ``table``, confirm it, set the roles, load the 7 ARX hierarchies: each step's time."""
    steps = {}
    content = table.read_bytes()
    steps["upload"], confirm_url = server.post("/upload", {"name": name}, {"table": (table.name, content)},
                                               expect="/upload/")
    confirm_path = urllib.parse.urlsplit(confirm_url).path
    steps["confirm"], _ = server.post(confirm_path, {"name": name, "delimiter": ";", "action": "create"},
                                      expect=f"/p/{name}")
    roles = {f"role-{c}": "quasi_identifier" for c in QUASI_IDENTIFIERS}
    roles |= {f"role-{SENSITIVE}": "sensitive", "role-salary-class": "insensitive"}
    steps["roles"], _ = server.post(f"/p/{name}/columns/roles", roles, expect=f"/p/{name}/columns")
    loads = []
    for column in QUASI_IDENTIFIERS:
        hierarchy = (ADULT / f"adult_hierarchy_{column}.csv").read_bytes()
        seconds, _ = server.post(f"/p/{name}/columns/upload?column={column}", {},
                                 {"file": (f"adult_hierarchy_{column}.csv", hierarchy)}, expect=f"/p/{name}/columns")
        loads.append(seconds)
    steps["hierarchies"] = sum(loads)
    steps["hierarchy_each_median"] = statistics.median(loads)
    return steps


def start_run(server: Server, name: str, label: str) -> tuple[str, float, float]:
    """POST the Anonymize form with the demo's models: the run's id, when the POST started, and
    the time of the POST and its redirect to the run's page."""
    started = time.perf_counter()
    seconds, final = server.post(f"/p/{name}/anonymize", {**MODELS_FORM, "label": label}, expect="/runs/")
    return urllib.parse.urlsplit(final).path.rsplit("/", 1)[1], started, seconds


def cli_anonymize(config: Path, folder: Path) -> list[str]:
    """``veil anonymize --config CONFIG`` writing the release, manifest and report into ``folder``."""
    return veil_command("anonymize", "--config", str(config), "--out", str(folder / "release.csv"), "--manifest",
                        str(folder / "manifest.json"), "--report", str(folder / "report.html"))


def run_cli(argv: list[str], folder: Path) -> float:
    """One whole ``veil anonymize`` process into a fresh ``folder``; its wall time."""
    for item in folder.glob("*"):
        item.unlink()
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise WorkbenchError(f"veil anonymize failed: {proc.stderr[-600:]}")
    return seconds


def adult_path(server: Server, tmp: Path, repeat: int) -> dict:
    """The steward's path on Adult, its runs paired with ``veil anonymize``, and the pages' latency."""
    name = "adult"
    progress("workbench: the steward's path on Adult")
    steps = make_project(server, name, ADULT / "adult.csv")
    steps["anonymize_form"] = server.timed_get(f"/p/{name}/anonymize")
    config = server.data_dir / name / "config.yaml"
    cli_folder = tmp / "cli-adult"
    cli_folder.mkdir()
    argv = cli_anonymize(config, cli_folder)
    run_cli(argv, cli_folder)   # untimed: the files in the page cache for both sides
    walls, clis, posts, releases = [], [], [], []
    for i in range(max(repeat, 2)):
        progress(f"workbench: Adult run {i + 1}, and veil anonymize")
        pair = []
        for side in ((0, 1) if i % 2 == 0 else (1, 0)):
            if side == 0:
                run_id, started, post_s = start_run(server, name, f"bench {i + 1}")
                pair.append(server.wait(name, run_id, started))
                posts.append(post_s)
                releases.append(run_id)
            else:
                pair.append(run_cli(argv, cli_folder))
        walls.append(pair[0] if i % 2 == 0 else pair[1])
        clis.append(pair[1] if i % 2 == 0 else pair[0])
    SAMPLES.extend([walls, clis])
    ratios = [w / c for w, c in zip(walls, clis)]
    pages = {"project": f"/p/{name}", "columns": f"/p/{name}/columns", "risk": f"/p/{name}/risk",
             "release": f"/p/{name}/releases/{releases[0]}",
             "compare": f"/p/{name}/compare?release={releases[0]}&release={releases[1]}"}
    latency = {}
    for page, path in pages.items():
        progress(f"workbench: GET {page}")
        server.timed_get(path)   # the first, apart: a page may read files once into the cache
        latency[page] = spread([server.timed_get(path) for _ in range(max(repeat, 3))])
    return {"rows": 30_162, "steps": steps, "run": {"workbench": spread(walls), "cli": spread(clis),
                                                     "post_s": spread(posts), "ratio_median": statistics.median(ratios),
                                                     "ratios": ratios},
            "pages": latency}
