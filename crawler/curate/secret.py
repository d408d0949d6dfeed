"""The endpoint's API key in every form a model may echo it: found in an answer, masked in a line.

A model's prompt carries crawled text, so a prompt-injected model (or a proxy that sees the
request) may quote the key back, plainly or encoded. :class:`KeyScreen` finds a key of at least
``MIN_KEY`` characters (shorter ones, such as vLLM's ``EMPTY``, are words, not secrets: they are
only replaced where they appear as they are) in a text

* as it is, in any case, with any characters between its letters and digits (white space,
  zero-width characters, ``-``, dots: the comparison is of letters and digits alone, after NFKC),
  also reversed or ROT13'd, and any half of it or more (a message cut short after it);
* behind escapes a model writes into text: ``\\u0073``, ``\\x73``, ``%73``, ``&#115;`` (and two
  layers of them);
* as hex (any case, ``0x``/``\\x``/spaces between the bytes) and as base64 (standard or urlsafe,
  padded or not, with line breaks, at each of the three byte alignments, so the base64 of a longer
  text holding the key, ``Bearer <key>`` or a JSON request, is found too).

Not covered: encryption, compression, other encodings (base32, base85, a model's own cipher) and
translations; a key shorter than ``MIN_KEY`` characters.
"""

from __future__ import annotations

import base64
import codecs
import html
import math
import re
import unicodedata
import urllib.parse

#: A key shorter than this is only replaced where it appears verbatim, never screened for.
MIN_KEY = 8
#: What a masked key shows as.
MASK = "***"
#: A line that still holds the key after every replacement is withheld whole.
WITHHELD = "(withheld: it quotes the API key)"

_NON_ALNUM = re.compile(r"[\W_]+")
_NON_HEX = re.compile(r"0x|[^0-9a-f]+")
_NON_B64 = re.compile(r"[^A-Za-z0-9+/]+")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\U([0-9a-fA-F]{8})")


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = int(next(g for g in m.groups() if g is not None), 16)
        return chr(code) if code <= 0x10FFFF else m.group()

    return _ESCAPE.sub(one, text)


_DECODERS = (_unescape, lambda t: urllib.parse.unquote(t, errors="replace"), html.unescape)


def _alnum(text: str) -> str:
    return _NON_ALNUM.sub("", unicodedata.normalize("NFKC", text).casefold())


def _b64_cores(data: bytes) -> list[str]:
    """The part of the base64 of ``data`` that any base64 text holding it shows, at each of the
    three alignments it may start at: the characters made of its bits alone."""
    cores = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode()
        first, end = math.ceil(8 * offset / 6), (8 * (offset + len(data))) // 6
        cores.append(encoded[first:end])
    return cores


class KeyScreen:
    """Finds (``holds``) and masks (``mask``) one key."""

    def __init__(self, key: str | None) -> None:
        self.key = key or None
        alnum = _alnum(key) if key else ""
        self.active = key is not None and len(key) >= MIN_KEY and len(alnum) >= MIN_KEY
        if key is None or not self.active:
            return
        raw = key.encode()
        width = max(MIN_KEY, math.ceil(len(alnum) / 2))
        whole = (alnum, alnum[::-1], codecs.encode(alnum, "rot13"))
        #: every run of half the key or more, of each of its plain forms (letters and digits alone)
        self._plain = {form[i : i + width] for form in whole for i in range(len(form) - width + 1)}
        self._hex = raw.hex()
        self._b64 = _b64_cores(raw)
        # what ``mask`` replaces, longest first: the forms a text shows the key in as written
        forms = {key, key[::-1], codecs.encode(key, "rot13"), urllib.parse.quote(key, safe=""), self._hex,
                 base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode(), *self._b64,
                 *(core.replace("+", "-").replace("/", "_") for core in self._b64)}
        self._replace = re.compile("|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)), re.I)

    def _candidates(self, text: str) -> set[str]:
        """The text, and what two layers of escapes, percent-encoding and entities decode it to."""
        found = {text}
        layer = {text}
        for _ in range(2):
            layer = {decode(t) for t in layer for decode in _DECODERS} - found
            found |= layer
        return found

    def holds(self, text: str) -> bool:
        """Whether ``text`` holds the key in any form this screen knows (never for a short key)."""
        if not self.active or not text:
            return False
        for candidate in self._candidates(text):
            plain = _alnum(candidate)
            if any(run in plain for run in self._plain):
                return True
            if self._hex in _NON_HEX.sub("", candidate.casefold().replace("\\x", "")):
                return True
            b64 = _NON_B64.sub("", candidate.replace("-", "+").replace("_", "/"))
            if any(core in b64 for core in self._b64):
                return True
        return False

    def mask(self, text: str) -> str:
        """``text`` with the key replaced by ``***`` wherever it shows as written (plain, reversed,
        ROT13, percent-encoded, hex, base64); a text that still holds it is withheld whole."""
        if self.key is None:
            return text
        if not self.active:
            return text.replace(self.key, MASK)
        if not self.holds(text):
            return text
        masked = self._replace.sub(MASK, text)
        return WITHHELD if self.holds(masked) else masked
