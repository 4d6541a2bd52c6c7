#!/usr/bin/env python3
"""The pages a mailed link opens, used as a person would, in headless Chromium (Selenium) against
`latchkey up --demo`: a reset link opened on a desktop (the token leaves the address bar; two
different passwords, then a weak one, each refused next to its field; a good one; the same link
again offers a new one, which is mailed), in English and in French; an e-mail verification
link confirmed with its button. Every page is checked for its security headers (no inline
script or style allowed, no framing, no referrer, no caching) and, for forms, that a post from
another origin is refused. Screenshots at 320 px and 1280 px go to $PAGES_SCREENSHOTS (default:
a temporary directory, printed).

Usage: pages_browser.py BIN_DIR. Exits 0 when every check passes.
"""
import json
import os
import re
import sys
import tempfile
import time
import http.client
import urllib.parse
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latchkey_up import latchkey_up  # noqa: E402

DOOR = "127.0.0.1:7480"
ORIGIN = "http://localhost:7480"
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def request(method, path, body=None, headers=None):
    connection = http.client.HTTPConnection(DOOR, timeout=10)
    connection.request(method, path, body, headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), data


def rpc(method, params):
    status, _, data = request("POST", "/rpc", json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
                              {"Content-Type": "application/json"})
    return json.loads(data)


def wait_for_token(outbox, prefix, address, seen):
    deadline = time.time() + 20
    while time.time() < deadline:
        if outbox.exists():
            for line in outbox.read_text().splitlines():
                message = json.loads(line)
                match = re.search(prefix + r"[A-Za-z0-9_-]{20,}", message.get("text", ""))
                if message.get("to") == address and match and match.group(0) not in seen:
                    seen.add(match.group(0))
                    return match.group(0)
        time.sleep(0.1)
    raise AssertionError(f"no {prefix} link mailed to {address}")


def headers_are_safe(name, headers):
    policy = headers.get("Content-Security-Policy", "")
    check(f"{name}: CSP without unsafe-inline or unsafe-eval, frame-ancestors 'none'",
          "unsafe" not in policy and "frame-ancestors 'none'" in policy and "default-src 'none'" in policy, policy)
    check(f"{name}: no referrer, no caching", headers.get("Referrer-Policy") == "no-referrer" and headers.get("Cache-Control") == "no-store",
          str(headers))


def browser(language, width):
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={width},900", f"--lang={language}"]:
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    # A window cannot be narrower than Chromium's minimum; the page's viewport can, as on a small phone.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500})
    return driver


def submit(driver):
    """Clicks the form's button and waits until the next page has replaced this one."""
    button = driver.find_element(By.CSS_SELECTOR, "button[type=submit]")
    button.click()
    WebDriverWait(driver, 10).until(expected_conditions.staleness_of(button))


def error_next_to(driver, field):
    element = driver.find_element(By.ID, field)
    described = element.get_attribute("aria-describedby") or ""
    errors = [driver.find_element(By.ID, part).text for part in described.split() if part.endswith("-error")]
    return element.get_attribute("aria-invalid") == "true" and errors and errors[0]


last_reset_request = [0.0]


def allowed_reset_request():
    """The stack takes one reset request per address a second (--reset-address-interval-s 1)."""
    while time.time() - last_reset_request[0] < 1.2:
        time.sleep(0.05)
    last_reset_request[0] = time.time()


