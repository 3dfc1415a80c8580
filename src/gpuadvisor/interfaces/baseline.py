"""Baselines: accept the findings a code base has today, report only new ones.

A finding is known by its rule, its file (relative to the project root), the text of its
line with whitespace collapsed, and which occurrence of that (rule, file, text) it is. Lines
moving up or down (code added above) therefore keep their findings accepted; editing the line
itself, or a new copy of the same line, makes a new finding.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.reading.source import SourceError, code_lines, decode_source
from gpuadvisor.interfaces.runner import read_source_file

BASELINE_VERSION = 1


class BaselineError(ValueError):
    """The baseline file cannot be read or is not one of ours."""


def _line_texts(findings: list[Finding], sources: dict[str, str]) -> dict[str, list[str]]:
    texts: dict[str, list[str]] = {}
    for path in {f.path for f in findings if not f.path.endswith(".ipynb")}:
        try:
            text = sources.get(path) or decode_source(read_source_file(path))
        except (OSError, SourceError):
            text = ""
        texts[path] = code_lines(text)
    return texts


def finding_keys(findings: list[Finding], sources: dict[str, str], relative: Any) -> list[tuple[str, str, str, int]]:
    """(rule, path, normalised line text, occurrence) of each finding, in the order given.

    `relative` maps a finding's path to the form stored (relative to the project root).
    """
    lines = _line_texts(findings, sources)
    seen: Counter[tuple[str, str, str]] = Counter()
    keys = []
    for finding in sorted(findings, key=lambda f: (f.path, f.cell or 0, f.line, f.column, f.rule)):
        text = lines.get(finding.path, [])
        line = " ".join(text[finding.line - 1].split()) if 0 < finding.line <= len(text) else f"cell {finding.cell}"
        ident = (finding.rule, relative(finding.path), line)
        keys.append((*ident, seen[ident]))
        seen[ident] += 1
    return keys


def write_baseline(path: Path, findings: list[Finding], sources: dict[str, str], relative: Any) -> int:
    entries = [
        {"rule": rule, "path": where, "line_text": text, "occurrence": occurrence}
        for rule, where, text, occurrence in finding_keys(findings, sources, relative)
    ]
    payload = {"version": BASELINE_VERSION, "tool": "gpuadvisor", "findings": entries}
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(entries)


def read_baseline(path: Path) -> set[tuple[str, str, str, int]]:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        if payload.get("tool") != "gpuadvisor" or payload.get("version") != BASELINE_VERSION:
            raise BaselineError(f"{path} is not a gpuadvisor baseline (version {BASELINE_VERSION})")
        return {(e["rule"], e["path"], e["line_text"], int(e["occurrence"])) for e in payload["findings"]}
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise BaselineError(f"{path} is not a valid gpuadvisor baseline (JSON with a findings list)") from None


def new_findings(findings: list[Finding], known: set[tuple[str, str, str, int]], sources: dict[str, str], relative: Any) -> list[Finding]:
    """The findings not in the baseline, in their original order."""
    ordered = sorted(findings, key=lambda f: (f.path, f.cell or 0, f.line, f.column, f.rule))
    keys = finding_keys(ordered, sources, relative)
    accepted = {id(f) for f, key in zip(ordered, keys) if key in known}
    return [f for f in findings if id(f) not in accepted]
