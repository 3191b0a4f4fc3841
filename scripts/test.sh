#!/usr/bin/env bash
# Runs every Rolo test on a Debian machine: installs the Debian and PyPI packages the
# tests need when they are missing, builds, starts a throwaway PostgreSQL cluster for the
# store tests on PostgreSQL (unless ROLO_TEST_POSTGRES_URL names a server), runs
# `swift test`, stops the cluster, then each interop script
# in Tests/interop/ (litmus, vdirsyncer, nginx...), then each fuzz target for a short
# time (scripts/fuzz.sh). Ends with one "N passed, M failed" line.
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
# The web UI's browser tests: Playwright drives Debian's chromium (never `playwright install`),
# axe-core comes with axe-playwright-python. Pinned: Playwright 1.65.2 works with chromium 156.
if ! "$VENV/bin/python" -c 'import playwright, axe_playwright_python' 2>/dev/null; then
    echo "== installing playwright, axe-playwright-python into $VENV"
    "$VENV/bin/pip" install -q playwright==1.65.2 axe-playwright-python==0.1.8
fi
# The OIDC check (Tests/interop/oidc.sh) runs an OpenID provider built on authlib (joserfc with it).
if ! "$VENV/bin/python" -c 'import authlib, joserfc' 2>/dev/null; then
    echo "== installing authlib into $VENV"
    "$VENV/bin/pip" install -q authlib
fi
# The birthday feed's check (Tests/interop/feeds.sh) parses it with a maintained iCalendar library.
if ! "$VENV/bin/python" -c 'import icalendar' 2>/dev/null; then
    echo "== installing icalendar into $VENV"
    "$VENV/bin/pip" install -q icalendar
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

