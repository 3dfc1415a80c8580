"""docs/json-schema.json describes what `check --format json` and `predict --format json` print."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.conftest import REPO

SCHEMA = json.loads((REPO / "docs" / "json-schema.json").read_text(encoding="utf-8"))


def validate(document: object, definition: str | None = None) -> None:
    schema = SCHEMA if definition is None else {"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{definition}"}
    jsonschema.validate(document, schema, cls=jsonschema.Draft202012Validator)


def test_the_schema_itself_is_valid() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_check_output_on_the_examples_matches_the_schema(cli, write) -> None:
    broken = write("broken.py", "def f(:\n")
    report = json.loads(cli("check", REPO / "examples", broken, "--format", "json").stdout)
    validate(report)
    assert any(f["prediction"] is not None for f in report["findings"]) and report["errors"]
    # 0-based columns, as the schema says: the text format prints column + 1 for the same finding.
    first = report["findings"][0]
    text = cli("check", first["path"], "--select", first["rule"], "--format", "concise").stdout
    assert f"{first['path']}:{first['line']}:{first['column'] + 1}: {first['rule']}" in text


def test_a_findings_prediction_is_serialised_like_predict_output(cli, write) -> None:
    path = write("pipeline.py", "import numpy as np\nN = 16384\na = np.random.rand(N, N)\nb = a @ a\n")
    (finding,) = json.loads(cli("check", path, "--select", "GPU701", "--format", "json").stdout)["findings"]
    predicted = json.loads(cli("predict", "matmul", "--shape", "8192x8192", "--shape", "8192x8192", "--format", "json").stdout)
    validate(finding["prediction"], "prediction")
    validate(predicted, "prediction")
    assert finding["prediction"].keys() == predicted.keys()


def test_a_wrong_document_is_rejected() -> None:
    with pytest.raises(jsonschema.ValidationError):
        validate({"version": 1, "findings": [{"path": "a.py", "line": 0}], "errors": [], "summary": {"files": 1, "findings": 1, "errors": 0}})
