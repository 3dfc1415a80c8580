"""Hostile input, second round (issue 26): generated shapes, special files, damaged caches and
data, odd paths and extreme numbers. Large hostile files are generated here, never committed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuadvisor import check_paths, check_source
from gpuadvisor._safe_io import UnsafeFile, dumps_json, load_json
from gpuadvisor.analysis.checker import Checker
from gpuadvisor.analysis.rules import ALL_RULES
from gpuadvisor.interfaces.cache import ResultCache

# A host fill copied to the GPU on every step: a GPU102 warning (a one-off fill would be an info note).
GOOD = "import torch\nfor step in range(1000):\n    x = torch.zeros(step).cuda()\n"


def _errors(report) -> list[tuple[str, str]]:
    return [(Path(e.path).name, e.kind) for e in report.errors]


def test_an_and_chain_of_8000_operands_one_per_line_is_refused_in_process(tmp_path: Path) -> None:
    """Valid Python CPython parses at once; LibCST's parser died with SIGSEGV (and the host with it)."""
    chain = tmp_path / "chain.py"
    chain.write_text("import torch\nok = (\n" + "".join(f"    a{i} and\n" for i in range(8000)) + "    b\n)\n")
    (tmp_path / "good.py").write_text(GOOD)
    report = check_paths([tmp_path], use_config=False, cache=False, jobs=1)
    assert _errors(report) == [("chain.py", "too-complex")]
    assert "8,001 operands" in report.errors[0].message
    assert [f.rule for f in report.findings] == ["GPU102"]


#: 34,000 generated statements under 1 MiB: 306,000 nodes of CPython's tree, past guard.MAX_NODES.
MANY_STATEMENTS = "import torch\n" + "".join(f"v{i} = torch.tensor({i})\n" for i in range(34_000))


def _libcst_must_not_run(text: str) -> None:
    raise AssertionError(f"LibCST was given {len(text):,} characters")


@pytest.mark.slow  # generates and checks files of hundreds of thousands of nodes (~3 s)
def test_code_too_large_for_libcst_is_refused_before_it_parses(tmp_path: Path, monkeypatch) -> None:
    """The scale run's 3.9 MiB file of such statements (1.6 million nodes) ran LibCST's native
    parser past a worker's memory ceiling: it aborted the worker twice ('crash') and printed
    Rust's allocation failures. Now the size is measured on CPython's tree first."""
    from gpuadvisor.analysis.reading import source

    (tmp_path / "generated.py").write_text(MANY_STATEMENTS)
    (tmp_path / "good.py").write_text(GOOD)
    parse = source._libcst_parse  # still parses the small file; one run checks both (each costs seconds)
    monkeypatch.setattr(source, "_libcst_parse", lambda text: _libcst_must_not_run(text) if len(text) > 10_000 else parse(text))
    report = check_paths([tmp_path], use_config=False, cache=False, jobs=1)
    assert _errors(report) == [("generated.py", "too-complex")], report.errors
    assert "more than 300,000 syntax-tree nodes" in report.errors[0].message
    assert [f.rule for f in report.findings] == ["GPU102"]


@pytest.mark.slow  # generates and parses a file of 34,000 statements (~2-3 s)
def test_text_cpython_rejects_is_not_refereed_by_libcst_when_too_large(monkeypatch) -> None:
    """CPython's verdict stands for a file of more tokens than LibCST may be given."""
    from gpuadvisor.analysis.reading import source

    monkeypatch.setattr(source, "_libcst_parse", _libcst_must_not_run)
    result = Checker(ALL_RULES).check_text(MANY_STATEMENTS + "x = = 1\n", "generated.py")
    assert result.error is not None and result.error.kind == "syntax" and result.error.line == 34_002


@pytest.mark.slow  # checks a file of a megabyte of data tables (~2 s)
def test_data_literals_left_out_do_not_count_towards_the_size_limit() -> None:
    """A 1.4 MiB NumPy table is 350,000 nodes as written (past guard.MAX_NODES), a handful once
    its literal is left out. (A 4 MiB table tested the same at three times the cost.)"""
    from gpuadvisor.analysis.reading.guard import MAX_NODES

    rows = 50_000
    assert 7 * rows > MAX_NODES  # `[i, f, -i]` is 7 nodes of CPython's tree (List, Load, 3 Constant, UnaryOp, USub)
    table = "import numpy as np\nDATA = np.array([\n" + "".join(f"    [{i}, {i * 0.5!r}, {-i}],\n" for i in range(rows)) + "])\n"
    table += "for step in range(1000):\n    x = np.zeros(step)\n"
    assert Checker(ALL_RULES).check_text(table, "table.py").error is None


