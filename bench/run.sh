#!/usr/bin/env bash
# Install dependencies, build, and run the main job on the embedded default:
# fastmsg-run, 4 processes, the shm provider.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup-deps.sh
build=${BUILD_DIR:-build}
[ -d "$build" ] || meson setup "$build" >/dev/null
meson compile -C "$build" >/dev/null
export FM_PROVIDER=${FM_PROVIDER:-shm}
"$build/runtime/launcher/fastmsg-run" -n "${NPROCS:-4}" "$build/examples/hello"
