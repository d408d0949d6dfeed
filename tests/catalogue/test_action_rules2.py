"""Who acts, the patterns of round 42's blind seeds 60-61 (#32 items 1 and 3): a fixture upstream
whose code is written here, crawled through the real CLI, read back as its records'
``meaning.action``.

- an assert that a feature's config is set, in that feature's own package, narrows a type: the
  factory that built the class read that config first (the same assert elsewhere is not said so);
- a function given the web app it builds (``attach_router(app)``) runs while the server starts:
  what it reads of the server's arguments is a setting, not a request;
- the shared multimodal parser (``multimodal/parse.py``) checks what the request carries, not the model;
- an assert on the type of a parameter of a model config class's ``__init__`` is the model's
  config.json (a static helper's assert on what the code passes it is not);
- a raise on nothing but the object's own private attributes (``self._future``) is internal, the
  "likely a bug" page; with a parameter beside it, or a message telling its user what to call
  first, it is not said so;
- an assert on a flag the code worked out, just under a setting compared with a value
  (``load_format == "npcache"``), is that setting's value against what else was chosen;
- a message pairing one request's media items ("equal number of audio and video items") is the request.
"""

from __future__ import annotations

import pytest
from helpers import action_of, meaning_records

CONNECTOR = """
class WidgetConnectorScheduler:
    def __init__(self, vllm_config):
        kv_transfer_config = vllm_config.kv_transfer_config
        assert kv_transfer_config is not None
        self.role = kv_transfer_config.kv_role
"""

RUNNER = """
class WidgetRunner:
    def __init__(self, vllm_config):
        kv_transfer_config = vllm_config.kv_transfer_config
        assert kv_transfer_config is not None
        self.role = kv_transfer_config.kv_role
"""

ROUTER = """
import logging

logger = logging.getLogger(__name__)


def attach_router(app):
    profiler_config = getattr(app.state.args, "profiler_config", None)
    if profiler_config is not None and profiler_config.profiler is not None:
        logger.warning("Profiler with mode '%s' is enabled in the API server.", profiler_config.profiler)
        app.include_router(None)
"""

PARSE = """
def validate_embedding_ndim(tensor, modality):
    if tensor.ndim < 2 or tensor.ndim > 3:
        raise ValueError(f"{modality} embedding must be 2D or 3D, got {tensor.ndim}D tensor")


def parse_dict_embeddings(data, modality, required_fields):
    if not required_fields:
        raise ValueError(f"Cannot parse {modality!r} embeddings: every declared field is optional")
    return data
"""

CONFIG = """
class PretrainedConfig:
    pass


class WidgetVisionConfig(PretrainedConfig):
    def __init__(self, vision_config=None, **kwargs):
        if vision_config is not None:
            assert isinstance(vision_config, (PretrainedConfig, dict)), f"expect `vision_config` to be a config or dict, got {type(vision_config)}"
        self.vision_config = vision_config

    @staticmethod
    def from_hf_config(config):
        assert isinstance(config, PretrainedConfig), f"from_hf_config takes a config, got {type(config)}"
        return config
"""

SCALER = """
class WidgetScaler:
    def __init__(self):
        self._future = None

    def start_async(self, method):
        if self._future is not None:
            raise RuntimeError("Another widget scaling method is active")
        self._future = method

    def resize(self, size):
        if self._future is not None and size > 4:
            raise RuntimeError(f"Cannot resize to {size} while scaling")
        return size

    def produce(self):
        if not self._producers:
            raise RuntimeError("WidgetScaler has no producers bound; call bind() first.")
        return self._producers
"""

OMNI = """
class WidgetOmniMultiModalProcessor:
    def _derive_audio_from_video(self, mm_items, use_audio_in_video):
        num_audios = len(mm_items.get("audio", []))
        num_videos = len(mm_items.get("video", []))
        if use_audio_in_video and num_audios != num_videos:
            raise ValueError(f"use_audio_in_video requires equal number of audio and video items, got {num_audios=}, {num_videos=}")
        if num_videos > 8:
            raise ValueError(f"the video placeholder table holds 8 entries, got {num_videos}")
        return num_audios
"""

