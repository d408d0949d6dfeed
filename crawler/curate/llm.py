"""A small client for OpenAI-compatible chat endpoints (a vLLM server among them).

Python's own ``urllib``: the drafts need one JSON POST with a timeout, which it does, and the
pins hold no HTTP client errcat already uses at run time (httpx is not among them; adding it would
bring httpcore, h11, anyio and sniffio for nothing the standard library lacks here).

What the client promises:

* each attempt ends within its timeout, all of it: connecting, the status line and headers and
  the body (a watchdog shuts the connection down at the deadline, so a server that drips a byte
  a second holds an attempt no longer than one that says nothing); bounded retries with
  exponential backoff (honouring ``Retry-After``, capped) on what may pass: 429, 5xx, timeouts,
  refused connections, an answer that is not the JSON asked for;
* the API key comes from an environment variable and goes only into the Authorization header;
  redirects are never followed (urllib would replay the header to whatever host a redirect names);
* an answer that quotes the key, in any form ``curate.secret`` knows (any case, spaced out,
  reversed, ROT13, escaped, percent-encoded, hex, base64 at any alignment), is refused before its
  content reaches the caller's check, and so before anything is written; so is a model name that
  quotes it;
* a :class:`Budget` bounds a whole run, shared by every request of it: no attempt starts once
  its seconds are gone (an attempt's timeout is cut to what is left) or once the tokens its
  answers reported (``usage.total_tokens``; the characters over four where a server reports
  none) reach its cap, and ``max_tokens`` caps each answer; what is left undone is an
  :class:`LLMFailure` with ``unstarted`` set, not an error (a scheduled run picks it up next time);
* every failure is one :class:`LLMFailure` with a short reason, never a traceback, and every
  failure leaves through :meth:`Endpoint.with_retries`, the one place its reason is masked
  (:meth:`Endpoint.masked`): the caller's own check (a validation error, invented names that
  quote the answer) included, so no message, error or log line carries the key.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crawler.curate.secret import KeyScreen

#: The environment variable read for the key unless ``--api-key-env`` names another.
KEY_ENV = "ERRCAT_LLM_API_KEY"
#: An answer larger than this is not a page of explanation.
MAX_ANSWER = 4_000_000
#: Longest wait between attempts, whatever Retry-After says.
MAX_WAIT = 60.0
#: The longest reason a failure gives (after masking: a key is never cut in two).
MAX_REASON = 400


class LLMFailure(Exception):
    """One request that failed for good (after its retries): ``reason`` is one line."""

    def __init__(self, reason: str, retryable: bool = False, rejected: bool = False, unstarted: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        #: the endpoint answered, but not with something that may be written
        self.rejected = rejected
        #: not asked (again): the run's budget was spent first
        self.unstarted = unstarted
        self.retry_after: float | None = None


class Budget:
    """What one run may spend, across its threads: ``seconds`` of wall time from its creation and
    ``tokens`` of answers (as the server counts them); None is no bound."""

    def __init__(self, seconds: float | None = None, tokens: int | None = None) -> None:
        self.seconds = seconds
        self.tokens = tokens
        self.started = time.monotonic()
        self.spent = 0
        self.lock = threading.Lock()

    def left(self) -> float | None:
        """Seconds left (None: unbounded); LLMFailure(unstarted) when none are, or no tokens."""
        with self.lock:
            if self.tokens is not None and self.spent >= self.tokens:
                raise LLMFailure(f"not asked: the run's token budget ({self.tokens:,}) is spent", unstarted=True)
        if self.seconds is None:
            return None
        left = self.seconds - (time.monotonic() - self.started)
        if left <= 0:
            raise LLMFailure(f"not asked: the run's time budget ({self.seconds:g}s) is spent", unstarted=True)
        return left

    def remaining(self) -> float:
        """Seconds left, without raising (infinite when unbounded, 0 when spent)."""
        try:
            left = self.left()
        except LLMFailure:
            return 0.0
        return float("inf") if left is None else left

    def charge(self, reply: Any, sent: int) -> None:
        """Count an answer's tokens: its ``usage.total_tokens``, else the characters sent and
        received over four (a bound a server that reports nothing is still held to)."""
        usage = reply.get("usage") if isinstance(reply, dict) else None
        total = usage.get("total_tokens") if isinstance(usage, dict) else None
        if not isinstance(total, int) or isinstance(total, bool) or total < 0:
            total = (sent + len(json.dumps(reply))) // 4
        with self.lock:
            self.spent += total


class _Deadline:
    """One attempt's deadline: at ``expire`` every socket it watches is shut down (through a
    duplicate of its descriptor, ours to close, so a socket closed meanwhile is never confused
    with another that took its number), which ends any read blocked on it."""

    def __init__(self, seconds: float) -> None:
        self.lock = threading.Lock()
        self.guards: list[socket.socket] = []
        self.expired = False
        self.done = False
        self.timer = threading.Timer(seconds, self.expire)
        self.timer.daemon = True

    def watch(self, sock: socket.socket) -> socket.socket:
        with self.lock:
            guard = sock.dup()
            if self.done:
                guard.close()
                return sock
            self.guards.append(guard)
            if self.expired:
                _shut(guard)
        return sock

    def expire(self) -> None:
        with self.lock:
            if self.done:
                return
            self.expired = True
            for guard in self.guards:
                _shut(guard)

    def finish(self) -> None:
        self.timer.cancel()
        with self.lock:
            self.done = True
            for guard in self.guards:
                guard.close()
            self.guards = []


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # not connected (yet, or any more)
        pass


class _Request(urllib.request.Request):
    deadline: _Deadline | None = None


def _watched(http_class: Any, req: Any) -> Callable[..., Any]:
    """``http_class`` whose sockets ``req``'s deadline watches from the moment they exist (before
    a TLS handshake, which may drip too)."""

    def connection(host: str, **kw: Any) -> Any:
        conn = http_class(host, **kw)
        deadline = getattr(req, "deadline", None)
        if deadline is not None:
            create = conn._create_connection
            conn._create_connection = lambda *a, **k: deadline.watch(create(*a, **k))
        return conn

    return connection


class _HTTP(urllib.request.HTTPHandler):
    def do_open(self, http_class: Any, req: Any, **kw: Any) -> Any:
        return super().do_open(_watched(http_class, req), req, **kw)


class _HTTPS(urllib.request.HTTPSHandler):
    def do_open(self, http_class: Any, req: Any, **kw: Any) -> Any:
        return super().do_open(_watched(http_class, req), req, **kw)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        raise LLMFailure(f"HTTP {code}: the endpoint redirects; give its final URL (redirects are not followed, so the key stays put)")


_OPENER = urllib.request.build_opener(_NoRedirect, _HTTP, _HTTPS)


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ask: ``base`` is the URL without ``/v1/...``; ``timeout`` bounds each
    attempt, all of it."""

    base: str
    key: str | None = None
    timeout: float = 120.0
    retries: int = 3
    backoff: float = 2.0
    #: each answer's cap (``max_tokens`` in the request), None for the server's own
    max_tokens: int | None = None
    budget: Budget | None = field(default=None, compare=False)
    screen: KeyScreen = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "screen", KeyScreen(self.key))

    @classmethod
    def from_url(cls, url: str, *, key_env: str = KEY_ENV, **kw: Any) -> Endpoint:
        base = url.rstrip("/")
        if not re.match(r"^https?://[^\s/]+", base):
            raise LLMFailure("expected an http:// or https:// URL")
        base = re.sub(r"/v1$", "", base)
        return cls(base=base, key=os.environ.get(key_env) or None, **kw)

    def _request(self, path: str, body: dict[str, Any] | None) -> Any:
        timeout = self.timeout
        left = self.budget.left() if self.budget is not None else None
        if left is not None:
            timeout = min(timeout, left)
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        req = _Request(self.base + path, data=data, headers=headers, method="POST" if body is not None else "GET")
        req.deadline = deadline = _Deadline(timeout)
        late = LLMFailure(f"no answer within {timeout:g}s", retryable=True)
        deadline.timer.start()
        try:
            with _OPENER.open(req, timeout=timeout) as resp:  # the URL is the user's own endpoint
                raw = resp.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as exc:
            failure = LLMFailure(f"HTTP {exc.code} {self.masked(str(exc.reason))}", retryable=exc.code == 429 or exc.code >= 500)
            failure.retry_after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            exc.close()  # an HTTPError is the open response: left to the collector, its socket outlives every retry
            raise failure from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError) or deadline.expired:
                raise late from None
            raise LLMFailure(f"cannot connect: {self.masked(str(reason))}", retryable=True) from None
        except TimeoutError:
            raise late from None
        except (OSError, ValueError, http.client.HTTPException) as exc:  # a reset mid-answer, a malformed status line
            if deadline.expired:
                raise late from None
            raise LLMFailure(f"the connection failed: {self.masked(str(exc))}", retryable=True) from None
        finally:
            deadline.finish()
        if deadline.expired:  # shut down mid-body: what was read is a part of the answer
            raise late
        if len(raw) > MAX_ANSWER:
            raise LLMFailure(f"an answer over {MAX_ANSWER} bytes")
        try:
            reply = json.loads(raw)
        except (ValueError, RecursionError):  # arrays nested past the decoder's recursion too
            raise LLMFailure("the endpoint's answer is not JSON", retryable=True) from None
        if self.budget is not None and body is not None:
            self.budget.charge(reply, len(data or b""))
        return reply

    def masked(self, text: str) -> str:
        """Words that may quote what was sent or answered (a server's, the network's, a check's)
        as one short line without the key, in any form :class:`KeyScreen` knows."""
        return _plain(self.screen.mask(text))

    def quotes_key(self, text: str) -> bool:
        """Whether ``text`` (an answer, or what is about to be written) holds the key."""
        return self.screen.holds(text)

    def first_model(self) -> str:
        """The first model the server lists (``GET /v1/models``)."""
        listing = self.with_retries(lambda: self._request("/v1/models", None))
        try:
            model = listing["data"][0]["id"]
        except (KeyError, IndexError, TypeError):
            raise LLMFailure("/v1/models lists no model; pass --model") from None
        if not isinstance(model, str) or not model:
            raise LLMFailure("/v1/models lists no model; pass --model")
        if self.quotes_key(model):  # it would be written into every draft, as review.model
            raise LLMFailure("/v1/models names a model that quotes the API key; pass --model")
        return model

    def chat(self, model: str, system: str, prompt: str, check: Callable[[str], Any]) -> Any:
        """``check(content)`` of the model's answer: retried (with the transport's failures) when
        ``check`` raises a retryable LLMFailure, e.g. for an answer that is not the JSON asked for.
        An answer that quotes the key never reaches ``check``; what ``check`` raises is masked
        like every other failure (:meth:`with_retries`)."""
        body: dict[str, Any] = {"model": model, "temperature": 0.2, "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}]}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens

        def once() -> Any:
            reply = self._request("/v1/chat/completions", body)
            try:
                content = reply["choices"][0]["message"]["content"]
            except (KeyError, IndexError, TypeError):
                raise LLMFailure("not an OpenAI-compatible answer (no choices[0].message.content)", retryable=True) from None
            if not isinstance(content, str):
                raise LLMFailure("not an OpenAI-compatible answer (content is not text)", retryable=True)
            if self.quotes_key(content):  # a proxy, or a model the crawled text in its prompt talked round
                raise LLMFailure("the answer quotes the API key; nothing of it is written", rejected=True)
            return check(content)

        return self.with_retries(once)

    def with_retries(self, call: Callable[[], Any]) -> Any:
        attempt = 0
        while True:
            try:
                return call()
            except LLMFailure as failure:
                attempt += 1
                if not failure.retryable or attempt > self.retries:
                    # the one place a failure's words are masked: a server's, the network's and
                    # the caller's check's (which may quote the answer) all leave through here
                    failure.reason = self.masked(failure.reason)
                    if attempt > 1:
                        failure.reason += f" (after {attempt} attempts)"
                    raise
                wait = self.backoff * 2 ** (attempt - 1) * (1 + random.random() / 4)  # jitter: workers do not retry in step
                if failure.retry_after is not None:
                    wait = max(wait, failure.retry_after)
                wait = min(wait, MAX_WAIT)
                if self.budget is not None and wait >= self.budget.remaining():  # no time for the next attempt: this one's failure stands
                    failure.reason = self.masked(failure.reason) + f" (after {attempt} attempts; the time budget ends before another)"
                    raise
                time.sleep(wait)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _plain(text: str) -> str:
    return re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", " ", text)[:MAX_REASON]
