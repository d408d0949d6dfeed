"""Who acts, where the pages said "errcat cannot tell" (#32 items 1 and 3, round 42): a fixture
upstream whose code is written here, crawled through the real CLI, read back as its records'
``meaning.action``.

- an attention backend's implementation that refuses what the layer was built with (ALiBi, a
  sliding window, a KV cache dtype) is the backend chosen, with the flag to choose another; a
  check there on a tensor's shape, or one outside ``__init__``, is not;
- a model's ``get_placeholder_str`` refusing a modality is the request's prompt part;
- in the weight-transfer API a trainer drives, the init or update info it sends (built from the
  dict it passes) and its ``trainer_init`` are the trainer's code; the engine's own bookkeeping is not;
- a model's chat format as code (``*_encoding.py``) refusing a role or a content part of the
  messages it renders is the request's messages; one on an index it computes is not;
- a module's ``__getattr__`` refusing a name is the code that imports it;
- a process it waits for that failed while starting up ("See root cause above") is no bug of
  this check's: the page sends the reader to the error before it;
- a probe for an optional package (``not has_nixl()``) whose message says it is missing is the
  environment; the probe beside another condition is not.
"""

from __future__ import annotations

import pytest
from helpers import action_starting as action
from helpers import meaning_records

BACKEND = """
class AttentionType:
    DECODER = "decoder"


class AttentionImpl:
    pass


class FlashWidgetImpl(AttentionImpl):
    def __init__(self, num_heads, head_size, num_kv_heads, alibi_slopes, sliding_window, kv_cache_dtype, attn_type="decoder", sinks=None):
        self.num_heads = num_heads
        if attn_type != AttentionType.DECODER:
            raise NotImplementedError("FlashWidgetImpl only supports decoder attention")
        if num_heads % num_kv_heads != 0:
            raise ValueError("FlashWidgetImpl requires q heads divisible by kv heads")
        if alibi_slopes is not None or sliding_window is not None:
            raise NotImplementedError("FlashWidgetImpl does not support alibi_slopes or sliding_window")
        if kv_cache_dtype not in ("auto", "fp8"):
            raise ValueError(f"FlashWidgetImpl currently supports only auto or fp8 KV cache, got {kv_cache_dtype}")
        if sinks is not None and sinks.shape[0] != num_heads:
            raise ValueError(f"FlashWidget sinks do not support a shape of {sinks.shape}")

    def forward(self, query, window):
        if window is not None:
            raise NotImplementedError("FlashWidgetImpl does not support a window in forward")
        return query
"""

MLA_BACKEND = """
from pkg.v1.attention.backends.flash_widget import AttentionImpl, AttentionType


class WidgetMLAImpl(AttentionImpl):
    def __init__(self, num_heads, alibi_slopes, sliding_window, attn_type, kv_cache_dtype):
        if attn_type != AttentionType.DECODER:
            raise NotImplementedError("WidgetMLAImpl only supports decoder self-attention")
        unsupported_features = [alibi_slopes, sliding_window]
        if any(unsupported_features):
            raise NotImplementedError("WidgetMLAImpl does not support alibi_slopes or sliding_window")
        if kv_cache_dtype not in ("auto", "bfloat16"):
            raise NotImplementedError("WidgetMLAImpl currently supports only BF16 KV cache")
"""

MODEL = """
class WidgetVisionForCausalLM:
    @classmethod
    def get_placeholder_str(cls, modality, i):
        if modality == "image":
            return "<image>"
        raise ValueError("Only image modality is supported")
"""

PROBES = """
from pkg.imports import has_nixl, has_gloo


def make_communicator(name, ranks):
    if name == "nixl":
        if not has_nixl():
            raise RuntimeError("communicator 'nixl' requested but NIXL is unavailable")
    if ranks > 2 and not has_gloo():
        raise RuntimeError("communicator for many ranks requires gloo")
    return name
"""

IMPORTS = """
import importlib.util


def has_nixl():
    return importlib.util.find_spec("nixl") is not None


def has_gloo():
    return importlib.util.find_spec("gloo") is not None
"""

