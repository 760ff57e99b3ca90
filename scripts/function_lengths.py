#!/usr/bin/env python3
"""Lengths of the C++ functions in the given folders or files.

    scripts/function_lengths.py driver/            # every function, longest first
    scripts/function_lengths.py driver/ --over 100 # only those over 100 lines

A function's length runs from the first line of its signature to its closing
brace, blank and comment lines included. Functions are found by their braces
(comments and literals stripped first): a brace at namespace or class scope
that follows a parameter list. Lambdas count toward the function around them.
"""
import argparse
import pathlib
import re
import sys

SOURCE_SUFFIXES = {".cpp", ".h", ".cc", ".hpp"}


def strip(text):
    """`text` with comments, string and character literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
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
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


FUNCTION_TAIL = re.compile(
    r"\)\s*(const|override|final|noexcept|mutable|&|\s)*(->\s*[\w:<>,\s*&]+)?\s*$")


def functions(path):
    """(name, first line, last line) of each function defined in `path`."""
    text = strip(path.read_text(errors="replace"))
    found, stack = [], []  # stack: (kind, name, first line)
    header_start = 0
    for i, c in enumerate(text):
        if c in ";":
            header_start = i + 1
        elif c == "{":
            header = text[header_start:i]
            scope = all(kind in ("namespace", "type") for kind, _, _ in stack)
            kind, name = "block", ""
            flat = " ".join(header.split())
            if re.match(r"^(extern\s+\"\"\s*|inline\s+)?namespace\b", flat) or flat.startswith('extern ""'):
                kind = "namespace"
            elif scope and re.search(r"\b(struct|class|union|enum)\b", flat) and "(" not in flat:
                kind = "type"
            elif scope:
                # A constructor's initialiser list follows the parameter list.
                sig = re.sub(r"\)\s*:\s*[^{}]*$", ")", flat) if ")" in flat else flat
                if FUNCTION_TAIL.search(sig) and not re.search(r"=\s*\[", flat):
                    kind = "function"
                    m = re.search(r"([~\w:]+(?:operator\S*)?)\s*\(", sig)
                    name = m.group(1) if m else "?"
            first = text.count("\n", 0, header_start + len(header) - len(header.lstrip())) + 1
            stack.append((kind, name, first))
            header_start = i + 1
        elif c == "}":
            if stack:
                kind, name, first = stack.pop()
                if kind == "function":
                    found.append((name, first, text.count("\n", 0, i) + 1))
            header_start = i + 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--over", type=int, default=0, help="list only functions longer than this")
    args = parser.parse_args()
    files = []
    for p in map(pathlib.Path, args.paths):
        files += sorted(f for f in p.rglob("*") if f.suffix in SOURCE_SUFFIXES) if p.is_dir() else [p]
    rows = [(last - first + 1, f"{f}:{first}", name) for f in files for name, first, last in functions(f)]
    rows = sorted((r for r in rows if r[0] > args.over), reverse=True)
    for length, where, name in rows:
        print(f"{length:5}  {where}  {name}")
    print(f"{len(rows)} functions" + (f" over {args.over} lines" if args.over else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
