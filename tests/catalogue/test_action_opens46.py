"""Who acts on groups of pages left open (#32 items 1-3, round 46, s46-opens): a fixture upstream
written here, crawled once through the real CLI, read back as its records' ``meaning.action``;
beside each rule a near case it must not take.

- a raise in the JIT warmup's machinery (``warmup/jit_warmup*.py``: how the project's kernels declare
  their warmup) is internal; the same raise in another warmup module is not that rule;
- a wait on a peer that timed out, in distributed code or naming a rank or peer, is the environment's
  (the peer, or the network to it), with a step to check the peer; a wait on a local child process,
  and one in a ``shutdown``, are not that rule;
- a weight-transfer raise whose message names the API call to make first is the caller's (the
  trainer's code); one naming an internal call ("call bind() first") is not that rule;
- a connector's ``register_kv_caches`` that finds the runner's KV caches unlike its plan is
  internal; one stating a requirement, one finding nothing to handle, and one testing a transfer
  library's return code, are not.
"""

from __future__ import annotations

import pytest
from helpers import action_starting as action
from helpers import meaning_records

JIT_WARMUP = """
def zip_inputs(*rows):
    if not rows:
        raise ValueError("widget zip_inputs requires at least one dispatch input row")
    return rows
"""

AUTOTUNE = """
def load_widget_autotune(rows):
    if not rows:
        raise ValueError("widget autotune requires at least one cached row")
    return rows
"""

DIST_UTILS = """
import time


class WidgetProcessGroup:
    def barrier(self, timeout: float):
        start = time.time()
        while self.arrived() < self.world_size:
            if time.time() - start > timeout:
                raise RuntimeError(f"Widget barrier timed out after {timeout:.2f} seconds")

    def wait_child(self, ready):
        if not ready:
            raise RuntimeError("Widget child process did not report its address in time")

    def shutdown(self):
        if self.thread.is_alive():
            raise RuntimeError("Widget bootstrap server did not stop in time")
"""

ENGINE = """
class WidgetWeightTransferEngine:
    def receive_weights(self, update_info):
        if self.model_update_group is None:
            raise RuntimeError("Widget weight transfer not initialized. Call init_transfer_engine() first.")
        return update_info


class WidgetRouter:
    def _bound(self):
        if not self._produce_methods:
            raise RuntimeError("Widget router has no producers bound; call bind() first.")
        return self._produce_methods
"""

CONNECTOR = """
class WidgetConnectorWorker:
    def register_kv_caches(self, kv_caches):
        if not kv_caches:
            raise RuntimeError("Widget connector found no hot-cache handles.")
        for layer_name, cache in kv_caches.items():
            if cache.shape[0] != self.num_blocks:
                raise ValueError(f"Widget KV cache num_blocks mismatch for layer {layer_name}: {cache.shape[0]} != {self.num_blocks}")
            if cache.ndim != 4:
                raise ValueError("Widget store requires packed KV caches of four dimensions")
            ret = self.engine.register(cache.data_ptr())
            if ret != 0:
                raise RuntimeError(f"Widget memory registration returned {ret}")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/model_executor/warmup/jit_warmup.py": JIT_WARMUP,
    "pkg/model_executor/warmup/autotune_cache.py": AUTOTUNE,
    "pkg/distributed/utils.py": DIST_UTILS,
    "pkg/distributed/weight_transfer/widget_engine.py": ENGINE,
    "pkg/distributed/kv_transfer/kv_connector/v1/widget_connector.py": CONNECTOR,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


@pytest.mark.slow  # (the module's one crawl)
def test_a_raise_in_the_jit_warmups_machinery_is_internal(records):
    got = action(records, "widget zip_inputs requires")
    assert got["actor"] == "internal" and "JIT warmup's own machinery" in got["basis"] and "cannot tell" not in got["says"], got


@pytest.mark.slow  # (the module's one crawl)
def test_the_same_raise_in_another_warmup_module_is_not_that_rule(records):
    got = action(records, "widget autotune requires")
    assert "JIT warmup" not in got["basis"], got


@pytest.mark.slow  # (the module's one crawl)
def test_a_wait_on_peers_that_timed_out_is_the_environments(records):
    got = action(records, "Widget barrier timed out")
    assert got["actor"] == "environment" and "did not answer in time" in got["basis"], got
    assert "a peer it waits on" in got["says"] and any("is up" in s and "network" in s for s in got["steps"]), got


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["Widget child process did not report", "Widget bootstrap server did not stop"])
def test_a_wait_on_a_local_process_or_in_a_shutdown_is_not_the_peers(records, message):
    got = action(records, message)
    assert "a peer it exchanges with" not in got["basis"], got


@pytest.mark.slow  # (the module's one crawl)
def test_a_weight_transfer_call_made_out_of_order_is_the_callers(records):
    got = action(records, "Widget weight transfer not initialized")
    assert got["actor"] == "caller" and "`init_transfer_engine()`" in got["basis"], got
    # (s46-rules' "Call X() first" on a weight-transfer engine takes it first, in its own words; this section's rule takes the
    # messages of that API which that one does not.)
    assert any("call `init_transfer_engine()`" in s.lower() and "init_weight_transfer_engine" in s for s in got["steps"]), got


@pytest.mark.slow  # (the module's one crawl)
def test_an_internal_call_named_first_is_not_the_callers(records):
    got = action(records, "Widget router has no producers bound")
    assert "weight-transfer call" not in got["basis"], got


@pytest.mark.slow  # (the module's one crawl)
def test_kv_caches_unlike_the_connectors_plan_are_internal(records):
    got = action(records, "Widget KV cache num_blocks mismatch")
    assert got["actor"] == "internal" and "the KV caches the model runner allocated" in got["basis"], got


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["Widget store requires packed", "Widget memory registration returned", "Widget connector found no"])
def test_a_stated_requirement_or_a_return_code_is_not_that_rule(records, message):
    got = action(records, message)
    assert "the KV caches the model runner allocated" not in got["basis"], got
