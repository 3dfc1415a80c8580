"""Predictions inside `check`: gpu-candidate / gpu-slower-than-cpu findings, sweeps, pictures."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from tests.conftest import REPO

NUMPY_PIPELINE = """
import numpy as np
N = 16384
rng = np.random.default_rng(0)
a = rng.standard_normal((N, N), dtype=np.float32)
w = np.load("weights.npy")
c = a @ a.T
tiny = np.ones(16) * 2.0
unknown = w @ w
"""
TINY_GPU = """
import torch
m = torch.randn(3, 3, device="cuda")
big = torch.randn(8192, 8192, device="cuda")
for frame in range(1000):
    inv = torch.linalg.inv(m)
    prod = big @ big
once = torch.linalg.inv(m)
"""


def findings(cli, path, *extra) -> list[dict]:
    result = cli("check", path, "--format", "json", *extra)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


def test_big_numpy_matmul_is_a_gpu_candidate_with_its_prediction(cli, write) -> None:
    (finding,) = findings(cli, write("pipeline.py", NUMPY_PIPELINE), "--select", "gpu-candidate")
    assert (finding["rule"], finding["line"], finding["severity"]) == ("GPU701", 6, "info")
    assert finding["message"].startswith("16384x16384 @ 16384x16384 float32 matmul")
    prediction = finding["prediction"]
    assert prediction["op"] == "matmul" and prediction["gpu"] == "h100-sxm" and prediction["speedup"] >= 3
    assert "to copy the result back" in finding["message"]  # the inputs come from an RNG: no copy in
    assert "create them on the GPU" in finding["suggestion"]


def test_threshold_hardware_and_config(cli, write, tmp_path) -> None:
    path = write("pipeline.py", NUMPY_PIPELINE)
    assert findings(cli, path, "--select", "GPU701", "--min-speedup", "100000") == []
    (finding,) = findings(cli, path, "--select", "GPU701", "--gpu", "t4", "--cpu", "laptop")
    assert finding["prediction"]["gpu"] == "t4" and "T4" in finding["message"]
    write("pyproject.toml", '[tool.gpuadvisor]\ngpu = "rtx4090"\ngpu-candidate-threshold = 2.0\n')
    (finding,) = findings(cli, path, "--select", "GPU701", "--cpu", "laptop")
    assert finding["prediction"]["gpu"] == "rtx4090"
    assert cli("check", path, "--gpu", "no-such-gpu").exit_code == 2


def test_tiny_gpu_work_is_slower_than_cpu_and_big_gpu_work_is_not(cli, write) -> None:
    got = findings(cli, write("tiny.py", TINY_GPU), "--select", "GPU702", "--cpu", "laptop")
    assert [(f["rule"], f["line"]) for f in got] == [("GPU702", 5)]
    assert "slower" in got[0]["message"] and got[0]["prediction"]["data_on"] == "device"


def test_unknown_shapes_stay_silent(cli, write) -> None:
    code = "import numpy as np\n\ndef f(a, b):\n    return np.sin(a) @ b\n\nx = np.load('x.npy')\ny = x @ x.T\n"
    assert findings(cli, write("unknown.py", code), "--select", "GPU7") == []


def test_predict_sweep_reports_the_crossover_and_draws_it(cli, tmp_path) -> None:
    svg = tmp_path / "matmul.svg"
    result = cli("predict", "matmul", "--sweep", "--gpu", "a100-80gb", "--plot", svg)
    assert result.exit_code == 0
    assert "The GPU wins from" in result.stdout
    text = svg.read_text()
    assert text.startswith("<svg") and text.count('class="series"') == 3 and "crossover" in text and "A100" in text
    data = json.loads(cli("predict", "add", "--sweep", "--format", "json").stdout)
    assert len(data["predictions"]) > 5 and "crossover" in data
    assert cli("predict", "add", "--plot", tmp_path / "x.svg").exit_code == 2



@pytest.mark.parametrize(
    ("op", "first_shapes"),
    [("add", [[16], [16]]), ("mul", [[16], [16]]), ("fft2", [[16, 16]]), ("inv", [[16, 16]]), ("matmul", [[16, 16], [16, 16]])],
)
def test_a_sweep_runs_each_op_on_the_operands_it_takes(cli, op: str, first_shapes: list[list[int]]) -> None:
    """Element-wise ops sweep two vectors of n elements; FFT2 and factorisations one n x n matrix."""
    data = json.loads(cli("predict", op, "--sweep", "--format", "json").stdout)
    assert data["predictions"][0]["shapes"] == first_shapes

def _decode_png(data: bytes) -> tuple[int, int, int, bytes]:
    """Width, height, bytes per pixel, raw pixels of an 8-bit RGB(A) non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and color in (2, 6)
            channels = 4 if color == 6 else 3
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    out, prev = bytearray(), bytearray(stride)
    for row in range(height):
        kind, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1 : (row + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        out += line
        prev = line
    return width, height, channels, bytes(out)


def _count_color(pixels: bytes, channels: int, rgb: tuple[int, int, int]) -> int:
    return sum(
        1 for i in range(0, len(pixels), channels) if all(abs(pixels[i + k] - rgb[k]) < 12 for k in range(3))
    )


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.slow  # starts a headless chromium (~11 s)
@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (Debian package chromium; .ci/run installs it)")
def test_html_report_renders_its_charts_in_a_real_browser(cli, tmp_path) -> None:
    report = tmp_path / "report.html"
    result = cli("check", REPO / "examples" / "spectral_features.py", REPO / "examples" / "kalman_cupy.py", "--format", "html")
    report.write_text(result.stdout, encoding="utf-8")
    html = result.stdout
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "<script" not in html
    assert html.count('class="bars"') >= 4
    shot = tmp_path / "shot.png"
    profile = tmp_path / "profile"
    subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", f"--screenshot={shot}", "--window-size=1200,2400", report.as_uri(),
        ],
        capture_output=True,
        timeout=120,
    )
    width, height, channels, pixels = _decode_png(Path(shot).read_bytes())
    assert (width, height) == (1200, 2400)
    gpu_blue = _count_color(pixels, channels, (0x1F, 0x77, 0xB4))
    cpu_grey = _count_color(pixels, channels, (0x7F, 0x7F, 0x7F))
    assert gpu_blue > 200 and cpu_grey > 200, (gpu_blue, cpu_grey)


