"""A drop-in for trec_eval 10: same options, same numbers, same bytes, same exit codes.

See ``docs/trec_eval.md``; the semantics reproduced are TREC_EVAL_SEMANTICS (sections 1-14).
"""

from .runner import main

__all__ = ["main"]