# One cluster for the whole run (the tests make a database each in it); without it each
# test process would start its own. If it cannot start, the PostgreSQL tests fail.
PG_DIR=""
if [ -z "${ROLO_TEST_POSTGRES_URL:-}" ]; then
    echo "== PostgreSQL cluster"
    if cluster=$(bash scripts/pg-cluster.sh start --owner-pid $$); then
        PG_DIR=${cluster%% *}
        export ROLO_TEST_POSTGRES_URL=${cluster#* }
        echo "$ROLO_TEST_POSTGRES_URL"
    else
        echo "PostgreSQL did not start: the store tests on PostgreSQL will fail"
    fi
fi

LOG="$ROOT/.build/test-output.log"
echo "== swift test"
# Line-buffered (stdbuf): into a pipe the test process's output is otherwise written in 4 KB
# blocks, and a run stopped by the limit below would lose the lines that name what was
# running. The limit turns a hung test into a failure that names it, long before CI's own
# limit ends the whole run without a word. A full run takes 5-10 minutes.
SWIFT_TEST_MINUTES=${ROLO_SWIFT_TEST_MINUTES:-30}
# Swift Testing writes its results as xUnit XML to RESULTS with "-swift-testing" before the
# extension: the tally is read from there (the suite has no XCTest cases).
RESULTS="$ROOT/.build/test-results.xml"
SWIFT_TESTING_RESULTS="$ROOT/.build/test-results-swift-testing.xml"
rm -f "$RESULTS" "$SWIFT_TESTING_RESULTS"
timeout -k 60 "${SWIFT_TEST_MINUTES}m" stdbuf -oL -eL swift test --skip-build --xunit-output "$RESULTS" 2>&1 | tee "$LOG"
test_status=${PIPESTATUS[0]}
if [ "$test_status" = 124 ]; then echo "swift test ran past ${SWIFT_TEST_MINUTES} minutes and was stopped" | tee -a "$LOG"; fi
if [ -n "$PG_DIR" ]; then bash scripts/pg-cluster.sh stop "$PG_DIR"; fi

# The tally. The console's "✔ Test NAME passed after" lines undercounted full runs by 13-76
# of about 1,300 (lines that never reached the log, not reproduced), so the counts come from
# the results file, one <testcase> a test: failed with a <failure> or <error> in it, skipped
# with a <skipped>, passed otherwise (its "tests" attribute leaves skipped tests out). A
# process that crashed or was stopped writes none; then the console's lines are all there is.
if counts=$(python3 - "$SWIFT_TESTING_RESULTS" 2>/dev/null <<'PY'
import sys, xml.etree.ElementTree as tree
cases = tree.parse(sys.argv[1]).getroot().iter("testcase")
outcomes = [next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed") for case in cases]
print(outcomes.count("passed"), outcomes.count("failure") + outcomes.count("error"))
PY
); then
    read -r passed failed <<< "$counts"
else
    passed=$(grep -E ' Test .+ passed after' "$LOG" | grep -vc ' Test run with ' || true)
    failed=$(grep -E ' Test .+ failed after' "$LOG" | grep -vc ' Test run with ' || true)
fi
if [ "$test_status" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi
# When the test process dies (a crash, a trap), say where, again at the very end: CI shows
# only the last lines of the run.
CRASH_NOTE=""
if [ "$test_status" != 0 ]; then
    unfinished=$(comm -23 <(grep -aoE 'Test [A-Za-z0-9_]+\([^)]*\) started' "$LOG" | sort -u | sed 's/ started$//') \
                          <(grep -aoE 'Test [A-Za-z0-9_]+\([^)]*\)( with [0-9]+ test cases?)? (passed|failed)' "$LOG" \
                            | sed -E 's/( with [0-9]+ test cases?)? (passed|failed)$//' | sort -u) | head -n 8)
    CRASH_NOTE=$(printf 'swift test exited with %s\n%s\nstarted, never finished:\n%s' "$test_status" \
        "$(grep -aE 'Fatal error|unexpected signal|Crash' "$LOG" | head -n 8)" "$unfinished")
fi

failed_scripts=()
for script in Tests/interop/*.sh; do
    [ -e "$script" ] || continue
    echo "== $script"
    if bash "$script"; then
        passed=$((passed + 1)); echo "PASS $script"
    else
        failed=$((failed + 1)); echo "FAIL $script"; failed_scripts+=("$script")
    fi
done

# Fuzzing, short: every libFuzzer target (vcard, convert, jcard, xml, filter, head) for
# CI_FUZZ_SECONDS each, starting from the seeds in the repository, each a test; a crash,
# leak, hang or round-trip difference fails it. `make fuzz` is the long run.
# A debug build (CI_FUZZ_CONFIG) costs about 40% less compile time than a release one,
# which matters more than input speed for a few seconds per target. (Docs/testing.md)
echo "== fuzz (${CI_FUZZ_SECONDS:-15} s per target)"
FUZZ_LOG="$ROOT/.build/fuzz-output.log"
FUZZ_SECONDS=${CI_FUZZ_SECONDS:-15} FUZZ_CONFIG=${CI_FUZZ_CONFIG:-debug} bash scripts/fuzz.sh 2>&1 | tee "$FUZZ_LOG"
fuzz_passed=$(grep -cE '^[a-z]+: [0-9]+ inputs, corpus [0-9]+, no finding$' "$FUZZ_LOG" || true)
fuzz_failed=$(grep -cE '^[a-z]+: FINDING' "$FUZZ_LOG" || true)
if [ "$fuzz_passed" = 0 ] && [ "$fuzz_failed" = 0 ]; then fuzz_failed=1; echo "FAIL fuzz build"; fi
passed=$((passed + fuzz_passed))
failed=$((failed + fuzz_failed))

echo
if [ -n "$CRASH_NOTE" ]; then echo "$CRASH_NOTE"; fi
# What failed, again at the very end (CI may keep only the last lines): each failed Swift
# test with its first recorded issue, each failed interop script, each fuzz finding.
if [ "$failed" != 0 ]; then
    echo "failed:"
    grep -aE '✘ Test [^ ]+ failed after' "$LOG" | sed -E 's/^.*✘ Test ([^ ]+) failed after.*$/  \1/' | sort -u | head -n 20
    grep -aE '✘ Test [^ ]+ recorded an issue' "$LOG" | sed -E 's/^.*✘ Test ([^ ]+) recorded an issue at ([^ ]+)/  \1 at \2/' | cut -c1-300 | head -n 20
    for script in "${failed_scripts[@]}"; do echo "  $script"; done
    grep -aE '^[a-z]+: FINDING' "$FUZZ_LOG" | sed 's/^/  /'
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
