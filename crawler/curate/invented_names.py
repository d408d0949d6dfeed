"""No invented names: what a machine-written draft mentions must exist in the crawled commit.

A model asked to explain an error likes to advise flags, settings and functions that sound right
and do not exist. Before a draft is written, every name it mentions that a user would type or
look up is looked for in the vocabulary of the crawled commit (every identifier, string word and
``--flag`` of its Python files):

* ``--flags`` anywhere: the flag itself, or its field (``--max-model-len`` <- ``max_model_len``,
  ``--no-x`` <- ``x``), since vLLM builds its flags from config fields;
* environment variables (``UPPER_CASE_WITH_UNDERSCORES``) anywhere;
* in code and in `backticks`: dotted names (config fields such as ``model_config.max_model_len``,
  each part), snake_case names and called functions (``get_kv_cache_config(``); Python's
  builtins and keywords are known too.

A draft naming anything else is rejected with the names; nothing is written.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_FLAG_IN_SOURCE = re.compile(rb"--[a-z0-9][a-z0-9_-]*")
_FLAG = re.compile(r"(?<![\w-])--([a-zA-Z][a-zA-Z0-9_-]*[a-zA-Z0-9])")
_ENV = re.compile(r"(?<![\w.])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w(])")
_TICKED = re.compile(r"`([^`\n]{1,200})`")
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)")
_SNAKE = re.compile(r"(?<![\w.-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w-])")
_CALL = re.compile(r"(?<![\w])([A-Za-z_]\w*)\s*\(")
_KWARG = re.compile(r"[(,]\s*([A-Za-z_]\w*)\s*=(?!=)")
_DEFINED = re.compile(r"(?:\bdef|\bclass|\bas|\bimport|\bfor)\s+([A-Za-z_]\w*)|^\s*([A-Za-z_]\w*)\s*=(?!=)", re.M)
#: Words a draft's code uses that no repository defines: the language's own.
_PYTHON = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


@dataclass
class Vocabulary:
    """The names of one commit: identifiers and string words, and the ``--flags`` written out."""

    words: set[str] = field(default_factory=set)
    flags: set[str] = field(default_factory=set)

    def add(self, source: bytes) -> None:
        self.words.update(w.decode() for w in set(_WORD.findall(source)))
        self.flags.update(f.decode() for f in set(_FLAG_IN_SOURCE.findall(source)))

    def has_flag(self, flag: str) -> bool:
        name = flag.lower()
        if f"--{name}" in self.flags:
            return True
        field_name = name.replace("-", "_")
        return field_name in self.words or (field_name.startswith("no_") and field_name[3:] in self.words)

    def has(self, word: str) -> bool:
        return word in self.words or word in _PYTHON


def mentioned(prose: Iterable[str], code: Iterable[str]) -> dict[str, set[str]]:
    """The names a draft mentions, by kind: flag, env, name (config fields, functions, keywords).

    In prose, everything in `backticks`. In code, what the draft cannot have made up on the spot:
    the functions it calls and the keywords it passes (minus those it defines itself), and the
    attributes it reads; a local variable's own name is the draft's to choose."""
    found: dict[str, set[str]] = {"flag": set(), "env": set(), "name": set()}
    for text in prose:
        found["flag"].update(_FLAG.findall(text))
        found["env"].update(_ENV.findall(text))
        for span in _TICKED.findall(text):
            bare = _bare(span)
            for dotted in _DOTTED.findall(bare):
                found["name"].update(dotted.split("."))
            found["name"].update(_SNAKE.findall(bare))
            found["name"].update(_CALL.findall(bare))
    for text in code:
        found["flag"].update(_FLAG.findall(text))
        found["env"].update(_ENV.findall(text))
        bare = _bare(text)
        local = {a or b for a, b in _DEFINED.findall(bare)}
        for dotted in _DOTTED.findall(bare):
            found["name"].update(dotted.split(".")[1:])
        found["name"].update(set(_CALL.findall(bare)) - local)
        found["name"].update(set(_KWARG.findall(bare)) - local)
    found["name"] -= found["env"]
    return found


def _bare(text: str) -> str:
    """Text without its quoted strings (a value is data, not a name) and its flags (checked apart)."""
    return _FLAG.sub(" ", re.sub(r"(['\"])(?:(?!\1).)*\1", " ", text))


def invented(vocabulary: Vocabulary, prose: Iterable[str], code: Iterable[str]) -> list[str]:
    """Every name the text mentions that the commit does not have, as the draft wrote it."""
    names = mentioned(prose, code)
    missing = [f"--{f}" for f in names["flag"] if not vocabulary.has_flag(f)]
    missing += [e for e in names["env"] if not vocabulary.has(e)]
    missing += [n for n in names["name"] if not vocabulary.has(n)]
    return sorted(set(missing))
