"""Tables, their encoding and their generalization hierarchies."""

from veil.data import builders
from veil.data.bundled import load_adult
from veil.data.dataset import Dataset
from veil.data.encoding import EncodedColumn, encode_column
from veil.data.hierarchy import Generalization, Hierarchy
from veil.data.io import read_table

__all__ = ["Dataset", "EncodedColumn", "Generalization", "Hierarchy", "builders", "encode_column",
           "load_adult", "read_table"]
