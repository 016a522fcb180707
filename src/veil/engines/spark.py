"""The Spark engine: the records stay in Apache Spark; veil collects how many hold each distinct row.

Every task veil runs on Spark follows one pattern:

1. **Read** the table with Spark (Parquet or CSV paths, or a Spark DataFrame); nothing is
   collected. CSV cells are read as text, as the local engine reads them, with the same
   delimiter sniffing.
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

Answers are therefore identical to the local engine's on the same records.

PySpark is an optional dependency: ``pip install "veil[spark]"``.
"""

from __future__ import annotations

import difflib
import os
import secrets
import socket
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa

from veil.data.io import CANDIDATE_DELIMITERS, SNIFF_BYTES, normalize_delimiter, refuse_unreadable_types, sniff_delimiter
from veil.engines.frequency import FrequencyDataset
from veil.engines.local import commit_release, release_targets
from veil.engines.spark_mondrian import COUNT as _COUNT
from veil.engines.spark_mondrian import ROW as _ROW
from veil.engines.spark_mondrian import partition_on_spark
from veil.engines.spark_mondrian import spark_column as _name
from veil.errors import ColumnError, DataError, ParameterError
from veil.output import OutputSet

INSTALL_HINT = 'PySpark is not installed; install it with: pip install "veil[spark]".'
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
    try:
        import pyspark.sql
    except ImportError:
        raise ParameterError(INSTALL_HINT) from None
    return pyspark.sql




