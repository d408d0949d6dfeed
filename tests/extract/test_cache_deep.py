"""A cached row nested past both JSON decoders (orjson stops at 1,024 levels, the standard
library's fallback recurses past the interpreter's limit) is a damaged row like any other: a miss,
said once, and the dataset is the --no-cache one. It once stopped the crawl with a RecursionError."""

from __future__ import annotations

import sqlite3
import zlib

import pytest
from test_cache import cache_lines, crawl_args, no_cache_output, tree, upstream, warm  # noqa: F401 - the fixtures


@pytest.mark.slow
def test_a_cached_row_nested_past_the_decoders_is_a_miss(upstream, cli, cache_dir, tmp_path, no_cache_output):  # noqa: F811
    db = warm(cli, upstream, tmp_path, cache_dir)
    deep = b'{"path": "pkg/widgets.py", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT key, value FROM results").fetchall()
        keys = [key for key, _ in rows if key.endswith(":pkg/widgets.py")]
        assert len(keys) == 1
        con.execute("UPDATE results SET value = ? WHERE key = ?", (zlib.compress(deep), keys[0]))
    result = cli(*crawl_args(upstream, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    said = cache_lines(result.stderr)
    assert len(said) == 1 and ("damaged" in said[0] or "could not be used" in said[0]), result.stderr
    assert tree(tmp_path / "out") == no_cache_output
