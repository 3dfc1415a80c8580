"""The source lines a finding points into (a file's, a notebook cell's, or standard input's)."""

from __future__ import annotations

from pathlib import Path

from gpuadvisor.analysis.findings.records import Finding
from gpuadvisor.analysis.reading.source import SourceError, code_lines, decode_source
from gpuadvisor.interfaces.api import Report


class SourceLines:
    def __init__(self, report: Report) -> None:
        self.report = report
        self._cache: dict[str, dict[int | None, list[str]]] = {}

    def _load(self, path: str) -> dict[int | None, list[str]]:
        if path in self.report.sources:
            return {None: code_lines(self.report.sources[path])}
        try:
            if path.endswith(".ipynb"):
                from gpuadvisor.analysis.reading.notebook import read_notebook  # off the start-up path of .py checks

                return {cell: lines for cell, lines in read_notebook(Path(path).read_bytes()).cells.items()}
            data = Path(path).read_bytes()
            try:
                text = decode_source(data)  # the file's own coding cookie, like the analysis
            except SourceError:
                text = data.decode("utf-8", errors="replace")
            return {None: code_lines(text)}
        except (OSError, SourceError):
            return {}

    def lines(self, finding: Finding) -> list[str]:
        if finding.path not in self._cache:
            self._cache[finding.path] = self._load(finding.path)
        return self._cache[finding.path].get(finding.cell, [])

    def line(self, finding: Finding) -> str:
        lines = self.lines(finding)
        return lines[finding.line - 1] if 0 < finding.line <= len(lines) else ""
