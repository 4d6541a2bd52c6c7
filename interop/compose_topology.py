#!/usr/bin/env python3
"""Reproduces compose/docker-compose.yml without Docker and runs the seed flows through it.

Every service starts from the compose file's own definition: its entrypoint (mapped to the
built executable), its `environment`, and compose/.env.example, with `${VAR:-default}`
substituted as Compose would. What Docker would provide is played by this machine:
  - each container gets its own loopback address (127.0.0.x), so every service listens on
    its real port (7400-7404) as in the compose network;
  - service DNS names are mapped to those addresses (`verification` resolves to BOTH
    verification replicas, as Compose DNS does after `--scale verification=2`);
  - each named volume is a directory (the two verification replicas share theirs);
  - each container's host name (`LATCHKEY_REPLICA_ID: auto`) is a distinct name per replica;
  - Mailpit is a real SMTP server (aiosmtpd) on its compose port.
Health is awaited with each service's own compose health check command. Then a login, a
transfer confirmed by its SMS code, and a password reset by e-mailed link go through the
gateway. With --postgres URL it runs the PostgreSQL mode instead: docker-compose.postgres.yml
on top (its `postgres` service played by the server at URL, in a fresh database), and two
replicas of identity, accounts and reset besides verification's two. With --tls it runs
docker-compose.tls.yml on top: its secrets are a certificate made here for a host name no
container address is, the gateway's health check is the override's, and both doors answer TLS.
Usage: compose_topology.py BIN_DIR [--postgres URL | --tls]"""
import email
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from email import policy
from pathlib import Path

import yaml
from aiosmtpd.controller import Controller

ROOT = Path(__file__).resolve().parent.parent
ADDRESSES = {"identity": ["127.0.0.11"], "verification": ["127.0.0.21", "127.0.0.22"], "accounts": ["127.0.0.31"],
             "reset": ["127.0.0.41"], "gateway": ["127.0.0.51"], "mailpit": ["127.0.0.61"]}
START_ORDER = ["identity", "verification", "accounts", "reset", "gateway"]


def env_example():
    values = {}
    for line in (ROOT / "compose/.env.example").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            if value.strip():
                values[key.strip()] = value.strip()
    return values


def substitute(value, variables):
    """${VAR}, ${VAR:-default} and ${VAR:?error} as Compose substitutes them."""
    def replace(match):
        name, kind, rest = match.group(1), match.group(2), match.group(3) or ""
        if kind == ":?" and not variables.get(name):
            raise RuntimeError(f"compose would stop: {rest}")
        return variables.get(name) or (rest if kind == ":-" else "")
    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", replace, str(value))


def map_names(value):
    """service:port -> address:port for every replica of that service (Compose DNS)."""
    def replace(match):
        name, port = match.group(1), match.group(2)
        return ",".join(f"{address}:{port}" for address in ADDRESSES[name])
    return re.sub(r"\b(identity|verification|accounts|reset|mailpit|postgres):(\d+)\b", replace, value)


def postgres_mode(compose, variables, url):
    """docker-compose.postgres.yml over the file, played against the server at `url`: a fresh
    database stands for the postgres container's, and identity, accounts and reset get two
    replicas each. Returns the database's name, to drop afterwards."""
    override = yaml.safe_load((ROOT / "compose/docker-compose.postgres.yml").read_text())
    for name, service in override["services"].items():
        if name in compose["services"]:
            compose["services"][name].setdefault("environment", {}).update(service.get("environment", {}))
    parsed = urllib.parse.urlparse(url)
    database = "topology_" + secrets.token_hex(4)
    subprocess.run(["psql", url, "-qc", f"CREATE DATABASE {database}"], check=True)
    ADDRESSES["postgres"] = [parsed.hostname]
    variables["POSTGRES_PASSWORD"] = urllib.parse.unquote(parsed.password)
    variables["LATCHKEY_IDENTITY_KEY"] = secrets.token_hex(32)
    variables["LATCHKEY_RESET_KEY"] = secrets.token_hex(32)
    variables["LATCHKEY_VERIFICATION_KEY"] = secrets.token_hex(32)
    variables["LATCHKEY_ACCOUNTS_KEY"] = secrets.token_hex(32)
    for name in ("identity", "accounts", "reset"):
        environment = compose["services"][name]["environment"]
        environment["LATCHKEY_DATABASE_URL"] = environment["LATCHKEY_DATABASE_URL"].replace(
            "@postgres:5432/latchkey", f"@postgres:{parsed.port}/{database}")
        ADDRESSES[name] = [ADDRESSES[name][0], ADDRESSES[name][0][:-1] + "2"]
    environment = compose["services"]["verification"]["environment"]
    environment["LATCHKEY_DATABASE_URL"] = environment["LATCHKEY_DATABASE_URL"].replace(
        "@postgres:5432/latchkey", f"@postgres:{parsed.port}/{database}")
    return database


