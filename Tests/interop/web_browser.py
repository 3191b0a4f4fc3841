#!/usr/bin/env python3
"""Browser tests of Rolo's web UI (issue 19), run by Tests/interop/web.sh against a real
`rolo serve` ($ROLO_URL) with users alice (alice-pw), bob (bob-pw-123, who shares "work" with
alice read-only) and the administrator root (root-pw-123).

Debian's chromium through Playwright's executable_path. Each check prints one line, "ok" or
"FAIL"; a check of a known UI bug prints "XFAIL" with the reason and does not fail the run.
Every page is watched for console errors, uncaught exceptions, CSP violations and dialogs
(alert/confirm): any one fails the run. After each edit the card is read over CardDAV
(GET, and a sync-collection REPORT from the token taken before the edit).
"""
import base64
import json
import plistlib
import os
import re
import shutil
import struct
import sys
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import zlib
from xml.etree import ElementTree as ET

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect, sync_playwright

BASE = os.environ["ROLO_URL"]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SHOTS = os.environ.get("WEB_SCREENSHOTS", os.path.join(os.path.dirname(__file__), "../../.build/web-screenshots"))
PASSWORDS = {"alice": "alice-pw", "bob": "bob-pw-123", "root": "root-pw-123"}
BOOK = "/dav/addressbooks/alice/default/"
WEB_BOOK = "/web/b/default/"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
expect.set_options(timeout=10_000)

# Checks that fail because of a UI bug that is known and not fixed yet: name prefix -> why.
# (Empty when every check passes; an entry that starts passing is reported as XPASS.)
KNOWN_BUGS: dict[str, str] = {}

failed = []
xfailed = []


def check(name, ok, detail=""):
    known = next((why for prefix, why in KNOWN_BUGS.items() if name.startswith(prefix)), None)
    if ok:
        print(("XPASS " if known else "ok   ") + name + (" (listed in KNOWN_BUGS: remove it)" if known else ""))
    elif known:
        print(f"XFAIL {name}: {detail} [known bug: {known}]")
        xfailed.append(name)
    else:
        print(f"FAIL {name}: {detail}")
        failed.append(name)
    return ok


def shorten(text, limit=300):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


# --- CardDAV with Basic auth -------------------------------------------------------------

