"""Adopting the tool on an existing code base: --add-noqa and baselines."""

from __future__ import annotations

import json
from pathlib import Path

BAD = (
    "import torch\n"
    "x = [torch.zeros(8).cuda() for _ in range(9)]  # scratch buffer\n"
    "s = '''text\n"
    "'''; y = [torch.ones(8).cuda() for _ in range(9)]\n"
    "for i in range(1000):\n"
    "    print(x.sum().item())  # gpuadvisor: ignore[GPU102]\n"
)


def rules(cli, *args: object) -> list[tuple[str, int]]:
    result = cli("check", *args, "--ignore", "GPU7", "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return [(f["rule"], f["line"]) for f in json.loads(result.stdout)["findings"]]


def test_add_noqa_comments_every_finding_and_the_next_check_is_clean(write, cli) -> None:
    path = write("train.py", BAD)
    assert rules(cli, path) == [("GPU102", 2), ("GPU102", 4), ("GPU201", 6)]
    result = cli("check", path, "--add-noqa", "--ignore", "GPU7")
    assert result.exit_code == 0 and "Added 3 suppression comments" in result.stderr
    text = path.read_text()
    assert "x = [torch.zeros(8).cuda() for _ in range(9)]  # scratch buffer  # gpuadvisor: ignore[GPU102]\n" in text
    assert "'''; y = [torch.ones(8).cuda() for _ in range(9)]  # gpuadvisor: ignore[GPU102]\n" in text
    assert "print(x.sum().item())  # gpuadvisor: ignore[GPU102, GPU201]\n" in text  # merged into the existing one
    assert "s = '''text\n'''" in text  # nothing written inside the string
    assert rules(cli, path) == []
    # The comments it wrote are all used; the stale GPU102 that was on line 6 before is not.
    assert rules(cli, path, "--select", "GPU901") == [("GPU901", 6)]
    before = path.read_text()
    cli("check", path, "--add-noqa", "--ignore", "GPU7")
    assert path.read_text() == before  # idempotent


def test_baseline_reports_only_new_findings_and_survives_moved_lines(write, cli, tmp_path: Path) -> None:
    path = write("train.py", BAD)
    baseline = tmp_path / "gpuadvisor-baseline.json"
    written = cli("check", path, "--ignore", "GPU7", "--write-baseline", str(baseline))
    assert written.exit_code == 0 and "Baseline of 3 findings" in written.stderr
    assert rules(cli, path, "--baseline", baseline) == []
    # Code added above moves every finding down; the same line copied once more is new.
    path.write_text("import os\n\n" + BAD + "z = [torch.zeros(8).cuda() for _ in range(9)]  # scratch buffer\nw = [torch.full((8,), 1.0).cuda() for _ in range(9)]\n")
    assert rules(cli, path, "--baseline", baseline) == [("GPU102", 9), ("GPU102", 10)]
    # The two new module-level fills are one-off setup (info), which does not fail the run.
    result = cli("check", path, "--ignore", "GPU7", "--baseline", baseline, "--fail-on", "info")
    assert result.exit_code == 1 and "3 finding(s) in the baseline not shown" in result.stderr


def test_a_broken_baseline_is_a_usage_error(write, cli, tmp_path: Path) -> None:
    path = write("train.py", BAD)
    for content in ("not json", '{"tool": "other"}', "[1, 2]"):
        (tmp_path / "b.json").write_text(content)
        result = cli("check", path, "--baseline", tmp_path / "b.json")
        assert result.exit_code == 2 and "baseline" in result.stderr and "Traceback" not in result.output
    assert cli("check", path, "--baseline", tmp_path / "missing.json").exit_code == 2
