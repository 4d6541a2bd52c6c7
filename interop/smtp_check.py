#!/usr/bin/env python3
"""Interop suite for Latchkey's SMTP client: one command, from the repository root:

    python3 interop/smtp_check.py [--skip-build]

1. starts interop/smtp_server.py (aiosmtpd: plain, STARTTLS, smtps, AUTH PLAIN/LOGIN, a
   throw-away CA) in a temporary directory;
2. runs the Swift client in every mode through XCTest
   (`swift test --filter DeliveryTests.SMTPInteropTests` with LATCHKEY_SMTP_INTEROP=1), the
   real `reset` executable mailing a reset link through STARTTLS + AUTH
   (`EndToEndTests.ResetSMTPInteropTests`), and the real `identity` executable on the whole
   stack mailing the account's links and notices (`EndToEndTests.AccountMailSMTPInteropTests`);
3. parses every message the server received with Python's `email` package (policy=default)
   and checks headers, MIME structure, the links, non-ASCII text and dot-stuffed lines.

Exits 0 when everything holds, 1 otherwise.
"""

import email
import email.policy
import email.utils
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = {
    # mode: (tls expected, authenticated user expected)
    "plain": (False, None),
    "starttls": (True, None),
    "opportunistic": (True, None),
    "auth_plain": (True, "latchkey"),
    "auth_login": (True, "latchkey"),
    "smtps": (True, "latchkey"),
}
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("  FAIL " + what)


def ensure_packages():
    try:
        import aiosmtpd  # noqa: F401
        import cryptography  # noqa: F401
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "aiosmtpd>=1.4", "cryptography>=41"])


def start_server(directory):
    # The server's own log (expected TLS refusals print tracebacks) goes to a file, shown on failure.
    log = open(os.path.join(directory, "server.log"), "w")
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "interop", "smtp_server.py"), directory], stdout=log, stderr=log)
    deadline = time.time() + 30
    while time.time() < deadline:
        if os.path.exists(os.path.join(directory, "server.json")):
            return server
        if server.poll() is not None:
            sys.exit("smtp_server.py exited with %s" % server.returncode)
        time.sleep(0.1)
    server.terminate()
    sys.exit("smtp_server.py did not start")


