"""Precision of `gpuadvisor check` on third-party GPU code, judged by hand.

    python benchmarks/realworld/realworld.py CORPUS_DIR [--show-unjudged] [--stubs FILE] [--repo OWNER/NAME ...]
    python benchmarks/realworld/realworld.py CORPUS_DIR --pool [--repo OWNER/NAME ...]

CORPUS_DIR holds one checkout per repository of `repos.toml`, named `<owner>+<name>`, at the
pinned commit. Every finding is looked up in `labels.toml` by (repository, path, line, rule):
the script prints per-rule precision over the judged findings, the judged findings that no
longer appear (a true one lost is a regression to explain), and the findings nobody has
judged yet. `--stubs FILE` writes label entries for the unjudged ones, to fill in by reading
the code; `--show-unjudged` prints each with its source lines.

Precision counts true / (true + false); debatable verdicts are shown but left out of it.

Verdicts come from `labels.toml` and every `labels/*.toml` (one file per first-look repository).
`--pool` checks the repositories of `pool.toml` that were judged (`used`), or those named with
`--repo`, instead of `repos.toml`. Where `recall/<owner>+<name>.toml` lists the anti-patterns an
expert found before the tool was run, the script also prints recall: an instance is caught when a
finding not judged false sits on its line (or one of its `lines`). See FIRST_LOOK.md.
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
from gpuadvisor.analysis.findings.records import Finding

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


@dataclass(frozen=True)
class Instance:
    """One anti-pattern an expert listed before running the tool (recall/*.toml)."""

    repo: str
    path: str
    lines: tuple[int, ...]  # the instance's line first, then the other lines of the same cause
    kind: str
    why: str


@dataclass(frozen=True)
class Summary:
    """The first-look figures for a set of repositories."""

    findings: int
    verdicts: Counter[str]  # true / false / debatable / unjudged, over the findings reported
    per_rule: dict[str, Counter[str]]
    listed: int
    missed: list[Instance]

    @property
    def judged(self) -> int:
        return self.verdicts["true"] + self.verdicts["false"] + self.verdicts["debatable"]

    @property
    def precision(self) -> float | None:
        return ratio(self.verdicts["true"], self.verdicts["true"] + self.verdicts["false"])

    @property
    def caught(self) -> int:
        return self.listed - len(self.missed)

    @property
    def recall(self) -> float | None:
        return ratio(self.caught, self.listed)


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def load_repos(path: Path = HERE / "repos.toml") -> list[dict]:
    return tomllib.loads(path.read_text())["repo"]


def load_labels(*paths: Path) -> dict[Key, Label]:
    """Verdicts of every given file; a finding judged twice (in one file or across files) is an error."""
    labels: dict[Key, Label] = {}
    for path in paths:
        for entry in tomllib.loads(path.read_text()).get("label", []):
            key = Key(entry["repo"], entry["path"], int(entry["line"]), entry["rule"])
            if entry["verdict"] not in VERDICTS:
                raise SystemExit(f"{path.name}: {key}: verdict must be one of {VERDICTS}, not {entry['verdict']!r}")
            if key in labels:
                raise SystemExit(f"{path.name}: {key} is judged twice")
            labels[key] = Label(key, entry["verdict"], entry.get("reason", ""))
    return labels


def label_files(main: Path, folder: Path) -> list[Path]:
    """The main labels file and the per-repository ones of the first looks."""
    return [main, *sorted(folder.glob("*.toml"))] if folder.is_dir() else [main]


def load_recall(folder: Path) -> dict[str, list[Instance]]:
    """Expert-listed instances per repository, from recall/<owner>+<name>.toml."""
    recall: dict[str, list[Instance]] = {}
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        data = tomllib.loads(path.read_text())
        repo = data["repo"]
        instances = recall.setdefault(repo, [])
        for entry in data.get("instance", []):
            lines = (int(entry["line"]), *(int(n) for n in entry.get("lines", []) if int(n) != int(entry["line"])))
            instances.append(Instance(repo, entry["path"], lines, entry["kind"], entry.get("why", "")))
    return recall


def summarize(keys: list[Key], labels: dict[Key, Label], instances: list[Instance], last_lines: dict[Key, int] | None = None) -> Summary:
    """Verdict counts over the reported findings and recall over the listed instances.

    An instance is caught when a finding that nobody judged false sits on one of its lines:
    a finding judged false there names some other problem (or none). A finding sits on every
    line of its range (`last_lines`: a `.item()` that closes a three-line expression is on
    the line where the reader saw it, not only where the expression opens).
    """
    verdicts: Counter[str] = Counter()
    per_rule: dict[str, Counter[str]] = defaultdict(Counter)
    named: set[tuple[str, str, int]] = set()
    for key in keys:
        label = labels.get(key)
        verdict = label.verdict if label else "unjudged"
        verdicts[verdict] += 1
        per_rule[key.rule][verdict] += 1
        if verdict != "false":
            last = (last_lines or {}).get(key, key.line)
            named.update((key.repo, key.path, line) for line in range(key.line, max(last, key.line) + 1))
    missed = [i for i in instances if not any((i.repo, i.path, line) in named for line in i.lines)]
    return Summary(len(keys), verdicts, dict(per_rule), len(instances), missed)


def format_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def summary_report(title: str, summary: Summary) -> str:
    v = summary.verdicts
    lines = [
        f"{title}: {summary.findings} findings, {summary.judged} judged, "
        f"T/F/D {v['true']}/{v['false']}/{v['debatable']}, precision {format_ratio(summary.precision)}, "
        f"recall {summary.caught}/{summary.listed} ({format_ratio(summary.recall)})"
    ]
    for rule in sorted(summary.per_rule):
        row = summary.per_rule[rule]
        lines.append(
            f"    {rule}: {sum(row.values())} findings, T/F/D {row['true']}/{row['false']}/{row['debatable']}, "
            f"precision {format_ratio(ratio(row['true'], row['true'] + row['false']))}"
        )
    for instance in summary.missed:
        where = ",".join(str(n) for n in instance.lines)
        lines.append(f"    missed {instance.repo}:{instance.path}:{where} {instance.kind}: {instance.why}")
    return "\n".join(lines)


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
    parser.add_argument("--pool", action="store_true",
                        help="check the judged (used) repositories of pool.toml, or those named with --repo")
    parser.add_argument("--show-unjudged", action="store_true", help="print each unjudged finding with its source")
    parser.add_argument("--context", type=int, default=6, help="source lines shown before an unjudged finding")
    parser.add_argument("--stubs", type=Path, help="write label entries for the unjudged findings to this file")
    parser.add_argument("--repo", action="append", help="only this repository (owner/name; repeatable)")
    parser.add_argument("--show-false", action="store_true", help="list the findings still reported that were judged false")
    args = parser.parse_args(argv)

    labels = load_labels(*label_files(args.labels, HERE / "labels"))
    recall = load_recall(HERE / "recall")
    if args.pool:
        repos = [repo for repo in load_repos(HERE / "pool.toml") if (repo["name"] in args.repo if args.repo else "used" in repo)]
    else:
        repos = [repo for repo in load_repos() if not args.repo or repo["name"] in args.repo]
    checked = {repo["name"] for repo in repos}
    labels = {key: label for key, label in labels.items() if key.repo in checked}
    found, files, errors, seconds = run_corpus(args.corpus, repos)
    print(f"{files} files, {errors} errors, {len(found)} findings in {seconds:.1f} s\n")
    print(precision_table(found, labels))

    keys = [key for key, _ in found]
    last_lines = {key: finding.end_line for key, finding in found if finding.cell is None}
    print()
    for name in sorted(checked):
        print(summary_report(name, summarize([k for k in keys if k.repo == name], labels, recall.get(name, []), last_lines)))
    listed = [instance for name in sorted(checked) for instance in recall.get(name, [])]
    print(summary_report("all", summarize(keys, labels, listed, last_lines)))

    present = {key for key, _ in found}
    lost = [label for key, label in labels.items() if key not in present]
    print(f"\njudged findings no longer reported: {len(lost)} "
          f"({sum(1 for label in lost if label.verdict == 'true')} of them true)")
    for label in sorted(lost, key=lambda label: (label.verdict != "true", label.key.repo, label.key.path, label.key.line)):
        k = label.key
        print(f"  [{label.verdict}] {k.repo}:{k.path}:{k.line} {k.rule}  {label.reason}")

    if args.show_false:
        still_false = sorted({key for key in present if key in labels and labels[key].verdict == "false"}, key=lambda k: (k.repo, k.path, k.line, k.rule))
        print(f"\nfindings judged false still reported: {len(still_false)}")
        for k in still_false:
            print(f"  [false] {k.repo}:{k.path}:{k.line} {k.rule}  {labels[k].reason}")

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
