"""A coding cookie naming a codec that decodes nothing (``undefined``) or is no text encoding, in
a source file or a test file of the crawled repository: that file is skipped with its reason and
the crawl goes on. Such a cookie once stopped the whole crawl with a traceback from a worker."""

from __future__ import annotations

import json

import pytest

COOKIES = {
    "undefined": b"# coding: undefined\nraise ValueError('never read')\n",
    "hex": b"# coding: hex\nraise ValueError('never read')\n",
    "rot13": b"# -*- coding: rot13 -*-\nraise ValueError('never read')\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("cookie", COOKIES)
def test_a_file_whose_codec_decodes_nothing_is_skipped_and_the_crawl_goes_on(cli, fixture_repo, tmp_path, cookie):
    test_file = COOKIES[cookie].replace(b"raise ValueError('never read')", b"import pytest\nwith pytest.raises(ValueError):\n    pass")
    fixture_repo.commit(
        {"pkg/bad.py": COOKIES[cookie], "pkg/good.py": "def f():\n    raise ValueError('still catalogued')\n", "tests/test_bad.py": test_file}, tag="v1"
    )
    config = tmp_path / "errcat.toml"
    config.write_text("[upstreams.w]\nurl = 'https://github.com/acme/widgets'\ninclude = ['pkg/**/*.py']\ntests = ['tests/**/*.py']\n")
    out = tmp_path / "out"
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--upstream", "w", "--config", config, "--out", out)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "acme" / "widgets" / "manifest.json").read_text(encoding="utf-8"))
    reasons = {s["path"]: s["reason"] for s in manifest["skipped"]}
    assert reasons["pkg/bad.py"].startswith("decode error: ") and cookie in reasons["pkg/bad.py"]
    assert reasons["tests/test_bad.py"].startswith("test file: decode error: ")
    index = json.loads((out / "acme" / "widgets" / "index.json").read_text(encoding="utf-8"))
    assert [e["template"] for e in index["entries"]] == ["still catalogued"]
