#!/usr/bin/env bash
# The web UI in a real browser (issue 19): Debian's chromium driven by Playwright from PyPI
# (through executable_path: no browser is downloaded, never `playwright install`) against a
# real `rolo serve`. web_browser.py signs in, searches, edits, adds, deletes and restores,
# merges and undoes, imports and exports (vCard, and CSV with its preview), runs the flows again without JavaScript, checks the
# CSRF and XSS defences and the keyboard, and runs axe-core on every page at phone and desktop
# widths in both themes. After each edit it reads the card over CardDAV. Screenshots of every
# page go to .build/web-screenshots/ (WEB_SCREENSHOTS to change it).
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
    echo "missing $CHROMIUM: run scripts/install-deps.sh --test" >&2
    exit 2
fi
VENV="$ROOT/.build-venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" || exit 2
if ! "$VENV/bin/python" -c 'import playwright, axe_playwright_python' 2>/dev/null; then
    echo "== installing playwright, axe-playwright-python into $VENV"
    "$VENV/bin/pip" install -q playwright==1.65.2 axe-playwright-python==0.1.8 || exit 2
fi

rolo_start alice alice-pw
rolo() { "$ROLO" "$@" --database "$ROLO_DATABASE"; }
# A second user who shares a book with alice (read-only), and an administrator.
printf 'bob-pw-123\n' | rolo user add bob --password-stdin >/dev/null || exit 2
printf 'root-pw-123\n' | rolo user add root --password-stdin >/dev/null || exit 2
rolo user set root --admin true >/dev/null || exit 2
rolo book create bob work --display-name "Bob's work" >/dev/null || exit 2
rolo share add bob work alice --accept >/dev/null || exit 2
# A second share, which alice leaves in the browser.
rolo book create bob family --display-name "Bob's family" >/dev/null || exit 2
rolo share add bob family alice --accept >/dev/null || exit 2
# A book a second device damages and the undo page repairs (issue 31).
rolo book create alice history --display-name "History" >/dev/null || exit 2
# A book whose display name is markup: the side bar must show it as text.
rolo book create alice evil --display-name '<img src=x onerror=alert("book")>' >/dev/null || exit 2

ROLO_URL="$ROLO_URL" CHROMIUM="$CHROMIUM" WEB_SCREENSHOTS="${WEB_SCREENSHOTS:-$ROOT/.build/web-screenshots}" \
    "$VENV/bin/python" "$ROOT/Tests/interop/web_browser.py"
status=$?
if [ "$status" != 0 ] && [ -s "$WORK/serve.err" ]; then
    echo "-- rolo serve stderr (last 30 lines):"
    tail -n 30 "$WORK/serve.err"
fi
exit "$status"
