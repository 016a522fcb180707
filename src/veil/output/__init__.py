"""Publishing files: a set of outputs that appears complete or not at all, and never replaces an input.

The package is veil's one writer (``tests/test_one_writer.py``); see :mod:`veil.output.writer`.
"""

from __future__ import annotations

from veil.output.writer import (OutputSet, check_targets, create_file, describe_os_error, file_sha256,
                                folder_sha256, link_scratch, load_manifest, refuse_inputs, same_file, scratch_path,
                                settle, write_file, write_files)

__all__ = ["OutputSet", "check_targets", "create_file", "describe_os_error", "file_sha256", "folder_sha256",
           "link_scratch", "load_manifest", "refuse_inputs", "same_file", "scratch_path", "settle", "write_file",
           "write_files"]
