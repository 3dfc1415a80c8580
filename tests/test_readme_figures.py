"""The README quotes what the commands print today, and its pre-commit snippet fits the hook."""

from __future__ import annotations

import subprocess
import sys

from gpuadvisor._version import __version__
from tests.conftest import REPO


def test_readme_example_outputs_are_current() -> None:
    done = subprocess.run([sys.executable, "tools/readme_figures.py", "--check"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr + "\nrun: python tools/readme_figures.py"


def test_the_hook_checks_notebooks_too_and_the_readme_pins_a_release() -> None:
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "types_or: [python, jupyter]" in hooks
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    snippet = readme[readme.index("### pre-commit") :]
    assert "rev: v" in snippet and "your-org" not in snippet
    assert f"rev: v{__version__} " in snippet, "the snippet must pin the release tag of this version"


def test_no_machine_specific_shapes_file_is_committed() -> None:
    tracked = subprocess.run(["git", "ls-files", "gpuadvisor-shapes.json"], cwd=REPO, capture_output=True, text=True).stdout
    assert tracked.strip() == ""
    assert "gpuadvisor-shapes.json" in (REPO / ".gitignore").read_text(encoding="utf-8")
