#!/usr/bin/env python3
"""Plays the iPhone against a running Latchkey stack, with Python's `cryptography` instead of
Latchkey's own OpenSSL wrappers: makes a P-256 key, exports it as iOS does
(SecKeyCopyExternalRepresentation: X9.63 uncompressed point, base64), enrolls it as a biometry
key, and signs challenges as SecKeyCreateSignature(.ecdsaSignatureMessageX962SHA256) does
(DER ECDSA over SHA-256 of the 32 challenge bytes).

Then it confirms a money transfer with that key instead of an SMS code: it decodes the `sign`
bytes accounts answers, checks they name the amount, accounts, transfer and challenge, and signs
them (and once a forged copy with another amount, which must fail like a wrong code).

Usage: identity_device_key.py [GATEWAY_HOST:PORT [IDENTITY_HOST:PORT [ACCOUNTS_HOST:PORT]]]
   or: LATCHKEY_GATEWAY=127.0.0.1:7400 LATCHKEY_IDENTITY=127.0.0.1:7401 LATCHKEY_ACCOUNTS=127.0.0.1:7403 identity_device_key.py

The identity address is needed for `identity.elevate` (internal: what verification calls once
an SMS code checks out), the accounts address for `accounts.deposit` (internal: funding); without
an accounts address the transfer checks are skipped. Exits 0 when every check passes, 1 otherwise.
"""
import base64
import json
import os
import secrets
import socket
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec


def address(text):
    host, _, port = text.rpartition(":")
    return host or "127.0.0.1", int(port)


