"""The ``rankhouse`` command: a thin Typer layer over the library.

Each command group lives in :mod:`rankhouse.cli.commands`; this module holds the root app,
the global options, the registration of the command modules (in ``--help`` order) and the
one place where library errors (and any other exception, :mod:`.process`) become ``Error:
...`` and exit 1, Ctrl-C one line and exit 130, and library warnings one ``Warning: ...``
line, both in the command line's words (``--order rank`` where the library tells a Python
caller ``order='rank'``). The library raises its own errors only: each backend turns its
driver's into a RankhouseError.

How the command line presents itself: help that reads as words, flags that take no value.
Typer shows every parameter's Python type in ``--help`` (``<bool>`` beside a flag,
``<list[str]>``, ``{qrels}``) and lets ``--per-query true`` pass ``true`` on as a run name.
:func:`tidy` adjusts the command tree Typer builds, once, before it runs:

* a flag shows no value (``--per-query``), an option its metavar (``--measure MEASURE``),
  its choices (``--format table|tsv|csv|json``) or its name in capitals; an argument is
  its metavar (``QRELS``, ``RUN...``) in the usage line and in the argument list;
* a flag followed by ``true``/``false`` is a usage error that says the flag takes no value;
* help and usage errors use click's plain layout, not Typer's Rich panels: the panels cost
  about 0.1 s of imports (Rich's console, Markdown and markdown_it) at every ``--help``, twice
  what the rest of the command costs, and say nothing more.
"""

from __future__ import annotations

import copy
import importlib
import sys
import warnings
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from ..defaults import __version__
from ..errors import show_warning
from .commands.common import CliState, flag_option
from .process import failure_text, interrupted, leave_interrupted, split_command, watch_interrupts


class _App(typer.Typer):
    def __call__(self, *args, **kwargs):
        _attach(self, kwargs.get("args"))
        command = tidy(typer.main.get_command(self._narrowed(kwargs.get("args"))))
        warnings.showwarning = show_warning
        watch_interrupts()
        try:
            return command(*args, **kwargs)
        except SystemExit:
            if interrupted():  # Typer's exit 130 for a KeyboardInterrupt, unsaid
                leave_interrupted()
            raise
        except BaseException as exc:  # one line, never a traceback (cli/process.py)
            if interrupted(exc):
                leave_interrupted()
            if not isinstance(exc, Exception):
                raise
            print(f"Error: {failure_text(exc)}", file=sys.stderr)
            sys.exit(1)

    def _narrowed(self, args: list[str] | None) -> typer.Typer:
        """The app, or for ``rankhouse [global options] NAME ...`` a copy that holds command
        NAME alone. Typer inspects the parameters of every command before it runs one (10 ms
        for the whole tree); a call needs only its own. The root's help, a misspelt name and
        anything else this cannot place get the whole app."""
        found = split_command(list(args or ()))
        if found is None:
            return self
        name = args[found[2]]
        commands = [c for c in self.registered_commands if _command_name(c) == name]
        groups = [g for g in self.registered_groups if g.name == name]
        if len(commands) + len(groups) != 1:
            return self
        narrowed = copy.copy(self)
        narrowed.registered_commands, narrowed.registered_groups = commands, groups
        return narrowed


def _command_name(info) -> str:
    return info.name or typer.main.get_command_name(info.callback.__name__)


