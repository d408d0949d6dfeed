"""Every example of issue #19 found by ``errcat match`` in the form a user sees it: a JSON error
body of the server, a log line with its prefix, ``RuntimeError: ...`` from a native check, and
messages assembled before the raise (in the function, from a helper of the module, from a
function another module exports). One fixture repository, written the way vLLM writes each
(not vLLM's code), crawled and matched through the real CLI."""

from __future__ import annotations

import pytest

from tests.extract.test_native import ATTN_CU, NESTED_CPP, TORCH_UTILS_H
from tests.extract.test_surface import TOML as SURFACE_TOML
from tests.helpers import best_match, crawl_with_config

SERVING = """
import logging
from http import HTTPStatus

from srv.checks import validate_configuration

logger = logging.getLogger(__name__)


class Serving:
    def cancel(self, response_id, background):
        if not background:
            return self.create_error_response(err_type="invalid_request_error",
                                              message="Cannot cancel a synchronous response.")
        return self.create_error_response(message=f"Response with id '{response_id}' not found.",
                                          err_type="NotFoundError", status_code=HTTPStatus.NOT_FOUND)

    def generate(self, sampling_params, max_num_seqs):
        if sampling_params.n > max_num_seqs:
            return self.create_error_response(
                f"sampling_params.n must be at most the server's max_num_seqs ({max_num_seqs}), "
                f"got {sampling_params.n}.")

    def bind(self, port):
        logger.warning("Address already in use. Retrying with a new port.")

    def prompt(self, num_tokens, limit):
        logger.error("Input prompt (%d tokens) is too long and exceeds limit of %d", num_tokens, limit)

    def transfer(self, failure_type, context):
        logger.error("NIXL transfer failure: %s | Context: %s", failure_type, context)


def select_backend(cfg):
    invalid_reasons = validate_configuration(cfg)
    if invalid_reasons:
        raise ValueError(f"Selected backend is not valid for this configuration. Reason: {', '.join(invalid_reasons)}")


def check_items(items):
    errors = []
    for item in items:
        if item < 0:
            errors.append(f"item {item} is negative")
    raise ValueError("\\n".join(errors))


def _why(cfg):
    if cfg.tp > 8:
        return f"tensor parallel size {cfg.tp} is too large"
    return "no devices found"


def start(cfg):
    raise RuntimeError(_why(cfg))
"""

CHECKS = """
def validate_configuration(cfg):
    invalid_reasons = []
    if not cfg.head_size_ok:
        invalid_reasons.append("head_size not supported")
    if cfg.dcp:
        invalid_reasons.append("DCP not supported")
    return invalid_reasons
"""

#: test_surface's upstream (its response builder) with the native trees read too
TOML = SURFACE_TOML.replace('kinds = ["raise", "assert", "log", "response"]', 'kinds = ["raise", "assert", "log", "response", "native"]\nnative = ["csrc/**"]')
assert "native = " in TOML

FILES = {
    "srv/__init__.py": "",
    "srv/serving.py": SERVING,
    "srv/checks.py": CHECKS,
    "csrc/attention/attn.cu": ATTN_CU,
    "csrc/torch_utils.h": TORCH_UTILS_H,
    "csrc/cpu/conv.cpp": NESTED_CPP,
}

