"""Size of the environment pre-commit builds for the gpuadvisor hook (target: under 120 MB).

    python benchmarks/hook_env_size.py [--rev COMMIT]

Installs the hook from this checkout's committed state (HEAD, or --rev) into a scratch
PRE_COMMIT_HOME, exactly as a user's `pre-commit install-hooks` would, and prints the
environment's size and its largest packages. Needs pre-commit (`pip install -e '.[test]'`)
and network access to the package index; takes a minute or two.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="commit of this repository to install the hook from")
    args = parser.parse_args()
    rev = subprocess.run(["git", "rev-parse", args.rev], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        project, home = Path(scratch) / "project", Path(scratch) / "home"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        (project / ".pre-commit-config.yaml").write_text(
            f"repos:\n  - repo: {ROOT}\n    rev: {rev}\n    hooks:\n      - id: gpuadvisor\n", encoding="utf-8"
        )
        env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
        done = subprocess.run([sys.executable, "-m", "pre_commit", "install-hooks"], cwd=project, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout + done.stderr, file=sys.stderr)
            return 1
        (environment,) = home.glob("repo*/py_env-*")
        site = next(environment.glob("lib/python*/site-packages"))
        packages = sorted(((folder_bytes(p) if p.is_dir() else p.stat().st_size, p.name) for p in site.iterdir()), reverse=True)
        total = folder_bytes(environment)
        print(f"hook environment at {rev[:10]}: {total / 1e6:.0f} MB (target: under 120 MB without torch/CuPy)")
        for size, name in packages[:8]:
            print(f"  {size / 1e6:6.1f} MB  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
