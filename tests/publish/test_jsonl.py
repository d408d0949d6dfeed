"""errors.jsonl.gz: deterministic, read within bounds, and a damaged one in place is never reused."""

from __future__ import annotations

import gzip
import io
import json
import zlib

import pytest
from test_pins import crawl, releases  # noqa: F401 - the fixture

from crawler.base.errors import DataError
from crawler.publish import jsonl

IDS = ["00aa", "00bb", "01cc", "ff00"]
LINES = [b'{"a":1}\n', b'{"b":2}\n', b'{"c":3}\n', b'{"d":4}\n']


def test_the_same_lines_give_the_same_bytes_whatever_the_jobs_and_any_gzip_reads_them():
    packed = jsonl.pack(IDS, LINES, jobs=1)
    assert packed == jsonl.pack(IDS, LINES, jobs=4)
    assert gzip.decompress(packed) == b"".join(LINES)
    assert [line for _, line in jsonl.iter_lines(io.BytesIO(packed), "f", 100)] == LINES


def test_unchanged_members_are_taken_over_and_changed_ones_made_anew():
    old = jsonl.pack(IDS, LINES)
    members = jsonl.split_members(old)
    assert len(members) == 3  # one per two-digit id prefix
    changed = [*LINES[:2], b'{"c":30}\n', LINES[3]]
    assert jsonl.pack(IDS, changed, previous=members) == jsonl.pack(IDS, changed)
    # a damaged member is never taken: only whole members zlib checked, before the damage
    damaged = old[:-12] + bytes(b ^ 0xFF for b in old[-12:])
    assert set(jsonl.split_members(damaged)) < set(members)
    assert jsonl.split_members(b"not gzip at all") == {}


@pytest.mark.parametrize(
    "data, message",
    [
        (b"junk", "not a valid gzip stream"),
        (jsonl.pack(IDS, LINES)[:-6], "cut short"),
        (
            zlib.compress(
                b"x" * 2000,
                9,
            ),
            "not a valid gzip stream",
        ),
    ],
)
def test_a_damaged_file_is_one_data_error(data, message):
    with pytest.raises(DataError, match=message):
        list(jsonl.iter_lines(io.BytesIO(data), "f", 1000))


def test_a_bomb_stops_at_the_bound(monkeypatch):
    monkeypatch.setattr(jsonl, "MAX_TOTAL_BYTES", 1 << 20)
    bomb = gzip.compress(b"{}\n" * (3 << 20), mtime=0)
    with pytest.raises(DataError, match="decompresses to more than"):
        list(jsonl.iter_lines(io.BytesIO(bomb), "f", 100))
    assert jsonl.split_members(bomb) == {}
    with pytest.raises(DataError, match="longer than 100 bytes"):
        list(jsonl.iter_lines(io.BytesIO(gzip.compress(b"x" * 5000)), "f", 100))


def test_a_stream_of_blank_lines_stops_at_the_first_ones():
    """Newlines alone (1 GiB from 1 MB of gzip, within the bound) were each a turn of a reader's
    loop, found wrong by nothing: minutes of CPU for a fold, `show` or `diff` of such a dataset."""
    blank = gzip.compress(b"\n \t\r\n" * (1 << 20), mtime=0)
    read = []
    with pytest.raises(DataError, match=r"^f:1001: more than 1000 blank lines"):
        read.extend(jsonl.iter_lines(io.BytesIO(blank), "f", 100))
    assert len(read) == jsonl.MAX_BLANK_LINES
    few = [line for _, line in jsonl.iter_lines(io.BytesIO(gzip.compress(b"\n" * 1000 + LINES[0])), "f", 100)]
    assert few == [b"\n"] * 1000 + [LINES[0]]  # (a few are read, and skipped by the dataset reader)


@pytest.mark.slow
def test_a_damaged_errors_jsonl_gz_in_place_gives_the_fresh_one(releases, cli, tmp_path):  # noqa: F811
    repo, _ = releases
    out = tmp_path / "out"
    dataset = crawl(cli, repo, out, "v1")
    packed = (dataset / "errors.jsonl.gz").read_bytes()
    (dataset / "errors.jsonl.gz").write_bytes(packed[:40] + bytes(b ^ 0x55 for b in packed[40:80]) + packed[80:])
    crawl(cli, repo, out, "v3")
    assert (dataset / "errors.jsonl.gz").read_bytes() != packed
    rows = [json.loads(line) for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines()]
    assert rows == [json.loads(p.read_bytes()) for p in sorted((dataset / "errors").iterdir())]  # every line right
    assert cli("validate", out).exit_code == 0


def test_a_member_framed_otherwise_is_not_taken_over():
    """A dataset in place whose members carry a time, a name or a comment in their header, or
    another compression level's flag, must not make the new file differ from a fresh one."""
    ids, lines = ["aa1", "aa2", "bb3"], [b'{"a":1}\n', b'{"b":2}\n', b'{"c":3}\n']
    content = b"".join(lines[:2])
    level1 = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    commented = gzip.compress(content, mtime=0)
    commented = commented[:3] + bytes([0x10]) + commented[4:10] + b"smuggled\0" + commented[10:]
    assert gzip.decompress(commented) == content
    for foreign in (gzip.compress(content, mtime=123), level1.compress(content) + level1.flush(), commented):
        assert jsonl.pack(ids, lines, previous=jsonl.split_members(foreign)) == jsonl.pack(ids, lines)


def test_a_line_not_kept_is_made_only_for_a_member_compressed_anew():
    """A crawl keeps the digests of the lines it compared, not the lines (``pins``): the writer
    makes a line again only where a member must be compressed, and the bytes are those of the
    lines kept whole."""
    ids, lines = ["aa1", "aa2", "bb3", "bb4"], [b'{"a":1}\n', b'{"b":2}\n', b'{"c":3}\n', b'{"d":4}\n']
    digests = [jsonl.line_digest(line) for line in lines]
    before = dict(jsonl.packed(ids, lines))
    changed = [*lines[:3], b'{"d":5}\n']
    whole = jsonl.pack_members(ids, changed, previous=before)
    made: list[int] = []

    def make(i: int) -> bytes:
        made.append(i)
        return changed[i]

    not_kept = [None, None, None, changed[3]]
    assert jsonl.pack_members(ids, not_kept, previous=before, line_digests=[*digests[:3], jsonl.line_digest(changed[3])], make=make) == whole
    assert made == [2]  # the bb member changed: its other line is made again; the aa member is taken over
    with pytest.raises(ValueError):
        jsonl.packed(ids, not_kept)  # no digests for the lines not kept
