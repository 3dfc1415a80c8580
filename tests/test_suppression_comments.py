"""Suppression comments come from the tokenizer's comments only; `# noqa` follows ruff."""

from __future__ import annotations

import pytest

from gpuadvisor import check_source

LINE = 'x = [torch.zeros(8).cuda() for _ in range(9)]'


def rules(code: str, select: str | None = None) -> list[tuple[str, int]]:
    return [(f.rule, f.line) for f in check_source("import torch\n" + code, "s.py", select=select)]


@pytest.mark.parametrize(
    "comment",
    ["# noqa: GPU102", "# noqa:GPU102,E501", "# NOQA: gpu102", "# noqa", "# noqa: GPU1", "# gpuadvisor: ignore[GPU102]", "# gpuadvisor: ignore"],
)
def test_noqa_and_gpuadvisor_comments_hide_the_finding(comment: str) -> None:
    assert rules(f"{LINE}  {comment}\n") == []


@pytest.mark.parametrize("comment", ["# noqa: E501", "# noqa: GPU201", "# gpuadvisor: ignore[]", "# gpuadvisor: ignore[GPU102", "# gpuadvisor: ignore-files"])
def test_other_codes_and_malformed_comments_hide_nothing(comment: str) -> None:
    assert rules(f"{LINE}  {comment}\n") == [("GPU102", 2)]


def test_unclosed_bracket_does_not_silence_the_rest_of_the_file() -> None:
    code = f"a = 1  # gpuadvisor: ignore-file[GPU102\n{LINE}\n"
    assert rules(code) == [("GPU102", 3)]


@pytest.mark.parametrize(
    "text",
    [
        f'{LINE}; s = "# gpuadvisor: ignore"\n',
        f'{LINE}; s = "# noqa"\n',
        f'{LINE}; s = """\n# gpuadvisor: ignore-file\n"""\n',
        f'def f():\n    """# gpuadvisor: ignore-file"""\n{LINE}\n',
    ],
)
def test_comment_text_inside_strings_and_docstrings_is_not_a_suppression(text: str) -> None:
    assert [rule for rule, _ in rules(text)] == ["GPU102"]


def test_unused_suppression_rule_is_opt_in() -> None:
    clean = 'x = torch.zeros(8, device="cuda")  # noqa: GPU102\n'
    assert rules(clean) == []
    assert rules(clean, select="GPU901") == [("GPU901", 2)]
    assert rules(clean, select="ALL") == [("GPU901", 2)]


def test_unused_suppression_names_unknown_codes_and_spares_used_and_foreign_ones() -> None:
    code = f"{LINE}  # gpuadvisor: ignore[GPU102, GPU1O2]\ny = 1  # noqa: E501\nz = 2  # noqa\n"
    found = check_source("import torch\n" + code, "s.py", select="GPU901")
    assert [(f.rule, f.line) for f in found] == [("GPU901", 2)]
    assert "unknown rule `GPU1O2`" in found[0].message


def test_unused_suppression_in_a_file_no_rule_parses(cli, write) -> None:
    path = write("plain.py", "value = 1  # gpuadvisor: ignore[GPU201]\n")
    result = cli("check", path, "--select", "GPU901")
    assert result.exit_code == 1 and "GPU901" in result.stdout
