"""``--help`` reads as words (flags as flags, metavars, no Python types), a flag given a
value is a usage error, trec-eval prints its help, a range is stated once, and `--version`
prints one line whichever way it is reached."""

from __future__ import annotations

import re

import pytest
import typer.main
from conftest import EXAMPLES

import rankhouse
from rankhouse.cli.app import app

QRELS = str(EXAMPLES / "qrels.txt")
BM25 = str(EXAMPLES / "run.bm25.txt")


def _commands(group=None, prefix=()) -> list[tuple[tuple[str, ...], object]]:
    group = group or typer.main.get_command(app)
    found = [(prefix, group)]
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            found += _commands(command, (*prefix, name))
        elif name != "trec-eval":  # trec_eval's own options: its help is tested below
            found.append(((*prefix, name), command))
    return found


COMMANDS = _commands()


def _flat(text: str) -> str:
    """The help without its boxes, whitespace collapsed: wrapped help texts read whole."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


@pytest.mark.parametrize(
    ("path", "command"), COMMANDS, ids=[" ".join(p) or "rankhouse" for p, _ in COMMANDS]
)
def test_help_shows_words_not_types(run_cli, path, command):
    done = run_cli(*path, "--help", db=False)
    assert done.exit_code == 0, done.stderr
    assert not re.search(r"<\w+(\[\w+\])?>", done.stdout), done.stdout  # <bool>, <list[str]>
    usage = next(line for line in done.stdout.splitlines() if "Usage:" in line)
    assert "{" not in usage and "<" not in usage
    flat = _flat(done.stdout)
    for param in command.params:
        if param.help:  # every help text is shown whole (no markup eaten)
            assert _flat(param.help) in flat, param.help


@pytest.mark.parametrize(
    ("path", "usage", "shown"),
    [
        (
            ["eval"],
            "Usage: rankhouse eval [OPTIONS] [QRELS] [RUN...]",  # or --ranked-labels FILE
            [
                "-m, --measure MEASURE Measure, repeatable",
                "-l, --relevance-level LEVEL Grade",
                "-q, --per-query One row per run and query.",
                "--meta KEY=VALUE Metadata",
                "-f, --format table|tsv|csv|json|markdown|latex Output format",
                "--allow-no-overlap Evaluate a run",
                "--help Show this message and exit.",
            ],
        ),
        (
            ["compare"],
            "Usage: rankhouse compare [OPTIONS] QRELS RUN...",
            ["ALPHA Significance level, strictly between 0 and 1. [default: 0.05]"],
        ),
        (
            ["regress"],
            "Usage: rankhouse regress [OPTIONS] RUN",
            ["--json FILE Also write a JSON report here ('-': stdout).", "--relative Read"],
        ),
        (
            [],
            "Usage: rankhouse [OPTIONS] COMMAND [ARGS]...",
            ["--db WAREHOUSE", "--read-only Open"],
        ),
        (
            ["ingest", "run"],
            "Usage: rankhouse ingest run [OPTIONS] FILE",
            [
                "-n, --name NAME Name in the warehouse (default: from the file).",
                "--replace Overwrite",
            ],
        ),
    ],
)
def test_usage_and_options_read_as_words(run_cli, path, usage, shown):
    done = run_cli(*path, "--help", db=False)
    assert usage in done.stdout
    flat = _flat(done.stdout)
    for text in shown:
        assert text in flat


@pytest.mark.parametrize("value", ["true", "false", "True", "yes"])
def test_a_flag_takes_no_value(run_cli, value):
    done = run_cli("eval", QRELS, BM25, "--per-query", value)
    assert done.exit_code == 2
    assert (
        f"--per-query is a flag and takes no value: write --per-query alone (not --per-query "
        f"{value})" in _flat(done.stderr)
    )


def test_a_flag_before_a_file_named_true_is_fine(run_cli, tmp_path):
    (tmp_path / "true").write_text((EXAMPLES / "run.bm25.txt").read_text())
    done = run_cli("eval", QRELS, "--per-query", "true", "-m", "AP", "-f", "csv")
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("run,query,AP\nbm25,q1,")


@pytest.mark.parametrize("flag", ["-h", "--help", "-qh"])
def test_trec_eval_prints_its_help(run_cli, flag):
    done = run_cli("trec-eval", flag, db=False)
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith(
        "Usage: trec-eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] [-m measure[.params]]... "
        "qrels_file results_file\n"
    )
    assert "  -h, --help\n            print this help and exit\n" in done.stdout
    assert done.stderr == ""


def test_trec_eval_still_rejects_unknown_options(run_cli):
    done = run_cli("trec-eval", "-x", QRELS, BM25, db=False)
    assert done.exit_code == 1
    assert done.stderr.startswith("trec_eval: invalid option -- 'x'\n")


@pytest.mark.parametrize("alpha", ["0", "1", "1.5"])
def test_alpha_range_is_said_once(run_cli, alpha):
    done = run_cli("compare", QRELS, BM25, "-m", "AP", "--alpha", alpha)
    assert done.exit_code == 1
    assert done.stderr == (
        f"Error: --alpha must lie strictly between 0 and 1, got {float(alpha)}\n"
    )
    help_text = _flat(run_cli("compare", "--help", db=False).stdout)
    assert "strictly between 0 and 1" in help_text and "0.0<=x<=1.0" not in help_text


@pytest.mark.parametrize(("command", "code"), [("compare", 1), ("regress", 2)])
def test_the_judged_drop_range_is_said_once(run_cli, command, code):
    args = (
        [QRELS, BM25, "-b", BM25] if command == "compare" else [BM25, "--qrels", QRELS, "-b", BM25]
    )
    done = run_cli(command, *args, "-m", "P@5", "--max-judged-drop", "1.5")
    assert (done.exit_code, done.stderr) == (
        code,
        "Error: --max-judged-drop must lie between 0 and 1, not 1.5\n",
    )
    help_text = _flat(run_cli(command, "--help", db=False).stdout)
    assert "0 to 1" in help_text and "0.0<=x<=1.0" not in help_text


def test_version_alone_and_through_typer_print_the_same_line(run_cli):
    alone = run_cli("--version", db=False)  # answered before Typer is imported
    through = run_cli("--read-only", "--version", db=False)  # Typer's eager option
    assert alone.exit_code == through.exit_code == 0
    assert alone.stdout == through.stdout == f"rankhouse {rankhouse.__version__}\n"
    assert alone.stderr == through.stderr == ""


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        (["eval", "q.txt", "r.txt"], ["eval"]),
        (["--db", "w.duckdb", "--read-only", "history"], ["history"]),
        (["--db=w.duckdb", "runs", "list"], ["runs"]),
        (["trec-eval", "-q"], ["trec-eval"]),
        (["--help"], None),
        (["--version"], None),
        (["evl"], None),  # misspelt: the whole app suggests the name
        (["--db"], None),
        ([], None),
    ],
)
def test_a_call_builds_only_its_command(args, kept):
    """Typer builds a call's command alone; the root's help and unknown names see every one,
    and the command built alone has the same parameters as in the whole tree."""
    narrowed = app._narrowed(args)
    whole = typer.main.get_command(app)
    if kept is None:
        assert narrowed is app
        return
    built = typer.main.get_command(narrowed)
    assert list(built.commands) == kept
    [name] = kept
    alone, full = built.commands[name], whole.commands[name]

    def params(command):
        found = [(p.name, tuple(p.opts), getattr(p, "help", None)) for p in command.params]
        for sub_name, sub in sorted(getattr(command, "commands", {}).items()):
            found += [(sub_name, *entry) for entry in params(sub)]
        return found

    assert alone.name == full.name and params(alone) == params(full)
    assert [(p.name, tuple(p.opts)) for p in built.params] == [
        (p.name, tuple(p.opts)) for p in whole.params
    ]


@pytest.mark.parametrize(
    ("path", "command"), COMMANDS, ids=[" ".join(p) or "rankhouse" for p, _ in COMMANDS]
)
def test_an_option_states_its_default_once(run_cli, path, command):
    """Click shows ``[default: ...]``; an option's own help then does not say it again
    (``--alpha`` said "(default: 0.05).  [default: 0.05]")."""
    text = run_cli(*path, "--help", db=False).stdout
    for entry in re.split(r"\n  (?=-)", text):
        if "[default:" in entry:
            assert "default" not in entry.split("[default:")[0].lower(), entry


def test_each_command_is_attached_by_its_own_modules():
    """A command line imports only its command's modules (cli/app.py's map): each top-level
    command of the whole app is made by the modules the map names for it, with the same
    subcommands and parameters, and the map names no command the app lacks."""
    import rankhouse.cli.app as app_module

    whole = typer.main.get_command(app)
    assert set(app_module._COMMAND_MODULES) == set(whole.commands)
    single = typer.Typer()
    single.callback()(lambda: None)  # a group even when it holds one command
    for name, modules in app_module._COMMAND_MODULES.items():
        app_module._register(single, modules)
        alone = typer.main.get_command(single).commands[name]

        def shape(command):
            sub = getattr(command, "commands", {})
            return (
                sorted(p.name for p in command.params),
                {key: shape(value) for key, value in sub.items()},
            )

        assert shape(alone) == shape(whole.commands[name]), name
    app_module.register_all(app)  # the whole app again, for the tests after this one
