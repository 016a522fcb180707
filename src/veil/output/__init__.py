"""Publishing files: a set of outputs that appears complete or not at all, and never replaces an input.

This package is veil's one writer: everything veil publishes (a release and its manifest, a
starter configuration, an experiment's tables and figure, a budget file, a ledger) is written
through it, and no module outside it writes a file (``tests/test_one_writer.py``). Its modules,
one concept each:

- :mod:`veil.output.writer`: :class:`OutputSet`, files that appear together, complete, or not at
  all (declare, put, commit), and :func:`write_file`, :func:`write_files`.
- :mod:`veil.output.targets`: the targets refused before any work (:func:`check_targets`): a
  folder, a missing or unwritable folder, a name given twice, a file the run reads.
- :mod:`veil.output.leftovers`: what killed processes left in a folder, completed or removed by
  whoever comes next (:func:`settle`).
- :mod:`veil.output.creation`: a file that must never replace another, such as a secret key
  (:func:`create_file`), and a file another library builds beside its target
  (:func:`scratch_path`, :func:`link_scratch`).
- :mod:`veil.output.digests`: the SHA-256 a manifest records for a file or a folder of part files.
- :mod:`veil.output.reading`: reading a published pair back, the manifest checked against the
  file it describes (:func:`load_manifest`).
- :mod:`veil.output.os_errors`: an operating system's refusal in words.
- :mod:`veil.output.transactions` and :mod:`veil.output.durable`: the names of the temporary
  files (which tell whether their process still runs), and files and folders synced to disk.

Every error is a :class:`~veil.errors.DataError` with one sentence; when the operating system
refused something, its ``OSError`` is the error's ``__cause__``.
"""

from __future__ import annotations

from veil.output.creation import create_file, link_scratch, scratch_path
from veil.output.digests import file_sha256, folder_sha256
from veil.output.leftovers import settle
from veil.output.os_errors import describe_os_error
from veil.output.reading import load_manifest
from veil.output.targets import check_targets, refuse_inputs, same_file
from veil.output.writer import OutputSet, write_file, write_files

__all__ = ["OutputSet", "check_targets", "create_file", "describe_os_error", "file_sha256", "folder_sha256",
           "link_scratch", "load_manifest", "refuse_inputs", "same_file", "scratch_path", "settle", "write_file",
           "write_files"]
