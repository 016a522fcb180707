"""``veil serve``: the bind address refused without --allow-remote, and a real server process that
prints its address, answers only with the token, and stops on SIGTERM, killing the run it was doing
(the pages themselves are tested through Flask's test client in the other test_workbench_*.py)."""
from __future__ import annotations

import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="the workbench needs the serve extra (Flask)")
pytest.importorskip("waitress", reason="the workbench needs the serve extra (waitress)")

TINY = b"age,sex\n" + b"".join(f"{20 + i % 5},{'MF'[i % 2]}\n".encode() for i in range(20))

# ``veil serve`` itself, with one thing added for the test: a task that waits (run by this same
# file as the worker process, in place of ``python -m veil.workbench.worker``, without the worker's
# watch on its parent, so that only the server's own stop can end it) and a page that starts it.
LAUNCHER = textwrap.dedent('''
    import subprocess
    import sys
    import time
    from pathlib import Path


    def wait(project, params, out, progress):
        (out / "release.csv").write_text("half a release")
        progress.stage("waiting")
        time.sleep(120)


    if sys.argv[1] == "worker":
        import os
        import threading

        from veil.workbench import worker
        if os.environ.get("WATCH_PARENT"):   # the real worker's watch on its server
            threading.Thread(target=worker._watch_parent, args=(os.getppid(),), daemon=True).start()
        worker.TASKS["wait"] = "__main__:wait"
        worker.MAKES_RELEASE.add("wait")
        sys.exit(worker.run(Path(sys.argv[2])))

    popen = subprocess.Popen

    def start_worker(args, **options):
        if list(args[1:3]) == ["-m", "veil.workbench.worker"]:
            args = [args[0], __file__, "worker", *args[3:]]
        return popen(args, **options)

    subprocess.Popen = start_worker
    import veil.workbench
    create_app = veil.workbench.create_app

    def create_app_with_wait(*args, **options):
        app = create_app(*args, **options)

        @app.get("/test-wait/<name>")
        def start(name):
            from veil.workbench.app import jobs, workspace
            return jobs().start(workspace().project(name), "wait", {})
        return app

    veil.workbench.create_app = create_app_with_wait
    sys.argv = ["veil", *sys.argv[1:]]
    from veil.cli import main
    main()
''')


class Server:
    """A ``veil serve --port 0`` process, its address and a cookie-keeping client."""

    def __init__(self, command: list[str], data_dir: Path, env: dict | None = None):
        self.process = subprocess.Popen([*command, "serve", "--port", "0", "--data-dir", str(data_dir)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env={**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})})
        lines = []
        for line in self.process.stdout:
            lines.append(line)
            if line.startswith("open "):
                break
        found = re.search(r"open (http://127\.0\.0\.1:(\d+)/\?token=(\S+))", "".join(lines))
        assert found, "".join(lines) + self.process.stderr.read()
        self.url, self.base, self.token = found.group(1), f"http://127.0.0.1:{found.group(2)}", found.group(3)
        self.client = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def status(self, path: str, *, signed_in: bool = True) -> int:
        opener = self.client if signed_in else urllib.request.build_opener()
        try:
            with opener.open(self.base + path, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=20)
        return code, self.process.stderr.read()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.process.stderr.close()


def waiting_run(tmp_path: Path, env: dict | None = None) -> tuple[Server, Path]:
    """The launcher's server over a project ``p``, signed in, with its waiting task under way; the
    server and the run's folder."""
    from veil.workbench.projects import Workspace

    Workspace(tmp_path / "data").create("p", TINY, fmt="csv", delimiter=",")
    launcher = tmp_path / "launcher.py"
    launcher.write_text(LAUNCHER)
    server = Server([sys.executable, str(launcher)], tmp_path / "data", env=env)
    try:
        with server.client.open(server.url, timeout=10):
            pass
        with server.client.open(server.base + "/test-wait/p", timeout=10) as response:
            run = tmp_path / "data" / "p" / "runs" / response.read().decode()
        under_way(run)
    except BaseException:
        server.kill()
        raise
    return server, run


def under_way(run: Path) -> None:
    """Wait until the waiting task of ``run`` has started."""
    for _ in range(200):
        if json.loads((run / "status.json").read_text()).get("stage") == "waiting":
            return
        time.sleep(0.05)
    pytest.fail((run / "log").read_text())


def test_a_non_local_host_is_refused_and_nothing_is_written(tmp_path):
    from typer.testing import CliRunner

    from veil.cli import app

    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert "add --allow-remote" in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_the_server_answers_only_with_the_token_and_stops_on_sigterm(tmp_path):
    server = Server([sys.executable, "-m", "veil"], tmp_path / "data")
    try:
        assert server.status("/", signed_in=False) == 403
        assert server.status("/?token=" + "x" * 43, signed_in=False) == 403
        with server.client.open(server.url, timeout=10) as response:   # the token, traded for a cookie
            assert response.status == 200 and response.url == server.base + "/"
            assert 'id="new-project"' in response.read().decode()
        assert server.status("/") == 200
        assert server.status("/", signed_in=False) == 403
        # more requests at once than the server has threads: waitress warns of its queue's depth
        # through logging, which must not reach the terminal
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(48) as pool:
            assert set(pool.map(lambda _: server.status("/static/workbench.css"), range(192))) == {200}
        code, stderr = server.stop()
        assert code == 0 and stderr == "veil workbench stopped\n"
    finally:
        server.kill()


def test_sigterm_kills_the_run_in_progress_and_leaves_no_release(tmp_path):
    server, run = waiting_run(tmp_path)
    try:
        worker = int((run / "pid").read_text())
        os.kill(worker, 0)                                  # alive
        assert (run / "out" / "release.csv").exists()
        code, stderr = server.stop()
        assert code == 0, stderr
        with pytest.raises(ProcessLookupError):
            os.kill(worker, 0)
        assert json.loads((run / "status.json").read_text())["state"] == "interrupted"
        assert not (run / "out").exists() and not (tmp_path / "data" / "p" / "releases").exists()
    finally:
        server.kill()


def test_a_server_killed_with_sigkill_leaves_no_release_and_the_next_one_settles_the_run(tmp_path):
    """SIGKILL gives the server no chance to stop its worker: the worker sees its parent gone and
    exits before anything is renamed into releases/; the next server marks the run interrupted
    and removes what it had written."""
    server, run = waiting_run(tmp_path, env={"WATCH_PARENT": "1"})
    try:
        worker = int((run / "pid").read_text())
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        for _ in range(200):                                # the worker notices within a quarter second
            try:
                os.kill(worker, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the worker outlived its server")
        assert not (tmp_path / "data" / "p" / "releases").exists()
    finally:
        server.kill()
    again = Server([sys.executable, "-m", "veil"], tmp_path / "data")
    try:
        assert json.loads((run / "status.json").read_text())["state"] == "interrupted"
        assert not (run / "out").exists() and not (tmp_path / "data" / "p" / "releases").exists()
    finally:
        again.kill()


def test_without_the_serve_extra_the_command_says_what_to_install(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from veil.cli import app

    monkeypatch.setitem(sys.modules, "waitress", None)   # as if it were not installed
    result = CliRunner().invoke(app, ["serve", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 2
    assert "pip install 'veil[serve]'" in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []
