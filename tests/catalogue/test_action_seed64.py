"""Who acts, the wrong claims of round 43's blind seed 64 (s43-judge1, #32) as rules: a fixture
upstream whose code is written here, crawled through the real CLI, read back as its records'
``meaning.action``; beside each rule a near case it must not take.

- an assert on a parameter every call of which, in a model's code, passes a part of the model's
  configuration (``hidden_act=adapter_config.hidden_act``) is the model's, a class of the same name
  in another model's file notwithstanding;
- an assert on a field of the tokenizer the model loads (``tokenizer.all_special_ids``) is the model's;
- a weight loader's check on the checkpoint's tensor, whose rank count only makes a partition's size
  the global one (``local * tp_size``), is the checkpoint's, not the parallel size's;
- a loader's raise on the name of a checkpoint's weight (``for name, loaded_weight in weights``) is
  the checkpoint's, even when its message asks for an issue;
- a connector's check under what the request's ``kv_transfer_params`` ask (``do_remote_decode``) is
  the request's;
- a reviewed (curated) explanation is not contradicted by a derived "nobody outside has to act".
"""

from __future__ import annotations

import json

import pytest
from helpers import action_of, jsonl_bytes

MODEL = """
import torch
from torch import nn


class WidgetProjector(nn.Module):
    def __init__(self, hidden_dim: int, hidden_act: str) -> None:
        super().__init__()
        assert hidden_act == "silu"
        self.hidden_dim = hidden_dim


class WidgetBackbone(nn.Module):
    def __init__(self, adapter_config) -> None:
        super().__init__()
        self.projector = WidgetProjector(hidden_dim=adapter_config.hidden_size, hidden_act=adapter_config.hidden_act)


class WidgetProcessor:
    def __init__(self, info) -> None:
        self.info = info
        self._pending = 3

    @property
    def image_token_id(self) -> int:
        tokenizer = self.info.get_tokenizer()
        dummy_token_id = 0

        assert dummy_token_id not in tokenizer.all_special_ids

        return dummy_token_id

    @property
    def pending_token_id(self) -> int:
        tokenizer = self.info.get_tokenizer()

        assert self._pending not in tokenizer.all_special_ids

        return self._pending


class WidgetModel(nn.Module):
    def load_weights(self, weights):
        params = dict(self.named_parameters())
        for name, loaded_weight in weights:
            if self._broken:
                raise RuntimeError("widget loader state is inconsistent. Please open an issue if encountered.")
            if "experts" in name:
                parts = name.split(".")
                ids = [s for s in parts if s.isdigit()]
                if len(ids) == 2:
                    fused = ".".join(parts)
                elif len(ids) == 1:
                    fused = name
                else:
                    raise NameError(f"Widget layer {name} contains more than 2 numeric indices. Please open an issue if encountered.")
                params[fused].data.copy_(loaded_weight)
"""

#: Another model's class of the same name (Molmo's and Molmo2's ``ImageProjectorMLP``), given a constant.
OTHER_MODEL = """
class WidgetProjector:
    def __init__(self, hidden_act: str) -> None:
        assert hidden_act in ("silu", "gelu")
        self.hidden_act = hidden_act


class WidgetOtherBackbone:
    def __init__(self) -> None:
        self.projector = WidgetProjector(hidden_act="gelu")
"""

UTILS = """
class WidgetGate:
    def __init__(self, gate_act: str) -> None:
        assert gate_act == "silu"
        self.gate_act = gate_act


class WidgetGateHolder:
    def __init__(self, adapter_config) -> None:
        self.gate = WidgetGate(gate_act=adapter_config.gate_act)
"""

