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

# bytes.translate tables: the comparisons are of ASCII (after NFKC, which folds fullwidth forms),
# done in C, as an answer may be megabytes long
_ALNUM = bytes(range(ord("0"), ord("9") + 1)) + bytes(range(ord("a"), ord("z") + 1))
_NOT_ALNUM = bytes(b for b in range(256) if b not in _ALNUM)
_NOT_HEX = bytes(b for b in range(256) if b not in b"0123456789abcdef")
_B64 = bytes.maketrans(b"-_", b"+/")  # urlsafe to standard
_NOT_B64 = bytes(b for b in range(256) if b not in _ALNUM + b"ABCDEFGHIJKLMNOPQRSTUVWXYZ+/-_")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\U([0-9a-fA-F]{8})")


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = int(next(g for g in m.groups() if g is not None), 16)
        return chr(code) if code <= 0x10FFFF else m.group()

    return _ESCAPE.sub(one, text)


_DECODERS = (_unescape, lambda t: urllib.parse.unquote(t, errors="replace"), html.unescape)


def _ascii(text: str) -> bytes:
    return unicodedata.normalize("NFKC", text).encode("ascii", "ignore")


def _alnum(text: str) -> str:
    """Letters and digits alone, lower case."""
    return _ascii(text).lower().translate(None, _NOT_ALNUM).decode()


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
        #: pieces of which every such run holds one (aligned, half a run long): looked for first, as a
        #: few searches of a long answer cost what a run's dozens would not
        step = max(MIN_KEY // 2, width // 2)
        self._seeds = {form[i : i + step] for form in whole for i in range(0, len(form) - step + 1, step)}
        self._hex = raw.hex()
        self._b64 = _b64_cores(raw)
        # what ``mask`` replaces, longest first: the forms a text shows the key in as written
        forms = {
            key,
            key[::-1],
            codecs.encode(key, "rot13"),
            urllib.parse.quote(key, safe=""),
            self._hex,
            base64.b64encode(raw).decode(),
            base64.urlsafe_b64encode(raw).decode(),
            *self._b64,
            *(core.replace("+", "-").replace("/", "_") for core in self._b64),
        }
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
            data = _ascii(candidate)
            plain = data.lower().translate(None, _NOT_ALNUM).decode()
            if any(seed in plain for seed in self._seeds) and any(run in plain for run in self._plain):
                return True
            if self._hex in data.lower().replace(b"\\x", b"").replace(b"0x", b"").translate(None, _NOT_HEX).decode():
                return True
            b64 = data.translate(_B64, _NOT_B64).decode()
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
