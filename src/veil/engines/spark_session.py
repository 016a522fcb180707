"""Starting Spark quietly: the Java process's own output never reaches the terminal, and whatever
goes wrong is one sentence.

Spark runs in a Java process that PySpark starts and that writes to the terminal on its own:
its start-up notices, its log (warnings at every start, and whole Java stack traces when a job
fails) and, when it cannot start, the reason. veil starts that process itself, with its standard
output and error sent to a pipe that a background thread reads into a short buffer
(:data:`JVM_LINES` lines), so nothing it prints reaches the terminal; the buffer is what veil reads
to say, in one sentence, why Spark could not start. Its log level is set to ``ERROR`` once it runs.
PySpark's own Python warnings and Py4J's log records are kept from the terminal as well (Py4J's
logger gets a handler that drops them when the program has not set up logging itself).

The master URL is checked before anything starts (:func:`veil.engines.spark.check_master`), and
Java is looked for (``$JAVA_HOME/bin/java``, else ``java`` on the path) before Spark is asked to
start, so that a bad master is refused as a bad master and a missing Java as a missing Java.

A session given to :class:`~veil.engines.spark.SparkEngine` (``session=``), or a Java process that
PySpark already started in this program, is used as it is.
"""

from __future__ import annotations

import collections
import logging
import os
import re
import shutil
import threading
import warnings
from contextlib import contextmanager
from typing import Any, Iterator, Mapping

from veil.errors import DataError, ParameterError

__all__ = ["JVM_LINES", "java_message", "quiet_python", "shown", "spark_errors", "start_session"]

#: Lines of the Java process's output kept in memory (the newest ones).
JVM_LINES = 200
#: Seconds to wait for the last words of a Java process that stopped while starting.
_LAST_WORDS = 5.0

_COMPLAINT = re.compile(r"Error|Exception|[Ii]nvalid|[Uu]nrecognized|[Cc]annot|[Cc]ould not")
JAVA_MISSING = ("Spark needs Java 17 or later, which was not found; install it, or set JAVA_HOME to the folder "
                "it is installed in.")


class _Output(threading.Thread):
    """Reads the Java process's output into a bounded buffer, so that it never blocks on a full pipe."""

    def __init__(self, stream):
        super().__init__(name="veil-spark-output", daemon=True)
        self.stream = stream
        self.lines: collections.deque[str] = collections.deque(maxlen=JVM_LINES)

    def run(self) -> None:
        try:
            for raw in iter(self.stream.readline, b""):
                self.lines.append(raw.decode("utf-8", errors="replace").rstrip())
        except (OSError, ValueError):  # the pipe closed under us: the process is gone
            pass


_output: _Output | None = None


def shown(text: Any, limit: int = 200) -> str:
    """Untrusted text made safe for a one-line message: unprintable characters (control
    characters, line breaks) turned into spaces, runs of spaces folded, at most ``limit``
    characters (a local helper, until messages share one)."""
    folded = " ".join("".join(c if c.isprintable() else " " for c in str(text)).split())
    return folded if len(folded) <= limit else folded[:limit - 1].rstrip() + "…"


def quiet_python() -> None:
    """Keep PySpark's Python warnings and Py4J's log records off the terminal."""
    warnings.filterwarnings("ignore", module=r"pyspark(\.|$)")
    warnings.filterwarnings("ignore", module=r"py4j(\.|$)")
    py4j = logging.getLogger("py4j")
    if not any(isinstance(h, logging.NullHandler) for h in py4j.handlers):
        py4j.addHandler(logging.NullHandler())  # records still reach handlers the program set up


