"""Write the measure table of README.md from the registry: ``python -m rankhouse.measures.readme``.

The table sits between ``<!-- measures:begin -->`` and ``<!-- measures:end -->``; a test fails
when it and the registry drift apart.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .docs import markdown

BEGIN, END = "<!-- measures:begin -->", "<!-- measures:end -->"


def update(readme: Path) -> None:
    """Replace the measure table of ``readme`` with the registry's."""
    text = readme.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    table = "\n".join(line for line in markdown().splitlines() if line.startswith("|"))
    readme.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    update(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("README.md"))
