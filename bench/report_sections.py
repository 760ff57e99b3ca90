"""Sections of bench/REPORT.md that other benches own.

bench/paper_tables.py regenerates REPORT.md; a bench that adds its own section
(bench/fidelity.py) writes it between two marker lines, and paper_tables.py
keeps every such section when it rewrites the file:

    <!-- section:NAME begin -->
    ...
    <!-- section:NAME end -->
"""
import re

_BLOCK = re.compile(r"^<!-- section:(\S+) begin -->\n.*?^<!-- section:\1 end -->\n?", re.S | re.M)


def kept_sections(path):
    """The marked sections of the file at `path`, as lines each section followed by an empty one
    (to append to lines that end with an empty one); [] if none or no file."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return []
    lines = []
    for m in _BLOCK.finditer(text):
        lines += m.group(0).rstrip("\n").split("\n") + [""]
    return lines


def replace_section(path, name, body_lines):
    """Writes section `name` into the file at `path`: replaces it when present, else appends it."""
    with open(path) as f:
        text = f.read()
    block = "\n".join([f"<!-- section:{name} begin -->"] + body_lines + [f"<!-- section:{name} end -->"]) + "\n"
    pattern = re.compile(rf"^<!-- section:{re.escape(name)} begin -->\n.*?^<!-- section:{re.escape(name)} end -->\n?",
                         re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(path, "w") as f:
        f.write(text)
