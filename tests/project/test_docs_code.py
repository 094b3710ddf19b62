"""Every fenced ``python`` and ``bash`` block of README.md and docs/*.md runs, in a copy of the
world the examples assume (tests/project/docs_world.py), and exits 0.

A block that cannot run here says why, in a comment just above it:
``<!-- docs-test: skip (the reason) -->``; a block that needs the PostgreSQL test server says
``<!-- docs-test: postgres -->`` and runs where one is given. A document's blocks run in order
in one copy of the world (a later block may use what an earlier one made).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from docs_world import BLOCK, PRELUDE, ROOT, build, environment

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = ("python", "bash")
#: Documents whose examples start from the files alone (README's tour makes the warehouse).
FROM_FILES = {"README.md"}


def _blocks(document: Path) -> list[tuple[str, str, str]]:
    """(language, marker, code) of each fenced block of ``document`` in a language run here."""
    text = document.read_text(encoding="utf-8")
    return [
        (m["lang"], (m["marker"] or "").strip(), m["body"])
        for m in BLOCK.finditer(text)
        if m["lang"] in RUN
    ]


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("docs-world"))


@pytest.fixture(scope="session")
def files_world(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("docs-files"), warehouse=False)


def test_markers_are_known():
    for document in DOCUMENTS:
        for _, marker, _ in _blocks(document):
            assert marker == "" or marker == "postgres" or marker.startswith("skip ("), (
                f"{document.name}: unknown docs-test marker {marker!r}"
            )


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_the_documents_blocks_run(document, request, tmp_path):
    blocks = _blocks(document)
    if not blocks:
        pytest.skip(f"{document.name} has no python or bash block")
    here = tmp_path / "world"
    start = "files_world" if document.name in FROM_FILES else "world"
    shutil.copytree(request.getfixturevalue(start), here)
    env = environment(here)
    env["RANKHOUSE_ROOT"] = str(ROOT)  # for blocks that name the checkout's files
    for number, (language, marker, code) in enumerate(blocks, start=1):
        if marker.startswith("skip ("):
            continue
        if marker == "postgres" and not os.environ.get("RANKHOUSE_TEST_POSTGRES"):
            continue
        if language == "python":
            command = [sys.executable, "-c", PRELUDE + "\n" + code]
        else:
            command = ["bash", "-e", "-o", "pipefail", "-c", code]
        done = subprocess.run(
            command, cwd=here, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, (
            f"{document.name}, block {number} ({language}) failed:\n{code}\n"
            f"--- stdout\n{done.stdout[-2000:]}\n--- stderr\n{done.stderr[-4000:]}"
        )
