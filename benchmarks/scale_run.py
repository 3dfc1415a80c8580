"""`check` of one folder of 10,000 real and hostile files under a 4 GiB address-space limit.

Issue 26's scale target: a run over a large, mixed folder never exceeds its memory or its
per-file budget, never prints a traceback and never reports an `internal` error. The folder
(a temporary one) holds:

- real files: every `.py` and `.ipynb` of the checkouts under CORPUS (one folder per
  repository, as `check` would meet them) and this project's own src/, tests/, examples/ and
  benchmarks/, sampled down to `--real-share` of the files when there are more;
- generated files, the rest: fuzz programs in their five forms (benchmarks/fuzz_run.py), the
  generated shapes the hostile-input tests refuse, deep nesting, long chains, huge literals
  (some past the 4 MiB file limit), binary junk, bad encodings, odd line endings and
  notebooks, hostile ones included. Heavy kinds are written a fixed few times, so the run
  stays minutes, not hours.

The run is one `gpuadvisor check FOLDER --format json` in a subprocess started by
`bash -c 'ulimit -v KIB; exec ...'`, so the limit holds for it and every worker, with a fresh
result cache (users run with one). It prints the files, the wall time, the peak RSS (of the
largest process, from the children's rusage, and of the whole process tree, sampled), the exit
code, the findings and the error entries by kind, and any traceback; then PASS or FAIL.

PASS needs: exit code 0 or 1, no traceback or allocation failure on stderr, every file accounted
for, no `internal`, `crash` or `timeout` entry, no real file refused for memory, and the run
inside `--run-limit`. On the 2-core development machine, busy with other work, the default run
takes about 15 minutes (`--jobs 2`, as `check` uses every core by default).

Usage: python benchmarks/scale_run.py [--files 10000] [--jobs 2] [--memory-gib 4]
       [--file-budget 20] [--corpus ../corpus] [--keep DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "benchmarks")]

from fuzz_run import variants  # noqa: E402  (the fuzz run's five forms of a program)
from test_bad_input import GENERATED_SHAPES  # noqa: E402
from test_hostile_input import MULTILINE_CHAINS_CPYTHON_REJECTS  # noqa: E402
from test_notebooks import HOSTILE_NOTEBOOKS, TRAINING, notebook  # noqa: E402

#: Error kinds that are a defect whatever the file: the tool's own failure, a worker that
#: died, a file past its budget.
FAILING_KINDS = ("internal", "crash", "timeout")
TORCH = "import torch\n"


def real_files(corpus: Path) -> Iterator[tuple[str, Path]]:
    """(folder name in the run, source file) for every checkout under `corpus` and this project."""
    roots = [(f"real/{repo.name}", repo) for repo in sorted(corpus.iterdir()) if repo.is_dir()] if corpus.is_dir() else []
    roots += [(f"real/gpuadvisor/{part}", ROOT / part) for part in ("src", "tests", "examples", "benchmarks")]
    for name, root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".ipynb") and path.is_file() and not path.is_symlink() and ".git" not in path.parts:
                yield f"{name}/{path.relative_to(root)}", path


def _nested(kind: str, depth: int) -> str:
    if kind == "brackets":
        return "x = " + "[" * depth + "1" + "]" * depth + "\n"
    if kind == "calls":
        return "x = " + "torch.relu(" * depth + "t" + ")" * depth + "\n"
    if kind == "blocks":
        return "".join("    " * i + f"if c{i}:\n" for i in range(depth)) + "    " * depth + "x = torch.ones(3).cuda()\n"
    return "".join("    " * i + f"def f{i}():\n" for i in range(depth)) + "    " * depth + "return torch.zeros(1)\n"


#: One line of each large kind, by index, and the text before and after the lines.
_LARGE_LINES: dict[str, tuple[str, Callable[[int], str], str]] = {
    "table": ("import numpy as np\nDATA = np.array([\n", lambda i: f"    [{i}, {i * 0.5!r}, {-i}],\n", "])\n"),
    "string": (TORCH + "S = '", lambda i: "abcdefgh", "'\n"),  # one string literal
    "dict": (TORCH + "D = {\n", lambda i: f"    'k{i}': ({i}, 'v{i}'),\n", "}\n"),
    "statements": (TORCH, lambda i: f"v{i} = torch.tensor({i})\n", ""),
}


def _large(kind: str, megabytes: float) -> bytes:
    """A file of `kind` of about `megabytes` MiB (3.9: just under the 4 MiB limit, 4.1: past it)."""
    head, line, tail = _LARGE_LINES[kind]
    parts, size, i = [head], len(head) + len(tail), 0
    while size < megabytes * 2**20 - 64:
        parts.append(line(i))
        size += len(parts[-1])
        i += 1
    return "".join([*parts, tail]).encode()


#: Cheap generated kinds, cycled to fill the folder: name -> (seed -> file bytes, suffix).
def _cheap_kinds() -> dict[str, Callable[[random.Random, int], tuple[bytes, str]]]:
    def fuzz(rng: random.Random, seed: int) -> tuple[bytes, str]:
        return variants(seed)[seed % 5][1].encode(), ".py"

    def junk(rng: random.Random, seed: int) -> tuple[bytes, str]:
        size = rng.choice([1, 100, 10_000, 200_000])
        data = rng.randbytes(size)
        if seed % 3 == 0:  # junk without NUL bytes: decodes or not, never a binary refusal
            data = data.replace(b"\0", b"x")
        return data, ".py"

    def encoding(rng: random.Random, seed: int) -> tuple[bytes, str]:
        body = "import torch\nfor i in range(9):\n    x = torch.zeros(3).cuda()  # caf\u00e9 \u00b5s\n"
        forms = [
            body.encode("latin-1"),  # no declaration: invalid UTF-8
            b"# -*- coding: no-such-codec -*-\n" + body.encode(),
            b"\xef\xbb\xbf# coding: latin-1\n" + body.encode(),  # BOM contradicting the cookie
            body.encode("utf-16"),
            b"# coding: utf-16\n" + body.encode("utf-16-le"),
            body.encode().replace(b"\n", b"\r\n"),
            body.encode().replace(b"\n", b"\r"),
            body.encode() + b"\xed\xa0\x80\n",  # an encoded lone surrogate
            b"# coding: latin-1\n" + body.encode("latin-1"),
            body.replace("\n", "\x0c\n").encode(),
            "x = '\u2028'\n\u2029".encode() + body.encode(),
            b"\0" + body.encode(),
        ]
        return forms[seed % len(forms)], ".py"

    def shape(rng: random.Random, seed: int) -> tuple[bytes, str]:
        shapes = {**GENERATED_SHAPES, **MULTILINE_CHAINS_CPYTHON_REJECTS}
        name = sorted(shapes)[seed % len(shapes)]
        return ((TORCH if seed % 2 else "") + shapes[name] + "\n").encode(), ".py"

    def nesting(rng: random.Random, seed: int) -> tuple[bytes, str]:
        kind = ["brackets", "calls", "blocks", "defs"][seed % 4]
        return (TORCH + _nested(kind, rng.choice([10, 50, 99, 100, 150, 200, 500, 1000]))).encode(), ".py"

    def chain(rng: random.Random, seed: int) -> tuple[bytes, str]:
        n = rng.choice([100, 1_000, 5_000, 20_000])
        forms = [
            "x = t" + ".cuda()" * n,
            "x = " + " + ".join(["torch.ones(3)"] * n),
            "x = a" + "[0]" * n,
            "ok = " + " < ".join(["a"] * n),
            "x = " + " @ ".join(["w"] * n),
            "x = [" + ", ".join(["torch.zeros(2)"] * n) + "]",
        ]
        return (TORCH + forms[seed % len(forms)] + "\n").encode(), ".py"

    def notebooks(rng: random.Random, seed: int) -> tuple[bytes, str]:
        hostile = list(HOSTILE_NOTEBOOKS.values()) + [
            b"",
            b"{",
            b'{"cells": [{"cell_type": "code", "source": "x = ("}]}',
            json.dumps({"cells": [{"cell_type": "code", "source": "\x00import torch"}]}).encode(),
            json.dumps({"cells": [{"cell_type": "code", "source": ["import torch\n"] * 50_000}]}).encode(),
            notebook(*[("code", "import torch\nx = torch.ones(3).cuda()\n")] * 2000),
        ]
        forms = [TRAINING, *hostile]
        return forms[seed % len(forms)], ".ipynb"

    return {"fuzz": fuzz, "junk": junk, "encoding": encoding, "shape": shape, "nesting": nesting, "chain": chain, "notebook": notebooks}


def _heavy_files() -> Iterator[tuple[str, bytes]]:
    """Large files, a fixed few: literals around and past the 4 MiB limit, long lines."""
    for kind in _LARGE_LINES:
        for megabytes in (1, 3.9, 4.1):
            yield f"{kind}_{megabytes:g}mib.py", _large(kind, megabytes)
    yield "one_long_line.py", (TORCH + "x = [" + ", ".join(str(i) for i in range(300_000)) + "]\n").encode()
    yield "many_comments.py", (TORCH + "# gpuadvisor: ignore[GPU101]\n" * 100_000).encode()
    yield "deep_json.ipynb", b'{"cells": ' + b"[" * 1_000_000 + b"]" * 1_000_000 + b"}"


def build(folder: Path, total: int, real_share: float, corpus: Path, seed: int) -> collections.Counter[str]:
    """Write the files; returns how many of each origin."""
    rng = random.Random(seed)
    made: collections.Counter[str] = collections.Counter()
    real = list(real_files(corpus))
    wanted_real = min(len(real), int(total * real_share))
    for name, source in sorted(rng.sample(real, wanted_real)):
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        made["real"] += 1
    generated = folder / "generated"
    generated.mkdir()
    for name, data in _heavy_files():
        (generated / name).write_bytes(data)
        made["heavy"] += 1
    kinds = _cheap_kinds()
    names = sorted(kinds)
    index = 0
    while sum(made.values()) < total:
        kind = names[index % len(names)]
        data, suffix = kinds[kind](random.Random(seed * 100_003 + index), index // len(names))
        sub = generated / kind / f"{index // 500:03d}"  # folders of a few hundred, as in a real tree
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"{kind}_{index}{suffix}").write_bytes(data)
        made[kind] += 1
        index += 1
    return made


class TreeMemory:
    """Peak summed RSS of a process and its descendants, sampled from /proc (Linux)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak_bytes, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree_rss(self) -> int:
        children: dict[int, list[int]] = collections.defaultdict(list)
        rss: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children[int(fields[1])].append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        total, todo = 0, [self.pid]
        while todo:
            pid = todo.pop()
            total += rss.get(pid, 0)
            todo += children.get(pid, [])
        return total

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.peak_bytes = max(self.peak_bytes, self._tree_rss())

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_bytes


