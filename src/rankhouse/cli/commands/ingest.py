"""``rankhouse ingest qrels|run FILE``: parse options, call the library, say what happened."""

from __future__ import annotations

import sys
from enum import StrEnum

import typer

from .common import META_OPTION, open_warehouse, parse_meta


class QrelsFormat(StrEnum):
    trec = "trec"
    csv = "csv"
    tsv = "tsv"
    parquet = "parquet"
    jsonl = "jsonl"


class SourceFormat(StrEnum):
    """A run's formats: the qrels' and MS MARCO's headerless ``qid pid rank``."""

    trec = "trec"
    csv = "csv"
    tsv = "tsv"
    parquet = "parquet"
    jsonl = "jsonl"
    msmarco = "msmarco"


class RunOrder(StrEnum):
    score = "score"
    rank = "rank"


_NAME = typer.Option(None, "--name", "-n", help="Name in the warehouse (default: from the file).")
_COLUMNS = typer.Option(
    None,
    "--columns",
    help="Column mapping for tabular files, e.g. qid=QUERY_KEY,docid=DOC_KEY,score=SCORE.",
)
_FORMAT = typer.Option(
    None, "--format", help="Input format (default: from the extension, .gz stripped; else trec)."
)
DELIMITER_OPTION = typer.Option(
    None,
    "--delimiter",
    help="Field delimiter of a csv/tsv file: , ; | or tab (default: sniffed from the header).",
)
_REPLACE = typer.Option(
    False, "--replace", help="Overwrite what holds the same name with different content."
)


def register(app: typer.Typer) -> None:
    ingest = typer.Typer(help="Ingest qrels or runs (TREC text, CSV, TSV, Parquet, JSON lines).")
    app.add_typer(ingest, name="ingest")

    @ingest.command("qrels")
    def ingest_qrels(
        ctx: typer.Context,
        file: str = typer.Argument(..., help="Qrels file (plain or .gz)."),
        name: str = _NAME,
        columns: str = _COLUMNS,
        format: QrelsFormat = _FORMAT,
        delimiter: str = DELIMITER_OPTION,
        replace: bool = _REPLACE,
    ) -> None:
        """Store relevance judgments (TREC: 'qid iter docid rel')."""
        wh = open_warehouse(ctx)
        result = wh.ingest_qrels(
            file,
            name=name,
            columns=columns,
            format=format.value if format else None,
            delimiter=delimiter,
            replace=replace,
        )
        print(result.describe(), file=sys.stderr)

    @ingest.command("run")
    def ingest_run(
        ctx: typer.Context,
        file: str = typer.Argument(..., help="Run file (plain or .gz); one run per tag."),
        name: str = _NAME,
        columns: str = _COLUMNS,
        format: SourceFormat = _FORMAT,
        delimiter: str = DELIMITER_OPTION,
        order: RunOrder = typer.Option(
            RunOrder.score, "--order", help="Rank by score, or take the given ranks (score=-rank)."
        ),
        meta: list[str] = META_OPTION,
        replace: bool = _REPLACE,
    ) -> None:
        """Store a run (TREC: 'qid Q0 docid rank score tag'); several tags give several runs."""
        metadata = parse_meta(meta)
        wh = open_warehouse(ctx)
        results = wh.ingest_run(
            file,
            name=name,
            columns=columns,
            format=format.value if format else None,
            delimiter=delimiter,
            order=order.value,
            meta=metadata,
            replace=replace,
        )
        for result in results:
            print(result.describe(), file=sys.stderr)
