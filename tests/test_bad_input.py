"""Bad input is reported, never raised, and never stops the other files."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from gpuadvisor import check_paths
from gpuadvisor.analysis import checker
from gpuadvisor.analysis.checker import Checker, FileTimeout
from gpuadvisor.analysis.rules import ALL_RULES
from gpuadvisor.analysis.facts.project import ProjectContext
from gpuadvisor.analysis.findings.records import FileResult

GOOD_WITH_FINDING = "import torch\nx = [torch.zeros(8).cuda() for _ in range(9)]\n"


def check_json(cli, *paths) -> tuple[int, dict]:
    result = cli("check", *paths, "--format", "json")
    return result.exit_code, json.loads(result.stdout)


def test_syntax_error_is_an_error_entry_and_other_files_are_checked(cli, write) -> None:
    broken = write("broken.py", "import torch\ndef f(:\n    pass\n")
    good = write("good.py", GOOD_WITH_FINDING)
    code, report = check_json(cli, broken, good)
    assert code == 1
    assert [(e["path"], e["kind"], e["line"]) for e in report["errors"]] == [(str(broken), "syntax", 2)]
    assert "invalid syntax" in report["errors"][0]["message"]
    assert [f["rule"] for f in report["findings"]] == ["GPU102"]
    assert report["summary"] == {"files": 2, "findings": 1, "errors": 1}


def test_text_output_names_the_broken_file(cli, write) -> None:
    broken = write("broken.py", "import torch\nx = (\n")
    result = cli("check", broken)
    assert result.exit_code == 1
    assert f"{broken}" in result.stdout and "error (syntax)" in result.stdout
    assert "could not be analysed" in result.stdout


def test_binary_file_named_py(cli, write) -> None:
    code, report = check_json(cli, write("blob.py", bytes(range(256)) * 8))
    assert code == 1 and report["errors"][0]["kind"] == "decode"
    assert "NUL" in report["errors"][0]["message"]


def test_invalid_utf8_is_a_decode_error(cli, write) -> None:
    code, report = check_json(cli, write("latin.py", "x = 'caf\xe9'\nimport torch\n".encode("latin-1")))
    assert report["errors"][0]["kind"] == "decode"


def test_coding_cookie_bom_and_crlf_are_honoured(cli, write) -> None:
    latin = write("latin.py", "# -*- coding: latin-1 -*-\nimport torch\nname = 'caf\xe9'\nx = [torch.ones(3).cuda() for _ in range(9)]\n".encode("latin-1"))
    bom = write("bom.py", b"\xef\xbb\xbfimport torch\r\nx = [torch.ones(3).cuda() for _ in range(9)]\r\n")
    code, report = check_json(cli, latin, bom)
    assert report["errors"] == []
    assert sorted((f["path"].rsplit("/", 1)[-1], f["line"]) for f in report["findings"]) == [("bom.py", 2), ("latin.py", 4)]


def test_empty_file_is_fine(cli, write) -> None:
    code, report = check_json(cli, write("empty.py", ""))
    assert code == 0 and report["errors"] == [] and report["summary"]["files"] == 1


@pytest.mark.slow  # checks a 100k-line file end to end (~15 s)
def test_very_long_file(cli, write) -> None:
    body = "".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(20_000))
    code, report = check_json(cli, write("long.py", "import torch\n" + body + "y = [torch.zeros(4).cuda() for _ in range(9)]\n"))
    assert report["errors"] == []
    assert [f["line"] for f in report["findings"]] == [40_002]


def test_pathological_nesting_does_not_crash_the_run_and_syntax_warnings_are_not_printed(write, tmp_path) -> None:
    """LibCST's native parser kills the process on ~1500 nested brackets; we must survive it.
    In the same real process: the checked code's SyntaxWarnings are not printed."""
    deep = write("deep.py", "import torch\nx = " + "(" * 1600 + "1" + ")" * 1600 + "\n")
    good = write("good.py", GOOD_WITH_FINDING)
    warns = write("warns.py", 'import torch\nx = "\\d"\nassert (x, 1)\nif x is 1:\n    pass\n')
    proc = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "check", str(deep), str(good), str(warns), "--format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "SyntaxWarning" not in proc.stderr
    report = json.loads(proc.stdout)
    assert [e["path"] for e in report["errors"]] == [str(deep)]
    assert [f["rule"] for f in report["findings"]] == ["GPU102"]


