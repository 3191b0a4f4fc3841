#!/usr/bin/env bash
# The birthday feed (issue 33) as a calendar app reads it: made with `rolo feed add`, fetched
# from a real `rolo serve` without a login, parsed by Python's maintained `icalendar` library
# and its events expanded over five years (python-dateutil's rrule, which icalendar uses):
# a birthday with a year, one without (vCard 4 `--MMDD` and Apple's X-APPLE-OMIT-YEAR), 29
# February, an anniversary. A conditional GET with the ETag answers 304; a revoked feed 404.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"
PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import icalendar, dateutil' 2>/dev/null; then
    echo "python icalendar is not installed (scripts/test.sh installs it into .build-venv)" >&2
    exit 1
fi

rolo_start alice alice-pw
put() { # put NAME VCARD
    curl -s -o /dev/null -w '%{http_code}' -u alice:alice-pw -X PUT -H 'Content-Type: text/vcard' \
        --data-binary "$2" "$ROLO_URL/dav/addressbooks/alice/default/$1"
}
crlf() { printf '%s\r\n' "$@"; }
codes=""
codes+=$(put ada.vcf "$(crlf BEGIN:VCARD VERSION:4.0 UID:ada 'FN:Ada Lovelace' BDAY:18151210 ANNIVERSARY:18350708 END:VCARD)")
codes+=$(put leap.vcf "$(crlf BEGIN:VCARD VERSION:4.0 UID:leap 'FN:Leap Day' BDAY:19960229 END:VCARD)")
codes+=$(put noyear.vcf "$(crlf BEGIN:VCARD VERSION:4.0 UID:noyear 'FN:No Year' BDAY:--0415 END:VCARD)")
codes+=$(put apple.vcf "$(crlf BEGIN:VCARD VERSION:3.0 UID:apple 'FN:Apple Style; Co' 'BDAY;X-APPLE-OMIT-YEAR=1604:1604-02-29' END:VCARD)")
[ "$codes" = 201201201201 ] || { echo "FAIL: PUTs answered $codes"; exit 1; }

URL=$("$ROLO" feed add alice birthdays --public-url "$ROLO_URL" --database "$ROLO_DATABASE" | tail -n 1)
curl -s -D "$WORK/headers" -o "$WORK/feed.ics" "$URL"
ETAG=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *\(.*\)\r$/\1/p' "$WORK/headers")

"$PYTHON" - "$WORK/feed.ics" <<'PY' || exit 1
import sys, datetime
from icalendar import Calendar
from dateutil.rrule import rrulestr

calendar = Calendar.from_ical(open(sys.argv[1], "rb").read())
start, end = datetime.datetime(2027, 1, 1), datetime.datetime(2031, 12, 31, 23, 59)
seen = {}
for event in calendar.walk("VEVENT"):
    dtstart = event.decoded("DTSTART")
    assert isinstance(dtstart, datetime.date) and not isinstance(dtstart, datetime.datetime), dtstart
    rule = event.get("RRULE").to_ical().decode()
    first = datetime.datetime.combine(dtstart, datetime.time())
    days = [d.date() for d in rrulestr(rule, dtstart=first).between(start, end, inc=True)]
    seen[str(event.get("UID"))] = (str(event.get("SUMMARY")), days)

expected = {
    "ada-birthday@rolo": ("Ada Lovelace's birthday (born 1815)", [datetime.date(y, 12, 10) for y in range(2027, 2032)]),
    "ada-anniversary@rolo": ("Ada Lovelace's anniversary (since 1835)", [datetime.date(y, 7, 8) for y in range(2027, 2032)]),
    "leap-birthday@rolo": ("Leap Day's birthday (born 1996)",
                           [datetime.date(y, 2, 29 if y % 4 == 0 else 28) for y in range(2027, 2032)]),
    "noyear-birthday@rolo": ("No Year's birthday", [datetime.date(y, 4, 15) for y in range(2027, 2032)]),
    "apple-birthday@rolo": ("Apple Style; Co's birthday",
                            [datetime.date(y, 2, 29 if y % 4 == 0 else 28) for y in range(2027, 2032)]),
}
failures = 0
for uid, want in expected.items():
    got = seen.get(uid)
    if got != want:
        print(f"FAIL {uid}: expected {want}, got {got}")
        failures += 1
    else:
        print(f"ok   {uid}: {len(want[1])} occurrences 2027-2031")
if set(seen) != set(expected):
    print(f"FAIL events: {sorted(seen)}")
    failures += 1
sys.exit(1 if failures else 0)
PY

failures=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected $2, got $3"; failures=$((failures + 1)); fi; }
check "conditional GET" 304 "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $ETAG" "$URL")"
ID=$("$ROLO" feed list alice --database "$ROLO_DATABASE" | sed -n '2s/^ *\([0-9]*\).*/\1/p')
"$ROLO" feed revoke alice "$ID" --database "$ROLO_DATABASE" >/dev/null
check "revoked feed" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$URL")"
exit $((failures > 0))
