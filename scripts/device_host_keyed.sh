#!/usr/bin/env bash
# Issue 18 item 3 (host time per call), twenty-seventh session: argus.ops.matmul's keyed
# launch (the launch signature built from what the operand checks read) against the
# previous call path, A B A B A B in one call, torch.matmul timed in each run; then the
# GPU matmul tests (the keyed path's correctness). From the repo root through the device
# tool with carry [".whl"]. The previous path is ab_old/ (untracked; the device has no
# git), made before the call with
#   for f in argus/ops/matmul.py argus/runtime/{environment,interpreted,launch}.py \
#            scripts/device_host_overhead.py; do
#     mkdir -p ab_old/$(dirname $f); git show aab73a2:$f > ab_old/$f; done
# (aab73a2: the last commit before the change); without it only the new path is timed.
source scripts/device_env.sh
LOG="$OUT/host-keyed.log"
if [ -d ab_old ]; then
  rm -rf /tmp/old && mkdir -p /tmp/old && cp -r argus scripts /tmp/old/ && cp -r ab_old/* /tmp/old/
fi
for round in a b c; do
  if [ -d ab_old ]; then
    PYTHONPATH="/tmp/site:/tmp/old" run 120 python3 /tmp/old/scripts/device_host_overhead.py "$OUT/host-overhead-old-$round.json"
  fi
  run 120 python3 scripts/device_host_overhead.py "$OUT/host-overhead-new-$round.json"
done
TAIL=15 run 400 python3 -m pytest -q -p no:cacheprovider -o addopts="" tests/ops/test_matmul_gpu.py -x -k "repeated or default or split_k_workspace"
