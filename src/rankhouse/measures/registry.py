"""The registry: every declared measure and family, filled by the catalogue modules."""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import MeasureError
from .model import AGGREGATES, BETTER, Family, MeasureDef


class Registry:
    """Declared families and measures, looked up by name, alias or trec_eval name.

    Several modules declare into the one :data:`REGISTRY` (``catalog.py`` for the core
    measures, ``catalog_trec.py`` for the rest of trec_eval's catalogue).
    """

    def __init__(self) -> None:
        self.families: dict[str, Family] = {}
        self.measures: dict[str, MeasureDef] = {}
        self._aliases: dict[str, str] = {}
        self._trec: dict[str, tuple[MeasureDef, int]] = {}

    def family(self, family: Family) -> Family:
        """Declare a family; its name must be new."""
        if family.name in self.families:
            raise MeasureError(f"family {family.name!r} is declared twice")
        self.families[family.name] = family
        return family

    def declare(self, definition: MeasureDef) -> MeasureDef:
        """Declare a measure; its name, aliases and trec_eval names must be new."""
        if definition.family not in self.families:
            raise MeasureError(f"measure {definition.name!r}: unknown family {definition.family!r}")
        if definition.aggregate not in AGGREGATES:
            raise MeasureError(
                f"measure {definition.name!r}: bad aggregate {definition.aggregate!r}"
            )
        if definition.better not in BETTER:
            raise MeasureError(
                f"measure {definition.name!r}: better must be one of "
                f"{', '.join(map(repr, BETTER))}, not {definition.better!r}"
            )
        for name in (definition.name, *definition.aliases):
            if name in self.measures or name in self._aliases:
                raise MeasureError(f"measure name {name!r} is declared twice")
        for index, trec in enumerate(definition.trec):
            if trec.name in self._trec:
                raise MeasureError(f"trec_eval name {trec.name!r} is declared twice")
            for param in (trec.key, *trec.values):
                if param is not None and definition.param(param) is None:
                    raise MeasureError(
                        f"trec_eval name {trec.name!r}: {definition.name} has no parameter "
                        f"{param!r}"
                    )
            self._trec[trec.name] = (definition, index)
        self.measures[definition.name] = definition
        for alias in definition.aliases:
            self._aliases[alias] = definition.name
        return definition

    def lookup(self, name: str) -> MeasureDef | None:
        """The measure called ``name`` (canonical or alias), or ``None``."""
        return self.measures.get(self._aliases.get(name, name))

    def lookup_trec(self, name: str):
        """``(definition, TrecName)`` for a trec_eval name, or ``None``."""
        found = self._trec.get(name)
        if found is None:
            return None
        definition, index = found
        return definition, definition.trec[index]

    def trec_names(self) -> list[str]:
        """Every declared trec_eval name, in declaration order."""
        return list(self._trec)

    def known_names(self) -> list[str]:
        """Every accepted bare name: canonical names, aliases, trec_eval names."""
        return list(dict.fromkeys([*self.measures, *self._aliases, *self._trec]))

    def __iter__(self) -> Iterator[MeasureDef]:
        return iter(self.measures.values())

    def __len__(self) -> int:
        return len(self.measures)


REGISTRY = Registry()
