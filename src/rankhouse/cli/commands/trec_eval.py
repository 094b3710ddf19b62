"""``rankhouse trec-eval``: trec_eval 10's command line, output and exit codes."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command(
        "trec-eval",
        context_settings={
            "allow_extra_args": True,
            "ignore_unknown_options": True,
            "allow_interspersed_args": False,
            "help_option_names": [],
        },
        add_help_option=False,
    )
    def trec_eval(ctx: typer.Context) -> None:
        """Evaluate like trec_eval 10: QRELS RUN with -q -c -n -J -l N -M N -N N -m MEASURE.

        Prints exactly what trec_eval prints (all_trec catalogue included) and exits with its
        exit codes. A run name starting with '-' reads standard input. With --db (or
        $RANKHOUSE_DB) the qrels, the run and every per-query value are stored there, the run
        marked as read by trec-eval; otherwise no file is written.
        """
        from ...trec_eval.runner import main

        state = ctx.find_root().obj
        db = getattr(state, "db", None)
        read_only = bool(getattr(state, "read_only", False))
        raise typer.Exit(main(list(ctx.args), db=db, read_only=read_only))
