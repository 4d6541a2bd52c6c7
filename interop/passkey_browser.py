#!/usr/bin/env python3
"""Passkeys with a real browser: headless Chromium and its WebAuthn virtual authenticator
(CTAP2, internal transport, resident keys, user verification) run every ceremony against
Latchkey the way a web page would, so what Chrome really sends is what the server must take.

A small HTTP server here serves the page at http://localhost:<proxy>/ (the origin identity is
configured with; RP ID `localhost`) and forwards its `POST /rpc` to the gateway's HTTP door, so
page and door share one origin. The page has one same-origin script (/passkey.js, CSP
`script-src 'self'`): each of its functions runs a whole ceremony with fetch (options,
PublicKeyCredential.parse*OptionsFromJSON, navigator.credentials.create/get, toJSON(), the
answer). A second server on another port (http://localhost:<other>, not configured) plays a
foreign site that runs the same script.

It proves: (1) registration after a password login stepped up, the passkey listed with its
attestation and backup flags; (2) usernameless sign-in at aal 2 whose session works;
(3) step-up of a fresh password session with passkey_verify; (4) refusals: a foreign origin,
a replayed assertion, no user verification where it is required (and sign-in without it only
at aal 1), a revoked passkey, and a second registration of the same authenticator.

Usage: passkey_browser.py BIN_DIR   (the stack as run_passkeys.sh announces it, or started here)
Exits 0 when every check passes, 1 otherwise.
"""
import http.client
import http.server
import os
import secrets
import shutil
import sys
import threading

import cbor2
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions

from passkey_stack import Account, Checks, Client, address, b64url_decode, port, reason, stack

CHROMIUM = os.environ.get("PASSKEY_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("PASSKEY_CHROMEDRIVER", "/usr/bin/chromedriver")

PAGE = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Latchkey passkeys</title>
<script src="/passkey.js"></script></head>
<body><p>Latchkey passkey interop page.</p></body></html>
"""

# Each ceremony returns {options, credential, answer}, or {stage, error} when the browser
# refused (error is the DOMException's name and message): nothing is thrown at Selenium.
SCRIPT = b"""\"use strict\";
const latchkey = {
  // POST /rpc is JSON-RPC as on the TCP door: the session is a param (the /v1 paths take it
  // as a bearer token instead).
  async rpc(method, params, session) {
    const headers = {"Content-Type": "application/json"};
    const body = Object.assign({}, params);
    if (session) body.session = session;
    const response = await fetch("/rpc", {method: "POST", headers,
      body: JSON.stringify({jsonrpc: "2.0", id: 1, method, params: body})});
    return await response.json();
  },

  refused(stage, error) {
    return {stage, error: error.name + ": " + error.message};
  },

  // tweak: members to overwrite in the parsed options (a hostile page may change them).
  async register(session, name, tweak) {
    const options = await latchkey.rpc("identity.passkey_register_options", {}, session);
    if (!options.result) return {stage: "options", answer: options};
    let credential;
    try {
      const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options.result);
      Object.assign(publicKey, tweak || {});
      credential = (await navigator.credentials.create({publicKey})).toJSON();
    } catch (error) {
      return latchkey.refused("create", error);
    }
    const params = {credential};
    if (name) params.name = name;
    return {options: options.result, credential, answer: await latchkey.rpc("identity.passkey_register", params, session)};
  },

  async assertion(optionsMethod, optionsParams, session, tweak) {
    const options = await latchkey.rpc(optionsMethod, optionsParams, session);
    if (!options.result) return {stage: "options", answer: options};
    try {
      const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options.result);
      Object.assign(publicKey, tweak || {});
      return {options: options.result, credential: (await navigator.credentials.get({publicKey})).toJSON()};
    } catch (error) {
      return latchkey.refused("get", error);
    }
  },

  async signIn(deviceID, tweak) {
    const done = await latchkey.assertion("identity.passkey_login_options", {}, null, tweak);
    if (!done.credential) return done;
    done.answer = await latchkey.rpc("identity.passkey_login", {credential: done.credential, device_id: deviceID}, null);
    return done;
  },

  async verify(session, tweak) {
    const done = await latchkey.assertion("identity.passkey_verify_options", {}, session, tweak);
    if (!done.credential) return done;
    done.answer = await latchkey.rpc("identity.passkey_verify", {credential: done.credential}, session);
    return done;
  },
};
"""


class PageServer(http.server.BaseHTTPRequestHandler):
    """GET / and /passkey.js; POST /rpc forwarded to the gateway's HTTP door (server.door)."""

    def do_GET(self):
        if self.path == "/":
            self.reply(200, "text/html; charset=utf-8", PAGE, {"Content-Security-Policy": "script-src 'self'"})
        elif self.path == "/passkey.js":
            self.reply(200, "text/javascript; charset=utf-8", SCRIPT)
        else:
            self.reply(404, "text/plain", b"not found")

    def do_POST(self):
        if self.path != "/rpc":
            return self.reply(404, "text/plain", b"not found")
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        headers = {name: self.headers[name] for name in ("Content-Type", "Authorization") if self.headers[name]}
        door = http.client.HTTPConnection(*address(self.server.door), timeout=30)
        try:
            door.request("POST", "/rpc", body, headers)
            answer = door.getresponse()
            self.reply(answer.status, answer.getheader("Content-Type", "application/json"), answer.read())
        finally:
            door.close()

    def reply(self, status, content_type, body, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_):
        pass