def run_check(folder: Path, jobs: int, memory_kib: int, file_budget: float, run_limit: float) -> dict[str, object]:
    out = folder.parent / "report.json"
    command = [
        sys.executable, "-m", "gpuadvisor", "check", str(folder), "--format", "json", "--no-config",
        "--jobs", str(jobs), "--file-budget", str(file_budget), "--output-file", str(out),
    ]
    env = {**os.environ, "XDG_CACHE_HOME": str(folder.parent / "cache")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    process = subprocess.Popen(
        ["bash", "-c", f"ulimit -v {memory_kib} && exec {shlex.join(command)}"], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
    )
    memory = TreeMemory(process.pid)
    try:
        stdout, stderr = process.communicate(timeout=run_limit)
        hung = False
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        hung = True
    wall = time.perf_counter() - started
    tree_peak = memory.stop()
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest descendant
    report = json.loads(out.read_text(encoding="utf-8")) if out.exists() and out.stat().st_size else None
    return {
        "wall": wall, "exit": process.returncode, "hung": hung, "stdout": stdout, "stderr": stderr,
        "largest_kib": largest if largest > before else None, "tree_bytes": tree_peak, "report": report,
    }


def error_kind(error: dict[str, str]) -> str:
    """The entry's kind, with refusals for memory named apart from other `too-complex` ones."""
    if error["kind"] == "too-complex" and "memory" in error["message"]:
        return "memory"
    return error["kind"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--real-share", type=float, default=0.6, help="at most this share of real files")
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "corpus", help="folder of repository checkouts")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--memory-gib", type=float, default=4.0, help="ulimit -v for the whole run")
    parser.add_argument("--file-budget", type=float, default=20.0, help="check --file-budget (CPU seconds)")
    parser.add_argument("--run-limit", type=float, default=3600.0, help="seconds before the run counts as hung")
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--keep", type=Path, help="build the folder here and keep it")
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="gpuadvisor-scale-")) if args.keep is None else args.keep
    folder = base / "files"
    try:
        folder.mkdir(parents=True)
        started = time.perf_counter()
        made = build(folder, args.files, args.real_share, args.corpus, args.seed)
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        print(f"built {sum(made.values()):,} files ({size / 2**20:,.0f} MiB) in {time.perf_counter() - started:.0f} s: "
              + ", ".join(f"{k} {v:,}" for k, v in sorted(made.items())))
        result = run_check(folder, args.jobs, int(args.memory_gib * 1024 * 1024), args.file_budget, args.run_limit)
        verdict = summarise(result, made, args)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print("PASS" if not verdict else "FAIL: " + "; ".join(verdict))
    sys.exit(1 if verdict else 0)


