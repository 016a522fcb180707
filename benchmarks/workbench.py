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
   form (with ``--max-upload`` raised to fit). One client fetches the project's page back to back
   and another a run's status JSON every 0.1 s, in alternating phases: idle (no run working) for
   as long as the last run took, then busy (an anonymize run working on the large table), until
   each has at least 50 answers in each phase; p50, p95 and the largest of each. Alternating
   spreads both phases over the same minutes of a machine shared with other jobs.
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

from harness import goal_lines, fmt_time, machine, machine_sentence, read_adult_polars, wrap
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
MAX_LARGE_RUNS = 12
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

    def wait(self, project: str, run_id: str, started: float, stages: dict | None = None) -> float:
        """Poll the run's status JSON every 20 ms until it is finished; seconds from ``started``.
        ``stages`` gets the seconds each stage the status named was seen (from one stage's first
        sight to the next one's), the first from ``started``.

        Raises:
            WorkbenchError: the run ended other than ``done``.
        """
        stage, since = "the request and the worker's start", started
        while True:
            state = self.status(project, run_id)
            now = time.perf_counter()
            moved = state["state"] in FINISHED or state.get("stage") not in (stage, "starting")
            if moved and stages is not None:
                stages[stage] = stages.get(stage, 0.0) + now - since
                stage, since = state.get("stage"), now
            if state["state"] in FINISHED:
                if state["state"] != "done":
                    raise WorkbenchError(f"run {run_id} ended {state['state']}: {state.get('message')}")
                return now - started
            time.sleep(POLL_S)


def _message(body: str) -> str:
    """The error sentences of a refused page, for the exception's message."""
    found = re.findall(r'class="(?:error|form-error)[^"]*"[^>]*>([^<]+)<', body)
    return "; ".join(found)[:600] or body[:300]


# ------------------------------------------------------------------------------- the steward's path

def make_project(server: Server, name: str, table: Path, memory: dict | None = None) -> dict[str, float]:
    """Upload ``table``, confirm it, set the roles, load the 7 ARX hierarchies: each step's time
    (and in ``memory`` the server's peak resident memory before and after each step)."""
    steps = {}
    memory = {} if memory is None else memory
    memory["before"] = vm_hwm(server.pid)
    content = table.read_bytes()
    steps["upload"], confirm_url = server.post("/upload", {"name": name}, {"table": (table.name, content)},
                                               expect="/upload/")
    memory["upload"] = vm_hwm(server.pid)
    confirm_path = urllib.parse.urlsplit(confirm_url).path
    steps["confirm"], _ = server.post(confirm_path, {"name": name, "delimiter": ";", "action": "create"},
                                      expect=f"/p/{name}")
    memory["confirm"] = vm_hwm(server.pid)
    roles = {f"role-{c}": "quasi_identifier" for c in QUASI_IDENTIFIERS}
    roles |= {f"role-{SENSITIVE}": "sensitive", "role-salary-class": "insensitive"}
    steps["roles"], _ = server.post(f"/p/{name}/columns/roles", roles, expect=f"/p/{name}/columns")
    memory["roles"] = vm_hwm(server.pid)
    loads = []
    for column in QUASI_IDENTIFIERS:
        hierarchy = (ADULT / f"adult_hierarchy_{column}.csv").read_bytes()
        seconds, _ = server.post(f"/p/{name}/columns/upload?column={column}", {},
                                 {"file": (f"adult_hierarchy_{column}.csv", hierarchy)}, expect=f"/p/{name}/columns")
        loads.append(seconds)
    steps["hierarchies"] = sum(loads)
    steps["hierarchy_each_median"] = statistics.median(loads)
    memory["hierarchies"] = vm_hwm(server.pid)
    steps["anonymize_form"] = server.timed_get(f"/p/{name}/anonymize")
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
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise WorkbenchError(f"veil anonymize failed: {proc.stderr[-600:]}")
    return seconds