def test_moderate_nesting_is_still_analysed(cli, write) -> None:
    code, report = check_json(cli, write("nested.py", "import torch\nx = " + "(" * 60 + "[torch.ones(2).cuda() for _ in range(9)]" + ")" * 60 + "\n"))
    assert report["errors"] == []
    assert [f["rule"] for f in report["findings"]] == ["GPU102"]


def test_unknown_coding_cookie_is_a_decode_entry_and_other_files_are_checked(cli, write) -> None:
    odd = write("odd.py", "# coding: undefined\nimport torch\n")
    good = write("good.py", GOOD_WITH_FINDING)
    code, report = check_json(cli, odd, good)
    assert code == 1
    assert [(e["path"], e["kind"]) for e in report["errors"]] == [(str(odd), "decode")]
    assert [f["rule"] for f in report["findings"]] == ["GPU102"]


def test_a_fifo_named_py_is_skipped_not_read(cli, write, tmp_path) -> None:
    import os

    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    write("good.py", GOOD_WITH_FINDING)
    code, report = check_json(cli, str(tmp_path))
    assert code == 1
    assert [(e["path"], e["kind"]) for e in report["errors"]] == [(str(fifo), "read")]
    assert "not a regular file" in report["errors"][0]["message"]
    assert [f["rule"] for f in report["findings"]] == ["GPU102"]
    code, report = check_json(cli, str(fifo))
    assert code == 2 and "not a regular file" in report["errors"][0]["message"]


def test_a_huge_generated_file_is_refused_with_a_reason(cli, write, monkeypatch) -> None:
    from gpuadvisor.interfaces import runner

    monkeypatch.setattr(runner, "MAX_SOURCE_BYTES", 1000)
    big = write("table.py", "import torch\n" + "x = 1\n" * 500)
    good = write("good.py", GOOD_WITH_FINDING)
    code, report = check_json(cli, big, good)
    assert [(e["path"], e["kind"]) for e in report["errors"]] == [(str(big), "read")]
    assert "too large to analyse" in report["errors"][0]["message"]
    assert [f["rule"] for f in report["findings"]] == ["GPU102"]


def test_constant_folding_stops_at_sizes_no_array_has(cli, write) -> None:
    lines = ["import numpy as np", "x = 2**64"] + ["x = x * x"] * 26
    lines += ["a = np.zeros(x)", "b = np.arange(1e400)", "n = 1" + "0" * 400, "c = np.ones((n, n)) @ np.ones((n, n))"]
    code, report = check_json(cli, write("fold.py", "\n".join(lines) + "\n"))
    assert code == 0 and report["errors"] == [] and report["findings"] == []


def test_a_finding_on_every_line_is_positioned_exactly(cli, write) -> None:
    """Findings on more than a quarter of the statements take the one-render path of
    `findings/positions.py`; 400 lines are enough for it (3000 cost 10 s and tested nothing more)."""
    body = "".join(f"x{i} = [torch.zeros(8).cuda() for _ in range(9)]\n" for i in range(400))
    code, report = check_json(cli, write("generated.py", "import torch\n" + body))
    positions = [(f["line"], f["column"]) for f in report["findings"]]
    assert positions == [(i + 2, len(f"x{i} = [")) for i in range(400)]


def test_an_ascii_only_terminal_gets_escapes_not_a_traceback() -> None:
    import os
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "kalman_cupy.py"
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    result = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "check", "--no-cache", str(example)], capture_output=True, env=env
    )
    assert result.returncode == 1, result.stderr.decode()
    assert b"Traceback" not in result.stderr
    assert b"\\xb5s" in result.stdout  # "µs", escaped


GENERATED_SHAPES = {
    "operator chain": "x = " + " + ".join(["1"] * 8000),
    "and chain": "x = " + " and ".join(["a"] * 9000),
    "attribute chain": "x = a" + ".b" * 3000,
    "call chain": "x = f" + "(1)" * 3000,
    "power chain": "x = 2" + "**2" * 3000,
    "ternary chain": "x = " + " if c else ".join(["a"] * 3000),
    "unary chain": "x = " + "-" * 9000 + "1",
    "string concatenation": "x = " + " ".join(['"ab"'] * 20000),
    "elif ladder": "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, 16000)),
}


