"""Per-file results cached by content, so unchanged files are not parsed again.

The key is the file's bytes plus a fingerprint of the analyzer (version and the analysis
package's own files), so a new release or an edited rule never reuses stale results.
Entries are small JSON files written atomically; a damaged entry is ignored, reported once
and rewritten. The cache is bounded: past CACHE_SIZE_LIMIT bytes (a run's end checks), the
entries used least recently (reading one touches it) are removed until it is at 80% of that.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from gpuadvisor._paths import user_cache_dir
from gpuadvisor.analysis.facts.project import exports_from_json, exports_to_json
from gpuadvisor._safe_io import dumps_json, load_json, report_damaged
from gpuadvisor._version import __version__
from gpuadvisor.analysis.findings.records import FileError, FileResult, Finding, PredictionCandidate

#: Default bound of the check cache: a few hundred thousand files' results.
CACHE_SIZE_LIMIT = 256 * 1024 * 1024
#: Seconds between two size checks of the cache (a check lists every entry).
TRIM_INTERVAL_S = 3600.0
#: An entry is a few hundred bytes; one larger than this was not written by us.
_ENTRY_SIZE_LIMIT = 4 * 1024 * 1024

_ANALYSIS_PACKAGE = Path(__file__).resolve().parent.parent / "analysis"


def analyzer_fingerprint() -> str:
    import hashlib  # not needed at all with --no-cache

    digest = hashlib.sha256(__version__.encode())
    for path in sorted(_ANALYSIS_PACKAGE.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(_ANALYSIS_PACKAGE)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


class ResultCache:
    def __init__(self, root: Path, fingerprint: str, size_limit: int = CACHE_SIZE_LIMIT) -> None:
        self.root = root / "check"
        self.folder = self.root / fingerprint
        self.size_limit = size_limit

    @classmethod
    def default(cls) -> ResultCache:
        return cls(user_cache_dir(), analyzer_fingerprint())

    def _entry(self, digest: str) -> Path:
        return self.folder / digest[:2] / f"{digest}.json"

    def get(self, digest: str, path: str) -> FileResult | None:
        entry = self._entry(digest)
        try:
            data = load_json(entry, _ENTRY_SIZE_LIMIT)
            findings = [Finding.from_dict({**item, "path": path}) for item in data["findings"]]
            error = FileError.from_dict({**data["error"], "path": path}) if data["error"] else None
            candidates = [
                (Finding.from_dict({**item["finding"], "path": path}), PredictionCandidate.from_dict(item["candidate"]))
                for item in data["candidates"]
            ]
            exports = exports_from_json(data["exports"]) if data.get("exports") is not None else None
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
            report_damaged(entry, exc)  # damaged, or valid JSON of another shape: analysed again
            return None
        if not all(_well_formed(finding) for finding in [*findings, *(f for f, _ in candidates)]):
            report_damaged(entry, "a finding without a valid position")
            return None
        try:
            os.utime(entry)  # its last use, for the least-recently-used bound
        except OSError:
            pass
        return FileResult(path, findings, error, candidates, exports)

    def put(self, digest: str, result: FileResult) -> None:
        entry = self._entry(digest)
        payload = {
            "findings": [{k: v for k, v in f.to_dict().items() if k != "path"} for f in result.findings],
            "error": {k: v for k, v in result.error.to_dict().items() if k != "path"} if result.error else None,
            "candidates": [
                {"finding": {k: v for k, v in f.to_dict().items() if k != "path"}, "candidate": c.to_dict()}
                for f, c in result.candidates
            ],
            "exports": exports_to_json(result.exports) if result.exports is not None else None,
        }
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=entry.parent, delete=False, suffix=".tmp", encoding="utf-8") as tmp:
                tmp.write(dumps_json(payload))
            os.replace(tmp.name, entry)
        except OSError:
            pass  # a read-only or full cache folder must not fail the check


    def trim(self, force: bool = False) -> None:
        """Keep the whole cache (every analyzer version) under its size limit, least recently
        used entries first; older analyzer versions' entries are never used again, so they go first.
        Done at most once per TRIM_INTERVAL_S (unless forced), as it lists every entry."""
        marker = self.root / "last-trim"
        try:
            if not force and time.time() - marker.stat().st_mtime < TRIM_INTERVAL_S:
                return
        except OSError:
            pass  # never trimmed yet
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            return  # an unusable cache folder: nothing to trim
        entries: list[tuple[float, int, str]] = []
        total = 0
        stack = [str(self.root)]
        while stack:
            try:
                with os.scandir(stack.pop()) as listing:
                    for item in listing:
                        if item.is_dir(follow_symlinks=False):
                            stack.append(item.path)
                        elif item.is_file(follow_symlinks=False):
                            info = item.stat(follow_symlinks=False)
                            current = item.path.startswith(str(self.folder) + os.sep)
                            entries.append((info.st_mtime if current else 0.0, info.st_size, item.path))
                            total += info.st_size
            except OSError:
                continue
        if total <= self.size_limit:
            return
        target = self.size_limit * 0.8
        for _, size, path in sorted(entries):
            if total <= target:
                break
            try:
                os.unlink(path)
                total -= size
            except OSError:
                pass


def _well_formed(finding: Finding) -> bool:
    """A cached finding whose position fields are numbers (a hand-edited entry may say "3")."""
    numbers = (finding.line, finding.column, finding.end_line, finding.end_column)
    return all(type(n) is int and n >= 0 for n in numbers) and isinstance(finding.message, str)


def content_digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
