"""Log calls and response builders as sites (see :mod:`crawler.extract.surface` for what counts).

A mixin of the extractor (:class:`crawler.extract.visitor._Extractor`): a statement that holds
one of their words (``_surface_sites``) gives a ``log`` site per log call at warning and above and
a ``response`` site per call of one of the upstream's response builders.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from crawler.extract import assembled, raised, surface
from crawler.extract.codefacts import nodes_under, on_lines
from crawler.extract.ids import has_literal_text, normalize_template
from crawler.extract.state import Frame, PendingName, PendingPieces
from crawler.extract.templates import MarkedTemplate, MessageBuilder, make_template
from crawler.model.kinds import LOG, RESPONSE
from crawler.model.shapes import ExtractedSite, TemplateData

if TYPE_CHECKING:  # the extraction workers need no pydantic
    from crawler.model.records import LogLevel

_last_name = raised.last_name
_EXC_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


class SurfaceSites:
    """The extractor's log and response sites (see the module's doc)."""

    # (the extractor's state and methods these read; set and defined by ``_Extractor``)
    frame: Frame
    kinds: frozenset[str]
    settings: surface.Settings
    builder: MessageBuilder
    guards: list[str]
    _surface: list[int]
    _surface_all: bool
    _pending: list[PendingName]
    _pending_pieces: list[PendingPieces]

    seg: Callable[[ast.expr | ast.stmt], str]

    if TYPE_CHECKING:

        def _helper_target(self, node: ast.expr | None) -> str | None: ...
        def _site(
            self,
            node: ast.stmt | ast.expr,
            kind: str,
            written: str,
            template: TemplateData,
            cause: str | None,
            guards: list[str],
            resolve: bool = True,
            pending: bool = False,
        ) -> ExtractedSite: ...

    def _surface_sites(self, stmt: ast.stmt) -> None:
        """The log calls and response builders in a statement that holds one of their words."""
        if not self._surface_all:
            surf = self._surface
            if not surf:
                return
            if not on_lines(surf, stmt.lineno, stmt.end_lineno or stmt.lineno):
                return
        for node in nodes_under(stmt, ast.Call):  # (``ast.walk``'s order, at a fraction of its cost)
            if LOG in self.kinds:
                logged = surface.log_call(node)
                if logged is not None:
                    self._log_site(node, *logged)
                    continue
            builder = self.settings.by_call.get(_last_name(node.func) or "") if RESPONSE in self.kinds else None
            if builder is not None:
                self._response_site(node, builder)

    def _log_site(self, call: ast.Call, level: LogLevel, once: bool) -> None:
        args = call.args
        if not args or type(args[0]) is ast.Starred:
            return
        first, rest = args[0], args[1:]
        parts = None
        if rest and type(first) is ast.Constant and isinstance(first.value, str) and not any(type(a) is ast.Starred for a in rest):
            value = rest[0] if len(rest) == 1 else ast.Tuple(elts=list(rest), ctx=ast.Load())
            parts = self.builder._percent(first.value, value)
            form = "percent"
        if parts is None:
            form, parts = self.builder.build(first)
        template = make_template(parts, form)
        helper = self._helper_target(first) if template["opaque"] and len(template["fields"]) == 1 else None
        if not has_text_to_match(template) and helper is None and not isinstance(template, MarkedTemplate):
            return
        name = surface.LEVEL_NAMES[level]
        site = self._site(call, "log", name, template, None, list(self.guards), resolve=False, pending=helper is not None)
        site["exception_qualname"] = f"logging.{name}"
        func = call.func
        assert type(func) is ast.Attribute  # (``surface.log_call`` takes only ``<logger>.<method>(...)``)
        site["log"] = {"level": level, "logger": self.seg(func.value), "once": once}
        if helper is not None:
            self._pending_pieces.append(PendingPieces(site, helper, template["fields"][0]))

    def _response_site(self, call: ast.Call, builder: dict[str, Any]) -> None:
        value = surface.argument(call, builder, builder.get("message"))
        if value is None or value is False:
            return
        form, parts = self.builder.build(value)
        template = make_template(parts, form)
        helper = self._helper_target(value) if template["opaque"] and len(template["fields"]) == 1 else None
        if not has_text_to_match(template) and helper is None and not isinstance(template, MarkedTemplate):
            return
        info = surface.response_info(call, builder)
        etype = info["error_type"]
        name = etype if etype is not None and _EXC_NAME.fullmatch(etype) else "ErrorResponse"
        site = self._site(call, "response", name, template, None, list(self.guards), resolve=False, pending=helper is not None)
        site["response"] = info
        self._pending.append(PendingName(cast(dict[str, Any], site), self.seg(call.func), self.frame))
        if helper is not None:
            self._pending_pieces.append(PendingPieces(site, helper, template["fields"][0]))


def has_text_to_match(template: Mapping[str, Any]) -> bool:
    """A message with literal text to match (letters or digits outside its fields)."""
    if template["opaque"]:
        return assembled.has_text_to_match_in_alternatives(template)
    return has_literal_text(normalize_template(template["text"], template["fields"]))
