"""A drop-in for trec_eval 10: same options, same numbers, same bytes, same exit codes.

See ``docs/trec_eval.md``; the semantics reproduced are TREC_EVAL_SEMANTICS (sections 1-14).
:func:`.runner.main` is the command, and evaluates in a warehouse; :mod:`.unstored` without
one, as trec_eval does. :mod:`.options` is its command line, :mod:`.files` its readers,
:mod:`.values` what it prints. This package imports none of its modules, so that the command
line loads only the path it takes.
"""
