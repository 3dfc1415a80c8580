"""How many seeded bugs the test suite catches (a nightly-style check, not part of the test run).

    python benchmarks/mutation_score.py                    # 25 mutants in analysis/ and prediction/
    python benchmarks/mutation_score.py --count 60 --seed 7 --modules 'analysis/rules/*.py'
    python benchmarks/mutation_score.py --equivalent benchmarks/mutation_equivalent.txt
    python benchmarks/mutation_score.py --modules 'prediction/**/*.py' \
        --deselect tests/test_shipped_model.py::test_the_shipped_model_is_in_step_with_the_training_data_and_the_model_code \
        --with-slow

Each mutant is one small change a hurried edit could make (a comparison flipped, `and` for `or`,
`+` for `-`, a number off by one, a `not` dropped, a return value lost), at a place drawn with
a fixed seed. The whole default test suite runs against a copy of the tree holding that one
change; the mutant is killed when any test fails. Survivors are printed with their change, to
be read: either a test is missing, or the change cannot alter behaviour (list it in the
`--equivalent` file, one per line, with a reason after `#`). List it by its anchor,
`path::Class.function:kind:n` (the n-th site of that kind in that function, in source order),
which survivors are printed with and which stays valid while code elsewhere in the file moves;
the older ids `path:line:kind` and `path:line:column:kind` are still read, but drift with every
edit above them.

mutmut 3 was tried first: its trampolines need the package imported from its `mutants/` copy,
while this project's tests also run `gpuadvisor` in subprocesses and read repository files
(rules/, examples/, training_data/), so it found no test covering any mutant.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "gpuadvisor"

FLIPPED_COMPARISONS: dict[type, type] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
FLIPPED_OPERATORS: dict[type, type] = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}


@dataclass(frozen=True)
class Mutant:
    path: Path
    line: int
    kind: str
    index: int  # which candidate of the file's walk order: mutants are re-found by it
    column: int = 0
    #: `path::Class.function:kind:n`, the n-th site of that kind in that function in source order:
    #: unlike the line, it stays put when code above the function moves.
    anchor: str = ""

    @property
    def ident(self) -> str:
        return f"{self.path.relative_to(PACKAGE)}:{self.line}:{self.kind}"

    @property
    def exact(self) -> str:
        return f"{self.path.relative_to(PACKAGE)}:{self.line}:{self.column}:{self.kind}"


def _candidates(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every node a mutation applies to, in a stable walk order, with the mutation's kind."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # docstrings
        if isinstance(node, ast.Compare) and type(node.ops[0]) in FLIPPED_COMPARISONS:
            yield node, "compare"
        elif isinstance(node, ast.BoolOp):
            yield node, "boolop"
        elif isinstance(node, ast.BinOp) and type(node.op) in FLIPPED_OPERATORS:
            yield node, "arith"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            yield node, "unary"
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float) and not isinstance(node.value, bool):
            yield node, "number"
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            yield node, "bool"
        elif isinstance(node, ast.Return) and node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield node, "return"


class _Apply(ast.NodeTransformer):
    """Applies the mutation to the `target`-th candidate of the walk."""

    def __init__(self, target: ast.AST, kind: str) -> None:
        self.target, self.kind = target, kind

    def visit(self, node: ast.AST) -> ast.AST:
        if node is not self.target:
            return super().visit(node)
        if self.kind == "compare":
            assert isinstance(node, ast.Compare)
            node.ops[0] = FLIPPED_COMPARISONS[type(node.ops[0])]()
        elif self.kind == "boolop":
            assert isinstance(node, ast.BoolOp)
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif self.kind == "arith":
            assert isinstance(node, ast.BinOp)
            node.op = FLIPPED_OPERATORS[type(node.op)]()
        elif self.kind == "unary":
            assert isinstance(node, ast.UnaryOp)
            return node.operand
        elif self.kind == "number":
            assert isinstance(node, ast.Constant)
            node.value = node.value + 1 if isinstance(node.value, int) else node.value * 2
        elif self.kind == "bool":
            assert isinstance(node, ast.Constant)
            node.value = not node.value
        elif self.kind == "return":
            assert isinstance(node, ast.Return)
            node.value = ast.Constant(None)
        return node


def _scopes(tree: ast.AST) -> dict[int, str]:
    """The dotted name of the function or class each node sits in ("<module>" outside any)."""
    found: dict[int, str] = {}
    pending: list[tuple[ast.AST, str]] = [(tree, "<module>")]
    while pending:
        node, scope = pending.pop()
        for child in ast.iter_child_nodes(node):
            found[id(child)] = scope
            named = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            pending.append((child, child.name if named and scope == "<module>" else f"{scope}.{child.name}" if named else scope))
    return found


def all_mutants(patterns: list[str]) -> list[Mutant]:
    files = sorted({path for pattern in patterns for path in PACKAGE.glob(pattern) if path.suffix == ".py"})
    mutants: list[Mutant] = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes = _scopes(tree)
        sites = list(_candidates(tree))
        ordinals: dict[int, int] = {}
        groups: dict[tuple[str, str], list[ast.AST]] = {}
        for node, kind in sites:
            groups.setdefault((scopes.get(id(node), "<module>"), kind), []).append(node)
        for members in groups.values():
            members.sort(key=lambda node: (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)))
            ordinals.update((id(node), n) for n, node in enumerate(members, 1))
        relative = path.relative_to(PACKAGE)
        for index, (node, kind) in enumerate(sites):
            anchor = f"{relative}::{scopes.get(id(node), '<module>')}:{kind}:{ordinals[id(node)]}"
            mutants.append(Mutant(path, getattr(node, "lineno", 0), kind, index, getattr(node, "col_offset", 0), anchor))
    return mutants


def mutated_source(mutant: Mutant, source: str) -> str:
    """`source` (the module as copied when the run started) with the mutant applied: the live
    file may have changed since, and its candidates would no longer line up with the copy's."""
    tree = ast.parse(source)
    target, kind = list(_candidates(tree))[mutant.index]
    mutated = _Apply(target, kind).visit(tree)
    return ast.unparse(ast.fix_missing_locations(mutated))


