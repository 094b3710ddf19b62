"""Load an SQL file whose header declares its bind parameters, and check it (aiosql style).

The header is the leading block of ``--`` comment lines. Each parameter is declared on one
line as ``--   :name  TYPE  description (default ...)``. Every ``:name`` used in the code must
be declared and every declared one used, or loading fails with the file and line. Statements
are separated by ``;`` at the end of a line; the last one gives the result.

The files are written with ``:name`` binds; :class:`Statement` gives each statement in
DuckDB's own spelling (``$name``), with the names it uses, so that the engine binds them on
a DuckDB connection directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from ..errors import MeasureError
from ..resources import read_sql

_DECLARED = re.compile(r"^--\s+:(\w+)\s+(\S+)")
# A bind is ':name' not preceded by ':' or a word character (so '::DOUBLE' casts are skipped).
_USED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_STRING = re.compile(r"'(?:[^']|'')*'")
_TEMPORARY = re.compile(r"^(\s*CREATE OR REPLACE )TEMP(?:ORARY)? (?=TABLE )", re.IGNORECASE)
# What a bind can hide in: string literals, quoted identifiers and comments are kept as they are.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|(?<![:\w]):([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Statement:
    """One SQL statement of a file.

    Attributes:
        text: the statement as written (``:name`` binds).
        duckdb: the same statement with DuckDB's ``$name`` binds.
        names: the bind names it uses, in order of first use.
    """

    text: str
    duckdb: str
    names: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Statement:
        """The statement ``text`` (``:name`` binds outside strings and comments)."""
        names: dict[str, None] = {}

        def to_dollar(match: re.Match) -> str:
            if match.group(1) is None:
                return match.group(0)
            names[match.group(1)] = None
            return "$" + match.group(1)

        return cls(text, _TOKENS.sub(to_dollar, text), tuple(names))

    def binds(self, values: dict[str, object]) -> dict[str, object]:
        """The values of the binds this statement uses."""
        return {name: values[name] for name in self.names}

    def prefixed(self, prefix: str) -> Statement:
        """The same statement with every bind renamed ``prefix + name`` (so that statements
        with binds of the same name can be joined into one)."""
        renamed = _TOKENS.sub(
            lambda m: m.group(0) if m.group(1) is None else f":{prefix}{m.group(1)}", self.text
        )
        return Statement.parse(renamed)

    def ordinary(self) -> Statement:
        """The statement with a leading ``CREATE OR REPLACE TEMP TABLE`` made ``CREATE OR
        REPLACE TABLE``: on a database that is the caller's alone, the table it builds is then
        one that the database's other connections read too."""
        return Statement.parse(_TEMPORARY.sub(r"\1", self.text, count=1))

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class SqlFile:
    """A checked SQL file: its statements and its declared parameters.

    Attributes:
        path: the file under ``sql/``.
        header: the leading comment block, without the ``--``.
        params: declared parameter names mapped to their SQL types.
        statements: the statements in order.
    """

    path: str
    header: str
    params: dict[str, str]
    statements: tuple[Statement, ...]

    def binds(self, offered: dict[str, object]) -> dict[str, object]:
        """The declared parameters' values from ``offered``.

        Raises:
            MeasureError: a declared parameter is not offered by the caller.
        """
        missing = [name for name in self.params if name not in offered]
        if missing:
            raise MeasureError(
                f"sql/{self.path}: declares :{missing[0]}, which the engine does not provide "
                f"(it provides {', '.join(':' + n for n in sorted(offered))})"
            )
        return {name: offered[name] for name in self.params}

    def run(self, duck, offered: dict[str, object], *, temporary: bool = True):
        """Execute every statement on the DuckDB connection ``duck``; the last one's result.
        ``temporary=False`` runs them :meth:`Statement.ordinary`."""
        binds = self.binds(offered)
        result = None
        for statement in self.statements:
            if not temporary:
                statement = statement.ordinary()
            result = duck.execute(statement.duckdb, statement.binds(binds))
        return result


@cache
def load_sql(path: str) -> SqlFile:
    """Read and check ``sql/<path>``.

    Raises:
        MeasureError: a parameter used but not declared, declared but not used, or written
            ``:name::TYPE`` (write ``CAST(:name AS TYPE)``), naming the file and line.
    """
    return parse_sql(read_sql(path), path)


def parse_sql(text: str, path: str) -> SqlFile:
    """Check SQL text as :func:`load_sql` does; ``path`` names it in errors."""
    lines = text.splitlines()
    header: list[str] = []
    declared: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(lines, 1):
        if not line.startswith("--"):
            break
        header.append(line[2:].strip())
        match = _DECLARED.match(line)
        if match:
            declared[match[1]] = (match[2], number)
    used: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        code = _STRING.sub("''", line.split("--", 1)[0])
        if re.search(r"(?<![:\w]):\w+::", code):
            raise MeasureError(
                f"sql/{path} line {number}: write CAST(:name AS TYPE), not :name::TYPE "
                "(the driver cannot bind it)"
            )
        for name in _USED.findall(code):
            if name not in declared:
                raise MeasureError(
                    f"sql/{path} line {number}: parameter :{name} is used but not declared "
                    "in the header; add a line '--   :{name}  TYPE  description'"
                )
            used.setdefault(name, number)
    for name, (_, number) in declared.items():
        if name not in used:
            raise MeasureError(
                f"sql/{path} line {number}: parameter :{name} is declared but never used"
            )
    body = "\n".join(line for line in lines if not line.lstrip().startswith("--"))
    statements = tuple(
        Statement.parse(part.strip())
        for part in re.split(r";[ \t]*$", body, flags=re.M)
        if part.strip()
    )
    if not statements:
        raise MeasureError(f"sql/{path}: no SQL statement")
    return SqlFile(
        path=path,
        header="\n".join(header),
        params={name: sql_type for name, (sql_type, _) in declared.items()},
        statements=statements,
    )
