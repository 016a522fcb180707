"""Mondrian multidimensional partitioning (LeFevre, DeWitt and Ramakrishnan, ICDE 2006)."""

from veil.anonymize.mondrian.anonymizer import Mondrian

__all__ = ["Mondrian"]
