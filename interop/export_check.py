#!/usr/bin/env python3
"""identity.export against a fresh `latchkey up --demo`, driven by a client written here in
Python: the demo user signs in, passes an SMS code, moves money confirmed by its own code and
asks for a reset link, then exports their data over the HTTP door. The document is validated
against protocol/export.schema.json with `jsonschema` (Draft 2020-12, formats checked), holds
what each service did, and no secret: no password, token or code. Usage: export_check.py BIN_DIR"""
import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import jsonschema
from latchkey_up import latchkey_up

ROOT = Path(__file__).resolve().parent.parent
BASE_PORT = 18400
PASSWORD = "export check blue lantern 7"


def check(condition, what):
    if not condition:
        sys.exit("export: FAILED: " + what)
    print("export: " + what)


class Line:
    """One JSON-RPC connection over the line protocol."""

    def __init__(self, port):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.reader = self.socket.makefile("r", encoding="utf-8")
        self.next_id = 1

    def call(self, method, params):
        self.next_id += 1
        self.socket.sendall((json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n").encode())
        return json.loads(self.reader.readline())

    def result(self, method, params):
        answer = self.call(method, params)
        if "error" in answer:
            sys.exit(f"export: {method} answered {answer['error']}")
        return answer["result"]


def code_for(outbox, request_id):
    deadline = time.time() + 20
    while time.time() < deadline:
        if outbox.exists():
            for line in outbox.read_text().splitlines():
                message = json.loads(line)
                if message.get("request_id") == request_id:
                    return re.search(r"\b(\d{6,10})\b", message["text"]).group(1)
        time.sleep(0.05)
    sys.exit(f"export: no code for {request_id}")


def http_export(session):
    request = urllib.request.Request(
        f"http://127.0.0.1:{BASE_PORT + 80}/v1/identity/export", data=b"{}", method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {session}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def main():
    bin_dir = Path(sys.argv[1]).resolve()
    schema = json.loads((ROOT / "protocol/export.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    environment = {"PATH": "/usr/bin:/bin", "LATCHKEY_DEMO_PASSWORD": PASSWORD, "LATCHKEY_SCRYPT_LOG_N": "10"}
    with latchkey_up(bin_dir, ["--demo", "--base-port", str(BASE_PORT)], environment, prefix="latchkey-export-") as work:
        outbox = work / ".latchkey/outbox.jsonl"
        gateway = Line(BASE_PORT)
        login = gateway.result("identity.login", {"username": "demo", "password": PASSWORD, "device_id": "py-iphone"})
        session = login["session"]
        codes = []
        if login["required_factors"]:
            started = gateway.result("verification.start", {"session": session})
            codes.append(code_for(outbox, started["request_id"]))
            gateway.result("verification.check", {"session": session, "request_id": started["request_id"], "code": codes[-1]})
        ticket = gateway.result("accounts.transfer", {
            "session": session, "from": "checking", "to": "saving", "amount": 1234, "idempotency_key": "export-check-1"})
        codes.append(code_for(outbox, ticket["request_id"]))
        gateway.result("accounts.confirm", {"session": session, "transfer_id": ticket["transfer_id"], "code": codes[-1]})
        gateway.result("reset.request", {"email": "demo@example.com"})

        owing = gateway.result("identity.login", {"username": "demo", "password": PASSWORD, "device_id": "py-laptop"})
        status, refused = http_export(owing["session"])
        check(status == 403 and refused["error"]["data"]["reason"] == "step_up_required",
              f"a session without a recent step-up is refused ({status} {refused['error']['data']['reason']})")

        status, answer = http_export(session)
        check(status == 200, f"the stepped-up session exports over the HTTP door ({status})")
        document = answer["result"]
        errors = sorted(jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).iter_errors(document), key=str)
        for error in errors[:10]:
            print(f"  {'/'.join(map(str, error.absolute_path))}: {error.message}", file=sys.stderr)
        check(not errors, "the document is valid against protocol/export.schema.json (Draft 2020-12, formats checked)")
        check(document["profile"]["username"] == "demo" and document["profile"]["email_verified_at"] is not None, "the profile, verified address")
        check(any(session_row["device_id"] == "py-iphone" for session_row in document["sessions"]), "the sessions")
        check(any(entry.get("transfer_id") == ticket["transfer_id"] for entry in document["accounts"]["entries"]), "the transfer's ledger entries")
        check(len(document["verification"]["requests"]) >= len(codes), "the verification requests")
        check(document["activity"], "the activity")
        text = json.dumps(document)
        secrets = [PASSWORD, session, owing["session"], login.get("device_token") or "lkd_"] + codes
        check(not any(secret in text for secret in secrets) and not re.search(r"lk[sdre]_[A-Za-z0-9_-]{20}", text),
              "no password, session, device token, link token or code in it")
        print(f"export: {len(text)} bytes, {len(document['accounts']['entries'])} ledger entries, "
              f"{len(document['verification']['requests'])} verification requests, {len(document['activity'])} events")


if __name__ == "__main__":
    main()
