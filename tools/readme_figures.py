"""Regenerate the figures the README quotes (command output, finding counts, the test time).

    python tools/readme_figures.py                  # rewrite the example outputs in README.md
    python tools/readme_figures.py --check          # exit 1 if an example output is stale (a test runs this)
    python tools/readme_figures.py --measure-tests  # also time `python -m pytest -q` and write it

Each figure sits between `<!-- figure:NAME -->` and `<!-- /figure:NAME -->` in README.md. The
example commands name their hardware (`--gpu`, `--cpu`) so that their output is the same on
every machine; the test time is measured only on request (it depends on the machine and its load).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: figure name -> (the command shown, how many findings of its output to show in full).
EXAMPLES = {
    "check-example": ("gpuadvisor check examples/train_classifier.py", 2),
    "speedup-example": (
        "gpuadvisor check examples/spectral_features.py examples/kalman_cupy.py --select GPU7 "
        "--gpu h100-sxm --cpu desktop --format concise",
        None,
    ),
}


def run_example(command: str) -> str:
    """The command's standard output, run from the repository root with no user cache or config."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache, "XDG_DATA_HOME": cache, "NO_COLOR": "1", "COLUMNS": "200"}
        env.pop("FORCE_COLOR", None)
        args = [sys.executable, "-c", "from gpuadvisor.interfaces.cli import main; main()", *command.split()[1:]]
        done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1):
        raise SystemExit(f"`{command}` failed ({done.returncode}): {done.stderr}")
    return done.stdout


def abbreviated(output: str, findings_shown: int | None) -> str:
    """The first findings in full, `...`, and the summary line."""
    lines = output.rstrip("\n").splitlines()
    summary = lines[-1]
    if findings_shown is None:  # concise: the first finding of each rule, then the summary
        shown, rules = [], set()
        for line in lines[:-1]:
            rule = re.search(r": (GPU\d{3}) \[", line)
            if rule and rule.group(1) not in rules:
                rules.add(rule.group(1))
                shown.append(line)
        body = shown
    else:
        blocks = "\n".join(lines[:-1]).split("\n\n")
        body = "\n\n".join(blocks[:findings_shown]).splitlines()
    return "\n".join([*body, "...", summary])


def figure(name: str) -> str:
    command, shown = EXAMPLES[name]
    return f"\n```\n$ {command}\n{abbreviated(run_example(command), shown)}\n```\n"


def measure_tests() -> str:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True)
    seconds = time.monotonic() - started
    return f"about {round(seconds / 5) * 5:.0f} s on {os.cpu_count()} cores"


def replace_figure(text: str, name: str, content: str) -> str:
    pattern = re.compile(rf"(<!-- figure:{name} -->)(.*?)(<!-- /figure:{name} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"README.md has no figure {name!r}")
    return pattern.sub(lambda m: m.group(1) + content + m.group(3), text)


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    updated = text
    for name in EXAMPLES:
        updated = replace_figure(updated, name, figure(name))
    if "--measure-tests" in argv:
        updated = replace_figure(updated, "test-time", measure_tests())
    if "--check" in argv:
        if updated != text:
            print("stale: README.md figures (run python tools/readme_figures.py)")
            return 1
        return 0
    if updated != text:
        README.write_text(updated, encoding="utf-8")
        print("rewrote README.md figures")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
