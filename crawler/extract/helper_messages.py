"""Messages a helper function of the module builds, read for the raises and logs that use them.

A mixin of the extractor (:class:`crawler.extract.visitor._Extractor`): what a call names
(``_helper_of``), which helper made a raised value (``_maker``), the arguments a call passes it
(``_call_arguments``, ``_argument_values``), the messages the helper's ``return``\\s construct
(``_made_pieces``) or return as text (``_returned_pieces``), and, at the end of the walk, those
messages put into the sites that wait for them (``_put_helper_messages``). The waits are
:mod:`crawler.extract.state`'s ``PendingMade`` and ``PendingPieces``.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from crawler.extract import raised
from crawler.extract.state import Arguments, Frame, FunctionNode, MadeReturn, PendingMade, PendingPieces, Piece
from crawler.extract.templates import (
    IMPORTED,
    Field,
    MessageBuilder,
    make_template,
    parts_from_template,
    piece_text,
    text_parts,
)
from crawler.model.kinds import RAISE
from crawler.model.shapes import ExtractedSite, TemplateData

_last_name = raised.last_name
_is_class_name = raised.is_class_name


class HelperMessages:
    """The extractor's reading of helpers' messages (see the module's doc)."""

    # (the extractor's state and methods these read; set and defined by ``_Extractor``)
    frame: Frame
    functions: dict[str, FunctionNode]
    walked: set[str]
    string_returns: dict[str, list[Piece]]
    exception_returns: dict[str, list[MadeReturn]]
    consts: dict[str, Any]
    builder: MessageBuilder
    sites: list[ExtractedSite]
    calls: list[dict[str, Any]]
    _pending_made: list[PendingMade]
    _pending_pieces: list[PendingPieces]

    seg: Callable[[ast.expr | ast.stmt], str]

    if TYPE_CHECKING:

        def _function_node(self, qualname: str) -> FunctionNode | None: ...
        def _dry_walk(self, qualname: str, node: FunctionNode) -> None: ...
        def _resolve(self, written: str, frame: Frame | None) -> str: ...
        def _callee_node(self, func: ast.expr) -> FunctionNode | None: ...

    def _helper_of(self, call: ast.Call) -> str | None:
        """The qualname of the same-module function (or method of this class) a call names; for
        an imported function (``check(...)``, ``checks.check(...)``), ``IMPORTED`` and its dotted
        name, for the catalogue's join (``catalogue.cross_module_join``)."""
        func = call.func
        imported = _imported_function(func, self.frame)
        if imported is not None:
            return IMPORTED + imported
        if type(func) is ast.Name and not _is_class_name(func.id) and func.id not in _BUILTINS:
            frame: Frame | None = self.frame  # a function defined in an enclosing one (defined before its use)
            while frame is not None and frame.kind == "function":
                nested = f"{frame.qualname}.<locals>.{func.id}"
                if nested in self.functions:
                    return nested
                frame = frame.parent
            return func.id
        if type(func) is ast.Attribute and not _is_class_name(func.attr):
            return self._own_method(func)
        return None

    def _helper_target(self, node: ast.expr | None) -> str | None:
        """The helper whose return value the message is: ``helper(...)`` or a name bound to it."""
        if node is None:
            return None
        if type(node) is ast.Call:
            return self._helper_of(node)
        if type(node) is ast.Name:
            return self.frame.calls.get(node.id)
        return None

    def _helper_message(self, site: ExtractedSite, node: ast.expr | None) -> None:
        helper = self._helper_target(node)
        if helper is not None:
            self._pending_pieces.append(PendingPieces(site, helper, site["template"]["fields"][0]))

    def _own_method(self, node: ast.Attribute) -> str | None:
        """The qualname of the method of the enclosing class ``self.<name>``/``cls.<name>`` names."""
        if type(node.value) is not ast.Name or node.value.id not in ("self", "cls"):
            return None
        owner: Frame | None = self.frame
        while owner is not None and owner.kind != "class":
            owner = owner.parent
        return None if owner is None else f"{owner.qualname}.{node.attr}"

    def _maker(self, exc: ast.expr, fn: FunctionNode | None) -> tuple[str | None, ast.Call | None]:
        """The function of this module (or method of this class) that made the value ``raise
        <name>`` raises: every value the function gives the name is a call of it (``wrapped =
        _wrap_error(url, e)``), with that call when there is one; None for anything else (an
        imported function's, which errcat does not read for exceptions)."""
        if type(exc) is not ast.Name or fn is None:
            return None, None
        values = raised.bound_values(fn, exc.id)
        calls = [v for v in values or () if type(v) is ast.Call and self._callee_node(v.func) is not None]
        if not values or len(calls) != len(values):
            return None, None
        helpers = {self._helper_of(v) for v in calls}
        helper = helpers.pop() if len(helpers) == 1 else None
        if helper is None or helper.startswith(IMPORTED):
            return None, None
        return helper, calls[0] if len(calls) == 1 else None

    def _call_arguments(self, call: ast.Call, earlier: bool) -> Arguments | None:
        """The message parts of a call's arguments that build a message (positional, by keyword;
        None for any other), read where the raise is; None for a call with ``*``/``**``.
        ``earlier``: the call is an earlier statement's (``err = _error("...")``), so a name it
        passes may hold another value by now: only what the call writes out is read."""
        if any(type(a) is ast.Starred for a in call.args) or any(kw.arg is None for kw in call.keywords):
            return None
        builder = self.builder

        def message(a: ast.expr) -> Piece | None:
            if earlier and type(a) in (ast.Name, ast.Attribute):
                return None
            return builder.parts(a) if builder.is_stringy(a) else None

        return [message(a) for a in call.args], {kw.arg: got for kw in call.keywords if kw.arg is not None and (got := message(kw.value)) is not None}

    def _argument_values(self, helper: str, arguments: Arguments | None, bound_method: bool) -> dict[str, Piece]:
        """The messages a call passes a helper's parameters (``_error(node, "Unsupported
        expression")``: ``reason`` -> its parts), but a parameter the helper gives another value."""
        node: Any = self._function_node(helper) if "<" not in helper else self.functions.get(helper)
        if node is None or arguments is None:
            return {}
        args = node.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        static = any(_last_name(d) == "staticmethod" for d in node.decorator_list)
        if bound_method and "." in helper and not static:
            positional = positional[1:]  # ``self.helper(...)``, ``cls.helper(...)``
        given, by_keyword = arguments
        values = dict(zip(positional, given, strict=False))
        keywords = {a.arg for a in (*args.args, *args.kwonlyargs)}
        values.update((k, v) for k, v in by_keyword.items() if k in keywords)
        return {k: v for k, v in values.items() if v is not None and raised.assigned(node, k) == []}

    def _made_pieces(self, helper: str, classes: str | None, frame: Frame) -> tuple[list[tuple[list[Piece], dict[str, Any] | None]], bool] | None:
        """The exceptions of class ``classes`` (as written where the raise is; None: of any class)
        a helper's ``return``\\s construct: (their message's pieces, the call's args record or
        None) each, and whether a piece has text (else the helper adds nothing to what it was
        handed, unless a class's ``__init__`` does); None when there is none (a helper that
        returns what it was handed, or another class, says nothing of this raise)."""
        if helper not in self.walked and "<" not in helper:
            node = self._function_node(helper)
            if node is not None:
                self._dry_walk(helper, node)
        want = None if classes is None else self._resolve(classes, frame)
        made: list[tuple[list[Piece], dict[str, Any] | None]] = []
        for written, template, args, where in self.exception_returns.get(helper, ()):
            if want is not None and self._resolve(written, where) != want:
                continue
            alternatives = template["alternatives"]
            made.append(([text_parts(a) for a in alternatives] if alternatives else [parts_from_template(template)], args))
        if not made:
            return None
        return made, any(_piece_says(piece) for pieces, _ in made for piece in pieces)

    def _returned_pieces(self, qualname: str) -> list[Piece] | None:
        """What a helper returns: the messages its walk recorded, else read from its returns now
        (a method with no raise is not walked); None without one with literal text."""
        pieces = self.string_returns.get(qualname)
        if pieces is None:
            node = self.functions.get(qualname)
            if node is None:
                return None
            builder = MessageBuilder(self.seg, lambda k: self.consts.get(k))
            pieces = []
            for stmt in ast.walk(node):
                if type(stmt) is ast.Return and stmt.value is not None and builder.is_stringy(stmt.value):
                    pieces = add_pieces(pieces, [builder.parts(stmt.value)])
        if not any(isinstance(p, str) and any(ch.isalnum() for ch in p) for piece in pieces for p in piece):
            return None
        return pieces

    def _put_helper_messages(self) -> tuple[set[int], list[tuple[ExtractedSite, dict[str, Any]]]]:
        """Give each waiting site the messages its helper makes or returns; return the sites to
        drop (a log or response whose helper says nothing, by ``id``) and what the catalogue's
        join reads for the rest (messages and lists imported functions return)."""
        made: set[int] = set()  # the sites given the messages a helper constructs (not its argument's)
        for site, helper, frame, classes, raised_as, call in list(self._pending_made):
            got = self._made_pieces(helper, classes, frame)
            if got is None:
                continue
            constructed, says = got
            values = self._argument_values(helper, *call) if call is not None else {}
            held: list[Piece] = []
            records: list[dict[str, Any]] = []
            for own, args in constructed:
                own = [_fill_fields(piece, values) for piece in own]
                held = add_pieces(held, own)
                records.append(
                    {
                        "pieces": [piece_text(piece) for piece in own],
                        "args": None if args is None else [_fill_template_fields(t, values) for t in args["args"]],
                        "kwargs": None if args is None else {k: _fill_template_fields(t, values) for k, t in args["kwargs"].items()},
                    }
                )
            if says:
                name = raised_as if raised_as.isidentifier() else None
                site["template"] = make_template([Field(raised_as, name, (None, held))], "assembled")
                made.add(id(site))
            if classes is not None and any(r["args"] is not None for r in records):
                # a class of the repo may build its message in ``__init__``: the catalogue puts
                # each construction's arguments in (``hierarchy.apply_init_templates``)
                at = next(i for i, s in enumerate(self.sites) if s is site)
                self.calls.append({"site": at, "made": records, "field": raised_as})
        dropped = set()
        refs: list[tuple[ExtractedSite, dict[str, Any]]] = []
        for site, helper, fld in self._pending_pieces:
            if id(site) in made:
                continue
            pieces = self._returned_pieces(helper)
            if pieces is not None:
                site["template"] = make_template([Field(fld["expr"], fld["name"], (None, pieces))], "assembled")
            elif helper.startswith(IMPORTED):  # the join reads what the imported function returns
                refs.append((site, {"target": helper[1:], "field": fld}))
            elif site["kind"] != RAISE:  # a log or response with nothing to match: no entry
                dropped.add(id(site))
        return dropped, refs


#: Pieces kept per list of messages: a list built in a loop from many branches stays bounded.
MAX_PIECES = 32


def _piece_says(piece: Piece) -> bool:
    return any(isinstance(p, str) and any(ch.isalnum() for ch in p) for p in piece)


def _fill_fields(piece: Piece, values: dict[str, Piece]) -> Piece:
    """A piece with each field that is one of ``values``' names as written (``{reason}``; not
    ``{reason!r}``, no longer the text passed) replaced by the parts given for it."""
    if not values:
        return piece
    out: Piece = []
    for p in piece:
        if isinstance(p, Field) and p.alts is None and p.expr == p.name and p.name in values:
            out += values[p.name]
        else:
            out.append(p)
    return out


def _fill_template_fields(template: TemplateData, values: dict[str, Piece]) -> TemplateData:
    """:func:`_fill_fields` for an argument's template (a call's args record)."""
    if not values or not any(f["name"] in values and f["expr"] == f["name"] for f in template["fields"]):
        return template
    return make_template(_fill_fields(parts_from_template(template), values), template["form"])


def add_pieces(held: list[Piece], added: list[Piece]) -> list[Piece]:
    out = list(held)
    for parts in added:
        if parts not in out and len(out) < MAX_PIECES:
            out.append(parts)
    return out


_BUILTINS = frozenset(vars(builtins))  # str(e), repr(x), format(...): no helper of the module


def _imported_function(func: ast.expr, frame: Frame | None) -> str | None:
    """The dotted name of the function a call's callee names through an import of an enclosing
    scope (``check`` from ``from pkg.checks import check``, ``checks.check``), or None."""
    if type(func) is ast.Name:
        head, rest = func.id, ""
    elif type(func) is ast.Attribute and type(func.value) is ast.Name:
        head, rest = func.value.id, "." + func.attr
    else:
        return None
    if _is_class_name(_last_name(func)):
        return None
    while frame is not None:
        if head in frame.imports:
            return frame.imports[head] + rest
        frame = frame.parent
    return None
