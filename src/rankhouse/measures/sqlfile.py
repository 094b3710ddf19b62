"""Load an SQL file whose header declares its bind parameters, and check it (aiosql style).

The header is the leading block of ``--`` comment lines. Each parameter is declared on one
line as ``--   :name  TYPE  description (default ...)``. Every ``:name`` used in the code must
be declared and every declared one used, or loading fails with the file and line. Statements
are separated by ``;`` at the end of a line; the last one gives the result.

SQL that several files share is written once, in a fragment file (``sql/fragments/``: nDCG's
gain, the last step of the ranking), and inlined where the code says ``{{name}}``: the header
declares it on a line ``--   {{name}}  fragments/name.sql  description``, so a reader finds
the file from the header. A fragment is a piece of a statement (an expression, the end of a
query) with a header of its own declaring its parameters; the including file declares them
too (they are its parameters), with the same types. Fragments include no other fragment.

The files are written with ``:name`` binds; :class:`Statement` gives each statement in
DuckDB's own spelling (``$name``), with the names it uses, so that the engine binds them on
a DuckDB connection directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from ..defaults import read_sql
from ..duck import to_duckdb
from ..errors import MeasureError

_DECLARED = re.compile(r"^--\s+:(\w+)\s+(\S+)")
_FRAGMENT_DECLARED = re.compile(r"^--\s+\{\{(\w+)\}\}\s+(\S+)")
_FRAGMENT_USED = re.compile(r"\{\{\s*(\w+)\s*\}\}")
# A bind is ':name' not preceded by ':' or a word character (so '::DOUBLE' casts are skipped).
_USED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_STRING = re.compile(r"'(?:[^']|'')*'")
_TEMPORARY = re.compile(r"^(\s*CREATE OR REPLACE )TEMP(?:ORARY)? (?=TABLE )", re.IGNORECASE)
# What a bind can hide in: string literals, quoted identifiers and comments are kept as they are.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|(?<![:\w]):([A-Za-z_]\w*)")
# Where a fragment is inlined: {{name}} outside string literals, quoted identifiers, comments.
_INLINED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|\{\{\s*(\w+)\s*\}\}")


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
        return cls(text, *to_duckdb(text))

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
        statements: the statements in order, fragments inlined.
        fragments: the files of the fragments inlined, e.g. ``("fragments/gain.sql",)``.
    """

    path: str
    header: str
    params: dict[str, str]
    statements: tuple[Statement, ...]
    fragments: tuple[str, ...] = ()

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
    """Read and check ``sql/<path>``, with its fragments inlined.

    Raises:
        MeasureError: a parameter or fragment used but not declared, declared but not used,
            a parameter written ``:name::TYPE`` (write ``CAST(:name AS TYPE)``), or a
            fragment's parameter the file does not declare, naming the file and line.
    """
    return parse_sql(read_sql(path), path)


@dataclass(frozen=True)
class Fragment:
    """SQL that several files share, inlined where they write ``{{name}}``.

    Attributes:
        path: the file under ``sql/``, e.g. ``fragments/gain.sql``.
        params: its declared parameter names mapped to their SQL types.
        text: its code (no comment lines), as inlined.
    """

    path: str
    params: dict[str, str]
    text: str


@cache
def load_fragment(path: str) -> Fragment:
    """Read and check the fragment ``sql/<path>``.

    Raises:
        MeasureError: as :func:`load_sql`; also a fragment that includes another, holds a
            statement's end (``;`` at the end of a line) or no code.
    """
    lines = read_sql(path).splitlines()
    params, fragments, _ = _header(lines)
    if fragments:
        _, number = next(iter(fragments.values()))
        raise MeasureError(f"sql/{path} line {number}: a fragment includes no other fragment")
    _check_code(lines, path, params, {})
    code = [line for line in lines if not line.lstrip().startswith("--")]
    for number, line in enumerate(lines, 1):
        if not line.lstrip().startswith("--") and re.search(r";[ \t]*$", line):
            raise MeasureError(
                f"sql/{path} line {number}: a fragment is part of a statement; end the "
                "statement in the file that includes it"
            )
    text = "\n".join(code).strip()
    if not text:
        raise MeasureError(f"sql/{path}: no SQL in the fragment")
    return Fragment(path, {name: sql_type for name, (sql_type, _) in params.items()}, text)