def adult_path(server: Server, tmp: Path, repeat: int) -> dict:
    """The steward's path on Adult, its runs paired with ``veil anonymize``, and the pages' latency."""
    name = "adult"
    progress("workbench: the steward's path on Adult")
    steps = make_project(server, name, ADULT / "adult.csv")
    config = server.data_dir / name / "config.yaml"
    cli_folder = tmp / "cli-adult"
    cli_folder.mkdir()
    argv = cli_anonymize(config, cli_folder)
    run_cli(argv, cli_folder)   # untimed: the files in the page cache for both sides
    walls, clis, posts, releases, stages = [], [], [], [], []
    for i in range(max(repeat, 2)):
        progress(f"workbench: Adult run {i + 1}, and veil anonymize")
        pair = []
        for side in ((0, 1) if i % 2 == 0 else (1, 0)):
            if side == 0:
                run_id, started, post_s = start_run(server, name, f"bench {i + 1}")
                stages.append({})
                pair.append(server.wait(name, run_id, started, stages[-1]))
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
                                                     "ratios": ratios,
                                                     "stages": stages[walls.index(min(walls))]},
            "pages": latency}


# ------------------------------------------------------------------------------- the large table

def large_csv(tmp: Path, rows: int) -> Path:
    """Adult resampled with replacement to ``rows`` records, drawn from the operating system's
    secure source (no seed), as a ``;``-separated CSV file in ``tmp``."""
    from veil.randomness import uniform_below

    adult = read_adult_polars()
    path = tmp / f"adult-{rows}.csv"
    adult[uniform_below(adult.height, os.urandom, rows).astype("int64")].write_csv(path, separator=";")
    return path


class PeakWatch:
    """The largest ``VmHWM`` of a process, read every 20 ms on a thread while it lives."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, None, threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            found = vm_hwm(self.pid)
            if found is None:
                return
            self.peak = max(self.peak or 0, found)
            time.sleep(POLL_S)

    def stop(self) -> int | None:
        self._stop.set()
        self._thread.join()
        return self.peak


def worker_pid(server: Server, name: str, run_id: str) -> int:
    return int((server.data_dir / name / "runs" / run_id / "pid").read_text(encoding="ascii"))


class PageClient:
    """A second client on a thread: GET a page back to back until stopped, each answer's time
    kept under the phase (``idle`` or ``busy``) it began and ended in (one that spans a change of
    phase is dropped)."""

    def __init__(self, server: Server, path: str, phase: list[str]):
        self.server, self.path, self.phase = server, path, phase
        self.times: dict[str, list[float]] = {"idle": [], "busy": []}
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            began, start = self.phase[0], time.perf_counter()
            status, _, _ = self.server.get(self.path)
            seconds = time.perf_counter() - start
            if status != 200:
                self.failures += 1
            elif self.phase[0] == began:
                self.times[began].append(seconds)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def status_poll(server: Server, name: str, run_id: str, times: list[float]) -> dict:
    """One GET of the run's status JSON, its time appended to ``times``."""
    start = time.perf_counter()
    state = server.status(name, run_id)
    times.append(time.perf_counter() - start)
    return state


def latency(server: Server, name: str, finished_run: str, segment_s: float) -> dict:
    """The project's page (back to back, on a thread) and a run's status JSON (every 0.1 s) in
    alternating phases: idle (no run working; the status of ``finished_run``) for as long as the
    last run took (``segment_s`` at first), then busy (a run working on the large table, its own
    status), until each page has 50 answers in each phase. Alternating spreads both phases over
    the same minutes of a shared machine; the load average is read at each phase's start."""
    phase = ["idle"]
    status_times: dict[str, list[float]] = {"idle": [], "busy": []}
    client = PageClient(server, f"/p/{name}", phase)
    runs, peaks, loads = [], [], {"idle": [], "busy": []}

    def enough() -> bool:
        return all(len(times[p]) >= LATENCY_SAMPLES for times in (client.times, status_times) for p in times)

    try:
        while not enough() and len(runs) < MAX_LARGE_RUNS:
            progress(f"workbench: idle, then run {len(runs) + 2} ({len(client.times['busy'])} page answers busy)")
            phase[0] = "idle"
            loads["idle"].append(os.getloadavg()[0])
            until = time.perf_counter() + segment_s
            while time.perf_counter() < until:
                status_poll(server, name, finished_run, status_times["idle"])
                time.sleep(STATUS_PAUSE_S)
            loads["busy"].append(os.getloadavg()[0])
            run_id, started, _ = start_run(server, name, f"busy {len(runs) + 1}")
            phase[0] = "busy"
            watch = PeakWatch(worker_pid(server, name, run_id))
            while True:
                state = status_poll(server, name, run_id, status_times["busy"])
                if state["state"] in FINISHED:
                    break
                time.sleep(STATUS_PAUSE_S)
            phase[0] = "idle"
            if state["state"] != "done":
                raise WorkbenchError(f"run {run_id} ended {state['state']}: {state.get('message')}")
            runs.append(time.perf_counter() - started)
            peaks.append(watch.stop())
            segment_s, finished_run = runs[-1], run_id
    finally:
        client.stop()
    return {p: {"project": percentiles(client.times[p]), "status": percentiles(status_times[p]),
                "load_average": loads[p]} for p in ("idle", "busy")} | \
        {"failures": client.failures, "runs": runs, "worker_peaks": peaks}


