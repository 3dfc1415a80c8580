"""`gpuadvisor profile`: measured lines, the shapes they ran with, predictions, and failures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from gpuadvisor.analysis.facts.observations import load_observations
from gpuadvisor.profiling.session import UserFiles, run_traced


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(autouse=True)
def shared_model(model_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One trained model for the whole module (each test would otherwise train its own)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(model_cache))


KMEANS = """
    import sys
    import numpy as np

    class Model:
        def __init__(self, centers):
            self.centers = centers

        def distances(self, points):
            return ((points[:, None, :] - self.centers[None, :, :]) ** 2).sum(axis=2)

    def main(path, rounds):
        points = np.load(path)
        model = Model(points[:4].copy())
        for _ in range(rounds):
            labels = model.distances(points).argmin(axis=1)
        gram = points.T @ points
        print("done", gram.shape, labels.shape)

    main(sys.argv[1], int(sys.argv[2]))
"""


@pytest.fixture
def kmeans(write, tmp_path: Path) -> Path:
    np.save(tmp_path / "points.npy", np.random.default_rng(0).random((5000, 8), dtype=np.float32))
    return write("kmeans.py", KMEANS)


def test_lines_get_the_shapes_they_ran_with_and_a_prediction(cli, kmeans: Path, tmp_path: Path) -> None:
    report_file = tmp_path / "report.json"
    result = cli("profile", "-f", "json", "-o", report_file, "--save-shapes", tmp_path / "shapes.json", kmeans, tmp_path / "points.npy", "3")
    assert result.exit_code == 0
    assert "done (8, 8) (5000,)" in result.stdout  # the script's own output, its own argv
    report = json.loads(report_file.read_text())
    lines = {line["line"]: line for line in report["lines"]}
    distances = lines[9]  # inside a method, through self.centers
    assert distances["hits"] == 3 and distances["cpu_seconds"] > 0
    described = [op["description"] for op in distances["operations"] if op["op"] != "measured"]
    assert described == ["5000x4x8 float32 elementwise `(x0 - x1) ** 2`", "5000x4x8 float32 sum"]
    # on a machine so busy that the line takes 100x the model's CPU time, the rest is estimated too
    assert distances["basis"] in ("model", "model + measured")
    assert lines[16]["operations"][0]["shapes"] == [[8, 5000], [5000, 8]]
    assert all(line["gpu_seconds"] > 0 for line in report["lines"])
    assert report["exit_code"] == 0 and report["script_gpu_seconds"] > 0


def test_text_report_sorted_by_time_with_a_whole_script_summary(cli, kmeans: Path, tmp_path: Path) -> None:
    result = cli("profile", "--save-shapes", "", kmeans, tmp_path / "points.npy", "2")
    assert result.exit_code == 0
    assert "kmeans.py:9" in result.stdout and "5000x4x8 float32 sum" in result.stdout
    assert "for the whole run" in result.stdout


def test_html_report_has_an_axis_totals_context_and_a_sortable_table(cli, kmeans: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report.html"
    assert cli("profile", "-f", "html", "-o", out, "--save-shapes", "", kmeans, tmp_path / "points.npy", "1").exit_code == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "run time (seconds, linear scale)" in page
    assert "<dt>not predicted</dt>" in page and "th data-sort" in page and "<script>" in page
    assert "<td>kmeans.py:9</td>" in page and str(tmp_path) not in page.split("<h2>Whole run")[1]  # relative paths
    assert "&gt;    9  " in page and "def distances(self, points):" in page  # the line in its source context


def test_script_errors_are_the_scripts_own(cli, write, capsys: pytest.CaptureFixture[str]) -> None:
    script = write("broken.py", """
        import numpy as np
        a = np.ones((100, 100))
        b = a @ a
        raise RuntimeError("boom in the script")
    """)
    result = cli("profile", "--save-shapes", "", script)
    assert result.exit_code == 1  # what `python broken.py` exits with
    assert "broken.py:3" in result.stdout  # what ran before the error is still reported
    errors = result.stderr if hasattr(result, "stderr") else ""
    assert "RuntimeError: boom in the script" in errors
    assert "gpuadvisor" not in errors.split("Traceback", 1)[-1].split("RuntimeError")[0]  # none of our frames


def test_exit_code_and_interrupt(cli, write) -> None:
    assert cli("profile", "--save-shapes", "", write("leave.py", "import sys\nsys.exit(3)\n")).exit_code == 3
    interrupted = write("stop.py", """
        import numpy as np
        x = np.ones(1000) * 2.0
        raise KeyboardInterrupt
    """)
    result = cli("profile", "--save-shapes", "", interrupted)
    assert result.exit_code == 130
    assert "Interrupted" in result.stdout and "stop.py:2" in result.stdout


def test_missing_script_is_a_usage_error(cli, tmp_path: Path) -> None:
    result = cli("profile", tmp_path / "nope.py")
    assert result.exit_code == 2 and "no such script" in result.stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [(["--gpu", "h100-sxn"], "h100-sxn"), (["-o", "no/such/folder/r.txt"], "cannot write"), (["--include", "nope"], "nope")],
)
def test_bad_options_stop_before_the_script_runs(cli, write, tmp_path: Path, monkeypatch, options: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    path = write("marks.py", "print('the script ran')\n")
    result = cli("profile", "--save-shapes", "", *options, path)
    assert result.exit_code == 2 and message in result.stderr
    assert "the script ran" not in result.stdout


def test_a_notebook_is_refused_in_one_line(cli, tmp_path: Path) -> None:
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    result = cli("profile", "--save-shapes", "", notebook)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1 and "notebook" in result.stderr


BIG_PRODUCT = """
    import sys
    import numpy as np
    a = np.load(sys.argv[1])
    c = a @ a.T
