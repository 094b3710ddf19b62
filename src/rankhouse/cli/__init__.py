"""The ``rankhouse`` command line: a thin layer that parses, calls the library and prints.

:mod:`.entry` is the console script (``trec-eval`` straight to its runner, the rest to the
Typer app of :mod:`.app`); :mod:`.commands` holds one module per verb; :mod:`.process` makes a
short command start and end sooner (opening its database ahead, leaving without teardown).
Library errors become one ``Error: ...`` line here, and nowhere else.
"""
