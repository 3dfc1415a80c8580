"""`gpuadvisor profile` never changes the script: each case runs as under `python`, and the
report still comes out. Each test runs the real command in a fresh process (about a second of
CPU each): the cases that start further interpreters (a spawned pool, several runs of one
script) are marked slow, and CI runs them in its `-m slow` step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


def profile(folder: Path, cache: Path, *args: str | bytes) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    command = [sys.executable, "-m", "gpuadvisor", "profile", "--save-shapes", "", *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, errors="replace", env=env, timeout=300)


def script(folder: Path, name: str, code: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(code).lstrip("\n"), encoding="utf-8")
    return path


ARRAY_WORK = "import numpy as np\na = np.ones((300, 300))\nb = a @ a + 1\n"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        # Three hazards that all still hold when the report is made (one run: each costs a second):
        # warnings turned into errors after a ComplexWarning-prone op, cProfile having replaced
        # and reset the profile hook, and a recursion limit of 40.
        (
            "complex_warning_cprofile_recursion_limit",
            ARRAY_WORK + "import warnings\nwarnings.simplefilter('error')\nz = np.complex128(1 + 2j)\nc = z * np.ones(3)\n"
            "import cProfile\ncProfile.run('a.sum()', sort='tottime')\nimport sys\nsys.setrecursionlimit(40)\nprint('ok')\n",
        ),
        ("replaced_stdout", "import io, sys\n" + ARRAY_WORK + "print('ok')\nsys.stdout = io.StringIO()\n"),
        ("closed_stdout", "import sys\n" + ARRAY_WORK + "print('ok')\nsys.stdout.flush()\nsys.stdout.close()\n"),
    ],
)
def test_the_script_runs_as_under_python_and_the_report_comes_out(tmp_path: Path, model_cache: Path, name: str, code: str) -> None:
    path = script(tmp_path, f"{name}.py", code)
    done = profile(tmp_path, model_cache, str(path))
    assert done.returncode == 0, done.stderr
    assert "ok" in done.stdout and "gpuadvisor profile:" in done.stdout
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr


def test_chdir_in_the_script_leaves_the_report_where_the_command_ran(tmp_path: Path, model_cache: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    path = script(tmp_path, "moves.py", "import os\n" + ARRAY_WORK + "os.chdir('elsewhere')\n")
    done = profile(tmp_path, model_cache, "-f", "json", "-o", "report.json", str(path))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "report.json").read_text())["lines"]
    assert not (tmp_path / "elsewhere" / "report.json").exists()


def test_a_file_name_that_is_not_utf8_gives_a_whole_report(tmp_path: Path, model_cache: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/caf\xe9.py"
    with open(raw, "w", encoding="utf-8") as handle:
        handle.write(ARRAY_WORK)
    done = profile(tmp_path, model_cache, "-o", "report.txt", raw)  # type: ignore[arg-type]
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "a @ a + 1" in (tmp_path / "report.txt").read_text(encoding="utf-8")


def test_dash_m_finds_packages_in_the_current_folder(tmp_path: Path, model_cache: Path) -> None:
    script(tmp_path, "pkg/__init__.py", "")
    script(tmp_path, "pkg/helpers.py", "import numpy as np\ndef grow(a):\n    return a @ a + 1\n")
    script(tmp_path, "pkg/mod.py", "import numpy as np\nfrom pkg.helpers import grow\nprint(grow(np.ones((200, 200))).shape)\n")
    done = profile(tmp_path, model_cache, "-m", "pkg.mod")
    assert done.returncode == 0, done.stderr
    assert "(200, 200)" in done.stdout and "helpers.py:3" in done.stdout


def test_tracebacks_show_only_the_scripts_frames(tmp_path: Path, model_cache: Path) -> None:
    path = script(tmp_path, "fails.py", "def broken():\n    raise ValueError('bad input')\nbroken()\n")
    done = profile(tmp_path, model_cache, str(path))
    assert done.returncode == 1 and "ValueError: bad input" in done.stderr
    assert "<frozen" not in done.stderr and "runpy" not in done.stderr and "gpuadvisor" not in done.stderr


@pytest.mark.slow  # two runs of the command
def test_a_library_in_a_sibling_folder_is_traced_with_include(tmp_path: Path, model_cache: Path) -> None:
    script(tmp_path, "mylib/work.py", "import numpy as np\ndef grow(a):\n    return a @ a + 1\n")
    run = script(tmp_path, "scripts/run.py", """
        import sys
        sys.path.insert(0, sys.argv[1])
        import numpy as np
        from mylib.work import grow
        print(grow(np.ones((200, 200))).shape)
    """)
    plain = profile(tmp_path, model_cache, str(run), str(tmp_path))
    widened = profile(tmp_path, model_cache, "--include", "mylib", str(run), str(tmp_path))
    assert plain.returncode == widened.returncode == 0, widened.stderr
    assert "work.py:3" not in plain.stdout and "mylib/work.py:3" in widened.stdout


@pytest.mark.slow  # a spawned pool of two more interpreters
def test_multiprocessing_workers_are_named_in_a_note(tmp_path: Path, model_cache: Path) -> None:
    path = script(tmp_path, "pool.py", """
        import multiprocessing as mp
        import numpy as np

        def work(n):
            return float((np.ones((n, n)) @ np.ones((n, n))).sum())

        if __name__ == "__main__":
            with mp.get_context("spawn").Pool(2) as pool:
                print(sum(pool.map(work, [50, 60, 70])))
    """)
    done = profile(tmp_path, model_cache, str(path))
    assert done.returncode == 0, done.stderr
    assert "worker process" in done.stdout and "not measured" in done.stdout


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_prints_no_second_report_whether_it_leaves_by_sys_exit_or_os_exit(tmp_path: Path, model_cache: Path) -> None:
    """One run, two children: one leaves by sys.exit (atexit handlers run in it), one by os._exit."""
    path = script(tmp_path, "forks.py", ARRAY_WORK + """
