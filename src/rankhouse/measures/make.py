"""A measure made from its declaration and parameters: checked, defaults filled in, and named
canonically as ir_measures prints it (``Name(k=v,...)@at``, defaults left out)."""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import MeasureError
from .model import Measure, MeasureDef, Param

#: The range of an ``int`` parameter: SQL binds it as INTEGER.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


_STORED = contextvars.ContextVar("stored_names", default=False)


@contextmanager
def stored_names() -> Iterator[None]:
    """Within it, names are read as the labels of stored values: a parameter out of its
    range still names what an older release stored (``RBP(p=1.5)``), so that it can be shown
    and chosen; types and choices are still checked."""
    token = _STORED.set(True)
    try:
        yield
    finally:
        _STORED.reset(token)


def make_measure(definition: MeasureDef, **params: Any) -> Measure:
    """The measure ``definition`` with ``params`` set (validated) and defaults filled in."""
    values: dict[str, Any] = {}
    for param in definition.params:
        value = params.pop(param.name, param.default)
        values[param.name] = check_value(definition, param, value)
    if params:
        raise MeasureError(
            f"{definition.name} has no parameter {sorted(params)[0]!r}; "
            f"it takes: {', '.join(p.name for p in definition.params) or 'none'}"
        )
    return Measure(
        name=format_name(definition, values),
        family=definition.family,
        params=values,
        aggregate=definition.aggregate,
        empty_value=definition.empty_value,
        relevance_level=values.get("rel"),
        definition=definition,
    )


def format_name(definition: MeasureDef, values: dict[str, Any]) -> str:
    """The canonical name: ``Name(k=v,...)@at`` with defaults left out, as ir_measures prints."""
    shown = [
        f"{p.name}={repr(values[p.name])}"
        for p in definition.params
        if p.name != definition.at and values[p.name] != p.default
    ]
    name = definition.name + (f"({','.join(shown)})" if shown else "")
    if definition.at is not None and values.get(definition.at) is not None:
        name += f"@{repr(values[definition.at])}"
    return name


def check_value(definition: MeasureDef, param: Param, value: Any) -> Any:
    """``value`` for ``param`` of ``definition`` (an int as float for a float parameter);
    raises MeasureError naming what is wrong (missing, type, choice, minimum, range)."""
    if value is None:
        if param.required:
            example = f"{definition.name}@10" if param.name == definition.at else definition.name
            raise MeasureError(
                f"{definition.name} needs its {param.name} parameter, e.g. {example}"
            )
        return None
    if param.type is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, param.type) or isinstance(value, bool) != (param.type is bool):
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be {kind_of(param.type)}, "
            f"not {_shown(value)}"
        )
    if param.choices is not None and value not in param.choices:
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be one of "
            f"{', '.join(map(repr, param.choices))}, not {value!r}"
        )
    if _STORED.get():
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be a finite number, not {value!r}"
        )
    if param.type in (int, float) and not _in_range(param, value):
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be {_range(param)}, not {value!r}"
        )
    if param.type is int and not INT32_MIN <= value <= INT32_MAX:  # SQL binds it as INTEGER
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be a 32-bit integer "
            f"({INT32_MIN} to {INT32_MAX}), not {value!r}"
        )
    if param.check is not None:
        param.check(value)
    return value


def _in_range(param: Param, value: float) -> bool:
    return (param.minimum is None or value >= param.minimum) and (
        param.maximum is None or value <= param.maximum
    )


def _range(param: Param) -> str:
    """How a message says the allowed range: ``>= 1`` or ``in [0, 1]``."""
    if param.maximum is None:
        return f">= {param.minimum:g}"
    if param.minimum is None:
        return f"<= {param.maximum:g}"
    return f"in [{param.minimum:g}, {param.maximum:g}]"


_KINDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def kind_of(type_: type) -> str:
    """How a message names a parameter's type: ``an integer``, ``a number``..."""
    return _KINDS.get(type_, f"a {type_.__name__}")


def _shown(value: Any) -> str:
    if isinstance(value, tuple):  # `P@5,` reads as the tuple (5,): show what was written
        return repr(",".join(map(str, value)) + ("," if len(value) == 1 else ""))
    return repr(value)
