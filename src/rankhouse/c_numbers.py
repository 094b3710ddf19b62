"""C's ``atol`` and ``atof`` (glibc's ``strtol``/``strtod``), the way trec_eval reads numbers:
the longest prefix that is a number, else 0. trec_eval's readers and its ``-m`` parameter
texts read every number this way.
"""

from __future__ import annotations

import math
import re

_ATOL = re.compile(r"[ \t\n\r\f\v]*([+-]?[0-9]+)")
_ATOF_DEC = re.compile(r"[ \t\n\r\f\v]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_ATOF_HEX = re.compile(
    r"[ \t\n\r\f\v]*([+-]?)0[xX]"
    r"((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
)
_ATOF_SPECIAL = re.compile(r"[ \t\n\r\f\v]*([+-]?)(inf(?:inity)?|nan)", re.IGNORECASE)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def atol(text: str) -> int:
    """C ``atol`` (glibc ``strtol``): leading digits with an optional sign, else 0.

    ``"1.7"`` gives 1, ``"2e1"`` 2, ``"abc"`` 0; out-of-range values saturate.
    """
    match = _ATOL.match(text)
    if not match:
        return 0
    return max(_LONG_MIN, min(_LONG_MAX, int(match.group(1))))


def atof(text: str) -> float:
    """C ``atof`` (glibc ``strtod``): the longest numeric prefix, else 0.0.

    Accepts decimal and hexadecimal forms, ``inf``/``infinity``/``nan`` in any case;
    ``"1.5abc"`` gives 1.5, ``"0x10"`` 16.0, ``"1e400"`` inf, ``"abc"`` 0.0.
    """
    match = _ATOF_HEX.match(text)
    if match:
        value = float.fromhex("0x" + match.group(2))
        return -value if match.group(1) == "-" else value
    match = _ATOF_SPECIAL.match(text)
    if match:
        value = math.inf if match.group(2).lower().startswith("inf") else math.nan
        return -value if match.group(1) == "-" else value
    match = _ATOF_DEC.match(text)
    if not match:
        return 0.0
    return float(match.group(1))
