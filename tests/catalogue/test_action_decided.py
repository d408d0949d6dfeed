"""Who acts where the pages said "errcat cannot tell" (#32 items 1 and 3, round 43): a fixture
upstream whose code is written here, crawled through the real CLI, read back as its records'
``meaning.action``. Each rule beside the near case it must not take:

- an environment variable the code reads from ``os.environ`` itself, named by the message, is the
  environment; a name in capitals the code reads from no environment is not;
- a wait that timed out and names the setting that bounds it is the peer or the network, with that
  setting; one that names no setting stays open;
- a check reached while a request is validated is the request's; the same check reached from the
  code's own compile step is not;
- a part of the object's own state missing that its own code sets up first ("requires a prior
  start_prefetch") is the code's own order; the same words on a value passed in are not;
- a warning that states what the code does and asks nothing is nothing to do; one that says it
  may be slower is not;
- a method a class leaves out by design (it raises ``NotImplementedError`` whenever it is called) is
  no choice of the user's; one that says it does not support something yet is not;
- a re-raise of what it caught, with nothing of its own in the message, sends the reader to the
  caught error; one that says something of its own is not;
- two values the code computed that disagree are its own state; a value passed in that disagrees is not.
"""

from __future__ import annotations

import pytest
from helpers import action_starting as action
from helpers import meaning_records

SNAPSHOT = """
import os
from pathlib import Path


class SnapshotTools:
    def __init__(self):
        plugin_dir = os.environ.get("WIDGET_PLUGIN_DIR", "")
        self.plugin_dir = Path(plugin_dir) if plugin_dir else None
        self.depth = 3

    def preflight(self, limit):
        if self.plugin_dir is None:
            raise RuntimeError("WIDGET_PLUGIN_DIR is required")
        if self.depth > limit:
            raise RuntimeError("WIDGET_DEPTH exceeds the limit")
"""

TRANSFER = """
import logging
import time

logger = logging.getLogger(__name__)


class WidgetWorker:
    def __init__(self, widget_config):
        self.widget_config = widget_config

    def wait_ready(self, flags, key):
        deadline = time.monotonic() + self.widget_config.transfer_timeout
        while key not in flags:
            if time.monotonic() > deadline:
                logger.warning("Timed out waiting for the ready flag %s; adjust with kv_connector_extra_config.transfer_timeout", key)
                break
            time.sleep(0.001)

    def wait_loaded(self, flags, key):
        deadline = time.monotonic() + self.widget_config.load_timeout
        while key not in flags:
            if time.monotonic() > deadline:
                logger.warning("Timed out waiting for the load flag %s", key)
                break
            time.sleep(0.001)
"""

STRUCTURED = """
def _check_unsupported(parsed):
    for ttype, tval in parsed:
        if ttype == "groupref":
            raise ValueError("Backreferences are unsupported.")


def _check_compiled(parsed):
    for ttype, tval in parsed:
        if ttype == "lookaround":
            raise ValueError("Look-around assertions are unsupported.")


def validate_structured_output_request_widget(params):
    _check_unsupported(params.tokens)


def compile_widget_grammar(tokens):
    _check_compiled(tokens)
"""

EMBEDDING = """
class PinnedEmbedding:
    def __init__(self):
        self._prefetch_buffer = None
        self.width = 4

    def start_prefetch(self):
        self._prefetch_buffer = [0] * self.width

    def finalize_prefetch(self):
        buffer = self._prefetch_buffer
        if buffer is None:
            raise RuntimeError("pinned lookup requires a prior start_prefetch")
        return buffer

    def finalize_given(self, given):
        if given is None:
            raise RuntimeError("pinned given lookup requires a prior start_prefetch")
        return given
"""

KERNEL = """
import logging

logger = logging.getLogger(__name__)


def pad_heads(q, padded):
    actual = len(q)
    if actual < padded:
        logger.warning("Padding num_heads from %s to %s for the decode kernel", actual, padded)
    if actual < padded // 2:
        logger.warning("Padding heads from %s to %s; this may be slower", actual, padded)
    return padded
"""

STRATEGY = """
class RoutingStrategy:
    @property
    def supports_monolithic_logits(self):
        return False

    def generate_monolithic_logits(self, router_logits):
        raise NotImplementedError("This strategy cannot generate monolithic logits")

    def route_grouped(self, router_logits):
        raise NotImplementedError("This strategy does not support grouped routing yet")
"""

WRAPPERS = """
class ImageError(Exception):
    pass


def fetch_image(load, url):
    try:
        return load(url)
    except ImageError as e:
        raise ValueError(str(e)) from e


def fetch_audio(load, url):
    try:
        return load(url)
    except ImageError as e:
        raise ValueError(f"could not fetch the audio at {url}: {e}") from e
"""

METADATA = """
from pkg.context import get_forward_context


class SideIndexer:
    def metadata(self):
        metadata = get_forward_context()
        raw = metadata["raw"]
        compressed = metadata["compressed"]
        if raw.num_actual_tokens != compressed.num_actual_tokens:
            raise RuntimeError("side-cache metadata token counts disagree")
        return raw

    def check_given(self, given):
        metadata = get_forward_context()
        if given != metadata["raw"].num_actual_tokens:
            raise RuntimeError("given token counts disagree")
        return given
"""

