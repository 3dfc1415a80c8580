"""The check command's flags behave like ruff's: selection layering, statistics, output file,
quiet/silent, concise, colour, did-you-mean, explain with a prefix."""

from __future__ import annotations

import json

import pytest

from gpuadvisor.interfaces.terminal import wants_color

# GPU201 (a sync in the loop), GPU101 (an unchanging copy in the loop) and GPU102 (zeros then .cuda()).
MIXED = """
import torch
device = "cuda"
X_val = torch.randn(100, 10)
buffer = [torch.zeros(1024).cuda() for _ in range(9)]
for x, y in loader:
    X_gpu = X_val.to(device)
    loss = criterion(model(x.to(device)), y.to(device))
    total += loss.item()
"""


def rules_found(cli, *args: str) -> list[str]:
    result = cli("check", *args, "--format", "json", "--no-cache")
    assert result.exit_code in (0, 1), result.output
    return sorted(f["rule"] for f in json.loads(result.stdout)["findings"])


@pytest.fixture
def project(write):
    write("pyproject.toml", '[tool.gpuadvisor]\nignore = ["GPU201"]\nextend-ignore = ["GPU102"]\n')
    return write("train.py", MIXED)


def test_repeated_select_and_ignore_merge(cli, write) -> None:
    path = write("train.py", MIXED)
    assert rules_found(cli, path, "--select", "GPU101", "--select", "GPU201") == ["GPU101", "GPU201"]
    assert rules_found(cli, path, "--ignore", "GPU101", "--ignore", "sync-in-loop") == ["GPU102"]


def test_command_line_selection_beats_the_configuration(cli, project) -> None:
    assert rules_found(cli, project) == ["GPU101"]  # the config ignores GPU201 and GPU102
    assert rules_found(cli, project, "--select", "GPU201") == ["GPU201"]  # a CLI select starts over
    assert rules_found(cli, project, "--extend-select", "GPU102") == ["GPU101", "GPU102"]
    assert rules_found(cli, project, "--extend-ignore", "GPU1") == []
    assert rules_found(cli, project, "--no-config") == ["GPU101", "GPU102", "GPU201"]


def test_config_extend_keys_are_checked_like_select(cli, write) -> None:
    write("pyproject.toml", '[tool.gpuadvisor]\nextend-select = ["GPU0"]\n')
    result = cli("check", write("a.py", "x = 1\n"))
    assert result.exit_code == 2 and "extend-select" in result.output and "GPU0" in result.output


def test_statistics_count_each_rule(cli, write) -> None:
    path = write("train.py", MIXED)
    text = cli("check", path, "--statistics")
    assert text.exit_code == 1
    assert [line.split()[:2] for line in text.stdout.splitlines()] == [["1", "GPU101"], ["1", "GPU102"], ["1", "GPU201"]]
    rows = json.loads(cli("check", path, "--statistics", "--format", "json").stdout)
    assert {row["code"]: row["count"] for row in rows} == {"GPU101": 1, "GPU102": 1, "GPU201": 1}


def test_output_file_quiet_silent_and_concise(cli, write, tmp_path) -> None:
    path = write("train.py", MIXED)
    target = tmp_path / "report.json"
    written = cli("check", path, "--format", "json", "-o", target)
    assert written.exit_code == 1 and written.stdout == ""
    assert json.loads(target.read_text())["summary"]["findings"] == 3
    quiet = cli("check", path, "--quiet")
    assert "GPU201" in quiet.stdout and "Found" not in quiet.stdout
    silent = cli("check", path, "--silent")
    assert silent.exit_code == 1 and silent.stdout == ""
    concise = cli("check", path, "--output-format", "concise").stdout.splitlines()
    assert len(concise) == 4 and concise[0].startswith(f"{path}:") and concise[-1].startswith("Found 3 findings")
    assert all("= fix" not in line and " | " not in line for line in concise)
    unwritable = cli("check", path, "-o", tmp_path / "no" / "such" / "dir.txt")
    assert unwritable.exit_code == 2 and "cannot write" in unwritable.output


def test_colour_follows_the_flag_and_the_environment(cli, write, monkeypatch) -> None:
    path = write("train.py", MIXED)
    assert "\x1b[" in cli("check", path, "--color", "always").stdout
    assert "\x1b[" not in cli("check", path).stdout  # not a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in cli("check", path).stdout
    assert "\x1b[" not in cli("check", path, "--color", "never").stdout
    assert "\x1b[" not in cli("check", path, "--format", "json").stdout


