#!/usr/bin/env python3
"""Plays an authenticator app against a running Latchkey stack, with Python's own `hmac`
instead of Latchkey's TOTP code (RFC 6238: HMAC-SHA-1 of the 30 s time step, dynamic
truncation, 6 digits): reads the `otpauth://` URI `identity.totp_enroll` answers, activates
the app with a computed code, then passes it as the second factor of a fresh login, and checks
that a replayed code and a wrong one are refused.

Usage: identity_totp.py [GATEWAY_HOST:PORT [IDENTITY_HOST:PORT]]
The identity address is needed for `identity.elevate` (internal: an SMS code passed), since
enrolling needs a recent second factor. Exits 0 when every check passes, 1 otherwise.
"""
import base64
import hashlib
import hmac
import os
import secrets
import struct
import sys
import time
from urllib.parse import parse_qs, urlparse

from identity_device_key import Client, check, checks, reason


def totp(secret, at, digits=6, period=30, digest=hashlib.sha1):
    counter = struct.pack(">Q", int(at) // period)
    mac = hmac.new(secret, counter, digest).digest()
    offset = mac[-1] & 0x0F
    value = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
    return str(value % 10 ** digits).zfill(digits)


def main():
    # This implementation first: RFC 6238 appendix B, SHA-1, T = 59 and 1111111109.
    check("python TOTP matches RFC 6238's vectors",
          totp(b"12345678901234567890", 59, 8) == "94287082" and totp(b"12345678901234567890", 1111111109, 8) == "07081804")
    gateway = Client(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LATCHKEY_GATEWAY", "127.0.0.1:7400"))
    identity = Client(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("LATCHKEY_IDENTITY", "127.0.0.1:7401").split(",")[0])

    username = "totp" + secrets.token_hex(4)
    password = "interop passphrase " + secrets.token_hex(4)
    gateway.result("identity.register", {"username": username, "password": password,
                                         "email": f"{username}@example.com", "phone": "(555) 555-0100"})
    first = gateway.result("identity.login", {"username": username, "password": password, "device_id": "py-app"})
    session = first["session"]
    answer = gateway.call("identity.totp_enroll", {"session": session})
    check("enrolling at aal 1 answers step_up_required", reason(answer)[0] == "step_up_required", answer)
    introspected = identity.result("identity.introspect", {"session": session})
    identity.result("identity.elevate", {"session_id": introspected["session_id"], "factor": "sms"})

    enrolled = gateway.result("identity.totp_enroll", {"session": session})
    uri = urlparse(enrolled["uri"])
    query = {name: values[0] for name, values in parse_qs(uri.query).items()}
    check("the URI is otpauth://totp/<issuer>:<user> with SHA1, 6 digits, 30 s",
          uri.scheme == "otpauth" and uri.netloc == "totp" and uri.path.endswith(":" + username)
          and query == {"secret": enrolled["secret"], "issuer": query.get("issuer"), "algorithm": "SHA1", "digits": "6", "period": "30"},
          enrolled["uri"])
    secret = base64.b32decode(enrolled["secret"] + "=" * (-len(enrolled["secret"]) % 8))
    check("the secret is 160 bits", len(secret) == 20, len(secret))

    now = time.time()
    activated = gateway.result("identity.totp_activate", {"session": session, "code": totp(secret, now)})
    check("a code computed by python activates the app", activated == {"ok": True}, activated)

    login = gateway.result("identity.login", {"username": username, "password": password, "device_id": "py-app",
                                              "device_token": first["device_token"]})
    check("the next login on the trusted device owes totp", login["required_factors"] == ["totp"], login)
    code = totp(secret, now + 30)  # the step after the activating one, within one step of skew
    wrong = "000000" if code != "000000" else "111111"
    answer = gateway.call("identity.totp_verify", {"session": login["session"], "code": wrong})
    check("a wrong code answers invalid_code", reason(answer)[0] == "invalid_code", answer)
    verified = gateway.result("identity.totp_verify", {"session": login["session"], "code": code})
    check("a code computed by python passes as the second factor", verified == {"aal": 2}, verified)
    again = gateway.result("identity.login", {"username": username, "password": password, "device_id": "py-app"})
    answer = gateway.call("identity.totp_verify", {"session": again["session"], "code": code})
    check("the same code replayed in its window is refused", reason(answer)[0] == "invalid_code", answer)

    failed = [name for name, passed in checks if not passed]
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
