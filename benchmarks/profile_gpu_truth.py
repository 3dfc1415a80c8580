"""What `gpuadvisor profile`'s GPU estimates should have said: the profile benchmark scripts run on a real GPU.

Runs on a GPU machine with NumPy, SciPy, CuPy and torch only (no LibCST, no install). Each script of
benchmarks/profile_scripts/ has a port in profile_scripts/gpu_ports/ (CuPy for NumPy/SciPy, CUDA for
torch), written line for line so that a line number means the same statement in both; the port keeps on
the host what a user porting it would keep there (tfidf_search's Python tokenising).

For each port, in a child process with the libraries already imported and the CUDA context made:
- ``first``: the first run of the script's own work (CuPy compiles its kernels and cuFFT / cuBLAS /
  cuSPARSE make their plans here);
- ``warm``: the best of the next ``--runs`` runs, the figure the profile's estimate is compared with
  (its estimate leaves one-time start-up out, as it leaves imports out);
- ``lines``: one more run timed per line (the device synchronised at every line event, so each line's
  time includes the GPU work it queued; the sum is above ``warm`` by those waits).

A device synchronisation comes before every clock read. With ``--tool`` it also runs
``gpuadvisor profile --format json`` on each original script on the same machine (PYTHONPATH=src; LibCST
carried as a wheel), so that the estimate and the measurement share a host for the lines kept on the CPU.
benchmarks/profile_gpu_accuracy.py compares the two.

Usage: python benchmarks/profile_gpu_truth.py OUT.json [--runs 3] [--tool GPU [--tool-only]] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "profile_scripts"
PORTS = SCRIPTS / "gpu_ports"
ROOT = HERE.parent
RECORDING = Path(tempfile.gettempdir()) / "gpuadvisor-recording.npy"

#: name -> (original script, its port, the folder the profile traces besides the script's, arguments)
CASES: dict[str, tuple[Path, Path, Path | None, list[str]]] = {
    "kmeans": (SCRIPTS / "kmeans.py", PORTS / "kmeans.py", None, []),
    "sparse_cg": (SCRIPTS / "sparse_cg.py", PORTS / "sparse_cg.py", None, []),
    "torch_mlp": (SCRIPTS / "torch_mlp.py", PORTS / "torch_mlp.py", None, []),
    "monte_carlo": (SCRIPTS / "monte_carlo.py", PORTS / "monte_carlo.py", None, []),
    "spectral_filter": (SCRIPTS / "spectral_filter.py", PORTS / "spectral_filter.py", None, []),
    "forecast": (
        SCRIPTS / "forecast" / "scripts" / "run.py",
        PORTS / "forecast" / "scripts" / "run.py",
        SCRIPTS / "forecast" / "mylib",
        [],
    ),
    "tfidf_search": (SCRIPTS / "tfidf_search.py", PORTS / "tfidf_search.py", None, []),
    "signal_clusters": (ROOT / "examples" / "signal_clusters.py", PORTS / "signal_clusters.py", None, [str(RECORDING)]),
    # written after the first eight were measured, run on a GPU before the profile changed for them
    "conv_train": (SCRIPTS / "conv_train.py", PORTS / "conv_train.py", None, []),
    "particles": (SCRIPTS / "particles.py", PORTS / "particles.py", None, []),
    "logistic_gd": (SCRIPTS / "logistic_gd.py", PORTS / "logistic_gd.py", None, []),
    # written after the profile changed for the eleven above, measured with the changed profile at first look
    "text_classifier": (SCRIPTS / "text_classifier.py", PORTS / "text_classifier.py", None, []),
    "image_batches": (SCRIPTS / "image_batches.py", PORTS / "image_batches.py", None, []),
}

CHILD = r"""
import io, json, os, runpy, sys, time
from contextlib import redirect_stdout
args = json.loads(sys.argv[1])
import numpy, scipy.sparse, cupy, cupyx, cupyx.scipy.sparse, cupy.fft
try:
    import torch, torch.nn.functional
    if torch.cuda.is_available():
        torch.zeros(1, device="cuda").sum().item()
except ImportError:
    pass
cupy.zeros(1).sum().item()
clock = time.perf_counter
sync = cupy.cuda.runtime.deviceSynchronize
root = os.path.realpath(args["root"])

def run(tracer=None):
    sys.argv = [args["port"], *args["argv"]]
    sync()
    start = clock()
    with redirect_stdout(io.StringIO()) as printed:
        sys.settrace(tracer)
        try:
            runpy.run_path(args["port"], run_name="__main__")
        except SystemExit:
            pass
        finally:
            sys.settrace(None)
    sync()
    return clock() - start, printed.getvalue()