"""


def test_check_reuses_saved_shapes_for_predictions(cli, write, tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.ones((4000, 4000), dtype=np.float32))
    script = write("product.py", BIG_PRODUCT)
    shapes = tmp_path / "shapes.json"
    assert cli("profile", "--save-shapes", shapes, script, tmp_path / "a.npy").exit_code == 0
    saved = load_observations(shapes)[str(script.resolve())]
    assert saved.lines[4].hits == 1
    without = json.loads(cli("check", "-f", "json", "--no-config", script).stdout)
    assert without["findings"] == []  # static analysis cannot know what np.load returns
    found = json.loads(cli("check", "-f", "json", "--no-config", "--cpu", "laptop", "--shapes", shapes, script).stdout)
    assert [(f["rule"], f["line"]) for f in found["findings"]] == [("GPU701", 4)]
    assert "4000x4000 @ 4000x4000 float32 matmul" in found["findings"][0]["message"]
    script.write_text(script.read_text() + "d = c + 1\n")  # changed since the run: shapes not trusted
    changed = json.loads(cli("check", "-f", "json", "--no-config", "--cpu", "laptop", "--shapes", shapes, script).stdout)
    assert changed["findings"] == []


@pytest.mark.slow  # profiles a real 6000^3 product (~2-3 s)
def test_check_with_shapes_gives_a_line_the_cpu_time_profile_measured(cli, write, tmp_path: Path) -> None:
    # 6000^3: the measured one-off product must save GPU701's quarter second on many cores too
    np.save(tmp_path / "a.npy", np.ones((6000, 6000), dtype=np.float32))
    script = write("product.py", BIG_PRODUCT)
    shapes, report_file = tmp_path / "shapes.json", tmp_path / "report.json"
    ran = cli("profile", "-f", "json", "-o", report_file, "--save-shapes", shapes, script, tmp_path / "a.npy")
    assert ran.exit_code == 0
    profiled = next(line for line in json.loads(report_file.read_text())["lines"] if line["line"] == 4)
    found = json.loads(cli("check", "-f", "json", "--no-config", "--shapes", shapes, script).stdout)
    [finding] = [f for f in found["findings"] if f["line"] == 4]
    prediction = finding["prediction"]
    assert prediction["cpu_seconds"] == pytest.approx(profiled["cpu_seconds"] / profiled["hits"])
    assert prediction["basis"]["cpu"] == "measured"
    assert prediction["speedup"] == pytest.approx(prediction["cpu_seconds"] / (prediction["gpu_seconds"] + prediction["transfer_seconds"]))


def test_check_treats_a_function_called_in_a_loop_elsewhere_as_repeated(cli, write, tmp_path: Path) -> None:
    """A 600x600 product saves ~2 ms a run: not worth porting once, worth it when run 20 times,
    which only the run can tell (the loop is in another file, and this one never names NumPy)."""
    np.save(tmp_path / "x.npy", np.ones((600, 600), dtype=np.float32))
    steps = write("steps.py", """
        def project(x, w):
            return x @ w
    """)
    script = write("main.py", """
        import sys
        import numpy as np
        from steps import project
        x = np.load(sys.argv[1])
        for _ in range(20):
            y = project(x, x)
    """)
    shapes = tmp_path / "shapes.json"
    assert cli("profile", "--save-shapes", shapes, script, tmp_path / "x.npy").exit_code == 0
    saved = json.loads(shapes.read_text())

    def measured(runs: int) -> None:
        """The saved runs as if each product had taken a laptop's 2 ms (check uses measured times)."""
        for entry in saved["files"]:
            for line in entry["lines"]:
                line["hits"], line["seconds"] = runs, runs * 2e-3
        shapes.write_text(json.dumps(saved))

    measured(20)
    found = json.loads(cli("check", "-f", "json", "--no-config", "--shapes", shapes, steps).stdout)
    assert [(f["rule"], f["line"]) for f in found["findings"]] == [("GPU701", 2)]
    measured(1)
    once = json.loads(cli("check", "-f", "json", "--no-config", "--shapes", shapes, steps).stdout)
    assert once["findings"] == []


