"""The tests' one local HTTP server (``helpers.serving``): quiet toward a client that hung up, and
done with every request when its block ends, so no test's captured stderr can hold what another
test's server said (a ``BrokenPipeError`` traceback of an earlier test's server once leaked into
``test_an_invalid_evidence_file_stops_the_crawl_with_file_and_line``'s)."""

from __future__ import annotations

import socket
import struct
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler

import pytest

from tests.helpers import serving


class _LateWriter(BaseHTTPRequestHandler):
    """Answers only once its client has hung up: every write meets a closed connection."""

    entered = threading.Event()
    hung_up = threading.Event()
    done = threading.Event()

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        try:
            type(self).entered.set()
            type(self).hung_up.wait(10)
            self.send_response(200)
            self.end_headers()
            for _ in range(64):
                self.wfile.write(b"x" * 65536)
        finally:
            type(self).done.set()


def test_a_client_that_hung_up_is_swallowed_and_its_request_ends_with_the_block(capsys):
    for event in (_LateWriter.entered, _LateWriter.hung_up, _LateWriter.done):
        event.clear()
    with serving(_LateWriter) as url:
        port = int(url.rsplit(":", 1)[1])
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(b"POST / HTTP/1.0\r\nContent-Length: 0\r\n\r\n")
        assert _LateWriter.entered.wait(10)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # (a reset: the next write fails)
        client.close()
        _LateWriter.hung_up.set()
    assert _LateWriter.done.is_set()  # the handler ended before ``serving`` returned
    assert capsys.readouterr().err == ""


class _Buggy(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        raise KeyError("a bug in the fake")


def test_an_error_of_the_fake_itself_fails_the_test_that_served_it_not_its_neighbours_stderr(capsys):
    with pytest.raises(AssertionError, match="KeyError: 'a bug in the fake'"):
        with serving(_Buggy) as url:
            with pytest.raises((urllib.error.URLError, ConnectionError)):
                urllib.request.urlopen(url, timeout=10)
    assert capsys.readouterr().err == ""
