"""The public Python API, as a text snapshot: names, signatures and the classes it returns.

``tests/api_snapshot.txt`` records ``rankhouse.__all__``; the signature of every public
function of the package root; every public member of :class:`rankhouse.Warehouse`; the
class of what each entry point returns (found by calling it on the bundled examples); the
members of those classes; and the errors' and warnings' class hierarchy. It guards a
restructuring, so it names classes as the API reaches them (``EvaluationResult``), never by
the module that defines them, and records a member of a class wherever in the class's
rankhouse bases it is defined.

Signatures are written with their annotations as text (the same for a module with or without
``from __future__ import annotations``) and defaults as ``repr`` (object addresses removed).

Regenerate the snapshot (then read the diff) with::

    RANKHOUSE_UPDATE_TRANSCRIPT=1 python -m pytest -q tests/test_api_snapshot.py
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import inspect
import os
import pathlib
import pkgutil
import re
import warnings
from pathlib import Path

import pytest

import rankhouse

SNAPSHOT = Path(__file__).resolve().parent / "api_snapshot.txt"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
UPDATE = os.environ.get("RANKHOUSE_UPDATE_TRANSCRIPT") == "1"

#: Dunder and notebook members recorded besides the public ones (when rankhouse defines them).
_PROTOCOL = {
    "__init__",
    "__call__",
    "__enter__",
    "__exit__",
    "__iter__",
    "__len__",
    "__getitem__",
    "__contains__",
    "_repr_html_",
    "_repr_markdown_",
}


class _Shown:
    """Text that inspect prints as is (an annotation or a default in a signature)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _annotation_text(annotation) -> str:
    if isinstance(annotation, str):  # from __future__ import annotations
        return annotation
    return inspect.formatannotation(annotation)


def _default_text(value) -> str:
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def signature(func) -> str:
    """``(a, b: int = 1, *, c: str | None = None) -> X`` with annotations as text."""
    sig = inspect.signature(func)
    empty = inspect.Parameter.empty
    params = [
        p.replace(
            annotation=empty if p.annotation is empty else _Shown(_annotation_text(p.annotation)),
            default=empty if p.default is empty else _Shown(_default_text(p.default)),
        )
        for p in sig.parameters.values()
    ]
    ret = sig.return_annotation
    return str(
        sig.replace(
            parameters=params,
            return_annotation=empty if ret is empty else _Shown(_annotation_text(ret)),
        )
    )


