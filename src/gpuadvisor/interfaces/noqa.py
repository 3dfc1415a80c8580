"""`check --add-noqa`: write `# gpuadvisor: ignore[CODE]` on the line of every finding.

The way to adopt the tool on an existing code base: today's findings are accepted in the
code, where a reviewer sees them, and every new one is reported.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import defaultdict
from pathlib import Path

from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.interfaces.fixing import read_utf8_text, write_atomically

_EXISTING = re.compile(r"(#\s*gpuadvisor:\s*ignore)(\[(?P<codes>[^\]]*)\])?(?!-file)", re.IGNORECASE)


def _open_string_lines(text: str) -> set[int]:
    """Lines that end inside a string (a comment there would become part of the string)."""
    inside: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            inside.update(range(token.start[0], token.end[0]))
    return inside


def _with_codes(line: str, codes: list[str]) -> str:
    body, ending = (line[: -len(e)], e) if (e := _line_ending(line)) else (line, "")
    existing = _EXISTING.search(body)
    if existing is None:
        return f"{body}  # gpuadvisor: ignore[{', '.join(codes)}]{ending}"
    if existing.group(2) is None:
        return line  # a bare ignore already hides everything
    present = [c.strip() for c in existing.group("codes").split(",") if c.strip()]
    merged = present + [c for c in codes if c not in present]
    return f"{body[: existing.start()]}{existing.group(1)}[{', '.join(merged)}]{body[existing.end():]}{ending}"


def _line_ending(line: str) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if line.endswith(ending):
            return ending
    return ""


def add_noqa(findings: list[Finding]) -> tuple[int, int]:
    """Comment every finding's line; returns (comments written, findings left without one)."""
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_path[finding.path].append(finding)
    written = skipped = 0
    for path, found in by_path.items():
        text = read_utf8_text(path) if path.endswith(".py") else None
        if text is None:
            skipped += len(found)  # notebooks, standard input, other encodings
            continue
        try:
            unsafe = _open_string_lines(text)
        except (tokenize.TokenError, SyntaxError):
            skipped += len(found)
            continue
        lines = text.splitlines(True)
        wanted: dict[int, list[str]] = defaultdict(list)
        for finding in found:
            line = next((n for n in (finding.line, finding.end_line) if n not in unsafe), None)
            if line is None or line > len(lines):
                skipped += 1
            elif finding.rule not in wanted[line]:
                wanted[line].append(finding.rule)
        for line, codes in wanted.items():
            lines[line - 1] = _with_codes(lines[line - 1], codes)
            written += 1
        if wanted:
            write_atomically(Path(path), "".join(lines))
    return written, skipped
