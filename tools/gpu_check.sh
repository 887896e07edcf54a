#!/usr/bin/env bash
# GPU check (issue 13 item 6): the whole graph on a CUDA machine through the stage functions
# (tools/gpu_check.py -> pipeline.stages.run_stage; no Dagster), recipe cuda-check (cuda-qlora's
# training settings on a ~96M-parameter bootstrap base: no model hub is needed). Prints per-stage
# time and peak CUDA memory, pretraining and QLoRA tokens/s, MFU and the export's round-trip check.
#
# Usage: tools/gpu_check.sh [extra tools.gpu_check flags, e.g. --recipe R --allow-cpu]
# Environment:
#   OUT             where gpu_check.json, gpu_check.log and nvidia_smi.csv go (default ./gpu_check_out)
#   PYTHON          interpreter (default python3)
#   VOX_WHEELS      a folder of wheels installed first with --no-index into /tmp/site (default .whl if it
#                   exists): a machine without a registry gets the packages it lacks this way
#   VOX_TRACKING    on | off; default off when mlflow cannot be imported (pipeline.tracking.NullTracker)
#   GPU_CHECK_STATE state directory, emptied first (default /tmp/vox-gpu-check)
# Exit status: 0 when every stage ran and the export's round trip passed.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
OUT=${OUT:-./gpu_check_out}
STATE=${GPU_CHECK_STATE:-/tmp/vox-gpu-check}
WHEELS=${VOX_WHEELS:-.whl}
mkdir -p "$OUT"

if [ -d "$WHEELS" ] && ls "$WHEELS"/*.whl >/dev/null 2>&1; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$WHEELS"/*.whl || { echo "error: installing the wheels in $WHEELS failed"; exit 2; }
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
if [ -z "${VOX_TRACKING:-}" ]; then
  if "$PYTHON" -c "import mlflow" >/dev/null 2>&1; then export VOX_TRACKING=on; else export VOX_TRACKING=off; fi
fi
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
"$PYTHON" - <<'EOF'
import importlib
for name in ("torch", "transformers", "peft", "trl", "accelerate", "bitsandbytes", "datasets", "pydantic"):
    try:
        print(f"{name} {importlib.import_module(name).__version__}")
    except Exception as exc:  # a report line, not a failure: the run below says what broke
        print(f"{name}: {type(exc).__name__}: {exc}")
EOF
echo "tracking: VOX_TRACKING=$VOX_TRACKING"

rm -rf "$STATE"
smi=""
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  # whole-device memory once a second (CUDA context and bitsandbytes buffers too, beyond torch's counters)
  nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader,nounits -l 1 \
    >"$OUT/nvidia_smi.csv" 2>/dev/null &
  smi=$!
fi
"$PYTHON" -m tools.gpu_check --state "$STATE" --report "$OUT/gpu_check.json" "$@" 2>&1 | tee "$OUT/gpu_check.log"
rc=${PIPESTATUS[0]}
if [ -n "$smi" ]; then
  kill "$smi" 2>/dev/null
  awk -F', ' '{ if ($2 > m) m = $2; if ($3 > u) u = $3 } END { if (NR) printf "nvidia-smi: peak device memory %d MiB, peak utilization %d%% (%d samples)\n", m, u, NR }' \
    "$OUT/nvidia_smi.csv" | tee -a "$OUT/gpu_check.log"
fi
exit "$rc"