@pytest.mark.parametrize("shape", sorted(GENERATED_SHAPES))
def test_generated_shapes_are_refused_quickly_in_process(shape: str, tmp_path) -> None:
    """Decided from CPython's parser before LibCST (which slows down, then crashes) sees them;
    checked in this very process, where a crash would take every result with it."""
    generated = tmp_path / "generated.py"
    generated.write_text("import torch\n" + GENERATED_SHAPES[shape] + "\n")
    good = tmp_path / "good.py"
    good.write_text(GOOD_WITH_FINDING)
    report = check_paths([generated, good], use_config=False, cache=False, jobs=1)
    assert [(e.path, e.kind) for e in report.errors] == [(str(generated), "too-complex")]
    assert [f.rule for f in report.findings] == ["GPU102"]


def test_long_but_reasonable_chains_are_analysed(cli, write) -> None:
    code = "import torch\n" + "ok = " + " and ".join(["a"] * 400) + "\n" + "s = a" + ".b" * 500 + "\n" + GOOD_WITH_FINDING.split("\n", 1)[1]
    status, report = check_json(cli, write("long.py", code))
    assert report["errors"] == []
    assert [f["rule"] for f in report["findings"]] == ["GPU102"]


def test_form_feeds_and_unicode_line_separators_do_not_shift_excerpts(cli, write) -> None:
    path = write("paged.py", 'import torch\n# section\x0c two\ns = "a\u2028b"  # gpuadvisor: ignore\nx = [torch.zeros(8).cuda() for _ in range(9)]\n'.encode())
    output = cli("check", path).stdout
    assert f"{path}:4:6: GPU102" in output
    assert "4 | x = [torch.zeros(8).cuda() for _ in range(9)]" in output


class FakeCpuTimer:
    """Stands in for the checker's CPU timer (`ITIMER_PROF`, see `checker._time_budget`), so that
    which file runs over its budget does not depend on how fast the machine running the tests
    is: analysing a file costs a fixed CPU time per line, and the timer fires when that passes
    the budget. tests/test_hostile_input.py tests the real timer."""

    SECONDS_PER_LINE = 0.001

    def __init__(self) -> None:
        self.budget: float | None = None

    @contextmanager
    def running(self, seconds: float | None) -> Iterator[None]:
        self.budget = seconds
        try:
            yield
        finally:
            self.budget = None

    def spend(self, text: str) -> None:
        if self.budget is not None and self.SECONDS_PER_LINE * text.count("\n") > self.budget:
            raise FileTimeout()


@pytest.fixture
def cpu_timer(monkeypatch: pytest.MonkeyPatch) -> FakeCpuTimer:
    timer = FakeCpuTimer()
    analyse = Checker._check_text

    def timed(self: Checker, text: str, path: str, context: ProjectContext | None, parse: bool = False) -> FileResult:
        timer.spend(text)
        return analyse(self, text, path, context, parse)

    monkeypatch.setattr(checker, "_time_budget", timer.running)
    monkeypatch.setattr(Checker, "_check_text", timed)
    return timer


def test_a_file_over_its_time_budget_is_a_timeout_entry_and_not_cached(tmp_path, cpu_timer: FakeCpuTimer) -> None:
    slow = tmp_path / "generated_model.py"
    # 100 lines cost 0.1 s of the fake timer's CPU time: twice the budget, far below the default one
    slow.write_text("import torch\n" + "".join(f"x{i} = [torch.zeros(8).cuda() for _ in range(9)] + [torch.ones(8).cuda() for _ in range(9)]\n" for i in range(100)))
    good = tmp_path / "good.py"
    good.write_text(GOOD_WITH_FINDING)
    report = check_paths([slow, good], use_config=False, jobs=1, file_budget=0.05)
    assert [(e.path, e.kind) for e in report.errors] == [(str(slow), "timeout")]
    assert "--file-budget" in report.errors[0].message
    assert [f.rule for f in report.findings] == ["GPU102"]
    again = check_paths([slow], use_config=False, jobs=1)  # default budget, same cache: analysed now
    assert again.errors == [] and len(again.findings) == 200