MULTILINE_CHAINS_CPYTHON_REJECTS = {
    "attribute": "x = (a\n" + ".b\n" * 20000,
    "subscript": "x = (a\n" + "[0]\n" * 20000,
    "method": "x = (a\n" + ".m()\n" * 20000,
    "ternary": "x = (a\n" + "if b else c\n" * 20000,
    "unary": "x = (\n" + "-\n" * 20000 + "a)\n",
}


@pytest.mark.parametrize("shape", sorted(MULTILINE_CHAINS_CPYTHON_REJECTS))
def test_multi_line_chains_cpython_rejects_are_a_fast_clear_entry(shape: str) -> None:
    """These hung for a minute and more, took 3.5 GB, or aborted in Rust's allocator. CPython
    calls them invalid syntax, or too deeply nested for its own parser (ternary, unary)."""
    started = time.process_time()
    for prefix in ("import torch\n", ""):  # files rules parse, and files only syntax-checked
        result = Checker(ALL_RULES).check_text(prefix + MULTILINE_CHAINS_CPYTHON_REJECTS[shape], "gen.py")
        assert result.error is not None and result.error.kind in ("syntax", "too-complex"), result.error
    assert time.process_time() - started < 10


def test_the_file_budget_counts_cpu_time_not_waiting(monkeypatch) -> None:
    checker = Checker(ALL_RULES, time_budget=0.3)
    monkeypatch.setattr(checker, "_run_rules", lambda *args: time.sleep(0.6) or ([], None))
    assert checker.check_text(GOOD, "paused.py").error is None  # a paused or busy machine is no timeout

    def busy(*args: object) -> tuple[list[object], None]:
        deadline = time.process_time() + 5
        while time.process_time() < deadline:
            pass
        return [], None

    monkeypatch.setattr(checker, "_run_rules", busy)
    error = checker.check_text(GOOD, "busy.py").error
    assert error is not None and error.kind == "timeout" and "CPU time" in error.message


@pytest.mark.parametrize("budget", ["inf", "1e300", "nan"])
def test_an_unbounded_file_budget_is_no_budget(cli, write, budget: str) -> None:
    result = cli("check", write("a.py", GOOD), "--file-budget", budget, "--format", "json")
    assert result.exit_code == 1 and json.loads(result.stdout)["findings"][0]["rule"] == "GPU102"


@pytest.mark.parametrize(
    ("name", "code", "message"),
    [
        ("str_bytes.py", "import torch\nx = 'a' b'b'\n", "cannot mix bytes and nonbytes literals"),
        ("surrogate.py", "# coding: utf-8\udc80\nimport torch\n", "surrogates not allowed"),
    ],
)
def test_code_cpython_refuses_is_a_syntax_entry_with_its_message(name: str, code: str, message: str) -> None:
    result = Checker(ALL_RULES).check_text(code, name)
    assert result.error is not None and result.error.kind == "syntax" and message in result.error.message


def test_valid_numpy_code_with_complex_powers_is_analysed() -> None:
    code = "import numpy as np\nz = np.array([1 + 2j, -1])\nw = z ** 0.5\nv = (-8) ** 0.5\nu = (1 + 2j) ** 0.5\n"
    assert check_source(code, "complex_roots.py") == []


def test_a_long_implicit_string_concatenation_is_valid_code() -> None:
    code = "import torch\nx = (\n" + "".join(f"    's{i}'\n" for i in range(3500)) + ")\ny = [torch.zeros(3).cuda() for _ in range(9)]\n"
    assert [(f.rule, f.line) for f in check_source(code, "strings.py")] == [("GPU102", 3504)]


# The checked code's SyntaxWarnings are not printed: tests/test_bad_input.py's real-process run
# (test_pathological_nesting_does_not_crash_the_run_and_syntax_warnings_are_not_printed).


