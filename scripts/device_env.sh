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
