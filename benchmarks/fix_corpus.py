"""Fix every file of public repositories in memory and verify the result.

    python benchmarks/fix_corpus.py /work/corpus/vwxyzjn+cleanrl /work/corpus/pytorch+examples ...

Nothing on disk is changed: each `.py` file is read, fixed with `fix_text` (safe fixes, then
with `--unsafe-fixes`) and checked again. For each repository it prints the findings of rules
with a fix, how many each run fixed (by rule) in how many files, whether every fixed file
still compiles, how many fixed findings came back on the re-check (must be 0), and how many
findings of those rules are left: the ones the fixers declined, plus any the fixed code newly
shows (a hoisted copy can become another rule's business).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from gpuadvisor import check_source
from gpuadvisor.fixes import fix_text
from gpuadvisor.fixes.fixers import FIXERS

SELECT = ",".join(FIXERS)


def _keys(text: str, path: str) -> Counter[tuple[str, str]]:
    return Counter((f.rule, f.message) for f in check_source(text, path, select=SELECT))


def _python_files(repository: Path) -> list[Path]:
    return sorted(p for p in repository.rglob("*.py") if p.is_file() and not p.is_symlink() and ".git" not in p.parts)


def run(repository: Path, unsafe: bool) -> int:
    """Print one line of numbers for one repository; returns the number of failures."""
    before_total: Counter[str] = Counter()
    fixed_total: Counter[str] = Counter()
    files = broken = returned = left = revealed = 0
    for file in _python_files(repository):
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        path = str(file.relative_to(repository))
        before = _keys(text, path)
        before_total.update(rule for rule, _ in before.elements())
        try:
            outcome = fix_text(text, path, unsafe=unsafe)
        except ValueError:
            continue  # does not parse: the check reports it
        if not outcome.changed:
            left += sum(before.values())
            continue
        files += 1
        fixed = Counter((f.rule, f.message) for f in outcome.fixed)
        fixed_total.update(rule for rule, _ in fixed.elements())
        try:
            compile(outcome.text, path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            broken += 1
            print(f"  DOES NOT COMPILE {path}: {exc}")
            continue
        after = _keys(outcome.text, path)
        left += sum(after.values())
        expected_left = before - fixed  # what the fixers declined
        for key, count in after.items():
            extra = count - expected_left[key]
            if extra > 0 and key in fixed:
                returned += extra
                print(f"  FIXED FINDING BACK {path}: {key[0]} {key[1][:100]}")
            elif extra > 0:
                revealed += extra
    label = "--unsafe-fixes" if unsafe else "--fix (safe only)"
    print(
        f"{repository.name} {label}: findings of fixable rules {sum(before_total.values())} {dict(sorted(before_total.items()))}; "
        f"fixed {sum(fixed_total.values())} {dict(sorted(fixed_total.items()))} in {files} files; "
        f"all compile: {broken == 0}; fixed findings back: {returned}; findings left: {left} (of them newly shown: {revealed})"
    )
    return broken + returned


def main(repositories: list[str]) -> int:
    failures = 0
    for repository in map(Path, repositories):
        for unsafe in (False, True):
            failures += run(repository, unsafe)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
