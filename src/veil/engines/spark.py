"""The Spark engine: the records stay in Apache Spark; veil collects how many hold each distinct row.

Every task veil runs on Spark follows one pattern:

1. **Read** the table with Spark (Parquet or CSV paths, or a Spark DataFrame); nothing is
   collected. CSV cells are read as text, as the local engine reads them, with the same header,
   delimiter sniffing, refusals and rule for malformed lines (:mod:`veil.engines.spark_read`).
2. **Aggregate once on Spark**: ``GROUP BY`` the columns the task reads (the quasi-identifiers,
   the sensitive columns, a metric's label, a DP query's columns), counting records. Grouping by
   the values is grouping by their dictionary codes, since codes are one per value. The result,
   one row per distinct combination with its count, is collected: for ``veil check`` it is the
   class × sensitive-value count matrix (its non-zero cells), for a full-domain search the finest
   lattice node's counts, for a DP query the true aggregate. It is as large as the number of
   distinct combinations, never the table.
3. **Measure, search and draw locally** with the local engine's own code on that summary
   (:class:`~veil.engines.frequency.FrequencyDataset`): the same classes, levels, lattice
   search and roll-ups, Mondrian's rounds (strict mode: the records of one distinct row never
   straddle a cut, so each round's exact weighted median, part sizes and count matrices are read
   from the collected counts; above ``rounds_on_spark_above`` distinct rows the rounds run
   level-synchronously on Spark instead, each deciding its cuts from value histograms that Spark
   aggregates, see :mod:`veil.engines.spark_mondrian`), and DP noise from the secure samplers,
   charged to the accountant.
4. **Write the release with Spark**: each record is joined (a broadcast join on its distinct row)
   to its published values, the records are shuffled (sorted by a keyed SHA-256 of a unique id,
   see :meth:`SparkDataset.publish`) unless the release keeps the input's order, and Spark
   writes the table as Parquet or CSV part files into a
   temporary folder beside the target; :mod:`veil.output` renames it into place and writes the
   manifest last, naming the folder and the SHA-256 of its listing.

Answers are therefore identical to the local engine's on the same records, an empty table's
included (a DP query answers it; ``veil check`` refuses it in the local engine's words). Spark's
Java process prints nothing on the terminal and its failures are one sentence
(:mod:`veil.engines.spark_session`).

PySpark is an optional dependency: ``pip install "veil[spark]"``.
"""

from __future__ import annotations

import difflib
import os
import secrets
import socket
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa

import re
from veil.engines.frequency import FrequencyDataset
from veil.engines.local import commit_release, release_targets
from veil.engines.spark_mondrian import COUNT as _COUNT
from veil.engines.spark_mondrian import ROW as _ROW
from veil.engines.spark_mondrian import partition_on_spark
from veil.engines.spark_mondrian import spark_column as _name
from veil.engines.spark_read import SparkSource, collect, read_source, utf8_aggregate
from veil.engines.spark_session import quiet_python, shown, spark_errors, start_session
from veil.errors import ColumnError, DataError, ParameterError
from veil.output import OutputSet

INSTALL_HINT = 'PySpark is not installed; install it with: pip install "veil[spark]".'
#: ``local[N]`` and ``local[N,F]`` (N threads or ``*``, F failures allowed per task), as Spark reads them.
_LOCAL = re.compile(r"local\[([0-9]+|\*)(?:\s*,\s*([0-9]+))?\]")
#: Seconds veil waits for a Spark master to accept a connection before it says it cannot be reached.
CONNECT_TIMEOUT = 10.0
#: Distinct rows above which strict Mondrian's rounds run on Spark rather than on the collected summary.
ROUNDS_ON_SPARK_ABOVE = 1_000_000
_RECORDS = "__veil_records"
_SUPPRESSED = "__veil_suppressed"
_ORDER = "__veil_order"
# Settings every session veil starts gets unless the configuration gives its own.
_DEFAULTS = {
    "spark.sql.session.timeZone": "UTC",      # timestamps print as the local engine prints them
    "spark.ui.showConsoleProgress": "false",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",  # no _SUCCESS file
}


