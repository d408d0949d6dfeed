"""One class of white space for errcat match and the site's search box: paste.SPACE is the text of
Python's (str.isspace, str.strip, re's \\s), search.js's SPACE the same text, and the box reads no
white space but through it (ECMA-262's \\s and trim() take \\ufeff and leave \\x1c-\\x1f and \\x85;
a paste with one of them read apart in the two). test_search_parity.py holds the readings alike."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from crawler.consume.paste import SPACE
from crawler.consume.site_html import static_file

NODE = shutil.which("node") or shutil.which("nodejs")
EVERY = "".join(map(chr, range(sys.maxunicode + 1)))
PYTHON_SPACE = [ord(c) for c in EVERY if c.isspace()]


def js_space() -> str:
    """The text of search.js's SPACE (a JS string literal of plain escapes, read as JSON)."""
    (literal,) = re.findall(r'^  var SPACE = ("[^"\n]*");$', static_file("search.js"), re.M)
    return json.loads(literal)


def test_pastes_space_is_pythons_white_space():
    """paste.SPACE takes every character str.isspace and re's \\s take, and no other."""
    assert [ord(c) for c in re.findall(f"[{SPACE}]", EVERY)] == PYTHON_SPACE
    assert [ord(c) for c in re.findall(r"\s", EVERY)] == PYTHON_SPACE


def test_the_box_spells_the_same_class():
    """search.js's SPACE is paste.SPACE's very text."""
    assert js_space() == SPACE


def test_the_box_reads_white_space_only_through_its_class():
    """No white space of ECMA-262's in the box's reading: every regex literal with \\s, \\S or \\b,
    or the m flag (whose ^ and $ are at \\r and \\u2028 too) goes through py(), and no string is
    trimmed by trim() (ECMA-262's white space); pyStrip is Python's strip."""
    js = static_file("search.js")
    code = "\n".join(line for line in js.splitlines() if not line.lstrip().startswith("//"))
    literal = r"/(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\[\n])+/[dgimsuy]*"
    outside = re.sub(r"py\(" + literal + r"\)", "py(...)", code)
    bare = [m.group() for m in re.finditer(literal, outside) if re.search(r"\\[sSb]|/[a-z]*m[a-z]*$", m.group().replace("[\\s\\S]", ""))]
    assert bare == []
    assert not re.search(r"\.trim(?:Start|End)?\(", code)


@pytest.mark.skipif(NODE is None and os.environ.get("CI") != "true", reason="node is not installed (apt-get install nodejs)")
def test_the_box_class_takes_pythons_white_space_under_node():
    """Under Node, search.js's SPACE as a class (Unicode mode, as py() builds every pattern)
    takes every character str.isspace takes and no other, and pyStrip strips them all."""
    assert NODE is not None, "the box's class must be checked in CI: node is missing (apt-get install nodejs)"
    script = (
        "const S = " + json.dumps(js_space()) + ', re = new RegExp("^[" + S + "]$", "u"), out = [];'
        "for (let c = 0; c <= 0x10ffff; c++) if (c < 0xd800 || c > 0xdfff) { if (re.test(String.fromCodePoint(c))) out.push(c); }"
        "process.stdout.write(JSON.stringify(out));"
    )
    done = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == PYTHON_SPACE