TRANSFER = """
from dataclasses import dataclass


@dataclass
class WidgetWeightTransferUpdateInfo:
    names: list
    shapes: list

    def __post_init__(self):
        if len(self.shapes) != len(self.names):
            raise ValueError(f"`shapes` should be of the same size as `names`: got {len(self.shapes)}")


class WidgetWeightTransferEngine:
    update_info_cls = WidgetWeightTransferUpdateInfo

    def parse_update_info(self, update_dict):
        try:
            return self.update_info_cls(**update_dict)
        except TypeError as e:
            raise ValueError(f"Invalid update_info for {self.__class__.__name__}: {e}") from e


class WidgetTrainerWeightTransferEngine:
    @classmethod
    def trainer_init(cls, init_info, source=None):
        if source is None:
            raise ValueError("widget trainer weight transfer requires a WeightSource.")
        return cls()


class WidgetRouter:
    def __init__(self):
        self.owners = {}

    def owner_of(self, name):
        if name not in self.owners:
            raise KeyError(f"{name!r} has no owner in the router")
        return self.owners[name]
"""

ENCODING = """
ROLES = ("system", "user", "assistant")


def render_message(index, messages):
    if not 0 <= index < len(messages):
        raise IndexError(f"Index {index} out of range for messages list of length {len(messages)}")
    role = messages[index].get("role")
    if role not in ROLES:
        raise ValueError(f"Invalid role: {role}")
    return role
"""

LAZY = """
_EXPORTS = {"Widget": "pkg.widget"}


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pkg.lazy' has no attribute {name!r}")
    return name
"""

