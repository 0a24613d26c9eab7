#!/usr/bin/env bash
# The main job: install Argus, then run `argus demo` (checks every Hopper atom against
# its formula and the hardware dump, draws each one under out/layouts/). Works without a
# GPU; says so when it finds one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec "${PYTHON:-python}" -m argus.cli.main demo "$@"
