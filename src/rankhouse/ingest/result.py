"""What an ingest reports, and the names and parse options it records for a source.

Whichever way a source was read (the direct reader, the stage, a frame loaded into the engine),
it gets the same names and the same recorded identity, so they are worked out here once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..words import count
from .sources import Source, base_name, default_delimiter

#: The run tag of a source without one (a DataFrame or tabular file without a tag column).
FRAME_TAG = "run"


@dataclass(frozen=True)
class IngestResult:
    """What one ingest stored (or found already stored).

    Attributes:
        kind: ``'qrels'`` or ``'run'``.
        id: the qrels set's or run's id.
        name: its name in the warehouse.
        system_tag: the run tag (None for qrels).
        created: False when identical content was already stored and is reused.
        num_queries: distinct queries.
        num_rows: judgments (qrels) or ranked rows (run).
        source: the path as given, or ``'DataFrame'``.
        alias: the name asked for, when the content was stored under another name
            (``name``): it names the stored qrels set or run too, as an alias.
    """

    kind: str
    id: int
    name: str
    system_tag: str | None
    created: bool
    num_queries: int
    num_rows: int
    source: str
    alias: str | None = None

    def describe(self) -> str:
        """One line for people: ``stored run 'x' (id 3): 43 queries, 1,500 rows``."""
        what = "qrels set" if self.kind == "qrels" else "run"
        unit = "judgment" if self.kind == "qrels" else "row"
        if not self.created and self.alias is not None:
            return f"already stored as {what} {self.name!r}: {self.alias!r} now names it too"
        if not self.created:
            return f"already stored as {what} {self.name!r} (id {self.id}), nothing new"
        return (
            f"stored {what} {self.name!r} (id {self.id}): {count(self.num_queries, 'query')}, "
            f"{count(self.num_rows, unit)}"
        )


def already_stored(kind: str, existing: dict, src: Source, tag: str | None = None) -> IngestResult:
    """The result of a source whose content is stored already, as the catalogue row
    ``existing`` (:func:`rankhouse.catalog.writes.same_qrels`, ``same_run``) describes it."""
    rows = existing["num_judgments"] if kind == "qrels" else existing["num_rows"]
    return IngestResult(
        kind, existing["id"], existing["name"], tag, False, existing["num_queries"], rows, src.label
    )


def source_text(src: Source) -> str:
    """The ``source`` recorded in the catalogue: the file's path, or ``dataframe``."""
    return "dataframe" if src.is_frame else str(src.path)


def default_qrels_name(src: Source, sha: str) -> str:
    """A qrels set's name when none is given: the file's base name, or ``dataframe-<sha8>``."""
    return f"dataframe-{sha[:8]}" if src.is_frame else base_name(src.path)


def run_names(
    src: Source,
    name: str | None,
    tags: list[str],
    *,
    sha256: str,
    columns: dict[str, str] | None,
) -> dict[str, str]:
    """{tag: run name} for the tags of ``src`` (read with these ``columns``, of this hash).

    One tag: ``name``, else ``dataframe-<sha8>`` for a frame without a tag column, else the
    tag. Several: ``<name>/<tag>``, else the tag.
    """
    if len(tags) == 1:
        [tag] = tags
        if name:
            return {tag: name}
        if src.is_frame and columns is not None and "tag" not in columns:
            return {tag: f"dataframe-{sha256[:8]}"}
        return {tag: tag}
    return {tag: f"{name}/{tag}" if name else tag for tag in tags}


def parse_options(
    src: Source,
    kind: str,
    order: str,
    columns: dict[str, str] | None,
    delimiter: str | None = None,
) -> str:
    """The parse options recorded with the content's hash: together its identity."""
    options: dict[str, Any] = {"format": "trec" if src.format == "trec" else src.format}
    # Only another delimiter than the format's own is recorded: old identities stay as they were.
    if delimiter is not None and delimiter != default_delimiter(src.format):
        options["delimiter"] = delimiter
    if columns is not None:
        options["columns"] = dict(sorted(columns.items()))
    if kind == "run":
        options["order"] = order
    return json.dumps(options, sort_keys=True)


def default_tag(src: Source, kind: str = "run") -> str:
    """The tag of a run read from ``src`` without a tag column: the file's base name, or
    :data:`FRAME_TAG` for a frame (and for qrels, which have none)."""
    return FRAME_TAG if src.is_frame or kind == "qrels" else base_name(src.path)