class Dav:
    def __init__(self, user, password):
        self.auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def request(self, method, path, body=None, headers=None):
        if isinstance(body, str):
            body = body.encode()
        request = urllib.request.Request(BASE + path, data=body, method=method,
                                         headers={"Authorization": self.auth, **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def put(self, path, text, etag=None):
        headers = {"Content-Type": "text/vcard; charset=utf-8"}
        if etag:
            headers["If-Match"] = etag
        status, headers, _ = self.request("PUT", path, text, headers)
        assert status in (201, 204), f"PUT {path}: {status}"
        return headers.get("ETag")

    def get(self, path):
        """(status, etag, body as text)"""
        status, headers, body = self.request("GET", path)
        return status, headers.get("ETag"), body.decode("utf-8", "replace")

    def sync(self, book=BOOK, token=""):
        """sync-collection REPORT: (new token, {href: etag or None when removed})."""
        body = ('<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:">'
                f'<d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level>'
                '<d:prop><d:getetag/></d:prop></d:sync-collection>')
        status, _, text = self.request("REPORT", book, body, {"Content-Type": "application/xml; charset=utf-8", "Depth": "1"})
        assert status == 207, f"sync-collection: {status} {text[:300]!r}"
        ns = {"d": "DAV:"}
        root = ET.fromstring(text)
        changes = {}
        for response in root.findall("d:response", ns):
            href = urllib.parse.unquote(response.findtext("d:href", namespaces=ns) or "")
            status_line = response.findtext("d:status", namespaces=ns) or ""
            changes[href] = None if " 404 " in status_line else response.findtext("d:propstat/d:prop/d:getetag", namespaces=ns)
        return root.findtext("d:sync-token", namespaces=ns), changes

    def token(self, book=BOOK):
        return self.sync(book)[0]

    def cards(self, book=BOOK):
        """Every card's href in the book (a sync-collection from nothing)."""
        return {href for href, etag in self.sync(book)[1].items() if etag is not None}


alice = Dav("alice", PASSWORDS["alice"])
bob = Dav("bob", PASSWORDS["bob"])


def check_dav_edit(label, name, token, etag_before, expect_in=(), expect_re=(), keep=(), absent=(), book=BOOK):
    """After an edit in the browser: the card over CardDAV has the change and a new ETag, the
    sync-collection from `token` lists it, and `keep` (byte strings of lines the UI does not
    show or did not touch) are still there exactly. Returns the body."""
    status, etag, body = alice.get(book + name)
    check(f"{label}: GET over CardDAV answers 200", status == 200, status)
    check(f"{label}: the card has a new ETag", etag is not None and etag != etag_before, f"{etag_before} -> {etag}")
    for text in expect_in:
        check(f"{label}: the card holds {text!r}", text in body, shorten(body, 800))
    for pattern in expect_re:
        check(f"{label}: the card matches {pattern!r}", re.search(pattern, body, re.M) is not None, shorten(body, 800))
    for text in keep:
        check(f"{label}: kept byte for byte: {text!r}", text in body, shorten(body, 800))
    for text in absent:
        check(f"{label}: the card no longer holds {text!r}", text not in body, shorten(body, 800))
    _, changes = alice.sync(book, token)
    check(f"{label}: sync-collection from the earlier token lists the card with its new ETag",
          changes.get(book + name) == etag and etag is not None, f"{book + name} not in {shorten(changes)}")
    return body


# --- Cards --------------------------------------------------------------------------------

def vcard(*lines):
    return "\r\n".join(["BEGIN:VCARD", *lines, "END:VCARD", ""])


def png(width=64, height=64):
    """A small gradient PNG."""
    raw = b"".join(b"\x00" + bytes(v for x in range(width) for v in (x * 4 % 256, y * 4 % 256, 160)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def folded(line):
    """A content line folded at 75 octets (as a writer would)."""
    out, rest = [], line
    while len(rest) > 75:
        out.append(rest[:75])
        rest = " " + rest[75:]
    return "\r\n".join(out + [rest])


BOAT_NOTE = folded("NOTE:A long note that is folded over two lines by the writer, so that the test sees an untouched folded line survive.")
BOAT_KEEP = [
    "X-CUSTOM-THING:keep me\r\n",
    "item1.EMAIL;TYPE=INTERNET:sam@harbour.example\r\n",
    "item1.X-ABLabel:Harbour\r\n",
    BOAT_NOTE + "\r\n",
    "X-SOCIALPROFILE;TYPE=mastodon;x-user=sam:https://social.example/@sam\r\n",
]
BOAT = vcard("VERSION:3.0", "PRODID:-//Rolo web test//EN", "UID:boat", "N:Sailor;Sam;;;", "FN:Sam Sailor",
             "TEL;TYPE=CELL:+1 555 0100", "item1.EMAIL;TYPE=INTERNET:sam@harbour.example", "item1.X-ABLabel:Harbour",
             "X-CUSTOM-THING:keep me", BOAT_NOTE, "X-SOCIALPROFILE;TYPE=mastodon;x-user=sam:https://social.example/@sam")

XSS_FN = "<script>alert(1)</script>"
XSS_ORG = '"><img src=x onerror=alert(2)>'
XSS_NOTE = "<script>alert(3)</script> and <b>bold</b>"
XSS_LABEL = '"><img src=x onerror=alert(6)>'
XSS_FN2 = '"><img src=x onerror=alert(9)>'
NASTY = {
    "nasty-1.vcf": vcard("VERSION:3.0", "UID:nasty-1", f"N:;{XSS_FN};;;", f"FN:{XSS_FN}", f"ORG:{XSS_ORG}",
                         f"NOTE:{XSS_NOTE}", "URL:javascript:alert(4)", "item1.URL:javascript:alert(5)",
                         f"item1.X-ABLabel:{XSS_LABEL}", "TEL;TYPE=CELL:<script>alert(7)</script>",
                         f"EMAIL:{XSS_ORG}@example.org", "CATEGORIES:<b>cat</b>"),
    "nasty-2.vcf": vcard("VERSION:4.0", "UID:nasty-2", f"FN:{XSS_FN2}", "NICKNAME:javascript:alert(10)",
                         "URL:JaVaScRiPt:alert(11)", "URL: javascript:alert(12)",
                         "item2.URL:data:text/html,<script>alert(13)</script>", "item2.X-ABLabel:<svg onload=alert(14)>",
                         "IMPP:xmpp:<img src=x onerror=alert(15)>@example.org"),
}

WIDE_TEL = "+49 (0) 30 1234 5678 ext. 9012"
WIDE_EMAIL = "firstname.lastname@long-department.example-company.org"
WIDE_STREET = "Long Street Name 123, Building C"
WIDE = vcard("VERSION:3.0", "UID:wide", "N:Widefield;Wanda;;;", "FN:Wanda Widefield",
             f"item1.TEL:{WIDE_TEL}", "item1.X-ABLabel:Holiday flat",
             f"item2.EMAIL;TYPE=INTERNET:{WIDE_EMAIL}", "item2.X-ABLabel:Old work address",
             f"ADR;TYPE=HOME:;;{WIDE_STREET};Rio de Janeiro;Rio de Janeiro;20040-020;Brazil",
             "BDAY:1990-04-15")

FIRST_NAMES = ["Alex", "Bea", "Carl", "Dora", "Emil", "Fay", "Gus", "Hugo", "Ida", "Jon", "Kai", "Lea", "Max",
               "Nina", "Otto", "Pia", "Quin", "Rita", "Sven", "Tea", "Uma", "Vic", "Wim", "Xena", "Yves", "Zoe"]


def seed():
    # Enough contacts for three list pages (50 a page); none holds "ann" except those below.
    for number in range(130):
        first = FIRST_NAMES[number % len(FIRST_NAMES)]
        alice.put(f"{BOOK}filler-{number:03d}.vcf", vcard(
            "VERSION:3.0", f"UID:filler-{number:03d}", f"N:Filler{number:03d};{first};;;", f"FN:{first} Filler{number:03d}",
            f"EMAIL;TYPE=INTERNET:{first.lower()}.{number}@example.org", f"TEL;TYPE=CELL:+1 555 {1000 + number}"))
    for name, fn in [("joanne", "Joanne Smith"), ("hannah", "Hannah Berg"), ("ann", "Ann Example")]:
        given, family = fn.split()
        alice.put(f"{BOOK}{name}.vcf", vcard("VERSION:3.0", f"UID:{name}", f"N:{family};{given};;;", f"FN:{fn}",
                                             f"EMAIL;TYPE=INTERNET:{name}@example.net"))
    alice.put(BOOK + "boat.vcf", BOAT)
    # Two duplicates (same e-mail and phone), each with a value the other lacks.
    alice.put(BOOK + "dupe-a.vcf", vcard("VERSION:3.0", "UID:dupe-a", "N:Person;Dupe;;;", "FN:Dupe Person",
                                         "EMAIL;TYPE=INTERNET:dupe@example.org", "TEL;TYPE=CELL:+1 555 0199",
                                         "X-DUPE-A:kept from a"))
    alice.put(BOOK + "dupe-b.vcf", vcard("VERSION:3.0", "UID:dupe-b", "N:Person;Dupe;;;", "FN:Dupe Person",
                                         "EMAIL;TYPE=INTERNET:dupe@example.org", "EMAIL;TYPE=WORK:dupe.work@example.org",
                                         "ORG:Dupe Inc", "X-DUPE-B:kept from b"))
    for name, text in NASTY.items():
        alice.put(BOOK + name, text)
    # Scripts beyond Latin, and a photo.
    alice.put(BOOK + "intl.vcf", vcard("VERSION:4.0", "UID:intl", "FN:李小龍 שלום Émilie 🎉", "N:李;小龍;;;",
                                       "ORG:Ünïcödé GmbH"))
    photo = base64.b64encode(png()).decode()
    alice.put(BOOK + "photo.vcf", vcard("VERSION:3.0", "UID:photo", "N:Pictured;Paula;;;", "FN:Paula Pictured",
                                        folded(f"PHOTO;ENCODING=b;TYPE=PNG:{photo}")))
    # Long values and custom labels: the editor must show them whole at 1280 px.
    alice.put(BOOK + "wide.vcf", WIDE)
    # An Apple group card with the boat card in it.
    alice.put(BOOK + "club.vcf", vcard("VERSION:3.0", "UID:club", "N:Sailing club;;;;", "FN:Sailing club",
                                       "X-ADDRESSBOOKSERVER-KIND:group", "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:boat"))
    for number in range(3):
        bob.put(f"/dav/addressbooks/bob/work/colleague-{number}.vcf", vcard(
            "VERSION:3.0", f"UID:colleague-{number}", f"N:Colleague{number};Bob's;;;", f"FN:Bob's Colleague{number}",
            "TEL;TYPE=WORK:+1 555 7000"))


def import_file():
    """100 cards: 95 good, 5 that fail (with different reasons; one has markup as its name)."""
    cards = [vcard("VERSION:3.0", f"UID:import-{n:03d}", f"N:Person{n:03d};Imported;;;", f"FN:Imported Person{n:03d}",
                   f"EMAIL:imported{n}@example.com") for n in range(95)]
    cards[10:10] = [vcard("VERSION:9.0", "FN:<script>alert('import')</script>", "UID:bad-version")]
    cards[20:20] = [vcard("VERSION:3.0", "FN:Nested", "BEGIN:VCARD", "VERSION:3.0", "FN:Inner")]
    cards[30:30] = [vcard("VERSION:3.0", "FN:Quote", 'TEL;TYPE="unterminated:123', "UID:bad-quote")]
    cards[40:40] = [vcard("VERSION:3.0", "FN:Two UIDs", "UID:bad-uid-1", "UID:bad-uid-2")]
    cards[50:50] = [vcard("VERSION:3.0", "VERSION:4.0", "FN:Two versions", "UID:bad-versions")]
    assert len(cards) == 100
    return "".join(cards).encode()


def parse_vcards(data):
    """A small strict reader for the export: unfolds lines, checks BEGIN/END nesting and that
    every content line has a name and a colon; returns [(uid, [lines])]."""
    text = data.decode("utf-8")
    assert text.endswith("\r\n") or text.endswith("\n"), "the export does not end with a line break"
    lines = re.sub(r"\r?\n[ \t]", "", text).splitlines()
    cards, current = [], None
    for number, line in enumerate(lines, 1):
        if line == "":
            continue
        upper = line.upper()
        if upper == "BEGIN:VCARD":
            assert current is None, f"line {number}: BEGIN inside a card"
            current = []
        elif upper == "END:VCARD":
            assert current is not None, f"line {number}: END outside a card"
            uid = next((l.split(":", 1)[1] for l in current if re.match(r"(?i)^([\w-]+\.)?UID[:;]", l)), None)
            cards.append((uid, current))
            current = None
        else:
            assert current is not None, f"line {number}: content outside a card: {line[:60]!r}"
            assert re.match(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)?([;:])", line), f"line {number}: not a content line: {line[:60]!r}"
            current.append(line)
    assert current is None, "the last card has no END:VCARD"
    return cards


# --- The browser ----------------------------------------------------------------------------

class Watch:
    """Console errors, uncaught exceptions, CSP violations and dialogs of every page."""

    def __init__(self):
        self.problems = []      # (where, what)
        self.dialogs = []
        self.allowed = []       # regexes of console errors a step expects (a 403 page, a 404)

    def attach(self, context, label):
        if context_js.get(id(context), True):
            context.expose_binding("roloReportCSP", lambda source, text: self.problems.append(
                (f"{label} {source['page'].url}", "CSP violation: " + text)))
            context.add_init_script(script="""
                document.addEventListener('securitypolicyviolation', (event) => {
                  window.roloReportCSP(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline')
                                       + ' (' + (event.sourceFile || '') + ':' + event.lineNumber + ')');
                });""")
        context.on("page", lambda page: self.attach_page(page, label))

    def attach_page(self, page, label):
        def console(message):
            if message.type != "error":
                return
            text = message.text
            if any(re.search(pattern, text) for pattern in self.allowed):
                return
            self.problems.append((f"{label} {page.url}", "console error: " + text))
        page.on("console", console)
        page.on("pageerror", lambda error: self.problems.append((f"{label} {page.url}", f"uncaught exception: {error}")))

        def dialog(d):
            self.dialogs.append((f"{label} {page.url}", f"{d.type}: {d.message}"))
            d.dismiss()
        page.on("dialog", dialog)

    def allowing(self, page, *patterns):
        """Console errors matching `patterns` are expected inside the `with` block (the
        console line of an answer the step wants: 403, 404...)."""
        watch = self

        class Allow:
            def __enter__(self):
                watch.allowed.extend(patterns)

            def __exit__(self, *exc):
                # Events reach Python only while Playwright runs: let the step's come in.
                page.wait_for_timeout(300)
                for pattern in patterns:
                    watch.allowed.remove(pattern)
        return Allow()


watch = Watch()
context_js = {}
charts = []   # device charts of "Test phone" seen on the privacy page, per audit pass
device_used = []  # when the app password was used over CardDAV


def new_context(browser, label, *, js=True, viewport=DESKTOP, scheme="light"):
    context = browser.new_context(viewport=viewport, color_scheme=scheme, java_script_enabled=js, accept_downloads=True,
                                  base_url=BASE)
    context_js[id(context)] = js
    watch.attach(context, label)
    return context


def sign_in(page, user="alice", next_path="/web/"):
    page.goto(next_path)
    if "/web/login" not in page.url:
        return
    page.get_by_test_id("login-user").fill(user)
    page.get_by_test_id("login-password").fill(PASSWORDS[user])
    with page.expect_navigation():
        page.get_by_test_id("login-submit").click()


def row_names(page):
    return page.locator("#rows .row .row-name").all_inner_texts()


def flash_text(page):
    return page.get_by_test_id("flash").inner_text() if page.get_by_test_id("flash").count() else ""


def failure_shot(page, title):
    try:
        os.makedirs(SHOTS, exist_ok=True)
        path = os.path.join(SHOTS, "FAILED-" + re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") + ".png")
        page.screenshot(path=path, full_page=True)
        print(f"     (screenshot of the failure: {path})")
    except Exception:  # noqa: BLE001 - only a diagnostic
        pass


def step(title, page, function, *args):
    print(f"== {title}")
    try:
        function(page, *args)
    except (AssertionError, PlaywrightError) as error:
        check(f"{title}: ran to the end", False, shorten(f"{type(error).__name__}: {error}", 800))
        traceback.print_exc(limit=3)
        failure_shot(page, title)


# --- Flows (JavaScript on, desktop, light) ---------------------------------------------------

def flow_sign_in(page):
    response = page.goto("/web/")
    check("an unsigned browser is sent to the sign-in page", "/web/login" in page.url, page.url)
    page.get_by_test_id("login-user").fill("alice")
    page.get_by_test_id("login-password").fill("wrong password")
    with watch.allowing(page, r"status of 401"):
        with page.expect_navigation() as navigation:
            page.get_by_test_id("login-submit").click()
    check("a wrong password: 401 and the generic error", navigation.value.status == 401
          and page.get_by_test_id("login-error").is_visible(), navigation.value.status)
    page.get_by_test_id("login-user").fill("alice")
    page.get_by_test_id("login-password").fill(PASSWORDS["alice"])
    with page.expect_navigation():
        page.get_by_test_id("login-submit").click()
    check("signed in: the default book's list", page.url.endswith(WEB_BOOK) and page.locator("#rows").count() == 1, page.url)
    cookies = {c["name"]: c for c in page.context.cookies()}
    session = cookies.get("rolo_session", {})
    check("the session cookie is HttpOnly and SameSite=Lax", session.get("httpOnly") and session.get("sameSite") == "Lax",
          session)
    check("CSP header on the list page", "script-src 'self'" in (response.headers.get("content-security-policy") or "") if response else False)


def flow_list_and_scroll(page):
    page.goto(WEB_BOOK)
    landmarks = {role: page.get_by_role(role).count() for role in ["banner", "search", "main", "navigation"]}
    check("the landmarks: banner, search, main, navigation", landmarks["banner"] == 1 and landmarks["search"] == 1
          and landmarks["main"] == 1 and landmarks["navigation"] >= 2, landmarks)
    check("the result count is a live region", page.locator("#result-count[role=status][aria-live=polite]").count() == 1)
    contacts = len([h for h in alice.cards() if not h.endswith("club.vcf")])
    count = page.get_by_test_id("result-count").inner_text()
    check("the list shows the number of contacts", count.replace("\u00a0", "") == f"{contacts} contacts", f"{count!r} vs {contacts}")
    check("the first page has 50 rows", len(row_names(page)) == 50, len(row_names(page)))
    # Sorted by the folded name (markup in a name sorts by its letters: left out here).
    names = [n.casefold() for n in row_names(page) if n[:1].isalpha()]
    check("the rows are sorted by name", names == sorted(names), names[:10])
    page.locator("#next-page").scroll_into_view_if_needed()
    expect(page.locator("#rows .row")).to_have_count(100)
    check("scrolling to the end loads the next page (100 rows)", True)
    page.locator("#next-page").scroll_into_view_if_needed()
    expect(page.locator("#rows .row")).to_have_count(min(150, contacts))
    rows = page.eval_on_selector_all("#rows .row", "(rows) => rows.map((row) => row.dataset.name)")
    check("infinite scroll adds no row twice", len(rows) == len(set(rows)), sorted(r for r in rows if rows.count(r) > 1))


def flow_search(page):
    page.goto(WEB_BOOK)
    page.get_by_test_id("search-input").press_sequentially("ann", delay=40)
    expect(page.locator("#rows")).to_contain_text("Joanne Smith")
    expect(page).to_have_url(re.compile(r"[?&]q=ann"))
    names = row_names(page)
    check("typing 'ann' finds Joanne (a substring), Hannah and Ann", {"Joanne Smith", "Hannah Berg", "Ann Example"} <= set(names), names)
    check("only matches are listed", all("ann" in n.lower() for n in names), names)
    count = page.get_by_test_id("result-count").inner_text()
    check("the result count is shown", count == f"{len(names)} contacts", f"{count!r} for {len(names)} rows")
    check("the heading says it is a search", "ann" in page.locator("#list-heading").inner_text())
    page.get_by_test_id("search-input").fill("")
    page.get_by_test_id("search-input").press_sequentially("zzqx", delay=40)
    # "zz" alone already matches nothing: wait for the answer to the whole word, which a
    # loaded machine may bring a moment after the empty list first shows.
    expect(page.get_by_test_id("empty-list")).to_contain_text("zzqx")
    check("a search without match says so", "zzqx" in page.get_by_test_id("empty-list").inner_text())


def flow_open_contact(page):
    page.goto(WEB_BOOK + "?q=joanne")
    page.locator("#rows .row-link", has_text="Joanne Smith").click()
    expect(page.get_by_test_id("contact-name")).to_have_text("Joanne Smith")
    check("a row opens the contact beside the list", "/c/joanne.vcf" in page.url and page.locator("#rows").count() == 1, page.url)
    check("the contact shows its e-mail as a mailto link",
          page.locator('[data-testid=contact-fields] a[href="mailto:joanne@example.net"]').count() == 1)
    page.goto(WEB_BOOK + "c/boat.vcf")
    fields = page.get_by_test_id("contact-fields").inner_text()
    check("an Apple X-ABLabel is shown as the label", "Harbour" in fields, fields)
    check("the group card is listed under Groups", "Sailing club" in page.get_by_test_id("contact-groups").inner_text())
    page.goto(WEB_BOOK + "c/photo.vcf")
    photo = page.get_by_test_id("contact-photo")
    check("a card's photo is shown from the server", photo.count() == 1 and page.evaluate(
        "document.querySelector('[data-testid=contact-photo]').naturalWidth") == 64)


def flow_edit_label(page):
    token = alice.token()
    _, etag, before = alice.get(BOOK + "boat.vcf")
    page.goto(WEB_BOOK + "c/boat.vcf")
    page.get_by_test_id("edit-contact").click()
    expect(page.get_by_test_id("edit-form")).to_be_visible()
    phone = page.get_by_test_id("tel-row").first
    check("the editor shows the phone", phone.get_by_test_id("tel-value").input_value() == "+1 555 0100")
    phone.get_by_test_id("tel-label").select_option("custom")
    phone.get_by_test_id("tel-custom").fill("Boat")
    with page.expect_navigation():
        page.get_by_test_id("save").click()
    check("saved: the contact is shown with a notice", "Saved" in flash_text(page), flash_text(page))
    field = page.locator("[data-testid=contact-fields] .field", has_text="+1 555 0100")
    check("the contact shows the phone labelled Boat", field.locator("dt").inner_text() == "Boat", field.inner_text())
    body = check_dav_edit("edit a phone label to Boat", "boat.vcf", token, etag,
                          expect_re=[r"^(item\d+)\.TEL[^:\r\n]*:\+1 555 0100\r$"], keep=BOAT_KEEP)
    group = re.search(r"^(item\d+)\.TEL[^:\r\n]*:\+1 555 0100\r$", body, re.M)
    if group:
        label = re.search(rf"^{group.group(1)}\.(X-ABLabel):Boat\r$", body, re.M | re.I)
        check("the custom label is the phone's item X-ABLabel", label is not None, body)
        if label and label.group(1) != "X-ABLabel":
            print(f"     note: the label is written {label.group(1)!r}, Apple writes 'X-ABLabel' (names are case-insensitive)")


def flow_conflict(page):
    page.goto(WEB_BOOK + "c/boat.vcf/edit")
    page.locator("#f-nickname").fill("Sammy")
    # Meanwhile a phone changes the card.
    _, etag, body = alice.get(BOOK + "boat.vcf")
    alice.put(BOOK + "boat.vcf", body.replace("FN:Sam Sailor", "FN:Sam Sailor\r\nTITLE:Skipper"), etag)
    token = alice.token()
    _, etag, _ = alice.get(BOOK + "boat.vcf")
    with watch.allowing(page, r"status of 409"):
        with page.expect_navigation() as navigation:
            page.get_by_test_id("save").click()
    check("saving over a change made elsewhere: 409 and both versions", navigation.value.status == 409
          and page.get_by_test_id("conflict").is_visible(), navigation.value.status)
    check("the saved version shows the other device's change", "Skipper" in page.get_by_test_id("saved-version").inner_text())
    check("the form holds this person's change again", page.locator("#f-nickname").input_value() == "Sammy")
    with page.expect_navigation():
        page.get_by_test_id("save").click()
    check("saved after the conflict", "Saved" in flash_text(page), flash_text(page))
    check_dav_edit("save after a conflict", "boat.vcf", token, etag, expect_in=["NICKNAME:Sammy", "TITLE:Skipper"],
                   keep=BOAT_KEEP)


def flow_add_delete_restore(page):
    token = alice.token()
    page.goto(WEB_BOOK)
    page.get_by_test_id("new-contact").click()
    page.get_by_test_id("field-given").fill("Test")
    page.get_by_test_id("field-family").fill("Newcomer")
    page.get_by_test_id("tel-value").first.fill("+44 20 7946 0000")
    page.get_by_test_id("email-value").first.fill("test.newcomer@example.org")
    page.get_by_test_id("field-org").fill("Web Test Ltd")
    with page.expect_navigation():
        page.get_by_test_id("save").click()
    check("a new contact is created and shown", page.get_by_test_id("contact-name").inner_text() == "Test Newcomer"
          and "created" in flash_text(page), page.url)
    name = urllib.parse.unquote(urllib.parse.urlparse(page.url).path.split("/c/")[1])
    created = check_dav_edit("add a contact", name, token, None,
                             expect_in=["FN:Test Newcomer", "N:Newcomer;Test;;;", "test.newcomer@example.org", "ORG:Web Test Ltd"],
                             expect_re=[r"^TEL[^:\r\n]*:\+44 20 7946 0000\r$", r"^UID:[0-9a-f-]{36}\r$"])

    token = alice.token()
    _, etag, _ = alice.get(BOOK + name)
    with page.expect_navigation():
        page.get_by_test_id("delete-contact").click()
    check("deleted: the list says it is in the trash, with an undo", "trash" in flash_text(page)
          and page.get_by_test_id("undo").count() == 1, flash_text(page))
    status, _, _ = alice.get(BOOK + name)
    check("deleted: CardDAV answers 404", status == 404, status)
    _, changes = alice.sync(BOOK, token)
    check("deleted: sync-collection reports it removed", BOOK + name in changes and changes[BOOK + name] is None, shorten(changes))

    token = alice.token()
    page.get_by_test_id("nav-trash").click()
    row = page.get_by_test_id("trash-row").filter(has_text="Test Newcomer")
    check("the trash lists the contact", row.count() == 1, page.get_by_test_id("trash-table").inner_text()
          if page.get_by_test_id("trash-table").count() else "no trash table")
    with page.expect_navigation():
        row.get_by_test_id("restore").click()
    check("restored: the contact is shown again", page.get_by_test_id("contact-name").inner_text() == "Test Newcomer"
          and "Restored" in flash_text(page), flash_text(page))
    status, etag_after, restored = alice.get(BOOK + name)
    check("restored: CardDAV has the same card back, byte for byte", status == 200 and restored == created, status)
    _, changes = alice.sync(BOOK, token)
    check("restored: sync-collection lists it as new", changes.get(BOOK + name) == etag_after, shorten(changes))
    # One more delete, left in the trash for the trash page's audit.
    page.goto(WEB_BOOK + "c/filler-129.vcf")
    with page.expect_navigation():
        page.get_by_test_id("delete-contact").click()
    check("a second delete: CardDAV answers 404", alice.get(BOOK + "filler-129.vcf")[0] == 404)


def flow_merge_and_undo(page):
    _, _, a_before = alice.get(BOOK + "dupe-a.vcf")
    _, _, b_before = alice.get(BOOK + "dupe-b.vcf")
    token = alice.token()
    page.goto(WEB_BOOK)
    page.get_by_test_id("nav-duplicates").click()
    group = page.get_by_test_id("duplicate-group").filter(has_text="Dupe Person")
    check("the duplicates page suggests the two Dupe Person cards", group.count() == 1,
          page.locator("main").inner_text()[:500])
    group.get_by_test_id("merge-link").click()
    expect(page.get_by_test_id("merge-form")).to_be_visible()
    preview = page.get_by_test_id("merge-preview").inner_text()
    check("the merge preview keeps both e-mail addresses", "dupe@example.org" in preview and "dupe.work@example.org" in preview,
          preview)
    check("the merge preview shows the name and the organisation", "Dupe Person" in preview and "Dupe Inc" in preview, preview)
    with page.expect_navigation():
        page.get_by_test_id("merge-submit").click()
    check("merged: a notice with an undo", "merged" in flash_text(page) and page.get_by_test_id("undo").count() == 1,
          flash_text(page))
    survivor = urllib.parse.unquote(urllib.parse.urlparse(page.url).path.split("/c/")[1])
    other = "dupe-b.vcf" if survivor == "dupe-a.vcf" else "dupe-a.vcf"
    status, etag, merged = alice.get(BOOK + survivor)
    check("merged: the card that stays holds every value of both", status == 200 and all(
        text in merged for text in ["dupe@example.org", "dupe.work@example.org", "Dupe Inc", "+1 555 0199",
                                    "X-DUPE-A:kept from a" if survivor == "dupe-a.vcf" else "X-DUPE-B:kept from b"]),
          shorten(merged, 800))
    own = "X-DUPE-B:kept from b" if survivor == "dupe-a.vcf" else "X-DUPE-A:kept from a"
    check("merged: the other card's own X- property is kept too", own in merged, f"{own!r} missing")
    check("merged: the e-mail both had is there once", merged.count("dupe@example.org") == 1, merged)
    status, _, _ = alice.get(BOOK + other)
    check("merged: the other card is gone over CardDAV", status == 404, status)
    _, changes = alice.sync(BOOK, token)
    check("merged: sync-collection lists the changed and the removed card",
          changes.get(BOOK + survivor) == etag and BOOK + other in changes and changes[BOOK + other] is None, shorten(changes))

    token = alice.token()
    with page.expect_navigation():
        page.get_by_test_id("undo").click()
    check("undone: the notice says so", "Undone" in flash_text(page), flash_text(page))
    _, etag_a, a_after = alice.get(BOOK + "dupe-a.vcf")
    _, etag_b, b_after = alice.get(BOOK + "dupe-b.vcf")
    check("undone: both cards are back as they were, byte for byte", a_after == a_before and b_after == b_before,
          shorten(a_after + b_after, 600))
    _, changes = alice.sync(BOOK, token)
    check("undone: sync-collection lists both cards", changes.get(BOOK + "dupe-a.vcf") == etag_a
          and changes.get(BOOK + "dupe-b.vcf") == etag_b, shorten(changes))


def flow_import_export(page):
    token = alice.token()
    before = alice.cards()
    page.goto(WEB_BOOK)
    page.get_by_test_id("nav-import").click()
    page.get_by_test_id("import-file").set_input_files({"name": "contacts.vcf", "mimeType": "text/vcard", "buffer": import_file()})
    page.get_by_test_id("import-submit").click()
    expect(page.get_by_test_id("import-result")).to_be_visible()
    summary = {key: page.get_by_test_id(f"import-{key}").inner_text() for key in ["created", "updated", "skipped", "failed"]}
    check("import: 95 created, 5 failed", summary == {"created": "95", "updated": "0", "skipped": "0", "failed": "5"}, summary)
    reasons = page.get_by_test_id("import-failures").locator("tbody tr").all_inner_texts()
    check("import: each failure has its card and a reason", len(reasons) == 5 and all(
        re.match(r"^Card \d+.*\t\S", r) for r in reasons), reasons)
    check("import: the reasons name the fault", any("VERSION" in r for r in reasons) and any("UID" in r for r in reasons)
          and any("quote" in r for r in reasons), reasons)
    check("import: a failed card's name is shown as text", any("<script>alert('import')</script>" in r for r in reasons), reasons)
    after = alice.cards()
    added = after - before
    check("import: CardDAV has the 95 new cards", len(added) == 95, len(added))
    _, changes = alice.sync(BOOK, token)
    check("import: sync-collection lists them", added <= set(changes), len(added - set(changes)))
    # Again, replacing: every card is updated.
    page.get_by_test_id("import-file").set_input_files({"name": "contacts.vcf", "mimeType": "text/vcard", "buffer": import_file()})
    page.get_by_test_id("collision-replace").check()
    page.get_by_test_id("import-submit").click()
    expect(page.get_by_test_id("import-updated")).to_have_text("95")
    check("import again with replace: 95 updated", page.get_by_test_id("import-created").inner_text() == "0")

    page.goto(WEB_BOOK)
    with page.expect_download() as download:
        page.get_by_test_id("nav-export").click()
    data = open(download.value.path(), "rb").read()
    try:
        cards = parse_vcards(data)
        check("export: the file parses back", True)
    except (AssertionError, UnicodeDecodeError) as error:
        check("export: the file parses back", False, error)
        return
    hrefs = alice.cards()
    check("export: as many cards as the book has over CardDAV", len(cards) == len(hrefs), f"{len(cards)} vs {len(hrefs)}")
    uids = {uid for uid, _ in cards}
    check("export: every card has its UID", {"boat", "joanne", "nasty-1", "club", "import-000"} <= uids and None not in uids,
          sorted(u for u in uids if u)[:10])
    _, _, boat = alice.get(BOOK + "boat.vcf")
    check("export: a card is exported as stored, byte for byte", boat.encode() in data)
    # A selection: two checked rows.
    page.goto(WEB_BOOK + "?q=filler00")
    page.locator("#rows .row .select").nth(0).check()
    page.locator("#rows .row .select").nth(1).check()
    with page.expect_download() as download:
        page.get_by_test_id("export-selection").click()
    selection = parse_vcards(open(download.value.path(), "rb").read())
    check("export of a selection: the two checked cards", len(selection) == 2, len(selection))


def focus_left_dialog(page):
    """Chromium gives the focus back a moment after a dialog closes: a key pressed before
    that still goes to the control inside it."""
    for _ in range(100):
        if page.evaluate("!document.activeElement || !document.activeElement.closest('dialog')"):
            return
        page.wait_for_timeout(10)


def csv_file():
    """A German Outlook export as Outlook writes it: Windows-1252."""
    return ("Vorname,Nachname,Firma,Mobiltelefon,E-Mail-Adresse,Geburtstag\r\n"
            "Bärbel,Müller,Öko GmbH,+49 171 1,b@example.de,24.12.1965\r\n"
            "Jörg,Schmidt,,+49 171 2,j@example.de,\r\n").encode("cp1252")


def flow_csv_import(page):
    # Into alice's "evil" book, so the default book's counts stay as the other flows expect.
    book = "/dav/addressbooks/alice/evil/"
    before = alice.cards(book)
    page.goto("/web/b/evil/")
    page.get_by_test_id("nav-import-csv").click()
    page.get_by_test_id("csv-file").set_input_files({"name": "kontakte.csv", "mimeType": "text/csv", "buffer": csv_file()})
    page.get_by_test_id("csv-upload").click()
    expect(page.get_by_test_id("csv-preview")).to_be_visible()
    detected = page.get_by_test_id("csv-detected").inner_text()
    check("csv: the preview names the format, language and encoding",
          "Outlook CSV, German headers, Windows-1252; 2 contacts, 0 rows" in detected, detected)
    mapping = page.get_by_test_id("csv-columns").locator("tbody tr").all_inner_texts()
    check("csv: the preview shows what each column becomes", "Mobiltelefon\tphone (mobile)" in mapping, mapping)
    rows = page.get_by_test_id("csv-rows").locator("tbody tr").all_inner_texts()
    check("csv: the preview shows the first contacts", len(rows) == 2 and "Bärbel Müller" in rows[0], rows)
    check("csv: nothing is written before the confirm", alice.cards(book) == before, len(alice.cards(book) - before))
    page.get_by_test_id("csv-confirm").click()
    expect(page.get_by_test_id("csv-result")).to_be_visible()
    created = page.get_by_test_id("csv-created").inner_text()
    check("csv: the confirm writes both contacts", created == "2", created)
    added = alice.cards(book) - before
    bodies = "".join(alice.get(href)[2] for href in added)
    check("csv: CardDAV has them, umlauts intact", len(added) == 2 and "Müller" in bodies and "CELL" in bodies and "+49 171 1" in bodies,
          shorten(bodies, 400))
    page.goto("/web/b/evil/")
    with page.expect_download() as download:
        page.get_by_test_id("nav-export-google").click()
    data = open(download.value.path(), "rb").read().decode("utf-8")
    check("csv: the Google CSV export holds them", data.startswith("First Name,") and "Bärbel,,Müller" in data, shorten(data, 300))


def flow_keyboard(page):
    page.goto(WEB_BOOK)
    page.locator("body").press("/")
    check("/ focuses the search box", page.evaluate("document.activeElement.id") == "q")
    page.keyboard.press("Escape")
    check("Esc leaves the search box", page.evaluate("document.activeElement.id") != "q")
    focused = "document.activeElement.querySelector('.row-name') ? document.activeElement.querySelector('.row-name').textContent" \
              " : document.activeElement.tagName"
    page.keyboard.press("j")
    first = page.evaluate(focused)
    page.keyboard.press("j")
    second = page.evaluate(focused)
    page.keyboard.press("k")
    back = page.evaluate(focused)
    names = row_names(page)
    check("j and k move through the list", (first, second, back) == (names[0], names[1], names[0]), (first, second, back))
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    third = page.evaluate(focused)
    check("arrow keys move too", third == names[2], third)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    check("Enter opens the contact", page.get_by_test_id("contact-name").inner_text() == names[2], page.url)
    contact_url = page.url
    with page.expect_navigation():
        page.keyboard.press("e")
    check("e edits it", page.url.split("?")[0].endswith("/edit") and page.get_by_test_id("edit-form").is_visible(), page.url)
    with page.expect_navigation():
        page.keyboard.press("Escape")
    check("Esc leaves the editor unchanged", page.url.split("?")[0] == contact_url.split("?")[0], page.url)
    # The skip links reach the contact without tabbing through the list.
    page.keyboard.press("Tab")
    check("Tab first reaches the skip link", page.evaluate("document.activeElement.textContent") == "Skip to main content")
    page.keyboard.press("Tab")
    check("then the skip link to the contact", page.evaluate("document.activeElement.textContent") == "Skip to contact")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    inside = page.evaluate("document.getElementById('detail').contains(document.activeElement) && document.activeElement.textContent")
    check("which moves the focus into the contact", bool(inside), inside)
    page.goto(contact_url)
    page.keyboard.press("?")
    check("? opens the help", page.locator("#help-dialog[open]").count() == 1)
    page.keyboard.press("Escape")
    check("Esc closes the help", page.locator("#help-dialog[open]").count() == 0)
    focus_left_dialog(page)
    with page.expect_navigation():
        page.keyboard.press("n")
    check("n opens a new contact", page.url.split("?")[0].endswith("/new") and page.get_by_test_id("edit-form").is_visible(),
          page.url)
    # The setting that turns the single-key shortcuts off (WCAG 2.1.4).
    page.get_by_test_id("help-button").click()
    page.get_by_test_id("single-key-toggle").uncheck()
    page.keyboard.press("Escape")
    focus_left_dialog(page)
    page.goto(WEB_BOOK)
    page.locator("body").press("/")
    page.keyboard.press("?")
    check("with single keys off, / and ? do nothing", page.evaluate("document.activeElement.id") != "q"
          and page.locator("#help-dialog[open]").count() == 0)
    page.get_by_test_id("help-button").click()
    check("the setting is remembered", not page.get_by_test_id("single-key-toggle").is_checked())
    page.get_by_test_id("single-key-toggle").check()
    page.keyboard.press("Escape")
    focus_left_dialog(page)
    page.locator("body").press("/")
    check("switched back on, / works again", page.evaluate("document.activeElement.id") == "q")
    # Ctrl+S saves an edit.
    token = alice.token()
    _, etag, _ = alice.get(BOOK + "boat.vcf")
    page.goto(WEB_BOOK + "c/boat.vcf/edit")
    page.get_by_test_id("field-org").fill("Harbour Master")
    with page.expect_navigation():
        page.keyboard.press("Control+s")
    check("Ctrl+S saves", "Saved" in flash_text(page), flash_text(page))
    check_dav_edit("an edit saved with Ctrl+S", "boat.vcf", token, etag, expect_in=["ORG:Harbour Master"], keep=BOAT_KEEP)


def flow_csrf(page):
    _, etag, body = alice.get(BOOK + "joanne.vcf")
    page.goto(WEB_BOOK + "c/joanne.vcf")
    page.evaluate("document.querySelectorAll('form input[name=csrf]').forEach((input) => input.remove())")
    with watch.allowing(page, r"status of 403"):
        with page.expect_navigation() as navigation:
            page.get_by_test_id("delete-contact").click()
    check("CSRF: a POST without the token is refused with 403", navigation.value.status == 403, navigation.value.status)
    status, etag_after, _ = alice.get(BOOK + "joanne.vcf")
    check("CSRF: the card is untouched", status == 200 and etag_after == etag, (status, etag, etag_after))

    # A page on another origin (another port of the same host: same site) posts a complete
    # form, token included: the Origin check refuses it.
    page.goto(WEB_BOOK + "c/joanne.vcf")
    token = page.locator("[data-testid=contact-actions] input[name=csrf]").first.input_value()
    port = int(urllib.parse.urlparse(BASE).port) + 1
    evil = f"http://127.0.0.1:{port}/evil.html"
    action = BASE + WEB_BOOK + "c/joanne.vcf/delete"
    page.route(evil, lambda route: route.fulfill(status=200, content_type="text/html", body=(
        f'<!DOCTYPE html><html lang="en"><title>evil</title><form method="post" action="{action}">'
        f'<input type="hidden" name="csrf" value="{token}"><input type="hidden" name="etag" value="{etag}">'
        '<button id="go">Win a prize</button></form></html>')))
    page.goto(evil)
    with watch.allowing(page, r"status of 403"):
        with page.expect_navigation() as navigation:
            page.click("#go")
    check("CSRF: a form posted from another origin is refused with 403", navigation.value.status == 403,
          navigation.value.status)
    status, etag_after, _ = alice.get(BOOK + "joanne.vcf")
    check("CSRF: the card is still untouched", status == 200 and etag_after == etag, (status, etag, etag_after))
    page.unroute(evil)
    # State never changes on GET.
    with watch.allowing(page, r"status of 404"):
        response = page.goto(WEB_BOOK + "c/joanne.vcf/delete")
    check("GET of a POST-only URL changes nothing", response.status in (404, 405) and alice.get(BOOK + "joanne.vcf")[1] == etag,
          response.status)


def javascript_links(page):
    return page.evaluate("Array.from(document.querySelectorAll('a[href], area[href], form[action], iframe, object, embed'))"
                         ".filter((e) => /^\\s*(javascript|data|vbscript):/i.test(e.getAttribute('href') || e.getAttribute('action')"
                         " || e.getAttribute('src') || e.getAttribute('data') || '') || e.tagName !== 'A' && e.tagName !== 'FORM')"
                         ".map((e) => e.outerHTML)")


def injected_elements(page):
    """Elements or attributes that only the seeded markup could have made."""
    return page.evaluate("""Array.from(document.querySelectorAll('*')).filter((e) =>
        e.tagName === 'B'
        || e.tagName === 'IMG' && e.getAttribute('src') === 'x'
        || e.tagName === 'SCRIPT' && !e.src
        || Array.from(e.attributes).some((a) => a.name.startsWith('on'))).map((e) => e.outerHTML)""")


def flow_xss(page):
    dialogs_before = len(watch.dialogs)
    page.goto(WEB_BOOK + "?q=alert")
    names = row_names(page)
    check("XSS: the list shows the names as text", XSS_FN in names and XSS_FN2 in names, names)
    page.goto(WEB_BOOK + "c/nasty-1.vcf")
    check("XSS: the name is shown literally", page.get_by_test_id("contact-name").inner_text() == XSS_FN)
    check("XSS: the organisation is shown literally", XSS_ORG in page.locator(".contact .subtitle").first.inner_text())
    fields = page.get_by_test_id("contact-fields").inner_text()
    for text in [XSS_NOTE, "javascript:alert(4)", "javascript:alert(5)", XSS_LABEL, "<script>alert(7)</script>"]:
        check(f"XSS: {text!r} is shown as text", text in fields, fields)
    check("XSS: the category is shown as text", "<b>cat</b>" in page.get_by_test_id("contact-groups").inner_text())
    check("XSS: no javascript:/data: link and no frame", javascript_links(page) == [], javascript_links(page))
    check("XSS: no element or handler made from card data", injected_elements(page) == [], injected_elements(page))
    page.goto(WEB_BOOK + "c/nasty-2.vcf")
    check("XSS: a vCard 4 name is shown literally", page.get_by_test_id("contact-name").inner_text() == XSS_FN2)
    fields = page.get_by_test_id("contact-fields").inner_text()
    for text in ["JaVaScRiPt:alert(11)", "javascript:alert(12)", "data:text/html,<script>alert(13)</script>", "<svg onload=alert(14)>"]:
        check(f"XSS: {text!r} is shown as text", text in fields, fields)
    check("XSS (vCard 4): no javascript:/data: link", javascript_links(page) == [], javascript_links(page))
    check("XSS (vCard 4): no element made from card data", injected_elements(page) == [], injected_elements(page))
    page.goto(WEB_BOOK + "c/nasty-1.vcf/edit")
    check("XSS: the editor holds the values literally", page.get_by_test_id("field-fn").input_value() == XSS_FN
          and page.get_by_test_id("field-org").input_value() == XSS_ORG and page.get_by_test_id("field-note").input_value() == XSS_NOTE)
    check("XSS: the editor has no element made from card data", injected_elements(page) == [], injected_elements(page))
    page.goto("/web/b/evil/")
    book = page.locator("#sidebar [data-testid='book-evil']").inner_text()
    check("XSS: a book's display name is shown as text", book == '<img src=x onerror=alert("book")>', book)
    check("XSS: the side bar has no element made from a book name", injected_elements(page) == [], injected_elements(page))
    page.goto(WEB_BOOK + "merge?c=nasty-1.vcf&c=nasty-2.vcf")
    check("XSS: the merge page shows both names as text", XSS_FN in page.locator("main").inner_text()
          and XSS_FN2 in page.locator("main").inner_text())
    check("XSS: the merge page has no element made from card data", injected_elements(page) == [], injected_elements(page))
    check("XSS: no dialog opened", len(watch.dialogs) == dialogs_before, watch.dialogs[dialogs_before:])


def flow_shared_read_only(page):
    page.goto("/web/")
    sidebar = page.get_by_test_id("sidebar").inner_text()
    check("a book shared read-only is listed with its owner", "Bob's work" in sidebar and "bob · read only" in sidebar, sidebar)
    page.goto("/web/b/work~bob/")
    check("the shared book lists its cards", "Bob's Colleague0" in row_names(page), row_names(page))
    page.locator("#rows .row-link").first.click()
    check("a read-only contact has no edit controls", page.get_by_test_id("read-only-notice").is_visible()
          and page.get_by_test_id("edit-contact").count() == 0)
    name = urllib.parse.unquote(urllib.parse.urlparse(page.url).path.split("/c/")[1])
    token = page.evaluate("document.querySelector('input[name=csrf]').value")
    with watch.allowing(page, r"status of 403"):
        status, text = page.evaluate("""async ([url, token]) => {
            const body = new FormData(); body.append('csrf', token); body.append('fn', 'Changed'); body.append('action', 'save');
            const response = await fetch(url, { method: 'POST', body });
            return [response.status, await response.text()]; }""", [f"/web/b/work~bob/c/{name}/edit", token])
    check("an edit posted to a read-only share is refused with 403", status == 403, status)
    check("the refusal says so in a person's words", "shared with you read-only" in text and "privilege" not in text,
          shorten(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text))))
    check("and the card is unchanged", "Changed" not in bob.get(f"/dav/addressbooks/bob/work/{name}")[2])


def flow_app_password(page):
    page.goto("/web/privacy")
    page.get_by_test_id("token-name").fill("Test phone")
    with page.expect_navigation():
        page.get_by_test_id("create-token").click()
    secret = page.get_by_test_id("token-secret").input_value()
    check("an app password is shown once", len(secret) >= 16, secret)
    text = page.locator("main").inner_text()
    check("the app password page says nothing of the program's insides", "library" not in text, shorten(text))
    device = Dav("alice", secret)
    status, _, _ = device.request("PROPFIND", BOOK, headers={"Depth": "0"})
    check("the app password opens CardDAV", status == 207, status)
    device.get(BOOK + "joanne.vcf")
    device_used.append(time.time())
    page.goto("/web/privacy")
    check("the privacy page lists the app password", page.get_by_test_id("token-row").filter(has_text="Test phone").count() == 1)
    row = page.get_by_test_id("token-row").filter(has_text="Test phone")
    with page.expect_navigation():
        row.get_by_test_id("revoke-token").click()
    status, _, _ = device.request("PROPFIND", BOOK, headers={"Depth": "0"})
    check("a revoked app password no longer opens CardDAV", status == 401, status)


HISTORY_BOOK = "/dav/addressbooks/alice/history/"


def flow_undo_a_device(page):
    """Issue 31: a second device deletes half the cards of a book and blanks the phone numbers
    of the rest; the undo page shows the plan, and its confirm brings every card back byte
    for byte, and a client's next sync gets them back."""
    originals = {}
    for index in range(6):
        name = f"keep-{index}.vcf"
        originals[name] = vcard("VERSION:3.0", f"UID:keep-{index}", f"FN:Kept Person {index}", f"N:Person;Kept {index};;;",
                                f"TEL;TYPE=CELL:+49 170 000 {index:04d}")
        alice.put(HISTORY_BOOK + name, originals[name])
    etags = {name: alice.get(HISTORY_BOOK + name)[1] for name in originals}
    before_damage = alice.token(HISTORY_BOOK)
    status, _, body = alice.request("POST", "/api/tokens", '{"name": "Second phone"}', {"Content-Type": "application/json"})
    assert status == 201, f"app password: {status}"
    second = Dav("alice", json.loads(body)["secret"])
    time.sleep(1.1)
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    time.sleep(1.1)
    for index, name in enumerate(sorted(originals)):
        if index % 2 == 0:
            status, _, _ = second.request("DELETE", HISTORY_BOOK + name, headers={"If-Match": etags[name]})
        else:
            blank = originals[name].replace(f"+49 170 000 {index:04d}", "")
            status, _, _ = second.request("PUT", HISTORY_BOOK + name, blank,
                                          {"Content-Type": "text/vcard; charset=utf-8", "If-Match": etags[name]})
        assert status in (204, 201), f"the second device's change of {name}: {status}"
    check("the second device deleted three cards", len(alice.cards(HISTORY_BOOK)) == 3, alice.cards(HISTORY_BOOK))

    page.goto("/web/b/history/c/keep-1.vcf")
    page.get_by_test_id("contact-history").locator("summary").click()
    versions = page.get_by_test_id("history-version")
    check("the contact page shows the card's two versions", versions.count() == 2, versions.count())
    check("the newest version says the phone number went and which device did it",
          "Second phone" in versions.first.inner_text() and "removed" in versions.first.inner_text(), versions.first.inner_text())

    page.goto("/web/b/history/undo-changes")
    page.get_by_test_id("undo-to").fill(since)
    page.get_by_test_id("undo-device").select_option("Second phone")
    with page.expect_navigation():
        page.get_by_test_id("undo-show-plan").click()
    summary = page.get_by_test_id("undo-summary").inner_text()
    check("the plan counts the six cards first", summary.startswith("6 cards put back, 0 cards removed, 0 conflicts"), summary)
    check("the plan lists the cards", page.get_by_test_id("undo-step").count() == 6, page.get_by_test_id("undo-step").count())
    check("nothing changed before the confirm", len(alice.cards(HISTORY_BOOK)) == 3)
    audit(page, "undo-plan", "desktop-light")
    with page.expect_navigation():
        page.get_by_test_id("undo-confirm").click()
    check("the undo says it is done", "Undone" in flash_text(page), flash_text(page))
    back = {name: alice.get(HISTORY_BOOK + name)[2] for name in originals}
    check("every card is back byte for byte", back == originals,
          [name for name in originals if back[name] != originals[name]])
    _, changes = alice.sync(HISTORY_BOOK, before_damage)
    check("a client's next sync gets every card back", sum(1 for etag in changes.values() if etag) == 6, changes)
    page.goto("/web/b/history/c/keep-0.vcf")
    page.get_by_test_id("contact-history").locator("summary").click()
    check("the restored card's history names alice's undo", "alice, account password" in
          page.get_by_test_id("history-version").first.inner_text(), page.get_by_test_id("history-version").first.inner_text())
    audit(page, "contact-history", "desktop-light")


def fetch(url):
    """(status, body bytes) of a GET without credentials (a phone's camera or a calendar app)."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def qr_image_ok(page, testid):
    """The QR code is a loaded <img> (the CSP allows its data: URL) with an alt text."""
    image = page.get_by_test_id(testid)
    expect(image).to_be_visible()
    alt = image.get_attribute("alt") or ""
    loaded = page.evaluate("(id) => { const i = document.querySelector(`[data-testid=${id}]`); "
                           "return i.complete && i.naturalWidth > 0; }", testid)
    return alt.startswith("QR code"), loaded, alt


def flow_add_device(page):
    # Android: the address, the user name and a QR code DAVx5 opens.
    page.goto("/web/privacy")
    page.get_by_test_id("token-name").fill("Pixel")
    page.get_by_test_id("device-other").check()
    with page.expect_navigation():
        page.get_by_test_id("create-token").click()
    has_alt, loaded, alt = qr_image_ok(page, "davx5-qr")
    check("Android: the DAVx5 QR code is an image with a text alternative, and it loads", has_alt and loaded, alt)
    check("Android: the DAV address is shown", page.get_by_test_id("dav-url").inner_text().endswith("/dav/"))
    check("Android: no profile is offered", page.get_by_test_id("profile-qr").count() == 0)
    audit(page, "device-android", "desktop-light")
    # iPhone: a QR code of a one-time URL the phone's camera opens without a session.
    page.goto("/web/privacy")
    page.get_by_test_id("token-name").fill("Test iPhone")
    page.get_by_test_id("device-apple").check()
    with page.expect_navigation():
        page.get_by_test_id("create-token").click()
    secret = page.get_by_test_id("token-secret").input_value()
    has_alt, loaded, alt = qr_image_ok(page, "profile-qr")
    check("iPhone: the profile QR code is an image with a text alternative, and it loads", has_alt and loaded, alt)
    audit(page, "device-iphone", "desktop-light")
    link = page.get_by_test_id("profile-link").inner_text()
    status, body = fetch(link)
    check("iPhone: the one-time link gives the profile without a session", status == 200, status)
    try:
        profile = plistlib.loads(body)
        carddav = profile["PayloadContent"][0]
        required = {"CardDAVHostName", "CardDAVPort", "CardDAVPrincipalURL", "CardDAVUseSSL", "CardDAVUsername",
                    "CardDAVPassword", "CardDAVAccountDescription", "PayloadType", "PayloadIdentifier", "PayloadUUID",
                    "PayloadVersion", "PayloadDisplayName"}
        check("iPhone: plistlib reads every key iOS needs", profile["PayloadType"] == "Configuration"
              and carddav["PayloadType"] == "com.apple.carddav.account" and required <= set(carddav)
              and isinstance(carddav["CardDAVPort"], int) and isinstance(carddav["CardDAVUseSSL"], bool), sorted(carddav))
        check("iPhone: the profile carries the page's password", carddav["CardDAVPassword"] == secret)
        status, _, _ = Dav("alice", carddav["CardDAVPassword"]).request("PROPFIND", carddav["CardDAVPrincipalURL"],
                                                                         headers={"Depth": "0"})
        check("iPhone: the profile's password opens its principal over CardDAV", status == 207, status)
    except Exception as error:  # a body that is no plist fails the checks above by name
        check("iPhone: plistlib reads the profile", False, shorten(error))
    status, _ = fetch(link)
    check("iPhone: the one-time link answers once", status == 404, status)
    page.goto("/web/privacy")
    row = page.get_by_test_id("token-row").filter(has_text="Test iPhone")
    with page.expect_navigation():
        row.get_by_test_id("revoke-token").click()
    status, _, _ = Dav("alice", secret).request("PROPFIND", BOOK, headers={"Depth": "0"})
    check("iPhone: revoking the device revokes the profile's password", status == 401, status)


def flow_feeds(page):
    page.goto("/web/feeds")
    books = page.get_by_test_id("feed-book").evaluate_all("(boxes) => boxes.map((b) => b.value)")
    check("feeds: the shared book is offered beside the own ones", "work~bob" in books and "default" in books, books)
    page.get_by_test_id("feed-kind-birthdays").check()
    with page.expect_navigation():
        page.get_by_test_id("create-feed").click()
    url = page.get_by_test_id("feed-url").input_value()
    webcal = page.get_by_test_id("feed-webcal").get_attribute("href") or ""
    check("feeds: a webcal:// link to the same feed", webcal == "webcal" + url[url.index(":"):], f"{webcal} / {url}")
    has_alt, loaded, alt = qr_image_ok(page, "feed-qr")
    check("feeds: the QR code is an image with a text alternative, and it loads", has_alt and loaded, alt)
    audit(page, "feed-created", "desktop-light")
    status, body = fetch(url)
    check("feeds: the URL serves the birthday calendar without a login", status == 200 and body.startswith(b"BEGIN:VCALENDAR"),
          status)
    page.goto("/web/feeds")
    rows = page.get_by_test_id("feed-row")
    check("feeds: the page lists the feed, never its URL", rows.count() == 1 and url.rsplit("/", 1)[1] not in page.content())
    with page.expect_navigation():
        rows.first.get_by_test_id("revoke-feed").click()
    status, _ = fetch(url)
    check("feeds: a revoked feed answers 404", status == 404, status)


def own_books_in_sidebar(page):
    """The side bar's own books (shares carry a badge), as shown."""
    return page.evaluate("""Array.from(document.querySelectorAll('#sidebar .books li.book'))
        .filter((li) => !li.querySelector('.badge')).map((li) => li.querySelector('a').textContent)""")


def flow_editor_layout(page):
    """At 1280 px no value box is narrower than its label boxes, and no value is cut off."""
    page.goto(WEB_BOOK + "c/wide.vcf/edit")
    rows = page.evaluate("""Array.from(document.querySelectorAll('.value-row')).map((row) => {
        const width = (e) => e.getBoundingClientRect().width;
        const labels = Array.from(row.querySelectorAll('select[name$="-label"], input[name$="-custom"]')).map(width);
        const valueBoxes = Array.from(row.querySelectorAll('input[name$="-value"], input[name^="adr-"]:not([type=hidden]):not([type=checkbox]):not([name$="-custom"]), textarea'));
        return { row: row.dataset.testid, label: Math.max(...labels), value: Math.min(...valueBoxes.map(width)),
                 cut: valueBoxes.filter((e) => e.value && e.tagName === 'INPUT' && e.scrollWidth > e.clientWidth)
                     .map((e) => `${e.name}: ${e.value} (${e.scrollWidth} > ${e.clientWidth})`) }; })""")
    check("editor at 1280 px: a row for every kind", {r["row"] for r in rows} >= {"tel-row", "email-row", "url-row", "adr-row"}, rows)
    narrow = [r for r in rows if r["value"] + 0.5 < r["label"]]
    check("editor at 1280 px: no value box is narrower than its label boxes", not narrow, narrow)
    cut = [c for r in rows for c in r["cut"]]
    check("editor at 1280 px: no number, address or street is cut off", not cut, cut)
    for testid, text in [("tel-value", WIDE_TEL), ("email-value", WIDE_EMAIL)]:
        check(f"editor: {testid} holds the whole value", page.get_by_test_id(testid).first.input_value() == text)
    for field, name in [("day", "Day of the birthday"), ("month", "Month of the birthday"), ("year", "Year of the birthday (optional)")]:
        box = page.get_by_role("textbox", name=name)
        label = page.locator(f"label[for=f-bday-{field}]")
        check(f"the birthday's {field} box has a name and a visible label", box.count() == 1
              and box.get_attribute("data-testid") == f"bday-{field}" and label.is_visible()
              and (label.bounding_box() or {}).get("width", 0) > 10, (box.count(), label.count()))
    check("the birthday is read back into its boxes", [page.get_by_test_id(f"bday-{f}").input_value() for f in ("day", "month", "year")]
          == ["15", "4", "1990"])

    # "Add phone number" keeps the photo box, its tick, and the list's search.
    page.goto(WEB_BOOK + "?q=paula")
    page.locator("#rows .row-link", has_text="Paula Pictured").click()
    page.wait_for_url(re.compile(r"/c/photo\.vcf"))
    with page.expect_navigation():
        page.get_by_test_id("edit-contact").click()
    page.get_by_test_id("photo-remove").check()
    page.get_by_test_id("tel-value").first.fill("+1 555 0123")
    with page.expect_navigation():
        page.get_by_test_id("add-tel").click()
    check("after Add phone number: one more phone row, the typed number kept", page.get_by_test_id("tel-row").count() == 2
          and page.get_by_test_id("tel-value").first.input_value() == "+1 555 0123", page.get_by_test_id("tel-row").count())
    check("after Add phone number: the Remove the photo box is still there, still ticked",
          page.get_by_test_id("photo-remove").count() == 1 and page.get_by_test_id("photo-remove").is_checked())
    check("after Add phone number: the search and its list are still there",
          page.get_by_test_id("search-input").input_value() == "paula" and row_names(page) == ["Paula Pictured"],
          (page.get_by_test_id("search-input").input_value(), row_names(page)))
    with page.expect_navigation():
        page.get_by_test_id("cancel").click()
    check("the photo is untouched after a cancel", "PHOTO" in alice.get(BOOK + "photo.vcf")[2])


def dav_display_name(dav, path):
    status, _, body = dav.request("PROPFIND", path, body=b'<?xml version="1.0"?><propfind xmlns="DAV:"><prop><displayname/></prop></propfind>',
                                  headers={"Depth": "0", "Content-Type": "application/xml"})
    match = re.search(r"<(?:\w+:)?displayname>([^<]*)<", (body or b"").decode("utf-8", "replace"))
    return status, match.group(1) if match else None


def flow_books(page):
    page.goto("/web/")
    own = own_books_in_sidebar(page)
    check("the side bar lists books by display name", own == sorted(own, key=str.casefold) and len(own) >= 2, own)
    page.get_by_test_id("nav-new-book").click()
    page.get_by_test_id("new-book-name").fill("Holiday cards")
    with page.expect_navigation():
        page.get_by_test_id("create-book").click()
    check("a new book: its empty list, with a notice", page.url.split("?")[0].endswith("/web/b/holiday-cards/")
          and "created" in flash_text(page), page.url)
    check("an empty book says what to do beside the list", page.get_by_test_id("no-contact").is_visible()
          and "No contacts" in page.get_by_test_id("no-contact").inner_text())
    check("the new book is in the side bar, in order", "Holiday cards" in own_books_in_sidebar(page)
          and own_books_in_sidebar(page) == sorted(own_books_in_sidebar(page), key=str.casefold), own_books_in_sidebar(page))
    status, name = dav_display_name(alice, "/dav/addressbooks/alice/holiday-cards/")
    check("the new book is there over CardDAV, with its name", status == 207 and name == "Holiday cards", (status, name))
    # The book listed last is where the next sign-in lands.
    with page.expect_navigation():
        page.get_by_test_id("sign-out").click()
    sign_in(page)
    check("sign-in lands on the book listed last", page.url.endswith("/web/b/holiday-cards/"), page.url)

    with page.expect_navigation():
        page.get_by_test_id("nav-book-settings").click()
    page.get_by_test_id("book-name").fill("Holiday 2026")
    with page.expect_navigation():
        page.get_by_test_id("rename-book").click()
    check("renamed: the side bar shows the new name", "Holiday 2026" in own_books_in_sidebar(page)
          and "renamed" in flash_text(page), own_books_in_sidebar(page))
    status, name = dav_display_name(alice, "/dav/addressbooks/alice/holiday-cards/")
    check("renamed over CardDAV too, at the same address", status == 207 and name == "Holiday 2026", (status, name))

    page.goto("/web/b/holiday-cards/settings")
    page.get_by_test_id("delete-book").click()   # the box is not ticked: the browser keeps the form
    check("delete without the tick: nothing happens", page.url.endswith("/settings")
          and dav_display_name(alice, "/dav/addressbooks/alice/holiday-cards/")[0] == 207, page.url)
    page.get_by_test_id("delete-book-confirm").check()
    with page.expect_navigation():
        page.get_by_test_id("delete-book").click()
    check("deleted: back on a book with cards, with a notice", page.url.split("?")[0].endswith(WEB_BOOK)
          and "deleted" in flash_text(page), page.url)
    check("deleted: gone from the side bar", "Holiday 2026" not in own_books_in_sidebar(page), own_books_in_sidebar(page))
    status, _ = dav_display_name(alice, "/dav/addressbooks/alice/holiday-cards/")
    check("deleted: CardDAV answers 404", status == 404, status)

    # Leaving a share: the sharee's list loses it, the owner keeps it.
    page.goto("/web/b/family~bob/settings")
    with page.expect_navigation():
        page.get_by_test_id("leave-book").click()
    sidebar = page.get_by_test_id("sidebar").inner_text()
    check("left a shared book: a notice, and it is gone from the side bar", "left" in flash_text(page)
          and "Bob's family" not in sidebar and "Bob's work" in sidebar, sidebar)
    check("left: bob still has the book", dav_display_name(bob, "/dav/addressbooks/bob/family/")[0] == 207)
    check("left: alice no longer sees it over CardDAV", dav_display_name(alice, "/dav/addressbooks/alice/family~bob/")[0] == 404)


def flow_password(page):
    page.goto("/web/")
    with page.expect_navigation():
        page.get_by_test_id("account-link").click()
    token = page.evaluate("document.querySelector('#password-form input[name=csrf]').value")
    with watch.allowing(page, r"status of 400"):
        status = page.evaluate("""async (token) => {
            const body = new FormData(); body.append('csrf', token); body.append('current', 'alice-pw');
            body.append('password', 'short'); body.append('confirm', 'short');
            return (await fetch('/web/account/password', { method: 'POST', body })).status; }""", token)
    check("a password under 8 characters is refused (400)", status == 400, status)
    page.get_by_test_id("current-password").fill("wrong password")
    page.get_by_test_id("new-password").fill("alice-pw-2026")
    page.get_by_test_id("confirm-password").fill("alice-pw-2026")
    with watch.allowing(page, r"status of 403"):
        with page.expect_navigation() as navigation:
            page.get_by_test_id("change-password-submit").click()
    check("a wrong current password: 403, nothing changed", navigation.value.status == 403
          and "wrong" in page.get_by_test_id("account-error").inner_text(), navigation.value.status)
    for new in ["alice-pw-2026", PASSWORDS["alice"]]:   # and back, for the steps after this one
        page.get_by_test_id("current-password").fill("alice-pw" if new != PASSWORDS["alice"] else "alice-pw-2026")
        page.get_by_test_id("new-password").fill(new)
        page.get_by_test_id("confirm-password").fill(new)
        with page.expect_navigation():
            page.get_by_test_id("change-password-submit").click()
        check(f"password changed to {new!r}: a notice, still signed in", "Password changed" in flash_text(page)
              and page.get_by_test_id("sign-out").count() == 1, flash_text(page))
        status, _, _ = Dav("alice", new).request("PROPFIND", BOOK, headers={"Depth": "0"})
        check(f"the new password {new!r} opens CardDAV", status == 207, status)


def flow_admin(page):
    with watch.allowing(page, r"status of 403"):
        response = page.goto("/web/admin")
    check("a user who is not an admin gets 403 on the admin page", response.status == 403, response.status)


def flow_admin_as_root(page):
    sign_in(page, "root", "/web/admin")
    users = page.get_by_test_id("user-table").inner_text()
    check("the admin page lists the users", all(name in users for name in ["alice", "bob", "root"]), users)
    check("the admin page shows the number of cards", page.get_by_test_id("health-cards").inner_text().replace("\u00a0", "").isdigit())
    page.get_by_test_id("new-user-name").fill("carol")
    page.get_by_test_id("new-user-password").fill("carol-password")
    with page.expect_navigation():
        page.get_by_test_id("create-user").click()
    check("an admin creates a user", "carol" in page.get_by_test_id("user-table").inner_text())
    status, _, _ = Dav("carol", "carol-password").request("PROPFIND", "/dav/addressbooks/carol/", headers={"Depth": "0"})
    check("the new user opens CardDAV", status == 207, status)


# --- Without JavaScript -----------------------------------------------------------------------

def flow_no_js(page):
    def follow(locator):
        with page.expect_navigation():
            locator.click()

    sign_in(page)
    check("no-JS: signed in", page.url.endswith(WEB_BOOK), page.url)
    check("no-JS: the page really runs without script", page.locator("#help-button").is_hidden())
    first_page = row_names(page)
    check("no-JS: the list shows 50 rows and the count", len(first_page) == 50
          and page.get_by_test_id("result-count").inner_text().endswith("contacts"), len(first_page))
    follow(page.get_by_test_id("next-page"))
    second_page = row_names(page)
    check("no-JS: Next shows the next 50", len(second_page) == 50 and not set(first_page) & set(second_page)
          and "after=" in page.url, page.url)
    follow(page.get_by_test_id("previous-page"))
    check("no-JS: Previous goes back", row_names(page) == first_page, row_names(page)[:3])
    follow(page.get_by_test_id("letters").get_by_role("link", name="Names starting with S"))
    check("no-JS: a letter jumps to the names from it", row_names(page)[0].upper().startswith("S"), row_names(page)[:3])
    page.get_by_test_id("search-input").fill("ann")
    with page.expect_navigation():
        page.get_by_test_id("search-input").press("Enter")
    names = row_names(page)
    check("no-JS: the search form finds Joanne", "Joanne Smith" in names and "q=ann" in page.url, (names, page.url))
    check("no-JS: the search shows its count", page.get_by_test_id("result-count").inner_text() == f"{len(names)} contacts")

    token = alice.token()
    _, etag, _ = alice.get(BOOK + "joanne.vcf")
    follow(page.locator("#rows .row-link", has_text="Joanne Smith"))
    follow(page.get_by_test_id("edit-contact"))
    page.get_by_test_id("field-note").fill("Edited without JavaScript")
    page.get_by_test_id("tel-value").first.fill("+49 30 111111")
    follow(page.get_by_test_id("add-tel"))   # a round trip: the form comes back with one more row
    check("no-JS: 'Add phone' adds a row and keeps what was typed", page.get_by_test_id("tel-row").count() == 2
          and page.get_by_test_id("field-note").input_value() == "Edited without JavaScript"
          and page.get_by_test_id("tel-value").first.input_value() == "+49 30 111111", page.get_by_test_id("tel-row").count())
    page.get_by_test_id("tel-value").nth(1).fill("+49 30 123456")
    page.get_by_test_id("tel-label").nth(1).select_option("custom")
    page.get_by_test_id("tel-custom").nth(1).fill("Summer house")
    follow(page.get_by_test_id("save"))
    check("no-JS: saved", "Saved" in flash_text(page), flash_text(page))
    check_dav_edit("no-JS edit", "joanne.vcf", token, etag, expect_in=["NOTE:Edited without JavaScript"],
                   expect_re=[r"^TEL[^:\r\n]*:\+49 30 111111\r$", r"^(item\d+)\.TEL[^:\r\n]*:\+49 30 123456\r$",
                              r"(?i)^item\d+\.X-ABLabel:Summer house\r$"], keep=["EMAIL;TYPE=INTERNET:joanne@example.net\r\n"])


# --- Every page: axe, overflow, screenshots ----------------------------------------------------

PAGES = [  # (label, path, user)
    ("list", WEB_BOOK, "alice"),
    ("search", WEB_BOOK + "?q=ann", "alice"),
    ("list-page-2", None, "alice"),          # the Next link of the list
    ("contact", WEB_BOOK + "c/boat.vcf", "alice"),
    ("contact-photo", WEB_BOOK + "c/photo.vcf", "alice"),
    ("contact-xss", WEB_BOOK + "c/nasty-1.vcf", "alice"),
    ("contact-intl", WEB_BOOK + "c/intl.vcf", "alice"),
    ("group", WEB_BOOK + "?group=club.vcf", "alice"),
    ("editor", WEB_BOOK + "c/boat.vcf/edit", "alice"),
    ("new-contact", WEB_BOOK + "new", "alice"),
    ("groups-of-contact", WEB_BOOK + "c/boat.vcf/groups", "alice"),
    ("import", WEB_BOOK + "import", "alice"),
    ("import-result", "IMPORT", "alice"),
    ("csv-preview", "CSV_PREVIEW", "alice"),
    ("trash", WEB_BOOK + "trash", "alice"),
    ("duplicates", WEB_BOOK + "duplicates", "alice"),
    ("merge", WEB_BOOK + "merge?c=dupe-a.vcf&c=dupe-b.vcf", "alice"),
    ("shared-read-only", "/web/b/work~bob/c/colleague-0.vcf", "alice"),
    ("editor-wide", WEB_BOOK + "c/wide.vcf/edit", "alice"),
    ("account", "/web/account", "alice"),
    ("new-book", "/web/books/new", "alice"),
    ("book-settings", WEB_BOOK + "settings", "alice"),
    ("shared-book-settings", "/web/b/work~bob/settings", "alice"),
    ("privacy", "/web/privacy", "alice"),
    ("feeds", "/web/feeds", "alice"),
    ("not-found", WEB_BOOK + "c/no-such-card.vcf", "alice"),
    ("admin", "/web/admin", "root"),
    ("admin-user", "/web/admin/users/alice", "root"),
    ("empty-book", "/web/b/default/", "root"),
]


def audit(page, label, variant, js=True):
    name = f"{label}-{variant}"
    detail = []
    ok = True
    if js:
        results = Axe().run(page)
        violations = results.response.get("violations", [])
        serious = [v for v in violations if v.get("impact") in ("serious", "critical")]
        minor = [f"{v['id']} ({v.get('impact')})" for v in violations if v not in serious]
        if serious:
            ok = False
            for v in serious:
                targets = [", ".join(map(str, n.get("target", []))) for n in v.get("nodes", [])[:4]]
                detail.append(f"{v['id']} ({v['impact']}): {v['help']} at {targets}")
        if minor:
            print(f"     note: {name}: minor axe findings: {', '.join(minor)}")
    scroll_width, inner_width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    if scroll_width > inner_width:
        ok = False
        wide = page.evaluate("""Array.from(document.querySelectorAll('body *')).filter((e) => e.getBoundingClientRect().right
            > window.innerWidth + 1).slice(0, 5).map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
            + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ').join('.') : ''))""")
        detail.append(f"horizontal overflow: scrollWidth {scroll_width} > innerWidth {inner_width} ({', '.join(wide)})")
    path = os.path.join(SHOTS, f"{name}.png")
    page.screenshot(path=path, full_page=True)
    check(f"axe and layout: {name}" + ("" if js else " (overflow only)"), ok, "; ".join(detail))


def audit_all(browser, viewport, scheme):
    variant = f"{'phone' if viewport == PHONE else 'desktop'}-{scheme}"
    print(f"== every page, {variant}")
    context = new_context(browser, variant, viewport=viewport, scheme=scheme)
    page = context.new_page()
    try:
        page.goto("/web/login")
        audit(page, "login", variant)
        user = None
        for label, path, page_user in PAGES:
            if page_user != user:
                if user is not None:
                    if page.get_by_test_id("sign-out").count() == 0:
                        page.goto("/web/")
                    with page.expect_navigation():
                        page.get_by_test_id("sign-out").click()
                sign_in(page, page_user)
                user = page_user
            if path is None:
                page.goto(WEB_BOOK)
                page.get_by_test_id("next-page").click()
                page.wait_for_url(re.compile(r"after="))
            elif path == "IMPORT":
                page.goto(WEB_BOOK + "import")
                page.get_by_test_id("import-file").set_input_files(
                    {"name": "contacts.vcf", "mimeType": "text/vcard", "buffer": import_file()})
                page.get_by_test_id("import-submit").click()
                expect(page.get_by_test_id("import-result")).to_be_visible()
            elif path == "CSV_PREVIEW":
                page.goto("/web/b/evil/import-csv")
                page.get_by_test_id("csv-file").set_input_files({"name": "kontakte.csv", "mimeType": "text/csv", "buffer": csv_file()})
                page.get_by_test_id("csv-upload").click()
                expect(page.get_by_test_id("csv-preview")).to_be_visible()
            elif label == "not-found":
                with watch.allowing(page, r"status of 404"):
                    page.goto(path)
            else:
                page.goto(path)
            audit(page, label, variant)
            if label == "privacy":
                charts.append(page.get_by_test_id("device-chart").filter(has_text="Test phone").count())
            if label == "list":
                page.get_by_test_id("help-button").click()
                audit(page, "help", variant)
                page.keyboard.press("Escape")
    except (AssertionError, PlaywrightError) as error:
        check(f"every page, {variant}: ran to the end", False, shorten(error, 800))
        failure_shot(page, f"audit {variant}")
    finally:
        context.close()


def main():
    if os.path.isdir(SHOTS):
        shutil.rmtree(SHOTS)
    os.makedirs(SHOTS)
    print("== seeding over CardDAV")
    seed()
    started = time.time()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        print(f"   chromium {browser.version}, screenshots in {os.path.abspath(SHOTS)}")
        context = new_context(browser, "flows")
        page = context.new_page()
        step("sign in", page, flow_sign_in)
        step("list and infinite scroll", page, flow_list_and_scroll)
        step("search as you type", page, flow_search)
        step("open a contact", page, flow_open_contact)
        step("edit a phone label to a custom one", page, flow_edit_label)
        step("an edit that meets a change from another device", page, flow_conflict)
        step("add, delete, restore from the trash", page, flow_add_delete_restore)
        step("merge two duplicates and undo", page, flow_merge_and_undo)
        step("import and export", page, flow_import_export)
        step("import a CSV file with a preview", page, flow_csv_import)
        step("keyboard", page, flow_keyboard)
        step("CSRF", page, flow_csrf)
        step("XSS", page, flow_xss)
        step("a book shared read-only", page, flow_shared_read_only)
        step("app passwords and the access history", page, flow_app_password)
        step("undo what a second device did to a book", page, flow_undo_a_device)
        step("add a device: Android and iPhone, QR codes, the one-time profile link", page, flow_add_device)
        step("feeds: add a birthday calendar, its webcal link and QR code, revoke", page, flow_feeds)
        step("the editor's layout at 1280 px, Add phone number, the birthday", page, flow_editor_layout)
        step("create, rename, delete a book; leave a share", page, flow_books)
        step("change the password", page, flow_password)
        step("admin pages are for admins", page, flow_admin)
        context.close()

        context = new_context(browser, "admin")
        step("admin", context.new_page(), flow_admin_as_root)
        context.close()

        context = new_context(browser, "no-js", js=False)
        page = context.new_page()
        step("without JavaScript", page, flow_no_js)
        context.close()

        for viewport in (DESKTOP, PHONE):
            for scheme in ("light", "dark"):
                audit_all(browser, viewport, scheme)
        browser.close()

    if not any(charts) and device_used:
        # The access history is written every 60 s: look once more after that.
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM)
            context = new_context(browser, "access history")
            page = context.new_page()
            page.wait_for_timeout(max(0, device_used[0] + 65 - time.time()) * 1000)
            sign_in(page, "alice", "/web/privacy")
            charts.append(page.get_by_test_id("device-chart").filter(has_text="Test phone").count())
            browser.close()
    print("== on every page")
    check("no console error, uncaught exception or CSP violation", not watch.problems,
          "\n       ".join(f"{where}: {what}" for where, what in watch.problems[:30]))
    check("no alert, confirm or prompt dialog ever opened", not watch.dialogs, watch.dialogs[:10])
    check("the access history shows a chart for the app password's device (written every 60 s)", any(charts), charts)
    shots = len([f for f in os.listdir(SHOTS) if f.endswith(".png") and not f.startswith("FAILED-")])
    print(f"\n{shots} screenshots in {os.path.abspath(SHOTS)}; {time.time() - started:.0f} s in the browser")
    print(f"web UI browser tests: {len(failed)} failed" + (f", {len(xfailed)} known bugs (XFAIL)" if xfailed else ""))
    for name in failed:
        print(f"  FAIL {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
