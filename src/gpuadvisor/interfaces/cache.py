"""Per-file results cached by content, so unchanged files are not parsed again.

The key is the file's bytes plus a fingerprint of the analyzer (version and the analysis
package's own files), so a new release or an edited rule never reuses stale results.
Entries are small JSON files written atomically; a damaged entry is ignored and rewritten.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from gpuadvisor._paths import user_cache_dir
from gpuadvisor._version import __version__
from gpuadvisor.analysis.findings import FileError, FileResult, Finding, PredictionCandidate

_ANALYSIS_PACKAGE = Path(__file__).resolve().parent.parent / "analysis"


def analyzer_fingerprint() -> str:
    import hashlib  # not needed at all with --no-cache

    digest = hashlib.sha256(__version__.encode())
    for path in sorted(_ANALYSIS_PACKAGE.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(_ANALYSIS_PACKAGE)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


class ResultCache:
    def __init__(self, root: Path, fingerprint: str) -> None:
        self.folder = root / "check" / fingerprint

    @classmethod
    def default(cls) -> ResultCache:
        return cls(user_cache_dir(), analyzer_fingerprint())

    def _entry(self, digest: str) -> Path:
        return self.folder / digest[:2] / f"{digest}.json"

    def get(self, digest: str, path: str) -> FileResult | None:
        try:
            data = json.loads(self._entry(digest).read_text(encoding="utf-8"))
            findings = [Finding.from_dict({**item, "path": path}) for item in data["findings"]]
            error = FileError.from_dict({**data["error"], "path": path}) if data["error"] else None
            candidates = [
                (Finding.from_dict({**item["finding"], "path": path}), PredictionCandidate.from_dict(item["candidate"]))
                for item in data["candidates"]
            ]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # missing, damaged, or valid JSON of another shape: analyse again
        if not all(_well_formed(finding) for finding in [*findings, *(f for f, _ in candidates)]):
            return None
        return FileResult(path, findings, error, candidates)

    def put(self, digest: str, result: FileResult) -> None:
        entry = self._entry(digest)
        payload = {
            "findings": [{k: v for k, v in f.to_dict().items() if k != "path"} for f in result.findings],
            "error": {k: v for k, v in result.error.to_dict().items() if k != "path"} if result.error else None,
            "candidates": [
                {"finding": {k: v for k, v in f.to_dict().items() if k != "path"}, "candidate": c.to_dict()}
                for f, c in result.candidates
            ],
        }
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=entry.parent, delete=False, suffix=".tmp", encoding="utf-8") as tmp:
                json.dump(payload, tmp)
            os.replace(tmp.name, entry)
        except OSError:
            pass  # a read-only or full cache folder must not fail the check


def _well_formed(finding: Finding) -> bool:
    """A cached finding whose position fields are numbers (a hand-edited entry may say "3")."""
    numbers = (finding.line, finding.column, finding.end_line, finding.end_column)
    return all(type(n) is int and n >= 0 for n in numbers) and isinstance(finding.message, str)


def content_digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