def run_suite(tree: Path, timeout_s: float, deselected: list[str], with_slow: bool = False) -> str:
    """Run the default suite on the mutated copy, with a cache of its own: a model fitted or a
    result cached for an earlier mutant must not hide this one."""
    with tempfile.TemporaryDirectory(prefix="gpuadvisor-mutant-cache-") as cache:
        env = {**os.environ, "PYTHONPATH": str(tree / "src"), "XDG_CACHE_HOME": cache}
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "tests"]
        command += [f"--deselect={test}" for test in deselected]
        if with_slow:
            command += ["-m", "slow or not slow"]  # CI's second run too: the refit and install tests
        try:
            done = subprocess.run(command, cwd=tree, env=env, capture_output=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return "timeout"
    return "survived" if done.returncode == 0 else "killed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="*", default=["analysis/**/*.py", "prediction/**/*.py"])
    parser.add_argument("--count", type=int, default=25)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant's test run")
    parser.add_argument("--equivalent", type=Path, help="file of mutant ids known not to change behaviour")
    parser.add_argument("--deselect", action="append", default=[], metavar="TEST",
                        help="a test id left out of every run (repeatable): the shipped-model staleness test "
                             "fails for any change to the model's code, which would count every mutant there killed")
    parser.add_argument("--with-slow", action="store_true", help="also run the tests marked slow, as CI does")
    args = parser.parse_args()
    equivalent: set[str] = set()
    if args.equivalent:
        equivalent = {line.split("#")[0].strip() for line in args.equivalent.read_text().splitlines() if line.split("#")[0].strip()}
    candidates = all_mutants(args.modules)
    chosen = random.Random(args.seed).sample(candidates, min(args.count, len(candidates)))
    print(f"{len(candidates)} mutation sites in {', '.join(args.modules)}; {len(chosen)} drawn with seed {args.seed}")
    outcomes: dict[str, list[Mutant]] = {"killed": [], "survived": [], "timeout": [], "equivalent": []}
    with tempfile.TemporaryDirectory(prefix="gpuadvisor-mutants-") as scratch:
        tree = Path(scratch)
        for name in subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)  # the tracked files: what a clean checkout has
            shutil.copy2(ROOT / name, tree / name)
        if run_suite(tree, args.timeout, args.deselect, args.with_slow) != "survived":
            print("the suite fails on the unmutated tree: fix that first (every mutant would count as killed)")
            return 1
        for number, mutant in enumerate(chosen, 1):
            target = tree / mutant.path.relative_to(ROOT)
            original = target.read_text(encoding="utf-8")
            started = time.perf_counter()
            target.write_text(mutated_source(mutant, original), encoding="utf-8")
            try:
                outcome = "equivalent" if {mutant.ident, mutant.exact, mutant.anchor} & equivalent else run_suite(tree, args.timeout, args.deselect, args.with_slow)
            finally:
                target.write_text(original, encoding="utf-8")
            outcomes[outcome].append(mutant)
            print(f"[{number:>3}/{len(chosen)}] {outcome:<10} {mutant.ident}  ({time.perf_counter() - started:.0f} s)", flush=True)
    killed, survived = len(outcomes["killed"]) + len(outcomes["timeout"]), len(outcomes["survived"])
    print(f"\nkilled {killed} (timeouts {len(outcomes['timeout'])}), survived {survived}, equivalent {len(outcomes['equivalent'])}")
    if killed + survived:
        print(f"mutation score (non-equivalent): {killed / (killed + survived):.0%}")
    for mutant in outcomes["survived"]:
        print(f"survivor: {mutant.exact}  (anchor {mutant.anchor})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
