#!/usr/bin/env bash
# Runs every Rolo test on a Debian machine: installs the Debian and PyPI packages the
# tests need when they are missing, builds, runs `swift test`, then each interop script
# in Tests/interop/ (litmus, vdirsyncer, nginx...). Ends with one "N passed, M failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

bash scripts/install-deps.sh --test

# Python clients used by the interop scripts live in their own venv (never the system).
VENV="$ROOT/.build-venv"
if [ ! -x "$VENV/bin/vdirsyncer" ]; then
    echo "== installing vdirsyncer into $VENV"
    python3 -m venv "$VENV" && "$VENV/bin/pip" install -q vdirsyncer
fi
export PATH="$VENV/bin:$PATH"

echo "== swift build"
swift build --build-tests 2>&1 | tail -n 30
build_status=${PIPESTATUS[0]}
if [ "$build_status" != 0 ]; then
    echo "build failed"
    echo "0 passed, 1 failed"
    exit 1
fi

LOG="$ROOT/.build/test-output.log"
echo "== swift test"
swift test --skip-build 2>&1 | tee "$LOG"
test_status=${PIPESTATUS[0]}

# Swift Testing prints one "Test NAME passed/failed after" line per test (and a closing
# "Test run with N tests" line, not counted); XCTest prints "Test Case '...' passed".
passed=$(grep -E ' Test .+ passed after' "$LOG" | grep -vc ' Test run with ' || true)
failed=$(grep -E ' Test .+ failed after' "$LOG" | grep -vc ' Test run with ' || true)
xc_passed=$(grep -cE "^Test Case '.*' passed" "$LOG" || true)
xc_failed=$(grep -cE "^Test Case '.*' failed" "$LOG" || true)
passed=$((passed + xc_passed))
failed=$((failed + xc_failed))
if [ "$test_status" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi

for script in Tests/interop/*.sh; do
    [ -e "$script" ] || continue
    echo "== $script"
    if bash "$script"; then
        passed=$((passed + 1)); echo "PASS $script"
    else
        failed=$((failed + 1)); echo "FAIL $script"
    fi
done

echo
echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
