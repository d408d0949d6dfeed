"""Controls and bidi overrides a crawled repository puts in a message or in its code reach the
site's pages as the escapes the terminal shows, never as characters a browser or a terminal
reading the Markdown would act on (a right-to-left override reorders the text after it)."""

from __future__ import annotations

import re

import pytest

HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

SOURCE = (
    "def check(user):\n"
    "    # access \u202e }if (admin) {\u2066 only\n"
    "    if not user:\n"
    "        raise ValueError('user \u202egnissim\u202c \x1b]0;owned\x07 is required')\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_a_hostile_message_and_code_show_their_controls_as_escapes(cli, fixture_repo, tmp_path, fmt):
    fixture_repo.commit({"pkg/a.py": SOURCE}, tag="v1")
    out = tmp_path / "out"
    crawl = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out)
    assert crawl.exit_code == 0, crawl.output
    site = tmp_path / "site"
    result = cli("render", "--data", out / "acme" / "widgets", "--out", site, "--format", fmt)
    assert result.exit_code == 0, result.output
    pages = [p for p in site.rglob("*") if p.suffix in (".html", ".md")]
    page = next(p for p in pages if p.parent.name == "errors")
    for p in pages:
        text = p.read_text(encoding="utf-8")
        assert not HIDDEN.search(text), (p, HIDDEN.search(text))
    text = page.read_text(encoding="utf-8")
    assert "gnissim" in text and "\\u202e" in text and "\\x1b]0;owned\\x07" in text
    assert "\\u2066" in text  # the comment in the code, too