def test_a_form_feed_in_nested_indentation_is_valid_code(cli, write) -> None:
    path = write("paged.py", b"import torch\ndef f():\n    if True:\n\x0c        x = [torch.zeros(3).cuda() for _ in range(9)]\n    return 1\n")
    code, report = check_json(cli, path)
    assert report["errors"] == [] and [(f["rule"], f["line"]) for f in report["findings"]] == [("GPU102", 4)]


def test_a_string_literal_cpython_refuses_is_not_an_internal_error(cli, write) -> None:
    path = write("escape.py", 'import torch\nx = torch.zeros(3).to("cuda\\N{NO SUCH NAME}")\n')
    code, report = check_json(cli, path)
    assert all(e["kind"] != "internal" for e in report["errors"])


def test_large_data_literals_are_left_out_and_positions_stay_exact(cli, write, monkeypatch) -> None:
    """A table of constants costs LibCST ~20x CPython's time and ~700 bytes per byte, and holds
    no GPU pattern: it is replaced before parsing, keeping every line and the columns before it."""
    from gpuadvisor.analysis.reading import source

    monkeypatch.setattr(source, "ELIDE_FROM_SIZE", 1000)
    monkeypatch.setattr(source, "ELIDE_LITERAL_SIZE", 500)
    rows = "".join(f"    ({i}, {-i * 0.5}, 'é{i}', None),\r\n" for i in range(60))
    computed = "".join(f"    x{i} + 1,\r\n" for i in range(60))
    text = (
        "import torch\r\nTABLE = {'rows': [\r\n" + rows + "]}\r\nMIXED = [\r\n" + computed + "]\r\n"
        "def step(x):\r\n    for i in range(100):\r\n        y = x.cuda()\r\n"
    )
    parsed = source.parse_source(text)
    assert parsed.module.code.count(source.ELIDED_NAME) == 1  # the table, not the list of expressions
    assert len(source.code_lines(parsed.module.code)) == len(source.code_lines(text))
    code, report = check_json(cli, write("tables.py", text.encode("utf-8")))
    assert [(f["rule"], f["line"], f["column"]) for f in report["findings"]] == [("GPU101", 128, 12)]


def _rules_crash(*args: object) -> None:
    raise RuntimeError("a bug in a rule")


def test_a_crashing_rule_is_our_internal_error_on_valid_code(monkeypatch) -> None:
    checker = Checker(ALL_RULES)
    monkeypatch.setattr(checker, "_run_rules", _rules_crash)
    error = checker.check_text(GOOD_WITH_FINDING, "valid.py").error
    assert error is not None and error.kind == "internal", error


@pytest.mark.parametrize(
    ("exhausted", "message"),
    [
        (RecursionError, "code nested or chained too deeply to analyse"),
        (MemoryError, "analysing this file needed more memory than a file may use"),
    ],
)
def test_an_analysis_that_runs_out_of_stack_or_memory_is_a_too_complex_entry(monkeypatch, exhausted: type[BaseException], message: str) -> None:
    """Valid code that parses but whose analysis goes too deep or grows too large: the file gets
    a `too-complex` entry saying which, not an internal error, and the run goes on."""

    def runs_out(*args: object) -> None:
        raise exhausted()

    checker = Checker(ALL_RULES)
    monkeypatch.setattr(checker, "_run_rules", runs_out)
    error = checker.check_text(GOOD_WITH_FINDING, "deep.py").error
    assert error is not None and (error.kind, error.message) == ("too-complex", message), error


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="a `type` statement is valid Python from 3.12 on")
def test_a_crashing_rule_on_code_cpython_refuses_but_libcst_parses_gives_cpython_s_verdict(monkeypatch) -> None:
    """Code written for a newer Python: LibCST parses it, CPython refuses it. A rule failing on
    it is no bug of ours to report: the entry is CPython's syntax error."""
    checker = Checker(ALL_RULES)
    monkeypatch.setattr(checker, "_run_rules", _rules_crash)
    error = checker.check_text("import torch\ntype Vector = list[float]\n", "newer.py").error
    assert error is not None and (error.kind, error.line) == ("syntax", 2), error