# A tiny numpy file checked without loading numpy or the model: tests/test_cli.py's start-up probe.


def test_tiny_gpu_operations_of_one_line_make_one_gpu702_finding(cli, write) -> None:
    path = write(
        "kalman.py",
        """
        import cupy as cp
        F = cp.eye(4)
        P = cp.eye(4)
        Q = cp.eye(4)
        for step in range(10_000):
            P = F @ P @ F.T + Q
        """,
    )
    (finding,) = findings(cli, path, "--select", "GPU702")
    assert finding["line"] == 6 and finding["column"] == 8
    assert finding["message"].startswith("2 GPU operations on this line (4x4 @ 4x4 float64 matmul; 4x4 float64 elementwise")
    assert finding["prediction"]["op"] in ("matmul", "expr")
TORCH_FLOAT32_PRODUCT = """
import torch
{switch}
a = torch.randn(8192, 8192)
c = a @ a
"""


@pytest.mark.parametrize(
    ("switch", "tf32"),
    [
        ("", False),
        ("torch.backends.cuda.matmul.allow_tf32 = True", True),
        ('torch.set_float32_matmul_precision("high")', True),
        ('torch.set_float32_matmul_precision("highest")', False),
        ("# torch.backends.cuda.matmul.allow_tf32 = True", False),
        ("torch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cuda.matmul.allow_tf32 = False", False),
    ],
)
def test_check_costs_float32_products_on_tf32_when_the_file_allows_it(cli, write, switch: str, tf32: bool) -> None:
    """H100: TF32 tensor cores run an 8192^3 float32 product several times faster than FP32."""
    (finding,) = findings(cli, write("train.py", TORCH_FLOAT32_PRODUCT.format(switch=switch)), "--select", "gpu-candidate")
    gpu_ms = finding["prediction"]["gpu_seconds"] * 1e3
    assert (gpu_ms < 6.0) == tf32, gpu_ms


def test_an_op_read_from_its_first_operand_is_predicted_whatever_follows_it() -> None:
    """`np.fft.fft(x, n)` and `np.sort(x, 0)`: the size or axis given after the array is no
    second operand; the prediction is the array's."""
    from gpuadvisor import check_source

    code = (
        "import numpy as np\nN = 1 << 26\nrng = np.random.default_rng(0)\n"
        "signal = rng.standard_normal(N, dtype=np.float32)\nspectrum = np.fft.fft(signal, N)\nranked = np.sort(signal, 0)\n"
    )
    found = [(f.line, f.message.split(":")[0]) for f in check_source(code, select="GPU701")]
    assert found == [(5, "67108864 float32 fft"), (6, "67108864 float32 sort")]


@pytest.mark.parametrize(
    ("method", "function", "expression"),
    [
        ("a.clip(0.25, 0.75)", "np.clip(a, 0.25, 0.75)", "clip(x0, 0.25, 0.75)"),
        ("a.round(3)", "np.round(a, 3)", "round(x0, 3)"),
        ("t.clamp(0.0, 6.0)", "torch.clamp(t, 0.0, 6.0)", "clamp(x0, 0.0, 6.0)"),
        ("t.add(1.5)", "torch.add(t, 1.5)", "add(x0, 1.5)"),
        ("t.maximum(t * 0.5)", "torch.maximum(t, t * 0.5)", "maximum(x0, x0 * 0.5)"),
    ],
)
def test_an_elementwise_method_is_shown_as_its_function_with_the_array_first(method: str, function: str, expression: str) -> None:
    """GPU701 prints an elementwise chain as function calls: `a.clip(lo, hi)` reads as
    `clip(x0, lo, hi)`, the same text as `np.clip(a, lo, hi)`, its bounds after the array."""
    from gpuadvisor import check_source

    setup = "import numpy as np\nimport torch\nN = 16384\na = np.random.rand(N, N)\nt = torch.rand(N, N)\n"
    root = "np.sqrt(a)" if method.startswith("a.") else "torch.sqrt(t)"  # enough work to be worth a GPU
    shown = []
    for call in (method, function):
        (finding,) = check_source(f"{setup}b = {root} + {call} * 3.0\n", select="GPU701", cpu="laptop")
        shown.append(finding.message.split("`")[1])
    assert shown == [f"sqrt(x0) + ({expression} * 3.0)"] * 2
