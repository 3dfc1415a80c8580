"""How close `gpuadvisor profile`'s GPU estimate comes to the same script run on a real GPU.

Reads the measurements benchmarks/profile_gpu_truth.py made on a lent GPU (benchmarks/gpu_truth/profile_*.json:
each script's CuPy / CUDA-torch port timed there, and the tool's report for the original made on the same host) and
prints, per script, the measured run (its own work, imports aside, the best warm run) beside the tool's whole-run
estimate, their ratio, and the summary: median |log10(estimate / measured)|, how many within 2x and 3x.

--current re-runs the tool here (this checkout, --gpu from the file) on the originals instead of reading the recorded
reports: the lines the report keeps at CPU time are then this machine's, not the GPU host's. --lines N also lists the N
lines with the largest gap (the port's per-line times include a device synchronisation at each line).

--reports FILE scores the reports of a later `profile_gpu_truth.py --tool-only` run on the GPU host (gpu_truth/tool_after_h200.json)
against the same measurements.

Usage: python benchmarks/profile_gpu_accuracy.py [--current | --reports FILE] [--lines N] [FILE ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from profile_gpu_truth import CASES, RECORDING  # noqa: E402

DEFAULT_FILES = sorted((HERE / "gpu_truth").glob("profile_*.json"))
#: The tool's reports alone, made on the GPU host by a later commit (profile_gpu_truth.py --tool-only).


def _estimate(report: dict) -> float:
    return max(report["script_gpu_seconds"] - report["import_seconds"], 0.0)


def _current_report(name: str, gpu: str) -> dict:
    script, _, include, argv = CASES[name]
    if name == "signal_clusters" and not RECORDING.exists():
        subprocess.run([sys.executable, str(script), "--make-data", str(RECORDING)], check=True)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "report.json"
        command = [sys.executable, "-m", "gpuadvisor", "profile", "--gpu", gpu, "--format", "json", "-o", str(out), "--save-shapes", ""]
        command += ["--include", str(include)] if include is not None else []
        subprocess.run([*command, str(script), *argv], capture_output=True, text=True, check=False)
        return json.loads(out.read_text())


def _line_gaps(measured: dict, report: dict, count: int) -> list[str]:
    tool = {f"{Path(line['path']).name}:{line['line']}": line for line in report["lines"]}
    seen = {f"{Path(key.split(':')[0]).name}:{key.split(':')[1]}": value for key, value in measured["lines"].items()}
    gaps = []
    for key in set(tool) | set(seen):
        measured_s = seen.get(key, {}).get("seconds", 0.0)
        line = tool.get(key)
        estimated_s = line["gpu_seconds"] if line else float("nan")
        gaps.append((abs(math.log10(max(measured_s, 1e-6) / max(estimated_s, 1e-6))) if line else math.inf, key, measured_s, estimated_s, line))
    gaps.sort(key=lambda gap: -(gap[2] if gap[0] == math.inf else max(gap[2], gap[3])) * min(gap[0], 3))
    return [
        f"    {key:<24} measured {measured_s * 1e3:8.2f} ms   estimated {estimated_s * 1e3:8.2f} ms   {(line or {}).get('code', '(not in the report)')[:60]}"
        for _, key, measured_s, estimated_s, line in gaps[:count]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--current", action="store_true")
    parser.add_argument("--lines", type=int, default=0)
    parser.add_argument("--reports", type=Path, help="score the reports in this --tool-only file instead of the recorded ones")
    options = parser.parse_args()
    later = json.loads(options.reports.read_text())["scripts"] if options.reports else {}
    errors = []
    print(f"{'script':<16} {'measured':>10} {'estimated':>10} {'est/meas':>9}  source")
    for path in options.files:
        recorded = json.loads(path.read_text())
        for name, entry in recorded["scripts"].items():
            measured = entry["port"]
            if "warm" not in measured:
                continue
            if options.reports and name not in later:
                continue
            report = later[name]["tool"]["report"] if options.reports else entry["tool"]["report"]
            if options.current:
                report = _current_report(name, report["gpu"])
            ratio = _estimate(report) / measured["warm"]
            errors.append(abs(math.log10(ratio)))
            print(f"{name:<16} {measured['warm'] * 1e3:>8.1f}ms {_estimate(report) * 1e3:>8.1f}ms {ratio:>8.2f}x  {path.name} ({recorded['device']['gpu']})")
            if options.lines:
                print("\n".join(_line_gaps(measured, report, options.lines)))
    within = lambda factor: sum(error <= math.log10(factor) for error in errors)  # noqa: E731
    print(f"{len(errors)} scripts: median |log10(estimated / measured)| {statistics.median(errors):.3f} "
          f"({10 ** statistics.median(errors):.2f}x); within 2x {within(2)}, within 3x {within(3)}; "
          f"{'re-run here' if options.current else f'reports of {options.reports.name}' if options.reports else 'as recorded on the GPU host'}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
