"""The ``rankhouse`` command line: a thin layer that parses, calls the library and prints.

:mod:`.entry` is the console script (``trec-eval`` straight to its runner, the rest to the
Typer app of :mod:`.app`); :mod:`.commands` holds the commands, one module per concept;
:mod:`.process` is what happens around a command (where it is in the command line, its
database opened ahead, leaving without teardown, the one line of a command that fails).
Library errors become one ``Error: ...`` line here, and nowhere else.
"""
