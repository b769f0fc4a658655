#!/bin/bash
# The GPU checks still open, as one script for a lent GPU machine (JAX, no TensorFlow).
#
# Before (on the development machine, where TensorFlow and ../shared/data exist):
#   python benchmarks/transliteration_aksharantar_jax.py prepare \
#       --train ../shared/data/aksharantar_hin/hin_train.csv \
#       --valid ../shared/data/aksharantar_hin/hin_valid.csv --out runs/aksharantar_prepared
#   cp -r ../shared/data/flickr8k_1k runs/flickr8k_1k
# Then run it there with `.whl` (the keras, namex and optree wheels), runs/aksharantar_prepared
# and runs/flickr8k_1k carried:  bash benchmarks/device_session.sh   (about 8 minutes on an H200)
#
# 1. Aksharantar (issue 3): four members of the full-profile recipe, differing only in
#    --model-seed, trained side by side, each with its own figures; then the ensemble of the
#    four (mean distribution at every step) with greedy and beam-5 decoding.
# 2. Captioning (issue 5): seconds per epoch on the GPU, Flickr8k subset with the small
#    encoder, and the generated shapes.
# SMOKE=1 shrinks everything to a CPU-sized check of the plumbing.
set -u
OUT=${OUT:-/tmp/device_out}
mkdir -p "$OUT"
pip install -q --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD KERAS_BACKEND=jax PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_MEM_FRACTION=0.18
nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"

if [ "${SMOKE:-0}" = 1 ]; then
  BEAMS="1 3"
  RECIPE="--limit 3000 --max-epochs 2 --units 32 --embedding-dim 16"
  CAPTION_EPOCHS="--epochs 1"
else
  BEAMS="1 5"
  RECIPE="--dev 2000 --dev-every 5 --max-epochs 50 --budget-seconds 280
          --source-noise 0.05 --target-noise 0.15 --label-smoothing 0.1"
  CAPTION_EPOCHS="--epochs 3"
fi

members=()
for seed in 0 1 2 3; do
  timeout 480 python3 benchmarks/transliteration_aksharantar_jax.py train --data runs/aksharantar_prepared \
    $RECIPE --beams $BEAMS --model-seed $seed --out "$OUT/member$seed" > "$OUT/member$seed.log" 2>&1 &
  members+=("$OUT/member$seed")
done
wait
for seed in 0 1 2 3; do echo "== member $seed"; grep "^beam" "$OUT/member$seed.log"; done
timeout 240 python3 benchmarks/transliteration_aksharantar_jax.py ensemble --data runs/aksharantar_prepared \
  --members "${members[@]}" --beams $BEAMS \
  --out "$OUT/ensemble" 2>&1 | grep -v "^[IW]0000" | tail -25

echo "== captioning, flickr8k_1k, small encoder"
timeout 300 python3 benchmarks/captioning.py flickr8k --data runs/flickr8k_1k --encoder small $CAPTION_EPOCHS \
  2>&1 | grep -v "^[IW]0000" | tail -3
echo "== captioning, shapes"
timeout 200 python3 benchmarks/captioning.py shapes $CAPTION_EPOCHS 2>&1 | grep -v "^[IW]0000" | tail -3