def check_master(master: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse, within ``timeout`` seconds, a master URL Spark cannot use.

    ``local``, ``local[N]`` and ``local[*]`` run in this process; ``spark://host:port`` (a
    standalone master, several comma-separated hosts allowed) must accept a TCP connection on one
    of its hosts; ``yarn`` needs ``HADOOP_CONF_DIR`` or ``YARN_CONF_DIR``; ``k8s://…`` is handed to
    Spark as it is.

    Raises:
        ParameterError: an unknown kind of URL, an unreachable standalone master, or YARN without
            its configuration.
    """
    if master == "local" or (master.startswith("local[") and master.endswith("]")):
        return
    if master == "yarn":
        if not (os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")):
            raise ParameterError("the master 'yarn' needs HADOOP_CONF_DIR or YARN_CONF_DIR to point at the cluster's "
                                 "configuration; set one, or use master local[*].")
        return
    if master.startswith("k8s://"):
        return
    if not master.startswith("spark://"):
        raise ParameterError(f"the Spark master {master!r} is not one of local[*], local[N], spark://HOST:PORT, yarn "
                             "or k8s://…; give one of those.")
    reasons = []
    for host in master[len("spark://"):].split(","):
        parsed = urlparse(f"spark://{host}")
        try:
            with socket.create_connection((parsed.hostname or "", parsed.port or 7077), timeout=timeout):
                return
        except OSError as exc:
            reasons.append(str(exc.strerror or exc).lower() or "no answer")
    raise ParameterError(f"the Spark master {master!r} cannot be reached within {timeout:g} s ({reasons[0]}); "
                         "check the address and that the master runs.")


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
        """The ``SparkSession``, started on first use.

        Raises:
            ParameterError: the master cannot be reached within the timeout, or Java is missing.
        """
        if self._session is None:
            sql = _pyspark()
            check_master(self.master, self.connect_timeout)
            builder = sql.SparkSession.builder.master(self.master).appName("veil")
            for key, value in {**_DEFAULTS, **self.config}.items():
                builder = builder.config(key, value)
            try:
                self._session = builder.getOrCreate()
                self._session.sparkContext.setLogLevel("ERROR")
            except Exception as exc:  # noqa: BLE001 - PySpark raises its own types for a JVM that will not start
                text = str(exc)
                if "JAVA_GATEWAY_EXITED" in text or "JAVA_HOME" in text or "java" in text.lower():
                    raise ParameterError("Spark could not start its Java process; install Java 17 or later, or set "
                                         "JAVA_HOME to it.") from None
                raise ParameterError(f"Spark could not start ({text.splitlines()[0] if text else type(exc).__name__})"
                                     "; check the master and the Spark settings.") from None
        return self._session

    # -- reading ----------------------------------------------------------------------------

    def read(self, data, delimiter: str | None = None):
        """The table as a Spark DataFrame (nothing collected), with the kind and CSV delimiter.

        Args:
            data: a Spark DataFrame, or the path of a Parquet file or folder (``.parquet``/``.pq``,
                or a folder of Parquet part files) or of a CSV file or folder (every cell text).
            delimiter: the CSV delimiter (sniffed from the first lines when ``None``).

        Returns:
            ``(frame, kind, delimiter)``.

        Raises:
            DataError: the path does not exist, or Spark cannot read it.
            ParameterError: a bad delimiter.
        """
        sql = _pyspark()
        if isinstance(data, sql.DataFrame):
            return data, "spark", ","
        if not isinstance(data, (str, os.PathLike)):
            raise DataError(f"the Spark engine reads a Spark DataFrame or the path of a Parquet or CSV table, not a "
                            f"{type(data).__name__}.")
        text = str(data)
        local = "://" not in text
        path = Path(text)
        if local and not path.exists():
            raise DataError(f"file {text!r} does not exist; check the path.")
        parquet = path.suffix.lower() in (".parquet", ".pq") or (local and path.is_dir() and any(
            p.suffix == ".parquet" for p in path.iterdir()))
        delimiter = normalize_delimiter(delimiter)
        try:
            if parquet:
                frame, kind = self.session.read.parquet(text), "parquet"
            else:
                if delimiter is None:
                    delimiter = _sniff(path) if local else ","
                frame = (self.session.read.option("header", True).option("sep", delimiter)
                         .option("quote", '"').option("escape", '"').option("inferSchema", False)
                         .option("mode", "FAILFAST").option("encoding", "UTF-8").csv(text))
                kind = "csv"
        except ParameterError:
            raise
        except Exception as exc:  # noqa: BLE001 - Spark's analysis errors
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DataError(f"Spark cannot read {text!r} ({first}).") from None
        return frame, kind, delimiter or ","

    def dataset(self, data, *, quasi_identifiers: str | Sequence[str], sensitive: str | Sequence[str] | None = None,
                identifying: str | Sequence[str] | None = None, hierarchies: Mapping[str, Any] | None = None,
                orders: Mapping[str, Sequence[str]] | None = None, missing_values: Sequence[str] = ("",),
                delimiter: str | None = None, also: Sequence[str] = ()) -> SparkDataset:
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

        Raises:
            DataError: the table cannot be read, or has no records.
            ColumnError: a named column is not in the table's schema (the closest is suggested).
            HierarchyError: a hierarchy does not cover its column's values.
        """
        from pyspark.sql import functions as F

        frame, kind, delimiter = self.read(data, delimiter)
        columns = list(frame.columns)
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
        summary = frame.groupBy(*[_name(c) for c in read]).agg(F.count(F.lit(1)).alias(_COUNT)) \
            .withColumn(_ROW, F.monotonically_increasing_id())
        # Checkpointed, so that the numbering of the distinct rows collected here is the one the
        # release is joined on later.
        summary = summary.localCheckpoint(eager=True)
        collected = summary.toArrow()
        if collected.num_rows == 0:
            raise DataError("the table has no records; an empty table cannot be published.")
        distinct = collected.select(read)
        refuse_unreadable_types(distinct, "the table")
        built = {}
        for name, given in (hierarchies or {}).items():
            built[name] = given(distinct.column(name)) if callable(given) else given
        return SparkDataset(distinct, collected.column(_COUNT).to_numpy(), row_ids=collected.column(_ROW).to_numpy(),
                            frame=frame, summary=summary, read=read, engine=self, columns=columns, kind=kind,
                            delimiter=delimiter, quasi_identifiers=qis, sensitive=sens, identifying=ident,
                            hierarchies=built, orders=orders, missing_values=missing_values)

    def query_dataset(self, data, columns: Sequence[str], delimiter: str | None = None) -> SparkDataset:
        """The true aggregate a DP query reads: the distinct values of ``columns`` with their
        counts (with no column, the number of records alone).

        Args:
            data: a Spark DataFrame or a Parquet or CSV path.
            columns: the columns the query reads.
            delimiter: the CSV delimiter (sniffed when ``None``).

        Raises:
            DataError: the table cannot be read.
            ColumnError: a column is not in the table's schema.
        """
        from pyspark.sql import functions as F

        if columns:
            return self.dataset(data, quasi_identifiers=list(columns), delimiter=delimiter)
        frame, _, _ = self.read(data, delimiter)
        # A count reads no value: one constant column makes a summary of one row, the records.
        return self.dataset(frame.select(F.lit("").alias(_RECORDS)), quasi_identifiers=[_RECORDS])

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


def _sniff(path: Path) -> str:
    """The delimiter of a CSV file, or of the first part file of a CSV folder."""
    if path.is_dir():
        parts = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith((".", "_")))
        if not parts:
            raise DataError(f"the folder {str(path)!r} holds no table file; check the path.")
        path = parts[0]
    try:
        with open(path, "rb") as fh:
            sample = fh.read(SNIFF_BYTES).decode("utf-8-sig", errors="ignore")
    except OSError as exc:
        raise DataError(f"cannot read file {str(path)!r}: {exc.strerror or exc}.") from None
    return sniff_delimiter(sample) if sample.strip() else CANDIDATE_DELIMITERS[1]
