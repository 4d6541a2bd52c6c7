#!/usr/bin/env python3
"""Builds what compose/Dockerfile builds, without a Docker engine: lays out exactly the build
stage's context (its own COPY lines, read from the Dockerfile, with .dockerignore applied) in
an empty directory, runs the stage's build command there, and checks that every file the final
stage copies out of it and its ENTRYPOINT exist. A Dockerfile that forgets a path the package
needs fails here as it would fail `docker build`.
The stage's own build (compose/build-release.sh) also fails when the binary outgrows its budget.
Usage: dockerfile_context.py   (KEEP=1 keeps the laid-out directory)"""
import fnmatch
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "compose/Dockerfile"


def fail(message):
    print(f"dockerfile context: {message}", file=sys.stderr)
    sys.exit(1)


def instructions(text):
    """(keyword, arguments) per instruction, continuation lines joined, comments dropped."""
    joined, current = [], ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        keyword, _, rest = current.strip().partition(" ")
        joined.append((keyword.upper(), rest.strip()))
        current = ""
    return joined


def stages(text):
    """Stage name -> its instructions after FROM."""
    result, name = {}, None
    for keyword, rest in instructions(text):
        if keyword == "FROM":
            words = rest.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else str(len(result))
            result[name] = []
        elif name is not None:
            result[name].append((keyword, rest))
    return result


def ignored_patterns():
    path = ROOT / ".dockerignore"
    if not path.exists():
        return []
    return [line.strip().rstrip("/") for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def is_ignored(relative, patterns):
    parts = Path(relative).parts
    return any(fnmatch.fnmatch("/".join(parts[:length]), pattern) for pattern in patterns for length in range(1, len(parts) + 1))


def copy_into(context, sources, destination, workdir, patterns):
    """COPY SRC... DEST: a directory's contents land in DEST, a file in DEST (a folder when it ends in /)."""
    target = Path(destination) if destination.startswith("/") else Path(workdir) / destination
    target = context / target.relative_to("/")
    for source in sources:
        path = ROOT / source
        if not path.exists():
            fail(f"COPY {source}: not in the build context (the repository root)")
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                relative = file.relative_to(ROOT)
                if file.is_file() and not is_ignored(relative, patterns):
                    (target / file.relative_to(path)).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(file, target / file.relative_to(path))
        elif not is_ignored(path.relative_to(ROOT), patterns):
            into = target / path.name if destination.endswith("/") or len(sources) > 1 else target
            into.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, into)


def main():
    text = DOCKERFILE.read_text()
    all_stages = stages(text)
    build_name, final_name = list(all_stages)[0], list(all_stages)[-1]
    build, final = all_stages[build_name], all_stages[final_name]
    patterns = ignored_patterns()
    root = Path(tempfile.mkdtemp(prefix="latchkey-dockerfile-"))
    try:
        workdir, command = "/", None
        copies = 0
        for keyword, rest in build:
            if keyword == "WORKDIR":
                workdir = rest if rest.startswith("/") else str(Path(workdir) / rest)
                (root / workdir.lstrip("/")).mkdir(parents=True, exist_ok=True)
            elif keyword == "COPY":
                words = [word for word in shlex.split(rest) if not word.startswith("--")]
                copy_into(root, words[:-1], words[-1], workdir, patterns)
                copies += 1
            elif keyword == "RUN" and "apt-get" not in rest:
                command = rest  # the packages it installs are CI's own (.ci/run installs them)
        if command is None:
            fail(f"stage {build_name} runs no build command")
        # The stage's absolute paths (its WORKDIR, /out, /symbols) live under the laid-out root.
        source_dir = root / workdir.lstrip("/")
        out_dir = root / "out"
        command = command.replace(" /out", f" {out_dir}").replace(" /symbols", f" {root / 'symbols'}")
        started = time.monotonic()
        print(f"dockerfile context: {copies} COPY lines laid out in {source_dir}; running: {command}", flush=True)
        status = subprocess.run(["bash", "-c", command], cwd=source_dir).returncode
        if status != 0:
            fail(f"the build stage's command failed in its own context (exit status {status})")
        for stage in [name for name in all_stages if name != build_name]:
            for keyword, rest in all_stages[stage]:
                words = shlex.split(rest)
                if keyword == "COPY" and f"--from={build_name}" in words:
                    for source in [word for word in words if not word.startswith("--")][:-1]:
                        if not (root / source.lstrip("/")).exists():
                            fail(f"stage {stage} copies {source}, which the build stage does not make")
        for keyword, rest in final:
            if keyword in ("ENTRYPOINT", "HEALTHCHECK"):
                form = rest[rest.index("["):] if "[" in rest else rest
                entry = Path(shlex.split(form.strip("[]").replace(",", " "))[0]).name
                if not (out_dir / entry).exists():
                    fail(f"the {keyword} runs {entry}, which is not among what the build stage makes")
        print(f"dockerfile context: the build stage builds in its own context ({time.monotonic() - started:.0f} s)")
    finally:
        if os.environ.get("KEEP") is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