spent, hits, last = {}, {}, [None, 0.0]
def charge(key):
    sync()
    now = clock()
    if last[0] is not None:
        spent[last[0]] = spent.get(last[0], 0.0) + now - last[1]
    if key is not None:
        hits[key] = hits.get(key, 0) + 1
    last[0], last[1] = key, clock()
def local(frame, event, arg):
    if event == "line":
        charge(os.path.relpath(frame.f_code.co_filename, root) + ":" + str(frame.f_lineno))
    elif event == "return":
        charge(None)
    return local
ours = {}
def on_call(frame, event, arg):
    code = frame.f_code
    mine = ours.get(code)
    if mine is None:  # comprehensions and generators are charged to the line that runs them
        comprehension = code.co_name.startswith("<") and code.co_name != "<module>"
        mine = ours[code] = not comprehension and os.path.realpath(code.co_filename).startswith(root + os.sep)
    if mine:
        charge(None)
        return local
    return None

first, printed = run()
warm = [run()[0] for _ in range(args["runs"])]
run(on_call)
lines = {key: {"seconds": spent.get(key, 0.0), "hits": count} for key, count in hits.items()}
print(json.dumps({"first": first, "warm": min(warm), "warm_runs": warm, "printed": printed[-400:], "lines": lines}))
"""


def _device() -> dict[str, str]:
    try:
        import cupy  # noqa: PLC0415  (only on the GPU machine)
        import numpy  # noqa: PLC0415

        properties = cupy.cuda.runtime.getDeviceProperties(0)
        return {"gpu": properties["name"].decode(), "cupy": cupy.__version__, "numpy": numpy.__version__}
    except Exception as error:  # noqa: BLE001  (reported, not raised: the tool half can still run)
        return {"gpu": f"unavailable: {error}"}


def _run_port(name: str, runs: int) -> dict:
    _, port, _, argv = CASES[name]
    root = port.parent.parent if name == "forecast" else port.parent
    payload = json.dumps({"port": str(port), "argv": argv, "runs": runs, "root": str(root)})
    done = subprocess.run([sys.executable, "-c", CHILD, payload], capture_output=True, text=True, timeout=300)
    printed = done.stdout.strip().splitlines()
    if done.returncode != 0 or not printed:
        return {"error": f"exit {done.returncode}: " + (done.stderr or done.stdout)[-3000:]}
    return json.loads(printed[-1])


def _run_tool(name: str, gpu: str) -> dict:
    script, _, include, argv = CASES[name]
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        command = [sys.executable, "-m", "gpuadvisor", "profile", "--gpu", gpu, "--format", "json", "-o", str(report),
                   "--save-shapes", ""]
        if include is not None:
            command += ["--include", str(include)]
        started = time.perf_counter()
        done = subprocess.run([*command, str(script), *argv], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")})
        if not report.exists():
            return {"error": (done.stderr or done.stdout)[-3000:]}
        return {"seconds": time.perf_counter() - started, "report": json.loads(report.read_text())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("names", nargs="*", default=list(CASES))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tool", default="", help="GPU profile name: also run `gpuadvisor profile --gpu NAME` on the originals")
    parser.add_argument("--tool-only", action="store_true", help="run the tool alone (the ports were measured before)")
    options = parser.parse_intermixed_args()
    if "signal_clusters" in options.names and not RECORDING.exists():
        subprocess.run([sys.executable, str(CASES["signal_clusters"][0]), "--make-data", str(RECORDING)], check=True)
    results: dict = {"device": _device(), "scripts": {}}
    for name in options.names:
        entry = {"port": {"error": "not run (--tool-only)"} if options.tool_only else _run_port(name, options.runs)}
        if options.tool:
            entry["tool"] = _run_tool(name, options.tool)
        results["scripts"][name] = entry
        port = entry["port"]
        shown = f"first {port['first']:.3f} s, warm {port['warm'] * 1e3:.1f} ms" if "error" not in port else "ERROR " + port["error"][-300:]
        tool = entry.get("tool", {})
        if "report" in tool:
            shown += f"; tool {tool['report']['script_gpu_seconds'] - tool['report']['import_seconds']:.4f} s (ran {tool['seconds']:.1f} s)"
        elif tool:
            shown += "; tool ERROR " + tool["error"][-300:]
        print(f"{name:<16} {shown}", flush=True)
        Path(options.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