class Client:
    def __init__(self, where):
        self.sock = socket.create_connection(address(where), timeout=10)
        self.file = self.sock.makefile("rw", encoding="utf-8", newline="\n")
        self.next_id = 0

    def call(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.file.write(line + "\n")
        self.file.flush()
        answer = json.loads(self.file.readline())
        assert answer.get("id") == self.next_id, answer
        return answer

    def result(self, method, params):
        answer = self.call(method, params)
        if "error" in answer:
            raise AssertionError(f"{method}: {answer['error']}")
        return answer["result"]


def b64(data):
    return base64.b64encode(data).decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class IPhone:
    def __init__(self, device_id):
        self.device_id = device_id
        self.key = ec.generate_private_key(ec.SECP256R1())

    def public_key(self):
        point = self.key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        assert len(point) == 65 and point[0] == 4
        return b64(point)

    def sign(self, challenge):
        data = b64url_decode(challenge)
        assert len(data) == 32, "a challenge is 32 bytes"
        return self.sign_bytes(data)

    def sign_bytes(self, data):
        return b64(self.key.sign(data, ec.ECDSA(hashes.SHA256())))


checks = []


def check(name, condition, detail=""):
    checks.append((name, bool(condition)))
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"))


def reason(answer):
    return answer.get("error", {}).get("data", {}).get("reason"), answer.get("error", {}).get("data", {}).get("detail")


def confirm_transfer(gateway, identity, accounts, phone, session):
    """A transfer confirmed by the device key (issue 18): no SMS, the app signs `sign`."""
    user_id = identity.result("identity.introspect", {"session": session})["user_id"]
    accounts.result("accounts.deposit", {"user_id": user_id, "account": "checking", "amount": 100000, "idempotency_key": "py-fund"})
    ticket = gateway.result("accounts.transfer", {"session": session, "from": "checking", "to": "saving", "amount": 4200,
                                                  "idempotency_key": "py-1", "confirm_with": "device_key", "device_id": phone.device_id})
    check("a device-key transfer starts no SMS code", ticket["request_id"] is None and ticket["status"] == "pending", ticket)
    sign = b64url_decode(ticket["sign"])
    lines = sign.decode("utf-8").split("\n")
    expected = ["amount=4200", "currency=USD", "from=checking", "to=saving",
                "transfer_id=" + ticket["transfer_id"], "challenge=" + ticket["challenge"]]
    check("the sign bytes name amount, accounts, transfer and challenge",
          lines[0] == "latchkey-transfer-v1" and all(line in lines for line in expected), lines)

    def confirm(signature):
        return gateway.call("accounts.confirm", {"session": session, "transfer_id": ticket["transfer_id"],
                                                 "device_id": phone.device_id, "signature": signature})

    answer = confirm(phone.sign_bytes(sign.replace(b"amount=4200", b"amount=42")))
    check("a signature over another amount fails like a wrong code",
          reason(answer)[0] == "invalid_code" and answer["error"]["data"].get("attempts_left") == 2, answer)
    done = confirm(phone.sign_bytes(sign)).get("result", {})
    balances = [account["balance"] for account in done.get("accounts", [])]
    check("the device key's signature books the transfer", done.get("status") == "done" and balances == [95800, 4200], done)


def main():
    gateway_address = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LATCHKEY_GATEWAY", "127.0.0.1:7400")
    identity_address = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("LATCHKEY_IDENTITY", "127.0.0.1:7401").split(",")[0]
    gateway = Client(gateway_address)
    identity = Client(identity_address)
    accounts_address = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("LATCHKEY_ACCOUNTS", "").split(",")[0]

    username = "interop" + secrets.token_hex(4)
    password = "interop passphrase " + secrets.token_hex(4)
    phone = IPhone("py-" + secrets.token_hex(8))
    gateway.result("identity.register", {"username": username, "password": password,
                                         "email": f"{username}@example.com", "phone": "(555) 555-0100"})
    login = gateway.result("identity.login", {"username": username, "password": password, "device_id": phone.device_id})
    check("password login on a new device asks for sms", login["aal"] == 1 and login["required_factors"] == ["sms"], login)
    session = login["session"]

    answer = gateway.call("identity.enroll_key", {"session": session, "device_id": phone.device_id,
                                                  "public_key": phone.public_key(), "protection": "biometry"})
    check("enroll_key at aal 1 answers step_up_required", reason(answer)[0] == "step_up_required", answer)

    introspected = identity.result("identity.introspect", {"session": session})
    identity.result("identity.elevate", {"session_id": introspected["session_id"], "factor": "sms"})
    enrolled = gateway.result("identity.enroll_key", {"session": session, "device_id": phone.device_id,
                                                      "public_key": phone.public_key(), "protection": "biometry"})
    check("a cryptography-made X9.63 key enrolls", enrolled["key_id"].startswith("key_"), enrolled)

    challenge = gateway.result("identity.challenge", {"username": username, "device_id": phone.device_id})["challenge"]
    check("challenge is base64url without padding of 32 bytes", "=" not in challenge and len(b64url_decode(challenge)) == 32, challenge)
    signed = gateway.result("identity.key_login", {"username": username, "device_id": phone.device_id,
                                                   "challenge": challenge, "signature": phone.sign(challenge)})
    check("key_login with a DER ECDSA-SHA256 signature gives aal 2", signed["aal"] == 2 and signed["session"].startswith("lks_"), signed)

    answer = gateway.call("identity.key_login", {"username": username, "device_id": phone.device_id,
                                                 "challenge": challenge, "signature": phone.sign(challenge)})
    check("a reused challenge answers invalid_token/used", reason(answer) == ("invalid_token", "used"), answer)

    challenge = gateway.result("identity.challenge", {"username": username, "device_id": phone.device_id})["challenge"]
    stranger = IPhone(phone.device_id)
    answer = gateway.call("identity.key_login", {"username": username, "device_id": phone.device_id,
                                                 "challenge": challenge, "signature": stranger.sign(challenge)})
    check("another key's signature answers invalid_credentials", reason(answer)[0] == "invalid_credentials", answer)

    plain = gateway.result("identity.login", {"username": username, "password": password, "device_id": phone.device_id,
                                              "device_token": login["device_token"]})
    check("the keyed device, with its device token, now asks for device_key", plain["required_factors"] == ["device_key"], plain)
    copied = gateway.result("identity.login", {"username": username, "password": password, "device_id": phone.device_id})
    check("its device id without the token also owes sms", copied["required_factors"] == ["device_key", "sms"], copied)
    challenge = gateway.result("identity.challenge", {"session": plain["session"], "device_id": phone.device_id})["challenge"]
    url_safe_signature = base64.urlsafe_b64encode(base64.b64decode(phone.sign(challenge))).decode().rstrip("=")
    verified = gateway.result("identity.verify_key", {"session": plain["session"], "device_id": phone.device_id,
                                                      "challenge": challenge, "signature": url_safe_signature})
    check("verify_key (url-safe signature) lifts the session to aal 2", verified["aal"] == 2, verified)

    if accounts_address:
        confirm_transfer(gateway, identity, Client(accounts_address), phone, plain["session"])

    keys = gateway.result("identity.keys", {"session": session})["keys"]
    gateway.result("identity.revoke_key", {"session": session, "key_id": keys[0]["key_id"]})
    challenge = gateway.result("identity.challenge", {"username": username, "device_id": phone.device_id})["challenge"]
    answer = gateway.call("identity.key_login", {"username": username, "device_id": phone.device_id,
                                                 "challenge": challenge, "signature": phone.sign(challenge)})
    check("a revoked key answers invalid_credentials, as a wrong signature does", reason(answer)[0] == "invalid_credentials", answer)

    failed = [name for name, passed in checks if not passed]
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
