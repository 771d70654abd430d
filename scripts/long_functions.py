#!/usr/bin/env python3
"""List the C++ functions longer than a limit (default 80 lines), longest first.

    scripts/long_functions.py [--limit 80] [--all] [PATH ...]   (default: common chapters tools examples)

A function is a brace block whose opening line (or the lines just before it) reads as a
function head: a parameter list `(...)` that is not an `if`/`for`/`while`/`switch`/`catch`, a
lambda or an initializer. Lengths count from the head's first line to the closing brace.
Comments, string and character literals are blanked first (raw strings too), so braces in them
do not count. Tests, benchmarks and fuzzers are left out unless --all; a block that is mostly
a table (a static initializer list of rows, or a body that is one initializer list) is a data
table, not logic, and is marked [table].

A heuristic, not a parser: it reads this repository's style (clang-format, one brace style).
"""
import argparse
import os
import re
import sys

SKIP_DIRS = {"build", "third_party", "_deps", ".git"}
CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|return|try)\b\s*(\(|\{|$)")


def blank(text):
    """Comments and literals replaced by spaces, newlines kept (line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2 : j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def head_of(lines, k):
    """The function head that opens on line k (0-based; the line holds the '{'), or None."""
    first = k
    text = lines[k][: lines[k].rfind("{")]
    # a head may span several lines: walk back while the parentheses are unbalanced or the
    # text so far is an initializer list / trailing qualifier
    while (text.count("(") != text.count(")") or text.strip().startswith((":", ",", "->")) or text.strip() == "") and first > 0 and k - first < 12:
        first -= 1
        text = lines[first] + " " + text
    t = " ".join(text.split())
    if "(" not in t or t.count("(") != t.count(")"):
        return None
    if CONTROL.search(t.split("(")[0] + "(") or re.search(r"\b(if|for|while|switch|catch)\s*\(", t.split(")")[0] + ")"):
        return None
    if re.search(r"\[[^\]]*\]\s*(\([^)]*\))?\s*(mutable\s*)?(->\s*[\w:<>]+\s*)?$", t):  # a lambda
        return None
    if re.search(r"(=|return|,|\(|\{)\s*$", t.rstrip()):  # initializers, arguments
        return None
    if re.search(r"=\s*\[", t) or re.search(r"\]\s*\(.*\)\s*(mutable)?\s*$", t):
        return None
    if t.rstrip().endswith(")") is False and not re.search(r"\)\s*(const|override|noexcept|final|->.*)?\s*(:.*)?$", t):
        return None
    if re.match(r"^\s*(namespace|class|struct|union|enum|extern)\b", t):
        return None
    name = re.search(r"([~\w:]+(?:<[^()]*>)?|operator\s*\S+)\s*\(", t)
    if not name:
        return None
    return first, name.group(1)


def mostly_init(code):
    """A body that is one initializer list (and a little around it): one of its first two
    lines opens `... = {` (a static built by a lambda: `static const T x = [] {`, then
    `T rows = {`), and the braces it opens close on lines making up most of the body."""
    for k in range(min(2, len(code))):
        if not code[k].endswith("= {"):
            continue
        depth = 0
        for j in range(k, len(code)):
            depth += code[j].count("{") - code[j].count("}")
            if depth <= 0:
                return j - k + 1 >= 0.75 * len(code)
        return False
    return False


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        raw = fh.read()
    lines = blank(raw).split("\n")
    stack = []  # (line of '{', head or None)
    found = []
    for k, line in enumerate(lines):
        for col, c in enumerate(line):
            if c == "{":
                head = None
                if line[col + 1 :].strip() == "" or line[col + 1 :].strip().startswith("}"):
                    if not any(h for _, h in stack):  # not nested in another function
                        head = head_of(lines, k) if line[:col].strip() or k > 0 else None
                stack.append((k, head))
            elif c == "}" and stack:
                start, head = stack.pop()
                if head:
                    first, name = head
                    body = lines[start + 1 : k]
                    rows = sum(1 for b in body if b.strip().startswith("{") and b.strip().endswith(("},", "}")))
                    code = [b.strip() for b in body if b.strip()]
                    # a table: rows of braces, or one static initializer list and its return
                    one_init = len(code) >= 2 and code[0].startswith("static const") and code[0].endswith("= {") \
                        and code[-1].startswith("return ") and code[-2] in ("};", "}();")
                    table = len(body) > 0 and (rows >= 0.4 * len(body) or one_init or mostly_init(code))
                    found.append((k - first + 1, name, first + 1, table))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", default=["common", "chapters", "tools", "examples", "exercises", "solutions"])
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("--all", action="store_true", help="include tests, bench, fuzz")
    args = ap.parse_args()
    rows = []
    for root in args.paths:
        walk = [(os.path.dirname(root), [], [os.path.basename(root)])] if os.path.isfile(root) else os.walk(root)
        for d, dirs, files in walk:
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
            for f in files:
                if not f.endswith((".cpp", ".hpp", ".cu", ".h")):
                    continue
                p = os.path.join(d, f)
                if not args.all and re.search(r"(^|/)(tests|bench|fuzz)(/|$)", p):
                    continue
                for length, name, line, table in functions(p):
                    if length > args.limit:
                        rows.append((length, f"{p}:{line}", name, table))
    rows.sort(key=lambda r: (-r[0], r[1]))
    for length, where, name, table in rows:
        print(f"{length:5d}  {where}  {name}{'  [table]' if table else ''}")
    logic = [r for r in rows if not r[3]]
    print(f"{len(rows)} functions over {args.limit} lines ({len(logic)} not tables)", file=sys.stderr)


if __name__ == "__main__":
    main()
