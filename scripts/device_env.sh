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
