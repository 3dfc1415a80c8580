"""[tool.gpuadvisor] configuration and inline `# gpuadvisor: ignore` comments."""

from __future__ import annotations

import json

import pytest

BAD = """
import torch
x = [torch.zeros(8).cuda() for _ in range(9)]
for i in range(1000):
    print(x.sum().item())
"""


def findings(cli, *args) -> list[tuple[str, str, int]]:
    result = cli("check", *args, "--ignore", "GPU7", "--format", "json")  # speedup rules: own tests
    assert result.exit_code in (0, 1), result.output
    return [(f["path"].rsplit("/", 1)[-1], f["rule"], f["line"]) for f in json.loads(result.stdout)["findings"]]


def test_no_config_reports_everything(cli, write) -> None:
    assert findings(cli, write("a.py", BAD)) == [("a.py", "GPU102", 2), ("a.py", "GPU201", 4)]


def test_ignore_and_select_in_pyproject(cli, write, tmp_path) -> None:
    write("pyproject.toml", '[tool.gpuadvisor]\nignore = ["sync-in-loop"]\n')
    path = write("pkg/a.py", BAD)
    assert findings(cli, path) == [("a.py", "GPU102", 2)]
    assert findings(cli, path, "--no-config") == [("a.py", "GPU102", 2), ("a.py", "GPU201", 4)]


def test_exclude_and_per_file_ignores(cli, write, tmp_path) -> None:
    write(
        "pyproject.toml",
        '[tool.gpuadvisor]\nexclude = ["legacy", "*_generated.py"]\n'
        '[tool.gpuadvisor.per-file-ignores]\n"tests/*" = ["GPU102"]\n',
    )
    write("legacy/old.py", BAD)
    write("src/model_generated.py", BAD)
    write("tests/test_model.py", BAD)
    write("src/model.py", BAD)
    got = findings(cli, tmp_path)
    assert got == [("model.py", "GPU102", 2), ("model.py", "GPU201", 4), ("test_model.py", "GPU201", 4)]


def test_fail_on_from_config(cli, write) -> None:
    write("pyproject.toml", '[tool.gpuadvisor]\nfail-on = "error"\n')
    result = cli("check", write("a.py", BAD))
    assert result.exit_code == 0 and "GPU102" in result.stdout


def test_config_is_found_from_a_subfolder(cli, write, tmp_path) -> None:
    write("pyproject.toml", '[project]\nname = "x"\n\n[tool.gpuadvisor]\nselect = ["GPU102"]\n')
    path = write("deep/down/a.py", BAD)
    assert findings(cli, path) == [("a.py", "GPU102", 2)]


def test_broken_config_is_exit_2_with_a_clear_message(cli, write) -> None:
    write("pyproject.toml", "[tool.gpuadvisor]\nselect = [\n")
    result = cli("check", write("a.py", BAD))
    assert result.exit_code == 2
    assert "not valid TOML" in result.output


BROKEN_CONFIGS = {
    "threshold nan": ("[tool.gpuadvisor]\ngpu-candidate-threshold = nan\n", "finite positive number"),
    "threshold inf": ("[tool.gpuadvisor]\ngpu-candidate-threshold = inf\n", "finite positive number"),
    "threshold true": ("[tool.gpuadvisor]\ngpu-candidate-threshold = true\n", "finite positive number"),
    "not UTF-8": (b'[tool.gpuadvisor]\nselect = ["GPU1\xff"]\n', "cannot read"),
    "nested too deeply": ("# tool.gpuadvisor\na = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
}


@pytest.mark.parametrize("name", sorted(BROKEN_CONFIGS))
def test_bad_config_values_are_exit_2_never_silently_used(cli, write, name: str) -> None:
    content, expected = BROKEN_CONFIGS[name]
    write("pyproject.toml", content)
    result = cli("check", write("a.py", BAD))
    assert result.exit_code == 2 and expected in result.output


def test_a_tool_key_that_is_not_a_table_means_no_config(cli, write) -> None:
    write("pyproject.toml", "tool = 5  # mentions tool.gpuadvisor only in a comment\n")
    assert cli("check", write("a.py", BAD)).exit_code == 1


def test_unknown_config_key_and_code_are_exit_2(cli, write, tmp_path) -> None:
    write("pyproject.toml", '[tool.gpuadvisor]\nselekt = ["GPU101"]\n')
    path = write("a.py", BAD)
    result = cli("check", path)
    assert result.exit_code == 2 and "selekt" in result.output
    write("pyproject.toml", '[tool.gpuadvisor]\nignore = ["GPU000"]\n')
    result = cli("check", path)
    assert result.exit_code == 2 and "GPU000" in result.output


def test_inline_suppression_by_code_category_and_bare(cli, write) -> None:
    code = """
    import torch
    x = [torch.zeros(8).cuda() for _ in range(9)]  # gpuadvisor: ignore[GPU102]
    y = [torch.ones(8).cuda() for _ in range(9)]  # gpuadvisor: ignore[create-then-transfer]
    z = [torch.empty(8).cuda() for _ in range(9)]  # gpuadvisor: ignore
    w = [torch.full((8,), 1.0).cuda() for _ in range(9)]  # gpuadvisor: ignore[GPU201]
    """
    assert findings(cli, write("a.py", code)) == [("a.py", "GPU102", 5)]


def test_file_level_suppression(cli, write) -> None:
    assert findings(cli, write("a.py", "# gpuadvisor: ignore-file\n" + BAD)) == []
    assert findings(cli, write("b.py", "# gpuadvisor: ignore-file[GPU201]\n" + BAD)) == [("b.py", "GPU102", 4)]
