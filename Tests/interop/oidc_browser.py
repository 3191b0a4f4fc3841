"""OIDC sign-in and Nextcloud Login Flow v2 in a real browser (run by oidc.sh): Debian's
chromium through Playwright's executable_path, against `rolo serve` and the test provider
(oidc_provider.py). Each check prints one line, "ok" or "FAIL"; the exit status is the
number of failures."""
import base64
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

from playwright.sync_api import sync_playwright

ROLO = os.environ["ROLO_URL"]
PROVIDER = os.environ["PROVIDER_URL"]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
failures = 0


def check(name, condition, detail=""):
    global failures
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"))
    if not condition:
        failures += 1


def control(**command):
    request = urllib.request.Request(PROVIDER + "/control", data=json.dumps(command).encode(), method="POST")
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)


def http(method, url, data=None, headers=None):
    """(status, headers, body) of one request; errors are answers too."""
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def users():
    listing = subprocess.run([os.environ["ROLO_BIN"], "user", "list", "--database", os.environ["ROLO_DATABASE"]],
                             capture_output=True, text=True)
    return listing.stdout


def sso(browser, user):
    """A fresh browser signs in through the provider as `user`: (page, final response)."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(ROLO + "/web/login")
    page.get_by_test_id("login-oidc").click()
    page.wait_for_selector("#login")
    page.fill("#login", user)
    with page.expect_navigation() as navigation:
        page.click("#approve")
    return page, navigation.value


def who(page):
    element = page.query_selector(".who")
    return element.inner_text() if element else None


def refused(browser, name, mode, words):
    control(mode=mode)
    page, response = sso(browser, "dave")
    control(mode="normal")
    error = page.query_selector("[data-testid=login-error]")
    text = error.inner_text() if error else ""
    check(f"{name}: refused with 401", response.status == 401, response.status)
    check(f"{name}: the page says why", words in text, text)
    page.goto(ROLO + "/web/")
    check(f"{name}: no session", page.url.startswith(ROLO + "/web/login"), page.url)
    page.context.close()


def main():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)

        page = browser.new_page()
        page.goto(ROLO + "/web/login")
        button = page.get_by_test_id("login-oidc")
        check("the sign-in page offers the provider beside the form",
              button.inner_text() == "Sign in with Test SSO" and page.get_by_test_id("login-form").is_visible(),
              button.inner_text())
        page.close()

        check("no account for carol before", "carol" not in users().split())
        page, response = sso(browser, "carol")
        check("carol signs in through the provider", response.status == 200 and who(page) == "carol",
              f"{response.status} {who(page)}")
        check("the first sign-in made carol's account", "carol" in users().split(), users())
        page.goto(ROLO + "/web/b/default/")
        check("carol has a default book", page.url.endswith("/web/b/default/") and who(page) == "carol", page.url)
        check("carol is an admin (oidc_admin_group)", page.get_by_test_id("admin-link").count() == 1)
        carol = page

        dave, response = sso(browser, "dave")
        check("dave signs in, not an admin", who(dave) == "dave" and dave.get_by_test_id("admin-link").count() == 0,
              who(dave))
        dave.context.close()

        eve, response = sso(browser, "eve")
        check("eve, outside oidc_required_group, is refused", response.status == 401 and who(eve) is None,
              response.status)
        check("eve has no account", "eve" not in users().split())
        eve.context.close()

        refused(browser, "tampered ID token", "tampered", "signature")
        check("the tampered token's user (root) was not made", "root" not in users().split())
        refused(browser, "wrong state", "wrong-state", "state")
        refused(browser, "expired ID token", "expired", "expired")

        kid = control(rotate=True)["kid"]
        rotated, response = sso(browser, "dave")
        check(f"a rotated key ({kid}) still signs in", response.status == 200 and who(rotated) == "dave",
              f"{response.status} {who(rotated)}")
        rotated.context.close()

        # Twice in one outage (oidc.sh checks the server logged it once), then back.
        control(mode="token-down")
        for attempt in (1, 2):
            down, response = sso(browser, "dave")
            check(f"provider failing at login: 503 page with Retry-After ({attempt})",
                  response.status == 503 and response.headers.get("retry-after") == "30", response.status)
            check(f"... that says so ({attempt})", "cannot be reached" in down.content())
            down.context.close()
        control(mode="normal")
        back, response = sso(browser, "dave")
        check("the provider back: dave signs in", response.status == 200 and who(back) == "dave", response.status)
        back.context.close()

        # Nextcloud Login Flow v2: carol (an OIDC user, no password of her own) connects a device.
        status, _, body = http("POST", ROLO + "/index.php/login/v2", headers={"User-Agent": "DAVx5/4.4 (flow test)"})
        flow = json.loads(body)
        check("login flow starts", status == 200 and flow["poll"]["endpoint"] == ROLO + "/index.php/login/v2/poll"
              and flow["login"].startswith(ROLO + "/web/login-flow/"), body)
        poll = lambda: http("POST", flow["poll"]["endpoint"], urllib.parse.urlencode({"token": flow["poll"]["token"]}).encode(),
                            {"Content-Type": "application/x-www-form-urlencoded"})
        check("poll before the grant: 404", poll()[0] == 404)
        check("a made-up poll token: 404", http("POST", flow["poll"]["endpoint"], b"token=made-up")[0] == 404)
        carol.goto(flow["login"])
        check("the flow's page names the client", "DAVx5/4.4 (flow test)" in carol.get_by_test_id("login-flow-client").inner_text())
        check("poll while the page is open: 404", poll()[0] == 404)
        carol.get_by_test_id("login-flow-grant").click()
        check("granted", carol.get_by_test_id("login-flow-granted").count() == 1)
        status, _, body = poll()
        answer = json.loads(body) if status == 200 else {}
        check("poll after the grant: the app password", status == 200 and answer.get("server") == ROLO
              and answer.get("loginName") == "carol" and answer.get("appPassword", "").startswith("rolo_"), body)
        check("poll again: 404 (the password is given once)", poll()[0] == 404)
        auth = "Basic " + base64.b64encode(f"carol:{answer.get('appPassword')}".encode()).decode()
        status, _, _ = http("PROPFIND", ROLO + "/dav/addressbooks/carol/default/", headers={"Authorization": auth, "Depth": "0"})
        check("the app password opens carol's book over CardDAV", status == 207, status)
        card = b"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:flow-1\r\nFN:Flow Card\r\nN:Card;Flow;;;\r\nEND:VCARD\r\n"
        status, _, _ = http("PUT", ROLO + "/dav/addressbooks/carol/default/flow-1.vcf", card,
                            {"Authorization": auth, "Content-Type": "text/vcard"})
        check("... and writes a card", status == 201, status)
        carol.goto(ROLO + "/web/privacy")
        check("the app password is named after the client", "DAVx5/4.4 (flow test)" in carol.content())
        carol.goto(flow["login"])
        check("the used flow's page is gone", carol.get_by_test_id("login-flow-gone").count() == 1)

        # Signed out, the flow's page asks for a sign-in first (any method), then comes back.
        status, _, body = http("POST", ROLO + "/index.php/login/v2", headers={"User-Agent": "CardBook"})
        second = json.loads(body)
        context = browser.new_context()
        page = context.new_page()
        page.goto(second["login"])
        check("signed out, the flow's page asks for a sign-in", "/web/login" in page.url, page.url)
        page.get_by_test_id("login-user").fill("local-admin")
        page.get_by_test_id("login-password").fill("local-admin-pw")
        page.get_by_test_id("login-submit").click()
        check("after the password sign-in, back on the flow's page",
              page.get_by_test_id("login-flow-client").count() == 1 and "CardBook" in page.content(), page.url)
        context.close()
        browser.close()
    print(f"oidc browser: {failures} failed")
    return failures


if __name__ == "__main__":
    sys.exit(min(main(), 100))