def _pyspark():
    """The ``pyspark.sql`` module, or the one sentence saying how to install it."""
    # PySpark 4 warns, each time it checks its pandas, that it "does not yet fully support pandas >=
    # 3.0.0". veil hands Spark Arrow tables only, never pandas frames, so the warning says nothing
    # about veil's use; it would only reach a user of the Spark engine's Python API.
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    try:
        import pyspark.sql
    except ImportError:
        raise ParameterError(INSTALL_HINT) from None
    quiet_python()
    return pyspark.sql




def check_master(master: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse, within ``timeout`` seconds, a master URL Spark cannot use.

    ``local``, ``local[N]``, ``local[*]`` and ``local[N,F]`` (``F`` failures allowed per task) run
    in this process, with N >= 1 threads; ``spark://host:port`` (a
    standalone master, several comma-separated hosts allowed) must accept a TCP connection on one
    of its hosts; ``yarn`` needs ``HADOOP_CONF_DIR`` or ``YARN_CONF_DIR``; ``k8s://…`` is handed to
    Spark as it is.

    Raises:
        ParameterError: an unknown kind of URL, ``local[0]``, an unreachable standalone master, or
            YARN without its configuration.
    """
    if master == "local":
        return
    local = _LOCAL.fullmatch(master)
    if local:
        threads, failures = local.group(1), local.group(2)
        if threads != "*" and int(threads) < 1:
            raise ParameterError(f"the Spark master {shown(master, 40)!r} runs no thread; give local[N] with N >= 1, "
                                 "or local[*] for one thread per core.")
        if failures is not None and int(failures) < 1:
            raise ParameterError(f"the Spark master {shown(master, 40)!r} allows no attempt per task; give "
                                 "local[N,F] with F >= 1.")
        return
    if master == "yarn":
        if not (os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")):
            raise ParameterError("the master 'yarn' needs HADOOP_CONF_DIR or YARN_CONF_DIR to point at the cluster's "
                                 "configuration; set one, or use master local[*].")
        return
    if master.startswith("k8s://"):
        return
    if not master.startswith("spark://"):
        raise ParameterError(f"the Spark master {shown(master, 80)!r} is not one of local[*], local[N], "
                             "spark://HOST:PORT, yarn or k8s://…; give one of those.")
    reasons = []
    for host in master[len("spark://"):].split(","):
        parsed = urlparse(f"spark://{host}")
        try:
            with socket.create_connection((parsed.hostname or "", parsed.port or 7077), timeout=timeout):
                return
        except OSError as exc:
            reasons.append(str(exc.strerror or exc).lower() or "no answer")
    raise ParameterError(f"the Spark master {shown(master, 80)!r} cannot be reached within {timeout:g} s "
                         f"({reasons[0]}); check the address and that the master runs.")


class SparkDataset(FrequencyDataset):
    """A table Spark holds, summarized by the distinct rows of the columns a task reads.

    Made by :meth:`SparkEngine.dataset`. Besides the summary it keeps the Spark DataFrame of the
    records (:attr:`frame`) and the summary as Spark holds it, each distinct row numbered, so that
    a release can be joined back to the records row by row (:meth:`publish`).

    Attributes:
        frame: the records (a Spark DataFrame), never collected.
        engine: the :class:`SparkEngine` that read them.
    """

    def __init__(self, distinct: pa.Table, weights: np.ndarray, *, row_ids: np.ndarray, frame, summary,
                 read: Sequence[str], engine: "SparkEngine", **kwargs):
        super().__init__(distinct, weights, **kwargs)
        self.frame = frame
        self.engine = engine
        self._summary = summary
        self._read = list(read)
        self._row_ids = np.asarray(row_ids, dtype=np.int64)

    def partition_strict(self, splitter, progress=None):
        """Run strict Mondrian's rounds: on Spark, level-synchronously
        (:func:`~veil.engines.spark_mondrian.partition_on_spark`), when the summary has more
        distinct rows than the engine's ``rounds_on_spark_above``; else locally on the collected
        summary, which is faster while it is small. Both make the same partitions.

        Args:
            splitter: the Mondrian splitter of this summary's distinct rows.
            progress: called as ``progress(records_in_final_partitions, records)`` each round.

        Returns:
            ``(partition, rounds, node, parent)``, as :meth:`FrequencyDataset.partition_strict`.
        """
        if self.distinct_rows > self.engine.rounds_on_spark_above:
            with spark_errors("running Mondrian's rounds"):
                return partition_on_spark(self, splitter, progress)
        return super().partition_strict(splitter, progress)

    def publish(self, release):
        """The released table as a Spark DataFrame (lazy): every record joined to the published
        values of its distinct row, identifying columns dropped, suppressed records removed or
        shown as ``*``; shuffled when the release is (:attr:`veil.anonymize.Release.row_order`),
        else in the order Spark reads the input.

        **The shuffle.** Each record gets a unique 64-bit id (``monotonically_increasing_id``,
        taken as Spark reads the input) and the records are sorted by ``SHA-256(key ‖ id)``, where
        ``key`` is 256 bits: for a secure shuffle drawn from the operating system's secure source
        (:mod:`secrets`, as :func:`veil.randomness.secure_permutation` draws), for a seeded one
        drawn from the release's generator (reproducible on the same input files and Spark settings,
        not fit for release). SHA-256 keyed by a secret prefix is a pseudorandom function of the
        distinct ids, so the order of the hashes is a uniformly random permutation to anyone
        without the key, and ties (equal 256-bit hashes) do not occur in practice. The key exists
        only in this job's plan (do not enable Spark's event log for releases) and is never written
        or kept: nobody, veil included, can reproduce a secure order. Sorting is a Spark shuffle of
        the records; the part files, read in name order, hold the rows in the shuffled order.

        Args:
            release: a :class:`veil.anonymize.Release` of this dataset.

        Raises:
            ParameterError: the release belongs to another dataset.
        """
        from pyspark.sql import functions as F

        if release.dataset is not self:
            raise ParameterError("the release belongs to another dataset; publish it with the dataset it was made from.")
        labels = release.published_labels()
        qis = list(self.quasi_identifiers)
        names = {q: f"__veil_qi_{i}" for i, q in enumerate(qis)}
        published = pa.table({_ROW: pa.array(self._row_ids, type=pa.int64()),
                              **{names[q]: pa.array(labels[q], type=pa.string()) for q in qis},
                              _SUPPRESSED: pa.array(labels["suppressed"])})
        mapping = self.frame.sparkSession.createDataFrame(published)
        keys = self._summary.select(*[_name(c).alias(f"__veil_key_{i}") for i, c in enumerate(self._read)],
                                    _name(_ROW))
        # The records meet their distinct row on every column read, null-safely: a missing value
        # is a value like any other, as the summary grouped it.
        on = [_name(c).eqNullSafe(F.col(f"__veil_key_{i}")) for i, c in enumerate(self._read)]
        frame = self.frame
        if release.shuffled:
            frame = frame.withColumn(_ORDER, F.monotonically_increasing_id())
        joined = frame.join(F.broadcast(keys), on=on, how="inner") \
            .join(F.broadcast(mapping), on=_ROW, how="inner")
        if release.suppressed_style == "remove":
            joined = joined.filter(~F.col(_SUPPRESSED))
        if release.shuffled:
            key = _shuffle_key(release).hex()
            joined = joined.orderBy(F.sha2(F.concat(F.lit(key), F.col(_ORDER).cast("string")), 256))
        columns = []
        for name in release.column_names:
            if name in names:
                columns.append(F.col(names[name]).alias(name))
            else:
                columns.append(_name(name))
        return joined.select(*columns)


class SparkEngine:
    """Run veil's tasks on Apache Spark (see the module notes).

    Args:
        master: where Spark runs: ``local[*]``, ``local[N]``, ``spark://host:port``, ``yarn`` or
            ``k8s://…`` (ignored when ``session`` is given).
        config: Spark settings (``{"spark.executor.memory": "4g"}``), applied to the session.
        session: an existing ``SparkSession`` to use instead of starting one.
        connect_timeout: seconds to wait for a standalone master before saying it cannot be reached.
        rounds_on_spark_above: strict Mondrian runs its rounds on Spark, level-synchronously, when
            a table has more distinct rows (of the columns read) than this, and locally on the
            collected summary otherwise (``0``: always on Spark). Each round on Spark is a few
            Spark jobs, seconds of fixed cost, which a small summary does not repay.

    Raises:
        ParameterError: PySpark is not installed (with how to install it), or a negative
            ``rounds_on_spark_above``.
    """

    name = "spark"

    def __init__(self, master: str = "local[*]", config: Mapping[str, Any] | None = None, session=None,
                 connect_timeout: float = CONNECT_TIMEOUT, rounds_on_spark_above: int = ROUNDS_ON_SPARK_ABOVE):
        _pyspark()
        if rounds_on_spark_above < 0:
            raise ParameterError(f"rounds_on_spark_above is a number of distinct rows, 0 or more, not "
                                 f"{rounds_on_spark_above}.")
        self.rounds_on_spark_above = int(rounds_on_spark_above)
        self.master = master
        self.config = {str(k): str(v) for k, v in (config or {}).items()}
        self.connect_timeout = float(connect_timeout)
        self._session = session

    def __repr__(self) -> str:
        return f"SparkEngine(master={self.master!r})"

    @property
    def session(self):
        """The ``SparkSession``, started on first use (:func:`veil.engines.spark_session.start_session`).

        Raises:
            ParameterError: the master is invalid or cannot be reached within the timeout, Java is
                missing, or Spark cannot start.
        """
        if self._session is None:
            _pyspark()
            check_master(self.master, self.connect_timeout)
            self._session = start_session(self.master, {**_DEFAULTS, **self.config})
        return self._session

    # -- reading ----------------------------------------------------------------------------

    def read(self, data, delimiter: str | None = None, malformed: str = "refuse"):
        """The table as a Spark DataFrame (nothing collected), with the kind and CSV delimiter.

        Args:
            data: a Spark DataFrame, or the path of a Parquet file or folder (``.parquet``/``.pq``,
                or a folder of Parquet part files) or of a CSV file or folder (every cell text).
            delimiter: the CSV delimiter (sniffed when ``None``).
            malformed: ``"refuse"`` or ``"drop"``: what a malformed CSV line does (see
                :mod:`veil.engines.spark_read`; with ``"refuse"`` the check runs when a job reads
                the lines).

        Returns:
            ``(frame, kind, delimiter)``.

        Raises:
            DataError: the path does not exist, Spark cannot read it, or a column holds lists,
                structures, maps or raw bytes.
            ParameterError: a bad delimiter, or ``malformed`` is neither value.
        """
        source = self._source(data, delimiter, malformed)
        return source.frame, source.kind, source.delimiter

    def _source(self, data, delimiter: str | None, malformed: str) -> SparkSource:
        sql = _pyspark()
        if malformed not in ("refuse", "drop"):
            raise ParameterError(f"malformed must be 'refuse' or 'drop', not {malformed!r}.")
        if isinstance(data, sql.DataFrame):
            return read_source(None, data, delimiter, malformed)
        if isinstance(data, (str, os.PathLike)) and "://" not in str(data) and not Path(data).exists():
            raise DataError(f"file {str(data)!r} does not exist; check the path.")  # before Spark starts
        return read_source(self.session, data, delimiter, malformed)

    def dataset(self, data, *, quasi_identifiers: str | Sequence[str], sensitive: str | Sequence[str] | None = None,
                identifying: str | Sequence[str] | None = None, hierarchies: Mapping[str, Any] | None = None,
                orders: Mapping[str, Sequence[str]] | None = None, missing_values: Sequence[str] = ("",),
                delimiter: str | None = None, also: Sequence[str] = (), allow_empty: bool = False,
                malformed: str = "refuse") -> SparkDataset:
        """Read a table with Spark and collect its summary over the columns a task reads.

        Args:
            data: a Spark DataFrame or a Parquet or CSV path (see :meth:`read`).
            quasi_identifiers: the quasi-identifying columns.
            sensitive: the sensitive columns.
            identifying: columns dropped from a release (not read).
            hierarchies: per column, a :class:`veil.Hierarchy`, the path of an ARX hierarchy, or
                a function of the column's distinct values (a pyarrow array) that builds one.
            orders: per column, the order of its values.
            missing_values: cell texts that mean "missing" besides null and NaN.
            delimiter: the CSV delimiter (sniffed when ``None``).
            also: further columns to read (a metric's label).
            allow_empty: summarize a table with no records (a DP query answers it) instead of
                refusing it.
            malformed: what a malformed CSV line does (see :meth:`read`).

        Raises:
            DataError: the table cannot be read, has a malformed line (with ``malformed="refuse"``),
                or has no records (unless ``allow_empty``), each in the local engine's words.
            ColumnError: a named column is not in the table's schema (the closest is suggested).
            HierarchyError: a hierarchy does not cover its column's values.
        """
        source = self._source(data, delimiter, malformed)
        dataset = self._summarize(source, quasi_identifiers=quasi_identifiers, sensitive=sensitive,
                                  identifying=identifying, hierarchies=hierarchies, orders=orders,
                                  missing_values=missing_values, also=also, allow_empty=allow_empty)
        if isinstance(data, (str, os.PathLike)):
            # Named as Dataset names a file it reads: its name without the extension.
            dataset.name = os.path.splitext(os.path.basename(os.path.normpath(os.fspath(data))))[0] or None
        return dataset

    def _summarize(self, source: SparkSource, *, quasi_identifiers, sensitive=None, identifying=None,
                   hierarchies=None, orders=None, missing_values=("",), also=(), allow_empty=False) -> SparkDataset:
        """The summary of ``source`` over the columns a task reads (see :meth:`dataset`)."""
        from pyspark.sql import functions as F

        frame, kind, delimiter = source.frame, source.kind, source.delimiter
        columns = source.columns
        if len(set(columns)) != len(columns):
            raise DataError("the table has two columns with the same name; rename one.")
        qis, sens, ident = _names(quasi_identifiers), _names(sensitive), _names(identifying)
        for role, names in (("quasi-identifier", qis), ("sensitive", sens), ("identifying", ident),
                            ("requested", list(also)), ("hierarchy", list(hierarchies or {})),
                            ("order", list(orders or {}))):
            for name in names:
                if name not in columns:
                    close = difflib.get_close_matches(name, columns, n=1, cutoff=0.5)
                    hint = f"; did you mean '{close[0]}'?" if close else f"; the columns are {', '.join(columns)}."
                    raise ColumnError(f"the {role} column '{name}' is not in the table's schema{hint}")
        read = list(dict.fromkeys(qis + sens + [c for c in also if c not in ident]))
        summary = frame.groupBy(*[_name(c) for c in read]) \
            .agg(F.count(F.lit(1)).alias(_COUNT), *utf8_aggregate(source)) \
            .withColumn(_ROW, F.monotonically_increasing_id())
        # Checkpointed, so that the numbering of the distinct rows collected here is the one the
        # release is joined on later.
        summary, collected = collect(source, summary)
        if collected.num_rows == 0 and not allow_empty:
            source.refuse_empty()
        distinct = collected.select(read)
        built = {}
        for name, given in (hierarchies or {}).items():
            built[name] = given(distinct.column(name)) if callable(given) else given
        dataset = SparkDataset(distinct, collected.column(_COUNT).to_numpy(),
                               row_ids=collected.column(_ROW).to_numpy(), frame=frame, summary=summary, read=read,
                               engine=self, columns=columns, kind=kind,
                               delimiter=delimiter, quasi_identifiers=qis, sensitive=sens, identifying=ident,
                               hierarchies=built, orders=orders, missing_values=missing_values)
        return dataset

    def query_dataset(self, data, columns: Sequence[str], delimiter: str | None = None, *,
                      strict: bool = False) -> SparkDataset:
        """The true aggregate a DP query reads: the distinct values of ``columns`` with their
        counts (with no column, the number of records alone).

        A table with no records is answered like any other (refusing it would tell that it is
        empty), and a malformed CSV line is left out by the public rule of
        :mod:`veil.data.lenient`, reported nowhere, as the local engine reads for DP queries.

        Args:
            data: a Spark DataFrame or a Parquet or CSV path.
            columns: the columns the query reads.
            delimiter: the CSV delimiter (sniffed when ``None``).
            strict: refuse a malformed CSV line instead (``veil dp --strict``, for the curator).

        Raises:
            DataError: the table cannot be read (with ``strict``, a malformed line).
            ColumnError: a column is not in the table's schema.
        """
        from pyspark.sql import functions as F

        source = self._source(data, delimiter, "refuse" if strict else "drop")
        if columns:
            return self._summarize(source, quasi_identifiers=list(columns), allow_empty=True)
        # A count reads no value: one constant column makes a summary of one row, the records.
        return self._summarize(source.only(F.lit("").alias(_RECORDS)), quasi_identifiers=[_RECORDS],
                               allow_empty=True)

    # -- writing ----------------------------------------------------------------------------

    def put_release(self, outputs: OutputSet, release, out: str | os.PathLike) -> dict:
        """Have Spark write a release's table into ``outputs`` as a folder of part files; it
        appears when ``outputs`` commits.

        The format follows ``out``'s suffix: ``.parquet`` (or ``.pq``) for Parquet, anything else
        CSV (a header in every part, the input's delimiter).

        Args:
            outputs: the :class:`~veil.output.OutputSet` that declares ``out`` among its ``folders``.
            release: a release of a :class:`SparkDataset`.
            out: the folder to write (it must not exist).

        Returns:
            ``{"sha256": …, "bytes": …, "files": …, "folder": True}`` of the folder.

        Raises:
            DataError: Spark cannot write the folder (everything put is removed).
            ParameterError: the release cannot be published by Spark (see :meth:`SparkDataset.publish`).
        """
        table = release.data
        ds = release.dataset
        parquet = Path(out).suffix.lower() in (".parquet", ".pq")
        delimiter = ds.table.delimiter if ds.table.kind == "csv" else ","

        def write(folder: str) -> None:
            try:
                if parquet:
                    table.write.mode("errorifexists").parquet(folder)
                else:
                    (table.write.mode("errorifexists").option("header", True).option("sep", delimiter)
                     .option("quote", '"').option("escape", '"').option("emptyValue", "").csv(folder))
            except Exception as exc:  # noqa: BLE001 - Spark's job errors
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise DataError(f"Spark could not write {str(out)!r} ({first}); nothing was written.") from None

        return outputs.put_folder(out, write)

    def write_release(self, release, out: str | os.PathLike, manifest: str | os.PathLike | None = None, *,
                      extra: Mapping | None = None, reads=(), outputs: OutputSet | None = None) -> str:
        """Write a release with Spark as a new folder of part files, and its manifest last.

        The format follows ``out``'s suffix: ``.parquet`` (or ``.pq``) for Parquet, anything else
        CSV (a header in every part, the input's delimiter). The manifest names the folder with the
        SHA-256 of its listing (:func:`veil.output.folder_sha256`): the name, size and SHA-256 of
        every part file; :func:`veil.output.load_manifest` checks it.

        Args:
            release: a release of a :class:`SparkDataset`.
            out: the folder to write (it must not exist).
            manifest: where the manifest (JSON) goes, its private file beside it
                (:func:`veil.manifests.private_path`); without it only the folder is written.
            extra: entries added to the manifest.
            reads: files the run read, which no output may replace.
            outputs: an :class:`~veil.output.OutputSet` declared beforehand with ``out`` (in its
                ``folders``), ``manifest`` and its private file
                (:func:`veil.engines.local.release_targets`), so that bad targets are refused before
                any work.

        Returns:
            The manifest's text (its ``release`` entry included).

        Raises:
            DataError: a target cannot be written, or ``out`` exists.
            ParameterError: the release cannot be published by Spark (see :meth:`SparkDataset.publish`).
        """
        if outputs is None:
            outputs = OutputSet(release_targets(out, manifest), reads=reads, folders=[out])
        return commit_release(self, outputs, release, out, manifest, extra)


def _shuffle_key(release) -> bytes:
    """The 256-bit key of a release's shuffle: secure unless the release was given a seed or a
    generator, which then draws it (see :meth:`SparkDataset.publish`)."""
    if release.row_order == "secure shuffle":
        return secrets.token_bytes(32)
    return release._rng.bytes(32)  # the release's own generator, as the local engine's shuffle uses it


def _names(value) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
