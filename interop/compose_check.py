#!/usr/bin/env python3
"""Checks compose/docker-compose.yml against the Compose Specification schema and against
the code (no drift): every Latchkey service is an executable we build, listens on its
default port, keeps its SQLite file in its own named volume, and every LATCHKEY_* variable
named in the compose file or in .env.example is an option the code declares
(`latchkey options`). Usage: compose_check.py SCHEMA_JSON LATCHKEY_BINARY"""
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


def fail(message):
    print(f"compose check: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    schema_path, latchkey = sys.argv[1], sys.argv[2]
    compose = yaml.safe_load((ROOT / "compose/docker-compose.yml").read_text())
    jsonschema.validate(compose, json.loads(Path(schema_path).read_text()))
    print("compose: valid against the Compose Specification schema")

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

    for line in (ROOT / "compose/.env.example").read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        if key.startswith("LATCHKEY_") and key not in known and key not in ("LATCHKEY_IMAGE", "LATCHKEY_PUBLIC_PORT"):
            fail(f".env.example: {key} is not an option the code knows")
    guide = (ROOT / "compose/README.md").read_text()
    if table.strip() not in guide:
        fail("compose/README.md's configuration table differs from `latchkey options`: regenerate it")
    print(f"compose: no drift ({len(known)} options in the code, {len(services)} services in the file, guide table current)")


if __name__ == "__main__":
    main()
