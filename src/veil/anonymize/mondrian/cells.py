"""Mondrian's final partitions published as cells: the cell of each partition on each
quasi-identifier, its box in the manifest, and the classes the partitions make.

A column split on values publishes the range of the values a partition's records hold,
``[min-max]`` (a single value keeps its own text); a column in text order publishes the set of
those values, ``{a,b}``; a column split along its hierarchy publishes the lowest common ancestor
of those values (the node's label, covering every value below it). A range that also holds the
missing category is published as ``[21-34] or missing``; a cell holding only it as the empty
text.

Partitions whose cells print the same text on every quasi-identifier (identical relaxed cells,
or two hierarchy nodes with one label) are indistinguishable in the table, so they are one class.
"""

from __future__ import annotations

import numpy as np

from veil.anonymize.mondrian.dimensions import HIERARCHY, RANGE, Dimension
from veil.anonymize.mondrian.runs import run_offsets
from veil.cells import Cells
from veil.classes import EquivalenceClasses, group_rows
from veil.data.dataset import Dataset
from veil.data.encoding import MISSING_LABEL

# Value sets of columns with up to this many values are compared as bit masks.
_MASK_VALUES = 62


def publish(dataset: Dataset, dims: list[Dimension], partition: np.ndarray):
    """The cells of every partition and the classes they make: partitions whose cells print the
    same text on every quasi-identifier are one class (identical cells, or distinct cells with
    one label, such as two hierarchy nodes named alike). Returns ``(classes, keys, boxes,
    class_of_partition)``; ``keys[c, j]`` indexes ``boxes[j]``.

    Args:
        dataset: the table partitioned.
        dims: the dimension of every quasi-identifier (:func:`~veil.anonymize.mondrian.dimensions.dimension`).
        partition: the partition of every row, numbered from 0.
    """
    n_parts = int(partition.max()) + 1
    order = np.argsort(partition, kind="stable")
    sizes = np.bincount(partition, minlength=n_parts)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    cells, part_keys, boxes = [], [], []
    for j, dim in enumerate(dims):
        values = dim.rank[dim.column.codes[order]]
        low = np.minimum.reduceat(values, starts).astype(np.int64)
        high = np.maximum.reduceat(values, starts).astype(np.int64)
        if dim.kind == HIERARCHY:
            c, key, box = _hierarchy_cells(dim, low, high)
        elif dim.kind == RANGE:
            c, key, box = _range_cells(dim, values, starts, low, high)
        else:
            c, key, box = _set_cells(dim, partition, n_parts)
        cells.append(c)
        part_keys.append(key)
        boxes.append(box)
    class_of_part, keys = group_rows(part_keys, [c.n_cells for c in cells])
    classes = EquivalenceClasses.from_partition(dataset, class_of_part[partition], keys, cells)
    merged, class_of = classes.merge_identical()
    if merged is classes:
        return classes, keys, boxes, class_of_part
    for j in range(len(dims)):
        if merged.cells(j) is not classes.cells(j):
            boxes[j] = _merged_boxes(boxes[j], keys[:, j], class_of, merged.n_classes)
    return merged, merged.keys, boxes, class_of[class_of_part]


def _merged_boxes(boxes: list, cell: np.ndarray, class_of: np.ndarray, n_classes: int) -> list:
    """One box per merged class: its members' box when they share one, else ``{"any_of": [...]}``
    listing the distinct boxes of its members (cells that print alike but cover other values)."""
    pairs = np.unique(class_of.astype(np.int64) * len(boxes) + cell)
    owner, members = np.divmod(pairs, len(boxes))
    starts = np.searchsorted(owner, np.arange(n_classes + 1))
    out = []
    for c in range(n_classes):
        held = [boxes[m] for m in members[starts[c]:starts[c + 1]].tolist()]
        out.append(held[0] if len(held) == 1 else {"any_of": held})
    return out


def _json_value(dim: Dimension, code: int):
    col = dim.column
    if col.is_numeric:
        value = float(col.numeric[code])
        return int(value) if value.is_integer() else value
    return str(col.labels[code])


def _range_label(labels: np.ndarray, low: int, high: int) -> str:
    return str(labels[low]) if low == high else f"[{labels[low]}-{labels[high]}]"


def _range_cells(dim: Dimension, values: np.ndarray, starts: np.ndarray, low: np.ndarray, high: np.ndarray):
    """Ranges of codes (ranks are codes here): ``[low-high]``; with a missing category, sets."""
    col = dim.column
    labels = col.labels
    missing = col.missing_code
    if missing is None:
        card = col.cardinality
        unique, key = np.unique(low * card + high, return_inverse=True)
        ulow, uhigh = np.divmod(unique, card)
        pairs = list(zip(ulow.tolist(), uhigh.tolist()))
        texts = np.array([_range_label(labels, a, b) for a, b in pairs], dtype=object)
        boxes = [{"min": _json_value(dim, a), "max": _json_value(dim, b)} for a, b in pairs]
        return Cells.from_ranges(col, ulow, uhigh, texts), key, boxes
    # The missing category is the last code: a cell covers a range of values and maybe it.
    has_missing = high == missing
    top = np.maximum.reduceat(np.where(values == missing, -1, values), starts).astype(np.int64)
    bottom = np.where(low == missing, -1, low)
    card = col.cardinality + 1
    unique, key = np.unique(((bottom + 1) * card + (top + 1)) * 2 + has_missing, return_inverse=True)
    rest, umiss = np.divmod(unique, 2)
    ubottom, utop = np.divmod(rest, card)
    ubottom, utop, umiss = ubottom - 1, utop - 1, umiss.astype(bool)
    in_range = np.where(ubottom >= 0, utop - ubottom + 1, 0)
    indptr = np.concatenate([[0], np.cumsum(in_range + umiss)])
    indices = np.empty(int(indptr[-1]), dtype=np.int64)
    offset = run_offsets(in_range)
    indices[np.repeat(indptr[:-1], in_range) + offset] = np.repeat(ubottom, in_range) + offset
    indices[indptr[1:][umiss] - 1] = missing
    texts, boxes = [], []
    for a, b, m in zip(ubottom.tolist(), utop.tolist(), umiss.tolist()):
        if a < 0:
            texts.append(MISSING_LABEL)
            boxes.append({"min": None, "max": None, "missing": True})
            continue
        text = _range_label(labels, a, b)
        texts.append(f"{text} or missing" if m else text)
        box = {"min": _json_value(dim, a), "max": _json_value(dim, b)}
        if m:
            box["missing"] = True
        boxes.append(box)
    return Cells.from_sets(col, indptr, indices, np.array(texts, dtype=object)), key, boxes


