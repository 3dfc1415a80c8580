"""Folder walking, the result cache and the parallel runner."""

from __future__ import annotations

import json
import os

import pytest

from gpuadvisor.interfaces import runner
from gpuadvisor.interfaces.cache import ResultCache

BAD = "import torch\nx = torch.zeros(8).cuda()\n"


def paths_checked(cli, target) -> list[str]:
    report = json.loads(cli("check", target, "--format", "json").stdout)
    return sorted(os.path.relpath(f["path"], target) for f in report["findings"])


def test_walk_skips_git_venvs_caches_and_build_folders(cli, write, tmp_path) -> None:
    for name in ("src/a.py", ".git/hooks/x.py", "venv/lib/y.py", "__pycache__/z.py", "build/lib/b.py", "env/c.py", "pkg.egg-info/d.py"):
        write(name, BAD)
    write("env/pyvenv.cfg", "home = /usr/bin\n")
    assert paths_checked(cli, tmp_path) == ["src/a.py"]


def test_symlink_loops_are_not_followed_forever(cli, write, tmp_path) -> None:
    write("pkg/a.py", BAD)
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "again")
    assert paths_checked(cli, tmp_path) == ["pkg/a.py"]


def test_second_run_is_answered_from_the_cache(cli, write, monkeypatch) -> None:
    path = write("a.py", BAD)
    first = cli("check", path, "--format", "json").stdout
    calls = []
    original = runner.Checker.check_bytes
    monkeypatch.setattr(runner.Checker, "check_bytes", lambda self, data, p, context=None, parse=False: calls.append(p) or original(self, data, p, context, parse))
    assert cli("check", path, "--format", "json").stdout == first
    assert calls == []
    path.write_text(BAD + "y = torch.ones(2).cuda()\n")
    assert len(json.loads(cli("check", path, "--format", "json").stdout)["findings"]) == 2
    assert calls == [str(path)]


def test_damaged_cache_entry_is_ignored(write, isolated_cache) -> None:
    cache = ResultCache.default()
    path = write("a.py", BAD)
    runner.check_files([str(path)], cache)
    for entry in cache.folder.rglob("*.json"):
        entry.write_text("{not json")
    (result,) = runner.check_files([str(path)], cache)
    assert [f.rule for f in result.findings] == ["GPU102"]


@pytest.mark.parametrize(
    "damage",
    [
        lambda entry: "null",
        lambda entry: "[]",
        lambda entry: '{"findings": 5, "error": null, "candidates": []}',
        lambda entry: '{"findings": [], "error": "oops", "candidates": []}',
        lambda entry: entry.replace('"line": 2', '"line": "2"'),
    ],
    ids=["null", "list", "findings-number", "error-string", "line-string"],
)
def test_cache_entries_of_the_wrong_shape_are_recomputed(write, damage) -> None:
    cache = ResultCache.default()
    path = write("a.py", BAD)
    runner.check_files([str(path)], cache)
    (entry,) = cache.folder.rglob("*.json")
    damaged = damage(entry.read_text())
    assert damaged != entry.read_text()
    entry.write_text(damaged)
    (result,) = runner.check_files([str(path)], cache)
    assert result.error is None and [(f.rule, f.line) for f in result.findings] == [("GPU102", 2)]


def test_parallel_results_equal_serial_results(write, tmp_path) -> None:
    files = [str(write(f"m{i}.py", BAD if i % 3 else "x = 1\n")) for i in range(40)]
    serial = runner.check_files(files, None, jobs=1)
    parallel = runner.check_files(files, None, jobs=2)
    assert [(r.path, r.findings, r.error) for r in serial] == [(r.path, r.findings, r.error) for r in parallel]


def test_a_file_that_kills_its_worker_is_reported_and_the_rest_checked(write, monkeypatch) -> None:
    files = [str(write(f"m{i}.py", BAD)) for i in range(30)]
    killer = str(write("killer.py", BAD))
    original = runner.check_one

    def dies_on_killer(path: str, context=None, parse=False):
        if path == killer:
            os._exit(139)  # what a native parser segfault looks like from outside
        return original(path, context, parse)

    monkeypatch.setattr(runner, "check_one", dies_on_killer)
    results = runner.check_files([*files, killer], None, jobs=2)
    by_path = {r.path: r for r in results}
    assert by_path[killer].error is not None and by_path[killer].error.kind == "crash"
    assert all(by_path[f].error is None and len(by_path[f].findings) == 1 for f in files)
