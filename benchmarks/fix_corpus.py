"""Run `check --fix --unsafe-fixes` on copies of public repositories and verify the result.

    python benchmarks/fix_corpus.py /work/corpus/vwxyzjn+cleanrl /work/corpus/pytorch+examples ...

Each repository is copied to a temporary folder (the original is never touched); for each it
prints the findings of rules with a fix before and after, the files changed, whether every
changed file still compiles, and the findings of those rules left (fixes that declined).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from gpuadvisor.fixes.fixers import FIXERS

SELECT = ",".join(FIXERS)


def findings(folder: Path) -> list[dict[str, object]]:
    result = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "check", str(folder), "--select", SELECT, "--format", "json", "--no-cache"],
        capture_output=True, text=True,
    )
    return json.loads(result.stdout)["findings"]


def main(repositories: list[str]) -> int:
    failures = 0
    for repository in map(Path, repositories):
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / repository.name
            shutil.copytree(repository, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
            originals = {p: p.read_bytes() for p in copy.rglob("*.py") if p.is_file() and not p.is_symlink()}
            before = Counter(str(f["rule"]) for f in findings(copy))
            fixed = subprocess.run(
                [sys.executable, "-m", "gpuadvisor", "check", str(copy), "--fix", "--unsafe-fixes", "--select", SELECT, "--no-cache", "--format", "json"],
                capture_output=True, text=True,
            )
            changed = [p for p, data in originals.items() if p.read_bytes() != data]
            broken = []
            for path in changed:
                try:
                    compile(path.read_text(encoding="utf-8"), str(path), "exec")
                except SyntaxError as exc:
                    broken.append(f"{path.relative_to(copy)}: {exc}")
            after = Counter(str(f["rule"]) for f in findings(copy))
            left_in_changed = [f for f in findings(copy) if Path(str(f["path"])) in changed]
            print(f"{repository.name}: before {dict(before)}, after {dict(after)}; {fixed.stderr.strip()}")
            print(f"  changed files {len(changed)}, all compile: {not broken}, findings left in changed files: {len(left_in_changed)}")
            for line in broken:
                print(f"  DOES NOT COMPILE {line}")
            failures += len(broken) + len(left_in_changed)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
