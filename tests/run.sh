#!/usr/bin/env bash
# Install dependencies, build with warnings as errors, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup-deps.sh
build=${BUILD_DIR:-build}
if [ -d "$build" ]; then
  meson setup --reconfigure "$build" -Dwerror=true >/dev/null
else
  meson setup "$build" -Dwerror=true >/dev/null
fi
meson compile -C "$build"
status=0
meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || status=$?
# One plain closing line for readers of the log.
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    key = "OK" if r in ("OK", "EXPECTEDFAIL") else "SKIP" if r == "SKIP" else "FAIL"
    counts[key] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $status
