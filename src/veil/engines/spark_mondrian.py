"""Strict Mondrian's rounds run level-synchronously on Spark, with the local engine's decisions.

The local engine partitions the collected summary of distinct rows (``WeightedSplitter.run`` in
:mod:`veil.anonymize.mondrian.weighted_splitter`): each round, every open partition tries its
widest dimension, cut at the exact weighted median, and keeps the cut only if every part satisfies
every model. Here the distinct rows stay in Spark, each carrying the split-tree node of the
partition that holds it (every record of a distinct row falls on one side of a strict cut, so a
node per distinct row is a node per record). Each round:

1. **Aggregate on Spark**, for all open partitions at once, the value histogram of every
   dimension: ``GROUP BY node, dimension, rank`` (and the codes of the sensitive columns the
   models read), summing the records. It is as large as the open partitions times the values each
   holds per dimension, never the table, and it is collected.
2. **Decide locally** with the local splitter's own code on those histograms: the dimensions each
   partition tries, widest first (``order_dimensions``); then the exact weighted median, the part
   sizes and part × sensitive-value counts of each cut and every model's verdict (``split``, the
   local round read from histogram runs instead of distinct rows; a cut reads only the values of
   one dimension, so the histogram answers it exactly). Node numbers, the order of the parts and
   the numbering of final partitions are the local engine's.
3. **Relabel on Spark**: the cuts, as a table ``(node, dimension)`` and ``(node, rank) → child
   node`` (as large as the histograms of the partitions cut), are joined to the distinct rows,
   and the new labels checkpointed.

Rounds end when no partition splits; the final node of each distinct row is then collected, so the
partitions, published cells and manifest are exactly the local engine's.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

#: The summary's columns: a distinct row's number and its number of records.
ROW = "__veil_row"
COUNT = "__veil_count"
_NODE = "__veil_node"
_WEIGHT = "__veil_weight"
_DIM = "__veil_dim"
_RANK = "__veil_rank"
_CHILD = "__veil_child"
_PICK = "__veil_pick"


def spark_column(column: str):
    """A Spark column by its exact name (dots, spaces and dashes are not parsed).

    Args:
        column: the column's name.
    """
    from pyspark.sql import functions as F

    return F.col("`" + column.replace("`", "``") + "`")


def _rank(j: int) -> str:
    return f"__veil_r{j}"


def _code(i: int) -> str:
    return f"__veil_c{i}"


def _value_table(session, values: pa.Array, numbers: np.ndarray, name: str):
    """A Spark table from each distinct value of a column to its number (rank or code)."""
    pairs = pa.table({"__veil_value": values, name: pa.array(numbers.astype(np.int64))})
    pairs = pairs.group_by(["__veil_value", name]).aggregate([])
    return session.createDataFrame(pairs)


def ranked_rows(dataset, splitter):
    """The distinct rows as Spark holds them, with their rank on every dimension, the code of
    every tracked sensitive column and their record count, all in the root node (checkpointed).

    Each column's values meet their numbers in a broadcast join (null-safe: a missing value is a
    value); the tables joined are as large as the columns' distinct values.

    Args:
        dataset: the :class:`~veil.engines.spark.SparkDataset`.
        splitter: the local splitter of its summary (its dimensions and tracked columns).
    """
    from pyspark.sql import functions as F

    frame = dataset._summary
    session = frame.sparkSession
    numbered = [(dim.name, dim.rank[dim.column.codes], _rank(j)) for j, dim in enumerate(splitter.dims)]
    numbered += [(name, codes, _code(i)) for i, (name, _, codes) in enumerate(splitter.tracked)]
    for column, numbers, alias in numbered:
        table = _value_table(session, dataset.table.data.column(column), numbers, alias)
        frame = frame.join(F.broadcast(table), on=spark_column(column).eqNullSafe(F.col("__veil_value")), how="inner") \
            .drop("__veil_value")
    columns = [_rank(j) for j in range(splitter.d)] + [_code(i) for i in range(len(splitter.tracked))]
    return frame.select(ROW, F.col(COUNT).alias(_WEIGHT), *columns,
                        F.lit(0).cast("long").alias(_NODE)).localCheckpoint(eager=True)


def partition_on_spark(dataset, splitter, progress=None) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Strict Mondrian's partitioning of a :class:`~veil.engines.spark.SparkDataset`, its rounds
    run level-synchronously on Spark (see the module notes).

    Args:
        dataset: the Spark dataset (its summary held by Spark).
        splitter: the local splitter of the same summary (its dimensions, models, tracked columns).
        progress: called as ``progress(records_in_final_partitions, records)`` each round.

    Returns:
        What the local splitter returns: ``(partition, rounds, node, parent)``, the partition of
        every distinct row of the collected summary, the number of rounds, the split-tree node of
        every final partition and the parent of every node.
    """
    from pyspark.sql import functions as F

    d, s = splitter.d, len(splitter.tracked)
    frame = ranked_rows(dataset, splitter)
    session = frame.sparkSession
    total = int(splitter.weights.sum())
    parents = [np.array([-1], dtype=np.int64)]
    final_nodes = []
    first, n_nodes, done, rounds = 0, 1, 0, 0
    codes = [_code(i) for i in range(s)]
    while first < n_nodes:
        rounds += 1
        hist = (frame.filter(F.col(_NODE) >= first)
                .select(_NODE, F.posexplode(F.array(*[_rank(j) for j in range(d)])).alias(_DIM, _RANK),
                        *codes, _WEIGHT)
                .groupBy(_NODE, _DIM, _RANK, *codes).agg(F.sum(_WEIGHT).alias(_WEIGHT))
                .toArrow())
        column = {name: hist.column(name).to_numpy().astype(np.int64) for name in hist.column_names}
        order = np.lexsort([column[c] for c in reversed(codes)] + [column[_RANK], column[_DIM], column[_NODE]])
        seg = column[_NODE][order] - first
        dim = column[_DIM][order]
        rank = column[_RANK][order]
        weight = column[_WEIGHT][order]
        n_seg = n_nodes - first
        run = seg * d + dim
        lengths = np.bincount(run, minlength=n_seg * d).astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        ends = starts + lengths - 1
        low, high = rank[starts].reshape(n_seg, d), rank[ends].reshape(n_seg, d)
        sizes = np.add.reduceat(weight, starts).reshape(n_seg, d)[:, 0]
        # A value set counts the values it holds: a new value wherever the (run, rank) changes.
        fresh = np.ones(len(run), dtype=bool)
        fresh[1:] = (run[1:] != run[:-1]) | (rank[1:] != rank[:-1])
        held_all = np.bincount(run, weights=fresh, minlength=n_seg * d).reshape(n_seg, d).astype(np.int64)
        held = {j: held_all[:, j] for j in splitter.held_dimensions(n_seg)}
        round_splitter = splitter.on_histograms(dim, rank, weight, [column[c][order] for c in codes])
        ranked, n_cut, level = round_splitter.order_dimensions(low, high, held, sizes)
        accepted, blocks, block_lengths, _, owners = round_splitter.split(
            np.arange(len(run), dtype=np.int64), starts, lengths, ranked, n_cut, high, level,
            runs=np.arange(n_seg * d, dtype=np.int64).reshape(n_seg, d))
        # Final partitions are numbered in the order they close, as the local splitter numbers them.
        final = np.flatnonzero(~accepted)
        done += int(sizes[final].sum())
        final_nodes.append(first + final)
        if blocks:
            members = np.concatenate(blocks)
            part_lengths = np.concatenate(block_lengths)
            child = n_nodes + np.repeat(np.arange(len(part_lengths)), part_lengths)
            parents.append(first + np.concatenate(owners))
            chosen, moves = _cuts(session, first + seg[members], dim[members], rank[members], child)
            frame = _apply(frame, d, chosen, moves)
            first, n_nodes = n_nodes, n_nodes + len(part_lengths)
        else:
            first = n_nodes
        if progress:
            progress(done, total)
    labels = frame.select(ROW, _NODE).toArrow()
    row_ids = dataset._row_ids
    sorter = np.argsort(row_ids, kind="stable")
    rows = sorter[np.searchsorted(row_ids, labels.column(ROW).to_numpy(), sorter=sorter)]
    lookup = np.full(n_nodes, -1, dtype=np.int64)
    finals = np.concatenate(final_nodes)
    lookup[finals] = np.arange(len(finals), dtype=np.int64)
    partition = np.empty(len(row_ids), dtype=np.int64)
    partition[rows] = lookup[labels.column(_NODE).to_numpy()]
    return partition, rounds, np.concatenate(final_nodes), np.concatenate(parents)