_app = _App(
    name="rankhouse",
    help="An evaluation warehouse for ranked retrieval: ingest qrels and runs, evaluate, remember.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"rankhouse {__version__}")
        raise typer.Exit()


@_app.callback()
def main(
    ctx: typer.Context,
    db: str = typer.Option(
        None,
        "--db",
        envvar="RANKHOUSE_DB",
        metavar="WAREHOUSE",
        help="Warehouse: a DuckDB file or postgresql://USER@HOST:PORT/DB (default: "
        "./rankhouse.duckdb).",
    ),
    read_only: bool = flag_option(
        "--read-only",
        help="Open the warehouse read-only: stored values are served, nothing is computed.",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    ctx.obj = CliState(db=db, read_only=read_only)


# --- help that reads as words -----------------------------------------------------------------

_BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no"})


class _Argument(TyperArgument):
    def make_metavar(self, ctx: Any, *, usage: bool = False) -> str:
        name = self.metavar or self.name.upper()
        if not usage:
            return name
        if self.nargs != 1 and not name.endswith("..."):
            name += "..."
        return name if self.required else f"[{name}]"


class _Option(TyperOption):
    def make_metavar(self, ctx: Any) -> str:
        if self.is_flag or self.count:
            return ""
        if self.metavar is not None:
            return self.metavar
        choices = _choices(self)
        if choices:
            return "|".join(choices)
        longest = max(self.opts, key=len)
        return longest.lstrip("-").replace("-", "_").upper()


def _choices(option: TyperOption) -> list[str]:
    found = getattr(option.type, "choices", None) or ()
    return [str(getattr(choice, "value", choice)) for choice in found]


class _Unnamed:
    """Mixed into an argument's type: the help shows the argument's metavar, not ``<str>``."""

    def get_metavar(self, param: Any, ctx: Any) -> str:
        return ""


_UNNAMED_TYPES: dict[type, type] = {}


def _unnamed(param_type: Any) -> None:
    cls = type(param_type)
    if not issubclass(cls, _Unnamed):
        if cls not in _UNNAMED_TYPES:
            _UNNAMED_TYPES[cls] = type(cls.__name__, (_Unnamed, cls), {})
        param_type.__class__ = _UNNAMED_TYPES[cls]


def _flag_names(command: Any, ctx: Any) -> set[str]:
    return {
        name
        for param in command.get_params(ctx)
        if isinstance(param, TyperOption) and (param.is_flag or param.count)
        for name in (*param.opts, *param.secondary_opts)
    }


def _refuse_flag_values(command: Any, ctx: Any, args: list[str]) -> None:
    """``--per-query true``: a flag takes no value, so ``true`` would become an argument."""
    flags = _flag_names(command, ctx)
    for flag, value in zip(args, args[1:], strict=False):
        if flag == "--":
            return
        if flag in flags and value.lower() in _BOOLEAN_WORDS and not Path(value).exists():
            ctx.fail(
                f"{flag} is a flag and takes no value: write {flag} alone (not {flag} {value})"
            )


#: The root command's options, which a user may write after the command by mistake.
_GLOBAL_OPTIONS = ("--db", "--read-only")


def _refuse_global_options(command: Any, ctx: Any, args: list[str]) -> None:
    """``rankhouse runs list --db x``: say where the global option goes, not only that the
    command has no such option."""
    own = {name for param in command.get_params(ctx) for name in getattr(param, "opts", ())}
    for position, arg in enumerate(args):
        if arg == "--":
            return
        name = arg.split("=", 1)[0]
        if name in _GLOBAL_OPTIONS and name not in own:
            root = ctx.find_root().info_name or "rankhouse"
            words = [ctx.command_path[len(root) :].strip(), *args[:position]]
            value = " PATH" if name == "--db" else ""
            ctx.fail(
                f"{name} is a global option and goes before the command: "
                f"{root} {name}{value} {' '.join(w for w in words if w)} ..."
            )


def _tidied(base: type) -> type:
    """``base`` (Typer's command or group) with a tidy ``--help``, and the flag and
    global-option rules (a subclass with no state of its own: :func:`tidy` turns Typer's
    objects into it in place)."""

    class Tidied(base):
        def get_help_option(self, ctx: Any) -> Any:
            return _tidy_param(super().get_help_option(ctx))

        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            _refuse_flag_values(self, ctx, args)
            _refuse_global_options(self, ctx, args)
            return super().parse_args(ctx, args)

    return Tidied


_Command = _tidied(TyperCommand)
_Group = _tidied(TyperGroup)


def _tidy_param(param: Any) -> Any:
    if type(param) is TyperArgument:
        param.__class__ = _Argument
        if param.metavar is None:
            param.metavar = param.name.upper() + ("..." if param.nargs != 1 else "")
        _unnamed(param.type)
    elif type(param) is TyperOption:
        param.__class__ = _Option
    return param


def tidy(command: Any) -> Any:
    """Give the click command tree Typer built rankhouse's help and flag rules (in place)."""
    if type(command) is TyperGroup:
        command.__class__ = _Group
    elif type(command) is TyperCommand:
        command.__class__ = _Command
    command.rich_markup_mode = None  # click's plain layout: see the module's docstring
    for param in command.params:
        _tidy_param(param)
    for sub in getattr(command, "commands", {}).values():
        tidy(sub)
    return command


# --- the commands -----------------------------------------------------------------------------

# Each module defines ``register(app)``; this order is the order of ``rankhouse --help``.
_MODULES = ("catalog", "judgments", "evaluate", "compare", "regress", "report", "sql")

#: The modules that define each command (``judgments`` adds to catalog's ``qrels`` group):
#: a command line imports its command's modules only (tests/cli/test_cli_help.py holds this
#: to what each module registers).
_COMMAND_MODULES = {
    "ingest": ("catalog",),
    "runs": ("catalog",),
    "qrels": ("catalog", "judgments"),
    "compact": ("catalog",),
    "pool": ("catalog", "judgments"),
    "eval": ("evaluate",),
    "measures": ("evaluate",),
    "trec-eval": ("evaluate",),
    "history": ("evaluate",),
    "compare": ("compare",),
    "regress": ("regress",),
    "gate": ("regress",),
    "report": ("report",),
    "sql": ("sql",),
    "migrate": ("sql",),
}

_attached: tuple[str, ...] = ()


def register_all(app: typer.Typer) -> None:
    """Attach every command group to the root app, in ``--help`` order."""
    _register(app, _MODULES)


def _register(app: typer.Typer, modules: tuple[str, ...]) -> None:
    global _attached
    app.registered_commands.clear()
    app.registered_groups.clear()
    for name in modules:
        importlib.import_module(f"{__package__}.commands.{name}").register(app)
    _attached = modules


def _attach(app: typer.Typer, args: list[str] | None) -> None:
    """Attach what the command line ``args`` runs: its command's modules, or every module
    (the root's help, a name this does not know)."""
    if _attached == _MODULES:
        return
    found = split_command(list(args or ()))
    modules = _COMMAND_MODULES.get(args[found[2]]) if found is not None else None
    if modules is None:
        register_all(app)
    elif modules != _attached:
        _register(app, modules)


def __getattr__(name: str) -> Any:
    """``app``: the root app with every command attached (for Typer's tools and tests); the
    console script calls it through :func:`rankhouse.cli.entry.main`, which attaches only the
    command's modules."""
    if name == "app":
        if _attached != _MODULES:
            register_all(_app)
        return _app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
