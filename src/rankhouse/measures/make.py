"""A measure made from its declaration and parameters: checked, defaults filled in, and named
canonically as ir_measures prints it (``Name(k=v,...)@at``, defaults left out)."""

from __future__ import annotations

from typing import Any

from ..errors import MeasureError
from .model import Measure, MeasureDef, Param

#: The range of an ``int`` parameter: SQL binds it as INTEGER.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


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
    if param.minimum is not None and value < param.minimum:
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be >= {param.minimum:g}, not {value!r}"
        )
    if param.type is int and not INT32_MIN <= value <= INT32_MAX:  # SQL binds it as INTEGER
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be a 32-bit integer "
            f"({INT32_MIN} to {INT32_MAX}), not {value!r}"
        )
    return value


_KINDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def kind_of(type_: type) -> str:
    """How a message names a parameter's type: ``an integer``, ``a number``..."""
    return _KINDS.get(type_, f"a {type_.__name__}")


def _shown(value: Any) -> str:
    if isinstance(value, tuple):  # `P@5,` reads as the tuple (5,): show what was written
        return repr(",".join(map(str, value)) + ("," if len(value) == 1 else ""))
    return repr(value)
