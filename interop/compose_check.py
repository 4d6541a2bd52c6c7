#!/usr/bin/env python3
"""Checks compose/docker-compose.yml against the Compose Specification schema and against
the code (no drift): every Latchkey service is an executable we build, listens on its
default port, keeps its SQLite file in its own named volume, and every LATCHKEY_* variable
named in the compose file or in .env.example is an option the code declares
(`latchkey options`). It also checks that the file deploys as written: built from the
repository, the HTTP door listening on a container address and published, no fixed host port
clashing between replicas, egress only for the services that send messages, and the TLS
override valid. Usage: compose_check.py SCHEMA_JSON LATCHKEY_BINARY"""
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent
SERVICES = {"gateway": 7400, "identity": 7401, "verification": 7402, "accounts": 7403, "reset": 7404}
SQLITE_SERVICES = ["identity", "verification", "accounts", "reset"]
EGRESS_SERVICES = {"identity", "verification", "reset"}


def fail(message):
    print(f"compose check: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    schema_path, latchkey = sys.argv[1], sys.argv[2]
    compose = yaml.safe_load((ROOT / "compose/docker-compose.yml").read_text())
    schema = json.loads(Path(schema_path).read_text())
    jsonschema.validate(compose, schema)
    tls_override = yaml.safe_load((ROOT / "compose/docker-compose.tls.yml").read_text())
    jsonschema.validate(tls_override, schema)
    print("compose: both files valid against the Compose Specification schema")

    table = subprocess.run([latchkey, "options"], check=True, capture_output=True, text=True).stdout
    known = set(re.findall(r"`(LATCHKEY_[A-Z0-9_]+)`", table))
    if len(known) < 10:
        fail(f"`latchkey options` listed only {len(known)} variables")

    services = compose["services"]
    for name, port in SERVICES.items():
        if name not in services:
            fail(f"service {name} is missing")
        service = services[name]
        if service.get("entrypoint") != [f"/usr/local/bin/{name}"]:
            fail(f"{name}: entrypoint must be the {name} executable")
        environment = service.get("environment", {})
        if environment.get("LATCHKEY_LISTEN") != f"0.0.0.0:{port}":
            fail(f"{name}: LATCHKEY_LISTEN must be 0.0.0.0:{port}")
        for key, value in environment.items():
            if key.startswith("LATCHKEY_") and key not in known:
                fail(f"{name}: {key} is not an option the code knows")
            if key in ("LATCHKEY_IDENTITY", "LATCHKEY_VERIFICATION", "LATCHKEY_ACCOUNTS", "LATCHKEY_RESET"):
                target = key.removeprefix("LATCHKEY_").lower()
                if value != f"{target}:{SERVICES[target]}":
                    fail(f"{name}: {key} must point at {target}:{SERVICES[target]}")
    published = [name for name, service in services.items() if service.get("ports") and name in SERVICES]
    if published != ["gateway"]:
        fail(f"only the gateway may publish a port, found {published}")
    for name in SQLITE_SERVICES:
        volumes = services[name].get("volumes", [])
        expected = f"{name}-data:/var/lib/latchkey"
        if expected not in volumes or f"{name}-data" not in compose.get("volumes", {}):
            fail(f"{name}: needs its own named volume {name}-data at /var/lib/latchkey")
        if services[name]["environment"].get("LATCHKEY_DATA_DIR") != "/var/lib/latchkey":
            fail(f"{name}: LATCHKEY_DATA_DIR must be the volume's mount point")
        if not services[name].get("healthcheck", {}).get("test", [None, None, None, ""])[3].startswith(f"{name}.health"):
            fail(f"{name}: the health check must ask {name}.health")

    check_deployable(compose, tls_override, known)
    postgres_override = yaml.safe_load((ROOT / "compose/docker-compose.postgres.yml").read_text())
    jsonschema.validate(postgres_override, schema)
    check_postgres_mode(postgres_override, known)
    for line in (ROOT / "compose/.env.example").read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        # Every service gets the whole .env, and a LATCHKEY_ name the code does not know stops it.
        if key.startswith("LATCHKEY_") and key not in known:
            fail(f".env.example: {key} is not an option the code knows")
    guide = (ROOT / "compose/README.md").read_text()
    if table.strip() not in guide:
        fail("compose/README.md's configuration table differs from `latchkey options`: regenerate it")
    print(f"compose: no drift ({len(known)} options in the code, {len(services)} services in the file, guide table current)")


def default_of(value):
    """`${NAME:-default}` as Compose would substitute it with NAME unset."""
    return re.sub(r"\$\{\w+(?::-([^}]*))?\}", lambda m: m.group(1) or "", str(value))


def check_deployable(compose, tls_override, known):
    services = compose["services"]
    for name in SERVICES:
        build = services[name].get("build") or {}
        if not isinstance(build, dict) or (ROOT / "compose" / build.get("context", ".") / build.get("dockerfile", "")).resolve() != (ROOT / "compose/Dockerfile").resolve():
            fail(f"{name}: needs build: {{context: .., dockerfile: compose/Dockerfile}} so a fresh clone deploys")
    gateway = services["gateway"]
    if gateway["environment"].get("LATCHKEY_HTTP_LISTEN") != "0.0.0.0:7480":
        fail("gateway: LATCHKEY_HTTP_LISTEN must be 0.0.0.0:7480 (the HTTP door on the container address)")
    targets = [str(port.get("target")) if isinstance(port, dict) else str(port).rsplit(":", 1)[-1] for port in gateway.get("ports", [])]
    if "7480" not in targets or "7400" not in targets:
        fail(f"gateway: must publish 7400 and 7480, publishes {targets}")
    metrics = gateway["environment"].get("LATCHKEY_METRICS_LISTEN", "")
    if not metrics.endswith(":7485"):
        fail("gateway: LATCHKEY_METRICS_LISTEN must be set (HOST:7485) so the scraper reaches the operator listener")
    if "7485" in targets:
        fail("gateway: the metrics listener (7485) shows replicas and counts: it must not be published")
    for name, service in services.items():
        replicas = int(default_of((service.get("deploy") or {}).get("replicas", 1)))
        for port in service.get("ports", []):
            # Short syntax and host mode bind the host port per container; ingress shares it.
            fixed = not isinstance(port, dict) or port.get("mode") != "ingress"
            if replicas > 1 and fixed:
                fail(f"{name}: {replicas} replicas cannot share the fixed host port {port} under docker compose up")
    networks = compose.get("networks", {})
    if not (networks.get("internal") or {}).get("internal"):
        fail("the internal network must be internal: true")
    for name, service in services.items():
        attached = set(service.get("networks", []))
        if name in EGRESS_SERVICES and not any(not (networks.get(n) or {}).get("internal") for n in attached):
            fail(f"{name}: sends SMS/voice/e-mail, so it needs a network with a route out")
        if name in SQLITE_SERVICES and name not in EGRESS_SERVICES and attached != {"internal"}:
            fail(f"{name}: must stay on the internal network only, found {sorted(attached)}")
        if name in SQLITE_SERVICES and "public" in attached:
            fail(f"{name}: must not be on the gateway's public network")
    for key in (tls_override["services"]["gateway"].get("environment") or {}):
        if key not in known:
            fail(f"docker-compose.tls.yml: {key} is not an option the code knows")
    secrets = tls_override.get("secrets", {})
    if set(tls_override["services"]["gateway"].get("secrets", [])) != set(secrets):
        fail("docker-compose.tls.yml: the gateway must mount every secret it declares")
    print("compose: deployable as written (build key, HTTP door published, no host-port clash, egress for senders, TLS override)")


def check_postgres_mode(override, known):
    """docker-compose.postgres.yml: a PostgreSQL service with a volume and a health check, its
    password only from the environment, and every Latchkey service pointed at it, waiting for it,
    with the keys its replicas must share required."""
    services = override["services"]
    postgres = services.get("postgres") or fail("docker-compose.postgres.yml: no postgres service")
    if not any(str(v).startswith("postgres-data:") for v in postgres.get("volumes", [])) or "postgres-data" not in override.get("volumes", {}):
        fail("postgres: needs its named volume postgres-data")
    if "pg_isready" not in " ".join(postgres.get("healthcheck", {}).get("test", [])):
        fail("postgres: needs a pg_isready health check")
    if not str(postgres["environment"].get("POSTGRES_PASSWORD", "")).startswith("${POSTGRES_PASSWORD:?"):
        fail("postgres: the password must come from compose/.env (${POSTGRES_PASSWORD:?...}), never the file")
    required_keys = {
        "identity": "LATCHKEY_IDENTITY_KEY", "verification": "LATCHKEY_VERIFICATION_KEY", "reset": "LATCHKEY_RESET_KEY",
        "accounts": "LATCHKEY_ACCOUNTS_KEY",
    }
    for name in SQLITE_SERVICES:
        service = services.get(name) or fail(f"docker-compose.postgres.yml: {name} is missing")
        environment = service.get("environment", {})
        url = str(environment.get("LATCHKEY_DATABASE_URL", ""))
        if not re.fullmatch(r"postgres://latchkey:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432/latchkey", url):
            fail(f"{name}: LATCHKEY_DATABASE_URL must name the postgres service with the password from compose/.env, got {url}")
        if (service.get("depends_on") or {}).get("postgres", {}).get("condition") != "service_healthy":
            fail(f"{name}: must wait for postgres to be healthy")
        if name in required_keys and not str(environment.get(required_keys[name], "")).startswith("${" + required_keys[name] + ":?"):
            fail(f"{name}: replicas share {required_keys[name]}: require it from compose/.env")
        for key in environment:
            if key.startswith("LATCHKEY_") and key not in known:
                fail(f"docker-compose.postgres.yml: {key} is not an option the code knows")
    print("compose: PostgreSQL mode valid (postgres with volume and health check, every service on it, shared keys required)")


if __name__ == "__main__":
    main()
