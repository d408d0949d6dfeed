"""Links in a machine-written draft: only to the upstream's own pages, or hosts its config names.

A draft's pages are live until someone reviews them (labelled machine-written, but live), and its
prompt carries crawled text: a model talked round by it, or just guessing, would put links to any
host on them. So a draft is held to:

* ``https://<repository host>/<owner>/<name>`` and below (GitHub's owner and name in any case),
  the repository the dataset was crawled from;
* ``https://<host>/...`` for each host the upstream's configuration lists in
  ``draft_link_hosts`` (``errcat.toml``; the built-in vLLM upstream lists ``docs.vllm.ai``);
* in plain text and code only, ``http(s)://`` addresses of the user's own machine (``localhost``,
  ``127.0.0.1``, ``0.0.0.0``, ``[::1]``): the server a fix talks to, never a link on the page.

Every link the site's own Markdown parse (``base.markdown``) makes of a section (inline, reference, autolink; after
its entity decoding and normalisation) and every ``scheme://`` address written anywhere, code
included, is checked; any other one rejects the draft with the addresses (a draft is written whole
or not at all, as for invented names: a link cut out of a sentence would leave it pointing at
nothing, and a reviewer should see exactly what the model wrote). No port, user name or
backslash: ``https://evil.example\\@github.com/o/n`` is a link to evil.example in a browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from crawler.base.markdown import links as markdown_links

#: ``scheme://...`` written anywhere, up to white space or what ends a Markdown link or a quote.
_ADDRESS = re.compile(r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://[^\s<>()\[\]\"'`]*")
_HTTPS = re.compile(r"(?i)https://([a-z0-9.-]+)([/?#][^\\\s]*)?")
_LOCAL = re.compile(r"(?i)https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])(?::[0-9]{1,5})?(?:[/?#][^\\\s]*)?")


@dataclass(frozen=True)
class LinkRule:
    """Where one dataset's drafts may link: its repository and the hosts its upstream names."""

    host: str
    owner: str
    name: str
    hosts: tuple[str, ...] = ()

    def allows(self, url: str, *, live: bool) -> bool:
        if not live and _LOCAL.fullmatch(url):
            return True
        m = _HTTPS.fullmatch(url)
        if m is None:
            return False
        host, rest = m.group(1).lower(), m.group(2) or ""
        if host in self.hosts:
            return True
        parts = re.split(r"[/?#]", rest)  # "/owner/name/..." -> "", owner, name, ...
        return host == self.host and len(parts) >= 3 and [p.lower() for p in parts[1:3]] == [self.owner.lower(), self.name.lower()]

    def foreign(self, prose: Iterable[str], code: Iterable[str]) -> list[str]:
        """Every link or address of the draft's text that it may not carry."""
        prose, bad = list(prose), []
        for text in prose:
            bad += [url for url in markdown_links(text) if not self.allows(url, live=True)]
        for text in [*prose, *code]:
            bad += [url for url in (m.group().rstrip(".,;:!?") for m in _ADDRESS.finditer(text)) if not self.allows(url, live=False)]
        return sorted(set(bad))
