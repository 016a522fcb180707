"""``python -m veil``: the ``veil`` command."""

from veil.cli import main

main()
