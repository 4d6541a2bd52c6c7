"""Schemathesis (`st run --checks all`) against a live stack's HTTP door, from protocol/openapi.json.

Validates the description with openapi-spec-validator, then signs in the demo user and passes the second factor with the SMS code from the outbox, so
the session-bound operations run with a settled, recently stepped-up session; `identity.logout`
runs first, alone, on a session of its own, since it ends it. Prints the number of generated cases and
failures; exits non-zero on any failure.

    BASE=http://127.0.0.1:7480 OUTBOX=.latchkey/outbox.jsonl LATCHKEY_DEMO_PASSWORD=... [ST_REPORTS=dir] \
        python3 interop/schemathesis_door.py
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

BASE = os.environ.get("BASE", "http://127.0.0.1:7480")
OUTBOX = os.environ["OUTBOX"]
PASSWORD = os.environ["LATCHKEY_DEMO_PASSWORD"]
HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "protocol", "openapi.json")
CONFIG = os.path.join(HERE, "schemathesis", "schemathesis.toml")
EXAMPLES = os.environ.get("ST_MAX_EXAMPLES", "30")


def call(path, body, session=None):
    headers = {"Content-Type": "application/json"}
    if session:
        headers["Authorization"] = "Bearer " + session
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)["result"]
    except urllib.error.HTTPError as error:
        sys.exit(f"{path}: {error.code} {error.read().decode()}")


def code_for(request_id):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(OUTBOX) as outbox:
            for line in outbox:
                message = json.loads(line) if line.strip() else {}
                if message.get("request_id") == request_id:
                    return re.search(r"\b(\d{4,8})\b", message["text"]).group(1)
        time.sleep(0.1)
    sys.exit(f"no code in the outbox for {request_id}")


def settled_session(device_token=None):
    """A session with no factor owed, and the device token for the next login from this device."""
    params = {"username": "demo", "password": PASSWORD, "device_id": "schemathesis"}
    if device_token:
        params["device_token"] = device_token
    login = call("/v1/identity/login", params)
    session = login["session"]
    if login["required_factors"]:
        started = call("/v1/verification/start", {}, session)
        call("/v1/verification/check", {"request_id": started["request_id"], "code": code_for(started["request_id"])}, session)
    return session, login["device_token"]


def run(session, report, *selection):
    command = [
        "st", "--config-file", CONFIG, "run", SCHEMA, "--url", BASE, "--checks", "all", "--max-examples", EXAMPLES,
        "--seed", os.environ.get("ST_SEED", "20261206"), "--workers", "2", "--report", "ndjson", "--report-ndjson-path", report,
        "-H", "Authorization: Bearer " + session, *selection,
    ]
    finished = subprocess.run(command, capture_output=True, text=True)
    print(finished.stdout[-6000:])
    if finished.stderr.strip():
        print(finished.stderr[-3000:], file=sys.stderr)
    return finished.returncode, summary(report)


def summary(report):
    """The run's totals from its ndjson events: cases generated and failures found."""
    cases = failures = 0
    with open(report) as events:
        for line in events:
            event = json.loads(line)
            finished = event.get("ScenarioFinished")
            if finished:
                recorder = finished.get("recorder", {})
                cases += len(recorder.get("cases", {}))
                for checks in recorder.get("checks", {}).values():
                    failures += sum(1 for check in checks if check.get("status") == "failure")
    return cases, failures


def main():
    # The description itself first, by the OpenAPI project's own validator.
    from openapi_spec_validator import validate
    with open(SCHEMA) as schema:
        validate(json.load(schema))
    print("protocol/openapi.json: a valid OpenAPI 3.1 description")
    with tempfile.TemporaryDirectory() as work:
        work = os.environ.get("ST_REPORTS", work)
        # Logout first, on a session of its own; the second login from the same device, with the
        # token the first one got, owes no new code (another would wait behind the first).
        session, device_token = settled_session()
        first = run(session, os.path.join(work, "logout.ndjson"), "--include-path", "/v1/identity/logout")
        session, _ = settled_session(device_token)
        last = run(session, os.path.join(work, "all.ndjson"), "--exclude-path", "/v1/identity/logout")
    cases = first[1][0] + last[1][0]
    failures = first[1][1] + last[1][1]
    print(f"schemathesis: {cases} generated cases, {failures} failures")
    if first[0] != 0 or last[0] != 0 or failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
