#!/usr/bin/env bash
# Runs Rolo's libFuzzer targets (Fuzz/RoloFuzz), each for FUZZ_SECONDS, and fails when one
# finds a crash, a sanitizer error, a hang, a leak or a broken round trip.
#
#   scripts/fuzz.sh [TARGET...]        targets: vcard convert jcard xml filter head (default: all)
#
# FUZZ_SECONDS   time per target (default 60)
# FUZZ_CONFIG    release (default: fast inputs, slower build) or debug (quick build, for CI)
# FUZZ_RUNS      stop a target after this many inputs instead (optional, with FUZZ_SECONDS as a cap)
#
# The instrumented build lives in .build-fuzz (its own build folder, so `swift build` is
# untouched). Each target's corpus grows in .build-fuzz/work/corpus/TARGET between runs;
# seeds come from inside the repository (Fuzz/Seeds and the test fixtures), plus
# ../shared/vcards when that folder exists. Findings are saved in
# .build-fuzz/work/findings/TARGET/; replay one with the plain build:
#   swift run RoloFuzz TARGET .build-fuzz/work/findings/TARGET/crash-...
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}
CONFIG=${FUZZ_CONFIG:-release}
BUILD="$ROOT/.build-fuzz"
WORK="$BUILD/work"
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(vcard convert jcard xml filter head)

echo "== building the fuzz targets ($CONFIG, address sanitizer + libFuzzer)"
# --sanitize fuzzer links libFuzzer, but in a release (whole-module) build the Swift
# driver does not hand the coverage instrumentation on to the compiler: ask for it
# explicitly, or libFuzzer runs blind ("no interesting inputs were found").
COVERAGE=edge,indirect-calls,trace-cmp,inline-8bit-counters,pc-table
if ! swift build -c "$CONFIG" --build-path "$BUILD" --product RoloFuzz \
        --sanitize fuzzer --sanitize address -Xswiftc -DROLO_FUZZING -Xswiftc -sanitize-coverage=$COVERAGE 2>&1 | tail -n 20; then
    echo "fuzz build failed"
    exit 1
fi
BIN="$BUILD/$CONFIG/RoloFuzz"

# Seeds: copied fresh each run into one folder per target (libFuzzer only reads them).
seed() {
    local target=$1 folder="$WORK/seeds/$1"
    rm -rf "$folder"
    mkdir -p "$folder"
    case $target in
        vcard|convert|jcard)
            cp Fuzz/Seeds/vcard/* Tests/VCardTests/Fixtures/RealWorld/*.vcf Tests/ContactsTests/Fixtures/*.vcf "$folder/"
            if [ -d ../shared/vcards ]; then
                # The corpus' one big photo card would raise every input's size limit.
                find ../shared/vcards -name '*.vcf' -size -64k -exec cp {} "$folder/" \;
            fi
            [ "$target" = jcard ] && cp Fuzz/Seeds/jcard/* "$folder/"
            ;;
        xml|filter)
            cp Fuzz/Seeds/xml/* "$folder/"
            ;;
        head)
            cp Fuzz/Seeds/http/* "$folder/"
            ;;
    esac
}

dictionary() {
    case $1 in
        vcard|convert) echo "Fuzz/Dictionaries/vcard.dict" ;;
        jcard) echo "Fuzz/Dictionaries/jcard.dict" ;;
        xml|filter) echo "Fuzz/Dictionaries/xml.dict" ;;
        head) echo "Fuzz/Dictionaries/http.dict" ;;
    esac
}

failed=0
summary=()
for target in "${TARGETS[@]}"; do
    seed "$target"
    mkdir -p "$WORK/corpus/$target" "$WORK/findings/$target"
    log="$WORK/$target.log"
    echo "== fuzzing $target for ${SECONDS_PER_TARGET}s"
    runs=()
    [ -n "${FUZZ_RUNS:-}" ] && runs=(-runs="$FUZZ_RUNS")
    # -timeout: an input that takes 10 s is a hang. -max_len keeps inputs card-sized.
    # Swift's own crash reporter would attach to the crashing process and, under the
    # address sanitizer, hang there: libFuzzer reports and saves the input itself.
    SWIFT_BACKTRACE=enable=no ROLO_FUZZ_TARGET=$target "$BIN" \
        -max_total_time="$SECONDS_PER_TARGET" "${runs[@]}" -timeout=10 -max_len=16384 -rss_limit_mb=4096 \
        -dict="$(dictionary "$target")" -artifact_prefix="$WORK/findings/$target/" -print_final_stats=1 \
        "$WORK/corpus/$target" "$WORK/seeds/$target" >"$log" 2>&1
    status=$?
    inputs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
    corpus=$(ls "$WORK/corpus/$target" | wc -l)
    if [ "$status" = 0 ]; then
        summary+=("$target: ${inputs:-?} inputs, corpus $corpus, no finding")
    else
        failed=$((failed + 1))
        summary+=("$target: FINDING after ${inputs:-?} inputs (exit $status), see $log")
        grep -E 'ERROR|fuzz finding|Fatal error|==[0-9]+==|artifact' "$log" | head -n 20
    fi
done

echo
printf '%s\n' "${summary[@]}"
[ "$failed" = 0 ]
