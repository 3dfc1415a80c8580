"""Where the time goes on large generated files: per phase, next to CPython's own parser.

Generated Python (data tables, decorated registries, bundled code) reaches megabytes; the
file-size limit (4 MiB) keeps the largest out, and this benchmark shows what files just
under it cost. Each kind of file is written at ~1 MiB and ~4 MiB and checked in a fresh
process, timing each phase of one `check`:

- `ast.parse` (CPython's parser, the yardstick),
- LibCST's `parse_module` (native tokenizer and parser, then Python node objects),
- the shared walk (`gather_facts`),
- the rules, and positions for what they report,
- the whole `Checker.check_text`, and the process's peak memory.

Files that never name a GPU or array library are only syntax-checked (CPython's parser), so
the literal and registry files cost about what `ast.parse` does; a data table in a file that
imports NumPy is parsed, with its literal left out (source.py, ELIDE_LITERAL_SIZE); the
columns before "whole check" time LibCST and the walk on the file as written.

Usage: python benchmarks/large_files.py [--sizes 1,4]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

KINDS: dict[str, Callable[[int], str]] = {
    "list literal of tuples": lambda i: f"    ({i}, {i * 0.5!r}, 'name_{i}', None),\n",
    "dict literal of lists": lambda i: f"    'key_{i}': [{i}, {i + 1}, {i + 2}, 'v{i}'],\n",
    "NumPy table (literal)": lambda i: f"    [{i}, {i * 0.25!r}, {-i}, {i % 7}],\n",
    "decorated functions": lambda i: f"@register('op_{i}', priority={i % 7})\ndef op_{i}(x, y=None):\n    return x + {i}\n\n",
    "simple statements": lambda i: f"value_{i} = value_{max(i - 1, 0)} * 2 + {i}\n",
    "NumPy/torch functions": lambda i: (
        f"def step_{i}(model, batch, device):\n"
        f"    x = torch.randn(64, 128, device=device)\n"
        f"    for j in range(10):\n"
        f"        y = np.sin(batch[j]) @ batch[j].T\n"
        f"        x = x + model(x).sum()\n"
        f"    return x.cpu().numpy()\n\n"
    ),
}
HEADERS = {
    "list literal of tuples": ("DATA = [\n", "]\n"),
    "dict literal of lists": ("TABLE = {\n", "}\n"),
    "NumPy table (literal)": ("import numpy as np\n\nDATA = [\n", "]\nARR = np.asarray(DATA, dtype=np.float32)\n"),
    "decorated functions": ("from registry import register\n\n", ""),
    "simple statements": ("value_0 = 1\n", ""),
    "NumPy/torch functions": ("import numpy as np\nimport torch\n\n", ""),
}

PHASES = r"""
import ast, gc, json, resource, sys, time
gc.set_threshold(50_000, 20, 100)  # as the CLI runs: a LibCST tree is many long-lived objects
import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from gpuadvisor.analysis.checker import Checker
from gpuadvisor.analysis.rules import ALL_RULES
from gpuadvisor.analysis.facts.walker import gather_facts

text = open(sys.argv[1], encoding="utf-8").read()
times = {}
start = time.perf_counter(); ast.parse(text); times["ast.parse"] = time.perf_counter() - start
start = time.perf_counter(); module = cst.parse_module(text); times["libcst parse"] = time.perf_counter() - start
start = time.perf_counter(); facts = gather_facts(module, sys.argv[1]); times["shared walk"] = time.perf_counter() - start
start = time.perf_counter()
reports = [report for rule in ALL_RULES for report in rule().check(facts)]
times["rules"] = time.perf_counter() - start
start = time.perf_counter()
if reports:
    MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
times["positions (all nodes)"] = time.perf_counter() - start
del module, facts, reports
start = time.perf_counter()
result = Checker(ALL_RULES, time_budget=None).check_text(text, sys.argv[1])
times["whole check"] = time.perf_counter() - start
times["findings"] = len(result.findings) + len(result.candidates)
times["error"] = result.error.kind if result.error else None
times["peak MiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(times))
"""


def write_file(folder: Path, kind: str, megabytes: float) -> Path:
    head, tail = HEADERS[kind]
    parts, size, i = [head], len(head), 0
    target = int(megabytes * 1024 * 1024) - 4096
    while size < target:
        piece = KINDS[kind](i)
        parts.append(piece)
        size += len(piece)
        i += 1
    parts.append(tail)
    path = folder / f"{kind.replace(' ', '_').replace('/', '_')}_{megabytes:g}mb.py"
    path.write_text("".join(parts), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1,4", help="MiB per file, comma-separated")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    columns = ["ast.parse", "libcst parse", "shared walk", "rules", "positions (all nodes)", "whole check"]
    print(f"| file | MiB | lines | {' | '.join(columns)} | check / ast | peak MiB | findings |")
    print("|" + "---|" * (len(columns) + 6))
    with tempfile.TemporaryDirectory() as folder:
        for kind in KINDS:
            for megabytes in sizes:
                path = write_file(Path(folder), kind, megabytes)
                lines = path.read_text(encoding="utf-8").count("\n")
                proc = subprocess.run([sys.executable, "-c", PHASES, str(path)], capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"| {kind} | {megabytes:g} | {lines:,} | failed: {proc.stderr.strip().splitlines()[-1]} |")
                    continue
                times = json.loads(proc.stdout)
                cells = " | ".join(f"{times[c]:.2f} s" for c in columns)
                ratio = times["whole check"] / times["ast.parse"]
                print(f"| {kind} | {megabytes:g} | {lines:,} | {cells} | {ratio:.0f}x | {times['peak MiB']:.0f} | {times['findings'] if times['error'] is None else times['error']} |")


if __name__ == "__main__":
    main()