def run_swift(directory, skip_build):
    environment = dict(os.environ, LATCHKEY_SMTP_INTEROP="1", LATCHKEY_SMTP_INTEROP_DIR=directory)
    command = ["swift", "test", "--filter",
               "DeliveryTests.SMTPInteropTests|EndToEndTests.ResetSMTPInteropTests|EndToEndTests.AccountMailSMTPInteropTests"]
    if skip_build:
        command.insert(2, "--skip-build")
    result = subprocess.run(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    summary = [line for line in result.stdout.splitlines() if "Executed" in line or "error" in line or "failed" in line]
    print("\n".join(summary[-12:]))
    check(result.returncode == 0, "swift SMTP interop tests passed (exit %d)" % result.returncode)
    executed = [line for line in result.stdout.splitlines() if "Executed" in line]
    check(executed and not any("skipped" in line for line in executed), "the interop tests ran rather than skipped")


def check_reset_mail(raw, message, meta):
    print("- reset mail from the reset executable (port %s, tls=%s, auth=%s)" % (meta["port"], meta["tls"], meta["auth_user"]))
    check(meta["tls"] and meta["auth_user"] == "latchkey", "reset: sent over STARTTLS with AUTH")
    check(meta["rcpt_tos"] == ["demo@example.com"], "reset: envelope recipient")
    check(not message.defects, "reset: no MIME defects")
    check(all(len(line) <= 78 for line in raw.split(b"\r\n")), "reset: no line longer than 78 characters")
    check(message["From"].addresses[0].addr_spec == "no-reply@latchkey.test", "reset: From")
    check(message["Date"] is not None and message["Message-ID"] is not None, "reset: Date and Message-ID")
    check(message.get_content_type() == "multipart/alternative", "reset: multipart/alternative")
    text = message.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
    markup = message.get_body(preferencelist=("html",)).get_content()
    import re
    link = re.search(r"https://bank\.example/reset\?token=(lkr_[A-Za-z0-9_-]{43})\n", text)
    check(link is not None, "reset: universal link with a well-formed lkr_ token in the text part")
    if link:
        check('href="https://bank.example/reset?token=%s"' % link.group(1) in markup, "reset: the same link in the HTML part")
    check("expires in 30 minutes" in text, "reset: expiry in words")
    check("If you did not ask for this" in text, "reset: what to do if it was not you")
    return "reset"


# The account's mails (subject: what it is, recipient, the page its link opens or None).
ACCOUNT_MAILS = {
    "Confirm your Latchkey e-mail address": ("verify", "nina@example.com", "verify-email"),
    "Your Latchkey password was changed": ("password", "nina@example.com", None),
    "Confirm your new Latchkey e-mail address": ("confirm", "nina@example.org", "email-change/confirm"),
    "Latchkey: your e-mail address is being changed": ("revert", "nina@example.com", "email-change/revert"),
    "Your Latchkey account was deleted": ("deleted", "nina@example.com", None),
    "Someone tried to sign up for Latchkey with your address": ("signup-attempt", "nina@example.com", None),
    "Latchkey: your phone number was changed": ("phone", "nina@example.com", None),
    "Latchkey: new recovery codes were made": ("recovery-codes", "nina@example.com", None),
    "Latchkey: a sign-in on a new device": ("new-device", "nina@example.com", None),
    "Your e-mail address and Latchkey": ("address-in-use", "olga@example.com", None),
    "Latchkey: a change of your e-mail address was refused": ("change-refused", "nina@example.com", None),
    # Cyrillic: sent as RFC 2047 encoded-words, read back by the `email` package.
    "Подтвердите адрес электронной почты для Latchkey": ("verify-ru", "olga@example.com", "verify-email"),
}


def check_account_mail(raw, message, meta):
    import re
    kind, recipient, page = ACCOUNT_MAILS[str(message["Subject"])]
    print("- account mail %s from the identity executable (tls=%s, auth=%s)" % (kind, meta["tls"], meta["auth_user"]))
    check(meta["tls"] and meta["auth_user"] == "latchkey", "%s: sent over STARTTLS with AUTH" % kind)
    check(meta["rcpt_tos"] == [recipient], "%s: envelope recipient %s (%s)" % (kind, recipient, meta["rcpt_tos"]))
    check(not message.defects, "%s: no MIME defects" % kind)
    check(all(len(line) <= 78 for line in raw.split(b"\r\n")), "%s: no line longer than 78 characters" % kind)
    check(message["From"].addresses[0].addr_spec == "no-reply@latchkey.test", "%s: From" % kind)
    check(message.get_content_type() == "multipart/alternative", "%s: multipart/alternative" % kind)
    text = message.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")
    markup = message.get_body(preferencelist=("html",)).get_content()
    check("correct horse battery" not in text and "a much longer passphrase" not in text, "%s: no password in the mail" % kind)
    tokens = set(re.findall(r"lke_[A-Za-z0-9_-]{43}", text))
    if page is None:
        check(not tokens, "%s: a notice holds no token" % kind)
        return "account-" + kind
    check(len(tokens) == 1, "%s: one lke_ token in the text (%d)" % (kind, len(tokens)))
    for token in tokens:
        check("https://bank.example/%s?token=%s\n" % (page, token) in text, "%s: the universal link in the text" % kind)
        check("latchkey://%s?token=%s\n" % (page, token) in text, "%s: the app's link in the text" % kind)
        check('href="https://bank.example/%s?token=%s"' % (page, token) in markup, "%s: the link in the HTML part" % kind)
        check('rel="noreferrer"' in markup, "%s: the HTML link sends no referrer" % kind)
    return "account-" + kind


def check_message(path, meta):
    with open(path, "rb") as f:
        raw = f.read()
    message = email.message_from_bytes(raw, policy=email.policy.default)
    if str(message["Subject"]) == "Reset your Latchkey password":
        return check_reset_mail(raw, message, meta)
    if str(message["Subject"]) in ACCOUNT_MAILS:
        return check_account_mail(raw, message, meta)
    request = str(message.get("X-Latchkey-Request", ""))
    mode = request.replace("interop-", "", 1)
    print("- %s (port %s, tls=%s, auth=%s)" % (mode, meta["port"], meta["tls"], meta["auth_user"]))
    check(mode in MODES, "%s: known mode (X-Latchkey-Request: %r)" % (path, request))
    if mode not in MODES:
        return None
    tls, user = MODES[mode]
    check(meta["tls"] == tls, "%s: TLS is %s" % (mode, tls))
    check(meta["auth_user"] == user, "%s: authenticated as %s" % (mode, user))
    check(meta["mail_from"] == "no-reply@latchkey.test", "%s: envelope sender" % mode)
    check(meta["rcpt_tos"] == ["alice@example.com"], "%s: envelope recipient" % mode)
    check(b"\r\n" in raw and raw.count(b"\n") == raw.count(b"\r\n"), "%s: CRLF line ends only" % mode)
    check(all(len(line) <= 78 for line in raw.split(b"\r\n")), "%s: no line longer than 78 characters" % mode)
    check(not message.defects, "%s: no MIME defects in the message (%s)" % (mode, message.defects))

    # Headers.
    check(str(message["Subject"]) == "Interop %s: réinitialisation ✓" % mode, "%s: encoded-word subject decodes (%r)" % (mode, str(message["Subject"])))
    check(message["From"].addresses[0].addr_spec == "no-reply@latchkey.test", "%s: From address" % mode)
    check(message["From"].addresses[0].display_name == "Latchkey Interop", "%s: From display name" % mode)
    check(message["To"].addresses[0].addr_spec == "alice@example.com", "%s: To" % mode)
    date = message["Date"].datetime if message["Date"] is not None else None
    check(date is not None and abs(time.time() - date.timestamp()) < 600, "%s: Date is now" % mode)
    message_id = str(message["Message-ID"] or "")
    check(message_id.startswith("<") and message_id.endswith("@latchkey.test>"), "%s: Message-ID (%s)" % (mode, message_id))
    check(str(message["MIME-Version"]) == "1.0", "%s: MIME-Version" % mode)

    # Structure: multipart/alternative with text/plain first and text/html last.
    check(message.get_content_type() == "multipart/alternative", "%s: multipart/alternative" % mode)
    parts = list(message.iter_parts()) if message.is_multipart() else []
    check([p.get_content_type() for p in parts] == ["text/plain", "text/html"], "%s: text then HTML parts" % mode)
    for part in parts:
        check(part.get_content_charset() == "utf-8", "%s: %s is UTF-8" % (mode, part.get_content_type()))
        check(part.defects == [], "%s: %s has no defects" % (mode, part.get_content_type()))
    body = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    # get_content() keeps the CRLF line ends of the wire; compare lines.
    text = (body.get_content() if body is not None else "").replace("\r\n", "\n")
    markup = (html.get_content() if html is not None else "").replace("\r\n", "\n")
    token = "lkr_interop-%s-0123456789abcdefghijklmnopqrstuv" % mode
    check("latchkey://reset-password?token=%s\n" % token in text, "%s: deep link in the text part" % mode)
    check("https://example.com/reset?token=%s\n" % token in text, "%s: universal link in the text part" % mode)
    check('href="latchkey://reset-password?token=%s"' % token in markup, "%s: link in the HTML part" % mode)
    lines = text.split("\n")
    check(".hidden line that starts with a dot" in lines, "%s: a line starting with a dot survives" % mode)
    check("..two dots" in lines, "%s: a line starting with two dots survives" % mode)
    check("." in lines, "%s: a line of a single dot survives" % mode)
    check(".dot line in html" in markup.split("\n"), "%s: HTML line starting with a dot survives" % mode)
    check("Ça expire dans 30 minutes — ✓" in lines, "%s: non-ASCII text survives" % mode)
    check(("long line " * 20) + "end" in lines, "%s: soft line breaks rejoin" % mode)
    return mode


def main():
    skip_build = "--skip-build" in sys.argv
    ensure_packages()
    directory = tempfile.mkdtemp(prefix="latchkey-smtp-interop-")
    server = start_server(directory)
    try:
        print("==> Swift SMTP client in every mode")
        run_swift(directory, skip_build)
        print("==> what the server received, parsed with email (policy=default)")
        messages = os.path.join(directory, "messages")
        seen = []
        for name in sorted(os.listdir(messages)):
            if name.endswith(".eml"):
                with open(os.path.join(messages, name[:-4] + ".json")) as f:
                    meta = json.load(f)
                seen.append(check_message(os.path.join(messages, name), meta))
        for mode in list(MODES) + ["reset"] + ["account-" + kind for kind, _, _ in ACCOUNT_MAILS.values()]:
            check(seen.count(mode) == 1, "exactly one message in mode %s (got %d)" % (mode, seen.count(mode)))
        check(not any(m is None for m in seen), "no unexpected messages (untrusted or misnamed servers must get none)")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        if not failures:
            shutil.rmtree(directory, ignore_errors=True)
    if failures:
        print("\nsmtp interop: %d check(s) failed (messages and server.log kept in %s)" % (len(failures), directory))
        sys.exit(1)
    print("\nsmtp interop: all checks passed (%d messages)" % len(seen))


if __name__ == "__main__":
    main()
