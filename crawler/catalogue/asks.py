"""What a message asks of its reader, read from its words: a fix direction must not compete with it.

A message that asks for a setting ("use --disable-prefix-caching", "requires --tool-call-parser
to be set", "Start the server with --trust-request-mm-kwargs", "set VLLM_X=False") says what to
change: a derived fix about another setting (the one the guard tests) then sends the user the
other way, often by dropping what they chose ("Leave `--quantization` unset" where the message
asks for another all2all backend). The message's own words are read, never its placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

#: Words that ask for what follows them (a verb of a request, or "requires"): "may require" is a
#: consequence, not a request (see ``_HEDGES``). Gerunds ("Using default ...", "Enabling X for
#: ...") report what the code does, not what it asks.
_VERBS = re.compile(
    r"(?:use|set|pass|add|specify|specifying|enable|disable|remove|unset|omit|provide|"
    r"requires?|needs?|try|(?:re)?launch|(?:re)?start|run)"
)
_HEDGES = ("may", "might", "could", "would")
#: How far after its verb the first thing a request names may stand ("use a different --x",
#: "start the server with --x"): further on, the verb is about something else.
_REACH = 4
#: A setting a message spells: a flag, an environment variable, a backquoted name.
_ITEM = re.compile(r"--?[A-Za-z][\w.-]*|[A-Z][A-Z0-9]*_[A-Z0-9_]+|`[^`\s]+")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
#: The most words a setting's name is said in ("max num batched tokens"), past where it starts.
_LONGEST = 8
#: How much of a message is read for what it asks (a crawled message may be any length).
_MAX_TEXT = 4000
_CLAUSE_END = re.compile(r"[.;:,!?](?=\s|$)|\n")
#: Words that make dropping the setting the message's own request: it replaces it ("instead"),
#: retires it, ignores it, or the user gave two that exclude each other.
_RETIRED = re.compile(r"deprecat|will be removed|no effect|ignor|necessary|\bboth\b|instead|precedence", re.I)
#: The prefix of a switch's name that its feature's name lacks (``enable_prefix_caching``: "prefix caching").
_SWITCH = re.compile(r"(?:enable|use)_")


def words(text: str) -> str:
    """The message's own words: its placeholders (``{self.x}``, nested ``{', '.join(...)}``) out."""
    text = text[:_MAX_TEXT]
    while True:
        out = _PLACEHOLDER.sub(" ", text)
        if out == text:
            return out
        text = out


def _norm(text: str) -> str:
    """A spelling in one form: ``--a-b`` / ``A_B`` / `` `a_b` `` -> ``a_b`` (up to ``=`` or a blank)."""
    return re.split(r"[=\s]", text.strip("`").lstrip("-"), maxsplit=1)[0].replace("-", "_").lower().rstrip(".")


def _setting_pattern(name: str) -> re.Pattern[str]:
    """``name`` (a setting's code name or spelling) as the message's words may say it: dashes,
    underscores and blanks alike, and a switch by its feature's name (``enable_fault_tolerance``:
    "fault tolerance")."""
    norm = _norm(name)
    forms = [norm, _SWITCH.sub("", norm, count=1)]
    alternatives = "|".join(r"[\s_]+".join(map(re.escape, form.split("_"))) for form in dict.fromkeys(forms) if form)
    return re.compile(rf"(?<![a-z0-9_])(?:{alternatives})(?![a-z0-9_])")


def _plain(text: str) -> str:
    return re.sub(r"(?<![A-Za-z0-9_])-+", " ", text).replace("-", "_").lower()


def says(message: str, names: list[str]) -> bool:
    """Whether the message's words name one of ``names`` (loosely: see ``_setting_pattern``)."""
    text = _plain(words(message))
    return any(name and _setting_pattern(name).search(text) for name in names)


def asked(message: str, subject: Sequence[str] = (), known: Callable[[str], bool] | None = None) -> list[tuple[str, set[str]]]:
    """The parts of the message that ask for something, each with the settings it names: from a
    verb of a request whose first named setting (``_named``, or one of the ``subject``'s
    spellings) follows within ``_REACH`` words, to the end of its clause (one part a clause: a
    later verb's part is a part of it)."""
    patterns = [_setting_pattern(name) for name in subject if name]
    regions = []
    for clause in _CLAUSE_END.split(words(message)):
        tokens = clause.split()
        for i, token in enumerate(tokens):
            if not _VERBS.fullmatch(token.lower().strip("`'\"(")) or (i and tokens[i - 1].lower() in _HEDGES):
                continue
            near = len(_plain(" ".join(tokens[i + 1 : i + 1 + _REACH])))
            ahead = _plain(" ".join(tokens[i + 1 : i + 1 + _REACH + _LONGEST]))
            if any(_named(t, known) for t in tokens[i + 1 : i + 1 + _REACH]) or any(m.start() < near for p in patterns for m in p.finditer(ahead)):
                after = tokens[i + 1 :]
                regions.append((" ".join(after), {n for t in after if (n := _named(t, known))}))
                break
    return regions


def _named(token: str, known: Callable[[str], bool] | None) -> str:
    """The setting a word of the message spells, normalized (see ``_norm``), or "": a flag, or
    (with ``known``, which says whether a name is a variable the code reads) an upper-case or
    backquoted name that is one. An upper-case word alone may be a value (``use FULL_AND_PIECEWISE``)."""
    m = _ITEM.match(token.strip("('\""))
    if m is None:
        return ""
    spelled = m.group(0)
    if spelled.lstrip("`").startswith("-"):
        return _norm(spelled)
    name = re.split(r"[=\s]", spelled.strip("`"), maxsplit=1)[0]
    return _norm(name) if known is not None and known(name) else ""


def asks_for_another(message: str, subject: list[str], known: Callable[[str], bool] | None = None) -> bool:
    """Whether the message asks for a setting (a flag, a variable ``known`` says the code reads)
    that is not the fix's ``subject`` (its spellings) and nowhere asks for the subject, nor says
    the subject is replaced: the fix would then compete with what the message asks."""
    if "instead" in words(message).lower():  # ("pass `b` instead": the subject is what it replaces)
        return False
    regions = asked(message, subject, known)
    patterns = [_setting_pattern(name) for name in subject if name]
    if any(p.search(_plain(region)) for region, _ in regions for p in patterns):
        return False
    mine = {_norm(name) for name in subject if name}
    return any(named - mine - {""} for _, named in regions)


def retires(message: str) -> bool:
    """Whether the message says the setting is retired, ignored, replaced or given twice: a
    warning for which dropping the setting is what it asks."""
    return _RETIRED.search(words(message)) is not None


def explains(message: str) -> bool:
    """Whether the message says something in words (two or more), not just a value
    (``{self.tp}``, ``TP {self.tp}``): a developer's assertion on the code's own value."""
    return len(re.findall(r"[A-Za-z]{2,}", words(message))) >= 2
