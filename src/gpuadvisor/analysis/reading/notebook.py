"""Jupyter notebooks: their code cells analysed as one module, findings mapped back to cells.

Cells run top to bottom in one namespace, so they are joined in order (imports in cell 1
count in cell 7). IPython syntax is neutralised without moving lines: `%timeit stmt` becomes a
loop running `stmt` (which is what it does), other line magics, shell escapes and `obj?` help
become `pass` (and the lines a trailing backslash continues them on become blank), `x = !ls`
becomes `x = None`, and cells run by a non-Python cell magic (`%%bash`, `%%html`, ...) are left out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.reading.source import SourceError, code_lines

_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun", "%%memit", "%%py", "%%python")
_LINE_MAGIC = re.compile(r"^(\s*)[%!]|^(\s*)[\w.]+\?\??\s*$")  # magics, shell escapes, `obj?` help
_ASSIGNED_MAGIC = re.compile(r"^(\s*[\w.,\s]+=\s*)[%!].*$")
#: `%timeit [-n N] [-r R] [-o] [-q] ... statement`: the options, then the statement timed.
_TIMEIT_MAGIC = re.compile(r"^(\s*)(%timeit(?:\s+-[nrp]\s*\d+|\s+-[oqtc])*\s+)(\S.*)$")


@dataclass(frozen=True)
class NotebookSource:
    text: str
    #: For line n of `text` (index n-1): (cell number counting code cells from 1, line in cell).
    origin: list[tuple[int, int]]
    cells: dict[int, list[str]]  # code cell number -> its original lines, for display


def _cell_lines(cell: dict) -> list[str]:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        text = "".join(source)
    elif isinstance(source, str):
        text = source
    else:
        raise SourceError("decode", "not a readable Jupyter notebook (a cell's source is neither text nor a list of lines)")
    return code_lines(text)


def _language(document: dict) -> str:
    """The notebook's kernel language ("python" when it does not say)."""
    metadata = document.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field), str):
            return section[field].lower()
    return "python"


def _timed_statement(line: str) -> str | None:
    """`%timeit -n 10 f(x)` runs `f(x)` over and over: read as a loop header (see
    `TIMEIT_LOOP_HEADER`) + the statement, with the statement at its own column (`%timeit ` and
    the header are both 8 characters). None when the line is not a `%timeit` of one simple statement."""
    timed = _TIMEIT_MAGIC.match(line)
    if timed is None:
        return None
    indent, prefix, statement = timed.groups()
    loop = f"{indent}{kb.TIMEIT_LOOP_HEADER}{' ' * (len(prefix) - len(kb.TIMEIT_LOOP_HEADER))}{statement}"
    try:
        compile(loop.strip(), "<timeit>", "exec")
    except (SyntaxError, ValueError):
        return None
    return loop


def _neutralise(line: str) -> str:
    assigned = _ASSIGNED_MAGIC.match(line)
    if assigned:
        return f"{assigned.group(1)}None"
    timed = _timed_statement(line)
    if timed is not None:
        return timed
    magic = _LINE_MAGIC.match(line)
    if magic:
        return f"{magic.group(1) or magic.group(2) or ''}pass"
    return line


def read_notebook(data: bytes) -> NotebookSource:
    try:
        document = json.loads(data.decode("utf-8-sig"))
        if not isinstance(document, dict):
            raise TypeError("the document is not a JSON object")
        cells = document["cells"]
        if not isinstance(cells, list):
            raise TypeError("cells is not a list")
    except RecursionError:
        raise SourceError("decode", "not a readable Jupyter notebook (JSON nested too deeply)") from None
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise SourceError("decode", f"not a readable Jupyter notebook ({exc})") from None
    if _language(document) not in ("python", "python3", "ipython", "ipython3"):
        return NotebookSource("\n", [(1, 1)], {})  # an R or Julia notebook: nothing of ours to check
    lines: list[str] = []
    origin: list[tuple[int, int]] = []
    display: dict[int, list[str]] = {}
    number = 0
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        number += 1
        original = _cell_lines(cell)
        display[number] = original
        body = list(original)
        if body and body[0].lstrip().startswith("%%"):
            if not body[0].lstrip().startswith(_PYTHON_CELL_MAGICS):
                continue  # %%bash, %%html, %%writefile ...: not Python
            body[0] = ""
        in_magic = False  # on a line that continues a magic with `\` (`%run main \`, `--epochs 3`)
        for index, line in enumerate(body, start=1):
            neutral = "" if in_magic else _neutralise(line)
            in_magic = (in_magic or neutral != line) and line.rstrip().endswith("\\")
            lines.append(neutral)
            origin.append((number, index))
    return NotebookSource("\n".join(lines) + "\n", origin, display)
