"""Whole processes, as a user runs them: their wall time, peak memory and what they import.

A command's time here includes starting Python and every import, which is what a user waits
for; each figure is the best of several runs, reported with the median and the worst, since a
shared machine adds its own noise. Two commands compared with each other run in pairs
(:func:`paired`), so that both see the same load, and the median of the pairs' ratios is taken. Peak memory is the maximum resident set size that GNU time
(``/usr/bin/time -v``, Debian's ``time`` package) reports for the process.
"""

from __future__ import annotations

import compileall
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

GNU_TIME = Path("/usr/bin/time")
# Runs veil exactly as its console script does (``veil = veil.cli:main``), with whichever veil
# this interpreter imports.
_VEIL = "import sys; from veil.cli import main; sys.argv[0] = 'veil'; sys.exit(main())"


class MissingTool(RuntimeError):
    """A tool a measurement needs is not installed; the message says how to get it."""


def veil_command(*args: str) -> list[str]:
    """The argument vector that runs ``veil ARGS…`` in a fresh interpreter."""
    return [sys.executable, "-c", _VEIL, *args]


def python_command(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def run_once(argv: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user plus system, threads included) of one run of a process, its
    output discarded.

    Raises:
        RuntimeError: the process failed (its standard error is quoted).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1: a check whose threshold failed, still a run
        raise RuntimeError(f"{' '.join(argv[:4])}… failed: {proc.stderr.decode(errors='replace')[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _spread(runs: list[float]) -> dict:
    return {"best_s": min(runs), "median_s": statistics.median(runs), "worst_s": max(runs), "runs": len(runs)}


def timed(argv: list[str], repeat: int, env: dict | None = None) -> dict:
    """Wall time of ``repeat`` runs of a process (its output discarded): best, median, worst.

    Raises:
        RuntimeError: the process failed (its standard error is quoted).
    """
    return _spread([run_once(argv, env)[0] for _ in range(repeat)])


def paired(first: list[str], second: list[str], pairs: int, env: dict | None = None) -> dict:
    """Run two commands in turn, ``pairs`` times, after one untimed run of each (the files they
    read are then in the page cache for both), the command that starts a pair alternating.

    Each pair's ratio (first over second) is taken on wall time and on CPU time (user plus
    system, every thread): the two processes of a pair ran a moment apart, under about the same
    load, so the median of the ratios is steadier than a ratio of two separate minima.

    Returns:
        ``first`` and ``second``: each command's wall times (best, median, worst) and its median
        CPU time; ``ratio`` and ``cpu_ratio``: the median of the pairs' ratios, and every ratio.

    Raises:
        RuntimeError: a process failed.
    """
    run_once(first, env), run_once(second, env)
    walls: tuple[list[float], list[float]] = ([], [])
    cpus: tuple[list[float], list[float]] = ([], [])
    for i in range(pairs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for side in order:
            wall, cpu = run_once((first, second)[side], env)
            walls[side].append(wall)
            cpus[side].append(cpu)
    ratios = [a / b for a, b in zip(*walls)]
    cpu_ratios = [a / b for a, b in zip(*cpus)]
    return {"first": {**_spread(walls[0]), "cpu_median_s": statistics.median(cpus[0])},
            "second": {**_spread(walls[1]), "cpu_median_s": statistics.median(cpus[1])},
            "ratio": {"median": statistics.median(ratios), "runs": ratios},
            "cpu_ratio": {"median": statistics.median(cpu_ratios), "runs": cpu_ratios}}


def compile_package(module) -> None:
    """Compile a package's modules to bytecode in its ``__pycache__`` folders, as installing it
    does, so that a process measured here reads them rather than compiling the sources on every
    run (as it would where ``PYTHONDONTWRITEBYTECODE`` is set, or the folder is not writable)."""
    compileall.compile_dir(str(Path(module.__file__).parent), quiet=1)


def require_gnu_time() -> None:
    """Raises:
        MissingTool: ``/usr/bin/time`` is missing or is not GNU time.
    """
    hint = ("peak memory is measured with GNU time's -v; install Debian's 'time' package "
            "(sudo apt-get install time) so that /usr/bin/time exists")
    if not GNU_TIME.exists():
        raise MissingTool(f"{GNU_TIME} does not exist: {hint}.")
    probe = subprocess.run([str(GNU_TIME), "-v", "true"], capture_output=True, text=True)
    if "Maximum resident set size" not in probe.stderr:
        raise MissingTool(f"{GNU_TIME} is not GNU time: {hint}.")


def peak_memory(argv: list[str], env: dict | None = None) -> dict:
    """Peak resident memory (bytes) and wall time of one run of a process, by ``/usr/bin/time -v``.

    Raises:
        MissingTool: no GNU time (see :func:`require_gnu_time`).
        RuntimeError: the process failed.
    """
    require_gnu_time()
    proc = subprocess.run([str(GNU_TIME), "-v", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, env=env)
    report = proc.stderr
    status = re.search(r"Exit status: (\d+)", report)
    if proc.returncode not in (0, 1) or status is None:
        raise RuntimeError(f"{' '.join(argv[:4])}… failed: {report[-800:]}")
    peak_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", report).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", report).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    return {"peak_bytes": peak_kib * 1024, "wall_s": seconds}


def import_profile(argv: list[str], env: dict | None = None) -> dict[str, float]:
    """Seconds spent importing each package's own modules in one run (``python -X importtime``:
    the self time of every module, summed by its top-level package), largest first."""
    proc = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env)
    totals: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+\d+ \| *(\S+)", line)
        if match:
            package = match.group(2).split(".")[0]
            totals[package] = totals.get(package, 0.0) + int(match.group(1)) / 1e6
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def loaded_packages(argv: list[str], packages: tuple[str, ...], env: dict | None = None) -> list[str]:
    """Which of ``packages`` a process imported (read from ``-X importtime``)."""
    return sorted(set(import_profile(argv, env)) & set(packages))


def with_threads(threads: int | None) -> dict:
    """The environment for a process limited to ``threads`` threads (``None``: unlimited)."""
    env = dict(os.environ)
    env.pop("VEIL_THREADS", None)
    if threads is not None:
        env["VEIL_THREADS"] = str(threads)
    return env
