"""Precision of `gpuadvisor check` on third-party GPU code, judged by hand.

    python benchmarks/realworld/realworld.py CORPUS_DIR [--show-unjudged] [--stubs FILE] [--repo OWNER/NAME ...]

CORPUS_DIR holds one checkout per repository of `repos.toml`, named `<owner>+<name>`, at the
pinned commit. Every finding is looked up in `labels.toml` by (repository, path, line, rule):
the script prints per-rule precision over the judged findings, the judged findings that no
longer appear (a true one lost is a regression to explain), and the findings nobody has
judged yet. `--stubs FILE` writes label entries for the unjudged ones, to fill in by reading
the code; `--show-unjudged` prints each with its source lines.

Precision counts true / (true + false); debatable verdicts are shown but left out of it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from gpuadvisor import check_paths
from gpuadvisor.analysis.findings import Finding

HERE = Path(__file__).resolve().parent
VERDICTS = ("true", "false", "debatable")


@dataclass(frozen=True)
class Key:
    repo: str
    path: str
    line: int
    rule: str


@dataclass(frozen=True)
class Label:
    key: Key
    verdict: str
    reason: str


def load_repos() -> list[dict]:
    return tomllib.loads((HERE / "repos.toml").read_text())["repo"]


def load_labels(path: Path) -> dict[Key, Label]:
    labels: dict[Key, Label] = {}
    for entry in tomllib.loads(path.read_text()).get("label", []):
        key = Key(entry["repo"], entry["path"], int(entry["line"]), entry["rule"])
        if entry["verdict"] not in VERDICTS:
            raise SystemExit(f"labels.toml: {key}: verdict must be one of {VERDICTS}, not {entry['verdict']!r}")
        if key in labels:
            raise SystemExit(f"labels.toml: {key} is judged twice")
        labels[key] = Label(key, entry["verdict"], entry.get("reason", ""))
    return labels


def run_corpus(corpus: Path, repos: list[dict]) -> tuple[list[tuple[Key, Finding]], int, int, float]:
    """Check every repository's folders; findings keyed by repository-relative path."""
    found: list[tuple[Key, Finding]] = []
    files = errors = 0
    started = time.perf_counter()
    for repo in repos:
        root = corpus / repo["name"].replace("/", "+")
        if not root.is_dir():
            print(f"missing checkout: {root} (skipped)", file=sys.stderr)
            continue
        report = check_paths([root / p for p in repo["paths"]], use_config=False, cache=False)
        files += report.files
        errors += len(report.errors)
        for finding in report.findings:
            relative = Path(finding.path).resolve().relative_to(root.resolve()).as_posix()
            if finding.cell is not None:  # notebooks: lines count within a code cell
                relative += f"#cell{finding.cell}"
            found.append((Key(repo["name"], relative, finding.line, finding.rule), finding))
    return found, files, errors, time.perf_counter() - started


def precision_table(found: list[tuple[Key, Finding]], labels: dict[Key, Label]) -> str:
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for key, _ in found:
        label = labels.get(key)
        rows[key.rule]["findings"] += 1
        rows[key.rule][label.verdict if label else "unjudged"] += 1
    total: Counter[str] = Counter()
    lines = ["| rule | findings | judged | true | false | debatable | unjudged | precision |", "|---|---|---|---|---|---|---|---|"]
    for rule in sorted(rows) + ["all"]:
        row = total if rule == "all" else rows[rule]
        if rule != "all":
            total.update(row)
        judged = row["true"] + row["false"] + row["debatable"]
        decided = row["true"] + row["false"]
        precision = f"{row['true'] / decided:.2f}" if decided else "-"
        lines.append(
            f"| {rule} | {row['findings']} | {judged} | {row['true']} | {row['false']} | {row['debatable']} "
            f"| {row['unjudged']} | {precision} |"
        )
    return "\n".join(lines)


def source_lines(corpus: Path, key: Key, context: int) -> str:
    path = corpus / key.repo.replace("/", "+") / key.path
    if "#cell" in key.path:
        return ""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    start = max(0, key.line - 1 - context)
    return "\n".join(f"    {n + 1:5d}{'>' if n + 1 == key.line else ' '} {text[n]}" for n in range(start, min(len(text), key.line + 2)))


def write_stubs(path: Path, unjudged: list[tuple[Key, Finding]]) -> None:
    """One entry per key: findings of one rule on one line share their verdict."""
    written: set[Key] = set()
    with path.open("w") as out:
        for key, finding in unjudged:
            if key in written:
                continue
            written.add(key)
            message = finding.message.replace("\\", "\\\\").replace('"', '\\"')
            out.write(
                f'[[label]]\nrepo = "{key.repo}"\npath = "{key.path}"\nline = {key.line}\nrule = "{key.rule}"\n'
                f'verdict = "?"\nreason = ""\n# {message}\n\n'
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="folder with one <owner>+<name> checkout per repository")
    parser.add_argument("--labels", type=Path, default=HERE / "labels.toml")
    parser.add_argument("--show-unjudged", action="store_true", help="print each unjudged finding with its source")
    parser.add_argument("--context", type=int, default=6, help="source lines shown before an unjudged finding")
    parser.add_argument("--stubs", type=Path, help="write label entries for the unjudged findings to this file")
    parser.add_argument("--repo", action="append", help="only this repository (owner/name; repeatable)")
    args = parser.parse_args(argv)

    labels = load_labels(args.labels)
    repos = [repo for repo in load_repos() if not args.repo or repo["name"] in args.repo]
    labels = {key: label for key, label in labels.items() if not args.repo or key.repo in args.repo}
    found, files, errors, seconds = run_corpus(args.corpus, repos)
    print(f"{files} files, {errors} errors, {len(found)} findings in {seconds:.1f} s\n")
    print(precision_table(found, labels))

    present = {key for key, _ in found}
    lost = [label for key, label in labels.items() if key not in present]
    print(f"\njudged findings no longer reported: {len(lost)} "
          f"({sum(1 for label in lost if label.verdict == 'true')} of them true)")
    for label in sorted(lost, key=lambda label: (label.verdict != "true", label.key.repo, label.key.path, label.key.line)):
        k = label.key
        print(f"  [{label.verdict}] {k.repo}:{k.path}:{k.line} {k.rule}  {label.reason}")

    unjudged = [(key, finding) for key, finding in found if key not in labels]
    print(f"\nunjudged findings: {len(unjudged)}")
    for key, finding in unjudged:
        print(f"  {key.repo}:{key.path}:{key.line} {key.rule} {finding.message}")
        if args.show_unjudged:
            print(source_lines(args.corpus, key, args.context))
    if args.stubs is not None:
        write_stubs(args.stubs, unjudged)
        print(f"\nwrote {len(unjudged)} stubs to {args.stubs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