def reset_flow(driver, outbox, shots, seen, language, words):
    allowed_reset_request()
    rpc("reset.request", {"email": "demo@example.com"})
    token = wait_for_token(outbox, "lkr_", "demo@example.com", seen)
    status, headers, body = request("GET", f"/reset?token={token}", headers={"Host": "localhost:7480"})
    check(f"[{language}] the link answers 303 to the bare path, the token in an HttpOnly SameSite=Strict cookie",
          status == 303 and headers.get("Location") == "/reset" and "HttpOnly" in headers.get("Set-Cookie", "")
          and "SameSite=Strict" in headers.get("Set-Cookie", "") and token.encode() not in body, str(headers))
    headers_are_safe(f"[{language}] reset redirect", headers)
    driver.get(f"{ORIGIN}/reset?token={token}")
    check(f"[{language}] the address bar holds no token", token not in driver.current_url, driver.current_url)
    check(f"[{language}] the page is in the browser's language", driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == language)
    check(f"[{language}] the rendered page never shows the token", token not in driver.page_source)
    check(f"[{language}] every field is labelled",
          all(driver.find_elements(By.CSS_SELECTOR, f"label[for='{field}']") for field in ["password", "password_again"]))
    width = driver.execute_script("return window.innerWidth")
    check(f"[{language}] at {width} px wide nothing scrolls sideways",
          driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"))
    driver.save_screenshot(str(shots / f"reset-form-{language}-{width}.png"))
    driver.find_element(By.ID, "password").send_keys("violet harbour lantern")
    driver.find_element(By.ID, "password_again").send_keys("violet harbour lanterns")
    submit(driver)
    check(f"[{language}] two different passwords: the error is announced next to the second field",
          error_next_to(driver, "password_again") == words["differ"], driver.page_source[:300])
    driver.find_element(By.ID, "password").send_keys("short")
    driver.find_element(By.ID, "password_again").send_keys("short")
    submit(driver)
    check(f"[{language}] a weak password: the server's rule is shown next to the field, in the page's language",
          error_next_to(driver, "password") == words["short"], driver.page_source[:400])
    driver.save_screenshot(str(shots / f"reset-weak-{language}.png"))
    new_password = "violet harbour lantern " + language
    driver.find_element(By.ID, "password").send_keys(new_password)
    driver.find_element(By.ID, "password_again").send_keys(new_password)
    submit(driver)
    check(f"[{language}] a good password: the done page", driver.find_element(By.TAG_NAME, "h1").text == words["done"], driver.page_source[:300])
    check(f"[{language}] the done page shows no token", token not in driver.page_source)
    answer = rpc("identity.login", {"username": "demo", "password": new_password, "device_id": "pages-suite"})
    check(f"[{language}] the new password signs in", "result" in answer, str(answer)[:200])
    driver.get(f"{ORIGIN}/reset?token={token}")
    check(f"[{language}] the used link says so and offers a new one", driver.find_elements(By.ID, "email") != [], driver.page_source[:300])
    driver.find_element(By.ID, "email").send_keys("demo@example.com")
    allowed_reset_request()
    submit(driver)
    check(f"[{language}] a new link is asked for", driver.find_element(By.TAG_NAME, "h1").text == words["sent"], driver.page_source[:300])
    wait_for_token(outbox, "lkr_", "demo@example.com", seen)
    check(f"[{language}] and mailed", True)


def verify_email_flow(driver, outbox, shots, seen):
    answer = rpc("identity.register", {"username": "pagesuser", "password": "correct horse battery", "email": "pages@example.com",
                                       "phone": "+15555550177"})
    check("a user registers", "result" in answer, str(answer)[:200])
    token = wait_for_token(outbox, "lke_", "pages@example.com", seen)
    driver.get(f"{ORIGIN}/verify-email?token={token}")
    check("the verification link leaves no token in the address bar", token not in driver.current_url)
    driver.save_screenshot(str(shots / "verify-email.png"))
    submit(driver)
    check("the address is confirmed", driver.find_element(By.TAG_NAME, "h1").text == "Confirm your e-mail address"
          and "confirmed" in driver.find_element(By.TAG_NAME, "p").text, driver.page_source[:300])
    driver.get(f"{ORIGIN}/verify-email?token={token}")
    submit(driver)
    check("the same link again does not work, and says so", "does not work" in driver.find_element(By.TAG_NAME, "p").text)


def main():
    bin_dir = sys.argv[1]
    shots = Path(os.environ.get("PAGES_SCREENSHOTS") or tempfile.mkdtemp(prefix="latchkey-pages-"))
    shots.mkdir(parents=True, exist_ok=True)
    environment = dict(os.environ, LATCHKEY_RATE_LIMITS="auth=0:1,codes=0:1,reset=0:1,default=0:1,observe=0:1",
                       LATCHKEY_RESET_ADDRESS_INTERVAL_S="1", LATCHKEY_DEMO_PASSWORD="pages suite harbour lantern")
    with latchkey_up(bin_dir, ["--demo"], environment, prefix="latchkey-pages-") as work:
        outbox = work / ".latchkey" / "outbox.jsonl"
        seen = set()
        # `latchkey up` creates the demo user right after it is up: wait until it signs in.
        deadline = time.time() + 30
        while "result" not in rpc("identity.login", {"username": "demo", "password": "pages suite harbour lantern", "device_id": "pages-suite"}):
            if time.time() > deadline:
                raise AssertionError("the demo user never signed in")
            time.sleep(0.1)
        status, headers, _ = request("POST", "/reset", "password=x&password_again=x&csrf=x",
                                     {"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"})
        check("a reset form posted from another origin is refused", status == 403, str(status))
        status, headers, _ = request("GET", "/verify-email")
        headers_are_safe("a link page", headers)
        english = {"short": "This password is too short.", "differ": "The two passwords are not the same.", "done": "Your password was changed", "sent": "Check your mail"}
        french = {"short": "Ce mot de passe est trop court.", "differ": "Les deux mots de passe ne sont pas identiques.", "done": "Votre mot de passe a été changé",
                  "sent": "Consultez vos e-mails"}
        for language, width, words in [("en", 1280, english), ("fr", 320, french)]:
            driver = browser(language, width)
            try:
                reset_flow(driver, outbox, shots, seen, language, words)
                if language == "en":
                    verify_email_flow(driver, outbox, shots, seen)
            finally:
                driver.quit()
    print(f"screenshots: {shots}")
    print(f"pages_browser: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