@pytest.mark.parametrize("content", ["not json", "[]", '{"format": "gpuadvisor-shapes/1", "files": [{"path": 5}]}'])
def test_bad_shapes_file_is_a_clear_usage_error(cli, write, tmp_path: Path, content: str) -> None:
    shapes = tmp_path / "bad.json"
    shapes.write_text(content)
    result = cli("check", "--shapes", shapes, write("x.py", "x = 1\n"))
    assert result.exit_code == 2 and "shapes file" in result.stderr


def test_library_frames_are_not_traced(tmp_path: Path, write) -> None:
    script = write("only.py", """
        import json
        import numpy as np
        x = np.ones((10, 10))
        y = x + json.loads("1")
    """)
    users = UserFiles(tmp_path)
    outcome = run_traced(str(script), [], False, users)
    assert outcome.exit_code == 0
    assert list(outcome.files) == [str(script.resolve())]
    assert not users.is_users(json.__file__)


BACKENDS = ["settrace", *(["monitoring"] if hasattr(sys, "monitoring") else [])]


@pytest.mark.parametrize("backend", BACKENDS)
def test_generators_exceptions_and_exclusive_time(tmp_path: Path, write, backend: str) -> None:
    """Both event sources agree: generator resumes, a watched statement that raises, and the
    time of a user function called from a watched line taken off that line."""
    script = write("flow.py", """
        import time
        import numpy as np

        def pause(seconds):
            time.sleep(seconds)
            return 1.0

        def chunks(x):
            for i in range(4):
                yield x[i]

        x = np.ones((4, 100))
        total = 0.0
        for chunk in chunks(x):
            total = total + chunk.sum()
        try:
            bad = np.ones(3) @ np.ones(4)
        except ValueError:
            pass
        y = x + pause(0.05)
    """)
    outcome = run_traced(str(script), [], False, UserFiles(tmp_path), backend)
    assert outcome.exit_code == 0
    records = outcome.files[str(script.resolve())][1]
    assert records[15].hits == 4
    assert records[17].hits == 1
    assert records[20].hits == 1 and records[20].seconds < 0.03 < 0.05 < outcome.wall_seconds
    assert {name for name, _ in next(iter(records[15].signatures))} == {"total", "chunk"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_user_code_in_other_threads_is_noticed_not_measured(tmp_path: Path, write, backend: str) -> None:
    script = write("threads.py", """
        import threading
        import numpy as np

        def work():
            a = np.ones((50, 50))
            b = a @ a

        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        c = np.ones(10) + 1
    """)
    outcome = run_traced(str(script), [], False, UserFiles(tmp_path), backend)
    records = outcome.files[str(script.resolve())][1]
    assert outcome.other_threads and 11 in records and not {5, 6} & set(records)  # the thread's lines: not measured
    alone = run_traced(str(write("alone.py", "import numpy as np\nc = np.ones(10) + 1\n")), [], False, UserFiles(tmp_path), backend)
    assert not alone.other_threads


def test_torch_module_parameters_and_buffers_give_shapes(cli, write, tmp_path: Path) -> None:
    """A torch model on the CPU: `self.weight` (a Parameter) and `self.scale` (a buffer) live in
    the module's own tables, read without calling `Module.__getattr__`."""
    torch = pytest.importorskip("torch")
    torch.save(torch.randn(256, 64), tmp_path / "data.pt")
    script = write("mlp.py", """
        import sys
        import torch

        class Encoder(torch.nn.Module):
            def __init__(self, width):
                super().__init__()
                self.weight = torch.nn.Parameter(torch.randn(width, width))
                self.register_buffer("scale", torch.ones(width))

            def forward(self, x):
                return torch.relu(x @ self.weight) * self.scale

        data = torch.load(sys.argv[1])
        model = Encoder(data.shape[1])
        with torch.no_grad():
            for _ in range(3):
                out = model(data)
    """)
    report_file = tmp_path / "report.json"
    assert cli("profile", "-f", "json", "-o", report_file, "--save-shapes", "", script, tmp_path / "data.pt").exit_code == 0
    lines = {line["line"]: line for line in json.loads(report_file.read_text())["lines"]}
    assert lines[11]["hits"] == 3
    assert [(op["description"], op["library"]) for op in lines[11]["operations"]][:1] == [("256x64 @ 64x64 float32 matmul", "torch")]


def test_basic_indexing_keeps_known_shapes_and_unknown_counts_stay_unknown() -> None:
    import libcst as cst

    from gpuadvisor.analysis.facts.walker import gather_facts

    module = cst.parse_module(
        "import numpy as np\n"
        "p = np.random.rand(1000, 16)\n"
        "c = np.random.rand(8, 16)\n"
        "d = ((p[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)\n"
        "e = p[..., None] * 2.0\n"
        "f = p[:100:2] * 3.0\n"
        "g = p[index] * 2.0\n"
        "h = np.linspace(0, 1, n + 1) * 0.5\n"
    )
    found = [(op.op, op.shapes) for op, _ in gather_facts(module).array_operations]
    assert found == [
        ("expr", ((1000, 8, 16),)), ("sum", ((1000, 8, 16),)), ("expr", ((1000, 16, 1),)), ("expr", ((50, 16),)),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_generator_expression_counts_the_runs_of_its_statement(tmp_path: Path, write, backend: str) -> None:
    script = write("gen.py", """
        import numpy as np
        data = np.ones((9, 50))
        for _ in range(6):
            total = sum(float((row * 2).sum()) for row in data)
        squares = [row @ row for row in data]
    """)
    outcome = run_traced(str(script), [], False, UserFiles(tmp_path), backend)
    records = outcome.files[str(script.resolve())][1]
    assert records[4].hits == 6 and records[5].hits == 1  # as Python runs them, not per resume


def test_the_tracer_leaves_the_interpreter_as_it_found_it(tmp_path: Path, write) -> None:
    """Python's module loader (stood in for while the run lasts) and the trace hook come back."""
    import importlib._bootstrap as bootstrap

    loader, hook = bootstrap._load_unlocked, sys.gettrace()
    script = write("loads.py", "import json\nimport numpy as np\nvalue = np.ones(4) * len(json.dumps([1]))\n")
    outcome = run_traced(str(script), [], False, UserFiles(tmp_path), backend="settrace")
    assert outcome.exit_code == 0 and outcome.files
    assert bootstrap._load_unlocked is loader and sys.gettrace() is hook


def test_what_the_tracer_records_of_a_value_says_where_it_lives() -> None:
    """Numbers and NumPy arrays live on the host, a CPU torch tensor too; booleans and objects
    that are no array are not recorded."""
    from gpuadvisor.profiling.tracer import observe

    number = observe(3)
    assert number is not None and number.number == 3.0 and not number.on_gpu
    scalar = observe(np.float32(2.5))
    assert scalar is not None and scalar.number == 2.5 and not scalar.on_gpu
    array = observe(np.zeros((4, 8), dtype=np.float32))
    assert array is not None and (array.shape, array.dtype, array.library, array.on_gpu) == ((4, 8), "float32", "numpy", False)
    assert observe(True) is None and observe("text") is None
    torch = pytest.importorskip("torch")
    tensor = observe(torch.zeros(2, 3))
    assert tensor is not None and (tensor.shape, tensor.library, tensor.on_gpu) == ((2, 3), "torch", False)