def tls_mode(compose, work):
    """docker-compose.tls.yml over the file. Returns where each secret's /run/secrets path lies
    here, and the certificate (what a client trusts)."""
    override = yaml.safe_load((ROOT / "compose/docker-compose.tls.yml").read_text())
    secrets_dir = work / "secrets"
    secrets_dir.mkdir()
    certificate, key = secrets_dir / "cert.pem", secrets_dir / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=latchkey.example", "-addext", "subjectAltName=DNS:latchkey.example", "-days", "1",
                    "-keyout", str(key), "-out", str(certificate)], check=True, capture_output=True)
    made = {"./tls/cert.pem": certificate, "./tls/key.pem": key}
    paths = {f"/run/secrets/{name}": str(made[secret["file"]]) for name, secret in override["secrets"].items()}
    gateway, layer = compose["services"]["gateway"], override["services"]["gateway"]
    gateway["environment"].update(layer.get("environment", {}))
    gateway["healthcheck"] = {**gateway["healthcheck"], **layer.get("healthcheck", {})}
    return paths, certificate


def place_secrets(value, paths):
    for secret, path in paths.items():
        value = value.replace(secret, path)
    return value


class Mailbox:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(email.message_from_bytes(envelope.content, policy=policy.default))
        return "250 OK"


def call(address, method, params=None, timeout=10, tls=None):
    with socket.create_connection(address, timeout=timeout) as raw:
        connection = tls.wrap_socket(raw, server_hostname="latchkey.example") if tls else raw
        request = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            request["params"] = params
        connection.sendall((json.dumps(request) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
    answer = json.loads(data)
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


def install_like_the_image(build_dir, work):
    """The image's /usr/local/bin: `latchkey` and each service's name linked to it
    (compose/build-release.sh), so every entrypoint runs the one binary by its argv[0]."""
    installed = work / "bin"
    installed.mkdir()
    (installed / "latchkey").symlink_to(build_dir / "latchkey")
    for service in START_ORDER:
        (installed / service).symlink_to("latchkey")
    return installed


def main():
    compose = yaml.safe_load((ROOT / "compose/docker-compose.yml").read_text())
    variables = env_example()
    postgres_url = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--postgres" else None
    database = postgres_mode(compose, variables, postgres_url) if postgres_url else None
    work = Path(tempfile.mkdtemp(prefix="latchkey-topology-"))
    bin_dir = install_like_the_image(Path(sys.argv[1]).resolve(), work)
    secrets, certificate = tls_mode(compose, work) if sys.argv[2:3] == ["--tls"] else ({}, None)
    mailbox = Mailbox()
    smtp = Controller(mailbox, hostname=ADDRESSES["mailpit"][0], port=1025)
    smtp.start()
    processes = []
    try:
        for name in START_ORDER:
            service = compose["services"][name]
            for replica, address in enumerate(ADDRESSES[name]):
                environment = {key: value for key, value in os.environ.items() if not key.startswith("LATCHKEY_")}
                environment.update(variables)
                for key, value in (service.get("environment") or {}).items():
                    environment[key] = substitute(value, variables)
                for key in list(environment):
                    if key.startswith("LATCHKEY_"):
                        environment[key] = place_secrets(map_names(environment[key]), secrets)
                port = environment["LATCHKEY_LISTEN"].rsplit(":", 1)[1]
                environment["LATCHKEY_LISTEN"] = f"{address}:{port}"
                for mount in service.get("volumes", []):
                    volume, target = mount.split(":", 1)
                    directory = work / volume
                    directory.mkdir(exist_ok=True)
                    if environment.get("LATCHKEY_DATA_DIR") == target:
                        environment["LATCHKEY_DATA_DIR"] = str(directory)
                if environment.get("LATCHKEY_REPLICA_ID") == "auto":
                    environment["LATCHKEY_REPLICA_ID"] = f"container-{name}-{replica + 1}"
                environment["LATCHKEY_SCRYPT_LOG_N"] = "10"  # test speed; production keeps 15
                for door in ("LATCHKEY_HTTP_LISTEN", "LATCHKEY_METRICS_LISTEN"):
                    if door in environment:
                        door_port = environment[door].rsplit(":", 1)[1]
                        environment[door] = f"{address}:{door_port}"
                executable = bin_dir / Path(service["entrypoint"][0]).name
                log = open(work / f"{name}-{replica}.log", "w")
                processes.append(subprocess.Popen([str(executable)], env=environment, stderr=log, stdout=subprocess.DEVNULL))
                wait_healthy(service, address, port, bin_dir, work / f"{name}-{replica}.log", secrets)
        gateway = (ADDRESSES["gateway"][0], 7400)
        if certificate:
            tls = ssl.create_default_context(cafile=str(certificate))
            health = call(gateway, "gateway.health", tls=tls)
            check_http_door(compose, tls)
            print(f"topology: {len(processes)} processes as in docker-compose.yml + docker-compose.tls.yml; "
                  "the override's health check and both doors speak TLS")
            print(f"topology: gateway.health sees {json.dumps(health)[:300]}")
        else:
            run_flows(gateway, mailbox, work)
            check_image_healthcheck(bin_dir)
            check_http_door(compose)
            health = check_metrics_listener(compose)
            mode = "docker-compose.yml + docker-compose.postgres.yml" if database else "docker-compose.yml"
            print(f"topology: {len(processes)} processes as in {mode}; login, transfer and reset passed")
            print(f"topology: the metrics listener's health sees {json.dumps(health)[:300]}")
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                status = process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                status = "killed"
            if status != 0:
                print(f"topology: a process exited with {status}", file=sys.stderr)
                sys.exit(1)
        smtp.stop()
        if database:
            subprocess.run(["psql", postgres_url, "-qc", f"DROP DATABASE IF EXISTS {database} WITH (FORCE)"], check=False)
        if os.environ.get('KEEP') is None: shutil.rmtree(work, ignore_errors=True)
        else: print(work)


def check_http_door(compose, tls=None):
    """The HTTP door listens where the compose file says, on the gateway container's address."""
    port = compose["services"]["gateway"]["environment"]["LATCHKEY_HTTP_LISTEN"].rsplit(":", 1)[1]
    address = ADDRESSES["gateway"][0]
    url = f"https://latchkey.example:{port}/v1/gateway/ping" if tls else f"http://{address}:{port}/v1/gateway/ping"
    request = urllib.request.Request(url, data=b"{}", headers={"content-type": "application/json"}, method="POST")
    if tls:  # latchkey.example is the gateway container's name in the certificate: resolve it there
        original = socket.getaddrinfo
        socket.getaddrinfo = lambda host, *rest: original(address if host == "latchkey.example" else host, *rest)
    with urllib.request.urlopen(request, timeout=10, context=tls) as response:
        answer = json.loads(response.read())
    assert answer == {"pong": True} or answer.get("result") == {"pong": True}, answer
    print(f"topology: the HTTP door answers on {ADDRESSES['gateway'][0]}:{port}")


def check_metrics_listener(compose):
    """Figures and replicas on the operator listener the scrape configuration names, none on the public doors."""
    host = ADDRESSES["gateway"][0]
    http_port = compose["services"]["gateway"]["environment"]["LATCHKEY_HTTP_LISTEN"].rsplit(":", 1)[1]
    metrics_port = compose["services"]["gateway"]["environment"]["LATCHKEY_METRICS_LISTEN"].rsplit(":", 1)[1]
    assert call((host, 7400), "gateway.health") == {"status": "ok"}, "the public line door answers a bare liveness"
    try:
        urllib.request.urlopen(f"http://{host}:{http_port}/metrics", timeout=10)
        raise AssertionError("the public HTTP door serves /metrics")
    except urllib.error.HTTPError as error:
        assert error.code == 404, error.code
    with urllib.request.urlopen(f"http://{host}:{metrics_port}/metrics", timeout=10) as response:
        text = response.read().decode()
    assert 'latchkey_requests_total{method="identity.login"}' in text, text[:500]
    with urllib.request.urlopen(f"http://{host}:{metrics_port}/healthz", timeout=10) as response:
        health = json.loads(response.read())
    assert health["services"]["verification"]["up"] >= 1 and health["services"]["verification"]["replicas"][0]["address"], health
    print(f"topology: the metrics listener answers on {host}:{metrics_port}; the public doors show no figures")
    return health


def wait_healthy(service, address, port, bin_dir, log_path, secrets):
    """Runs the compose health check (latchkey call <name>.health) against this container's address."""
    command = [str(bin_dir / "latchkey")] + service["healthcheck"]["test"][2:]
    command = [place_secrets(part.replace(f"127.0.0.1:{port}", f"{address}:{port}"), secrets) for part in command]
    deadline = time.time() + 20
    while time.time() < deadline:
        if subprocess.run(command, capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    print(Path(log_path).read_text(), file=sys.stderr)
    raise RuntimeError(f"{service['entrypoint'][0]} at {address} never became healthy")


def sms_code(work, request_id):
    outboxes = list((work / "verification-data").glob("outbox.jsonl"))
    deadline = time.time() + 5
    while time.time() < deadline:
        for outbox in outboxes or list((work / "verification-data").glob("outbox.jsonl")):
            for line in outbox.read_text().splitlines():
                message = json.loads(line)
                if message.get("request_id") == request_id:
                    return re.search(r"\b(\d{6,10})\b", message["text"]).group(1)
        time.sleep(0.05)
    raise RuntimeError(f"no SMS for {request_id}")


def check_image_healthcheck(bin_dir):
    """The Dockerfile's own HEALTHCHECK (for its default entrypoint, the gateway) passes against
    the gateway, as it would inside the gateway's container."""
    text = (ROOT / "compose/Dockerfile").read_text().replace("\\\n", " ")
    match = re.search(r"^HEALTHCHECK .*?CMD (\[.*\])$", text, re.MULTILINE)
    if not match:
        raise RuntimeError("compose/Dockerfile has no exec-form HEALTHCHECK")
    command = json.loads(match.group(1))
    command = [str(bin_dir / Path(command[0]).name)] + [part.replace("127.0.0.1:7400", f"{ADDRESSES['gateway'][0]}:7400")
                                                        for part in command[1:]]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"the image's HEALTHCHECK failed ({result.returncode}): {result.stdout}{result.stderr}")


def run_flows(gateway, mailbox, work):
    password = "blue harbor lantern 7"
    user_id = call(gateway, "identity.register", {"username": "topo", "password": password,
                                                  "email": "topo@example.com", "phone": "5555550123"})["user_id"]
    login = call(gateway, "identity.login", {"username": "topo", "password": password, "device_id": "iphone"})
    assert login["session"].startswith("lks_") and login["aal"] == 1, login
    session = login["session"]
    # A new device owes an SMS code before anything else (required_factors).
    assert login["required_factors"] == ["sms"], login
    factor = call(gateway, "verification.start", {"session": session})
    checked = call(gateway, "verification.check", {"session": session, "request_id": factor["request_id"],
                                                  "code": sms_code(work, factor["request_id"])})
    assert checked["aal"] == 2, checked
    call((ADDRESSES["accounts"][0], 7403), "accounts.deposit",
         {"user_id": user_id, "account": "checking", "amount": 50_000, "idempotency_key": "topology-fund"})
    ticket = call(gateway, "accounts.transfer", {"session": session, "from": "checking", "to": "saving",
                                                 "amount": 5_000, "idempotency_key": "topology-1"})
    code = sms_code(work, ticket["request_id"])
    done = call(gateway, "accounts.confirm", {"session": session, "transfer_id": ticket["transfer_id"], "code": code})
    balances = {entry["name"]: entry["balance"] for entry in done["accounts"]}
    assert balances == {"checking": 45_000, "saving": 5_000}, balances

    assert call(gateway, "reset.request", {"email": "topo@example.com"}) == {"ok": True}
    # Registration mailed a verification link and the first code mailed its own notice: wait for
    # the mail that carries a reset token.
    def reset_mails():
        texts = [message.get_body(preferencelist=("plain",)).get_content() for message in mailbox.messages]
        return [text for text in texts if "token=lkr_" in text or "token=lkr%5F" in text]
    deadline = time.time() + 10
    while not reset_mails() and time.time() < deadline:
        time.sleep(0.05)
    assert reset_mails(), "the reset mail reached the SMTP server (Mailpit's place)"
    text = reset_mails()[0]
    token = re.search(r"token=([A-Za-z0-9_%\-]+)", text).group(1).replace("%5F", "_").replace("%2D", "-")
    assert call(gateway, "reset.validate", {"token": token})["valid"] is True
    call(gateway, "reset.complete", {"token": token, "password": "a brand new garden 9"})
    fresh = call(gateway, "identity.login", {"username": "topo", "password": "a brand new garden 9", "device_id": "iphone"})
    assert fresh["session"].startswith("lks_")


if __name__ == "__main__":
    main()
