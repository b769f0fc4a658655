#!/bin/bash
# The GPU checks still open, as one script for a lent GPU machine (JAX, no TensorFlow).
#
# Before (on the development machine, where ../shared/data exists):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl keras==3.15.1 namex optree
#   cp -r ../shared/data/flickr8k_1k runs/flickr8k_1k
# Then run it there with `.whl` and runs/flickr8k_1k carried:  bash benchmarks/device_session.sh
# Every step has its own time limit, and the later steps are skipped once BUDGET seconds have passed, so a
# slow step cannot eat the whole lease. STEPS names the steps to run (all by default).
# On 4 Dec 2026 (one H200) the attention check, Flickr8k and shapes took 9, 48 and 60 s; the MobileNet step had
# computed its features but not finished its first epoch when its limit, then 100 s, ran out. On 5 Dec 2026
# (one H100) `STEPS="reversal mobilenet" BUDGET=400 MOBILENET_LIMIT=320` took 74 and 134 s (figures in
# docs/reversal.md and docs/captioning.md).
#
# attention   BahdanauAttention on the GPU: the NumPy formula, masking, Q6's 98,432 (gpu_jax_check.py).
# reversal    the full-profile reversal run (2,500 steps) on the GPU: the library's training and decoding
#             paths on JAX, after changes made on TensorFlow (gpu_jax_check.py).
# flickr8k    captioning (issue 5): seconds per epoch on the GPU, Flickr8k subset with the small encoder.
# shapes      captioning on the generated shapes.
# mobilenet   a frozen MobileNet backbone with random weights (the arithmetic of the Colab encoder; its
#             ImageNet weights cannot be downloaded there) on the Flickr8k subset.
# The Aksharantar runs this script held before (issue 3) are done; their figures are in
# docs/transliteration.md. SMOKE=1 shrinks everything to a CPU-sized check of the plumbing.
set -u
OUT=${OUT:-/tmp/device_out}
BUDGET=${BUDGET:-270}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    2>&1 | tail -1
  export PYTHONPATH=/tmp/site:$PWD
fi
export KERAS_BACKEND=jax PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false
nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
python3 -c "import jax, keras; print('jax', jax.__version__, jax.devices(), 'keras', keras.__version__)"

EPOCHS="--epochs 3"
[ "${SMOKE:-0}" = 1 ] && EPOCHS="--epochs 1"
started=$SECONDS

step() {  # step NAME LIMIT COMMAND...: runs COMMAND with its own limit, while the budget lasts
  local name=$1 limit=$2; shift 2
  if (( SECONDS - started > BUDGET )); then echo "== $name: skipped (budget of $BUDGET s spent)"; return; fi
  echo "== $name"
  local begin=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "exit $? after $((SECONDS - begin)) s"
  grep -v -E "^[IW]0000|^WARNING: All log" "$OUT/$name.log" | tail -4
}

STEPS=${STEPS:-attention reversal flickr8k shapes mobilenet}
REVERSAL_STEPS=2500
[ "${SMOKE:-0}" = 1 ] && REVERSAL_STEPS=50
for name in $STEPS; do
  case $name in
    attention) step attention 60 python3 benchmarks/gpu_jax_check.py --skip-reversal ;;
    reversal) step reversal 200 python3 benchmarks/gpu_jax_check.py --reversal-steps $REVERSAL_STEPS --out "$OUT/reversal.json" ;;
    flickr8k) step flickr8k_small 150 python3 benchmarks/captioning.py flickr8k --data runs/flickr8k_1k --encoder small $EPOCHS ;;
    shapes) step shapes 100 python3 benchmarks/captioning.py shapes $EPOCHS ;;
    mobilenet) step flickr8k_mobilenet ${MOBILENET_LIMIT:-300} python3 benchmarks/captioning.py flickr8k \
      --data runs/flickr8k_1k --encoder mobilenet --weights none $EPOCHS ;;
    *) echo "== $name: no such step" ;;
  esac
done
echo "== done after $((SECONDS - started)) s"
