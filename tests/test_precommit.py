"""The pre-commit hook, installed and run by pre-commit itself against a scratch repository."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow


def git(*args: str, cwd) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed")
def test_hook_fails_on_bad_code_and_passes_on_clean_code(tmp_path) -> None:
    if not (REPO / ".git").exists():
        pytest.skip("try-repo needs the project as a git checkout")
    scratch = tmp_path / "project"
    scratch.mkdir()
    git("init", "-q", cwd=scratch)
    (scratch / "bad.py").write_text("import torch\nfor step in range(1000):\n    buffer = torch.zeros(step).cuda()\n")  # per step: a warning
    (scratch / "clean.py").write_text("import torch\nbuffer = torch.zeros(1024, device='cuda')\n")
    (scratch / "notes.txt").write_text("no python here\n")
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
            "source": ["import torch\n", "for step in range(1000):\n", "    buffer = torch.zeros(step).cuda()\n"]}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (scratch / "explore.ipynb").write_text(json.dumps(notebook))
    git("add", ".", cwd=scratch)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def hook(*files: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "gpuadvisor", "--files", *files]
        return subprocess.run(cmd, cwd=scratch, env=env, capture_output=True, text=True, timeout=900)

    bad = hook("bad.py")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "GPU102" in bad.stdout and "Failed" in bad.stdout

    clean = hook("clean.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout

    in_notebook = hook("explore.ipynb")  # the hook runs on notebooks too (types_or: jupyter)
    assert in_notebook.returncode == 1 and "explore.ipynb:cell 1:3" in in_notebook.stdout, in_notebook.stdout

    nothing = hook("notes.txt")  # no staged Python files: nothing to do is a pass
    assert nothing.returncode == 0, nothing.stdout + nothing.stderr