def serve_page(listen_port, door):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", listen_port), PageServer)
    server.door = door
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_browser():
    for path in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(path):
            raise SystemExit(f"{path} is missing: install chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(60)
    return driver


class Browser:
    """The page in Chromium, with one virtual authenticator (a platform one that verifies the user)."""

    def __init__(self, driver, origin):
        self.driver = driver
        self.origin = origin
        self.open(origin)
        driver.add_virtual_authenticator(VirtualAuthenticatorOptions(
            protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True,
            has_user_verification=True, is_user_verified=True))

    def open(self, origin):
        """Loads the page (a new document: the script's state starts over)."""
        self.driver.get(origin + "/")

    def run(self, function, *arguments):
        """Calls latchkey.<function>(...arguments) in the page and waits for its promise."""
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            f"latchkey.{function}(...Array.from(arguments).slice(0, -1))"
            ".then(done, error => done({stage: 'script', error: String(error)}));", *arguments)


# MARK: what Chrome sent

REGISTRATION_MEMBERS = {"id", "rawId", "type", "response", "authenticatorAttachment", "clientExtensionResults"}
REGISTRATION_RESPONSE_MEMBERS = {"clientDataJSON", "attestationObject", "transports", "authenticatorData", "publicKey", "publicKeyAlgorithm"}
ASSERTION_MEMBERS = REGISTRATION_MEMBERS
ASSERTION_RESPONSE_MEMBERS = {"clientDataJSON", "authenticatorData", "signature", "userHandle"}


def unlisted_members(credential, members, response_members):
    """Members of Chrome's toJSON() the contract does not list (the server refuses those)."""
    return sorted(set(credential) - members) + sorted("response." + name for name in set(credential.get("response", {})) - response_members)


def attestation(credential):
    """(fmt, the attestation type it is, authData flags) of a registration's attestation object."""
    decoded = cbor2.loads(b64url_decode(credential["response"]["attestationObject"]))
    fmt = decoded["fmt"]
    kind = {"none": "none", "apple": "anonca"}.get(fmt) or ("basic" if "x5c" in decoded["attStmt"] else "self")
    return fmt, kind, decoded["authData"][32]


def flags_of(credential):
    return b64url_decode(credential["response"]["authenticatorData"])[32]


def answer_of(done):
    return done.get("answer") or {}


# MARK: the cases

