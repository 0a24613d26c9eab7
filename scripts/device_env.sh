# Sourced by the device scripts (run from the repo root): the output folder, the z3 wheel of
# .whl/ (carried, docs/perf-log.md) installed beside the repo, unbuffered Python and the
# kernel cache in /tmp.
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR="${ARGUS_CACHE_DIR:-/tmp/argus-cache}"
# run SECONDS CMD...: one phase under its own timeout, logged to $LOG, its last $TAIL lines
# shown, its exit status and seconds after it
run() { local t0=$SECONDS; echo "== $*" | tee -a "$LOG"; timeout "$1" "${@:2}" 2>&1 | tee -a "$LOG" | tail -"${TAIL:-60}"; echo "rc=${PIPESTATUS[0]} ($((SECONDS - t0))s)" | tee -a "$LOG"; }
# pick: a sweep's JSON lines cut to shape, variant, ms, ratio and error
pick() { grep -o '"shape": "[^"]*"\|"variant": "[a-z0-9_]*"\|ratio_cudnn": [0-9.]*\|"argus_ms": [0-9.]*\|"error.*'; }
# ab_rounds TAG OLD NEW SHAPES FILE EDIT...: attention's default on SHAPES, A B A B in one
# call: FILE as EDIT (a command run on the tree) leaves it (the old code, "$OUT/ab-$TAG-OLD-
# round.json"), then FILE as the tree has it (the new code, "$OUT/ab-$TAG-NEW-round.json")
ab_rounds() {
  local tag=$1 old=$2 new=$3 shapes=$4 file=$5; shift 5
  cp "$file" "/tmp/ab-$tag-new"
  for round in a b; do
    "$@"
    echo "== $old $round"; timeout 120 python3 benchmarks/attention_sweep.py \
      --out "$OUT/ab-$old-$round.json" --shapes "$shapes" --variants default 2>&1 | pick
    cp "/tmp/ab-$tag-new" "$file"
    echo "== $new $round"; timeout 120 python3 benchmarks/attention_sweep.py \
      --out "$OUT/ab-$new-$round.json" --shapes "$shapes" --variants default 2>&1 | pick
  done
}