CONTEXT = """
_CONTEXT = {}


def get_forward_context():
    return _CONTEXT
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/snapshot.py": SNAPSHOT,
    "pkg/transfer.py": TRANSFER,
    "pkg/structured_output/__init__.py": "",
    "pkg/structured_output/backend_widget.py": STRUCTURED,
    "pkg/embedding.py": EMBEDDING,
    "pkg/kernel.py": KERNEL,
    "pkg/strategy.py": STRATEGY,
    "pkg/wrappers.py": WRAPPERS,
    "pkg/metadata.py": METADATA,
    "pkg/context.py": CONTEXT,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


def test_an_environment_variable_read_from_os_environ_and_named_is_the_environment(records):
    got = action(records, "WIDGET_PLUGIN_DIR is required")
    assert got["actor"] == "environment" and "`WIDGET_PLUGIN_DIR`" in got["basis"], got
    assert "(the environment variable `WIDGET_PLUGIN_DIR`)" in got["says"], got["says"]
    assert any(step.startswith("Set the environment variable `WIDGET_PLUGIN_DIR`") for step in got["steps"]), got["steps"]


def test_a_name_in_capitals_no_environment_holds_is_not_read_as_one(records):
    got = action(records, "WIDGET_DEPTH exceeds the limit")
    assert got["actor"] != "environment" and "environment variable" not in got["basis"], got


def test_a_wait_that_timed_out_naming_its_setting_is_the_peer_and_that_setting(records):
    got = action(records, "Timed out waiting for the ready flag")
    assert got["actor"] == "environment" and "`kv_connector_extra_config.transfer_timeout`" in got["basis"], got
    assert any("raise `kv_connector_extra_config.transfer_timeout`" in step for step in got["steps"]), got["steps"]


def test_a_wait_that_names_no_setting_is_not_given_one(records):
    got = action(records, "Timed out waiting for the load flag")
    assert not got["basis"].startswith("it waited for a peer or a transfer"), got


def test_a_check_reached_while_a_request_is_validated_is_the_requests(records):
    got = action(records, "Backreferences are unsupported.")
    assert got["actor"] == "request" and "`validate_structured_output_request_widget`" in got["basis"], got
    assert any("structured-output constraint" in step for step in got["steps"]), got["steps"]


def test_the_same_check_reached_from_the_codes_own_compile_step_is_not_the_requests(records):
    got = action(records, "Look-around assertions are unsupported.")
    assert not got["basis"].startswith("raised while the request is validated"), got


def test_the_objects_own_wiring_missing_is_the_codes_own_order(records):
    got = action(records, "pinned lookup requires a prior start_prefetch")
    assert got["actor"] == "internal" and "`self._prefetch_buffer`" in got["basis"] and "order of its own calls" in got["basis"], got
    assert "cannot tell" not in got["says"], got["says"]


def test_the_same_words_on_a_value_passed_in_are_not_the_codes_own_order(records):
    got = action(records, "pinned given lookup requires a prior start_prefetch")
    assert "order of its own calls" not in got["basis"], got


def test_a_warning_that_states_what_the_code_does_is_nothing_to_do(records):
    got = action(records, "Padding num_heads from")
    assert got["actor"] == "internal" and got["basis"].startswith("informational:"), got
    assert got["says"].startswith("Nobody has to act:"), got["says"]
    assert got["steps"][0].startswith("Nothing to do"), got["steps"]


def test_a_warning_that_says_it_may_be_slower_is_not_called_informational(records):
    got = action(records, "Padding heads from")
    assert not got["basis"].startswith("informational:"), got


def test_a_method_a_class_leaves_out_by_design_is_no_choice_of_the_users(records):
    got = action(records, "This strategy cannot generate monolithic logits")
    assert got["actor"] == "internal" and "`RoutingStrategy.generate_monolithic_logits` raises whenever it is called" in got["basis"], got
    assert "cannot tell" not in got["says"], got["says"]


def test_a_method_that_does_not_support_something_yet_is_not_called_by_design(records):
    got = action(records, "This strategy does not support grouped routing yet")
    assert "raises whenever it is called" not in got["basis"], got


def test_a_reraise_of_what_it_caught_sends_the_reader_to_the_caught_error(records):
    (got,) = [r["meaning"]["action"] for r in records if r["sites"][0]["qualname"] == "fetch_image"]
    assert got["actor"] == "internal" and "`except ImageError as e`" in got["basis"], got
    assert got["says"].startswith("This error re-raises an error") and "The above exception was the direct cause" in got["says"], got["says"]
    assert got["steps"][0].startswith("Read the error printed above this one") and not any(s.startswith("Report it") for s in got["steps"]), got["steps"]


def test_a_reraise_that_says_something_of_its_own_is_not_a_bare_wrapper(records):
    got = action(records, "could not fetch the audio at")
    assert not got["basis"].startswith("it re-raises what it caught"), got


def test_values_the_code_computed_that_disagree_are_its_own_state(records):
    got = action(records, "side-cache metadata token counts disagree")
    assert got["actor"] == "internal" and got["basis"].startswith("the check compares values the project's own code computed"), got


def test_a_value_passed_in_that_disagrees_is_not_called_the_codes_own(records):
    got = action(records, "given token counts disagree")
    assert not got["basis"].startswith("the check compares values"), got
