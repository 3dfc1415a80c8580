"""Inline suppressions: `# gpuadvisor: ignore[GPU101]`, bare `# gpuadvisor: ignore`,
and the file-level `# gpuadvisor: ignore-file` (optionally with codes or categories)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuadvisor.analysis.findings import Finding
from gpuadvisor.analysis.source import code_lines

_COMMENT = re.compile(r"#\s*gpuadvisor:\s*ignore(?P<file>-file)?(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_EVERYTHING = frozenset({"*"})


@dataclass
class Suppressions:
    by_line: dict[int, frozenset[str]] = field(default_factory=dict)
    whole_file: frozenset[str] = frozenset()

    def hides(self, finding: Finding) -> bool:
        names = {finding.rule, finding.category}
        if self.whole_file and (self.whole_file == _EVERYTHING or names & self.whole_file):
            return True
        for line in {finding.line, finding.end_line}:
            codes = self.by_line.get(line)
            if codes is not None and (codes == _EVERYTHING or names & codes):
                return True
        return False


def _codes(text: str | None) -> frozenset[str]:
    if text is None:
        return _EVERYTHING
    codes = frozenset(part.strip() for part in text.split(",") if part.strip())
    return codes or _EVERYTHING


def find_suppressions(text: str) -> Suppressions:
    found = Suppressions()
    if "gpuadvisor" not in text:
        return found
    whole: set[str] = set()
    for number, line in enumerate(code_lines(text), start=1):
        match = _COMMENT.search(line)
        if match is None:
            continue
        codes = _codes(match.group("codes"))
        if match.group("file"):
            whole |= codes
        else:
            found.by_line[number] = found.by_line.get(number, frozenset()) | codes
    found.whole_file = _EVERYTHING if "*" in whole else frozenset(whole)
    return found
