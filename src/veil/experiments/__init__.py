"""Reproductions of the published experiments, runnable from ``veil experiment``."""