def large_table(server: Server, table: Path, rows: int) -> dict:
    """The large table (``table``, :func:`large_csv`): its path through the forms, one quiet run
    beside ``veil anonymize`` (time and peak memory), the latency while runs work and when idle,
    the server's peak memory."""
    name, tmp = "adult-large", table.parent
    progress(f"workbench: the steward's path on {rows:,} rows")
    server_steps: dict[str, int | None] = {}
    steps = make_project(server, name, table, server_steps)
    progress(f"workbench: a run on {rows:,} rows")
    run_id, started, _ = start_run(server, name, "quiet")
    watch = PeakWatch(worker_pid(server, name, run_id))
    stages: dict[str, float] = {}
    run_s = server.wait(name, run_id, started, stages)
    worker_peak = watch.stop()
    progress(f"workbench: veil anonymize on {rows:,} rows")
    folder = tmp / "cli-large"
    folder.mkdir()
    try:
        cli = peak_memory(cli_anonymize(server.data_dir / name / "config.yaml", folder))
    except MissingTool as exc:
        cli = {"skipped": str(exc), "wall_s": run_cli(cli_anonymize(server.data_dir / name / "config.yaml", folder),
                                                       folder)}
    measured = latency(server, name, run_id, run_s)
    return {"rows": rows, "file_bytes": table.stat().st_size, "steps": steps,
            "run": {"workbench_s": run_s, "cli_s": cli["wall_s"], "ratio": run_s / cli["wall_s"], "stages": stages},
            "latency": measured,
            "memory": {"server_steps_bytes": server_steps, "server_peak_bytes": vm_hwm(server.pid),
                       "worker_peak_bytes": worker_peak, "cli_peak_bytes": cli.get("peak_bytes"),
                       "cli_skipped": cli.get("skipped"),
                       "worker_peak_busy_bytes": max((p for p in measured["worker_peaks"] if p), default=None)}}


# ------------------------------------------------------------------------------- the run

def startup(tmp: Path, repeat: int) -> dict:
    """A new ``veil serve`` each time, on a new data folder: process start to its printed address
    and to the first 200 of ``/``; ``veil --help`` as a whole process beside it."""
    printed, first = [], []
    for i in range(repeat):
        progress(f"workbench: cold start {i + 1}")
        server = Server(tmp / f"start-{i}")
        try:
            printed.append(server.printed_s)
            first.append(server.first_200_s)
        finally:
            server.stop()
    SAMPLES.append(first)
    progress("workbench: veil --help")
    helps = timed(veil_command("--help"), repeat)
    return {"first_200": spread(first), "printed": spread(printed), "veil_help": helps,
            "ratio_best": min(first) / helps["best_s"]}


def versions() -> dict[str, str]:
    return {name: importlib.metadata.version(name) for name in ("veil", "flask", "waitress", "werkzeug", "numpy",
                                                                "polars", "pyarrow")}


