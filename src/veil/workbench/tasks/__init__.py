"""The work the workbench hands to worker processes (veil.workbench.worker), one module per task."""
