"""Mondrian multidimensional partitioning (LeFevre, DeWitt and Ramakrishnan, ICDE 2006).

Mondrian splits the table recursively: a partition is cut at the median of the quasi-identifier
with the widest normalized range, and a cut is kept only if every part satisfies the privacy
models. Each final partition is one equivalence class; its records publish, per
quasi-identifier, the smallest cell that holds their values (a range ``[21-34]``, a hierarchy
node, or a set of values). No record is suppressed: the whole table is the first partition.

* :mod:`.anonymizer`: :class:`Mondrian`, its settings, the fit and the release;
* :mod:`.dimensions`: how each quasi-identifier is ordered, measured and split (numeric, ordered,
  along a hierarchy, a value set), and how the dimension to cut is chosen;
* :mod:`.parts`: the candidate parts of a split as the privacy models see them;
* :mod:`.splitter`: the splitter over the records, in strict and relaxed mode, round by round;
* :mod:`.weighted_splitter`: the strict splitter over a table summarized by its distinct rows,
  whose decisions the Spark engine reuses (:mod:`veil.engines.spark_mondrian`);
* :mod:`.runs`: positions within the runs of rows the partitions are held in;
* :mod:`.cells`: the final partitions published as cells (ranges, sets, hierarchy nodes), their
  boxes, and the classes they make;
* :mod:`.collapse`: the collapse of a failing class's partitions into their split-tree ancestor.
"""

from veil.anonymize.mondrian.anonymizer import Mondrian

__all__ = ["Mondrian"]
