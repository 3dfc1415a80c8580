"""Jupyter notebooks: code cells checked in order, findings reported per cell."""

from __future__ import annotations

import json


def notebook(*cells: tuple[str, str]) -> bytes:
    return json.dumps(
        {
            "cells": [{"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)} for kind, source in cells],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    ).encode()


TRAINING = notebook(
    ("markdown", "# Training\nWe train a model."),
    ("code", "%matplotlib inline\nimport torch\nfiles = !ls data/\ndevice = 'cuda'"),
    ("code", "%%bash\nnvidia-smi"),
    ("code", "model = Net().to(device)\nfor x, y in loader:\n    loss = crit(model(x.to(device)), y)\n    print(loss.item())"),
)


def test_findings_point_at_cell_and_line(cli, write) -> None:
    path = write("train.ipynb", TRAINING)
    result = cli("check", path, "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert [(f["rule"], f["cell"], f["line"], f["column"]) for f in report["findings"]] == [("GPU201", 3, 4, 10)]
    text = cli("check", path).stdout
    assert f"{path}:cell 3:4:11: GPU201" in text
    assert "4 |     print(loss.item())" in text


def test_folders_include_notebooks(cli, write, tmp_path) -> None:
    write("nb/train.ipynb", TRAINING)
    report = json.loads(cli("check", tmp_path, "--format", "json").stdout)
    assert report["summary"]["files"] == 1 and report["findings"][0]["path"].endswith("train.ipynb")


def test_broken_notebook_is_an_error_entry(cli, write) -> None:
    report = json.loads(cli("check", write("bad.ipynb", b"{not json"), "--format", "json").stdout)
    assert report["errors"][0]["kind"] == "decode" and "notebook" in report["errors"][0]["message"]


def test_syntax_error_names_the_cell(cli, write) -> None:
    path = write("oops.ipynb", notebook(("code", "import torch"), ("code", "x = (1,\n")))
    report = json.loads(cli("check", path, "--format", "json").stdout)
    assert "cell 2" in report["errors"][0]["message"]


HOSTILE_NOTEBOOKS = {
    "cell source of numbers": json.dumps({"cells": [{"cell_type": "code", "source": [1, 2, None]}]}).encode(),
    "deeply nested JSON": b"[" * 100_000 + b"]" * 100_000,
    "a list, not an object": b"[1, 2, 3]",
    "cells not a list": b'{"cells": 5}',
}


def test_hostile_notebooks_are_decode_entries_and_other_files_are_checked(cli, write, tmp_path) -> None:
    for index, data in enumerate(HOSTILE_NOTEBOOKS.values()):
        write(f"bad{index}.ipynb", data)
    write("train.ipynb", TRAINING)
    result = cli("check", tmp_path, "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1, result.stdout
    assert sorted(e["kind"] for e in report["errors"]) == ["decode"] * len(HOSTILE_NOTEBOOKS)
    assert all("notebook" in e["message"] for e in report["errors"])
    assert [f["rule"] for f in report["findings"]] == ["GPU201"]


def test_an_r_notebook_is_not_read_as_python(cli, write) -> None:
    document = json.loads(notebook(("code", "library(torch)\nx <- torch_zeros(3)$cuda()")))
    document["metadata"] = {"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}}
    report = json.loads(cli("check", write("analysis.ipynb", json.dumps(document).encode()), "--format", "json").stdout)
    assert report["errors"] == [] and report["findings"] == []


BENCHMARKS = notebook(
    ("code", "import numpy as np\nimport torch\nfrom numba import cuda, vectorize"),
    ("code", "@vectorize(['float32(float32, float32)'], target='cuda')\ndef add(a, b):\n    return a + b"),
    ("code", "x = np.arange(1000000, dtype=np.float32)\ny = 2 * x"),
    ("code", "%timeit add(x, y)"),
    ("code", "x_d = cuda.to_device(x)\ny_d = cuda.to_device(y)\n%timeit -n 100 add(x_d, y_d)"),
    ("code", "a = torch.randn(4096, 4096, device='cuda')\n%timeit (a @ a).sum().item()"),
)


def test_timeit_lines_are_repeated_timed_statements(cli, write) -> None:
    """`%timeit` runs its statement many times: a numba ufunc on host arrays copies them on every
    run (GPU101), device work that nothing waits for is timed as launch time (GPU401), and a sync
    written into the timed statement is part of what is measured (no GPU201)."""
    path = write("bench.ipynb", BENCHMARKS)
    report = json.loads(cli("check", path, "--format", "json").stdout)
    assert [(f["rule"], f["cell"], f["line"], f["column"]) for f in report["findings"]] == [
        ("GPU101", 4, 1, 8),
        ("GPU401", 5, 3, 0),
    ]
    assert "`add` is launched with host NumPy arrays (`x`, `y`) on every iteration" in report["findings"][0]["message"]


def test_help_lines_and_empty_kernel_timings_are_not_findings_or_errors(cli, write) -> None:
    """`numba.jit?` asks IPython for help (not a syntax error), and `%timeit` of an empty kernel
    measures launch overhead on purpose: there is no work to wait for."""
    path = write(
        "launch.ipynb",
        notebook(
            ("code", "import numpy as np\nfrom numba import cuda\nnumba.jit?"),
            ("code", "@cuda.jit\ndef probe(a):\n    return\narr = cuda.device_array(10)\n%timeit probe[1, 1](arr)"),
        ),
    )
    report = json.loads(cli("check", path, "--format", "json").stdout)
    assert report["findings"] == [] and report["errors"] == []


#: Cell magics of a code cell: those that run the cell's Python (`%%time` times it) and those
#: whose cell is something else (a shell script, HTML, a file's text).
PYTHON_CELL_MAGICS = ["%%time", "%%timeit -n 1", "%%capture output", "%%python", "  %%time"]
OTHER_CELL_MAGICS = ["%%bash", "%%sh", "%%html", "%%writefile train.py", "%%markdown"]


def test_a_cell_under_a_python_cell_magic_is_checked_and_any_other_is_not(cli, write) -> None:
    """One notebook, one cell per magic, each holding the same per-step `loss.item()`: GPU201 in
    every cell whose magic runs Python, none in the others."""
    step = "for x, y in loader:\n    loss = crit(model(x.to(device)), y)\n    print(loss.item())"
    magics = PYTHON_CELL_MAGICS + OTHER_CELL_MAGICS
    cells = [("code", "import torch\ndevice = 'cuda'\nmodel = Net().to(device)")] + [("code", f"{magic}\n{step}") for magic in magics]
    report = json.loads(cli("check", write("magics.ipynb", notebook(*cells)), "--format", "json").stdout)
    checked = [magics[f["cell"] - 2] for f in report["findings"] if (f["rule"], f["line"]) == ("GPU201", 4)]
    assert checked == PYTHON_CELL_MAGICS


def test_a_magic_continued_over_lines_is_no_syntax_error(cli, write) -> None:
    """`%run train \\` with its options on the next lines (a shell-style continuation) runs a
    script; the cells after it are still checked, with their line numbers."""
    path = write(
        "launch.ipynb",
        notebook(
            ("code", "import torch\ndevice = 'cuda'"),
            ("code", "%run ../scripts/main \\\n--mode train \\\n--epochs 3\n!nvidia-smi \\\n  -L"),
            ("code", "model = Net().to(device)\nfor x in loader:\n    print(model(x.to(device)).sum().item())"),
        ),
    )
    report = json.loads(cli("check", path, "--format", "json").stdout)
    assert report["errors"] == []
    assert [(f["rule"], f["cell"], f["line"]) for f in report["findings"]] == [("GPU201", 3, 3)]
