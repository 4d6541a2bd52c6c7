#!/usr/bin/env python3
"""Replays the copy-paste `nc` sessions of compose/README.md (section 6) against a fresh
`latchkey up` and checks each answer has the shape the guide shows: the same ids, the same
keys all the way down, the same error reasons, the same value types (ids, codes and times
differ from run to run). Usage: guide_sessions.py BIN_DIR"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from latchkey_up import latchkey_up

ROOT = Path(__file__).resolve().parent.parent


def shape(value):
    if isinstance(value, dict):
        # A reason or a status is part of the contract; other strings vary.
        return {key: (item if key in ("reason", "status", "state", "jsonrpc", "pong", "ok") else shape(item)) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def sessions(guide):
    """(shell command, expected lines) pairs: each ```sh block that runs nc, with the block after it."""
    blocks = re.findall(r"```(\w*)\n(.*?)```", guide, flags=re.S)
    pairs = []
    for index, (language, body) in enumerate(blocks):
        if language == "sh" and "nc -N" in body and index + 1 < len(blocks):
            pairs.append((body, [line for line in blocks[index + 1][1].splitlines() if line.startswith("{")]))
    return pairs


def main():
    bin_dir = Path(sys.argv[1]).resolve()
    guide = (ROOT / "compose/README.md").read_text()
    pairs = sessions(guide)
    if len(pairs) < 5:
        sys.exit(f"guide sessions: found only {len(pairs)} nc sessions in compose/README.md")
    with latchkey_up(bin_dir, prefix="latchkey-guide-") as work:
        failures = 0
        for command, expected in pairs:
            output = subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, text=True, timeout=20).stdout
            answers = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
            # Answers may come in any order; compare them by id.
            got = {json.dumps(answer.get("id")): shape(answer) for answer in answers if "jsonrpc" in answer}
            want = {json.dumps(json.loads(line).get("id")): shape(json.loads(line)) for line in expected if '"jsonrpc"' in line}
            if got != want:
                failures += 1
                print(f"guide session differs:\n{command}\nwant {json.dumps(want)}\ngot  {json.dumps(got)}", file=sys.stderr)
        if failures:
            sys.exit(1)
        print(f"guide sessions: {len(pairs)} nc sessions of compose/README.md answer as written")


if __name__ == "__main__":
    main()
