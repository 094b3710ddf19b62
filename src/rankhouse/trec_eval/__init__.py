"""A drop-in for trec_eval 10: same options, same numbers, same bytes, same exit codes.

See ``docs/trec_eval.md``; the semantics reproduced are TREC_EVAL_SEMANTICS (sections 1-14).
:func:`.runner.main` is the command; :mod:`.unstored` evaluates without a warehouse, as
trec_eval does, and :mod:`.stored` in one. This package imports none of its modules, so that
the command line loads only the path it takes.
"""