# --- special files and damaged data -----------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a Unix thing")
def test_a_fifo_or_device_never_blocks_the_safe_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "entry.json"
    os.mkfifo(fifo)
    for special in (fifo, Path("/dev/zero")):
        with pytest.raises(UnsafeFile, match="not a regular file"):
            load_json(special)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a Unix thing")
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_shapes_file_that_is_a_fifo_or_device_is_a_usage_error(cli, write, tmp_path: Path, special: str) -> None:
    shapes = tmp_path / "shapes.json"
    if special == "fifo":
        os.mkfifo(shapes)
    else:
        shapes = Path(special)
    result = cli("check", write("a.py", GOOD), "--shapes", shapes)
    assert result.exit_code == 2 and "not a regular file" in result.output


@pytest.mark.parametrize(
    "payload",
    ['{"n": ' + "9" * 400 + "}", '{"n": 1e400}', '{"n": NaN}', "[" * 5000 + "]" * 5000, "{}", "null"],
)
def test_damaged_json_is_refused_with_a_reason(tmp_path: Path, payload: str) -> None:
    path = tmp_path / "data.json"
    path.write_text(payload)
    try:
        data = load_json(path)
    except UnsafeFile:
        return
    assert data in ({}, None)  # well-formed: the caller checks its shape


@pytest.mark.parametrize(
    "payload",
    ['{"findings": [], "error": null, "candidates": [], "x": ' + "9" * 400 + "}", "[" * 5000, '{"findings": {}}', "Infinity"],
)
def test_a_damaged_cache_entry_is_ignored_reported_once_and_replaced(tmp_path: Path, capsys, payload: str) -> None:
    source = tmp_path / "a.py"
    source.write_text(GOOD)
    first = check_paths([source], use_config=False, jobs=1)
    entries = list((Path(os.environ["XDG_CACHE_HOME"]) / "gpuadvisor" / "check").rglob("*.json"))
    assert len(entries) == 1 and [f.rule for f in first.findings] == ["GPU102"]
    entries[0].write_text(payload)
    for _ in range(2):
        again = check_paths([source], use_config=False, jobs=1)
        assert [f.rule for f in again.findings] == ["GPU102"] and again.errors == []
    assert capsys.readouterr().err.count("ignoring damaged file") == 1
    assert json.loads(entries[0].read_text())["findings"]  # rewritten with the real result


def test_damaged_calibration_and_model_files_are_rebuilt(isolated_cache: Path) -> None:
    from gpuadvisor.prediction import local, model

    for damaged in ('{"name": "x", "cores": Infinity}', "[" * 5000):
        local.calibration_file().parent.mkdir(parents=True, exist_ok=True)
        local.calibration_file().write_text(damaged)
        assert local.local_cpu().cores > 0
    path = model.cache_file(model.model_key())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": model.model_key(), "sides": {}}))
    assert model.load_model().sides


def test_user_bench_rows_with_absurd_numbers_are_skipped(tmp_path: Path) -> None:
    from gpuadvisor.prediction.training import load_samples

    rows = tmp_path / "mine.csv"
    rows.write_text(
        "backend,device,op,shape,dtype,median_s,repeats,cpu_name,cpu_cores,gpu_name,library_version,timestamp\n"
        f"numpy,cpu,sum,{'9' * 400},float32,0.1,5,x,4,,1,now\n"
        "numpy,cpu,sum,1000,float32,1e400,5,x,4,,1,now\n"
    )
    assert list(load_samples([rows])) == []


def test_output_never_holds_nan_or_infinity() -> None:
    text = dumps_json({"a": float("nan"), "b": [float("inf"), 1.5], "c": {"d": -float("inf")}})
    assert json.loads(text) == {"a": None, "b": [None, 1.5], "c": {"d": None}}


def test_a_gpu_profile_with_extreme_figures_gives_valid_json(cli, tmp_path: Path) -> None:
    profile = tmp_path / "odd.toml"
    profile.write_text(
        'name = "odd"\nfp32_tflops = 1e-320\nfp64_tflops = 1e-320\nfp16_tflops = 1e-320\n'
        "mem_bandwidth_gbs = 1e308\nmemory_gb = 80\nhost_link_gbs = 1e-320\n"
    )
    result = cli("predict", "matmul", "--shape", "4096x4096", "--shape", "4096x4096", "--gpu", profile, "--format", "json")
    if result.exit_code == 0:
        json.loads(result.stdout, parse_constant=lambda name: pytest.fail(f"{name} in JSON output"))
    else:
        assert result.exit_code == 2