def _group_sets(code: np.ndarray, indptr: np.ndarray, cardinality: int) -> tuple[np.ndarray, np.ndarray]:
    """Group equal sets: set ``i`` is ``code[indptr[i]:indptr[i+1]]`` (sorted, no repeats).

    Returns the first set of each group and the group of every set. Sets are compared by two
    64-bit sums of random words per value and their size, and the grouping is then verified
    element by element (a hash collision falls back to comparing the sets as bytes).
    """
    n_sets = len(indptr) - 1
    lengths = np.diff(indptr)
    if cardinality <= _MASK_VALUES:
        signature = np.bitwise_or.reduceat(np.left_shift(np.int64(1), code), indptr[:-1])[:, None]
    else:
        words = np.random.default_rng(0x4D6F6E64).integers(0, 2**63, size=(cardinality, 2), dtype=np.uint64)
        sums = [np.add.reduceat(words[code, i], indptr[:-1]) for i in (0, 1)]
        signature = np.stack(sums + [lengths.astype(np.uint64)], axis=1)
    _, first, key = np.unique(signature, axis=0, return_index=True, return_inverse=True)
    key = key.reshape(-1)
    representative = first[key]
    offset = run_offsets(lengths)
    if cardinality <= _MASK_VALUES or np.array_equal(code, code[np.repeat(indptr[representative], lengths) + offset]):
        return first, key
    seen: dict[bytes, int] = {}
    key = np.empty(n_sets, dtype=np.int64)
    firsts = []
    for i in range(n_sets):  # pragma: no cover - a 128-bit hash collision
        sig = code[indptr[i]:indptr[i + 1]].tobytes()
        if sig not in seen:
            seen[sig] = len(firsts)
            firsts.append(i)
        key[i] = seen[sig]
    return np.array(firsts, dtype=np.int64), key


def _set_cells(dim: Dimension, partition: np.ndarray, n_parts: int):
    """The set of values each partition holds, ``{a,b}`` (a single value keeps its text)."""
    col = dim.column
    _, pairs = group_rows([partition, col.codes], [n_parts, col.cardinality])
    part, code = pairs[:, 0], pairs[:, 1]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(part, minlength=n_parts))])
    first, key = _group_sets(code, indptr, col.cardinality)
    # Order the cells by their smallest value, then size, for a deterministic layout.
    resort = np.lexsort([indptr[first + 1] - indptr[first], code[indptr[first]]])
    rank = np.empty_like(resort)
    rank[resort] = np.arange(len(resort))
    first, key = first[resort], rank[key]
    lengths = indptr[first + 1] - indptr[first]
    cell_indptr = np.concatenate([[0], np.cumsum(lengths)])
    gather = np.repeat(indptr[first], lengths) + run_offsets(lengths)
    indices = code[gather]
    labels = col.labels
    texts, boxes = [], []
    for i in range(len(first)):
        members = [str(labels[c]) for c in indices[cell_indptr[i]:cell_indptr[i + 1]].tolist()]
        texts.append(members[0] if len(members) == 1 else "{" + ",".join(members) + "}")
        boxes.append({"values": members})
    return Cells.from_sets(col, cell_indptr, indices, np.array(texts, dtype=object)), key, boxes


def _hierarchy_cells(dim: Dimension, low: np.ndarray, high: np.ndarray):
    """The lowest common ancestor of each partition's values."""
    level, node = dim.lca(low, high)
    flat = dim.node_offset[level] + node
    unique, key = np.unique(flat, return_inverse=True)
    indptr, members = dim.leaves
    lengths = indptr[unique + 1] - indptr[unique]
    cell_indptr = np.concatenate([[0], np.cumsum(lengths)])
    gather = np.repeat(indptr[unique], lengths) + run_offsets(lengths)
    ulevel = np.searchsorted(dim.node_offset, unique, side="right") - 1
    unode = unique - dim.node_offset[ulevel]
    texts = np.array([str(dim.node_labels[lv][nd]) for lv, nd in zip(ulevel.tolist(), unode.tolist())],
                     dtype=object)
    boxes = [{"node": text, "level": lv} for text, lv in zip(texts.tolist(), ulevel.tolist())]
    # Members of a node are in code order (a stable argsort made them).
    return Cells.from_sets(dim.column, cell_indptr, members[gather], texts), key, boxes
