"""The error surface beyond ``raise``: logged warnings and errors, HTTP error responses.

What users paste is often not a raised exception: a server log line (``WARNING 11-30 14:21:45
[api_server.py:123] Address already in use. Retrying with a new port.``) or the JSON body of an
error response (``{"error": {"message": ..., "type": "NotFoundError", "code": 404}}``). Both are
built in source like a raise's message, so they become entries the same way, of kind ``log`` and
``response``:

- **log**: ``<logger>.warning/warning_once/warn/error/exception/critical/fatal(msg, *args)``
  where ``<logger>`` is a name whose last part holds ``log`` (``logger``, ``_LOGGER``,
  ``self.log``), the ``logging`` module, or a ``getLogger(...)``/``init_logger(...)`` call.
  ``msg`` with args is read as logging reads it, printf-style; without args it is used as is
  (logging does not format a message without arguments). Info and below are not errors.
- **response**: a call the upstream names in its configuration (``responses``: the callee's
  name, its parameters, which one is the message, the error type and the status code, and their
  defaults); nothing here knows any upstream's names.

A log or response whose message has no literal text (``logger.exception(e)``,
``create_error_response(e)``) says nothing a user could match and is no entry: the exception it
carries is an entry of its own where it is raised.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Literal

from crawler.model.kinds import LOG, RESPONSE
from crawler.model.shapes import ExtractedResponseData

if TYPE_CHECKING:  # the extraction workers need no pydantic
    from crawler.model.records import LogLevel

#: Logger method -> (level, once). ``exception`` logs at ERROR with the traceback.
LOG_METHODS: dict[str, tuple[LogLevel, bool]] = {
    "warning": ("warning", False),
    "warn": ("warning", False),
    "warning_once": ("warning", True),
    "error": ("error", False),
    "error_once": ("error", True),
    "exception": ("exception", False),
    "critical": ("critical", False),
    "fatal": ("critical", False),
}
#: What the logging module prints for each level (the exception name of a log entry).
LEVEL_NAMES = {"warning": "WARNING", "error": "ERROR", "exception": "ERROR", "critical": "CRITICAL"}
_LOGGER_FACTORIES = frozenset({"getLogger", "init_logger", "get_logger"})
_STARLETTE_STATUS = re.compile(r"HTTP_([1-5]\d\d)(?:_|$)")


@dataclass(frozen=True)
class Settings:
    """The upstream's choice of entry kinds and its response builders, as plain data (workers
    receive it; its digest keys cached results)."""

    kinds: tuple[str, ...] = ("raise", "assert", "log")
    responses: tuple[dict[str, Any], ...] = ()
    #: The check macros the native trees' headers define (``native_macros.header_macros``): read
    #: from the snapshot before extraction, since every native file sees them.
    macros: tuple[Any, ...] = ()
    #: The most sites a file may give (``max_file_sites``): extraction stops at the next one, and
    #: the file's result says it is over the limit (``extract.limit``). None: no bound.
    max_sites: int | None = None
    by_call: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        self.by_call.update({r["call"]: r for r in self.responses})

    @classmethod
    def of(cls, upstream: Any, max_sites: int | None = None) -> Settings:
        return cls(tuple(upstream.kinds), tuple(r.model_dump(mode="json") for r in upstream.responses), max_sites=max_sites)

    def digest(self) -> str:
        payload = json.dumps(
            [
                list(self.kinds),
                list(self.responses),
                *([list(self.macros)] if self.macros else []),
                *([{"max_sites": self.max_sites}] if self.max_sites is not None else []),
            ],
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def words(self) -> tuple[str, ...]:
        """The words without which a function body holds no log or response site."""
        out: list[str] = []
        if LOG in self.kinds:
            out += LOG_METHODS
        if RESPONSE in self.kinds:
            out += self.by_call
        return tuple(out)


DEFAULT = Settings()


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def is_logger(node: ast.expr) -> bool:
    """A logger by name (``logger``, ``self._log``, ``logging``) or made on the spot."""
    if type(node) is ast.Call:
        return _last_name(node.func) in _LOGGER_FACTORIES
    name = _last_name(node)
    return name is not None and "log" in name.lower()


def log_call(call: ast.Call) -> tuple[LogLevel, bool] | None:
    """(level, once) when the call logs a warning or worse on a logger, else None."""
    func = call.func
    if type(func) is not ast.Attribute:
        return None
    method = LOG_METHODS.get(func.attr)
    if method is None or not is_logger(func.value):
        return None
    return method


def status_of(node: ast.expr | None) -> int | None:
    """A static HTTP status: ``404``, ``HTTPStatus.NOT_FOUND`` (``.value``), ``status.HTTP_404_NOT_FOUND``."""
    if node is None:
        return None
    if type(node) is ast.Attribute and node.attr == "value":
        node = node.value
    if type(node) is ast.Constant and type(node.value) is int:
        return node.value if 100 <= node.value <= 599 else None
    if type(node) is ast.Attribute:
        if _last_name(node.value) == "HTTPStatus" and node.attr in HTTPStatus.__members__:
            return int(HTTPStatus[node.attr].value)
        m = _STARLETTE_STATUS.match(node.attr)
        if m:
            return int(m.group(1))
    return None


def argument(call: ast.Call, builder: dict[str, Any], name: str | None) -> ast.expr | None | Literal[False]:
    """The argument given for parameter ``name`` (keyword, else by position in ``params``);
    None when not given, False when it cannot be told (``*args``, ``**kwargs`` before it)."""
    if name is None:
        return None
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    params = builder.get("params") or []
    if name in params:
        i = params.index(name)
        args = call.args
        for a in args[: i + 1]:
            if type(a) is ast.Starred:
                return False
        if i < len(args):
            return args[i]
    if any(kw.arg is None for kw in call.keywords):
        return False
    return None


def response_info(call: ast.Call, builder: dict[str, Any]) -> ExtractedResponseData:
    """``records.ResponseInfo`` as data: the static status code and error type, or the builder's
    defaults when the call leaves them out."""
    status = argument(call, builder, builder.get("status_code"))
    etype = argument(call, builder, builder.get("error_type"))
    if status is None:
        code = builder.get("default_status_code")
    else:
        code = status_of(status) if status is not False else None
    if etype is None:
        error_type = builder.get("default_error_type")
    elif etype is not False and type(etype) is ast.Constant and isinstance(etype.value, str):
        error_type = etype.value
    else:
        error_type = None
    return {"status_code": code, "error_type": error_type, "builder": builder["call"]}