@pytest.mark.parametrize("shape", [[1] * 5000, None])
def test_a_shapes_file_with_absurd_numbers_is_a_clear_error(cli, write, tmp_path: Path, shape) -> None:
    from gpuadvisor.analysis.facts.observations import SHAPES_FORMAT

    source = write("a.py", GOOD)
    observation = {"shape": shape, "dtype": "float32", "library": "numpy"} if shape else {"number": 1}
    hits = "1e400" if shape is None else "3"
    text = json.dumps(
        {"format": SHAPES_FORMAT, "files": [{"path": str(source), "sha256": "0", "lines": [
            {"line": 2, "hits": 0, "seconds": 0.1, "signatures": [{"names": {"x": observation}, "hits": 0, "seconds": 0.1}]}
        ]}]}
    ).replace('"hits": 0,', f'"hits": {hits},', 1)
    shapes = write("shapes.json", text)
    result = cli("check", source, "--shapes", shapes)
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_the_cache_is_bounded_least_recently_used_first(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path, "v1", size_limit=1_000)
    from gpuadvisor.analysis.findings.records import FileResult

    for number in range(60):
        cache.put(f"{number:064x}", FileResult("a.py"))
        os.utime(cache._entry(f"{number:064x}"), (number, number))
    os.utime(cache._entry(f"{0:064x}"), (1000, 1000))  # used most recently
    cache.trim(force=True)
    kept = list(tmp_path.rglob("*.json"))
    assert sum(p.stat().st_size for p in kept) <= 1_000
    assert cache._entry(f"{0:064x}") in kept and cache._entry(f"{1:064x}") not in kept


# --- discovery -------------------------------------------------------------------------------


def test_links_to_folders_and_files_outside_the_tree_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs.py").write_text(GOOD)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "mine.py").write_text(GOOD)
    (tree / "vendor").symlink_to(outside)
    (tree / "root").symlink_to("/")
    (tree / "linked.py").symlink_to(outside / "theirs.py")
    report = check_paths([tree], use_config=False, cache=False, jobs=1)
    assert report.files == 1 and report.errors == []
    followed = check_paths([tree / "vendor"], use_config=False, cache=False, jobs=1, follow_links=True)
    assert followed.files == 1


def test_an_unreadable_folder_is_an_error_of_its_own(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "good.py").write_text(GOOD)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "x.py").write_text(GOOD)
    locked.chmod(0)
    if os.geteuid() == 0:  # root reads a mode 000 folder: the refusal is simulated
        real_scandir = os.scandir

        def scandir(path):
            if Path(path) == locked:
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir)
    try:
        report = check_paths([tmp_path], use_config=False, cache=False, jobs=1)
    finally:
        locked.chmod(0o755)
    assert _errors(report) == [("locked", "read")] and report.files == 1


def test_a_folder_tree_1100_levels_deep_is_walked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for _ in range(1100):  # one level at a time: relative steps stay short for the system
        os.mkdir("d")
        os.chdir("d")
    Path("bottom.py").write_text(GOOD)
    os.chdir(tmp_path)
    try:
        report = check_paths(["."], use_config=False, cache=False, jobs=1)
    finally:  # removed bottom up here: pytest's recursive clean-up would hit the recursion limit
        os.chdir(Path(*["d"] * 1100))
        os.remove("bottom.py")
        for _ in range(1100):
            os.chdir("..")
            os.rmdir("d")
    assert report.files == 1 and [f.rule for f in report.findings] == ["GPU102"]


def test_gitignored_files_are_skipped_and_the_summary_says_so(cli, write, tmp_path: Path) -> None:
    write(".gitignore", "generated/\n*_pb2.py\n")
    write("sub/.gitignore", "local.py\n")
    write("train.py", GOOD)
    write("generated/model.py", GOOD)
    write("api_pb2.py", GOOD)
    write("sub/local.py", GOOD)
    write("sub/kept.py", GOOD)
    result = cli("check", tmp_path)
    assert "in 2 files checked" in result.stdout and "2 files skipped by .gitignore" in result.stdout
    report = json.loads(cli("check", tmp_path, "--format", "json").stdout)
    assert report["summary"]["gitignored"] == 2  # generated/ is pruned as a folder, not counted
    assert cli("check", tmp_path / "api_pb2.py").exit_code == 1  # a file named explicitly is checked


