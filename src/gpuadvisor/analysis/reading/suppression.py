"""Inline suppressions, read from the tokenizer's comments only (text in strings never counts).

Forms understood:

- `# gpuadvisor: ignore[GPU101, sync-in-loop]` hides those rules (codes, prefixes or
  categories) on the line; a bare `# gpuadvisor: ignore` hides every rule on the line.
- `# gpuadvisor: ignore-file` (optionally with codes) anywhere hides them in the whole file.
- `# noqa: GPU101` as ruff and flake8 read it: the listed codes of ours are hidden, codes of
  other tools (`E501`) are left to them; a bare `# noqa` hides every rule on the line (ruff's
  blanket form).

A malformed directive (`ignore[` never closed, `ignore[]` empty) hides nothing: a typo must
not silence a file. Each directive records whether it hid something, which the opt-in
unused-suppression rule (GPU901) reports.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field

from gpuadvisor.analysis.findings.records import Finding

_GPUADVISOR = re.compile(r"#\s*gpuadvisor:\s*ignore(?P<file>-file)?(?P<rest>.*)", re.IGNORECASE)
_BRACKETED = re.compile(r"\[(?P<codes>[^\]]*)\]")
_NOQA = re.compile(r"#\s*noqa(?P<colon>\s*:\s*(?P<codes>[A-Za-z0-9_,\s-]*))?", re.IGNORECASE)
_OUR_CODE = re.compile(r"GPU\d+", re.IGNORECASE)
#: The codes of a directive that hides every rule.
EVERYTHING = frozenset({"*"})


@dataclass
class Directive:
    """One suppression comment: where it is, what it names, and what it has hidden so far."""

    line: int
    column: int
    end_column: int
    names: frozenset[str]  # rule codes, prefixes or categories; EVERYTHING for a bare one
    whole_file: bool = False
    noqa: bool = False
    used: set[str] = field(default_factory=set)  # the names that hid a finding

    def matches(self, finding: Finding) -> str | None:
        """The name of this directive that covers `finding`, if any."""
        if self.names == EVERYTHING:
            return "*"
        for name in self.names:
            if name in (finding.rule, finding.category) or (name.startswith("GPU") and finding.rule.startswith(name)):
                return name
        return None


@dataclass
class Suppressions:
    directives: list[Directive] = field(default_factory=list)

    def hides(self, finding: Finding) -> bool:
        """True when a directive covers `finding` (on its first or last line, or file-wide)."""
        hidden = False
        for directive in self.directives:
            if directive.whole_file or directive.line in (finding.line, finding.end_line):
                name = directive.matches(finding)
                if name is not None:
                    directive.used.add(name)
                    hidden = True
        return hidden


def _names(text: str) -> frozenset[str]:
    parts = (part.strip() for part in re.split(r"[,\s]+", text))
    return frozenset(part.upper() if part.upper().startswith("GPU") else part.lower() for part in parts if part)


def _directive(comment: str, line: int, column: int) -> Directive | None:
    end = column + len(comment)
    match = _GPUADVISOR.search(comment)  # also after another comment: `# why  # gpuadvisor: ignore`
    if match is not None:
        rest = match.group("rest")
        if not rest.strip() or rest.lstrip().startswith("#"):
            return Directive(line, column, end, EVERYTHING, whole_file=bool(match.group("file")))
        bracketed = _BRACKETED.match(rest)
        if bracketed is None or not _names(bracketed.group("codes")):
            return None  # `ignore[` unclosed, `ignore[]`, `ignore-files`: malformed, hides nothing
        return Directive(line, column, end, _names(bracketed.group("codes")), whole_file=bool(match.group("file")))
    match = _NOQA.search(comment)
    if match is None:
        return None
    if match.group("colon") is None:
        return Directive(line, column, end, EVERYTHING, noqa=True)
    ours = frozenset(code.upper() for code in _OUR_CODE.findall(match.group("codes") or ""))
    return Directive(line, column, end, ours, noqa=True) if ours else None


def _comments(text: str) -> Iterator[tokenize.TokenInfo]:
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                yield token
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return  # text the tokenizer refuses: the comments read so far still count


def find_suppressions(text: str) -> Suppressions:
    found = Suppressions()
    lowered = text.lower()
    if "gpuadvisor" not in lowered and "noqa" not in lowered:
        return found  # the tokenizer costs more than the rest of a small check
    for token in _comments(text):
        directive = _directive(token.string, token.start[0], token.start[1])
        if directive is not None:
            found.directives.append(directive)
    return found