def _ours(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "rankhouse"


def type_name(cls: type) -> str:
    """A class as the API shows it: rankhouse's by name, builtins by name, others as
    ``package.Name`` (``pandas.DataFrame``); any path as ``pathlib.Path``."""
    if _ours(cls) or cls.__module__ == "builtins":
        return cls.__name__
    if issubclass(cls, pathlib.PurePath):
        return "pathlib.Path"
    return f"{cls.__module__.split('.')[0]}.{cls.__qualname__}"


def value_type(value, reached: dict[str, type]) -> str:
    """The type of ``value`` (containers with their element types); rankhouse's classes met
    on the way are added to ``reached``."""
    cls = type(value)
    if _ours(cls):
        reached.setdefault(cls.__name__, cls)
    if isinstance(value, list | tuple) and value:
        inner = sorted({value_type(v, reached) for v in value})
        if cls is tuple:
            return f"tuple[{', '.join(value_type(v, reached) for v in value)}]"
        return f"{type_name(cls)}[{' | '.join(inner)}]"
    if isinstance(value, dict) and value:
        keys = sorted({value_type(k, reached) for k in value})
        values = sorted({value_type(v, reached) for v in value.values()})
        return f"{type_name(cls)}[{' | '.join(keys)}, {' | '.join(values)}]"
    return type_name(cls)


def _bases(cls: type) -> str:
    """The nearest public bases: a private rankhouse base is looked through."""
    shown: list[str] = []
    for base in cls.__bases__:
        if _ours(base) and base.__name__.startswith("_"):
            shown += _bases(base).split(", ")
        else:
            shown.append(type_name(base))
    return ", ".join(dict.fromkeys(shown))


def members(cls: type, own: bool = False) -> list[str]:
    """The public members rankhouse defines on ``cls`` or its rankhouse bases (``own``: on
    ``cls`` itself)."""
    lines: list[str] = []
    owners = [cls] if own else [c for c in cls.__mro__ if _ours(c)]
    names = sorted({n for c in owners for n in vars(c) if not n.startswith("_") or n in _PROTOCOL})
    for name in names:
        owner = next(c for c in owners if name in vars(c))
        member = vars(owner)[name]
        if isinstance(member, property):
            access = "settable " if member.fset is not None else ""
            ret = inspect.signature(member.fget).return_annotation
            shown = "" if ret is inspect.Parameter.empty else f": {_annotation_text(ret)}"
            lines.append(f"  {access}property {name}{shown}")
        elif isinstance(member, functools.cached_property):
            ret = inspect.signature(member.func).return_annotation
            shown = "" if ret is inspect.Parameter.empty else f": {_annotation_text(ret)}"
            lines.append(f"  cached_property {name}{shown}")
        elif isinstance(member, staticmethod):
            lines.append(f"  staticmethod {name}{signature(member.__func__)}")
        elif isinstance(member, classmethod):
            lines.append(f"  classmethod {name}{signature(member.__func__)}")
        elif inspect.isfunction(member):
            lines.append(f"  method {name}{signature(member)}")
        elif dataclasses.is_dataclass(cls) and name in {f.name for f in dataclasses.fields(cls)}:
            continue  # a field's default: recorded with the fields
        else:
            lines.append(f"  attribute {name} = {_default_text(member)}")
    return lines


def describe_class(cls: type, instance=None) -> list[str]:
    lines = [f"class {cls.__name__}({_bases(cls)})"]
    if dataclasses.is_dataclass(cls):
        frozen = cls.__dataclass_params__.frozen
        lines.append(f"  dataclass{' (frozen)' if frozen else ''} fields:")
        for f in dataclasses.fields(cls):
            default = ""
            if f.default is not dataclasses.MISSING:
                default = f" = {_default_text(f.default)}"
            elif f.default_factory is not dataclasses.MISSING:
                default = f" = {f.default_factory.__name__}()"
            lines.append(f"    {f.name}: {_annotation_text(f.type)}{default}")
    lines += members(cls)
    if instance is not None and not dataclasses.is_dataclass(cls):
        defined = {n for c in cls.__mro__ for n in vars(c)}
        extra = sorted(n for n in vars(instance) if not n.startswith("_") and n not in defined)
        if extra:
            lines.append("  instance attributes:")
            lines += [f"    {n}: {value_type(getattr(instance, n), {})}" for n in extra]
    return lines


def _import_everything() -> None:
    """Import every module of the package, whatever their names, so that every error class
    is defined before the hierarchy is walked (it does not depend on what a call imported)."""
    for module in pkgutil.walk_packages(rankhouse.__path__, "rankhouse."):
        if module.name.rsplit(".", 1)[-1] == "__main__":
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:  # an optional dependency (the PostgreSQL extra) is missing
            continue


def _hierarchy(cls: type, depth: int = 0) -> list[str]:
    lines = [f"{'  ' * depth}{cls.__name__}({', '.join(type_name(b) for b in cls.__bases__)})"]
    for sub in sorted(cls.__subclasses__(), key=lambda c: c.__name__):
        if _ours(sub):
            lines += _hierarchy(sub, depth + 1)
    return lines


def snapshot(tmp_path: Path) -> str:
    out: list[str] = []
    reached: dict[str, type] = {}
    instances: dict[str, object] = {}

    def returned(call: str, value) -> None:
        out.append(f"{call} -> {value_type(value, reached)}")
        cls = type(value)
        if _ours(cls):
            instances.setdefault(cls.__name__, value)

    out.append(f"rankhouse.__all__ = {rankhouse.__all__!r}")
    out.append(f"rankhouse.__version__: {type(rankhouse.__version__).__name__}")
    out.append("")
    out.append("== functions of rankhouse")
    public = {n for n in vars(rankhouse) if not n.startswith("_")} | set(rankhouse.__all__)
    for name in sorted(public):
        obj = getattr(rankhouse, name)
        if inspect.isfunction(obj):
            out.append(f"{name}{signature(obj)}")
    out.append("")
    out.append("== rankhouse.Warehouse")
    out += describe_class(rankhouse.Warehouse)
    out.append("")

    qrels = str(EXAMPLES / "qrels.txt")
    bm25 = str(EXAMPLES / "run.bm25.txt")
    dense = str(EXAMPLES / "run.dense.txt")
    out.append("== what the API returns (called on the bundled examples)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = rankhouse.evaluate(qrels, bm25, ["AP"])
        returned("rankhouse.evaluate(qrels, run, measures)", result)
        returned("rankhouse.evaluate(...).summary", result.summary)
        returned("rankhouse.evaluate(...).per_query", result.per_query)
        returned("rankhouse.evaluate(...).aggregates", result.aggregates)
        returned("rankhouse.evaluate(...).query_counts", result.query_counts)
        returned("rankhouse.evaluate(...).per_query_values", result.per_query_values)
        returned("rankhouse.evaluate(...).styled()", result.styled())
        frame = rankhouse.experiment(qrels, [bm25, dense], ["AP"], baseline=0)
        returned("rankhouse.experiment(qrels, runs, measures, baseline=0)", frame)
        returned("rankhouse.experiment(...).styled()", frame.styled())
        returned("rankhouse.experiment(...).experiment_table()", frame.experiment_table())
        returned(
            "rankhouse.experiment(..., perquery=True)",
            rankhouse.experiment(qrels, [bm25, dense], ["AP"], perquery=True),
        )
        returned(
            "rankhouse.experiment(..., perquery='both')",
            rankhouse.experiment(qrels, [bm25, dense], ["AP"], perquery="both"),
        )
        returned("rankhouse.experiment_table(frame)", rankhouse.experiment_table(frame))

        with rankhouse.Warehouse(tmp_path / "w.duckdb") as wh:
            returned("Warehouse(path)", wh)
            returned("Warehouse.ingest_qrels(file, name=...)", wh.ingest_qrels(qrels, name="ex"))
            returned("Warehouse.ingest_run(file)", wh.ingest_run(bm25))
            wh.ingest_run(dense)
            evaluation = wh.evaluate("ex", ["bm25", "dense"], ["AP", "nDCG@10"])
            returned("Warehouse.evaluate(qrels, runs, measures)", evaluation)
            returned("Warehouse.evaluate(...).query_counts", evaluation.query_counts)
            returned("Warehouse.evaluate(...).runs", evaluation.runs)
            returned("Warehouse.evaluate(...).summary_rows()", evaluation.summary_rows())
            returned("Warehouse.evaluate(...).per_query_rows()", evaluation.per_query_rows())
            returned("Warehouse.evaluate(...).num_reused", evaluation.num_reused)
            returned("Warehouse.evaluate(...).rows", evaluation.rows)
            returned(
                "Warehouse.compare(qrels, runs, measures, baseline=...)",
                wh.compare("ex", ["bm25", "dense"], ["AP"], baseline="bm25"),
            )
            returned(
                "Warehouse.compare(..., perquery=True)",
                wh.compare("ex", ["bm25", "dense"], ["AP"], perquery=True),
            )
            history = wh.history()
            returned("Warehouse.history()", history)
            returned("Warehouse.history().styled()", history.styled())
            returned("Warehouse.runs()", wh.runs())
            returned("Warehouse.run(name)", wh.run("bm25"))
            returned("Warehouse.qrels_sets()", wh.qrels_sets())
            returned("Warehouse.qrels(name)", wh.qrels("ex"))
            returned("Warehouse.dialect", wh.dialect)
            returned("Warehouse.report(path, ...)", wh.report(tmp_path / "r.html", qrels="ex"))
            returned("Warehouse.remove_run(name)", wh.remove_run("dense"))
            returned("Warehouse.remove_qrels(name)", wh.remove_qrels("ex"))
    out.append("")

    out.append("== classes the API returns")
    for name in sorted(reached):
        if name != "Warehouse":  # above
            out += [*describe_class(reached[name], instances.get(name)), ""]

    out.append("== errors and warnings (every rankhouse subclass, all modules imported)")
    _import_everything()
    out += _hierarchy(rankhouse.RankhouseError)
    out += _hierarchy(rankhouse.RankhouseWarning)
    out.append("")
    # the members of the base classes, then what each exported subclass adds
    roots = (rankhouse.RankhouseError, rankhouse.RankhouseWarning)
    for name in sorted(rankhouse.__all__):
        obj = getattr(rankhouse, name)
        if isinstance(obj, type) and issubclass(obj, roots):
            extra = members(obj, own=obj not in roots)
            if extra:
                out += [f"class {name}({_bases(obj)})", *extra, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def test_api_snapshot(tmp_path: Path) -> None:
    actual = snapshot(tmp_path)
    if UPDATE:
        SNAPSHOT.write_bytes(actual.encode())
        return
    expected = SNAPSHOT.read_bytes().decode()
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                "api_snapshot.txt",
                "actual",
            )
        )
        pytest.fail(f"the public API differs from {SNAPSHOT}:\n{diff}", pytrace=False)
