"""The pre-scan skips LibCST on files no rule can fire on: the findings must be the same as when
every file is parsed (GPUADVISOR_PRESCAN=off), for every rule's cases and documents, the
examples, and projects whose facts cross files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuadvisor.analysis.checker import Checker
from gpuadvisor.analysis.prescan import imported_modules
from gpuadvisor.analysis.rules import ALL_RULES
from gpuadvisor.interfaces import runner

ROOT = Path(__file__).resolve().parent.parent
CASES = [(rule.code, index, case.source) for rule in ALL_RULES for index, case in enumerate(rule.INVALID)]
DOCUMENT_EXAMPLES = [
    (path.stem, index, block)
    for path in sorted((ROOT / "rules").glob("GPU*.md"))
    for index, block in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL))
]


def _checker(prescan: bool) -> Checker:
    checker = Checker(ALL_RULES, None)
    checker.prescan = prescan
    return checker


def _findings(checker: Checker, text: str, path: str = "case.py") -> list[tuple[int, int, str, str]]:
    result = checker.check_text(text, path)
    assert result.error is None, result.error
    return sorted((f.line, f.column, f.rule, f.message) for f in [*result.findings, *(f for f, _ in result.candidates)])


@pytest.mark.parametrize(("code", "index", "source"), CASES, ids=[f"{code}-{index}" for code, index, _ in CASES])
def test_no_invalid_case_is_skipped(code: str, index: int, source: str) -> None:
    assert not _checker(True).may_skip(source, "case.py", None)


@pytest.mark.parametrize(("code", "index", "source"), DOCUMENT_EXAMPLES, ids=[f"{code}-{index}" for code, index, _ in DOCUMENT_EXAMPLES])
def test_each_rule_document_example_gives_the_same_findings_with_and_without_the_prescan(code: str, index: int, source: str) -> None:
    parsed = _findings(_checker(False), source)
    assert _findings(_checker(True), source) == parsed
    if parsed:
        assert not _checker(True).may_skip(source, "case.py", None)


def check_json(cli, *paths: Path | str) -> dict:
    return json.loads(cli("check", *map(str, paths), "--format", "json", "--no-cache", "--select", "ALL", "--exit-zero").stdout)


def _comparable(report: dict) -> tuple[list, list]:
    return (
        sorted((f["path"], f["line"], f["column"], f["rule"], f["message"]) for f in report["findings"]),
        sorted((e["path"], e["kind"]) for e in report["errors"]),
    )


def test_examples_give_the_same_findings_with_and_without_the_prescan(cli, monkeypatch) -> None:
    with_prescan = check_json(cli, ROOT / "examples")
    monkeypatch.setenv("GPUADVISOR_PRESCAN", "off")
    assert _comparable(check_json(cli, ROOT / "examples")) == _comparable(with_prescan)
    assert with_prescan["findings"]


def test_a_file_without_any_rule_s_words_is_only_syntax_checked_and_its_suppressions_are_unused(cli, write, tmp_path, monkeypatch) -> None:
    plain = write("plain.py", "def total(rows):\n    return sum(r[1] for r in rows)  # gpuadvisor: ignore[GPU201]\n")
    assert _checker(True).may_skip(plain.read_text(), str(plain), None)
    report = check_json(cli, tmp_path)
    assert [(f["line"], f["rule"]) for f in report["findings"]] == [(2, "GPU901")]
    monkeypatch.setenv("GPUADVISOR_PRESCAN", "off")
    assert _comparable(check_json(cli, tmp_path)) == _comparable(report)


@pytest.mark.parametrize(
    "source",
    [
        # Threads only, after an array import: the threading rule's words are enough.
        "import numpy as np\nimport threading\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\n"
        "threads = [threading.Thread(target=work, args=(10**6,)) for _ in range(4)]\nfor t in threads:\n    t.start()\n",
        # A thread variable set after the import, and nothing else.
        "import numpy as np\nimport os\nos.environ['OMP_NUM_THREADS'] = '4'\n",
    ],
    ids=["threading", "environ"],
)
def test_cpu_only_findings_after_an_array_import_are_kept(source: str) -> None:
    found = _findings(_checker(True), source)
    assert found and found == _findings(_checker(False), source)


def test_a_sync_in_a_helper_file_without_array_imports_still_reports_its_caller(cli, write, tmp_path) -> None:
    helper = write("meters.py", "def record(history, loss):\n    history.append(loss.item())\n")
    write(
        "train.py",
        "import torch\nfrom meters import record\n\ndef main(loader):\n    model = Net().cuda()\n    history = []\n"
        "    for x in loader:\n        loss = model(x.cuda()).mean()\n        record(history, loss)\n",
    )
    assert _checker(True).may_skip(helper.read_text(), str(helper), None)  # skipped alone, walked for its caller
    report = check_json(cli, tmp_path)
    [(path, line, rule, message)] = [(Path(f["path"]).name, f["line"], f["rule"], f["message"]) for f in report["findings"]]
    assert (path, line, rule) == ("meters.py", 2, "GPU201")
    assert "train.py's `main()` calls `record()` on every iteration of a loop" in message


def test_a_loop_in_a_file_without_array_imports_calling_a_gpu_helper_is_seen(cli, write, tmp_path, monkeypatch) -> None:
    write(
        "stats.py",
        "import torch\n\nweights = torch.zeros(10, device='cuda')\n\ndef report():\n    print(weights.sum().item())\n",
    )
    runner_file = write("run.py", "from stats import report\n\ndef main():\n    for step in range(1000):\n        report()\n")
    assert _checker(True).may_skip(runner_file.read_text(), str(runner_file), None)
    with_prescan = check_json(cli, tmp_path)
    monkeypatch.setenv("GPUADVISOR_PRESCAN", "off")
    assert _comparable(with_prescan) == _comparable(check_json(cli, tmp_path))
    assert [(Path(f["path"]).name, f["rule"]) for f in with_prescan["findings"]] == [("stats.py", "GPU201")]


def test_a_function_handing_back_its_argument_in_a_file_without_array_imports_keeps_the_device(cli, write, tmp_path, monkeypatch) -> None:
    write("wrap.py", "def prepare(model):\n    model.eval()\n    return model\n")
    write(
        "infer.py",
        "import torch\nfrom wrap import prepare\n\ndef main(loader):\n    model = prepare(Net().cuda())\n"
        "    for x in loader:\n        print(model(x.cuda()).sum().item())\n",
    )
    with_prescan = check_json(cli, tmp_path)
    monkeypatch.setenv("GPUADVISOR_PRESCAN", "off")
    assert _comparable(with_prescan) == _comparable(check_json(cli, tmp_path))
    assert [(Path(f["path"]).name, f["rule"]) for f in with_prescan["findings"]] == [("infer.py", "GPU201")]


def test_a_group_of_plain_files_is_never_parsed(write, tmp_path, monkeypatch) -> None:
    write("train.py", "import torch\n\nfor x in loader:\n    print(x.cuda().sum().item())\n")
    write("util/__init__.py", "")
    write("util/text.py", "from .paths import join\n\ndef title(s):\n    return join(s.title())\n")
    write("util/paths.py", "def join(*parts):\n    return '/'.join(parts)\n")
    parsed: list[str] = []
    original = runner.Checker.check_bytes

    def spy(self, data, path, context=None, parse=False):
        result = original(self, data, path, context, parse)
        if result.exports is not None:
            parsed.append(Path(path).name)
        return result

    monkeypatch.setattr(runner.Checker, "check_bytes", spy)
    paths = sorted(str(p) for p in tmp_path.rglob("*.py"))
    results = runner.check_files(paths, None, jobs=1)
    assert sorted(parsed) == ["train.py"]
    assert [f.rule for r in results for f in r.findings] == ["GPU201"]


def test_imported_modules_over_approximate_every_import_form() -> None:
    text = (
        "from . import a, b as c\nimport x.y as z, w\nfrom ..pkg.mod import (\n    f,\n    g)\n"
        "from m import *\nif 1: import q; import r\nfrom \\\n  s import t\nfrom.u import v\nfrom . w2 import x2\n"
    )
    found = imported_modules(text)
    expected = {".a", ".b", "x.y", "w", "..pkg.mod", "..pkg.mod.f", "..pkg.mod.g", "m", "q", "r", "s", "s.t", ".u.v", ".w2.x2"}
    assert expected <= found


def test_the_prescan_stays_linear_on_hostile_text() -> None:
    """Comments full of `#` after a subscript and endless `from` lines once made the regexes
    backtrack exponentially (a sympy file took minutes)."""
    import time

    hostile = "x = y[0]  #" + "# " * 5000 + "\n" + "from" + " " * 50_000 + "x\n" + "from a import (" * 2000
    start = time.process_time()
    assert _checker(True).may_skip(hostile, "hostile.py", None)
    imported_modules(hostile)
    assert time.process_time() - start < 2.0