STARTUP = """
def wait_for_engine_startup(procs):
    finished = [p for p in procs if p.exitcode is not None]
    if finished:
        raise RuntimeError(f"Engine core initialization failed. See root cause above. Failed core proc(s): {finished}")
    if len(procs) > 8:
        raise RuntimeError(f"Engine core startup waits for {len(procs)} procs, more than it takes")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/v1/__init__.py": "",
    "pkg/v1/attention/__init__.py": "",
    "pkg/v1/attention/backends/__init__.py": "",
    "pkg/v1/attention/backends/flash_widget.py": BACKEND,
    "pkg/v1/attention/backends/mla/__init__.py": "",
    "pkg/v1/attention/backends/mla/widget_mla.py": MLA_BACKEND,
    "pkg/models/__init__.py": "",
    "pkg/models/widget_vision.py": MODEL,
    "pkg/imports.py": IMPORTS,
    "pkg/communicator.py": PROBES,
    "pkg/tokenizers/__init__.py": "",
    "pkg/tokenizers/widget_encoding.py": ENCODING,
    "pkg/lazy.py": LAZY,
    "pkg/startup.py": STARTUP,
    "pkg/distributed/__init__.py": "",
    "pkg/distributed/weight_transfer/__init__.py": "",
    "pkg/distributed/weight_transfer/widget_engine.py": TRANSFER,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


@pytest.mark.parametrize(
    "start",
    [
        "FlashWidgetImpl does not support alibi",
        "FlashWidgetImpl currently supports only",
        "FlashWidgetImpl only supports decoder attention",
        "WidgetMLAImpl currently supports only",
    ],
)
def test_an_attention_backend_refusing_what_its_layer_is_built_with_is_the_backend_chosen(records, start):
    got = action(records, start)
    assert got["actor"] == "setting" and f"`{start.split()[0]}`" in got["basis"], got
    assert "the backend you chose, or the one chosen for you" in got["says"]
    assert any("`--attention-backend`" in step for step in got["steps"]), got["steps"]


@pytest.mark.parametrize("start", ["FlashWidget sinks do not support", "FlashWidgetImpl does not support a window in forward"])
def test_a_backends_tensor_contract_or_a_check_at_run_time_is_not_the_backend_chosen(records, start):
    got = action(records, start)
    assert "attention backend" not in got["basis"], got
    assert not any("--attention-backend" in step for step in got["steps"]), got["steps"]


@pytest.mark.parametrize(
    "start",
    ["FlashWidgetImpl requires q heads divisible", "WidgetMLAImpl only supports decoder self-attention", "WidgetMLAImpl does not support alibi"],
)
def test_what_the_layer_holds_for_every_backend_is_not_the_backend_chosen(records, start):
    # Attention.__init__ asserts the heads divide before it builds any backend's implementation, and
    # an MLA layer builds its one with no ALiBi, no soft cap and attn_type=DECODER always (no MLA
    # backend takes a sliding window): no backend choice reaches these; its KV cache dtype is one
    got = action(records, start)
    assert got["actor"] != "setting" and "attention backend" not in got["basis"], got
    assert not any("--attention-backend" in step for step in got["steps"]), got["steps"]


def test_a_model_refusing_a_modality_for_its_placeholder_is_the_requests_prompt(records):
    got = action(records, "Only image modality is supported")
    assert got["actor"] == "request" and "modality" in got["basis"], got
    assert any(step.startswith("Send only the kinds of input this model takes") for step in got["steps"]), got["steps"]


def test_a_probe_for_an_optional_package_found_missing_is_the_environment(records):
    got = action(records, "communicator 'nixl' requested")
    assert got["actor"] == "environment" and "`has_nixl()`" in got["basis"], got


def test_a_probe_beside_another_condition_is_not_read_as_the_package_alone(records):
    got = action(records, "communicator for many ranks requires gloo")
    assert "has_gloo" not in got["basis"], got


def test_the_info_a_trainer_sends_the_weight_transfer_api_is_the_trainers_code(records):
    got = action(records, "`shapes` should be of the same size")
    assert got["actor"] == "caller" and "trainer's code" in got["basis"], got
    # the page names the info it sends, not the dataclass hook no trainer calls
    assert "the fields of the `WidgetWeightTransferUpdateInfo` it sends" in got["says"] and "__post_init__" not in got["says"], got
    assert any(step.startswith("Check what your trainer's code gives the weight-transfer API (the fields of") for step in got["steps"]), got["steps"]


def test_the_info_the_engine_reads_of_what_a_trainer_sent_is_named_so(records):
    got = action(records, "Invalid update_info for")
    assert got["actor"] == "caller" and "the update info it sends, as `" in got["says"], got


def test_the_call_a_trainer_makes_names_its_arguments(records):
    got = action(records, "widget trainer weight transfer requires a WeightSource")
    assert got["actor"] == "caller" and "trainer_init" in got["says"], got
    assert any("(the arguments of `" in step and "trainer_init" in step for step in got["steps"]), got["steps"]


def test_the_weight_transfer_engines_own_bookkeeping_is_not_the_trainers(records):
    got = action(records, "{name!r} has no owner in the router")
    assert "trainer" not in got["basis"], got


def test_a_chat_format_refusing_a_role_of_the_messages_is_the_requests_messages(records):
    got = action(records, "Invalid role: {role}")
    assert got["actor"] == "request" and got["basis"].startswith("the chat messages"), got
    assert "(its messages)" in got["says"]


def test_a_chat_format_checking_an_index_it_computes_is_not_the_requests_messages(records):
    got = action(records, "Index {index} out of range")
    assert not got["basis"].startswith("the chat messages"), got


def test_a_modules_getattr_refusing_a_name_is_the_code_that_imports_it(records):
    got = action(records, "module 'pkg.lazy' has no attribute")
    assert got["actor"] == "caller" and "`__getattr__`" in got["basis"], got
    assert any("imports from this module" in step for step in got["steps"]), got["steps"]


def test_a_process_that_failed_while_starting_sends_the_reader_to_the_error_before_it(records):
    got = action(records, "Engine core initialization failed. See root cause above.")
    assert got["actor"] == "internal" and "had already stopped" in got["basis"], got
    assert any(step.startswith("Look for the first error before this one") for step in got["steps"]), got["steps"]
    other = action(records, "Engine core startup waits for")
    assert "had already stopped" not in other["basis"], other
