#!/usr/bin/env python3
"""Runs every command of compose/README.md's ```sh blocks and of compose/.env.example as
written, against a fresh `latchkey up` (the nc sessions are guide_sessions.py's). What needs a
Docker engine is played without one: `docker compose -f FILE... SUB SERVICE` must name files
and services that exist in those files, and the command it runs inside a container (`exec`,
`run --entrypoint`) runs here, with the volume's /var/lib/latchkey mapped to the stack's data
directory. What writes compose/.env runs in a scratch copy of compose/, and the resulting .env
must then satisfy every `${VAR:?...}` of the PostgreSQL compose file.
Usage: guide_commands.py BIN_DIR"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from latchkey_up import latchkey_up

ROOT = Path(__file__).resolve().parent.parent
DOCKER_SUBCOMMANDS = {"up", "ps", "down", "exec", "cp", "stop", "start", "run", "logs"}
# A host name the guide leaves to the reader: such commands are checked, not run.
PLACEHOLDER_HOSTS = ("your.host", "registry.example.com")


def commands(text):
    """Each shell command of the ```sh blocks: continuation lines joined, comment lines dropped."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        if "nc -N" in block:
            continue  # guide_sessions.py replays these
        joined = ""
        for line in block.splitlines():
            if not joined and line.lstrip().startswith("#"):
                continue
            if line.rstrip().endswith("\\"):
                joined += line.rstrip()[:-1] + " "
                continue
            found.append((joined + line).strip())
            joined = ""
    return [command for command in found if command]


def inline_commands(text):
    """Commands quoted inline that a reader runs as they are: curl against the HTTP door."""
    return sorted(set(re.findall(r"`(curl [^`]+)`", text)))


class Checker:
    def __init__(self, work, bin_dir):
        self.work, self.bin_dir, self.failures, self.ran, self.checked = work, bin_dir, [], 0, 0
        self.environment = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
        self.environment = {key: value for key, value in self.environment.items() if not key.startswith("LATCHKEY_")}

    def fail(self, command, why):
        self.failures.append(f"{command}\n  -> {why}")

    def run(self, command, cwd):
        self.ran += 1
        result = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=self.environment,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            self.fail(command, f"exit status {result.returncode}: {(result.stderr or result.stdout).strip()[:300]}")
        return result

    def compose_files(self, words):
        files = [words[index + 1] for index, word in enumerate(words) if word in ("-f", "-c")]
        services = set()
        for file in files:
            path = ROOT / file
            if not path.exists():
                return None, f"{file} does not exist"
            services |= set((yaml.safe_load(path.read_text()) or {}).get("services", {}))
        return services, None

    def docker(self, command, words):
        """A docker command: its files and services must exist; what it runs inside a container runs here."""
        self.checked += 1
        if words[1] == "build":
            dockerfile = ROOT / words[words.index("-f") + 1]
            if not dockerfile.exists():
                return self.fail(command, "the Dockerfile it names does not exist")
            if "--target" in words:
                target = words[words.index("--target") + 1]
                if not re.search(rf"^FROM \S+ AS {re.escape(target)}$", dockerfile.read_text(), flags=re.M | re.I):
                    self.fail(command, f"the Dockerfile has no stage {target}")
            return  # interop/dockerfile_context.py builds what it builds
        services, problem = self.compose_files(words)
        if problem:
            return self.fail(command, problem)
        if words[1] != "compose":
            return
        rest = words[2:]
        while rest and rest[0] == "-f":
            rest = rest[2:]
        if not rest or rest[0] not in DOCKER_SUBCOMMANDS:
            return self.fail(command, f"not a docker compose sub-command this guide uses: {rest[:1]}")
        sub, rest = rest[0], rest[1:]
        entrypoint = None
        while rest and rest[0].startswith("-"):
            if rest[0] == "--entrypoint":
                entrypoint, rest = rest[1], rest[2:]
            elif rest[0] in ("--scale",):
                rest = rest[2:]
            else:
                rest = rest[1:]
        named = [word.split(":", 1)[0] for word in rest[:1]] if sub in ("exec", "run", "stop", "start", "cp", "logs") else []
        if sub == "cp":
            named = [word.split(":", 1)[0] for word in rest if ":" in word]
        for service in named:
            if service not in services:
                self.fail(command, f"no service {service} in the files it names")
        inside = rest[1:] if sub in ("exec", "run") else []
        if entrypoint:
            inside = [Path(entrypoint).name] + inside
        if inside and Path(inside[0]).name == "latchkey":
            mapped = [word.replace("/var/lib/latchkey", str(self.work / ".latchkey")) for word in inside]
            self.run(shlex.join(mapped), self.work)


def env_example_commands(text):
    """The commands .env.example tells the reader to run (in backquotes)."""
    return sorted(set(re.findall(r"`([a-z][^`]*\s[^`]*)`", text)))


def dispatch(checker, command, scratch):
    """Runs or checks one command; returns what a run printed (None when it was only checked)."""
    words = shlex.split(command, comments=True)
    while "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]  # VAR=value before the command
    if words[0] == "docker":
        return checker.docker(command, words)
    if any(host in command for host in PLACEHOLDER_HOSTS):
        checker.checked += 1
        if words[0] == "curl" and "content-type: application/json" not in command.lower():
            checker.fail(command, "the HTTP door answers 415 without a JSON content type")
        return None
    if words[0] in ("cp", "echo", "openssl"):
        return checker.run(command, scratch)
    result = checker.run(command, checker.work)
    if words[0] == "curl" and '"pong":true' not in result.stdout.replace(" ", ""):
        checker.fail(command, f"no pong: {result.stdout.strip()[:200]}")
    return result


def check_env(checker, scratch):
    """After the guide's .env commands, the PostgreSQL compose file finds every variable it requires."""
    values = {}
    for line in (scratch / "compose/.env").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    required = set(re.findall(r"\$\{(\w+):\?", (ROOT / "compose/docker-compose.postgres.yml").read_text()))
    missing = sorted(name for name in required if not values.get(name))
    if missing:
        checker.fail("compose/.env after section 2's commands", f"docker-compose.postgres.yml still requires {missing}")
    example = (ROOT / "compose/.env.example").read_text()
    paragraph = example[example.find("PostgreSQL mode only"):].split("\n\n")[0].split("\nPOSTGRES_PASSWORD=")[0]
    for name in sorted(required - {"POSTGRES_PASSWORD"}):
        if name not in paragraph:
            checker.fail("compose/.env.example", f"its PostgreSQL paragraph omits {name}")


def main():
    bin_dir = Path(sys.argv[1]).resolve()
    guide = (ROOT / "compose/README.md").read_text()
    example = (ROOT / "compose/.env.example").read_text()
    with latchkey_up(bin_dir, prefix="latchkey-guide-commands-") as work:
        scratch = work / "repository"
        shutil.copytree(ROOT / "compose", scratch / "compose", ignore=shutil.ignore_patterns(".env", "tls"))
        (scratch / "backups").mkdir()
        checker = Checker(work, bin_dir)
        for command in commands(guide) + inline_commands(guide):
            dispatch(checker, command, scratch)
        for command in env_example_commands(example):
            result = dispatch(checker, command, scratch)
            if command.startswith("openssl rand -hex 32") and not re.fullmatch(r"[0-9a-f]{64}\n", result.stdout):
                checker.fail(command, "not 64 hex digits")
        check_env(checker, scratch)
    if checker.failures:
        print("guide commands that do not work as written:\n" + "\n".join(checker.failures), file=sys.stderr)
        sys.exit(1)
    print(f"guide commands: {checker.ran} commands of compose/README.md and .env.example ran as written, "
          f"{checker.checked} Docker commands checked against the compose files")


if __name__ == "__main__":
    main()
