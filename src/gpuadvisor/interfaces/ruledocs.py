"""The per-rule documents in `rules/` (shipped inside the wheel as `gpuadvisor/rule_docs`).

Each document starts with `key: value` header lines (code, category, severity, summary)
and continues in Markdown with the sections What it does / Why is this bad? / Example /
Use instead / Fix / Known limits. `explain` prints it; SARIF takes its help text from it;
the tests run every example in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_PACKAGED = Path(__file__).resolve().parent.parent / "rule_docs"
_REPOSITORY = Path(__file__).resolve().parents[3] / "rules"
_SECTION = re.compile(r"^## (?P<title>.+?)\s*$", re.MULTILINE)
_CODE_BLOCK = re.compile(r"```python\n(?P<code>.*?)```", re.DOTALL)


@dataclass(frozen=True)
class RuleDoc:
    code: str
    header: dict[str, str]
    body: str

    def section(self, title: str) -> str:
        matches = list(_SECTION.finditer(self.body))
        for index, match in enumerate(matches):
            if match.group("title").lower() == title.lower():
                end = matches[index + 1].start() if index + 1 < len(matches) else len(self.body)
                return self.body[match.end() : end].strip()
        return ""

    def examples(self, title: str) -> list[str]:
        return [m.group("code") for m in _CODE_BLOCK.finditer(self.section(title))]

    @property
    def text(self) -> str:
        head = "\n".join(f"{key}: {value}" for key, value in self.header.items())
        return f"{head}\n\n{self.body.strip()}\n"


#: Where the rule documents are published (the repository's `rules/` folder); one place to change.
DOCS_BASE_URL = "https://github.com/gpuadvisor/gpuadvisor/blob/main/rules/"


def rule_url(code: str) -> str:
    """The published document of a rule: SARIF's helpUri, the link shown with each finding."""
    return f"{DOCS_BASE_URL}{code.upper()}.md"


def docs_folder() -> Path:
    return _PACKAGED if _PACKAGED.is_dir() else _REPOSITORY


def _parse(path: Path) -> RuleDoc:
    text = path.read_text(encoding="utf-8")
    head, _, body = text.partition("\n\n")
    header = {}
    for line in head.splitlines():
        key, _, value = line.partition(":")
        header[key.strip().lower()] = value.strip()
    return RuleDoc(code=path.stem, header=header, body=body)


@lru_cache(maxsize=None)
def all_docs() -> dict[str, RuleDoc]:
    folder = docs_folder()
    return {path.stem: _parse(path) for path in sorted(folder.glob("GPU*.md"))} if folder.is_dir() else {}


def rule_doc(code: str) -> RuleDoc | None:
    return all_docs().get(code.upper())
