"""``python -m veil.cli``: the ``veil`` command."""

from veil.cli import main

main()
