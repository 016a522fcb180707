"""The workbench: veil in the browser, for the data steward who does not write code (``veil serve``).

A local web application over a data folder of projects (veil.workbench.projects): upload a
table, mark its columns and hierarchies, look at the risk, anonymize and compare candidate
releases, attack them, read their reports and publish one through the ledger's gate. It needs the
``serve`` extra (``pip install 'veil[serve]'``: Flask and waitress).
"""
from veil.workbench.app import create_app

__all__ = ["create_app"]