def java_path() -> str | None:
    """The ``java`` Spark's launcher would run: ``$JAVA_HOME/bin/java``, else ``java`` on the path."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        return candidate if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None
    return shutil.which("java")


def java_message(exc: BaseException) -> str:
    """The message of the Java exception behind a PySpark or Py4J error, on one line, without its
    stack trace (the innermost cause's message when the outer one has none)."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            text, cause = None, java
            while cause is not None and not text:
                text = cause.getMessage()
                cause = cause.getCause()
            if text:
                return shown(text.splitlines()[0])
        except Exception:  # noqa: BLE001 - the gateway may be gone
            pass
    lines = [line for line in str(exc).splitlines() if line.strip() and not line.startswith(("\tat ", "  at "))]
    lines = [line for line in lines if not line.startswith("An error occurred while calling")] or lines
    return shown(lines[0].lstrip(": ")) if lines else type(exc).__name__


@contextmanager
def spark_errors(what: str) -> Iterator[None]:
    """Turn a failure of Spark inside the block (a job, its Java process) into one sentence.

    Args:
        what: what veil was doing, to follow "while" (``"running Mondrian's rounds"``).

    Raises:
        DataError: ``Spark failed while <what> (<the Java exception's message>); …``.
    """
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        yield
    except (Py4JError, PySparkException) as exc:
        raise DataError(f"Spark failed while {what} ({java_message(exc)}); check the Spark settings and the "
                        "cluster.") from None


def _started_message(lines: list[str]) -> str:
    """Why a Java process that stopped while starting did so, read from its last words."""
    text = "\n".join(lines)
    if "UnsupportedClassVersionError" in text or "has been compiled by a more recent version" in text:
        return "Spark needs Java 17 or later and the Java found is older; install a newer one, or set JAVA_HOME to it."
    if "JAVA_HOME is not set" in text or "java: not found" in text or "java: No such file" in text:
        return JAVA_MISSING
    # The first line that complains says why; the ones after it say that the process stops.
    reason = next((line for line in lines if _COMPLAINT.search(line) and not line.startswith("WARNING")), None)
    detail = f" ({shown(reason)})" if reason else ""
    return f"Spark's Java process stopped while starting{detail}; check the Spark settings."


def start_session(master: str, settings: Mapping[str, str]):
    """A ``SparkSession`` at ``master`` with ``settings``, its Java process kept from the terminal.

    Args:
        master: a master URL that :func:`veil.engines.spark.check_master` accepted.
        settings: Spark settings, applied as the process starts (driver memory and Java options
            included) and to the session.

    Raises:
        ParameterError: Java is missing or too old, or Spark cannot start (one sentence).
    """
    global _output
    quiet_python()
    from pyspark import SparkConf
    from pyspark.core.context import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    if SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        if java_path() is None:
            raise ParameterError(JAVA_MISSING)
        conf = SparkConf().setMaster(master).setAppName("veil")
        for key, value in settings.items():
            conf.set(key, value)
        # A pipe of veil's own, read from before the process starts: were the process to stop while
        # starting, its last words are still there to read.
        read_end, write_end = os.pipe()
        output = _Output(os.fdopen(read_end, "rb"))
        output.start()
        gateway = None
        # PySpark leaves its pipe to a Java process that stopped while starting open, and keeps no
        # reference to it once it raises: it is closed, with a ResourceWarning that is not the
        # user's concern, when the exception is dropped.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            try:
                gateway = launch_gateway(conf, popen_kwargs={"stdout": write_end, "stderr": write_end})
            except Exception:  # noqa: BLE001 - PySpark raises its own type when the process stops
                os.close(write_end)
                output.join(_LAST_WORDS)
                output.stream.close()
        if gateway is None:
            raise ParameterError(_started_message(list(output.lines)))
        os.close(write_end)
        _output = output
        SparkContext._ensure_initialized(gateway=gateway)
    builder = SparkSession.builder.master(master).appName("veil")
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
    except Exception as exc:  # noqa: BLE001 - PySpark and Py4J raise their own types
        raise ParameterError(f"Spark could not start ({java_message(exc)}); check the master and the Spark "
                             "settings.") from None
    return session
