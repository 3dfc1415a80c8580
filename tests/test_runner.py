"""Folder walking, the result cache and the parallel runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpuadvisor.interfaces import runner
from gpuadvisor.interfaces.cache import ResultCache

BAD = "import torch\nx = [torch.zeros(8).cuda() for _ in range(9)]\n"


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
    path.write_text(BAD + "y = [torch.ones(2).cuda() for _ in range(9)]\n")
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


MODELS = """\
import torch

def discriminator_loss(real, fake):
    losses = []
    for r, f in zip(real, fake):
        losses.append(torch.mean((1 - r) ** 2 + f ** 2).item())
    return losses
"""
TRAIN = """\
import torch
from models import discriminator_loss

def train(loader, disc):
    device = torch.device("cuda")
    for x in loader:
        real, fake = disc(x.to(device))
        discriminator_loss(real, fake)
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_walked_again_for_the_project_is_parsed_once(write, tmp_path, monkeypatch, jobs) -> None:
    """models.py is walked twice (alone, then with the GPU values train.py hands it), parsed once:
    in this process, or in the worker the second walk is sent back to."""
    from gpuadvisor.analysis.reading import parsed_files

    files = [str(write("models.py", MODELS)), str(write("train.py", TRAIN))]
    files += [str(write(f"m{i}.py", f"{BAD}# {i}\n")) for i in range(30)]  # enough files for worker processes
    log = tmp_path / "parsed.log"
    original = parsed_files.parse_source

    def logged(text: str):
        with open(log, "a") as out:  # workers are forked: they write here too
            out.write(f"{hash(text)}\n")
        return original(text)

    monkeypatch.setattr(parsed_files, "parse_source", logged)
    results = {Path(r.path).name: r for r in runner.check_files(files, None, jobs=jobs)}
    assert [(f.line, f.rule) for f in results["models.py"].findings] == [(6, "GPU201")]
    parses = log.read_text().split()
    assert len(parses) == len(set(parses)) == len(files)


def test_a_run_in_the_callers_process_freezes_only_when_large_and_gives_back_what_it_froze(tmp_path, monkeypatch) -> None:
    """A few small files checked in the caller's process freeze nothing and make no collection
    (each would scan the caller's whole heap, a test session's or a host program's). A run as
    large as one that would go to workers (`jobs=1` on a project) freezes its kept trees out of
    the collector's scans and gives the caller's objects back at the end, findings unchanged; a
    caller that froze objects itself keeps them frozen, and nothing of ours is frozen."""
    import gc

    collections: list[int] = []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *args: collections.append(1) or collect(*args))
    path = tmp_path / "train.py"
    path.write_text(BAD)
    expected = [(f.line, f.rule) for f in runner.check_files([str(path)], None, jobs=1)[0].findings]
    assert expected and collections == [] and gc.get_freeze_count() == 0

    project = [tmp_path / f"module_{n}.py" for n in range(runner.PARALLEL_THRESHOLD)]
    for module in project:
        module.write_text(BAD)
    results = runner.check_files([str(module) for module in project], None, jobs=1)
    assert all([(f.line, f.rule) for f in result.findings] == expected for result in results)
    assert collections and gc.get_freeze_count() == 0

    gc.freeze()
    try:
        held = gc.get_freeze_count()
        assert [(f.line, f.rule) for f in runner.check_files([str(module) for module in project], None, jobs=1)[0].findings] == expected
        assert gc.get_freeze_count() == held
    finally:
        gc.unfreeze()


def test_kept_trees_stay_within_their_budget_and_follow_changes() -> None:
    from gpuadvisor.analysis.reading.parsed_files import ParsedFiles

    kept = ParsedFiles(budget_chars=12)
    first = kept.parse("a.py", "x = 1\n")
    assert kept.parse("a.py", "x = 1\n") is first
    assert kept.parse("a.py", "x = 22\n") is not first  # the file changed: parsed again
    big = kept.parse("b.py", "y = 333333\n")  # over the budget: parsed, not kept
    assert kept.parse("b.py", "y = 333333\n") is not big


def test_kept_trees_leave_a_file_its_memory_under_an_outside_limit(monkeypatch) -> None:
    """Under `ulimit -v`, a worker keeps fewer trees rather than give a file less than
    MEMORY_CEILING_BYTES (which would turn its analysis into a `too-complex` entry)."""
    held, limit = 1024**3, 3 * 1024**3 + 512 * 1024**2
    monkeypatch.setattr(runner, "_held_and_limit", lambda: (held, limit))
    assert runner._room_for_trees(2 * 1024**3) == limit - held - runner.MEMORY_CEILING_BYTES
    monkeypatch.setattr(runner, "_held_and_limit", lambda: (held, 2 * 1024**3))
    assert runner._room_for_trees(2 * 1024**3) == 0
    monkeypatch.setattr(runner, "_held_and_limit", lambda: (held, None))
    assert runner._room_for_trees(2 * 1024**3) == 2 * 1024**3