def test_the_same_file_twice_is_checked_once(cli, write) -> None:
    path = write("a.py", GOOD)
    report = json.loads(cli("check", path, path, path.parent / "." / "a.py", "--format", "json").stdout)
    assert report["summary"]["files"] == 1 and len(report["findings"]) == 1


# --- outputs and small CLI behaviours ----------------------------------------------------------


def test_sarif_uris_are_percent_encoded_and_absolute_paths_are_file_uris(cli, write, tmp_path: Path) -> None:
    path = write("odd %#? name.py", GOOD)
    sarif = json.loads(cli("check", path, "--format", "sarif").stdout)
    uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("file:///") and uri.endswith("/odd%20%25%23%3F%20name.py")
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert all(rule["helpUri"].endswith(f"/{rule['id']}.md") for rule in rules)
    os.chdir(tmp_path)
    relative = json.loads(cli("check", "odd %#? name.py", "--format", "sarif").stdout)
    assert relative["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "odd%20%25%23%3F%20name.py"


def test_notebook_findings_name_the_cell_instead_of_a_json_line(cli, write) -> None:
    cells = [{"cell_type": "markdown", "source": ["# title\n"]}, {"cell_type": "code", "source": ["import torch\n", "x = [torch.zeros(8).cuda() for _ in range(9)]\n"]}]
    path = write("nb.ipynb", json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    sarif = json.loads(cli("check", path, "--format", "sarif").stdout)
    result = sarif["runs"][0]["results"][0]
    location = result["locations"][0]
    assert "region" not in location["physicalLocation"] and location["logicalLocations"][0]["name"] == "cell 1"
    assert result["properties"] == {"cell": 1, "cellLine": 2}
    github = cli("check", path, "--format", "github").stdout
    assert ",line=" not in github.split("::")[1] and "in cell 1%2C line 2" in github


def test_an_unknown_gpu_in_the_config_is_reported_before_any_file(cli, write) -> None:
    write("pyproject.toml", '[tool.gpuadvisor]\ngpu = "nosuchgpu"\n')
    result = cli("check", write("plain.py", "x = 1\n"))
    assert result.exit_code == 2 and "nosuchgpu" in result.output


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_writing_to_a_full_disk_is_a_clean_error() -> None:
    with open("/dev/full", "w") as full:
        run = subprocess.run([sys.executable, "-m", "gpuadvisor", "rules"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert run.returncode == 1 and "Traceback" not in run.stderr and "No space left" in run.stderr


@pytest.mark.parametrize("stream", [1, 2], ids=["stdout", "stderr"])
def test_a_closed_standard_stream_is_no_traceback(stream: int) -> None:
    """`gpuadvisor check examples >&-`: Python sees the closed stream as None; the check still
    runs, says nothing there, and exits with the code its findings call for."""
    examples = Path(__file__).resolve().parent.parent / "examples"
    other = subprocess.PIPE
    run = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "check", str(examples), "--no-cache"],
        stdout=other if stream == 2 else None, stderr=other if stream == 1 else None,
        preexec_fn=lambda: os.close(stream), text=True, timeout=120,
    )
    seen = run.stderr if stream == 1 else run.stdout
    assert run.returncode == 1 and "Traceback" not in seen


def test_bench_with_an_unknown_backend_is_a_usage_error() -> None:
    run = subprocess.run([sys.executable, "-m", "gpuadvisor", "bench", "--backends", "typo"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "unknown backend: typo" in run.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a Unix thing")
def test_bench_out_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    run = subprocess.run([sys.executable, "-m", "gpuadvisor", "bench", "--quick", "--backends", "numpy", "--out", str(fifo)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "not a regular file" in run.stderr


@pytest.mark.slow  # runs the whole CPU calibration first (~11 s)
def test_calibrate_with_an_unusable_cache_folder_is_a_clean_error(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    env = {**os.environ, "XDG_CACHE_HOME": str(blocker)}
    run = subprocess.run([sys.executable, "-m", "gpuadvisor", "calibrate"], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 2 and "could not be saved" in run.stderr and "Traceback" not in run.stderr