def _cuts(session, node: np.ndarray, dim: np.ndarray, rank: np.ndarray, child: np.ndarray):
    """The round's cuts as two Spark tables: the dimension each split partition is cut on, and
    the child node of each value of that dimension."""
    chosen = np.unique(np.stack([node, dim], axis=1), axis=0)
    moves = np.unique(np.stack([node, rank, child], axis=1), axis=0)
    return (session.createDataFrame(pa.table({_NODE: chosen[:, 0], _DIM: chosen[:, 1]})),
            session.createDataFrame(pa.table({_NODE: moves[:, 0], _RANK: moves[:, 1], _CHILD: moves[:, 2]})))


def _apply(frame, d: int, chosen, moves):
    """Move every distinct row of a split partition to its child node (checkpointed)."""
    from pyspark.sql import functions as F

    picked = frame.join(F.broadcast(chosen), on=_NODE, how="left") \
        .withColumn(_PICK, F.element_at(F.array(*[_rank(j) for j in range(d)]), F.col(_DIM).cast("int") + 1))
    moved = picked.join(moves, on=[picked[_NODE] == moves[_NODE], picked[_PICK] == moves[_RANK]], how="left")
    keep = [c for c in frame.columns if c != _NODE]
    return moved.select(*[picked[c] for c in keep],
                        F.coalesce(moves[_CHILD], picked[_NODE]).alias(_NODE)).localCheckpoint(eager=True)