LOG = "(APIServer pid=4021) {level} 11-30 14:21:45 [serving.py:20] {message}"
EXAMPLES = {
    # HTTP error responses, as the OpenAI-compatible server's JSON body
    '{"error": {"message": "Cannot cancel a synchronous response.", "type": "invalid_request_error", "param": null, '
    '"code": 400}}': "Cannot cancel a synchronous response.",
    '{"object": "error", "message": "Response with id \'resp_67ab\' not found.", "type": "NotFoundError", "param": null, '
    '"code": 404}': "Response with id '{response_id}' not found.",
    '{"error": {"message": "sampling_params.n must be at most the server\'s max_num_seqs (256), got 512.", '
    '"type": "BadRequestError", "param": null, "code": 400}}': "sampling_params.n must be at most the server's max_num_seqs ({max_num_seqs}), got {sampling_params.n}.",
    # logged warnings and errors, with the logger's prefix
    LOG.format(level="WARNING", message="Address already in use. Retrying with a new port."): "Address already in use. Retrying with a new port.",
    LOG.format(
        level="ERROR", message="Input prompt (9000 tokens) is too long and exceeds limit of 8192"
    ): "Input prompt ({num_tokens} tokens) is too long and exceeds limit of {limit}",
    LOG.format(
        level="ERROR", message="NIXL transfer failure: handshake_failed | Context: {'request_id': 'r1'}"
    ): "NIXL transfer failure: {failure_type} | Context: {context}",
    # assembled messages: a list another module builds, a list built here, a helper's message
    "ValueError: Selected backend is not valid for this configuration. Reason: DCP not supported": "Selected backend is not valid for this configuration. Reason: {', '.join(invalid_reasons)}",
    'Traceback (most recent call last):\n  File "serving.py", line 50, in check_items\n'
    "ValueError: item -3 is negative\nitem -1 is negative": '{"\\n".join(errors)}',
    "RuntimeError: tensor parallel size 16 is too large": "tensor parallel size {cfg.tp} is too large",
    # native checks, as Python sees them
    "RuntimeError: Unsupported head size: 80": "Unsupported head size: {head_size}",
    "RuntimeError: launch, /work/csrc/attention/attn.cu:18, NotImplementedError: blocks over 1024 threads": "{__func__}, {__FILE__}:{__LINE__}, NotImplementedError: blocks over 1024 threads",
    "RuntimeError: CHECK_EQ(state.value().size(0), batch + 1) failed. 3 vs 4": "CHECK_EQ({OPT}.value().size(0), {SIZE}) failed. {OPT.value().size(0)} vs {SIZE}",
}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    from click.testing import CliRunner

    from crawler.cli.main import main
    from tests.conftest import FixtureRepo

    tmp = tmp_path_factory.mktemp("examples")
    runner = CliRunner(env={"ERRCAT_CACHE_DIR": str(tmp / "cache")})

    def cli(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    data, records = crawl_with_config(FixtureRepo(tmp / "upstream"), cli, tmp, FILES, TOML)
    assert cli("validate", data).exit_code == 0
    return cli, data, records


@pytest.mark.parametrize("paste", list(EXAMPLES))
def test_match_finds_each_example_of_the_issue_as_a_user_sees_it(crawled, paste):
    cli, data, records = crawled
    assert best_match(cli, data, paste) == records[EXAMPLES[paste]]["id"]


@pytest.mark.parametrize(
    ("message", "when", "row"),
    [
        ("Address already in use. Retrying with a new port.", "When it is logged", "Logged"),
        ("Cannot cancel a synchronous response.", "When it is answered", "Answered"),
        ("Unsupported head size: {head_size}", "When it is raised", "Exception"),
    ],
)
def test_pages_say_what_each_kind_does_and_name_an_exception_only_for_one_raised(crawled, tmp_path, message, when, row):
    """A log entry's page said 'Exception: logging.WARNING' and 'When it is raised'; an error
    response's 'Exception: create_error_response': neither reaches a caller as an exception."""
    cli, data, records = crawled
    eid = records[message]["id"]
    shown = cli("show", eid, "--data", data, "--no-pager").stdout
    pages = {"show": shown}
    for fmt, suffix in (("html", "html"), ("markdown", "md")):
        assert cli("render", "--data", data, "--out", tmp_path / fmt, "--format", fmt).exit_code == 0
        pages[fmt] = next((tmp_path / fmt).rglob(f"{eid}.{suffix}")).read_text(encoding="utf-8")
    for name, page in pages.items():
        assert when in page and row in page, name
        assert ("Exception" in page) is (row == "Exception"), name
        for other in {"When it is logged", "When it is answered", "When it is raised"} - {when}:
            assert other not in page, (name, other)
