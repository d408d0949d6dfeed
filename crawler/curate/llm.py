"""A small client for OpenAI-compatible chat endpoints (a vLLM server among them).

Python's own ``urllib``: the drafts need one JSON POST with a timeout, which it does, and the
pins hold no HTTP client errcat already uses at run time (httpx is not among them; adding it would
bring httpcore, h11, anyio and sniffio for nothing the standard library lacks here).

What the client promises:

* a timeout per request (connect and each read), and bounded retries with exponential backoff
  (honouring ``Retry-After``, capped) on what may pass: 429, 5xx, timeouts, refused connections,
  an answer that is not the JSON asked for;
* the API key comes from an environment variable and goes only into the Authorization header:
  no message, error or log line carries it, and redirects are never followed (urllib would
  replay the header to whatever host a redirect names);
* every failure is one :class:`LLMFailure` with a short reason, never a traceback.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: The environment variable read for the key unless ``--api-key-env`` names another.
KEY_ENV = "ERRCAT_LLM_API_KEY"
#: An answer larger than this is not a page of explanation.
MAX_ANSWER = 4_000_000
#: Longest wait between attempts, whatever Retry-After says.
MAX_WAIT = 60.0


class LLMFailure(Exception):
    """One request that failed for good (after its retries): ``reason`` is one line."""

    def __init__(self, reason: str, retryable: bool = False, rejected: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        #: the endpoint answered, but not with something that may be written
        self.rejected = rejected
        self.retry_after: float | None = None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        raise LLMFailure(f"HTTP {code}: the endpoint redirects; give its final URL (redirects are not followed, so the key stays put)")


_OPENER = urllib.request.build_opener(_NoRedirect)


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ask: ``base`` is the URL without ``/v1/...``."""

    base: str
    key: str | None = None
    timeout: float = 120.0
    retries: int = 3
    backoff: float = 2.0

    @classmethod
    def from_url(cls, url: str, *, key_env: str = KEY_ENV, **kw: Any) -> Endpoint:
        base = url.rstrip("/")
        if not re.match(r"^https?://[^\s/]+", base):
            raise LLMFailure("expected an http:// or https:// URL")
        base = re.sub(r"/v1$", "", base)
        return cls(base=base, key=os.environ.get(key_env) or None, **kw)

    def _request(self, path: str, body: dict[str, Any] | None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        req = urllib.request.Request(self.base + path, data=data, headers=headers, method="POST" if body is not None else "GET")
        try:
            with _OPENER.open(req, timeout=self.timeout) as resp:  # the URL is the user's own endpoint
                raw = resp.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as exc:
            failure = LLMFailure(f"HTTP {exc.code} {self._shown(str(exc.reason))}", retryable=exc.code == 429 or exc.code >= 500)
            failure.retry_after = _retry_after(exc.headers.get("Retry-After") if exc.headers else None)
            exc.close()  # an HTTPError is the open response: left to the collector, its socket outlives every retry
            raise failure from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise LLMFailure(f"no answer within {self.timeout:g}s", retryable=True) from None
            raise LLMFailure(f"cannot connect: {self._shown(str(reason))}", retryable=True) from None
        except TimeoutError:
            raise LLMFailure(f"no answer within {self.timeout:g}s", retryable=True) from None
        except (OSError, ValueError) as exc:  # a connection reset mid-answer, a malformed status line
            raise LLMFailure(f"the connection failed: {self._shown(str(exc))}", retryable=True) from None
        if len(raw) > MAX_ANSWER:
            raise LLMFailure(f"an answer over {MAX_ANSWER} bytes")
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):  # arrays nested past the decoder's recursion too
            raise LLMFailure("the endpoint's answer is not JSON", retryable=True) from None

    def _shown(self, text: str) -> str:
        """A server's or the network's words as one short line, without the key (a server may
        echo the request's headers back)."""
        return _plain(text.replace(self.key, "***") if self.key else text)

    def first_model(self) -> str:
        """The first model the server lists (``GET /v1/models``)."""
        listing = self.with_retries(lambda: self._request("/v1/models", None))
        try:
            model = listing["data"][0]["id"]
        except (KeyError, IndexError, TypeError):
            raise LLMFailure("/v1/models lists no model; pass --model") from None
        if not isinstance(model, str) or not model:
            raise LLMFailure("/v1/models lists no model; pass --model")
        return model

    def chat(self, model: str, system: str, prompt: str, check: Callable[[str], Any]) -> Any:
        """``check(content)`` of the model's answer: retried (with the transport's failures) when
        ``check`` raises a retryable LLMFailure, e.g. for an answer that is not the JSON asked for."""
        body = {"model": model, "temperature": 0.2,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}]}

        def once() -> Any:
            reply = self._request("/v1/chat/completions", body)
            try:
                content = reply["choices"][0]["message"]["content"]
            except (KeyError, IndexError, TypeError):
                raise LLMFailure("not an OpenAI-compatible answer (no choices[0].message.content)", retryable=True) from None
            if not isinstance(content, str):
                raise LLMFailure("not an OpenAI-compatible answer (content is not text)", retryable=True)
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
                    if self.key:  # an answer's words may quote what was sent
                        failure.reason = failure.reason.replace(self.key, "***")
                    if attempt > 1:
                        failure.reason += f" (after {attempt} attempts)"
                    raise
                wait = self.backoff * 2 ** (attempt - 1) * (1 + random.random() / 4)  # jitter: workers do not retry in step
                if failure.retry_after is not None:
                    wait = max(wait, failure.retry_after)
                time.sleep(min(wait, MAX_WAIT))


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _plain(text: str) -> str:
    return re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", " ", text)[:200]
