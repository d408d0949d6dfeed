"""A long line of errors.jsonl.gz costs time linear in its length, with the same bounds."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

#: Reads a 32 MiB line that arrives one compressed byte at a time (pieces of about 1 KiB, as a
#: stream of incompressible bytes arrives in small pieces): joined piece by piece into one bytes
#: object, that copies the line so far 32,000 times (about 512 GiB of copying, hours); joined
#: once, a second.
READER = textwrap.dedent("""
    import gzip, sys
    from crawler.base.errors import DataError
    from crawler.publish import jsonl

    class Trickle:
        def __init__(self, data):
            self.data, self.at = data, 0
        def read(self, n):
            piece = self.data[self.at:self.at + 1]
            self.at += 1
            return piece

    line = b"x" * (32 << 20)
    packed = gzip.compress(line + b"\\n" + b'{"a":1}\\n', 9, mtime=0)
    got = list(jsonl.iter_lines(Trickle(packed), "f", 64 << 20))
    assert got == [(1, line + b"\\n"), (2, b'{"a":1}\\n')], [(n, len(x)) for n, x in got]
    try:
        list(jsonl.iter_lines(Trickle(packed), "f", 16 << 20))
    except DataError as exc:
        assert str(exc) == f"f:1: longer than {16 << 20} bytes", exc
    else:
        raise AssertionError("no DataError")
    print("ok")
""")


@pytest.mark.slow
def test_a_long_line_arriving_in_small_pieces_is_joined_once():
    # the timeout is a hang guard only (the reader takes about a second): the assertion is the result
    try:
        done = subprocess.run([sys.executable, "-c", READER], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise AssertionError("reading one 32 MiB line did not end in 300 s: its pieces are joined again and again") from None
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"