class Suite:
    """The cases, in an order where each leaves the authenticator as the next one needs it: one
    resident credential, the user's, until it is revoked at the end."""

    def __init__(self, stack_, browser, other_origin):
        self.identity = Client(stack_.identity)
        self.browser = browser
        self.other_origin = other_origin
        self.checks = Checks()
        self.check = self.checks.check

    def call(self, method, params=None, session=None):
        """A call through the page's own /rpc (the door), as the page's script makes it."""
        return self.browser.run("rpc", method, params or {}, session)

    def register(self, account):
        """Case 1: registration after a password login stepped up through identity.elevate."""
        done = self.browser.run("register", account.session, "Chromium virtual authenticator", None)
        passkey_id = answer_of(done).get("result", {}).get("passkey_id")
        self.check("1 registration: Chrome's credential is accepted (passkey_register answers a passkey_id)", passkey_id, done)
        if not passkey_id:
            return None, done
        credential = done["credential"]
        extra = unlisted_members(credential, REGISTRATION_MEMBERS, REGISTRATION_RESPONSE_MEMBERS)
        self.check("1 registration: every member of Chrome's toJSON() is in the contract", not extra, extra)
        fmt, kind, flags = attestation(credential)
        print(f"     Chrome's virtual authenticator: attestation format {fmt!r} ({kind}), flags 0x{flags:02x}, "
              f"transports {credential['response'].get('transports')}, attachment {credential.get('authenticatorAttachment')!r}, "
              f"clientExtensionResults {credential.get('clientExtensionResults')}")
        options = done["options"]
        self.check("1 registration options: RP localhost, ES256 and RS256, resident key and UV required, direct attestation",
                   options["rp"]["id"] == "localhost" and [p["alg"] for p in options["pubKeyCredParams"]] == [-7, -257]
                   and options["authenticatorSelection"] == {"residentKey": "required", "requireResidentKey": True, "userVerification": "required"}
                   and options["attestation"] == "direct" and options["extensions"] == {"credProps": True}, options)
        listed = self.call("identity.passkeys", {}, account.session).get("result", {}).get("passkeys", [])
        entry = next((p for p in listed if p["passkey_id"] == passkey_id), None)
        self.check("1 identity.passkeys lists it under its name", entry and entry["name"] == "Chromium virtual authenticator", listed)
        if entry:
            self.check(f"1 the listing records the attestation ({kind}) and the backup flags as the authenticator data says",
                       entry["attestation"] == kind and entry["backup_eligible"] == bool(flags & 0x08) and entry["backed_up"] == bool(flags & 0x10)
                       and entry["flagged"] is False and entry["last_used_at"] is None, entry)
            print(f"     listed: attestation {entry['attestation']!r}, aaguid {entry['aaguid']}, authenticator {entry['authenticator']!r}, "
                  f"backup_eligible {entry['backup_eligible']}, backed_up {entry['backed_up']}")
        return passkey_id, done

    def exclusion(self, account, registration):
        """Case 4e: the same authenticator again is excluded by Chrome; its old response is refused."""
        done = self.browser.run("register", account.session, None, None)
        self.check("4e a second registration on the same authenticator is excluded (excludeCredentials, InvalidStateError)",
                   done.get("stage") == "create" and done.get("error", "").startswith("InvalidStateError"), done)
        replay = self.call("identity.passkey_register", {"credential": registration["credential"]}, account.session)
        self.check("4e the first registration's response sent again is refused (invalid_token/used)",
                   reason(replay) == ("invalid_token", "used"), replay)

    def sign_in(self):
        """Case 2: usernameless sign-in, then the new session in use."""
        done = self.browser.run("signIn", "chromium-" + secrets.token_hex(4), None)
        result = answer_of(done).get("result", {})
        self.check("2 usernameless sign-in options: empty allowCredentials, userVerification preferred, rpId localhost",
                   done.get("options", {}).get("allowCredentials") == [] and done.get("options", {}).get("userVerification") == "preferred"
                   and done.get("options", {}).get("rpId") == "localhost", done)
        self.check("2 usernameless sign-in gives aal 2 and owes nothing", result.get("aal") == 2 and result.get("required_factors") == [], done)
        if done.get("credential"):
            extra = unlisted_members(done["credential"], ASSERTION_MEMBERS, ASSERTION_RESPONSE_MEMBERS)
            self.check("2 every member of Chrome's assertion toJSON() is in the contract", not extra, extra)
            self.check("2 Chrome's assertion carries the user handle and UV", done["credential"]["response"].get("userHandle")
                       and flags_of(done["credential"]) & 0x05 == 0x05, done["credential"])
        if result.get("session"):
            sessions = self.call("identity.sessions", {}, result["session"])
            self.check("2 the passkey session works for identity.sessions", "result" in sessions, sessions)
        return done

    def step_up(self, account):
        """Case 3: a fresh password session (aal 1, owes factors) pays with passkey_verify."""
        login = account.password_login("chromium-" + secrets.token_hex(4))
        self.check("3 a password login on a new device is aal 1 and owes factors", login["aal"] == 1 and login["required_factors"], login)
        done = self.browser.run("verify", login["session"], None)
        options = done.get("options", {})
        self.check("3 verify options list the user's passkey and require UV",
                   len(options.get("allowCredentials", [])) == 1 and options.get("userVerification") == "required", done)
        self.check("3 passkey_verify lifts the session to aal 2", answer_of(done).get("result") == {"aal": 2}, done)
        introspected = self.identity.call("identity.introspect", {"session": login["session"]}).get("result", {})
        self.check("3 the session now is aal 2", introspected.get("aal") == 2, introspected)

    def replay(self):
        """Case 4b: the same assertion JSON twice."""
        done = self.browser.run("signIn", "chromium-replay", None)
        self.check("4b an assertion is accepted once", answer_of(done).get("result", {}).get("aal") == 2, done)
        if done.get("credential"):
            again = self.call("identity.passkey_login", {"credential": done["credential"], "device_id": "chromium-replay"})
            self.check("4b the same assertion again is refused (invalid_token/used)", reason(again) == ("invalid_token", "used"), again)

    def foreign_origin(self):
        """Case 4a: the same ceremonies from an origin identity is not configured with."""
        self.browser.open(self.other_origin)
        try:
            done = self.browser.run("signIn", "chromium-foreign", None)
            self.check(f"4a sign-in from {self.other_origin} is refused (invalid_credentials/origin_not_allowed)",
                       reason(answer_of(done)) == ("invalid_credentials", "origin_not_allowed"), done)
            stranger = Account(self.identity, "pkforeign")
            done = self.browser.run("register", stranger.session, None, None)
            self.check(f"4a registration from {self.other_origin} is refused (invalid_credentials/origin_not_allowed)",
                       reason(answer_of(done)) == ("invalid_credentials", "origin_not_allowed"), done)
            if done.get("credential"):  # the authenticator keeps it; only the user's passkey should answer later
                self.browser.driver.remove_credential(done["credential"]["rawId"])
        finally:
            self.browser.open(self.browser.origin)

    def without_uv(self, function, argument):
        """latchkey.<function> while the authenticator cannot verify the user. Chrome itself
        refuses when the options ask for UV (required or preferred) the authenticator fails to
        give; a page may ask for less ("discouraged"), and then the server has to refuse."""
        done = self.browser.run(function, argument, None)
        if done.get("stage") == "get":
            print(f"     {function}: Chrome refused the ceremony itself ({done['error'].split('.')[0]}); again with userVerification 'discouraged'")
            done = self.browser.run(function, argument, {"userVerification": "discouraged"})
        return done

    def without_user_verification(self, account):
        """Case 4c: set_user_verified(False): the authenticator no longer verifies the user."""
        self.browser.driver.set_user_verified(False)
        try:
            login = account.password_login("chromium-" + secrets.token_hex(4))
            done = self.without_uv("verify", login["session"])
            self.check("4c passkey_verify without UV is refused (invalid_credentials/user_not_verified)",
                       reason(answer_of(done)) == ("invalid_credentials", "user_not_verified")
                       and done.get("credential") and not flags_of(done["credential"]) & 0x04, done)
            done = self.without_uv("signIn", "chromium-no-uv")
            result = answer_of(done).get("result", {})
            self.check("4c sign-in without UV is only aal 1 and owes factors",
                       result.get("aal") == 1 and result.get("required_factors") and done.get("credential")
                       and not flags_of(done["credential"]) & 0x04, done)
        finally:
            self.browser.driver.set_user_verified(True)

    def revoked(self, account, passkey_id):
        """Case 4d: revoke_passkey, then the authenticator still offers the credential."""
        account.step_up()
        answer = self.call("identity.revoke_passkey", {"passkey_id": passkey_id}, account.session)
        self.check("4d revoke_passkey answers ok", answer.get("result") == {"ok": True}, answer)
        listed = self.call("identity.passkeys", {}, account.session).get("result", {}).get("passkeys")
        self.check("4d the passkey is no longer listed", listed == [], listed)
        done = self.browser.run("signIn", "chromium-revoked", None)
        self.check("4d sign-in with the revoked passkey is a plain invalid_credentials",
                   reason(answer_of(done)) == ("invalid_credentials", None), done)

    def run(self):
        account = Account(self.identity, "pkchrome")
        passkey_id, registration = self.register(account)
        if not passkey_id:
            return
        self.exclusion(account, registration)
        self.sign_in()
        self.step_up(account)
        self.replay()
        self.foreign_origin()
        self.without_user_verification(account)
        self.revoked(account, passkey_id)
        credentials = self.browser.driver.get_credentials()
        self.check("the virtual authenticator holds exactly the one resident credential it made for the user",
                   len(credentials) == 1 and credentials[0].is_resident_credential, [c.to_dict() for c in credentials])


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    other_origin = f"http://localhost:{port('other_proxy')}"
    with stack(sys.argv[1]) as running:
        proxy_port = int(running.origin.rpartition(":")[2])
        servers = [serve_page(proxy_port, running.gateway_http), serve_page(port("other_proxy"), running.gateway_http)]
        driver = None
        try:
            driver = start_browser()
            suite = Suite(running, Browser(driver, running.origin), other_origin)
            suite.run()
            return suite.checks.summary("passkey_browser")
        finally:
            if driver:
                driver.quit()
            for server in servers:
                server.shutdown()
                server.server_close()


if __name__ == "__main__":
    sys.exit(main())