QUANT = """
import torch


class WidgetBlockQuantMoEMethod:
    def weight_loader(self, param, loaded_weight, weight_name, shard_id, expert_id):
        local_i = self.moe.intermediate_size_per_partition
        global_i = local_i * self.moe.moe_parallel_config.tp_size
        expected = (global_i, self.moe.hidden_dim // self.block_size)
        if loaded_weight.dtype != torch.uint8 or tuple(loaded_weight.shape) != expected:
            raise ValueError(f"invalid packed widget tensor {weight_name}: expected uint8{expected}, got {loaded_weight.dtype}")
        param.data[expert_id].copy_(loaded_weight)

    def split_loader(self, param, loaded_weight, weight_name):
        tp_size = self.moe.moe_parallel_config.tp_size
        if loaded_weight.shape[0] % tp_size != 0:
            raise ValueError(f"widget tensor {weight_name} does not split evenly")
        param.data.copy_(loaded_weight)
"""

CONNECTOR = """
class WidgetConnectorScheduler:
    def __init__(self, is_kv_consumer: bool) -> None:
        self.is_kv_consumer = is_kv_consumer
        self._closing = False

    def update_state_after_alloc(self, request, blocks) -> None:
        params = request.kv_transfer_params
        if not params:
            return
        if params.get("do_remote_prefill"):
            self.pending = None
        elif params.get("do_remote_decode"):
            assert not self.is_kv_consumer
            self.pending = blocks

    def build_meta(self, blocks) -> None:
        if blocks:
            assert not self._closing
        self.pending = blocks

    def start_load(self, queued) -> None:
        for req in queued:
            if req.kv_transfer_params.get("do_remote_prefill"):
                assert req.kv_transfer_params is not None, "kv_transfer_params should not be None"
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/model_executor/models/widget.py": MODEL,
    "pkg/model_executor/models/widget_other.py": OTHER_MODEL,
    "pkg/utils/widget_gate.py": UTILS,
    "pkg/model_executor/layers/quantization/widget_block.py": QUANT,
    "pkg/distributed/kv_transfer/widget_connector.py": CONNECTOR,
}

CONFIG = """
[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
"""


def _records(out) -> list[dict]:
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return _records(crawl_once(FILES, "--upstream", "widgets", config=CONFIG))


def test_an_assert_on_what_a_models_code_passes_from_its_config_is_the_models(records):
    got = action_of(records, "assert pkg/model_executor/models/widget.py WidgetProjector.__init__")
    assert got["actor"] == "model" and "model's own configuration" in got["basis"], got
    assert "`adapter_config`" in got["basis"] and "Nobody outside" not in got["says"], got


def test_a_class_of_the_same_name_given_a_constant_is_not_the_models(records):
    got = action_of(records, "assert pkg/model_executor/models/widget_other.py WidgetProjector.__init__")
    assert got["actor"] == "internal", got


def test_the_same_assert_outside_a_models_code_is_not_the_models(records):
    got = action_of(records, "assert pkg/utils/widget_gate.py WidgetGate.__init__")
    assert got["actor"] != "model", got


def test_an_assert_on_the_tokenizers_field_is_the_models(records):
    got = action_of(records, "assert pkg/model_executor/models/widget.py WidgetProcessor.image_token_id")
    assert got["actor"] == "model" and "`tokenizer.all_special_ids`" in got["basis"], got


def test_an_assert_on_the_tokenizer_beside_the_objects_own_state_is_not(records):
    got = action_of(records, "assert pkg/model_executor/models/widget.py WidgetProcessor.pending_token_id")
    assert got["actor"] != "model", got


def test_a_loaders_check_on_the_checkpoints_tensor_with_the_global_size_is_the_checkpoints(records):
    got = action_of(records, "invalid packed widget tensor")
    assert got["actor"] == "model", got
    assert "parallel" not in got["says"], got


def test_a_loaders_check_that_the_tensor_splits_by_the_parallel_size_is_that_setting(records):
    got = action_of(records, "widget tensor {weight_name} does not split evenly")
    assert got["actor"] == "setting" and "parallel" in got["says"], got


def test_a_raise_on_a_checkpoints_weight_name_is_the_checkpoints_though_it_asks_for_an_issue(records):
    got = action_of(records, "Widget layer {name} contains")
    assert got["actor"] == "model" and "name of a weight the checkpoint holds (`name`" in got["basis"], got
    assert any("open an issue" in step for step in got["steps"]), got["steps"]  # (the message's own ask is still said)


def test_a_raise_in_the_same_loop_on_the_loaders_own_state_still_asks_for_a_report(records):
    got = action_of(records, "widget loader state is inconsistent")
    assert got["actor"] == "internal" and got["basis"] == "the message itself says to report it", got


def test_a_connectors_assert_under_the_requests_transfer_params_is_the_requests(records):
    got = action_of(records, "assert pkg/distributed/kv_transfer/widget_connector.py WidgetConnectorScheduler.update_state_after_alloc")
    assert got["actor"] == "request" and "`do_remote_decode`" in got["basis"], got
    assert "P/D router" in got["says"] and any("`--kv-transfer-config`" in step for step in got["steps"]), got


def test_an_assert_that_the_requests_transfer_params_are_there_is_the_codes_own(records):
    """Under a guard on what they ask, an assert that they are there re-checks what the code that
    queued the request tested (s43-verify's W on mooncake_connector.py's `_reqs_need_recv`)."""
    got = action_of(records, "kv_transfer_params should not be None")
    assert got["actor"] == "internal" and "re-checks what the code that queued the request tested" in got["basis"], got


def test_a_connectors_assert_on_its_own_state_is_not_the_requests(records):
    got = action_of(records, "assert pkg/distributed/kv_transfer/widget_connector.py WidgetConnectorScheduler.build_meta")
    assert got["actor"] == "internal", got


CURATED = """id: {id}
what_it_means: >-
  The widget loader's own state went wrong while it loaded the checkpoint.
when_it_happens:
  trigger: Loading any widget checkpoint after the loader broke.
solutions:
- Re-export the widget checkpoint with the widget exporter, then load it again.
review:
  status: reviewed
  commit: {commit}
  exception: {exception}
  template: {template}
  guards: {guards}
  path: {path}
  qualname: {qualname}
"""


@pytest.fixture(scope="module")
def curated_records(crawl_once, records, tmp_path_factory) -> tuple[list[dict], str, str]:
    """The fixture crawled again with a reviewed explanation of the loader's "report it" raise, and of
    the split loader's raise (whose derived who-acts names an actor, the parallel size: it stays)."""
    (report,) = [r["id"] for r in records if r["message"]["text"].startswith("widget loader state is inconsistent")]
    (setting,) = [r["id"] for r in records if r["message"]["text"].startswith("widget tensor {weight_name} does not split")]
    root = tmp_path_factory.mktemp("curated")
    where = root / "acme" / "widgets"
    where.mkdir(parents=True)
    for record in records:
        if record["id"] in (report, setting):
            review = {
                "commit": record["provenance"]["commit"],
                "exception": record["exception"]["name"],
                "template": json.dumps(record["message"]["text"]),
                "guards": json.dumps(record["sites"][0]["facts"]["guards"]),
                "path": record["sites"][0]["path"],
                "qualname": record["sites"][0]["qualname"],
            }
            (where / f"{record['id']}.yaml").write_text(CURATED.format(id=record["id"], **review), encoding="utf-8")
    return _records(crawl_once(FILES, "--upstream", "widgets", "--curated", root, config=CONFIG)), report, setting


def test_a_reviewed_explanation_is_not_contradicted_by_a_derived_nobody_acts(curated_records):
    got, report, _ = curated_records
    by_id = {r["id"]: r for r in got}
    assert by_id[report]["explanation_status"] == "curated"
    action = by_id[report]["meaning"]["action"]
    assert "Nobody outside" not in action["says"] and "reviewed" in action["says"], action
    assert action["steps"][0] == "Follow the Solutions of the reviewed explanation on this page.", action["steps"]
    assert not any(step.startswith("Report it") for step in action["steps"]), action["steps"]


def test_a_reviewed_explanation_leaves_a_derived_actor_that_names_one(curated_records, records):
    got, _, setting = curated_records
    (before,) = [r["meaning"]["action"] for r in records if r["id"] == setting]
    (after,) = [r for r in got if r["id"] == setting]
    assert after["explanation_status"] == "curated"
    assert after["meaning"]["action"] == before and before["actor"] == "setting", before
