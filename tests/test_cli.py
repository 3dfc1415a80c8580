"""`gpuadvisor check` as a user runs it: output, exit codes, selection, stdin."""

from __future__ import annotations

import json

from gpuadvisor.analysis.rules import ALL_RULES
from tests.conftest import REPO

TRAIN = """
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
model = Net().to(device)
for x, y in loader:
    x, y = x.to(device), y.to(device)
    loss = criterion(model(x), y)
    total += loss.item()
"""
CLEAN = """
import numpy as np

def normalise(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / x.std()
"""


def test_findings_give_exit_1_and_readable_text(cli, write) -> None:
    path = write("train.py", TRAIN)
    result = cli("check", path)
    assert result.exit_code == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"{path}:7:14: GPU201 [warning]")
    assert "7 |     total += loss.item()" in result.stdout
    assert "^^^^^^^^^^^" in result.stdout
    assert "= fix:" in result.stdout
    assert result.stdout.rstrip().endswith("Found 1 finding (1 warning) in 1 file checked.")


def test_clean_file_gives_exit_0(cli, write) -> None:
    result = cli("check", write("clean.py", CLEAN))
    assert result.exit_code == 0
    assert "Found 0 findings in 1 file checked." in result.stdout


def test_examples_folder_fires_every_rule_and_the_clean_example_is_silent(cli) -> None:
    result = cli("check", REPO / "examples", "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    fired = {f["rule"] for f in report["findings"]}
    assert fired == {rule.code for rule in ALL_RULES if rule.enabled_by_default}
    assert not [f for f in report["findings"] if f["path"].endswith("clean_training.py")]
    assert report["errors"] == []


def test_json_output_follows_the_contract(cli, write) -> None:
    path = write("train.py", TRAIN)
    report = json.loads(cli("check", path, "--format", "json").stdout)
    assert report["version"] == 1
    assert report["summary"] == {"files": 1, "findings": 1, "errors": 0}
    (finding,) = report["findings"]
    assert set(finding) >= {
        "path", "line", "column", "end_line", "end_column", "rule", "category", "severity",
        "message", "suggestion", "prediction",
    }
    assert (finding["line"], finding["column"], finding["end_line"], finding["end_column"]) == (7, 13, 7, 24)
    assert (finding["rule"], finding["category"], finding["severity"]) == ("GPU201", "sync-in-loop", "warning")
    assert finding["prediction"] is None


def test_select_and_ignore_take_codes_prefixes_and_categories(cli, write) -> None:
    path = write("train.py", TRAIN)
    assert cli("check", path, "--select", "GPU101").exit_code == 0
    assert cli("check", path, "--select", "sync-in-loop").exit_code == 1
    assert cli("check", path, "--select", "GPU2").exit_code == 1
    assert cli("check", path, "--ignore", "sync-in-loop").exit_code == 0


def test_unknown_rule_code_is_a_usage_error(cli, write) -> None:
    result = cli("check", write("a.py", CLEAN), "--select", "GPU999")
    assert result.exit_code == 2
    assert "unknown rule code" in result.output


def test_fail_on_error_lets_warnings_pass(cli, write) -> None:
    path = write("train.py", TRAIN)
    result = cli("check", path, "--fail-on", "error")
    assert result.exit_code == 0
    assert "GPU201" in result.stdout


def test_missing_path_only_is_exit_2(cli, tmp_path) -> None:
    result = cli("check", tmp_path / "nope.py")
    assert result.exit_code == 2
    assert "no such file or directory" in result.stdout


def test_missing_path_next_to_a_real_file_is_reported_and_the_rest_checked(cli, write, tmp_path) -> None:
    result = cli("check", write("clean.py", CLEAN), tmp_path / "nope.py", "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert report["summary"]["files"] == 1
    assert report["errors"][0]["kind"] == "read"


def test_folder_without_python_files_is_exit_0(cli, tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    result = cli("check", tmp_path)
    assert result.exit_code == 0


def test_stdin_is_read_with_dash(cli) -> None:
    result = cli("check", "-", "--stdin-filename", "train.py", "--format", "json", input=TRAIN.lstrip("\n"))
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert [(f["path"], f["rule"]) for f in report["findings"]] == [("train.py", "GPU201")]


def test_exit_zero_reports_but_succeeds(cli, write) -> None:
    result = cli("check", write("train.py", TRAIN), "--exit-zero")
    assert result.exit_code == 0 and "GPU201" in result.stdout
    assert cli("check", write("b.py", TRAIN), "--select", "NOPE", "--exit-zero").exit_code == 2


def test_version_flag(cli) -> None:
    result = cli("--version")
    assert result.exit_code == 0 and result.stdout.startswith("gpuadvisor ")


def test_the_command_run_is_the_only_one_built_and_says_the_same(cli, write) -> None:
    """`main` starts a group holding only the named command (start-up time); its help, usage
    errors and output are the whole app's, and anything else runs the whole app."""
    from typer.testing import CliRunner

    from gpuadvisor.interfaces.cli import _app_for, app

    assert [c.callback.__name__ for c in _app_for(["check", "x.py"]).registered_commands] == ["check"]
    assert all(_app_for(args) is app for args in ([], ["--help"], ["--version"], ["chek"]))
    path = str(write("train.py", TRAIN))
    runner = CliRunner()
    for args in (["check", "--help"], ["check", "--bogus"], ["check", path, "--no-cache"], ["explain", "GPU201"]):
        one, whole = runner.invoke(_app_for(args), args), runner.invoke(app, args)
        assert (one.exit_code, one.output) == (whole.exit_code, whole.output), args


#: One fresh interpreter does three things in turn and says after each which of the named
#: modules it has loaded so far (one process instead of three: each start costs the imports).
START_UP_PROBE = """
import sys, runpy
tiny, small = sys.argv[1:3]
def check(path):
    sys.argv = ['gpuadvisor', 'check', '--no-cache', path]
    try:
        runpy.run_module('gpuadvisor', run_name='__main__')
    except SystemExit:
        pass
def loaded(step, names):
    print('loaded after', step, sorted(m for m in names if m in sys.modules))
import gpuadvisor
gpuadvisor.check_source('x = 1\\n')
loaded('check_source:', ['sklearn'])
check(tiny)
loaded('tiny numpy file:', ['numpy', 'sklearn', 'gpuadvisor.prediction.predictor'])
check(small)
loaded('small file:', ['gpuadvisor.prediction.result', 'gpuadvisor.analysis.facts.observations'])
"""


def test_start_up_loads_only_what_the_work_needs(tmp_path) -> None:
    """Importing gpuadvisor and checking code never imports scikit-learn; the analytic screen
    says no 3-element op can save a millisecond (no numpy, no model); the prediction record and
    the shapes reader are for files with a prediction or a `--shapes` file: start-up is the cost
    of a small check."""
    import subprocess
    import sys

    tiny = tmp_path / "tiny.py"
    tiny.write_text("import numpy as np\na = np.ones(3)\nb = a + a\nc = np.sin(b).sum()\n")
    (tmp_path / "train.py").write_text(TRAIN)
    result = subprocess.run([sys.executable, "-c", START_UP_PROBE, str(tiny), str(tmp_path / "train.py")], capture_output=True, text=True, timeout=60)
    steps = [line for line in result.stdout.splitlines() if line.startswith("loaded after ")]
    assert steps == [f"loaded after {step}: []" for step in ("check_source", "tiny numpy file", "small file")], result.stdout + result.stderr
