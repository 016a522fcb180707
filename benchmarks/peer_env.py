"""The peer environment: the tools veil is measured against, in a virtual environment of their own.

The peers pin numpy, pandas and scikit-learn to versions of their own (pyCANON 1.3.5 pins numpy
2.0.2 and pandas 2.3.3 exactly; diffprivlib 0.6.6 needs a scikit-learn below 1.7). Installed
beside veil they would decide which versions veil runs on, so they live in
``benchmarks/.peers-venv``, made on first use from ``peers-requirements.txt`` (every version
pinned) and made again when that file changes. Tumult Analytics pins pandas < 2, numpy < 2 and
pyspark < 3.6, which the other peers cannot share: it has an environment of its own,
``benchmarks/.tumult-venv`` from ``tumult-requirements.txt``, made the same way (``env="tumult"``).
smartnoise-synth (MST and AIM) has ``benchmarks/.synth-venv`` from ``synth-requirements.txt``
(``env="synth"``): its requirements name torch through opacus, which MST and AIM never import, so
that file lists every package the two need, pinned, and is installed with ``--no-deps``.
``env="veil"`` runs a function in a fresh process of veil's own environment (this interpreter), for
figures of a whole process.

A peer is measured by a function of the ``peers`` package, run in a subprocess of that
environment's Python: its keyword arguments go in as JSON on stdin, and what it returns (or, for
a generator, each item it yields, as it yields it) comes back as one JSON line each. veil's own
figures are measured in veil's environment in the same run, so the ratios compare the two.

Run as a script, this module is that subprocess's entry point.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import select
import subprocess
import sys
import traceback
import venv
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "peers-requirements.txt"
VENV = HERE / ".peers-venv"
# Written into the environment once every requirement is installed: the hash of the
# requirements file it was made from.
STAMP = VENV / "requirements.sha256"
#: Each environment by name: its requirements file and its folder.
ENVIRONMENTS = {"peers": (REQUIREMENTS, VENV),
                "tumult": (HERE / "tumult-requirements.txt", HERE / ".tumult-venv"),
                "synth": (HERE / "synth-requirements.txt", HERE / ".synth-venv")}
#: The environments whose requirements file is the whole list, installed with ``--no-deps``.
EXACT = {"synth"}


class PeerError(RuntimeError):
    """The peer environment could not be made, or a peer failed, timed out or died."""


class PeerTimeout(PeerError):
    """A peer took longer than the time it was given (its process has been ended)."""


def python(env: str = "peers") -> Path:
    """The Python of environment ``env`` (see :data:`ENVIRONMENTS`; ``"veil"``: this interpreter),
    after making the environment if it is missing or stale.

    Raises:
        PeerError: the environment could not be made (the message says why, in one line).
    """
    if env == "veil":
        return Path(sys.executable)
    requirements, folder = ENVIRONMENTS[env]
    stamp = folder / STAMP.name
    interpreter = folder / "bin" / "python"
    wanted = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == wanted and interpreter.is_file():
        return interpreter
    sys.stderr.write(f"making the peer environment in {folder} from {requirements.name} "
                     "(once; a minute or more)\n")
    venv.EnvBuilder(clear=True, with_pip=True).create(folder)
    exact = ["--no-deps"] if env in EXACT else []
    done = subprocess.run([str(interpreter), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           *exact, "-r", str(requirements)], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise PeerError(f"pip could not install {requirements.name} into {folder}: {last}")
    stamp.write_text(wanted + "\n")
    return interpreter


def results(module: str, function: str, timeout: float | None = None, env: str = "peers",
            **kwargs) -> Iterator[object]:
    """Run ``peers.<module>.<function>(**kwargs)`` in the peer environment ``env`` (for
    ``env="veil"``: ``<module>.<function>``, a module of this folder, in a fresh process of veil's
    own environment) and yield its results.

    A plain function yields one result, its return value; a generator yields each item as the
    peer yields it. Arguments and results are JSON values. ``timeout`` bounds the wait for each
    result (``None``: no bound); the peer's stdout goes to stderr, so the reports stay clean.

    Raises:
        PeerError: the environment could not be made, or the peer raised or died (the peer's
            exception type and message are in the error's message).
        PeerTimeout: a result took longer than ``timeout`` seconds.
    """
    target = module if env == "veil" else f"peers.{module}"
    process = subprocess.Popen([str(python(env)), str(Path(__file__).resolve()), target, function],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        try:
            process.stdin.write(json.dumps(kwargs).encode())
            process.stdin.close()
        except BrokenPipeError:
            pass  # the peer ended before reading its arguments; what it wrote says why
        for message in _lines(process.stdout, timeout):
            if "error" in message:
                raise PeerError(message["error"])
            yield message["result"]
        if process.wait() != 0:
            raise PeerError(f"{target}.{function} ended with exit code {process.returncode}")
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()


def call(module: str, function: str, env: str = "peers", **kwargs) -> object:
    """The single result of ``peers.<module>.<function>(**kwargs)`` run in the peer environment
    ``env`` (see :func:`results`, whose errors it raises)."""
    (result,) = results(module, function, env=env, **kwargs)
    return result


def _lines(stream, timeout: float | None) -> Iterator[dict]:
    """Each JSON line the peer writes, waiting at most ``timeout`` seconds for each."""
    buffer = b""
    while True:
        ready, _, _ = select.select([stream], [], [], timeout)
        if not ready:
            raise PeerTimeout(f"no result within {timeout:g} s")
        chunk = os.read(stream.fileno(), 1 << 20)
        if not chunk:
            return
        *complete, buffer = (buffer + chunk).split(b"\n")
        for line in complete:
            yield json.loads(line)


def _serve(module: str, function: str) -> None:
    """The subprocess's side: run the peer function and write each result as a JSON line."""
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    # Whatever the peer prints (Python or C) goes to stderr, so stdout carries only results.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        fn = getattr(importlib.import_module(module), function)
        outcome = fn(**json.load(sys.stdin))
        for item in outcome if inspect.isgenerator(outcome) else [outcome]:
            channel.write(json.dumps({"result": item}) + "\n")
            channel.flush()
    # Any failure of the peer is the parent's to report; the traceback helps whoever reads stderr.
    except Exception as exc:  # noqa: BLE001
        traceback.print_exc()
        channel.write(json.dumps({"error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"}) + "\n")
        channel.flush()


if __name__ == "__main__":
    _serve(*sys.argv[1:3])