def test_wants_color_honours_no_color_and_force_color(monkeypatch) -> None:
    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert wants_color("auto", Terminal())  # type: ignore[arg-type]
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color("auto", Terminal())  # type: ignore[arg-type]
    assert wants_color("always", Terminal())  # type: ignore[arg-type]


def test_did_you_mean_for_hardware_and_rules(cli, write) -> None:
    path = write("a.py", "x = 1\n")
    gpu = cli("check", path, "--gpu", "h100")
    assert gpu.exit_code == 2 and "did you mean h100-sxm, h100-pcie" in gpu.output
    assert "did you mean rtx4090" in cli("predict", "add", "--shape", "10", "--gpu", "4090").output
    rule = cli("check", path, "--select", "GPU1O1")
    assert rule.exit_code == 2 and "did you mean GPU101" in rule.output
    assert "did you mean transfer-in-loop" in cli("check", path, "--ignore", "transfer-in-loops").output


def test_explain_takes_a_prefix_like_select(cli) -> None:
    listed = cli("explain", "GPU4")
    assert listed.exit_code == 0
    assert "2 rules match" in listed.stdout and "GPU401" in listed.stdout and "GPU402" in listed.stdout
    single = cli("explain", "gpu50")  # two rules: listed; one code: its document
    assert "GPU501" in single.stdout and "GPU502" in single.stdout
    assert cli("explain", "GPU201").stdout.startswith("code: GPU201")
    assert cli("explain", "GPU0").exit_code == 2  # no rule starts with it


def test_no_config_help_shows_the_table_name(cli) -> None:
    assert "[tool.gpuadvisor]" in cli("check", "--help").stdout


def test_a_named_cpu_is_not_called_this_cpu(cli, write) -> None:
    path = write("pipeline.py", "import numpy as np\nN = 16384\na = np.random.rand(N, N)\nb = a @ a\n")
    (finding,) = json.loads(cli("check", path, "--select", "GPU701", "--cpu", "laptop", "--format", "json").stdout)["findings"]
    assert "this CPU" not in finding["message"] and finding["prediction"]["cpu_name"] in finding["message"]


def test_progress_shows_only_on_a_terminal_and_only_after_two_seconds(monkeypatch) -> None:
    from gpuadvisor.interfaces import terminal

    clock = [100.0]
    monkeypatch.setattr(terminal.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(terminal, "_is_terminal", lambda stream: True)
    progress = terminal.CheckProgress(enabled=True)
    progress.update(1, 50)
    assert progress._bar is None  # a quick run shows nothing
    clock[0] += terminal.PROGRESS_AFTER_S + 0.1
    progress.update(2, 50)
    assert progress._bar is not None
    progress.close()
    monkeypatch.setattr(terminal, "_is_terminal", lambda stream: False)
    piped = terminal.CheckProgress(enabled=True)
    clock[0] += 10
    piped.update(3, 50)
    assert piped._bar is None  # CI logs and pipes get no bar


def test_predict_never_claims_a_measurement_on_this_machine(cli) -> None:
    text = cli("predict", "matmul", "--shape", "4096x4096", "--shape", "4096x4096").stdout
    assert "GPU measured" not in text and "GPU time: model fitted to measured runs of this op (training data, not this machine)" in text


def test_findings_carry_the_prediction_type_predict_returns() -> None:
    import gpuadvisor

    (finding,) = gpuadvisor.check_source("import numpy as np\nN = 16384\na = np.random.rand(N, N)\nb = a @ a\n", select="GPU701")
    assert isinstance(finding.prediction, gpuadvisor.Prediction)
    assert finding.to_dict()["prediction"] == finding.prediction.to_dict()


def test_html_bars_have_a_labelled_time_axis(cli, write) -> None:
    path = write("pipeline.py", "import numpy as np\nN = 16384\na = np.random.rand(N, N)\nb = a @ a\n")
    page = cli("check", path, "--format", "html").stdout
    assert "time per call (log scale)" in page and 'class="axis"' in page
    assert page.count('class="tick"') >= 3 and "GPU + copies" in page
