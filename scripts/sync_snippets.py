#!/usr/bin/env python3
"""Re-copies every marked code block of a docs page from the region it names, after a change to
the source (e.g. scripts/format.sh). tests/test_doc_snippets.cpp checks the same markers:

    <!-- snippet: examples/minimal/main.cpp#loop -->      in the page, above a fenced block
    // [snippet:loop] ... // [/snippet:loop]              in the file (# for cmake/python)

Usage: scripts/sync_snippets.py [PAGE...]   (default: docs/profiler-in-cpp.md)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- snippet: ([^#\s]+)#([A-Za-z0-9_-]+) -->$")


def dedent(lines):
    body = [l for l in lines if l.strip()]
    indent = min((len(l) - len(l.lstrip(" ")) for l in body), default=0)
    return [l[indent:] if l.strip() else "" for l in lines]


def region(path, name):
    lines = (ROOT / path).read_text().splitlines()
    is_marker = lambda l, tag: l.strip() in ("// " + tag, "# " + tag)
    for i, l in enumerate(lines):
        if is_marker(l, f"[snippet:{name}]"):
            for j in range(i + 1, len(lines)):
                if is_marker(lines[j], f"[/snippet:{name}]"):
                    return dedent(lines[i + 1 : j])
    sys.exit(f"sync_snippets: {path} has no region [snippet:{name}]")


def sync(page):
    lines = page.read_text().splitlines()
    out, i, changed, last_marker = [], 0, 0, None
    while i < len(lines):
        line = lines[i]
        m = MARKER.match(line)
        if m:
            last_marker = m.groups()
        if line.startswith("```") and line[3:].strip() not in ("", "bash", "text") and last_marker:
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            new = region(*last_marker)
            changed += new != dedent(lines[i + 1 : end])
            out += [line] + new + ["```"]
            i, last_marker = end + 1, None
            continue
        if line.strip():
            last_marker = last_marker if m else (None if not line.startswith("```") else last_marker)
        out.append(line)
        i += 1
    page.write_text("\n".join(out) + "\n")
    print(f"{page.relative_to(ROOT)}: {changed} block(s) re-copied")


for p in sys.argv[1:] or ["docs/profiler-in-cpp.md"]:
    sync(ROOT / p)