import os, sys
pid = os.fork()
if pid == 0:
    c = a * 2
    sys.exit(0)
os.waitpid(pid, 0)
pid = os.fork()
if pid == 0:
    c = a * 3
    os._exit(0)
os.waitpid(pid, 0)
print("parent done")
""")
    done = profile(tmp_path, model_cache, str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("gpuadvisor profile:") == 1 and "parent done" in done.stdout


def test_os_exit_keeps_its_status_and_the_report_still_comes_out(tmp_path: Path, model_cache: Path) -> None:
    path = script(tmp_path, "hard_exit.py", ARRAY_WORK + "import os\nprint('bye', flush=True)\nos._exit(3)\n")
    done = profile(tmp_path, model_cache, "-f", "json", "-o", "report.json", str(path))
    assert done.returncode == 3 and "bye" in done.stdout, done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    # Lines are ranked by measured time, which on a busy machine can put the fill above the product.
    assert report["exit_code"] == 3 and 3 in [line["line"] for line in report["lines"]]


@pytest.mark.slow  # two runs of the command and two of plain python
def test_a_script_importing_a_generated_module_runs_as_under_python(tmp_path: Path, model_cache: Path) -> None:
    """A 900-term generated expression: LibCST's walk of it used to raise RecursionError inside
    the script's import (and could overflow the C stack under a raised recursion limit)."""
    terms = " + ".join(["1"] * 900)
    script(tmp_path, "generated_table.py", f"TOTAL = {terms}\n")
    for name, prelude in (("default_limit.py", ""), ("raised_limit.py", "import sys\nsys.setrecursionlimit(1_000_000)\n")):
        path = script(tmp_path, name, prelude + ARRAY_WORK + "import generated_table\nprint('total', generated_table.TOTAL)\n")
        plain = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        done = profile(tmp_path, model_cache, str(path))
        assert plain.returncode == done.returncode == 0, done.stderr
        assert "total 900" in done.stdout and "gpuadvisor profile:" in done.stdout and "Traceback" not in done.stderr
