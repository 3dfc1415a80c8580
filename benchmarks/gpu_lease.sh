#!/usr/bin/env bash
# One device lease, prepared here and run there in one call (training_data/README.md, "Files"):
# the machine's facts, which calls really make the host wait (gpu_sync_truth.py), then the
# bench sweep in stages, each with its own budget, the most wanted rows first. Needs only
# numpy, torch and CuPy there (no libcst, no install): PYTHONPATH=src.
# Usage: OUT=folder bash benchmarks/gpu_lease.sh   (writes at most 8 files into $OUT)
# SYNC_TRUTH=0 skips the sync check (a second GPU of a kind already checked); CALIBRATE=0 skips the host's
# calibration (a host already profiled); B_* set each stage's budget; OPS=a,b limits every stage to those ops;
# SEED_ROWS=file starts from rows already measured on this kind of machine: the sweep skips them (same op,
# shape, dtype, params, CPU and GPU names), so only what they lack is measured.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=src
OUT=${OUT:-/tmp/gpu_lease}
mkdir -p "$OUT"
[ -n "${SEED_ROWS:-}" ] && cp "$SEED_ROWS" "$OUT/rows.csv"
{
  date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; lscpu; nproc
  python3 -c "import numpy; numpy.show_config()"
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'allow_tf32', torch.backends.cuda.matmul.allow_tf32, 'threads', torch.get_num_threads())"
  python3 -m pip list 2>/dev/null | grep -i -E "^(numpy|scipy|torch|cupy|threadpoolctl) "
  # the host's rates as `gpuadvisor calibrate` measures them, for training_data/machines.toml
  [ "${CALIBRATE:-1}" = 1 ] && timeout 60 python3 -c "from gpuadvisor.prediction.local import calibrate; print('calibrate', calibrate())"
} > "$OUT/machine.txt" 2>&1
if [ "${SYNC_TRUTH:-1}" = 1 ]; then
  timeout 120 python3 benchmarks/gpu_sync_truth.py "$OUT/sync_truth.json" > "$OUT/sync.log" 2>&1
fi
bench() { # budget, then bench arguments
  local budget=$1; shift
  [ "$budget" -gt 0 ] || return 0
  echo "== $* (budget ${budget}s) $(date -u +%T)" >> "$OUT/bench.log"
  timeout $((budget + 30)) python3 -m gpuadvisor.bench --out "$OUT/rows.csv" --min-seconds 0.05 --max-call-seconds 0.3 \
    --quiet --budget "$budget" ${OPS:+--ops "$OPS"} "$@" >> "$OUT/bench.log" 2>&1
}
bench "${B_TORCH32:-110}" --backends torch-cuda --dtypes float32
bench "${B_CUPY32:-60}" --backends cupy --dtypes float32
bench "${B_HALF:-25}" --backends torch-cuda --dtypes float16,bfloat16
bench "${B_CUPY_HALF:-0}" --backends cupy --dtypes float16
bench "${B_TORCH64:-40}" --backends torch-cuda --dtypes float64
bench "${B_CUPY64:-25}" --backends cupy --dtypes float64
bench "${B_NUMPY:-70}" --backends numpy --dtypes float32,float64
bench "${B_COMPLEX_TORCH:-0}" --backends torch-cuda --dtypes complex64,complex128
bench "${B_COMPLEX_CUPY:-0}" --backends cupy --dtypes complex64
bench "${B_COMPLEX_NUMPY:-0}" --backends numpy --dtypes complex64,complex128
echo "== done $(date -u +%T)" >> "$OUT/bench.log"
[ -f "$OUT/sync.log" ] && tail -n 30 "$OUT/sync.log"; tail -n 25 "$OUT/bench.log"; wc -l "$OUT/rows.csv"
