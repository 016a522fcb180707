"""Engines: where a table's records are read and counted (the local NumPy engine, or Apache Spark)."""
