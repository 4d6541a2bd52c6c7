"""Shared by the passkey suites (passkey_browser.py, passkey_oracle.py): the stack they run
against, the two ways to call it, accounts that may register a passkey, and the check list.

The stack is identity + gateway with the WebAuthn relying party `localhost` and one origin,
`http://localhost:<proxy port>` (the browser suite's page). run_passkeys.sh starts it and says
where it is through the environment (PASSKEY_IDENTITY, PASSKEY_GATEWAY_HTTP, PASSKEY_ORIGIN);
without those, `stack(bin_dir)` starts its own in a temporary directory and stops it on the
way out, so a suite also runs alone:  python3 interop/passkey_oracle.py /tmp/lk-ready
"""
import base64
import contextlib
import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PORTS = {"identity": 27501, "gateway": 27500, "gateway_http": 27580, "proxy": 27590, "other_proxy": 27591}


def port(name):
    """A port from the environment (PASSKEY_<NAME>_PORT), else the suite's default."""
    return int(os.environ.get(f"PASSKEY_{name.upper()}_PORT", PORTS[name]))


def address(text):
    host, _, number = text.rpartition(":")
    return host or "127.0.0.1", int(number)


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# MARK: the stack

def wait_for(condition, seconds, what):
    """Polls `condition` until it holds; fails with `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {seconds} s for {what}")
        time.sleep(0.05)


class Stack:
    """Where the services listen, and the one WebAuthn origin identity accepts."""

    def __init__(self, identity, gateway_http, origin):
        self.identity = identity
        self.gateway_http = gateway_http
        self.origin = origin


@contextlib.contextmanager
def stack(bin_dir):
    """The running stack run_passkeys.sh announced, or one started here from `bin_dir`."""
    if os.environ.get("PASSKEY_IDENTITY"):
        yield Stack(os.environ["PASSKEY_IDENTITY"], os.environ["PASSKEY_GATEWAY_HTTP"], os.environ["PASSKEY_ORIGIN"])
        return
    work = Path(tempfile.mkdtemp(prefix="latchkey-passkeys-"))
    binary = str(Path(bin_dir) / "latchkey")
    identity = f"127.0.0.1:{port('identity')}"
    gateway_http = f"127.0.0.1:{port('gateway_http')}"
    origin = f"http://localhost:{port('proxy')}"
    environment = dict(os.environ, LATCHKEY_RATE_LIMITS="auth=0:1,codes=0:1,reset=0:1,default=0:1,observe=0:1")
    commands = {
        "identity": [binary, "identity", "--listen", identity, "--data-dir", str(work), "--scrypt-log-n", "10",
                     "--webauthn-rp-id", "localhost", "--webauthn-origins", origin],
        "gateway": [binary, "gateway", "--listen", f"127.0.0.1:{port('gateway')}", "--http-listen", gateway_http,
                    "--identity", identity],
    }
    processes = []
    try:
        for name, command in commands.items():
            log = work / f"{name}.log"
            with open(log, "wb") as stderr:
                processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=environment))
            wait_for(lambda: b'"msg":"listening"' in log.read_bytes() or processes[-1].poll() is not None, 30, f"{name} to listen")
            if processes[-1].poll() is not None:
                raise RuntimeError(f"{name} exited: {log.read_text(errors='replace')[-2000:]}")
        yield Stack(identity, gateway_http, origin)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


# MARK: calling it

class Client:
    """Newline-delimited JSON-RPC on a service's own port (there `session` is a param)."""

    def __init__(self, where):
        self.where = where
        self.next_id = 0
        self.reconnect()

    def reconnect(self):
        """A new connection in place of this one (after the server closed it)."""
        self.sock = socket.create_connection(address(self.where), timeout=30)
        self.file = self.sock.makefile("rw", encoding="utf-8", newline="\n")

    def call(self, method, params):
        self.next_id += 1
        self.file.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n")
        self.file.flush()
        line = self.file.readline()
        if not line:
            raise ConnectionError(f"{method}: the connection closed without an answer")
        answer = json.loads(line)
        assert answer.get("id") == self.next_id, answer
        return answer

    def result(self, method, params):
        answer = self.call(method, params)
        if "error" in answer:
            raise AssertionError(f"{method}: {answer['error']}")
        return answer["result"]


def reason(answer):
    """(error.data.reason, error.data.detail) of a JSON-RPC answer; (None, None) for a result."""
    data = (answer.get("error") or {}).get("data") or {}
    return data.get("reason"), data.get("detail")


# MARK: accounts

class Account:
    """A registered user with a password session stepped up to aal 2 (identity.elevate, the
    internal call verification makes once an SMS code checks out): it may register a passkey."""

    def __init__(self, identity, tag="pk"):
        self.identity = identity
        self.username = tag + secrets.token_hex(5)
        self.password = "passkey interop " + secrets.token_hex(6)
        self.device_id = "py-" + secrets.token_hex(6)
        phone = "+1415555" + str(secrets.randbelow(10_000)).zfill(4)
        identity.result("identity.register", {"username": self.username, "password": self.password,
                                              "email": f"{self.username}@example.com", "phone": phone})
        self.login = self.password_login(self.device_id)
        self.session = self.login["session"]
        self.step_up()

    def password_login(self, device_id):
        return self.identity.result("identity.login", {"username": self.username, "password": self.password, "device_id": device_id})

    def step_up(self, session=None):
        session_id = self.identity.result("identity.introspect", {"session": session or self.session})["session_id"]
        return self.identity.result("identity.elevate", {"session_id": session_id, "factor": "sms"})


# MARK: checks

class Checks:
    """Named checks, printed as they happen; `summary()` prints the counts and the exit status."""

    def __init__(self):
        self.results = []

    def check(self, name, condition, detail=""):
        self.results.append((name, bool(condition)))
        print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"), flush=True)
        return bool(condition)

    def failed(self):
        return [name for name, passed in self.results if not passed]

    def summary(self, label):
        failed = self.failed()
        print(f"{label}: {len(self.results) - len(failed)} passed, {len(failed)} failed")
        return 1 if failed else 0
