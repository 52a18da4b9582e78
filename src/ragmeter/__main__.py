"""``python -m ragmeter``: the ``ragmeter`` command."""

from ragmeter.cli import main

main()