def parse_sql(text: str, path: str) -> SqlFile:
    """Check SQL text as :func:`load_sql` does; ``path`` names it in errors."""
    lines = text.splitlines()
    params, fragments, header = _header(lines)
    included = _check_code(lines, path, params, fragments)
    body = "\n".join(line for line in lines if not line.lstrip().startswith("--"))
    # the rest of the line goes on a line of its own: a fragment may end in a comment
    body = _INLINED.sub(
        lambda m: m.group(0) if m.group(1) is None else included[m.group(1)].text + "\n", body
    )
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
        params={name: sql_type for name, (sql_type, _) in params.items()},
        statements=statements,
        fragments=tuple(fragment.path for fragment in included.values()),
    )


def _header(lines: list[str]):
    """The leading comment block's declarations: parameters and fragments, name -> (type or
    path, line); and the block's text lines."""
    header: list[str] = []
    params: dict[str, tuple[str, int]] = {}
    fragments: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(lines, 1):
        if not line.startswith("--"):
            break
        header.append(line[2:].strip())
        match = _DECLARED.match(line)
        if match:
            params[match[1]] = (match[2], number)
        match = _FRAGMENT_DECLARED.match(line)
        if match:
            fragments[match[1]] = (match[2], number)
    return params, fragments, header


def _check_code(
    lines: list[str],
    path: str,
    params: dict[str, tuple[str, int]],
    fragments: dict[str, tuple[str, int]],
) -> dict[str, Fragment]:
    """Check the binds and fragments the code uses against the declared ones; the fragments
    used, loaded, by name."""
    used: dict[str, int] = {}
    included: dict[str, Fragment] = {}
    for number, line in enumerate(lines, 1):
        code = _STRING.sub("''", line.split("--", 1)[0])
        if re.search(r"(?<![:\w]):\w+::", code):
            raise MeasureError(
                f"sql/{path} line {number}: write CAST(:name AS TYPE), not :name::TYPE "
                "(the driver cannot bind it)"
            )
        for name in _USED.findall(code):
            if name not in params:
                raise MeasureError(
                    f"sql/{path} line {number}: parameter :{name} is used but not declared "
                    f"in the header; add a line '--   :{name}  TYPE  description'"
                )
            used.setdefault(name, number)
        for name in _FRAGMENT_USED.findall(code):
            if name not in fragments:
                raise MeasureError(
                    f"sql/{path} line {number}: fragment {{{{{name}}}}} is used but not "
                    f"declared in the header; add a line '--   {{{{{name}}}}}  "
                    f"fragments/{name}.sql  description'"
                )
            try:
                fragment = included[name] = load_fragment(fragments[name][0])
            except FileNotFoundError:
                raise MeasureError(
                    f"sql/{path} line {fragments[name][1]}: fragment {{{{{name}}}}}: no file "
                    f"sql/{fragments[name][0]}"
                ) from None
            for param in fragment.params:
                _check_fragment_param(path, number, name, fragment, param, params.get(param))
                used.setdefault(param, number)
    for name, (_, number) in params.items():
        if name not in used:
            raise MeasureError(
                f"sql/{path} line {number}: parameter :{name} is declared but never used"
            )
    for name, (_, number) in fragments.items():
        if name not in included:
            raise MeasureError(
                f"sql/{path} line {number}: fragment {{{{{name}}}}} is declared but never used"
            )
    return included


def _check_fragment_param(
    path: str,
    number: int,
    name: str,
    fragment: Fragment,
    param: str,
    declared: tuple[str, int] | None,
) -> None:
    """The including file declares the fragment's parameter ``param``, with its type."""
    sql_type = fragment.params[param]
    where = f"sql/{path} line {number}: {{{{{name}}}}} (sql/{fragment.path}) uses :{param}"
    if declared is None:
        raise MeasureError(
            f"{where}, which the header does not declare; add a line "
            f"'--   :{param}  {sql_type}  description'"
        )
    if declared[0] != sql_type:
        raise MeasureError(f"{where} as {sql_type}, which the header declares {declared[0]}")
