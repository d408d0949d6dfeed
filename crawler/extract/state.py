"""The state the extractor (:mod:`crawler.extract.visitor`) keeps while it walks one file, as named types.

A walk meets a site before it can say everything about it: a class may be defined below the
raise that names it, a helper below the call that builds the message. What waits for the end of
the walk is kept here, one named record per kind of wait, and read by ``_Extractor._finish``
(names) and :mod:`crawler.extract.helper_messages` (messages a helper makes or returns).
"""

from __future__ import annotations

import ast
from typing import Any, NamedTuple, TypeAlias

from crawler.extract.templates import Field
from crawler.model.shapes import ExtractedSite, TemplateData, TemplateFieldData

#: A message as a list of literal text and fields (``templates.text_parts``).
Piece: TypeAlias = list[str | Field]
#: What a local name holds as the walk sees it: ``("str", parts)`` a message, ``("list", pieces)``
#: a list of messages, ``("exc", made)`` an exception constructed here; None: a value errcat cannot read.
Held: TypeAlias = tuple[str, Any] | None
#: The arguments of a call as messages (positional, by keyword), read where a raise is.
Arguments: TypeAlias = tuple[list[Piece | None], dict[str, Piece]]
FunctionNode: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


class Made(NamedTuple):
    """An exception a call constructs (``_Extractor._from_call``): the class as written, the
    message's template and the call's arguments as templates (None for a builtin's)."""

    written: str
    template: TemplateData
    args: dict[str, Any] | None


class ScopeFacts(NamedTuple):
    """What every site of one function shares: its decorators, its docstring's first paragraph,
    and the lines it spans from its first decorator."""

    decorators: list[str]
    docstring: str | None
    first: int
    last: int


class Frame:
    """One scope of the walk: the module, a class or a function."""

    __slots__ = ("kind", "qualname", "node", "env", "imports", "parent", "cls", "handlers", "facts", "calls", "text", "stub")

    def __init__(self, kind: str, qualname: str, node: Any, parent: Frame | None, cls: dict[str, Any] | None = None):
        self.kind = kind  # module | class | function
        self.qualname = qualname
        self.node = node
        self.parent = parent
        self.env: dict[str, Held] = {}
        self.imports: dict[str, str] = {}
        self.cls = cls  # for a class frame: its record; for __init__: the class record
        self.handlers: list[str | None] = []  # enclosing except-handler names (function-local)
        self.facts: ScopeFacts | None = None
        #: the function's text, for what its checks read (``guard_reads``), made at its first site
        self.text: Any = None
        # name -> the helper whose return value it was last given (``msg = self._why()``): kept
        # apart from ``env``, whose branch merge would let it displace a message another branch sets
        self.calls: dict[str, str] = {}
        #: for a function or class defined where an optional import failed (in ``except ImportError:``,
        #: or in the branch of ``if not HAS_X:`` / ``if has_x(): ... else:``), or inside one: what
        #: failed (``["import", "flash_attn"]``, ``["probe", "HAS_TRITON"]``; ``guard_reads.STUB``)
        self.stub: list[str] | None = parent.stub if parent is not None else None


class PendingName(NamedTuple):
    """A name resolved at the end, in the frame it was written in: a class record's bases, a
    response's builder, a raise's or an assert's exception."""

    item: dict[str, Any]  # the class record or the site (``ExtractedSite``)
    written: Any  # the bases as written (list[str]) or the name as written (str)
    frame: Frame


class PendingPieces(NamedTuple):
    """A site whose message is what a helper returns (``msg = self._why()`` ... ``raise X(msg)``)."""

    site: ExtractedSite
    helper: str  # its qualname, or ``templates.IMPORTED`` and a dotted name
    field: TemplateFieldData  # the template's one field, which the helper's messages replace


class CallMade(NamedTuple):
    """The call that made a raised value: its arguments as messages, and whether the callee is a
    method called on its object (``self.helper(...)``: the first parameter is not passed)."""

    arguments: Arguments | None
    bound_method: bool


class PendingMade(NamedTuple):
    """A raise of an exception a helper of the module constructs (``raise _error(...)``, or
    ``err = _error(...)`` ... ``raise err``): its message is one of those the helper's ``return``\\s make."""

    site: ExtractedSite
    helper: str
    frame: Frame
    classes: str | None  # the class as written where the raise is; None: of any class
    raised_as: str  # the raised expression's text
    call: CallMade | None


class MadeReturn(NamedTuple):
    """An exception a function's ``return`` constructs, and the frame it was written in."""

    written: str
    template: TemplateData
    args: dict[str, Any] | None
    frame: Frame