def run(repeat: int = 5, rows: int = ROWS) -> dict:
    """Measure everything (see the module's docstring); times in seconds, memory in bytes."""
    out = {"meta": {**machine(versions()), "repeat": repeat, "rows": rows, "latency_samples": LATENCY_SAMPLES}}
    with tempfile.TemporaryDirectory(prefix="veil-workbench-bench-") as folder:
        tmp = Path(folder)
        out["startup"] = startup(tmp, repeat)
        progress(f"workbench: writing {rows:,} rows")
        table = large_csv(tmp, rows)
        max_upload = max(200, table.stat().st_size // 2 ** 20 + 64)
        out["meta"]["max_upload_mib"] = max_upload
        server = Server(tmp / "data", max_upload)
        try:
            out["adult"] = adult_path(server, tmp, repeat)
            out["large"] = large_table(server, table, rows)
        finally:
            server.stop()
    progress("")
    lat = out["large"]["latency"]
    busy = lat["busy"]
    answered = busy["project"]["n"] + busy["status"]["n"]
    out["goals"] = [{"goal": f"the server answers every request while runs work on {rows:,} rows",
                     "measured": f"{answered:,} answered 200 and {lat['failures']} refused or failed (both phases), "
                                 f"the slowest in {fmt_time(max(busy['project']['max_s'], busy['status']['max_s']))}",
                     "met": lat["failures"] == 0}]
    out["notes"] = [
        ("No peer is driven: ARX's desktop GUI and sdcMicro's Shiny sdcApp are interactive (and R is not "
         "installed), so the workbench is measured beside veil's own command line on the same work."),
        ("HTTP through urllib, not a browser: a page's time is the server's answer and its transfer, without a "
         "browser's rendering; a form's time includes the redirect the browser follows and the next page."),
        ("A run's time is from its form's POST to the first status JSON saying done (polled every 20 ms); the "
         "command's, the whole `veil anonymize` process. Both write the release, its manifest and private file and "
         "the report; the workbench's run also starts a worker process and writes search.json (which judges "
         "the lattice's nodes again for the release page's figure) and workbench.json."),
        ("The worker's peak memory is its VmHWM read every 20 ms while it lives (a finished process's is gone), "
         "so growth in its last 20 ms could be missed."),
    ]
    return out


# ------------------------------------------------------------------------------- the reports

def mib(n: float | None) -> str:
    return "—" if n is None else f"{n / 2**20:,.0f} MiB"


def ratio(a: float | None, b: float | None) -> str:
    return "—" if not a or not b else f"{a / b:.2f}×"


STEPS = {"upload": "upload (multipart form, then the confirm page)", "confirm": "confirm (then the project's page)",
         "roles": "roles (then the Columns page)", "hierarchies": "the 7 ARX hierarchy files, one form each",
         "anonymize_form": "the Anonymize page"}
PAGES = {"project": "the project's page", "columns": "the Columns page", "risk": "the Risk page",
         "release": "a release's page", "compare": "the comparison of two releases"}


def rows_of(results: dict) -> dict[str, list[list[str]]]:
    """The report's tables as rows of text, shared by the terminal and the Markdown reports."""
    s, a, large = results["startup"], results["adult"], results["large"]
    run, lrun, mem = a["run"], large["run"], large["memory"]
    lat = large["latency"]
    startup = [["`veil serve`: process start to the first 200 of `/`", fmt_time(s["first_200"]["best_s"]),
                fmt_time(s["first_200"]["median_s"])],
               ["`veil serve`: process start to its printed address", fmt_time(s["printed"]["best_s"]),
                fmt_time(s["printed"]["median_s"])],
               ["`veil --help`, whole process", fmt_time(s["veil_help"]["best_s"]), fmt_time(s["veil_help"]["median_s"])]]
    steps = [[label, fmt_time(a["steps"].get(key)), fmt_time(large["steps"].get(key))] for key, label in STEPS.items()]
    runs = [[f"Adult ({a['rows']:,} rows), best of {run['workbench']['runs']}", fmt_time(run["workbench"]["best_s"]),
             fmt_time(run["cli"]["best_s"]), f"{run['ratio_median']:.2f}× (median of pairs)"],
            [f"{large['rows']:,} rows, once", fmt_time(lrun["workbench_s"]), fmt_time(lrun["cli_s"]),
             f"{lrun['ratio']:.2f}×"]]
    stages = [[stage, fmt_time(run["stages"].get(stage)), fmt_time(lrun["stages"].get(stage))]
              for stage in dict.fromkeys([*run["stages"], *lrun["stages"]])]
    pages = [[label, fmt_time(a["pages"][key]["best_s"]), fmt_time(a["pages"][key]["median_s"])]
             for key, label in PAGES.items()]
    latency = []
    for key, label in (("project", f"the project's page ({large['rows']:,} rows), back to back"),
                       ("status", "a run's status JSON, every 0.1 s")):
        for when in ("idle", "busy"):
            p = lat[when][key]
            loads = lat[when]["load_average"]
            latency.append([label, "idle" if when == "idle" else "a run working", f"{p['n']:,}", fmt_time(p["p50_s"]),
                            fmt_time(p["p95_s"]), fmt_time(p["max_s"]),
                            f"{min(loads):.1f}–{max(loads):.1f}" if loads else "—"])
    server = mem["server_steps_bytes"]
    memory = [["the server (upload, pages and runs)", mib(mem["server_peak_bytes"]), ""],
              *[[f"the server, {label}", mib(server.get(key)), ""] for key, label in
                (("before", "before the large table (after the Adult path)"), ("upload", "after the upload"),
                 ("confirm", "after the confirm"), ("roles", "after the roles"),
                 ("hierarchies", "after the 7 hierarchy files"))],
              ["the worker of the run", mib(mem["worker_peak_bytes"]), ratio(mem["worker_peak_bytes"], mem["cli_peak_bytes"])],
              ["the workers of the runs with the clients (largest)", mib(mem["worker_peak_busy_bytes"]),
               ratio(mem["worker_peak_busy_bytes"], mem["cli_peak_bytes"])],
              ["`veil anonymize` on the same table (GNU time)", mib(mem["cli_peak_bytes"]), "1.00×"]]
    return {"startup": startup, "steps": steps, "runs": runs, "stages": stages, "pages": pages, "latency": latency,
            "memory": memory}


HEADERS = {"startup": ["what", "best", "median"], "steps": ["step", "Adult", "large table"],
           "runs": ["table", "workbench run (POST to done)", "`veil anonymize` process", "workbench / command"],
           "stages": ["stage of the run (as its status names it)", "Adult", "large table"],
           "pages": ["GET (Adult project)", "best", "median"],
           "latency": ["GET", "server", "answers", "p50", "p95", "max", "load average at the phases' starts"],
           "memory": ["process", "peak resident memory", "/ `veil anonymize`"]}
TITLES = {"startup": "Startup (cold)", "steps": "The steward's path (each form and the page it leads to, once)",
          "runs": "The anonymization (k = 5, entropy ℓ = 3 on occupation, 2 %, loss, full-domain)",
          "stages": "Where a workbench run's time goes", "pages": "Pages",
          "latency": "Responsiveness (idle and busy phases alternating)",
          "memory": "Peak memory on the large table"}


def _context(results: dict) -> str:
    meta, s, large = results["meta"], results["startup"], results["large"]
    return (f"A real `python -m veil serve --port 0` process driven over HTTP with urllib (its cookie kept, each "
            f"form's CSRF token sent), beside veil's own command line: no peer can be driven (ARX's desktop GUI and "
            f"sdcMicro's Shiny sdcApp are interactive). Cold start best of {meta['repeat']}; the large table is Adult "
            f"resampled with replacement to {large['rows']:,} rows from the secure source ({mib(large['file_bytes'])} "
            f"of CSV, uploaded with `--max-upload {meta['max_upload_mib']}`). Start-up to the first page: "
            f"{s['ratio_best']:.1f}× `veil --help`.")


def terminal_report(results: dict) -> str:
    meta = results["meta"]
    out = [f"veil workbench benchmark, {meta['date']}", *wrap(machine_sentence(meta), ""), "",
           *wrap(_context(results), "")]
    for key, rows in rows_of(results).items():
        out += ["", TITLES[key], "  " + " | ".join(HEADERS[key])]
        out += ["  " + " | ".join(cell.replace("`", "") for cell in row) for row in rows]
    out += ["", "Notes"] + [line for note in results["notes"] for line in wrap(f"  - {note}", "    ")]
    out += goal_lines(results["goals"])
    return "\n".join(out)


def markdown_report(results: dict) -> str:
    meta = results["meta"]
    out = ["## The workbench (`veil serve`)", "",
           f"{machine_sentence(meta)}. Reproduce with `python benchmarks/run.py --only workbench`.", "",
           _context(results)]
    for key, rows in rows_of(results).items():
        head = HEADERS[key]
        out += ["", f"### {TITLES[key]}", "", "| " + " | ".join(head) + " |",
                "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
        out += ["| " + " | ".join(row) + " |" for row in rows]
    out += ["", "Notes:", ""] + [f"- {note}" for note in results["notes"]]
    out += ["", "Goals:", ""] + [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**"
                                 for g in results["goals"]]
    return "\n".join(out) + "\n"