def summarise(result: dict[str, object], made: collections.Counter[str], args: argparse.Namespace) -> list[str]:
    """Print the numbers; returns the reasons the run fails (none: it passes)."""
    report = result["report"]
    assert report is None or isinstance(report, dict)
    stderr = str(result["stderr"])
    errors = report["errors"] if report else []
    kinds = collections.Counter(error_kind(e) for e in errors)
    checked = report["summary"]["files"] if report else 0
    largest = result["largest_kib"]
    print(f"files: {sum(made.values()):,} written, {checked:,} checked, {len(errors):,} error entries; "
          f"jobs {args.jobs}, ulimit -v {args.memory_gib:g} GiB, file budget {args.file_budget:g} s")
    print(f"wall: {result['wall']:.0f} s{'  (HUNG: killed at --run-limit)' if result['hung'] else ''}")
    print(f"peak RSS: largest process {largest / 1024:,.0f} MiB, whole process tree {int(result['tree_bytes']) / 2**20:,.0f} MiB (sampled)"
          if isinstance(largest, int) else "peak RSS: unknown")
    print(f"exit code: {result['exit']}")
    print(f"findings: {len(report['findings']):,}" if report else "findings: no report written")
    print("errors by kind: " + (", ".join(f"{k} {v:,}" for k, v in sorted(kinds.items())) or "none"))
    real_memory = [e for e in errors if error_kind(e) == "memory" and "/real/" in e["path"]]
    failing = [e for e in errors if e["kind"] in FAILING_KINDS] + real_memory
    for entry in failing[:20]:
        print(f"  {entry['kind']}: {entry['path']}: {entry['message'][:300]}")
    traceback = "Traceback (most recent call last)" in stderr
    aborted = "memory allocation of" in stderr  # Rust's last words when LibCST's parser runs out
    if stderr.strip():
        print("stderr:\n" + stderr[-6000:])
    reasons = []
    if result["hung"]:
        reasons.append(f"the run took more than {args.run_limit:g} s")
    if result["exit"] not in (0, 1):
        reasons.append(f"exit code {result['exit']}")
    if traceback:
        reasons.append("a traceback on stderr")
    if aborted:
        reasons.append("LibCST's parser ran out of memory (stderr)")
    if report is None:
        reasons.append("no JSON report")
    elif checked + sum(1 for e in errors if e["kind"] == "read") < sum(made.values()):
        reasons.append(f"only {checked:,} of {sum(made.values()):,} files accounted for")
    reasons += [f"{n} {kind} error entries" for kind, n in sorted(kinds.items()) if kind in FAILING_KINDS]
    if real_memory:
        reasons.append(f"{len(real_memory)} real files refused for memory")
    return reasons


if __name__ == "__main__":
    main()
