"""A model's answer or an endpoint's listing nested past the interpreter's recursion limit is a
refused answer, never a traceback (``json.loads`` recurses)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest

from crawler.curate.draft_all import parse_sections
from crawler.curate.llm import Endpoint, LLMFailure
from tests.helpers import serving

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_models_answer_nested_too_deeply_is_a_rejected_answer():
    with pytest.raises(LLMFailure, match="not the requested JSON object") as info:
        parse_sections(f'{{"what_it_means": {DEEP}}}')
    assert info.value.retryable


@pytest.mark.slow
def test_an_endpoint_answering_json_nested_too_deeply_is_a_failed_request():
    class Deep(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = f'{{"data": {DEEP}}}'.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serving(Deep) as url:
        endpoint = Endpoint.from_url(url, timeout=60, retries=0)
        with pytest.raises(LLMFailure, match="not JSON"):
            endpoint.first_model()
