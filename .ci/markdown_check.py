#!/usr/bin/env python3
"""The reference pages read as written: every Markdown page under protocol/ and every README
has balanced code fences (a block left open turns the rest of the page inside out), its
numbered sections in order, and every
section reference (`§3`, `§1-2`, `section 4`, `verification.md §1`) names a numbered heading
(`## 3. ...`) that exists on the page it points at, that page itself when it names none.
Usage: markdown_check.py [ROOT]"""
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
FENCE = re.compile(r"^\s*(```+|~~~+)(.*)$")
# An optional page (a link or a bare file name) just before the reference, then the numbers.
REFERENCE = re.compile(r"(?:\[[^\]]*\]\(([\w./-]+\.md)\)|([\w./-]+\.md))?\s*(?:§\s?|\bsections? )(\d+)(?:\s*[-–]\s*(\d+))?")


def pages():
    found = sorted((ROOT / "protocol").glob("*.md")) + sorted(ROOT.glob("README.md")) + sorted(ROOT.glob("*/README.md"))
    found += sorted((ROOT / "Sources").glob("*/README.md")) + sorted((ROOT / "Examples").glob("*/README.md"))
    return [page for page in dict.fromkeys(found) if page.exists()]


def fence_problems(lines):
    """Blocks opened and never closed: a fence with an info string inside a block opens nothing."""
    problems, opened = [], None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if not match:
            if opened and re.match(r"^#{2,6} \S", line):
                problems.append(f"line {number}: a heading inside the block opened at line {opened[0]} (not closed?)")
            continue
        if opened is None:
            opened = (number, match.group(1)[0])
        elif match.group(2).strip():
            problems.append(f"line {number}: a fence with a language inside the block opened at line {opened[0]} (not closed?)")
            opened = (number, match.group(1)[0])
        else:
            opened = None
    if opened:
        problems.append(f"the block opened at line {opened[0]} is never closed")
    return problems


def prose(lines):
    """(line number, text) outside code blocks, without inline code."""
    inside = False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield number, re.sub(r"`[^`]*`", "", line)


def numbered_sections(page):
    return {int(match.group(1)) for match in re.finditer(r"^#{2,3} (\d+)\.", page.read_text(), flags=re.M)}


def main():
    problems = []
    checked = 0
    for page in pages():
        lines = page.read_text().splitlines()
        name = page.relative_to(ROOT)
        problems += [f"{name}: {problem}" for problem in fence_problems(lines)]
        numbers = [int(match.group(1)) for match in re.finditer(r"^## (\d+)\.", "\n".join(lines), flags=re.M)]
        if numbers != sorted(numbers):
            problems.append(f"{name}: numbered sections out of order: {numbers}")
        for number, text in prose(lines):
            for match in REFERENCE.finditer(text):
                target_name = match.group(1) or match.group(2)
                target = (page.parent / target_name).resolve() if target_name else page
                if not target.exists():
                    problems.append(f"{name}:{number}: {match.group(0).strip()}: {target_name} does not exist")
                    continue
                sections = numbered_sections(target)
                first = int(match.group(3))
                last = int(match.group(4) or first)
                checked += 1
                for section in range(first, last + 1):
                    if section not in sections:
                        problems.append(f"{name}:{number}: {match.group(0).strip()}: {target.relative_to(ROOT)} has no section {section}")
    if problems:
        print("Markdown pages that do not read as written:\n" + "\n".join(problems), file=sys.stderr)
        sys.exit(1)
    print(f"markdown: {len(pages())} pages with balanced code fences; {checked} section references resolve")


if __name__ == "__main__":
    main()