LOADER = """
class WidgetLoader:
    def __init__(self, load_config):
        self.load_config = load_config

    def weights(self, patterns, fast):
        use_safetensors = patterns == ["*.safetensors"]
        if self.load_config.load_format == "npcache":
            assert use_safetensors is False
        if fast:
            assert use_safetensors is True
        return use_safetensors
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/distributed/__init__.py": "",
    "pkg/distributed/kv_transfer/__init__.py": "",
    "pkg/distributed/kv_transfer/widget_connector.py": CONNECTOR,
    "pkg/worker/__init__.py": "",
    "pkg/worker/widget_runner.py": RUNNER,
    "pkg/entrypoints/__init__.py": "",
    "pkg/entrypoints/serve/__init__.py": "",
    "pkg/entrypoints/serve/profile/__init__.py": "",
    "pkg/entrypoints/serve/profile/api_router.py": ROUTER,
    "pkg/multimodal/__init__.py": "",
    "pkg/multimodal/parse.py": PARSE,
    "pkg/transformers_utils/__init__.py": "",
    "pkg/transformers_utils/configs/__init__.py": "",
    "pkg/transformers_utils/configs/widget_vision.py": CONFIG,
    "pkg/engine/__init__.py": "",
    "pkg/engine/scaler.py": SCALER,
    "pkg/engine/loader.py": LOADER,
    "pkg/engine/omni.py": OMNI,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


def action(records: list[dict], start: str) -> dict:
    return action_of(records, start)


def test_a_features_config_asserted_in_its_own_package_is_internal(records):
    got = action(records, "assert pkg/distributed/kv_transfer/widget_connector.py WidgetConnectorScheduler.__init__")
    assert got["actor"] == "internal" and "feature's own code" in got["basis"], got
    assert not any("--kv-transfer-config" in step for step in got["steps"]), got["steps"]


def test_the_same_assert_outside_the_features_package_is_not_said_to_narrow(records):
    got = action(records, "assert pkg/worker/widget_runner.py WidgetRunner.__init__")
    assert "feature's own code" not in got["basis"], got


def test_a_function_given_the_app_it_builds_is_the_servers_setting_not_a_request(records):
    got = action(records, "Profiler with mode")
    assert got["actor"] == "setting" and "while the server is built" in got["basis"], got
    assert "request" not in got["says"].lower(), got


def test_the_shared_multimodal_parser_checks_the_request(records):
    got = action(records, "{modality} embedding must be 2D")
    assert got["actor"] == "request" and "multimodal input the request carries" in got["basis"], got


def test_the_fields_a_models_processor_declares_are_not_the_request(records):
    got = action(records, "Cannot parse {modality!r} embeddings")
    assert got["actor"] != "request", got


def test_a_model_configs_init_asserting_a_fields_type_is_the_model(records):
    got = action(records, "expect `vision_config` to be a config")
    assert got["actor"] == "model" and "config.json" in got["basis"], got


def test_a_static_helpers_type_assert_in_a_config_module_is_not_the_model(records):
    got = action(records, "from_hf_config takes a config")
    assert got["actor"] == "internal", got


def test_a_raise_on_the_objects_private_bookkeeping_only_is_internal(records):
    got = action(records, "Another widget scaling method is active")
    assert got["actor"] == "internal" and "private bookkeeping" in got["basis"], got
    assert "likely a bug" in got["says"] and "cannot tell" not in got["says"], got


def test_private_state_beside_a_parameter_is_not_called_bookkeeping(records):
    got = action(records, "Cannot resize to {size}")
    assert "private bookkeeping" not in got["basis"], got


def test_private_state_under_a_message_that_tells_its_user_what_to_call_is_not_called_bookkeeping(records):
    got = action(records, "WidgetScaler has no producers bound")
    assert "private bookkeeping" not in got["basis"], got


def test_an_assert_on_a_worked_out_flag_under_a_settings_value_is_the_setting(records):
    (got, other) = sorted((r["meaning"]["action"] for r in records if r["sites"][0]["path"] == "pkg/engine/loader.py"), key=lambda a: a["actor"], reverse=True)
    assert got["actor"] == "setting" and '`self.load_config.load_format` == "npcache"' in got["basis"], got
    assert other["actor"] == "internal", other


def test_a_message_pairing_the_requests_media_items_is_the_request(records):
    got = action(records, "use_audio_in_video requires equal number")
    assert got["actor"] == "request" and "pairs the media items" in got["basis"], got
    other = action(records, "the video placeholder table holds")
    assert "pairs the media items" not in other["basis"], other
