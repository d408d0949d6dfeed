"""What to do about an error: whose move it is, the remedy its own message gives, and the steps.

One pure function of a finished record (:func:`action`, run by ``joined.merge`` once the meaning
is in): it reads what the record already holds (the settings the code reads, the kind, the
exception, the message, the primary site's path, guards and handler, the callers) and says, in
the user's terms, who must act:

    setting      a setting of theirs leads to it (an option, a config field, an environment
                 variable), or the check validates the configuration
    request      the request they sent (a request field, an error response, a request object)
    model        the model or checkpoint they load (model code, loaders, checkpoint configs)
    environment  their hardware, driver, platform or installed packages
    caller       their code: a call to the library's API, or a plugin implementing an interface
    internal     nobody outside the project: the code reached a state it does not expect

Every sentence is derived (the record's ``meaning`` is labelled so on every page) and grounded:
it quotes only what the record holds, and when no rule applies the entry is ``internal``, said
as "likely a bug: report it", never a guessed setting.
"""

from __future__ import annotations

import ast
import itertools
import re
from typing import Any, cast

from crawler.catalogue.callers import QUIET_BASIS
from crawler.catalogue.meaning import SettingNames
from crawler.catalogue.phrasing import parse_guard, short_code
from crawler.extract import guard_reads
from crawler.model.kinds import ASSERT, LOG, NATIVE, RAISE, RESPONSE, exception_word
from crawler.model.shapes import RecordData

#: The longest remedy lifted from a message (a sentence or two; the message is on the page).
MAX_REMEDY = 320

# What a message says to do: a sentence that starts with one of these (or goes on with one after
# a comma, "or", a semicolon or a colon).
_REMEDY_START = re.compile(
    r"(?:please |you (?:can|could|may|should|must|need to|might want to) |try |consider |to (?:fix|avoid|resolve|solve|silence) |"
    r"use |set |unset |make sure |ensure |increase |decrease |reduce |lower |install |run |pass |specify |"
    r"upgrade |downgrade |update |disable |enable |remove |add |switch |change |adjust |provide |restart |check |select |choose |pick |"
    r"(?:do not|don't) (?:pass|set|use|specify) (?=`?--[a-z]))",  # (s44-rules2, R*24: "...; do not pass --quantization.")
    re.I,
)
_INTRO = re.compile(r"(?:^|[,;:]\s+|(?<!\s)\s+(?:or|and|then)\s+|(?<!\s)\s+[-–—]\s+)(?=\S)")
#: Places in one sentence a remedy may start (each is read to the sentence's end, so a sentence of
#: thousands of "and"s would cost the square of its length).
MAX_INTROS = 64
#: (not after an abbreviation: "(e.g. Nvidia Blackwell)" goes on the sentence; s45-rules2 R*38, s45-rules)
_SENTENCES = re.compile(r"(?<=[.!?])(?<!\b[eE]\.g\.)(?<!\b[iI]\.e\.)(?<!\bvs\.)(?<!\bcf\.)\s+(?=[A-Z`'\"(])|\n+")
_REPORT = re.compile(
    r"\b(?:file|open|report|raise|submit) (?:an? |this as an? )?(?:issue|bug)|\bthis is (?:likely |probably )?a bug\b|\bshould not happen\b|\bshould never happen\b",
    re.I,
)
_ENV_NAME = re.compile(r"(?<![\w$])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+){1,}(?![\w(])")
_UNSUPPORTED = re.compile(
    r"\bnot (?:yet |currently )?(?:supported|implemented for|compatible)|\bunsupported\b|\bonly supports?\b|"
    r"\bdoes(?: not|n't) (?:yet )?support\b|\bincompatible\b|\bcannot be (?:used|combined|enabled) (?:with|together)|"
    r"\bcan only be used (?:with|when)\b|\b(?:is|are) only supported\b|\bmutually exclusive\b",
    re.I,
)
_PLUGIN = re.compile(
    r"\bmust (?:accept|implement|override|subclass|inherit|return)\b|\b(?:is|are) implemented\b|\bin subclass(?:es)?\b|\bshould initiali[sz]e\b|\bsubclass(?:es)? of\b|\bplugin\b|"
    r"\bmust be (?:a )?(?:subclass|callable|registered)\b",
    re.I,
)
_RETRY = re.compile(r"\b(?:try again|retry|retrying|later|temporarily)\b", re.I)
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b|(?<![\w-])--[a-z]{3,}\b")
_INSTALL = re.compile(
    r"\bpip install\b|\b(?:is|are) not installed\b|\bplease install\b|\binstall (?:it|them|the|a|an)\b|\bnot (?:found|available)\. ?install\b|\brequires? (?:the )?`?[\w.-]+`? (?:package|library|to be installed)\b|\bmodule named\b|"
    r"\brequires? (?:a |an )?(?:usable |working |compatible )?`?[\w.-]+`? installation\b",
    re.I,
)
_HARDWARE = re.compile(
    r"\b(?:compute capability|device capability|CUDA (?:driver|version|runtime)|driver version|GPUs? (?:is|are) not|no GPU|"
    r"(?:not|\w+n't) supported on (?:this |the )?(?:GPU|device|platform|hardware|CPU|ROCm|XPU|TPU|HPU|Neuron)|"
    r"(?:ROCm|XPU|TPU|HPU|CPU|CUDA|Neuron|MPS) (?:platform|backend|device)s? (?:is|are|does|do) not|"
    r"(?:on )?(?:the |this )current platform|per SM\b|\d+ SMs\b|\bSMs\b|on this platform|SM ?\d{2,3}\b|sm_?\d{2,3}\b|Hopper|Blackwell|Ampere|Volta|Turing|out of memory|not enough (?:GPU |device |CPU )?memory|"
    r"insufficient (?:GPU |device )?memory|free memory|shared memory|/dev/shm|NCCL (?:error|version|library|is not)|NVLink|ulimit|disk space|"
    r"NVDEC|nvcuvid|in this (?:torch|pytorch) build|not (?:built|compiled) with|multicast memory)",
    re.I,
)
_HARDWARE_GUARD = re.compile(
    r"\bdevice\.type\b|\b(?:current_platform|torch\.cuda\.is_available|is_cuda|is_rocm|is_xpu|is_tpu|is_cpu|"
    r"has_device_capability|get_device_capability|is_device_capability|device_count|sys\.platform|"
    r"platform\.system|find_spec|importlib\.util|cuda_get_device_properties)\b"
)
_MODEL_WORDS = re.compile(
    r"\b(?:model config(?:uration)?|(?:in|of|for) the model\b|a model with|BOS|decoder start token|(?:bos|eos|pad) token|checkpoint|safetensors|state[_ ]dict|config\.json|hf_config|hf_text_config|model type|model_type|"
    r"architectures?|tokenizer|chat template|weights? (?:file|name|shape)|this model|the model's|"
    r"model (?:does not|doesn't) support|not supported (?:for|by) (?:this |the )?model|processor)\b",
    re.I,
)
_MODEL_PATHS = (
    "model_executor/models/",
    "model_executor/model_loader/",
    "transformers_utils/",
    "/models/",
    "model_executor/layers/quantization/",
    "multimodal/",
    "tokenizers/",
    "reasoning/",
    "tool_parsers/",
)
_PARSER_PATHS = ("tool_parsers/", "reasoning/")
_REQUEST_PATHS = (
    "entrypoints/openai/",
    "entrypoints/serve/",
    "entrypoints/pooling/",
    "entrypoints/anthropic/",
    "sampling_params.py",
    "pooling_params.py",
    "entrypoints/chat_utils.py",
    "entrypoints/renderer.py",
)
_SETTING_PATHS = ("/config/", "/config.py", "engine/arg_utils.py", "/envs.py", "entrypoints/cli/", "argparse_utils.py", "/benchmarks/")
#: A method that checks the inputs of one call at run time (not the model's configuration).
_RUNTIME_INPUT = re.compile(r"forward|_parse_and_validate\w*|_pad\w*|_process\w*_input\w*|_validate\w*_input\w*")
#: A message that says what goes with what ("X is not supported with Y", "only supports X for Y").
_COMBINATION = re.compile(r"\b(?:with|for|when|together|alongside|on|in|by|without|unless|while)\b", re.I)
#: A guard on the number of ranks the deployment runs (a size a model's dimension must divide by).
_PARALLEL_GUARD = re.compile(r"\b(?:world_size|tp_size|tensor_parallel_size|pipeline_parallel_size|pp_size)\b")
#: A message addressed to the user about what they gave ("you forgot to include ... in the prompt").
_YOU_GAVE = re.compile(r"\byou (?:forgot|provided|passed|sent|gave|supplied)\b|\bthe (?:images|videos|audios?|prompts?) you\b", re.I)
_PARALLEL = re.compile(
    r"\b(?:tp|pp|dp|ep|pcp|dcp)_size\b|\btensor[- ]parallel(?:ism| size)?\b|\bpipeline[- ]parallel(?:ism| size)?\b|"
    r"\bdata[- ]parallel size\b",
    re.I,
)
#: What torch's TORCH_CHECK appends to a message: no advice of the check's own.
_TORCH_BOILERPLATE = re.compile(r"(?<!\s)\s*\(Could this error message be improved\?[^)]{0,400}\)")
_MODEL_SETUP = re.compile(
    r"__init__|__post_init__|<module>|(?>\w*weights?\w*)|_map_name|from_pretrained|(?>\w*config\w*)|verify\w*|"
    r"validate\w*|_init\w*|get_\w*_config|(?>\w*quant\w*)|create_\w*"
)
_MODEL_TEXT = re.compile(
    r"\bnot (?:yet )?supported\b|\bunsupported\b|\bonly supports?\b|\bdoes not support\b|\bweights?\b|\bcheckpoint\b|"
    r"\bconfig\b|quantiz|\barchitecture\b|\bmodel\b|\bexpected one of\b|\bmust be one of\b|\bunknown\b",
    re.I,
)
_MEDIA_PATHS = ("multimodal/video", "multimodal/media", "multimodal/audio", "multimodal/image", "video_decoders/")
_MEDIA = re.compile(r"\bframes?\b|\bdecod|\bcorrupt|\bcodec\b|\bsample rate\b", re.I)
_DEVICE = re.compile(
    r"\bcuda\w+ failed\b|\bcudaGetErrorString\b|\bdriver\b|\bcompute capability|\bdevice capability|\bSM ?\d{2,3}\b|\bsm_?\d{2,3}\b|\b(?:built|compiled) (?:for|with|without)\b|"
    r"\bout of memory|\bnot enough (?:GPU |device )?memory|\bshared memory\b|\bno compiled\b|\bnot compiled\b|\brecompile\b",
    re.I,
)
_DRIVER_HANDLER = re.compile(r"\bAmdSmi\w*|\bNVMLError\w*|\bpynvml\b|\bOSError\b|\bPermissionError\b|\bCudaError\b|\bCUDAError\b")
_FROM_REQUEST = re.compile(r"\b(?:from|in|of) (?:the |this |your )?request\b|\brequest's\b|\binvalid request\b", re.I)
#: "Unsupported mode: {mode}": a dispatch on the code's own values, no combination a user chose.
_DISPATCH = re.compile(r"^(?:Unsupported|Unknown|Invalid) [\w .-]{1,40}: ?[{'\"]", re.I)
#: What a serving method finds missing in its own state (not in the request it handles).
_OWN_STATE = re.compile(r"\bnot available\b|\bnot initiali[sz]ed\b|\bwas not (?:set|prepared|created|allocated)\b", re.I)
_REQUEST_GUARD = re.compile(
    r"\b(?:chat_template_kwargs|kv_transfer_params|mm_processor_kwargs|extra_body|structural_tag|tool_choice|"
    r"response_format|constrained_tools)\b"
)
#: A message that states an invariant of the code's own order ("must be set by this point").
_INVARIANT = re.compile(r"\bby this point\b|\bby now\b|\bshould have been (?:set|initiali[sz]ed|called|created)\b|\bat this point\b", re.I)
#: A guard reading a field of one of the engine's configs: a setting the knob readers did not resolve.
_CONFIG_READ = re.compile(
    r"\b((?:parallel|cache|scheduler|lora|speculative|compilation|load|device|kv_transfer|observability|"
    r"structured_outputs|attention|kernel|ec_transfer)_config)\.([a-z_][a-z0-9_]*)\b(?!\s*\()"
)
#: ``lora_config is None``, ``not self.speculative_config``: one of the engine's configs of a
#: feature, which is None when the options started with do not enable the feature.
_FEATURE_OFF = re.compile(
    r"(?:not \(?\s*)?(?:(?:self|\w+_config)\.)?((?:lora|speculative|kv_transfer|ec_transfer|structured_outputs|observability|kv_events)_config)"
    r"\s*(?:is None)?\)?"
)
#: A remedy that asks for another value of a setting it names in the code's spelling.
_CHOOSE_ANOTHER = re.compile(
    r"(?:please )?(?:select|choose|pick) (?:a different|another|a supported|a compatible|an? other) `?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`?\b", re.I
)
_PASSED_IN = re.compile(r"\b(?:not )?(?:isinstance|hasattr|callable)\((?!self\b)\w+|\b(?!self\b)\w+\.implements_\w+\(")
#: A command's parsed arguments (``args.backend``): the options of the command the user ran.
_CLI_ARGS = re.compile(r"(?<![\w.])args\.([a-z_][a-z0-9_]*)\b(?!\s*\()")
#: A network fetch that failed: the network, or the server the URL names.
_FETCH = re.compile(
    r"\b(?:HTTP|fetch(?:ing)?|download(?:ing)?|connect(?:ion|ing)?)\b[^.]{0,80}?\b(?:failed|error|timed out|timeout|refused|unreachable)\b|"
    r"\b(?:failed|unable) to (?:fetch|download|connect|reach)\b",
    re.I,
)
_LORA = re.compile(r"\blora\b|\badapter\b", re.I)
#: What one request carries into a model's processor: its media, its prompt.
_REQUEST_INPUT = re.compile(
    r"\b(?:audio|image|video|clip|frame|prompt)s?\b[^.]{0,400}\b(?:exceed\w*|too (?:long|many|large|short)|at most|maximum)\b|"
    r"\b(?:provide|pass|send) (?:a |an |the )?(?:shorter|smaller|fewer|longer)\b",
    re.I,
)
#: "... is not implemented for xpu_ops": what the platform's own ops lack.
_PLATFORM_OPS = re.compile(r"\b(?:xpu|rocm|hip|tpu|hpu|neuron|cpu|mps)(?:_ops)?\b", re.I)
#: A handler of any exception (``except Exception``): what it logs is whatever failed, not one input.
_BROAD_HANDLER = re.compile(r"^except\s*(?:\(?\s*(?:Exception|BaseException)\b|:)")
#: "Engine core process died unexpectedly", "Publisher is closed": a part that stopped before this
#: error; whatever stopped it is the cause, reported before it.
_STOPPED = re.compile(r"\b(?:is|was|has been|already) (?:closed|shut ?down|dead|stopped)\b|\bclosed unexpectedly\b|\bdied\b", re.I)
#: A remedy that says to update or reinstall a package ("Update hpc-ops to a build with ...").
_UPGRADE = re.compile(
    r"(?:update|upgrade|downgrade|reinstall|rebuild)\b[^.]{0,80}?(?:\bbuild\b|\bversion\b|\brelease\b|\d+\.\d+|"
    r"\bPR\b|\bpast\b|\bnewer\b|\blatest\b|>=)",
    re.I,
)
#: "The installed Triton Proton does not support ...": a package there, but not one that has what it needs.
_OLD_PACKAGE = re.compile(r"\bthe installed [`'\w. -]{1,40}? (?:does not|doesn't|do not|is too old|lacks|is missing)\b", re.I)
#: "NIXL is not available", with a guard ``TransferEngine is None``: an optional import that failed.
_UNAVAILABLE = re.compile(r"^`?(?!The\b)(?:[A-Z][\w-]*|[a-z]\w*(?:\.\w+)+)`? (?:is|are) (?:not available|unavailable)\b")
_NONE_GUARD = re.compile(r"\(?[A-Za-z_]\w* is None\)?")
#: The checkpoint's tensor as a weight loader names it.
_LOADED = re.compile(r"\bloaded_weights?\b(?:\.\w+)?")
#: An assert's condition, negated, that finds a value missing (``not (x is not None)``).
_PRESENCE = re.compile(r"not \([\w.\[\]'\"]+ is not None\)|[\w.\[\]'\"]+ is None")
#: A feature config's presence asserted in that feature's own package: the code there is built only
#: when the feature is configured (the factory that picked it read that same config first), so the
#: assert narrows a type and is no setting a user has left unset.
_FEATURE_PACKAGES = {
    "kv_transfer_config": ("/kv_transfer/",),
    "ec_transfer_config": ("/ec_transfer/",),
    "lora_config": ("/lora/",),
    "speculative_config": ("/spec_decode/",),
}
_PRESENT = re.compile(r"not \((?:(?:self\.)?vllm_config\.)?(\w+_config)(?: is not None)?\)")
#: A message on private state that still points outside the object: a call its user makes in the
#: wrong order ("Call bind() first", driven by a trainer or an HTTP route), a feature switched on or
#: off, something set (wrongly: a priority list a user gives), a peer's fault or what it sent, what is
#: supported only with something.
_NOT_BOOKKEEPING = re.compile(
    r"\bcall(?:ed|s)?\b|\(\) first\b|\b(?:en|dis)abled\b|\bfault|\breject|\breceiv|\berrored\b|\bunconfirmed\b|\bshutting down\b|\bonly\b|\bpeer\b|\bexpired\b|\btrainer\b|\bset\b",
    re.I,
)
#: The guard just around an assert: a setting compared with a value (``self.load_config.load_format ==
#: "npcache"``); the assert on a flag the code worked out under it (``use_safetensors is False``) is
#: where that value of the setting meets what else was chosen, not an invariant of the code's own.
_CHOSEN_VALUE = re.compile(r"((?:self\.)?(?:\w+\.)?\w+_config\.\w+) (== [\"'][\w.-]+[\"'])")
_BOOLEAN_LOCAL = re.compile(r"not \(\w+ is (?:False|True)\)")
#: A message that pairs the media items of one request (``use_audio_in_video`` with as many audio
#: as video items): the counts are the request's.
_PAIRED_ITEMS = re.compile(
    r"\b(?:equal|same|matching) (?:number|count)s? of (?:audios?|images?|videos?)\b|\bnumber of (?:audios?|images?|videos?)(?: items)? (?:must|should) (?:match|equal)\b",
    re.I,
)
#: An assert on the type of one bare name (a constructor's parameter): ``isinstance(x, (A, dict))``.
_TYPE_TEST = re.compile(r"not \(isinstance\([a-z]\w*, [\w.]+\)\)|not \(isinstance\([a-z]\w*, \([\w., ]+\)\)\)")
#: A function given the web app it builds (``attach_router(app)``): it runs once while the server
#: starts, not for a request; what it reads of the app's arguments is a setting.
_APP_BUILD = ("router", "route", "app", "middleware")
#: A model's function that loads the checkpoint's weights: its asserts check what the checkpoint holds.
_WEIGHT_LOADER = re.compile(r"_?load_(?>\w*weights?\w*)|(?>\w*weight_loader\w*)")
#: A function that registers a name with a registry (``register_engine``): its checks are on what
#: its caller passes.
_REGISTER = re.compile(r"_?register\w*")
_REGISTRY = re.compile(r"(?:Registry|Factory|Manager|Enum)$")
_HTTP_EXCEPTIONS = {"HTTPException"}
#: A GPU generation a message says it supports or requires ("supports RDNA3 and CDNA3 only",
#: "requires gfx950", "requires an MI300-series GPU").
_GENERATION = re.compile(r"\b(?:supports?|requires?) (?:an? |the )?(?:RDNA|CDNA|gfx|MI\d)\w*", re.I)
#: A message that names the device or platform it runs on.
_NAMES_DEVICE = re.compile(r"\b(?:device|platform|hardware|GPUs?|CPU|CUDA|ROCm|XPU|TPU|HPU|NPU|MPS|Neuron)\b", re.I)
#: A native call to the operating system that failed: ``mmap`` (``MAP_FAILED``), ``errno``.
_SYSCALL = re.compile(r"\berrno\b|\bstrerror\b|\bMAP_FAILED\b")
#: A wait that gave up: a poll with a timeout, a deadline or the time since it started.
_WAITED = re.compile(r"\.poll\(|\btimeout|\bdeadline\b|\belapsed\b|\bremaining\w*\s*<=?\s*0\b|\btime\(\)\s*-\s*start|\bmonotonic\(\)\s*-")
_WAITED_TEXT = re.compile(r"\btimed? ?out\b|\bin time\b|\bwaiting for\b|\bwithin \S+ seconds\b", re.I)
#: A remedy that asks for something in the request ("Please request fewer output tokens").
_ASKS_REQUEST = re.compile(r"(?:please )?request (?:a |an )?(?:smaller|fewer|less|shorter|larger|more|lower|higher)\b", re.I)
#: A message about how a function of the library is called ("Passing X to `generate()` is deprecated").
_API_CHANGE = re.compile(r"\bpassing\b.{0,80}?\bto\b.{0,80}?\w\(\).{0,80}?\b(?:is|are) deprecated\b", re.I)
_ARGPARSE_EXCEPTIONS = {"ArgumentTypeError", "ArgumentError"}
_REQUEST_EXCEPTIONS = {"VLLMValidationError", "BadRequestError", "HTTPException", "RequestValidationError"}
_ENV_EXCEPTIONS = {
    "ImportError",
    "ModuleNotFoundError",
    "OSError",
    "PermissionError",
    "FileNotFoundError",
    "MemoryError",
    "OutOfMemoryError",
    "TimeoutError",
    "ConnectionError",
}


def remedy(record: dict[str, Any], names: SettingNames | None = None) -> str | None:
    """The remedy the message itself gives, settings it names followed by their flags (those the
    record reads, else an option's dest ``names`` knows: "Select a different gdn_prefill_backend
    (`--gdn-prefill-backend`)"); None when the message gives none (or is no text errcat can read)."""
    template = record["message"]
    if template.get("opaque") or not template["text"]:
        return None
    found: list[str] = []
    for sentence in _SENTENCES.split(_TORCH_BOILERPLATE.sub("", template["text"])):
        sentence = sentence.strip()
        for m in itertools.islice(_INTRO.finditer(sentence), MAX_INTROS):
            rest = sentence[m.end() :]
            if (
                _REMEDY_START.match(rest)
                and not _looks_like_condition(rest)
                and not (m.group(0).strip() in ("and", "or") and _NEGATED.search(sentence[: m.start()]))
            ):
                found.append(_cap(rest[0].upper() + rest[1:]))
                break
        if len(found) == 2:
            break
    if not found:
        return None
    text = " ".join(s if s.endswith((".", "!", "?")) else s + "." for s in found)
    text = _resolved(_cap(text), record["meaning"].get("knobs") or [])
    return _dests_resolved(text, names) if names is not None else text


def _dests_resolved(text: str, names: SettingNames) -> str:
    """The first snake_case name of ``text`` that is an option's dest, followed by its flag (unless
    the text names a flag already)."""
    if _FLAG.search(text):
        return text
    for m in _SNAKE_NAME.finditer(text):
        flag = names.flags.get(m.group(1))
        if flag:
            return text[: m.end()] + f" (`{short_code(flag)}`)" + text[m.end() :]
    return text


#: A name in the code's spelling, in a message (``gdn_prefill_backend``, `` `max_loras` ``).
_SNAKE_NAME = re.compile(r"`?(?<![\w.'\"-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w('\"-])(?!\.\w)`?")


def _flag_of(code: str, names: SettingNames | None) -> str | None:
    """The option that sets the config value ``code`` reads (``self.parallel_config.enable_eplb``:
    ``--enable-eplb``), or that a bare name is the dest of; None when no option sets it."""
    if names is None:
        return None
    parts = code.split(".")
    return names.flags.get(".".join(parts[-2:]) if len(parts) >= 2 else code)


def _feature_flag(config: str, names: SettingNames | None) -> str | None:
    """The option that enables the feature a config of it configures: one named for the config
    (``kv_transfer_config``: ``--kv-transfer-config``), else ``enable_<feature>`` (``lora_config``:
    ``--enable-lora``)."""
    if names is None:
        return None
    return names.flags.get(config) or names.flags.get("enable_" + config.removesuffix("_config"))


def _derived(code: str, names: SettingNames | None) -> bool:
    """Whether a config read is an attribute the model's config class computes rather than a
    field anyone sets (``self.model_config.use_mla``: a property, from the checkpoint)."""
    if names is None:
        return False
    parts = code.split(".")
    if len(parts) < 2 or parts[-2] != "model_config" or parts[-1].startswith("_"):
        return False
    declared = names.fields.get("model_config")
    return declared is not None and parts[-1] not in declared


_CODES = re.compile(r"`([^`]+)`")


def _also(flag: str | None) -> str:
    return f" (`{short_code(flag)}`)" if flag else ""


def _message_flags(record: dict[str, Any], names: SettingNames | None) -> str:
    """The options the message names by their dest (``LLM(data_parallel_size=...)``:
    ``--data-parallel-size``), shown; empty when it names none."""
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    found = [f for m in _SNAKE_NAME.finditer(text) for f in [_flag_of(m.group(1), names)] if f]
    return _joined([f"`{short_code(f)}`" for f in dict.fromkeys(found)]) if found else ""


def _flagged(code: list[str], names: SettingNames | None) -> str:
    """The config values, each shown as its option where one sets it."""
    return _joined([f"`{short_code(_flag_of(c, names) or c)}`" for c in dict.fromkeys(code)])


#: "Cannot enable and disable X": a verb after "and"/"or" that goes on a negated clause is no advice.
_NEGATED = re.compile(r"(?:^|(?<=[,;:.]))(?=[^,;:.]*$)[^,;:.]*?\b(?:cannot|can't|can not|not|unable to|failed to|neither|nor|no longer)\b", re.I)


def _looks_like_condition(text: str) -> bool:
    """ "Set ... is not allowed", "use of X is deprecated": the verb is a noun there, no advice."""
    head = text.split(" ", 3)[:3]
    if head[0].lower() in ("you", "please"):
        return False
    return len(head) > 1 and head[1].lower() in ("of", "is", "are", "was", "must", "cannot", "can't", "to")


def _cap(text: str) -> str:
    return text if len(text) <= MAX_REMEDY else text[: MAX_REMEDY - 1].rstrip() + "…"


def _resolved(text: str, knobs: list[dict[str, Any]]) -> str:
    """``gpu_memory_utilization`` -> ``gpu_memory_utilization`` (`--gpu-memory-utilization`):
    the first mention of a setting the record reads, followed by its flag when the text does not
    already name it."""
    for knob in knobs:
        flags = knob.get("flags") or []
        if not flags or flags[0] in text:
            continue
        for name in dict.fromkeys(filter(None, (knob.get("field"), knob["name"]))):
            m = re.search(rf"`?(?<![\w.-]){re.escape(name)}(?![\w-])`?", text)
            if m:
                flag = short_code(flags[0])
                text = text[: m.end()] + f" (`{flag}`)" + text[m.end() :]
                break
    return text


def _display(knob: dict[str, Any]) -> str:
    flags = knob.get("flags") or []
    return f"`{short_code(flags[0] if flags else knob['name'])}`"


def _settings(knobs: list[dict[str, Any]], validated: str | None, *kinds: str) -> list[dict[str, Any]]:
    return [k for k in knobs if k["kind"] in kinds and _settable(k, validated)]


_VALIDATOR_NAMES = frozenset({"__post_init__", "model_post_init"})
_CONFIG_CLASS = re.compile(r"(?:Config|Settings|Options|Args|Arguments)$")


def _validated(record: dict[str, Any]) -> str | None:
    """The settings class (named ``...Config``, ``...Settings``, ``...Options``, ``...Args``) whose
    own validator raises the error (``CacheConfig`` for a ``@field_validator`` method, a
    ``__post_init__`` or a ``validate*`` method of it), else None."""
    site = record["sites"][0]
    qualname = site.get("qualname") or ""
    owner, _, function = qualname.rpartition(".")
    if not owner or "." in owner or "<" in qualname:
        return None
    if not _CONFIG_CLASS.search(owner):
        return None  # a dataclass the code builds (``ParamMeta``), a manifest it reads, a metrics model
    decorators = (site.get("facts") or {}).get("decorators") or []
    if (
        function in _VALIDATOR_NAMES
        or function.lstrip("_").startswith("validate")
        or any(re.match(r"(?:\w+\.)*(?:(?:field|model|root)_)?validator\b", d) for d in decorators)
    ):
        return owner  # a settings class checking what it was given
    return None


def _settable(knob: dict[str, Any], validated: str | None = None) -> bool:
    """A config field is a user's setting when an option sets it, or when its own class's validator
    is what raises (the user builds that config: a project with no command line sets its fields in
    code): a field of an object the code builds (``ParamMeta.shape``, ``MultiModalFieldConfig.dim``,
    ``ModelArchitectureConfig.total_num_hidden_layers`` read from the checkpoint) is read like one
    but no user sets it."""
    if knob["kind"] == "env_var":  # (a dict key read as one: ``video_embeds`` is no environment variable)
        return bool(_ENV_NAME.fullmatch(knob["name"]))
    if knob["kind"] != "config_field":
        return True
    return bool(knob.get("flags")) or (validated is not None and (knob.get("owner") or "").rpartition(".")[2] == validated)


def settable(record: dict[str, Any], knob: dict[str, Any]) -> bool:
    """Whether a knob the record reads is a setting a user gives (see ``_settable``): a field of
    an object the code builds and fills in (``ConsumerXfer.mm_hash``) is read like one, but is none."""
    return _settable(knob, _validated(record))


#: A config's field as the check's own condition reads it (``self.parallel_config.pipeline_parallel_size``).
_CONDITION_CHAIN = re.compile(r"(?<![\w.])(?>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?!\s*\()")
#: A presence test after a config's field (``model_config.pooler_config is not None``): vLLM may fill it itself.
_PRESENCE_AFTER = re.compile(r"\s*(?:is|==|!=)\s*(?:not\s+)?None\b")


def _led_by(settings: list[dict[str, Any]], own: str, names: SettingNames | None) -> str:
    """The settings that lead to a check, shown: the options of the config fields its own condition
    compares (``self.parallel_config.pipeline_parallel_size != 1`` in a model's ``__init__``:
    ``--pipeline-parallel-size``; each an option ``names`` knows for that config's field, none only
    tested for being there) that the knob readers did not resolve, in the order the condition reads
    them, then the settings the record holds (three of them at most, as before: the condition's
    own come on top of those)."""
    found: list[str] = []
    for m in _CONDITION_CHAIN.finditer(own if names is not None else ""):
        field = _config_field(m.group(0))
        flag = names.flags.get(field) if names is not None and field else None
        if flag and not _PRESENCE_AFTER.match(own, m.end()):
            found.append(flag)
    held = {f for k in settings for f in k.get("flags") or []}
    added = [f"`{short_code(f)}`" for f in dict.fromkeys(f for f in found if f not in held)]
    shown = list(dict.fromkeys(_display(k) for k in settings))[:3]
    shown = list(dict.fromkeys([*added, *shown]))
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _settings_shown(record: dict[str, Any], settings: list[dict[str, Any]], basis: str, names: SettingNames | None) -> str:
    """The settings a setting page names: with the condition's own config fields first when the
    settings are what leads to it (:func:`_led_by`), else those the record holds."""
    if basis.startswith("the setting ") and basis.endswith(" leads to it"):
        return _led_by(settings, guard_reads.own_condition(record["sites"][0]) or "", names)
    return _names(settings)


def _config_field(chain: str) -> str | None:
    """The config and field of a chain that reads a config's field (``vllm_config.kernel_config.moe_backend``:
    ``kernel_config.moe_backend``, the last config the chain passes through), else None."""
    parts = chain.split(".")
    held = [i for i, part in enumerate(parts[:-1]) if part.endswith("_config")]
    return f"{parts[held[-1]]}.{parts[held[-1] + 1]}" if held else None


def _names(knobs: list[dict[str, Any]]) -> str:
    return _joined(list(dict.fromkeys(_display(k) for k in knobs)))


def _joined(shown: list[str]) -> str:
    shown = shown[:3]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


#: What a check reads that no user gives (``extract.guard_reads``): the object's own state, the
#: tensors the project's code passes, constants.
_OWN_SOURCES = frozenset({"state", "tensor", "constant"})
#: A message that names a choice a user makes (``mm_encoder_attn_dtype='fp8'``, a backend, what is
#: not supported) or an operation that failed (its cause is elsewhere): the state the check tests
#: may hold it, so it is not called the code's own.
_SAYS_CHOICE = re.compile(
    r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+ ?=|\bbackend\b|\bnot (?:yet )?supported\b|\bunsupported\b|\bonly supports?\b|\bdoes(?: not|n't) (?:yet )?support\b|\bnot available\b|"
    r"\bincompatible\b|\bnot compatible\b|\bfail(?:ed|s|ure)?\b|\berror\b|\btimed? ?out\b|\bonly (?:be )?supported\b|\brequires?\b",
    re.I,
)
#: What a request's media or prompt is, checked as tensors in the code that processes it.
_MEDIA_WORDS = re.compile(r"\b(?:image|video|audio|pixel|frame|prompt|clip|patch)", re.I)


def _own_state(record: dict[str, Any], reads: dict[str, list[str]], text: str, path: str) -> bool:
    """Whether the check tests only the code's own state, tensors and constants, in code that no
    public entry point is seen to reach (an object a user's code drives, a value object it builds,
    says nothing of a bug), with a message that names no choice of the user's and no media."""
    if not reads or not set(reads) <= _OWN_SOURCES or _SAYS_CHOICE.search(text):
        return False
    if _MEDIA_WORDS.search(text) and ("tensor" in reads or "processor" in path or any(p in path for p in _MEDIA_PATHS)):
        return False
    method = record["sites"][0]["qualname"].rpartition(".")[2]
    return method != "__post_init__" and not any(c.get("entry_point") for c in record["meaning"].get("callers") or [])


#: The parallel sizes a check's code names, by how the code spells them (``dcp_world_size``,
#: ``get_tensor_model_parallel_world_size()``, ``tp_size``).
_SIZES = (
    ("decode context parallel", re.compile(r"\bdcp_|decode_context_parallel", re.I)),
    ("prefill context parallel", re.compile(r"\bpcp_|prefill_context_parallel", re.I)),
    ("tensor parallel", re.compile(r"\btp_|\btp\b|tensor_(?:model_)?parallel|_tp_|\btensor[- ]parallel", re.I)),
    ("pipeline parallel", re.compile(r"\bpp_|\bpp\b|pipeline_(?:model_)?parallel|_pp_|\bpipeline[- ]parallel", re.I)),
    ("data parallel", re.compile(r"\bdp_|\bdp\b|data_parallel|_dp_|\bdata[- ]parallel", re.I)),
    ("expert parallel", re.compile(r"\bep_|\bep\b|expert_parallel|_ep_|\bexpert[- ]parallel", re.I)),
)


def _parallel_named(record: dict[str, Any], reads: dict[str, list[str]]) -> str | None:
    """The parallel size the check tests, in words (``impl.dcp_world_size``: "the decode context
    parallel size you set"), from the rank counts its own condition reads (or, with none traced,
    the condition and the message); None when it names none or several the code does not tell apart."""
    shown = " ".join(reads.get("parallel") or [])
    if not shown:
        text = "" if record["message"].get("opaque") else record["message"]["text"]
        shown = (guard_reads.own_condition(record["sites"][0]) or "") + " " + text
    named = [words for words, pattern in _SIZES if pattern.search(shown)]
    return f"the {_joined(named)} size you set" if 0 < len(named) <= 2 else None


#: Where the code of each model architecture lives: its ``config`` is the checkpoint's configuration.
_ARCHITECTURE_PATHS = ("model_executor/models/", "/models/")
#: A field of the checkpoint's configuration as a model's code reads it (``not config.tie_word_embeddings``).
_CHECKPOINT_FIELD = re.compile(r"(?<![\w.])(?:self\.)?(?:config|hf_config|text_config|hf_text_config)(?:\.[A-Za-z_]\w*)+")
_CODE_NAME = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*")
_PLAIN_WORDS = frozenset({"not", "and", "or", "is", "None", "in", "True", "False", "len", "isinstance"})
#: A line of a function's code that assigns a local one field of the checkpoint's configuration
#: (``mla_use_nope = config.mla_use_nope``, an annotation allowed): the local, the field.
_HELD_FIELD = re.compile(rf"(?m)^[^\S\n]*([A-Za-z_]\w*)[^\S\n]*(?::[^=\n]+)?=[^\S\n]*({_CHECKPOINT_FIELD.pattern})[^\S\n]*$")


def _checkpoint_fields(own: str, code: str) -> list[str]:
    """The fields of the checkpoint's configuration an assert in a model's code tests, when it
    tests only those (``assert not config.tie_word_embeddings``, ``config.kv_lora_rank is not
    None``, or a local the code shows assigned one: ``mla_use_nope = config.mla_use_nope``)
    against literals: it fails for a checkpoint of a variant the code does not support, not for a
    state of the project's own; else none."""
    fields = _CHECKPOINT_FIELD.findall(own)
    rest = _STRING.sub("", _CHECKPOINT_FIELD.sub("", own))
    held: dict[str, str] | None = None  # (each local the code assigns a field: the first line that does)
    for name in _CODE_NAME.findall(rest):
        if name in _PLAIN_WORDS or name[:1].isupper():
            continue
        if held is None:
            held = {}
            for found in _HELD_FIELD.finditer(code):
                held.setdefault(found.group(1), found.group(2))
        if name not in held:
            return []
        fields.append(held[name])
    return list(dict.fromkeys(fields))


_OPS_PATHS = ("/ops/", "/kernels/", "/kernel/")
_LAYOUT = re.compile(r"\bis_contiguous\(|\.stride\(|\.data_ptr\(|\.shape\s*(?:!=|==)|(?:!=|==)\s*\w+\.shape\b")


def _operand_check(path: str, own: str, reads: dict[str, list[str]]) -> bool:
    """Whether a check in an op or kernel wrapper tests the layout of its operands (contiguity,
    strides, a shape against the one expected) and nothing a user sets: the project's own code
    made and passed them, whatever the operand is called (``weight`` too)."""
    return (
        any(p in path for p in _OPS_PATHS)
        and "tensor" in reads
        and not set(reads) & {"config", "model", "request", "platform", "parallel"}
        and bool(_LAYOUT.search(own))
    )


_REFUSES = re.compile(r"\bcannot\b|\bmust be one of\b", re.I)
_CONFIG_PRESENT = re.compile(r"(?:not \(?\s*)*[\w.]+\)*")


def _asserts_setting(own: str, reads: dict[str, list[str]], text: str) -> bool:
    """Whether an assert's own condition tests a value the user's config holds: it reads the config
    and nothing of the object's own state or tensors, it is no test that a value is there (``is
    None``, a bare truth test of a config), and its message says what the value cannot be ("Cannot
    enable and disable {name}", "... is not supported with ...")."""
    return (
        bool(_UNSUPPORTED.search(text) or _REFUSES.search(text))
        and set(reads) <= {"config", "constant", "other"}
        and "None" not in own
        and not _CONFIG_PRESENT.fullmatch(own.strip())
    )


#: An attention backend's implementation class, built for each attention layer a model makes with
#: what the model's configuration gives it (ALiBi slopes, a sliding window, a soft cap, the KV
#: cache's dtype): its refusal is the pair of the model and the backend chosen (``--attention-backend``).
_BACKEND_PATHS = ("/v1/attention/backends/",)
_BACKEND_IMPL = re.compile(r"(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*Impl)\.__init__")
_REQUIRES = re.compile(r"\b(?:currently )?(?:supports? only|requires?)\b", re.I)
#: A probe for an optional package or a build's extension (``not has_nixl()``), as the whole condition.
_PROBED = re.compile(r"not\s+\(?\s*(has_[a-z0-9_]+)\(\)\s*\)?")
_MISSING = re.compile(r"\brequires?\b|\bunavailable\b|\bnot (?:found|available|installed)\b|\binstall\b", re.I)
#: What the layer that builds a backend's implementation holds for it already, whatever backend is
#: chosen: ``Attention.__init__`` asserts ``num_heads % num_kv_heads == 0`` before it builds one, and an
#: MLA layer (``MLAAttention``) builds its one with ``alibi_slopes=None``, ``logits_soft_cap=None`` and
#: ``attn_type=AttentionType.DECODER`` always, a sliding window only for a model that names its own
#: backend, and no MLA backend supports one: of an MLA backend's refusals only those of a KV cache
#: dtype or a parallel size are a choice of the user's (s42-verify: 15 of s42-open's 30 were not).
_LAYER_HOLDS = re.compile(r"\bnum_heads\s*%\s*num_kv_heads\b")
_MLA_BACKEND_PATHS = ("/attention/backends/mla/",)
_USER_SETS = re.compile(r"\bkv_cache_dtype\b|\b\w*world_size\b")


#: The weight-transfer API a trainer drives (``vllm/distributed/weight_transfer/``): the info it sends
#: is built as ``init_info_cls(**init_dict)`` / ``update_info_cls(**update_dict)`` from the dict the
#: trainer passes, and ``trainer_init`` is the call the trainer's own process makes.
_TRANSFER_INFO = re.compile(r"\w(?:Update|Init)Info$")
_TRAINER_CALLS = frozenset({"trainer_init", "parse_update_info", "parse_init_info"})


#: A message that says a process it started failed while starting up, its cause reported before it
#: ("Engine core initialization failed. See root cause above.").
_FAILED_EARLIER = re.compile(
    r"\bsee (?:the )?root cause above\b|\bprocess (?:\w+ ){0,2}failed during (?:\w+ ){0,3}(?:initiali[sz]ation|startup)\b|"
    r"\bcreator failed during initiali[sz]ation\b",
    re.I,
)
#: A model's chat format as code (in vLLM, tokenizers/deepseek_v32_encoding.py): what it renders is the request's messages.
_CHAT_ENCODING = re.compile(r"/(?:tokenizers|renderers)/\w+_encoding\.py$")
_MESSAGE_PARAMS = frozenset({"messages", "message", "content", "conversation"})


def _reads_only_messages(reads: dict[str, list[str]]) -> bool:
    """Whether a check reads the messages it was given (and constants) and nothing else."""
    params = reads.get("param") or []
    return bool(params) and set(reads) <= {"param", "constant"} and set(params) <= _MESSAGE_PARAMS


def _attention_backend_refuses(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str) -> str | None:
    """The attention backend's class when a check in its ``__init__`` says what the backend does
    not support or requires (``FlashMLAImpl does not support one of the following: alibi_slopes,
    ...``) of what it was built with, reading no tensor and no probe of the machine (a tensor's
    shape is the code's own contract, a probe the environment's), else None."""
    path, site = _where(record)
    found = _BACKEND_IMPL.fullmatch(site["qualname"])
    if (
        record["kind"] != RAISE
        or found is None
        or not any(p in path for p in _BACKEND_PATHS)
        or not (_UNSUPPORTED.search(text) or _REQUIRES.search(text))
        or set(reads) & {"tensor", "platform", "request", "state"}
        or re.search(r"\bhas_\w+\(|\bis_\w+_(?:available|supported)\(", own)
        or _LAYER_HOLDS.search(own)
        or (any(p in path for p in _MLA_BACKEND_PATHS) and not _USER_SETS.search(own))
    ):
        return None
    return found.group(1)


def _parses_output(reads: dict[str, list[str]], text: str) -> bool:
    """Whether a check in a tool or reasoning parser tests what it parsed of the model's output:
    it reads no setting, request, model configuration or probe, and its message reports no failed
    operation (whose cause is elsewhere)."""
    return not set(reads) & {"config", "request", "model", "platform"} and not _FAILED.match(text)


# (one \W* before the first word, the same texts: in each group it split a run of non-word characters with the last's
# \W+, cubic in the run: 19 s for a message of four words between rules of 800 "=")
_FAILED = re.compile(r"(?:\W*(?:\w+\W+){1,3}?)?failed\b", re.I)


def _shown(code: list[str]) -> str:
    return _joined([f"`{short_code(c)}`" for c in dict.fromkeys(code)])


def _word(name: str, text: str) -> bool:
    return bool(re.search(rf"(?<![\w.]){re.escape(name)}\b|\.{re.escape(name)}\b", text))


def _asserted(settings: list[dict[str, Any]], own: str, around: list[str]) -> list[dict[str, Any]]:
    """The settings that lead to an assert: those its own condition names; when it names none,
    those that came through a caller or a property, unless a guard around it reads a config
    (then the settings select the case the assert is in: it tests something else)."""
    named = [k for k in settings if _word(_field_name(k), own)]
    if named or any(re.search(r"\w_config\b|\benvs\.", g) or any(_word(_field_name(k), g) for k in settings) for g in around):
        return named
    return settings


_STRING = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def _requests(record: dict[str, Any], reads: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The request fields that lead to a check: those its own condition names (itself, through the
    locals it reads, or in the message). A field only a guard around it reads selects the case it
    is in (``if request.chat_request is None: ... if num_choices > 1``), and in a tool or reasoning
    parser a protocol object's field is what the parser built from the model's text
    (``new_call.function.arguments``), not the request, unless the condition reads the request."""
    path, site = _where(record)
    requests = _settings(record["meaning"].get("knobs") or [], _validated(record), "request_param")
    if any(p in path for p in _PARSER_PATHS) and "request" not in reads:
        return []
    own = guard_reads.own_condition(site) or ""
    around = ((site.get("facts") or {}).get("guards") or [])[:-1]
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    said = " ".join([own, text, *(c for shown in reads.values() for c in shown)])
    # (a name the guards hold only as a string is a value compared with: ``type == "json_object"``)
    unquoted = _STRING.sub('""', " ".join([own, *around]))
    requests = [k for k in requests if _word(_field_name(k), unquoted) or not _word(_field_name(k), own + " ".join(around))]
    named = [k for k in requests if _word(_field_name(k), said)]
    if named or any(_word(_field_name(k), g) for k in requests for g in around):
        return named
    return requests


def _field_name(knob: dict[str, Any]) -> str:
    return str(knob.get("field") or knob["name"].lstrip("-").replace("-", "_"))


def _where(record: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    site = record["sites"][0]
    return "/" + site["path"], site


def classify(
    record: dict[str, Any],
    found: str | None,
    reads: dict[str, list[str]] | None = None,
    passed: list[str] | None = None,
    derived: list[str] | None = None,
    names: SettingNames | None = None,
) -> tuple[str, str]:
    """(actor, basis): who must act, and what in the record says so. First rule that applies.
    ``found``: the message's remedy (:func:`remedy`); ``reads``: what the check's own condition
    reads, by source (``extract.guard_reads``); ``passed``: [actor, basis] from what every call
    of its function passes the parameters it tests (``catalogue.callers``), when no rule applies."""
    reads = reads or {}
    meaning = record["meaning"]
    knobs = meaning.get("knobs") or []
    path, site = _where(record)
    facts = site.get("facts") or {}
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    exception = exception_word(record)
    handler = facts.get("handler") or ""
    guards = " ".join(facts.get("guards") or [])
    kind = record["kind"]
    own = guard_reads.own_condition(site) or ""
    requests = _requests(record, reads)
    settings = _settings(knobs, _validated(record), "cli_flag", "config_field", "env_var")
    if kind == ASSERT:
        settings = _asserted(settings, own, [g for g in facts.get("guards") or []][:-1])
    weight_name = _weight_name(record, kind, text)
    if weight_name:  # (before "report it": the name is the checkpoint's, whatever the message asks)
        return (
            "model",
            f"the check tests the name of a weight the checkpoint holds (`{weight_name}`, of the loader's loop over the checkpoint's weights): "
            "a name this loader does not know",
        )
    if _REPORT.search(text):
        return "internal", "the message itself says to report it"
    if _INVARIANT.search(text):
        return "internal", "the message states what the code's own order should have done by then"
    owner = site["qualname"].partition(".")[0]
    if (kind == RESPONSE or exception in _HTTP_EXCEPTIONS) and owner.endswith("Server") and "entrypoints/" not in path:
        return "internal", f"answered by a server {_project(record)} runs for its own processes (`{owner}`): the request is its own client's"
    if kind == RESPONSE:
        return "request", "the server answers a request with this error response"
    if exception in _ARGPARSE_EXCEPTIONS:
        return "setting", f"raised as `{exception}`, while a command-line option's value is parsed"
    seed68 = _rules3_early(record, reads, own, text, handler, names)  # (s45-rules3)
    if seed68 is not None:
        return seed68
    seed69 = _rules46_early(record, reads, own, text, names)  # (s46-rules)
    if seed69 is not None:
        return seed69
    seed70 = _seed70_early(record, reads, own, text, found, names)  # (s46-rules2)
    if seed70 is not None:
        return seed70
    seed71 = _s71_early(record, reads, own, text, names)  # (s46-rules3)
    if seed71 is not None:
        return seed71
    seed72 = _seed72_early(record, reads, own, text, names)  # (s46-rules4)
    if seed72 is not None:
        return seed72
    seed73 = _s73_early(record, reads, own, names)  # (s46-rules5)
    if seed73 is not None:
        return seed73
    if found and settings and any(f in found for k in settings for f in k.get("flags") or []):
        return "setting", f"the message says to change the setting {_names(settings)}"
    chosen = _CHOOSE_ANOTHER.match(found or "")
    if chosen:  # ("Select a different gdn_prefill_backend for this model": the setting, not the model)
        return "setting", f"the message says to change the setting `{chosen.group(1)}`"
    if requests and not settings:
        return "request", f"the request field {_names(requests)} leads to it"
    if exception in _REQUEST_EXCEPTIONS and not requests and _UNSUPPORTED.search(text) and re.search(r"\bbackend\b", text, re.I):
        return "setting", "the message says the backend chosen does not support it"
    if exception in _REQUEST_EXCEPTIONS:
        return "request", f"raised as `{exception}`, the error a server answers an invalid request with"
    if exception in ("ImportError", "ModuleNotFoundError") or re.search(r"\bImportError\b|\bModuleNotFoundError\b", handler) or _INSTALL.search(text):
        return "environment", "a package that is not installed (or cannot be imported) leads to it"
    if (found and _UPGRADE.match(found)) or _OLD_PACKAGE.search(text):
        return "environment", "the installed package lacks what it needs, or the message says to update it"
    if _UNAVAILABLE.match(text) and _NONE_GUARD.fullmatch(guards.strip()):
        return "environment", "a package that is not installed (or cannot be imported) leads to it: the check finds it missing"
    if _DRIVER_HANDLER.search(handler):
        return "environment", f"raised or logged while handling `{short_code(handler)}`: the system or a driver refused"
    filled = _filled_field(record, own, names) if kind == ASSERT else None
    if filled:
        return "internal", f"an assert that `{filled}` is there, which its config class gives a value itself when none is set: it narrows the code's own value"
    present = _PRESENT.fullmatch(own.strip()) if kind == ASSERT else None
    if present and any(p in path for p in _FEATURE_PACKAGES.get(present.group(1), ())):
        return (
            "internal",
            f"an assert that `{present.group(1)}` is set, in that feature's own code: it is built only when the feature is configured, "
            "so the assert narrows the code's own value",
        )
    chosen_value = _CHOSEN_VALUE.fullmatch((facts.get("guards") or ["", ""])[-2].strip()) if kind == ASSERT and len(facts.get("guards") or []) >= 2 else None
    if chosen_value and _BOOLEAN_LOCAL.fullmatch(own.strip()):
        return (
            "setting",
            f"an assert on what the code worked out (`{short_code(own.strip()[5:-1])}`) only under the setting `{chosen_value.group(1)}` "
            f"{chosen_value.group(2)}: that value of the setting does not go with what the rest of the run chose",
        )
    if settings:
        return "setting", f"the setting {_led_by(settings, own, names)} leads to it"
    found_read = _CONFIG_READ.findall(guards)
    if kind == ASSERT:  # (an assert's guard selects a case, unless its message names the field it read)
        found_read = [(c, f) for c, f in found_read if re.search(rf"\b{f}\b", text)]
    read = list(dict.fromkeys(f"`{c}.{f}`" for c, f in found_read))
    if read:
        return "setting", "the check reads the configuration " + _joined(read)
    off = _FEATURE_OFF.fullmatch(own.strip())
    if off and own.strip().startswith("not ") != own.strip().endswith("is None") and kind in (RAISE, ASSERT, LOG):
        return "setting", f"the check finds `{off.group(1)}` unset: the feature it configures is not enabled"
    # (after the settings: a timeout a setting bounds is that setting's)
    if re.search(r"\b(?:ConnectionError|TimeoutError|ConnectionRefusedError)\b", handler):
        return "environment", f"raised or logged while handling `{short_code(handler)}`: a service it connects to did not answer"
    cli_args = list(dict.fromkeys(_CLI_ARGS.findall(guards)))
    if cli_args:
        return "setting", "the check tests the command's arguments " + _joined([f"`args.{a}`" for a in cli_args])
    transfer = _TRANSFER_PARAMS.findall(guards)
    if transfer and kind == ASSERT and _PARAMS_PRESENT.fullmatch(own.strip()):
        # (s43-verify's W on a mooncake page: the request's parameters were read to queue it)
        return (
            "internal",
            "an assert that the request's transfer parameters are there, under a guard on what they ask: it re-checks what the code that queued the request tested",
        )
    if transfer and _asks_transfer(own, guards):
        return (  # (the innermost guard's: ``do_remote_decode`` under ``not params.get("do_remote_prefill")``)
            "request",
            f"{_TRANSFER_BASIS} (`{transfer[-1]}`): "
            "`kv_transfer_params` and `ec_transfer_params` are fields of the request, set by the client or the P/D router that sends it",
        )
    if _FROM_REQUEST.search(text) or (_REQUEST_GUARD.search(guards) and not _seed70_request_on_the_way(record, reads, own)):
        return "request", "the message or the check names what the request carries"
    if requests:
        return "request", f"the request field {_names(requests)} leads to it"
    flag = _FLAG.search(text)
    if flag:
        return "setting", f"the message names the option `{flag.group(0)}`"
    env = _ENV_NAME.search(text)
    if env and env.group(0).startswith(_env_prefixes(record)):
        return "setting", f"the message names the environment variable `{env.group(0)}`"
    if kind in (RAISE, LOG) and (_FETCH.search(text) or _FETCH.search(handler)):
        return "environment", "a network fetch failed: the network, or the server the URL names"
    if kind == NATIVE and (_SYSCALL.search(text) or _SYSCALL.search(guards)):
        return "environment", "a call to the operating system failed (the `errno` it reports says why)"
    if exception == "TimeoutError" and kind == RAISE and (_WAITED.search(guards) or _WAITED_TEXT.search(text)):
        return "internal", "it waited for a process, server or peer that did not answer in time: what held that up comes earlier"
    hardware = _DEVICE.search(text) if kind == NATIVE else _HARDWARE.search(text)  # (a kernel's "must be CUDA" is its argument)
    # (the check's own condition: a platform test around it only selects the path it is on)
    # (``x.dtype in [torch.uint8, current_platform.fp8_dtype()]``: the platform names what the code's own tensor should be)
    if kind in (RAISE, LOG) and _GENERATION.search(text):  # (not every message naming one: "gfx942 reads ... only")
        hardware = _GENERATION.search(text)
    placed = _placed_tensors(own) if kind == ASSERT else []
    if placed:
        return "internal", "an assert on the device the project's own code put its tensors on (" + ", ".join(
            f"`{short_code(c)}`" for c in dict.fromkeys(placed)
        ) + "): not the machine it runs on"
    backpressure = _backpressure(kind, exception, handler) if not hardware else None
    if backpressure:
        return "environment", backpressure
    if hardware or (kind != NATIVE and _probes_platform(own, text) and "tensor" not in reads) or exception in _ENV_EXCEPTIONS:
        return "environment", "the check reads the hardware, platform or system it runs on"
    if reads.get("platform") and set(reads) <= {"platform", "constant"} and kind != NATIVE:  # (with more in it, the probe is one condition of several)
        return "environment", "the check probes the machine or a package it runs with: " + _shown(reads["platform"])
    if re.search(r"\balready registered\b", text):
        return "caller", "a name is registered twice: a plugin or your code registers a name that is taken"
    server_args = _server_args(reads)
    if server_args:  # (s45-rules2, W5: ``req.app.state.args.X`` is an option the server started with)
        return "setting", "the check reads the server's command-line options: " + _joined([_server_option(d, names) for d in server_args])
    if reads.get("request") and all(re.search(r"\.app\b", c) for c in reads["request"]) and set(reads) <= {"request", "constant"}:
        return "internal", "the check reads the server's own state (" + _shown(reads["request"]) + "), set when it starts, not what the request carries"
    if (
        any(p in path for p in _REQUEST_PATHS)
        and reads.get("param") == ["app"]
        and "." not in site["qualname"]
        and any(w in site["qualname"] for w in _APP_BUILD)
    ):
        if reads.get("config"):
            return "setting", "read while the server is built (`" + short_code(site["qualname"]) + "(app)`): the server's option " + _shown(reads["config"])
        return "internal", f"`{short_code(site['qualname'])}(app)` runs once while the server is built, not for a request"
    made = _tokenizer_made(site, own) if kind != ASSERT and not reads.get("request") else None
    if made and any(p in path for p in _REQUEST_PATHS):
        return (
            "model",
            f"{_TOKENIZER_BASIS} (`{made}`, a tokenizer's output, no field of the request): "
            "the tokenizer the model loads gives it in a form this code does not take",
        )
    if (
        any(p in path for p in _REQUEST_PATHS)
        and kind != ASSERT
        and not _FAILED.match(text)
        and not _OWN_STATE.search(text)
        and not (kind == LOG and _BROAD_HANDLER.match(handler.strip()))
    ):
        return "request", f"raised while `{short_code(site['qualname'])}` handles a request"
    method = site["qualname"].rpartition(".")[2]
    in_model = (
        any(p in path for p in _MODEL_PATHS) and not _RUNTIME_INPUT.match(method) and not any(p in path for p in _MEDIA_PATHS)
    )  # (a video decoder's options are no model's)
    # a model file's check on its own state at run time says nothing about the model loaded
    model_setup = bool(_MODEL_SETUP.fullmatch(method) or _MODEL_TEXT.search(text)) and not _DISPATCH.search(text)
    # (the fields a model's processor declares, ``required_fields``, are its code's, not the request's)
    if kind == RAISE and path.endswith("/multimodal/parse.py") and ("tensor" in reads or "param" in reads) and not re.search(r"_fields\b", own):
        return "request", "the multimodal input the request carries (its items or embeddings) is not of the shape or kind the shared parser takes"
    if kind == ASSERT and "/transformers_utils/configs/" in path and method == "__init__" and owner.endswith("Config") and _TYPE_TEST.fullmatch(own.strip()):
        return (
            "model",
            f"an assert on the type of a field of the model's configuration (`{owner}`, read from its config.json): the checkpoint's config is not what this class reads",
        )
    if re.match(r"_parse_and_validate\w*", method) and _UNSUPPORTED.search(text):
        return "request", "the input the request carries is of a kind this model does not take"
    if kind != NATIVE and _UNSUPPORTED.search(text) and re.search(r"\bbackend\b", text, re.I):
        return "setting", "the message says the backend chosen does not support it"
    if kind != ASSERT and _YOU_GAVE.search(text):
        return "request", "the message says what the input you gave lacks"
    if kind != ASSERT and _PAIRED_ITEMS.search(text):
        return "request", "the check pairs the media items one request carries (as many audio as video items): the request's items do not pair up"
    if kind != ASSERT and _REQUEST_INPUT.search(text):
        return "request", "the check limits the media or prompt one request carries"
    if any(p in path for p in _MEDIA_PATHS) and _MEDIA.search(text):
        return "request", "the media a request carries did not decode as the check expects"
    if kind == RAISE and exception == "TypeError" and re.fullmatch(r"__\w+__", method) and method not in ("__init__", "__post_init__"):
        return "caller", f"`{short_code(site['qualname'])}` is given a value of a type it does not take"
    loader = _config_file_read(record)
    if loader:  # (s45-rules, O33 of s44-judge: before "an object passed in": the object is the file's value)
        return "setting", f"{_CONFIG_FILE_BASIS} (`{loader}`): the value it checks is one of that file's"
    # the library's API: the nearest caller is one of its public methods (further up the path the
    # arguments have passed through the project's own code, settings among them)
    library = [c for c in (meaning.get("callers") or [])[:1] if c.get("entry_point") == "library"]
    if kind == RAISE and (exception == "TypeError" or ".implements_" in guards) and _PASSED_IN.search(guards) and (library or not in_model):
        return "caller", "the check tests what an object passed in is or can do"
    if any(p in path for p in _PARSER_PATHS) and kind != ASSERT and not _PLUGIN.search(text):
        if re.search(r"\btokenizer\b|\bparser\b", text, re.I):
            return "setting", "the tool or reasoning parser chosen does not fit the model or its tokenizer"
    if any(p in path for p in _PARSER_PATHS) and kind != ASSERT and re.search(r"pars|extract", method):
        return "model", "the tool or reasoning parser could not read what the model generated"
    if kind == ASSERT and "layers/quantization/" in path and owner.endswith("Config") and "self." in guards:
        return "model", "the check reads the quantization config the checkpoint carries"
    if kind == RAISE and _operand_check(path, own, reads):
        return "internal", "the check tests the layout of the tensors the project's own code passes: " + _shown(reads["tensor"])
    # (the check's own condition: a rank count in a guard around it selects the case it is in)
    if ((kind != ASSERT and (_PARALLEL.search(text) or _PARALLEL_GUARD.search(own))) or (kind != NATIVE and reads.get("parallel"))) and not _global_size_only(
        record, reads, own, text
    ):
        return "setting", "the message or the check names the parallel sizes the deployment is set to"
    seed66 = _rules2_decided(record, reads, own, text, handler)
    if seed66 is not None:
        return seed66
    seed67 = _s45_decided(record, reads, own, text, names)
    if seed67 is not None:
        return seed67
    if _MODEL_WORDS.search(text) or (in_model and kind != ASSERT and re.search(r"\bconfig\b|\bweight|\bcheckpoint|quant", guards + text)):
        return "model", "the check reads the model, its configuration or its checkpoint"
    if "/lora/" in path and kind != ASSERT and _LORA.search(text):
        return "model", "the check reads the LoRA adapter it loads"
    if exception == "NotImplementedError" and not text and not facts.get("guards"):
        return "caller", f"`{short_code(site['qualname'])}` is left for a subclass or plugin to implement"
    if kind != ASSERT and _PLUGIN.search(text):
        return "caller", "the message says what a class or function passed in must be"
    if (
        kind in (RAISE, LOG)
        and _UNSUPPORTED.search(text)
        and _PLATFORM_OPS.search(text)
        and re.fullmatch(r"_?(?:xpu|rocm|hip|tpu|hpu|neuron|cpu|mps)_ops\.py", path.rpartition("/")[2])
    ):
        return "environment", "the platform's own operations lack it: the message names the platform it runs on"
    if kind in (RAISE, LOG) and _UNSUPPORTED.search(text) and not in_model and _COMBINATION.search(text) and not _DISPATCH.search(text):
        return "setting", "the message says a combination of features, settings or model is not supported"
    if any(p in path for p in _SETTING_PATHS) and kind != ASSERT and not in_model:
        return "setting", f"raised while the configuration is checked (`{short_code(site['path'])}`)"
    if library and exception in ("ValueError", "TypeError", "KeyError", "IndexError") and kind == RAISE:
        return "caller", f"raised for the arguments of `{short_code(library[0]['qualname'])}`, part of the library's API"
    if (
        in_model
        and model_setup
        and kind != ASSERT
        and (exception in ("ValueError", "NotImplementedError", "TypeError") or re.search(r"not supported|unsupported|only supports?", text, re.I))
    ):
        return "model", "raised in the code for the model it loads"
    if kind == NATIVE and re.search(r"not supported|unsupported|only supports?|must be one of", text, re.I):
        if path.endswith(".rs"):
            return "model", "the message says what it does not support of what the model provides"
        return "model", "a kernel that does not support the model's shapes or data types"
    if derived and kind in (RAISE, ASSERT, LOG) and (_UNSUPPORTED.search(text) or _MODEL_WORDS.search(text) or re.search(r"\bmodels?\b", text, re.I)):
        return "model", "the check reads what the project derives from the model's configuration " + _shown(derived)
    if reads.get("model") and kind not in (ASSERT, NATIVE) and not _DISPATCH.search(text):
        return "model", "the check reads the model's own configuration " + _shown(reads["model"])
    if found:
        if _ASKS_REQUEST.match(found):  # ("Please request a smaller truncation size": what the request asks for)
            return "request", "the message says what to ask for in the request instead"
        if _RETRY.search(text):
            return "environment", "a passing condition (load, capacity, a service it depends on): the message says to try again"
        if _API_CHANGE.search(text):  # ("Passing X to generate() is deprecated ... pass Y instead": the call your code makes)
            return "caller", "the message says how the code that calls it should call it instead"
        waited = _waited(kind, text)
        if waited:  # ("Timed out waiting for ...; adjust with X.transfer_timeout": the peer was slow, X bounds the wait)
            return waited
        return "setting", "the message says what to change"
    checkpoint = (
        _checkpoint_fields(own, (site.get("snippet") or {}).get("code") or "") if kind == ASSERT and any(p in path for p in _ARCHITECTURE_PATHS) else []
    )
    if checkpoint:
        return "model", "an assert on the checkpoint's own configuration " + _shown(checkpoint) + ": a variant this code does not support"
    # (a presence test there, ``assert patch.indices is not None`` under ``if sparse:``, narrows the
    # code's own value: what the checkpoint holds is tested by its shapes, names and values)
    if kind == ASSERT and any(p in path for p in _MODEL_PATHS) and _WEIGHT_LOADER.fullmatch(method) and not _PRESENCE.fullmatch(own.strip()):
        return "model", "an assert in the code that loads the checkpoint's weights: the checkpoint does not hold what it expects"
    if kind in (RAISE, ASSERT) and _WEIGHT_LOADER.fullmatch(method) and _LOADED.search(own) and not _PRESENCE.fullmatch(own.strip()):
        # (in any layer's loader: ``loaded_weight`` is the checkpoint's tensor, whatever file loads it)
        return "model", "the check tests the checkpoint's weight it loads (" + _shown(_LOADED.findall(own)) + "): the checkpoint does not fit this code"
    if kind in (RAISE, NATIVE, LOG) and _STOPPED.search(text):
        return "internal", "a process or channel it depends on had already stopped: what stopped it comes earlier"
    if kind == RAISE and _REGISTER.fullmatch(method) and _REGISTRY.search(owner) and exception in ("ValueError", "TypeError", "KeyError"):
        return "caller", f"raised for the arguments given to `{short_code(site['qualname'])}`, which registers a name"
    # (an assert too, when what it tests of the config comes through the config's getter and is no
    # presence test: ``"+op" in custom_ops`` of ``get_cached_compilation_config()``; an assert that
    # a config is there, or with the object's state beside it, tests the code's own use of it)
    if reads.get("config") and (kind in (RAISE, LOG) or (kind == ASSERT and _asserts_setting(own, reads, text))):
        return "setting", "the check reads the configuration " + _shown(reads["config"])
    # (a parser's whole input is the model's text: what its helpers check came from it, unless the
    # check reads a setting, the request or the model's configuration)
    if any(p in path for p in _PARSER_PATHS) and kind in (RAISE, LOG) and _parses_output(reads, text) and not _BROAD_HANDLER.match(handler.strip()):
        return "model", "the tool or reasoning parser could not read what the model generated"
    if kind == RAISE and "/weight_transfer/" in path and (_TRANSFER_INFO.search(owner) or method in _TRAINER_CALLS):
        return (
            "caller",
            f"raised for what the trainer's code passes the weight-transfer API (`{short_code(site['qualname'])}`): the init or update info it sends, or the call it makes",
        )
    if kind == RAISE and _FAILED_EARLIER.search(text):
        return "internal", "a process it waits for had already stopped: it failed while starting up, and what stopped it comes earlier"
    if kind == RAISE and _CHAT_ENCODING.search(path) and _reads_only_messages(reads):
        return "request", "the chat messages the request carries do not fit this model's chat format (a role, an order or a content part it does not take)"
    if kind == RAISE and site["qualname"] == "__getattr__" and exception == "AttributeError":
        return (
            "caller",
            "a module's `__getattr__`: the code that imports or reads a name this module does not have (this version may have renamed or removed it)",
        )
    backend = _attention_backend_refuses(record, reads, own, text)
    if backend:
        return (
            "setting",
            f"the attention backend's implementation `{backend}` says what it does not support of what its layer is built with (the model's attention, "
            "or a KV cache dtype or parallel size you set): the backend chosen, or the one chosen for you, does not fit them",
        )
    if kind == RAISE and method == "get_placeholder_str" and "modality" in (reads.get("param") or []) and re.search(r"\bmodality\b", text):
        return "request", "the input the request carries is of a kind this model does not take (the modality of a part of its prompt)"
    probe = _PROBED.fullmatch(own.strip())
    if probe and kind in (RAISE, LOG) and _MISSING.search(text):
        return (
            "environment",
            f"the check probes for an optional package or extension (`{probe.group(1)}()`) and finds it missing: a package that is not installed, or too old, leads to it",
        )
    if kind in (RAISE, LOG) and _own_state(record, reads, text, path):
        return "internal", "the check tests only what the code itself holds or computes: " + _shown([c for source in sorted(reads) for c in reads[source]])
    private = _private_state(own)
    if kind == RAISE and private and not _SAYS_CHOICE.search(text) and not _NOT_BOOKKEEPING.search(text) and "/weight_transfer/" not in path:
        return "internal", "the check tests only the object's own private bookkeeping (" + _shown(private) + "): the order of its own calls"
    if kind == ASSERT and passed and _MODEL_PASSED in passed[1] and not _PRESENCE.fullmatch(own.strip()):  # (``hidden_act=adapter_config.hidden_act``)
        return passed[0], passed[1]
    tokenizer = _tokenizer_read(path, own, (site.get("snippet") or {}).get("code") or "") if kind == ASSERT else None
    if tokenizer:
        return (
            "model",
            f"an assert on the tokenizer the model loads (`{tokenizer}`): the tokenizer (`--tokenizer`, or the model's own) is not what this code expects",
        )
    quantization = _quantization_read(path, reads, own) if kind == ASSERT else []
    if quantization:
        return (
            "model",
            f"{_QUANTIZATION_BASIS} (" + _shown(quantization) + ", built from its `quantization_config` "
            "by the config class's `from_config`): a combination of its quantization settings this code does not support",
        )
    if kind == ASSERT:
        return "internal", "an assert with no setting, request or model a user controls"
    if (
        kind == NATIVE
        and path.endswith(".rs")
        and (site.get("native") or {}).get("macro") == "#[error]"
        and _CARRIES.search((site.get("snippet") or {}).get("code") or "")
    ):
        # (a variant with a source field, a "#[source] error" or a "#[from]" one: it is built from
        # whatever error it wraps, a parse of the model's output or a file it could not load)
        return "internal", "an error variant that wraps the error it carries (its source field): that error is the cause"
    if kind == NATIVE and path.endswith(".rs"):
        return "internal", "a check in the project's own Rust code, with no setting, request or model it reads"
    if kind == NATIVE:
        return "internal", "a check inside a kernel, on what the project's own code passes it"
    if kind == LOG and _BROAD_HANDLER.match(handler.strip()):
        return "internal", "logged for an exception it caught: that exception is the cause"
    if passed:
        return passed[0], passed[1]
    decided = (
        _open_decided(record, reads, own, text)
        or _rules2_open(record, reads, text)
        or _s45_open(record, reads, text)
        or _rules3_open(record)
        or _opens46_open(record, reads, text)
        or _opens46b_open(record, reads, text)
        or _opens46c_open(record, reads, text)
        or _seed70_open(record, reads, text, names)
        or _s71_open(record, own)
    )
    if decided is not None:
        return decided
    return "internal", "no setting, request, model or environment a user controls leads to it"


# (a field attribute of a thiserror variant that makes it wrap another error: ``#[source]``, ``#[from]``)
_CARRIES = re.compile(r"#\[(?:source|from)\]")


def _placed_tensors(own: str) -> list[str]:
    """The tensors an assert's whole test places on a device, each conjunct of the form
    x.device.type == "cuda" (on a name or a chain of names); else []. ``own`` is the assert's own
    condition, its test negated."""
    try:
        tree = ast.parse(own, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return []
    if isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not):  # (an assert's own condition is its test negated)
        tree = tree.operand
    else:
        return []
    parts = tree.values if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And) else [tree]
    found: list[str] = []
    for part in parts:
        if not (
            isinstance(part, ast.Compare)
            and len(part.ops) == 1
            and isinstance(part.ops[0], ast.Eq)
            and isinstance(part.comparators[0], ast.Constant)
            and isinstance(part.comparators[0].value, str)
            and isinstance(part.left, ast.Attribute)
            and part.left.attr == "type"
            and isinstance(part.left.value, ast.Attribute)
            and part.left.value.attr == "device"
        ):
            return []
        tensor = part.left.value.value
        while isinstance(tensor, ast.Attribute):
            tensor = tensor.value
        if not isinstance(tensor, ast.Name):
            return []
        found.append(ast.unparse(part.left.value.value))
    return found


def _private_state(own: str) -> list[str]:
    """The private attributes (``self._future``) the condition tests, when it tests nothing else:
    no other name, no call but a method of one of them with no argument; else []."""
    try:
        tree = ast.parse(own, mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[str] = []
    chains: set[int] = set()
    for node in ast.walk(tree):
        if (
            type(node) is ast.Attribute
            and type(node.value) is ast.Name
            and node.value.id == "self"
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"self.{node.attr}")
            chains.add(id(node.value))
    for node in ast.walk(tree):
        if type(node) is ast.Name and id(node) not in chains:
            return []
        if type(node) is ast.Call and (node.args or node.keywords or type(node.func) is not ast.Attribute):
            return []
        if type(node) in (ast.Subscript, ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.Await):
            return []
    return list(dict.fromkeys(found))


def _probes_platform(own: str, text: str) -> bool:
    """Whether the check's own condition tests the platform or hardware as its cause: a platform
    test that is negated beside other conditions (``dp > 1 and not current_platform.is_tpu()``),
    under a message that names no device or platform, only exempts a platform from a check of
    something else (the setting is the move there)."""
    if not _HARDWARE_GUARD.search(own):
        return False
    if _NAMES_DEVICE.search(text):
        return True
    node = parse_guard(own)
    if not (type(node) is ast.BoolOp and type(node.op) is ast.And):
        return True
    probes = [v for v in node.values if _HARDWARE_GUARD.search(ast.unparse(v))]
    exempts = all(type(v) is ast.UnaryOp and type(v.op) is ast.Not and type(v.operand) is ast.Call for v in probes)
    return not (exempts and len(probes) < len(node.values))


def _noun(record: dict[str, Any]) -> str:
    """What the entry is, in the sentence: an error, a warning (a log's level), an error response."""
    if record["kind"] == LOG:
        return "warning" if (record.get("log") or {}).get("level") == "warning" else "logged error"
    return "error response" if record["kind"] == RESPONSE else "error"


def _env_prefixes(record: dict[str, Any]) -> tuple[str, ...]:
    """The prefixes of environment variables the project reads (``VLLM_`` for vllm)."""
    return (record["repo"]["name"].upper().replace("-", "_") + "_",)


def _project(record: dict[str, Any]) -> str:
    return f"{record['repo']['owner']}/{record['repo']['name']}"


_SAYS = {
    "setting": "A setting of yours ({what}) leads to this {noun}.",
    "request": "The request you sent ({what}) leads to this {noun}; the server is fine.",
    "model": "The model or checkpoint you load leads to this {noun} ({what}).",
    "environment": "Your environment ({what}) leads to this {noun}.",
    "caller": "Your code ({what}) leads to this {noun}.",
    "log_error": "{project} logs this {noun}; the code shows no setting, request, model or environment of yours that leads "
    "to it: if it comes with a failure, it is likely a bug.",
    "log_unseen": "{project} logs this {noun} and goes on; the code shows no setting, request field, model or environment check "
    "of yours on the way to it, so errcat cannot tell whose it is: if the message names something you set, sent or "
    "load, check that it is what you meant.",
    "log": "Nobody has to act: {project} logs this {noun} and goes on ({what}); act only if what it reports is not what you meant.",
    "model_output": "What the model generated does not have the form the tool or reasoning parser expects ({what}).",
    "model_code": "This {noun} is raised in the code for the model architecture you load ({what}): the model or checkpoint, "
    "or the input you give it, does not fit what that code expects.",
    # (in a function that builds the model, reads its config or loads its weights: no input to ask about; seed 67's judge)
    "model_setup": "This {noun} is raised in the code for the model architecture you load ({what}): the model or checkpoint does "
    "not fit what that code expects.",
    "internal_unseen": "The code shows no setting, request field, model or environment check of yours on the way to this {noun}, "
    "so errcat cannot tell whose move it is: if the message names something you set, sent or load, that is "
    "what to change; if it names nothing of yours, this is likely a bug in {project}.",
    "stopped": "This {noun} reports that a process or channel {project} depends on had already stopped ({what}): "
    "whatever stopped it is the cause, and it is reported earlier, in the log or the output before this one.",
    "waited": "This {noun} reports that a process, server or peer {project} waits on did not answer (or finish) in time ({what}): "
    "whatever held it up (a crash, a hang, a slow start on a loaded machine) is the cause, and it is likely reported "
    "earlier, in the log or the output before this one.",
    "caught": "{project} logs this {noun} for an exception it caught, whatever it was ({what}): that exception "
    "is the cause (the line may not show it: not every such log prints the exception or its traceback); its own "
    "message says whose move it is.",
    "wrapped": "This {noun} wraps another error it carries ({what}): that error is the cause (printed after this one, as its "
    'source or "caused by"), and its own message says whose move it is.',
    "rewrapped": "This {noun} re-raises an error {project} caught ({what}) with that error's own message, or none: the caught error "
    'is the cause (Python prints it above this one, then "The above exception was the direct cause of the following exception"), '
    "and its own message says whose move it is.",
    # (s46-rules3, O19 of s46-judge2: ``raise X(...) from error`` in ``except BaseException as error``)
    "chained": "This {noun} is raised from an exception {project} caught ({what}), chained as its cause: that exception is what "
    'failed (Python prints it above this one, then "The above exception was the direct cause of the following exception"), '
    "and its own message says whose move it is.",
    "internal": "Nobody outside {project} has to change anything: {project} reached a state its code does not expect ({what}); this is likely a bug.",
}


def _steps(record: dict[str, Any], actor: str, basis: str, found: str | None, reads: dict[str, list[str]], names: SettingNames | None = None) -> list[str]:
    meaning = record["meaning"]
    knobs = meaning.get("knobs") or []
    fix = meaning.get("fix")
    steps: list[str] = []
    if found:
        steps.append(f"Do what the message says: {found}")
    if fix and actor != "internal" and (not knobs or any(_settable(k, _validated(record)) for k in knobs)):
        steps.append(f"Change what the check tests: {fix}")
    settings = _settings(knobs, _validated(record), "cli_flag", "config_field", "env_var")
    requests = _requests(record, reads)
    decided = (
        _decided_steps(record, actor, basis)
        or _rules2_steps(record, actor, basis)
        or _s45_steps(record, actor, basis, names)
        or _rules45_steps(actor, basis)
        or _rules3_steps(actor, basis)
        or _opens46_steps(record, actor, basis)
        or _opens46b_steps(record, actor, basis)
        or _opens46c_steps(record, actor, basis, names)
        or _rules46_steps(actor, basis)
        or _seed70_steps(record, actor, basis)
        or _s71_steps(record, actor, basis, names)
        or _seed72_steps(record, actor, basis, names)
        or _s73_steps(actor, basis)
    )
    if decided:
        steps.extend(decided)
    elif actor == "setting" and "feature it configures" in basis:
        steps.append(
            f"Enable the feature `{basis.split('`')[1]}` configures{_also(_feature_flag(basis.split('`')[1], names))} in the options you start with (it is None while the feature "
            "is off), or leave out what needs it."
        )
    elif actor == "setting" and basis.startswith("the attention backend's implementation "):
        steps.append(
            f"Choose another attention backend with `--attention-backend` (its implementation `{basis.split('`')[1]}` does not support what the "
            'condition under "When it is raised" tests), or change what it tests if you set it (`--kv-cache-dtype`, a parallel size), '
            "or run a model this backend supports."
        )
    elif actor == "setting":
        shown = _what(record, actor, basis, reads, names)
        if settings and not fix:
            steps.append(
                f'Check the value you give {_settings_shown(record, settings, basis, names)}: the condition under "When it is raised" is what it fails.'
            )
        elif not settings and not fix and shown.startswith("`--") and names is not None and set(_CODES.findall(shown)) <= set(names.flags.values()):
            steps.append(f'Check the value you give {shown}: the condition under "When it is raised" is what it fails.')
        elif not settings:
            steps.append('Check the options and config values you pass against the condition under "When it is raised".')
    elif actor == "request":
        if requests and not fix:
            steps.append(f'Check {_names(requests)} in your request against the condition under "When it is raised".')
        if basis.startswith("the chat messages"):
            steps.append(
                'Check the messages in your request (their roles, their order and the types of their content parts) against the condition under "When it is raised".'
            )
        if "modality of a part of its prompt" in basis:
            steps.append("Send only the kinds of input this model takes (the message names them), or use a model that takes this one.")
        if basis.startswith(_TRANSFER_BASIS):
            steps.append(
                "Check the transfer parameters the client or the P/D router sends with the request (`kv_transfer_params`, `ec_transfer_params`) "
                'against the condition under "When it is raised" and against what this instance is set up to do (`--kv-transfer-config` '
                "or `--ec-transfer-config`, its role): a request meant for another instance is routed to this one."
            )
        else:
            steps.append(_server_flag_step(record) or "Send the request again once it is corrected; nothing needs to change on the server.")
    elif actor == "model" and "what the model generated" in basis:
        steps.append(
            "Check that the tool or reasoning parser you chose is the one for this model; if it is, the model "
            "wrote output the parser cannot read: send the request again, or adjust the prompt or the tools."
        )
    elif actor == "environment" and "service it connects to" in basis:
        steps.append("Check that the service or process it connects to is running and reachable, then try again.")
    elif actor == "model" and "LoRA" in basis:
        steps.append(
            "Check the LoRA adapter you load (its `adapter_config.json` and weights) against the base model "
            'and the condition under "When it is raised"; use an adapter trained for this base model.'
        )
    elif actor == "model" and basis.startswith(_TOKENIZER_BASIS):
        steps.append(
            f"Check the tokenizer the model loads (the model's own, or the one `--tokenizer` names): what it gives as `{basis.split('`')[1]}` "
            'fails the condition under "When it is raised". A request cannot set it; use a tokenizer (or a model) this code supports.'
        )
    elif actor == "model" and basis.startswith(_QUANTIZATION_BASIS):
        steps.append(
            "Check the checkpoint's quantization config (`quantization_config` in its `config.json`) against the condition under "
            '"When it is raised": this code does not support what it holds there; use a checkpoint quantized in a form this version supports.'
        )
    elif actor == "model" and basis.startswith("raised in the code") and _set_up(record) and not _names_inputs(record):
        steps.append(  # (seed 67's judge: no step about the request's inputs on a page of weight loading or the model's config
            # that names none: a ``validate_*`` of what the model is given still asks for them, s45-rules2's R*26)
            "Check the model you load (its `config.json`, checkpoint files and quantization) against the condition "
            'under "When it is raised"; use a model, revision or checkpoint this version supports.'
        )
    elif actor == "model" and basis.startswith("raised in the code"):
        steps.append(
            "Check the model you load (its `config.json`, checkpoint files and quantization) against the condition "
            'under "When it is raised"'
            + (
                "; if the model is one this version supports, check the inputs you give it (prompt, images, audio, video) against the same condition."
                if _names_inputs(record)
                else "; use a model, revision or checkpoint this version supports."
            )
        )
    elif actor == "model":
        steps.append(
            "Check the model you load (its `config.json`, checkpoint files and quantization) against the condition "
            'under "When it is raised"; use a model, revision or checkpoint this version supports.'
        )
    elif actor == "environment" and "network" in basis:
        steps.append(
            "Check that the URL is right and that this machine reaches it (proxy, firewall, DNS); "
            "a fetch that only failed once may pass when it is tried again."
        )
    elif actor == "environment" and "operating system" in basis:
        steps.append(
            "Check the limits of the machine or container it runs in for what the call names: the shared memory it maps "
            "(the size of `/dev/shm`; in a container, its shared-memory size), open files (`ulimit -n`) and memory limits; "
            "the `errno` in the message names the failure."
        )
    elif actor == "environment" and "passing" in basis:
        steps.append("Wait and send it again, or spread the load over more instances; if it keeps coming, check the services it depends on.")
    elif actor == "environment":
        steps.append(
            "Check the packages, driver and hardware this runs on against what the message names; "
            "install or upgrade what is missing, or run where it is supported."
        )
    elif actor == "caller":
        if basis.startswith("a module's `__getattr__`"):
            steps.append(
                "Check the name your code or a plugin imports from this module: this version does not have it (it may have been "
                "renamed, moved or removed: the release notes say); use the name this version has, or the version that had it."
            )
        elif basis.startswith("raised for what the trainer's code passes the weight-transfer API"):
            steps.append(
                f"Check what your trainer's code gives the weight-transfer API ({_trainer_gives(record)}) against the condition "
                'under "When it is raised", and build it the way this version documents it.'
            )
        elif exception_word(record) == "NotImplementedError" and "implement" in basis:
            steps.append(
                f"If you wrote a plugin or subclass, implement `{short_code(record['sites'][0]['qualname'])}`; otherwise report it, with the traceback."
            )
        elif exception_word(record) == "NotImplementedError":  # (the message names what to implement, not this method)
            steps.append("If you wrote a plugin or subclass, implement what the message names; otherwise report it, with the traceback.")
        else:
            steps.append('Check the arguments your code passes against the condition under "When it is raised".')
    if actor == "internal" and "had already stopped" in basis:
        steps.append(
            "Look for the first error before this one in the log or the output (a worker or the engine that "
            "crashed, ran out of memory or was killed): its own page says whose move it is. Report this one to "
            f"{_project(record)} only if nothing came before it."
        )
    elif actor == "internal" and "did not answer in time" in basis:
        steps.append(
            "Look for the first error before this one in the log or the output (a worker, the engine or a server that "
            "crashed, hung or was killed): its own page says whose move it is. If nothing came before it, the machine may "
            f"have been too loaded for the wait: try again on a quieter one, or report it to {_project(record)} with the log."
        )
    elif actor == "internal" and "wraps the error it carries" in basis:
        steps.append(
            'Read the error printed with it (its source, the "caused by" part or the lines after it in the log) and look that one up: '
            f"one of {_project(record)}'s own has its own page that says whose move it is, one of a library it uses says what failed there. Report this one to {_project(record)} only if that error is one of "
            f"{_project(record)}'s own checks with no setting, request or model of yours in it."
        )
    elif actor == "internal" and "exception it caught" in basis:
        steps.append(
            "Find the exception it caught (in the line itself, the lines around it, or with debug logging on) and "
            f"look it up: its own page says whose move it is. Report this one to {_project(record)} only if that exception is one of "
            f"{_project(record)}'s own checks with no setting, request or model of yours in it."
        )
    elif actor == "internal" and record["kind"] == LOG and not basis.startswith("informational:"):  # (s44: its own step says it)
        steps.append(
            "If it comes with a failure, or keeps coming, report it to "
            f"{_project(record)} with the log around it, the version you run and the command that led to it."
        )
    elif (actor == "internal" and not basis.startswith(("it re-raises what it caught", "informational:", _S71_CHAINED_BASIS))) or not steps:
        steps.append(
            f"Report it to {_project(record)} with the full traceback, the version you run and the command "
            "or code that led to it; search the tracker first for the message."
        )
    return steps


def _what(record: dict[str, Any], actor: str, basis: str, reads: dict[str, list[str]], names: SettingNames | None = None) -> str:
    knobs = record["meaning"].get("knobs") or []
    decided = (
        _decided_what(record, basis)
        or _rules2_what(actor, basis)
        or _s45_what(record, actor, basis, names)
        or _rules45_what(actor, basis)
        or _opens46_what(record, actor, basis)
        or _opens46b_what(record, actor, basis)
        or _opens46c_what(record, actor, basis)
        or _rules46_what(actor, basis)
        or _seed70_what(record, actor, basis)
        or _s71_what(record, actor, basis, names)
        or _seed72_what(actor, basis)
        or _s73_what(actor, basis)
    )
    if decided:
        return decided
    if actor == "setting":
        settings = _settings(knobs, _validated(record), "cli_flag", "config_field", "env_var")
        if settings:
            return _settings_shown(record, settings, basis, names)
        flag = _FLAG.search("" if record["message"].get("opaque") else record["message"]["text"])
        if flag:
            return f"`{flag.group(0)}`"
        env = _ENV_NAME.search("" if record["message"].get("opaque") else record["message"]["text"])
        if env and env.group(0).startswith(_env_prefixes(record)):
            return f"the environment variable `{env.group(0)}`"
        if "parallel sizes" in basis:
            return _parallel_named(record, reads) or "the parallel sizes you set: tensor, pipeline or data parallel"
        if "reads the configuration" in basis:
            return _rules4_configs_shown(_CODES.findall(basis.rpartition("configuration ")[2]), names, record)
        if "feature it configures" in basis:
            return (
                f"the feature `{basis.split('`')[1]}` configures{_also(_feature_flag(basis.split('`')[1], names))}, not enabled in the options you started with"
            )
        if "command's arguments" in basis:
            return "the options of the command you ran: " + basis.rpartition("arguments ")[2]
        if "parser" in basis:
            return "the tool or reasoning parser you chose for this model"
        if "/benchmarks/" in "/" + record["sites"][0]["path"] and "configuration is checked" in basis:
            return "the options of the benchmark command you ran"
        if basis.startswith("the message says to change the setting `"):
            return _flagged([basis.split("`")[1]], names)
        named = _message_flags(record, names)
        if "backend chosen" in basis:
            return "the backend you chose, or the one chosen for you" + (f": the message names {named}" if named else "")
        if "combination" in basis:
            return "the combination of options, features and model you chose" + (f": the message names {named}" if named else "")
        said = "what the message names" if basis.startswith("the message says") else "an option or config value"
        return f"{said}: the message names {named}" if named else said
    if actor == "request":
        requests = _requests(record, reads)
        if not requests and "input you gave" in basis:
            return "the prompt or media you gave"
        if not requests and "kind this model does not take" in basis:
            return "the kind of input it carries"
        if not requests and basis.startswith("the chat messages"):
            return "its messages"
        if basis.startswith(_TRANSFER_BASIS):
            return "its transfer parameters, set by the client or the P/D router"
        if not requests and "media" in basis:
            return "the media or prompt it carries"
        read = [c.partition(".")[2] for c in reads.get("request") or [] if c.startswith("request.")]
        if not requests and read:  # (what the check's own condition reads of the request)
            return "its field " + _shown(read)
        return f"its field {_names(requests)}" if requests else "its fields or parameters"
    if actor == "model":
        if "what the model generated" in basis:
            return f"`{short_code(record['sites'][0]['qualname'])}`"
        if "LoRA" in basis:
            return "the LoRA adapter: its configuration or weights, against the base model"
        if basis.startswith("raised in the code"):
            return f"`{short_code(record['sites'][0]['path'])}`"
        if basis.startswith(_TOKENIZER_BASIS):
            return f"its tokenizer: what it made of the prompt, `{basis.split('`')[1]}`"
        if basis.startswith(_QUANTIZATION_BASIS):
            return "its quantization config: " + basis[len(_QUANTIZATION_BASIS) :].partition(", built")[0].strip(" (")
        if "checkpoint's own configuration" in basis:
            return "its configuration: " + basis.partition("configuration ")[2].partition(":")[0] + " is not what this code supports"
        return "its configuration, weights or the architecture's code"
    if actor == "environment":
        if "network" in basis:
            return "the network, or the server the URL names"
        if "service it connects to" in basis:
            return "a service or process it connects to"
        if "operating system" in basis:
            return "the operating system it runs on: its shared memory, files or memory limits"
        return "the load on it or a service it depends on" if "passing" in basis else "installed packages, hardware, driver or platform"
    if actor == "internal" and (
        "had already stopped" in basis or "exception it caught" in basis or "did not answer in time" in basis or "wraps the error" in basis
    ):
        return f"in `{short_code(record['sites'][0]['qualname'])}`"
    if actor == "caller" and basis.startswith("a module's `__getattr__`"):
        return f"a name it imports from `{short_code(record['sites'][0]['path'])}`"
    if actor == "caller" and basis.startswith("raised for what the trainer's code passes the weight-transfer API"):
        return _trainer_gives(record)
    if actor == "caller":
        return f"what it passes to, or implements of, `{short_code(record['sites'][0]['qualname'])}`"
    return basis


def _handled(record: dict[str, Any], caught: str) -> dict[str, Any]:
    """Who acts on a check whose error its own function catches and does not raise again
    (``except (ImportError, AssertionError): return None``, ``except Exception: logger.error(...)``):
    nobody meets this error, so nobody is told to act on it; what they may meet is what the handler
    does instead (a fallback, a log line of its own, which has its own page)."""
    where = f"`{short_code(record['sites'][0]['qualname'])}`"
    handler = f"`{short_code(caught)}`"
    return {
        "actor": "internal",
        "basis": f"caught where it is raised: {handler} in {where} catches it and does not raise it again",
        "says": (
            f"{_project(record)} catches this {_noun(record)} in the same function that raises it ({handler} in {where}) and does not "
            "raise it again: it does not reach you as this error; what you may see is what that handler does instead (a fallback, "
            "or a log line of its own, which may quote this message)."
        ),
        "remedy": None,
        "steps": [
            f"Nothing to do about this {_noun(record)} itself: it never leaves {where}. If what the handler does instead is what you see "
            "(a log line, a feature left off, a fallback), look that up by its own message; report this one to "
            f"{_project(record)} only if that behaviour is wrong for what you run."
        ],
    }


def _trainer_gives(record: dict[str, Any]) -> str:
    """What a trainer's code gives the weight-transfer API where this check is: the fields of the
    init or update info it sends (``SparseNCCLWeightTransferUpdateInfo.__post_init__``), else the
    arguments of the call it makes (``trainer_init``: the info and the ``WeightSource``)."""
    owner, _, method = record["sites"][0]["qualname"].rpartition(".")
    name = owner.rpartition(".")[2]
    if _TRANSFER_INFO.search(name):
        return f"the fields of the `{name}` it sends"
    if method.startswith("parse_") and method.endswith("_info"):  # the engine reads the dict the trainer sent
        return f"the {method.removeprefix('parse_').replace('_', ' ')} it sends, as `{short_code(name + '.' + method)}` reads it"
    return f"the arguments of `{short_code(name + '.' + method if name else method)}`"


def action(
    record: RecordData | dict[str, Any],
    reads: dict[str, list[str]] | None = None,
    passed: list[str] | None = None,
    names: SettingNames | None = None,
    caught: str | None = None,
    preprocessor: str | None = None,
    handed: str | None = None,
    stub: list[str] | None = None,
    importing: list[str] | None = None,
) -> dict[str, Any]:
    """``records.Action`` as plain data, for a record whose meaning is joined; ``reads``: what its
    check reads (``extract.guard_reads``, traced at extraction), else traced over its snippet;
    ``passed``: who acts by what its function's callers pass (``catalogue.callers.passed_by_id``);
    ``caught``: the ``except`` of its own function that catches its error (``guard_reads.caught``);
    ``preprocessor``: the toolkit's ``#if`` a native stub is built under (``guard_reads.preprocessor``);
    ``handed``: the library call its function is handed to, which catches it (``guard_reads.handed``);
    ``stub``: the optional import that failed where its function is defined as a placeholder
    (``guard_reads.stub``); ``importing``: the modules the ``try`` imports whose ``except ImportError``
    it is in (``guard_reads.importing``)."""
    data = cast(dict[str, Any], record)
    if preprocessor is not None and data["kind"] == NATIVE:
        return _stub(data, preprocessor)
    if handed is not None and data["kind"] == RAISE:
        return _handed_to(data, handed)
    answered = _answers_client(data["sites"][0], caught) if caught is not None and data["kind"] in (RAISE, ASSERT) else None
    if caught is not None and data["kind"] in (RAISE, ASSERT) and answered is None:
        return _handled(data, caught)
    if passed is not None and data["kind"] == RAISE and passed[1].startswith(QUIET_BASIS):  # (s46-rules)
        return _quietly_handled(data, passed[1])
    if stub is not None and data["kind"] in (RAISE, ASSERT):
        return _placeholder(data, stub, names)
    found = remedy(data, names)
    reads = guard_reads.reads(data["sites"][0]) if reads is None else reads
    derived = [c for c in reads.get("config") or [] if _derived(c, names)]
    if derived and len(derived) == len(reads["config"]):
        # (what the model's config computes is no setting: see _derived; with a setting beside it the
        # setting leads, and with none the message decides whether the model does)
        reads = {k: v for k, v in reads.items() if k != "config"}
    else:
        derived = []
    actor, basis = classify(data, found, reads, passed, derived, names)
    key = "log" if actor == "internal" and data["kind"] == LOG else actor
    if key == "log" and (data.get("log") or {}).get("level") not in ("warning", "info", "debug"):
        key = "log_error"
    elif key == "log" and basis.startswith("no setting, request"):
        key = "log_unseen"
    if key == "internal" and basis.startswith("no setting, request"):
        key = "internal_unseen"
    if actor == "internal" and "had already stopped" in basis:
        key = "stopped"
    elif actor == "internal" and "did not answer in time" in basis:
        key = "waited"
    elif actor == "internal" and "exception it caught" in basis:
        key = "caught"
    elif actor == "internal" and "wraps the error it carries" in basis:
        key = "wrapped"
    elif actor == "internal" and basis.startswith("it re-raises what it caught"):
        key = "rewrapped"
    elif actor == "internal" and basis.startswith(_S71_CHAINED_BASIS):  # (s46-rules3)
        key = "chained"
    elif key == "model" and "what the model generated" in basis:
        key = "model_output"
    elif key == "model" and basis.startswith("raised in the code"):
        key = "model_setup" if _set_up(data) else "model_code"
    says = _SAYS[key].format(what=_what(data, actor, basis, reads, names), project=_project(data), noun=_noun(data))
    steps = _steps(data, actor, basis, found, reads, names)
    if basis.startswith("the message's remedy names `"):  # (s46-rules2, W26: the remedy is no user's move)
        found, steps = None, [s for s in steps if not s.startswith("Do what the message says:")]
    if actor == "environment" and basis.startswith(_PACKAGE_BASIS):
        steps = _install_steps(data, steps, found, reads, importing)
    if answered is not None:  # (s43-verify's W on the realtime "Can't process empty audio")
        steps.append(
            f"The handler that catches it in `{short_code(data['sites'][0]['qualname'])}` (`{short_code(caught or '')}`) answers the client with an error "
            f"(`{short_code(answered)}`): that error response is what the client gets, and this message is in the server's log."
        )
    return {"actor": actor, "basis": basis, "says": says, "remedy": found, "steps": steps}


# --------------------------------------------------------------------------------------------------
# Pages no rule above decides (s43-opens, #32 items 1 and 3): facts of the code that say whose move
# it is where the pages said "errcat cannot tell". Each runs only after every other rule (and the
# callers' ``passed``) left the check open; each is narrowed by what a reading of its v0.33.0 pages
# against the source found (bench/RESULTS.md, s43-opens).

#: A message that says a step of the code's own comes first: a prior call, a buffer another part of
#: the code fills, something set up before ("requires a prior start_prefetch", "requires top-k
#: indices from the indexer", "was not allocated", "should always exist").
#: ("has not been prepared", "is not initialized" are not among them: they are as often a step a
#: caller outside drives, as ``ExternalElasticEPScaleCoordinator.commit`` before ``prepare``.)
_WIRING = re.compile(
    r"\brequires? (?:a |an )?prior\b|\brequires? [\w -]{1,60}? from the (?!request|user|client|caller|config|checkpoint|model\b)\w+|"
    r"\bwas not (?:allocated|built|wired)\b|\bshould always exist\b",
    re.I,
)
#: What keeps such a message from being the code's own order: a call someone makes ("Call X() first":
#: a trainer's or a user's code drives the object), a setting it names, a feature switched on or off.
_WIRING_NOT = re.compile(r"\bcall(?:ed|s|ing)?\b|\(\)|\b(?:en|dis)abled?\b|\binstall|\bconfigur|\bsetting\b|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+ ?=", re.I)
#: A dotted setting a message names (``kv_connector_extra_config.transfer_timeout``).
_CONFIG_PATH = re.compile(r"(?<![\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)*_config\.[a-z][a-z0-9_]*)\b")
#: A warning that states what the code does ("Padding num_heads from 8 to 64 for ...").
_STATES_WHAT_IT_DOES = re.compile(r"(?:Padding|Truncating|Rounding|Initializing|Loading|Using) ")
#: ... and asks nothing: no failure, doubt, cause, advice or choice in it.
_ASKS = re.compile(
    r"\b(?:fail\w*|errors?|not|no|cannot|can't|invalid|unsupported|missing|mismatch\w*|unknown|unexpected|malformed|may|might|could|"
    r"slow\w*|sub-?optimal|performance|accuracy|because|since|should|deprecated|please|consider|you|your|requested|explicitly|instead|"
    r"only|ignor\w*|skip\w*|disabl\w*|fall\w*|default\w*|guess\w*|override\w*|assum\w*)\b",
    re.I,
)
#: What a by-design ``NotImplementedError`` message must not say: a contract a subclass or plugin
#: fills, a package or a build it needs, the machine it runs on.
#: a limit of what it supports ("supports embedding lookup only": a model that needs more may reach it).
_NOT_BY_DESIGN = re.compile(r"\bimplement\w*|\bsubclass|\brequires?\b|\bnot available\b|\black\w*\b|\binstall\w*|\byet\b|\bsupport\w*|\bonly\b", re.I)


#: A message that says two values the code holds do not agree ("QSA main and side metadata token counts disagree").
_DISAGREE = re.compile(r"\bdisagrees?\b", re.I)
#: The name a handler binds what it caught to (``except UnidentifiedImageError as e``).
_CAUGHT_AS = re.compile(r"except\b[^:]{0,200}? as ([A-Za-z_]\w*)\s*:?\s*$")


def _rewrapped(site: dict[str, Any], text: str) -> str | None:
    """The handler, when the check re-raises what it caught as its cause (``raise X(str(e)) from e``)
    with nothing of its own in the message (empty, or the caught error's text alone) and no test
    of its own: the caught error is the whole of it."""
    facts = site.get("facts") or {}
    handler = (facts.get("handler") or "").strip()
    bound = _CAUGHT_AS.match(handler)
    if bound is None or facts.get("guards") or facts.get("cause") != bound.group(1):
        return None
    name = bound.group(1)
    return handler if text.strip() in ("", f"{{{name}}}", f"{{str({name})}}", f"{{{name}!s}}", f"{{{name}!r}}") else None


def _presence_of(own: str) -> bool:
    """Whether a condition only tests that values are there (``x is None``, ``not x``, joined by ``or``)."""
    node = parse_guard(own)
    parts = node.values if type(node) is ast.BoolOp and type(node.op) is ast.Or else [node]
    for part in parts:
        if type(part) is ast.Compare and len(part.ops) == 1 and type(part.ops[0]) is ast.Is:
            value, against = part.left, part.comparators[0]
        elif type(part) is ast.UnaryOp and type(part.op) is ast.Not:
            value, against = part.operand, ast.Constant(None)
        else:
            return False
        if not (type(against) is ast.Constant and against.value is None and type(value) in (ast.Name, ast.Attribute)):
            return False
    return bool(parts)


def _reached_from_outside(record: dict[str, Any], path: str) -> bool:
    """Whether a check's function is one a user's request, command or code reaches: an entry point
    among its callers, or code where requests, settings or a trainer's calls are handled."""
    return (
        any(c.get("entry_point") for c in record["meaning"].get("callers") or [])
        or any(p in path for p in (*_REQUEST_PATHS, *_SETTING_PATHS, *_PARSER_PATHS))
        or "/weight_transfer/" in path
    )


def _request_validator(record: dict[str, Any]) -> str | None:
    """The caller that validates a request on the way to this check (``validate_structured_output_request_outlines``
    calls it), if one does."""
    for c in record["meaning"].get("callers") or []:
        last = str(c.get("qualname") or "").rpartition(".")[2]
        if last.lstrip("_").startswith("validate") and "request" in last:
            return str(c["qualname"])
    return None


def _waited(kind: str, text: str) -> tuple[str, str] | None:
    """A wait on a peer or a transfer that timed out, whose message names the setting bounding it:
    the peer (the environment) was slow, and the setting is what to raise."""
    waited = _CONFIG_PATH.search(text) if kind in (RAISE, LOG) and _WAITED_TEXT.search(text) else None
    if waited is None:
        return None
    return (
        "environment",
        f"it waited for a peer or a transfer that did not finish in time; the message names the setting that bounds the wait, `{waited.group(1)}`",
    )


def _open_decided(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str) -> tuple[str, str] | None:
    """(actor, basis) for a check no other rule decides, from a fact of its code; None to leave it open."""
    path, site = _where(record)
    kind, exception = record["kind"], exception_word(record)
    facts = site.get("facts") or {}
    method = site["qualname"].rpartition(".")[2]
    environ = [c for c in reads.get("platform") or [] if c.startswith(("os.environ", "os.getenv"))]
    named = list(dict.fromkeys(_ENV_NAME.findall(text)))
    if kind in (RAISE, LOG) and environ and len(named) == 1:
        return (
            "environment",
            f"the check reads the environment variable `{named[0]}` itself (from `os.environ`, not through a setting): it is unset, or not what the check needs",
        )
    waited = _waited(kind, text)
    if waited:
        return waited
    validator = _request_validator(record) if kind == RAISE else None
    if validator and "param" in reads and not set(reads) & {"config", "model", "platform", "state"}:
        return "request", f"raised while the request is validated (`{short_code(validator)}` leads to it): what the request asks for does not pass the check"
    if (
        kind == RAISE
        and _WIRING.search(text)
        and not _WIRING_NOT.search(text)
        and not _ENV_NAME.search(text)
        and method not in ("__init__", "__post_init__")
        and reads
        and set(reads) <= {"state", "other", "constant"}
        and all(c.startswith("self.") for source, shown in reads.items() if source != "constant" for c in shown)
        and _presence_of(own)
        and not _reached_from_outside(record, path)
    ):
        return (
            "internal",
            "the check finds a part of the object's own state missing ("
            + _shown([c for s in sorted(reads) if s != "constant" for c in reads[s]])
            + ") that the project's own code sets up before this step (the message says what comes first): the order of its own calls",
        )
    # (the message as written: one that is only the caught error's text is opaque, ``text`` holds nothing of it)
    rewrapped = _rewrapped(site, record["message"]["text"]) if kind == RAISE else None
    if rewrapped:
        return (
            "internal",
            f"it re-raises what it caught (`{short_code(rewrapped)}`) as its cause, with nothing of its own in the message: the caught error is the cause",
        )
    if (
        kind == RAISE
        and _DISAGREE.search(text)
        and reads
        and set(reads) <= {"state", "other", "tensor", "constant"}
        and not _reached_from_outside(record, path)
    ):
        return (
            "internal",
            "the check compares values the project's own code computed in two places (the message says they disagree), "
            "reading no setting, request or model of yours",
        )
    if (
        kind == LOG
        and (record.get("log") or {}).get("level") in ("warning", "info")
        and not facts.get("handler")
        and _STATES_WHAT_IT_DOES.match(text)
        and not _ASKS.search(text)
        and not _FLAG.search(text)
        and not _ENV_NAME.search(text)
        and not set(reads) & {"config", "request", "model", "platform"}
    ):
        return "internal", "informational: the warning states what the code does and asks nothing of anyone; nothing to do"
    instead = _instead(record, text) if kind == LOG and not _BROAD_HANDLER.match((facts.get("handler") or "").strip()) else None
    if instead and not (_REQUIRES_BACKEND.search(text) and not _HARDWARE.search(text)):
        # (a warning that the choice made needs another backend, and falls back, names the setting
        # to change: s44-rules2's backend rule, below, says which)
        return "internal", f'{_INSTEAD_BASIS} ("{instead}")'
    if (
        kind == RAISE
        and exception == "NotImplementedError"
        and text
        and not facts.get("guards")
        and "." in site["qualname"]
        and not record["meaning"].get("callers")  # (a helper the code calls to refuse, ``QuantKeyScheme.reject(role)``, is no method left out)
        and not _NOT_BY_DESIGN.search(text)
        and not _PLUGIN.search(text)
        and not _HARDWARE.search(text)
        and not _reached_from_outside(record, path)
    ):
        return (
            "internal",
            f"`{short_code(site['qualname'])}` raises whenever it is called: its class does not provide it (the message says so), "
            "so a path that reaches it is the project's own slip, not a choice of yours",
        )
    metadata = _runner_metadata(record, reads, text) if kind in (RAISE, LOG) and method not in ("__init__", "__post_init__") else None
    if metadata and not _reached_from_outside(record, path):
        return (
            "internal",
            f"the check tests the attention metadata its function is passed ({_shown(metadata)}), which {_project(record)}'s own model runner "
            "builds for each step (its metadata builder) and no setting chooses this branch: the runner made it so",
        )
    return None


#: A parameter that holds the attention metadata of a step (``attn_metadata``, ``common_attn_metadata``,
#: ``swa_metadata``, ``prefill_metadata``), as the model runner's metadata builders hand it on.
_METADATA_PARAM = re.compile(r"(?:[a-z][a-z0-9]*_){0,3}metadata")
#: Attention code: a backend's module, or a class that is an attention layer, implementation or metadata builder.
_ATTENTION_CLASS = re.compile(r"(?:Attention|Impl|MetadataBuilder|PrefillBackend)$")
#: A guard above the check that reads a setting (then a setting chooses the branch it is in).
_SETTING_GUARD = re.compile(r"(?<![\w.])envs\.|\w_config\b|(?<![\w.])self\.(?:use|enable)_\w+")


def _runner_metadata(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> list[str] | None:
    """The parameters holding a step's attention metadata that the check tests (with tensors and constants
    only), in attention code, under no guard on a setting, whose message states no limit or choice; else None."""
    path, site = _where(record)
    params = reads.get("param") or []
    if not params or not set(reads) <= {"param", "tensor", "constant"}:
        return None
    if not all(_METADATA_PARAM.fullmatch(p.partition(".")[0]) for p in params):
        return None
    if "/attention/" not in path and not _ATTENTION_CLASS.search(site["qualname"].partition(".")[0]):
        return None
    guards = (site.get("facts") or {}).get("guards") or []
    if any(_SETTING_GUARD.search(g) for g in guards) or _UNSUPPORTED.search(text) or re.search(r"\bonly\b|\bsupport", text, re.I):
        return None
    if _FLAG.search(text) or _ENV_NAME.search(text) or _PLUGIN.search(text):
        return None
    return params


def _decided_what(record: dict[str, Any], basis: str) -> str | None:
    """What the page's first sentence names for the rules above that need their own words."""
    if basis.startswith("it re-raises what it caught (`"):
        return f"in `{short_code(record['sites'][0]['qualname'])}`, as `{basis.split('`')[1]}`"
    if basis.startswith("the check reads the environment variable `"):
        return f"the environment variable `{basis.split('`')[1]}`"
    if basis.startswith("it waited for a peer or a transfer"):
        return f"the network or the peer it waits on, and `{basis.split('`')[1]}`, the setting that bounds the wait"
    if basis.startswith(_BACKPRESSURE_BASIS):
        return "the peer it sends to, which is not taking its messages"
    if basis.startswith(_INSTEAD_BASIS):
        return f"it says what it does instead: {basis[len(_INSTEAD_BASIS) + 2 : -1]}"
    if basis.startswith("raised while the request is validated (`"):
        return f"what it asks for, as `{basis.split('`')[1]}` validates it"
    return None


def _decided_steps(record: dict[str, Any], actor: str, basis: str) -> list[str]:
    """The steps of the rules above that need their own (none: the usual ones)."""
    if actor == "environment" and basis.startswith("the check reads the environment variable `"):
        return [f"Set the environment variable `{basis.split('`')[1]}` where it runs (the message says what it must hold), then start it again."]
    if actor == "environment" and basis.startswith(_BACKPRESSURE_BASIS):
        return [
            "Check the peer it sends to (the message names it): that its process is up and keeps reading. A peer that died, hangs or "
            "falls behind fills the queue; no package, driver or hardware of yours is involved. The code that sends may catch this error "
            "itself (drop the message, mark the connection dead): what you see then is what that code logs."
        ]
    if actor == "environment" and basis.startswith("it waited for a peer or a transfer"):
        return [
            "Check that the peer it waits on is up and reachable (its own log, the network, the NIC or RDMA link); if the transfers "
            f"are only slow, raise `{basis.split('`')[1]}` (the setting the message names) and start again."
        ]
    if actor == "request" and basis.startswith("raised while the request is validated (`"):
        what = (
            "the structured-output constraint in your request (its regex, JSON schema or grammar)"
            if "structured_output" in basis
            else "what your request asks for"
        )
        return [f'Check {what} against the message and the condition under "When it is raised"; send it again once it is corrected.']
    if actor == "internal" and basis.startswith("it re-raises what it caught"):
        return [
            "Read the error printed above this one in the traceback (the one it was raised from) and look that one up: one of "
            f"{_project(record)}'s own has its own page that says whose move it is, one of a library it uses says what failed there "
            "(for a request, what in it that library refused)."
        ]
    if actor == "internal" and basis.startswith(_INSTEAD_BASIS):
        return [
            f"Nothing has failed: {_project(record)} goes on as the warning says ({basis[len(_INSTEAD_BASIS) + 2 : -1]}). Act only if that is not "
            "what you meant to run: the warning's own text names what led to it."
        ]
    if actor == "internal" and basis.startswith("informational:"):
        return ["Nothing to do: the warning says what the code does, and it goes on."]
    return []


# --------------------------------------------------------------------------- s43-rules4: the model's, the checkpoint's, the request's

#: The request's transfer parameters as a connector reads them: the fields themselves, or the keys
#: of the P/D protocol they carry (``params.get("do_remote_decode")``, ``params`` bound from
#: ``request.kv_transfer_params`` above the check).
#: What ``callers.Passed.from_model_config``'s basis says (a part of the model's config passed one call back).
_MODEL_PASSED = "from the model's own configuration, given to the model's code as"
_TRANSFER_BASIS = "the check is on what the request's transfer parameters ask for"
_TRANSFER_PARAMS = re.compile(r"\b(?:kv|ec)_transfer_params\b|\bdo_remote_(?:prefill|decode)\b")
#: A connector's own role flag (``self.is_kv_consumer``), as the whole of an assert's condition.
_ROLE_ONLY = re.compile(r"(?:not \(\s*)*(?:not\s+)?self\.is_kv_(?:consumer|producer|both)\)*")
#: An assert's whole condition: the request's transfer parameters are there (``req.kv_transfer_params is not None``,
#: as the raise's own condition reads it: ``not (...)``).
_PARAMS_PRESENT = re.compile(r"(?:not \()?[\w.]{1,200}\.(?:kv|ec)_transfer_params is not None\)?")
_PARAMS_KEY = re.compile(r"(?<![\w.])params\.get\(\s*[\"']do_remote_")


def _asks_transfer(own: str, guards: str) -> bool:
    """Whether a check under a guard on the request's transfer parameters tests what they ask for:
    its own condition reads them (``request.ec_transfer_params is not None``; ``params``, when the
    guards read the P/D keys from it: ``params.get("transfer_id")``), or only the instance's own
    role (``assert not self.is_kv_consumer`` under ``params.get("do_remote_decode")``: the request
    asks a consumer to send). A check on anything else in that branch (a layout, a peer's groups,
    the object's state) is not said to be the request's."""
    stripped = own.strip()
    return bool(_TRANSFER_PARAMS.search(own) or _ROLE_ONLY.fullmatch(stripped) or (_PARAMS_KEY.search(guards) and re.search(r"(?<![\w.])params\b", own)))


#: A loader's loop over the checkpoint's weights (``for name, loaded_weight in weights``): its first
#: name is a weight's name as the checkpoint gives it.
_TENSOR_TEST = re.compile(r"\bloaded_weights?\b|\.(?:shape|dtype|ndim|numel|size)\b")
_WEIGHTS_LOOP = re.compile(r"for \(?([a-z_]\w*), [a-z_]\w*\)? in (?:weights|weights_iter|weights_iterator)")


def _weight_name(record: dict[str, Any], kind: str, text: str) -> str | None:
    """The name of the checkpoint's weight a raise in a loader tests, when the loader loops over the
    checkpoint's weights (``for name, loaded_weight in weights``), a guard around the raise tests that
    name and the message shows it (``Layer {name} contains ...``): the checkpoint's names are not
    ones this loader knows. Else None."""
    site = record["sites"][0]
    facts = site.get("facts") or {}
    method = site["qualname"].rpartition(".")[2]
    if kind != RAISE or not _WEIGHT_LOADER.fullmatch(method) or record["message"].get("opaque"):
        return None
    for loop in facts.get("loops") or []:
        found = _WEIGHTS_LOOP.fullmatch(loop.strip())
        if found is None:
            continue
        name = found.group(1)
        shown = re.search(rf"\{{{re.escape(name)}(?:![rs])?\}}", text)
        if _TENSOR_TEST.search(guard_reads.own_condition(site) or ""):  # (a shape or dtype: the tensor's, said by the rules on it)
            continue
        if shown and any(_word(name, _STRING.sub('""', g)) for g in facts.get("guards") or []):
            return name
    return None


#: A product that turns a per-partition size back into the global one (``local_i * tp_size``).
_TIMES = r"(?<![\w.])[\w.]+\s*\*\s*{0}\b|(?<![\w.]){0}\s*\*\s*[\w.(]"


def _global_size_only(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str) -> bool:
    """Whether a weight loader's check on the checkpoint's tensor (``loaded_weight``) reads a rank
    count only through a product that makes a partition's size the global one (``global_i = local_i
    * tp_size``): the expected shape is the checkpoint's whole tensor, whatever the parallel size,
    so the size does not lead to it (the message and the condition name none of their own)."""
    site = record["sites"][0]
    method = site["qualname"].rpartition(".")[2]
    parallel = reads.get("parallel") or []
    code = (site.get("snippet") or {}).get("code") or ""
    if not parallel or not _WEIGHT_LOADER.fullmatch(method) or not _LOADED.search(own) or _PARALLEL.search(text) or _PARALLEL_GUARD.search(own):
        return False
    for chain in parallel:
        if not re.fullmatch(r"[\w.]+", chain):
            return False
        spelled = re.escape(chain)
        uses = len(re.findall(rf"(?<![\w.]){spelled}\b", code))
        products = len(re.findall(_TIMES.format(spelled), code))
        if not uses or uses != products:
            return False
    return True


#: The tokenizer as a model's code reads it: a field of it (``tokenizer.all_special_ids``), not a call.
_TOKENIZER_FIELD = re.compile(r"(?<![\w.])(?:self\.)?_?tokenizer\.[a-z_]\w*\b(?!\s*\()")
_LITERAL_LOCAL = r"(?m)^[^\S\n]*{0}[^\S\n]*(?::[^=\n]+)?=[^\S\n]*(?:-?\d+|'[^'\n]*'|\"[^\"\n]*\"|None|True|False)[^\S\n]*$"
_TOKENIZER_BOUND = r"(?m)^[^\S\n]*{0}[^\S\n]*=[^\S\n]*[\w.]*get_tokenizer\(\)[^\S\n]*$"


def _tokenizer_read(path: str, own: str, code: str) -> str | None:
    """The tokenizer's field an assert in a model's code tests, when it tests only that field
    against constants (``assert dummy_token_id not in tokenizer.all_special_ids``, with
    ``dummy_token_id = 0`` and ``tokenizer = self.info.get_tokenizer()`` above it): what the
    tokenizer holds is the model's (or ``--tokenizer``'s), not a state of the code's own. Else None."""
    if not any(p in path for p in _MODEL_PATHS):
        return None
    fields = _TOKENIZER_FIELD.findall(own)
    if not fields:
        return None
    for chain in fields:
        root = chain.partition(".")[0]
        if root != "self" and not re.search(_TOKENIZER_BOUND.format(re.escape(root)), code) and root != "tokenizer":
            return None
    rest = _STRING.sub("", _TOKENIZER_FIELD.sub("", own))
    for name in _CODE_NAME.findall(rest):
        if name in _PLAIN_WORDS or name[:1].isupper():
            continue
        if not re.search(_LITERAL_LOCAL.format(re.escape(name)), code):
            return None
    return fields[0]


#: A derived who-acts that says nobody outside the project acts, or that errcat cannot tell.
_NOBODY = re.compile(r"Nobody outside |.{0,300}\berrcat cannot tell\b", re.S)
REVIEWED_SAYS = (
    "A person reviewed this error: the explanation on this page says what it means and what to do (its Solutions). "
    "errcat's own reading of the code found no setting, request, model or environment of yours on the way to it, "
    "which the reviewed text takes precedence over."
)


def reviewed(action_: dict[str, Any], explanation: dict[str, Any] | None, status: str | None) -> dict[str, Any]:
    """The derived who-acts of a record with a reviewed (curated) explanation: where the derived one
    says nobody outside the project acts (or that errcat cannot tell) and the reviewed text gives
    solutions, the derived sentence is not said beside it (W40 of s43-judge1: the curated Solutions
    say to re-export the checkpoint, the derived line said nobody has to change anything): the page
    points at the reviewed Solutions, the derived steps other than the report are kept."""
    if status != "curated" or action_.get("actor") != "internal" or not (explanation or {}).get("solutions") or not _NOBODY.match(action_["says"]):
        return action_
    steps = [s for s in action_["steps"] if not s.startswith(("Report it", "If it comes with a failure"))]
    return {**action_, "says": REVIEWED_SAYS, "steps": ["Follow the Solutions of the reviewed explanation on this page.", *steps]}


# --------------------------------------------------------------------------- s44-rules: round 43's judges' patterns left

#: An ``except`` for a send that would block (a full queue or socket buffer: ``zmq.Again`` on a
#: ``NOBLOCK`` send, ``queue.Full``, ``BlockingIOError``).
_WOULD_BLOCK = re.compile(r"^except\s*\(?\s*(?:[\w.]+\s*,\s*)*(?:zmq\.(?:error\.)?Again|queue\.Full|asyncio\.QueueFull|BlockingIOError)\b")
#: The exceptions that say a connection to another process failed.
_CONNECTION_EXCEPTIONS = frozenset({"ConnectionError", "BrokenPipeError", "ConnectionResetError", "ConnectionAbortedError"})
_BACKPRESSURE_BASIS = "raised when a send finds the peer's queue full"


def _backpressure(kind: str, exception: str, handler: str) -> str | None:
    """The basis of a connection error raised in the handler of a send that would block
    (``except zmq.Again: raise ConnectionError(...)``): the peer stopped reading (s43-judge2 W4:
    the page said to install or upgrade packages); else None."""
    if kind != RAISE or exception not in _CONNECTION_EXCEPTIONS or not _WOULD_BLOCK.match(handler.strip()):
        return None
    return f"{_BACKPRESSURE_BASIS} (`{short_code(handler.strip())}`, raised as `{exception}`): the peer it sends to is not taking its messages"


#: What a tokenizer gives besides the prompt's token ids: never a field of a request.
_TOKENIZER_BASIS = "the check tests what the tokenizer made of the prompt"
_TOKENIZER_OUTPUTS = frozenset({"token_type_ids", "attention_mask", "special_tokens_mask", "offset_mapping"})
_LOOP_OVER = re.compile(r"for\s+\(?([\w, ]+?)\)?\s+in\s+(?:enumerate|zip|reversed|list)?\(?\s*([A-Za-z_]\w*)\s*\)?\s*$")


def _tokenizer_made(site: dict[str, Any], own: str) -> str | None:
    """The tokenizer's output a check tests, when every name its own condition reads is that output
    or a loop's variable over it (``type_id not in (0, 1)`` under ``for i, type_id in
    enumerate(token_type_ids)``): what the tokenizer made of the prompt, which a serving route
    hands on, is no request field (s43-judge2 W28). Else None."""
    if not own:
        return None
    over: dict[str, str] = {}
    for loop in (site.get("facts") or {}).get("loops") or []:
        found = _LOOP_OVER.fullmatch(loop.strip())
        if found:
            for target in found.group(1).split(","):
                over[target.strip()] = found.group(2)
    made: list[str] = []
    for name in _CODE_NAME.findall(_STRING.sub('""', own)):
        if name in _PLAIN_WORDS or name[:1].isupper():
            continue
        name = over.get(name, name)
        if name not in _TOKENIZER_OUTPUTS:
            return None
        made.append(name)
    return made[0] if made else None


#: A field of the quantization config a quantization method holds (``self.quant_config``: the
#: checkpoint's, which its config class's ``from_config`` builds from ``quantization_config``).
_QUANT_FIELD = re.compile(r"(?:self\.)?quant_config\.[a-z_]\w*")
_QUANTIZATION_PATHS = ("/layers/quantization/",)
_QUANTIZATION_BASIS = "an assert on the quantization config the checkpoint carries"


def _quantization_read(path: str, reads: dict[str, list[str]], own: str) -> list[str]:
    """The checkpoint's quantization fields an assert in a quantization method reads (through the
    object's state too: ``not self.block_quant``, with ``self.block_quant`` from
    ``self.quant_config.weight_block_size``), when the model's configuration it reads is only those
    and the assert is no presence test; else none (s43-judge2 W30)."""
    model = reads.get("model") or []
    if not any(p in path for p in _QUANTIZATION_PATHS) or not model or _PRESENCE.fullmatch(own.strip()):
        return []
    if not set(reads) <= {"model", "state", "constant"} or not all(_QUANT_FIELD.fullmatch(c) for c in model):
        return []
    return model


#: A warning's clause that says what the code does instead of what was asked or expected.
_INSTEAD = re.compile(
    r"\binstead\b|\bfall(?:s|ing)? ?back (?:to|on)\b|\bdefault(?:s|ing)? to\b|\b(?:will be|is|are) ignored\b|\bignoring\b|"
    r"\bskipping\b|\bwill (?:be )?used?\b",
    re.I,
)
_CLAUSES = re.compile(r"(?<=[.!?])\s+|\n+")
_INSTEAD_BASIS = "informational: the warning says what it does instead and goes on"
MAX_CLAUSE = 200


def _instead(record: dict[str, Any], text: str) -> str | None:
    """The clause of a warning that says what the code does instead (``Falling back to pickle.``,
    ``using the stock path instead``), as written; None for a message with none, or for a log
    above warning level (an error is no information)."""
    if (record.get("log") or {}).get("level") != "warning" or not text:
        return None
    for clause in [text] if len(text) <= MAX_CLAUSE else _CLAUSES.split(text):  # (a short message whole: "skipping." says nothing alone)
        if _INSTEAD.search(clause):
            clause = clause.strip().replace('"', "'")
            return clause if len(clause) <= MAX_CLAUSE else clause[: MAX_CLAUSE - 1] + "…"
    return None


#: A handler's call that answers the client with an error (``await self.send_error("Invalid audio data",
#: ...)``, an error response built and returned).
_ANSWERS = re.compile(r"\b(?:self\.)?(?:send_error|create_error_response|create_streaming_error_response)\s*\(|\bErrorResponse\s*\(")


def _answers_client(site: dict[str, Any], caught: str | None) -> str | None:
    """The call with which the ``except`` that catches a check's error in its own function answers
    the client with an error, when the record's code shows that handler and its body makes one
    (s43-verify's W: the realtime ``send_error(...)`` after ``logger.error``: the client is told,
    so the check is no quiet catch); else None."""
    snippet = site.get("snippet") or {}
    lines = (snippet.get("code") or "").split("\n")
    at = int(site["line"]) - int(snippet.get("start_line") or site["line"])
    if caught is None or not 0 <= at < len(lines):
        return None
    depth = len(lines[at]) - len(lines[at].lstrip())
    for i in range(at + 1, len(lines)):
        line = lines[i]
        indent = len(line) - len(line.lstrip())
        if not line.strip() or indent >= depth:
            continue
        if line.lstrip().startswith(("def ", "async def ", "class ")):
            return None
        if not line.lstrip().startswith("except"):
            continue
        for body in lines[i + 1 :]:
            if body.strip() and len(body) - len(body.lstrip()) <= indent:
                return None
            found = _ANSWERS.search(body)
            if found:
                return body.strip()
        return None
    return None


def _stub(record: dict[str, Any], branch: str) -> dict[str, Any]:
    """Who acts on a native check that is the whole body of a function built only under a
    preprocessor test of the toolkit or target (``#if !defined(CUDA_VERSION) || CUDA_VERSION <
    12040``): the build in use lacks the real function, so the stub raises whenever it is called
    (s43-judge2 W32: the page said it was a bug inside a kernel)."""
    where = f"`{short_code(record['sites'][0]['qualname'])}`"
    test = f"`{short_code(branch)}`"
    return {
        "actor": "environment",
        "basis": f"a check that is the whole body of {where}, built only where the preprocessor test {test} holds: "
        "a stub for a build whose toolkit or target lacks what the real function needs",
        "says": (
            f"Your environment (the build of {_project(record)} you run: it was compiled where {test} holds, so {where} is a stub "
            f"that raises whenever it is called) leads to this {_noun(record)}."
        ),
        "remedy": None,
        "steps": [
            f"Run a build in which {test} does not hold (for a toolkit's version: the prebuilt wheel of this release, or a build "
            "from source with the toolkit that test and the message name; for a platform: that platform's build), or choose another "
            f"backend or kernel, one that does not call {where}."
        ],
    }


def _handed_to(record: dict[str, Any], library: str) -> dict[str, Any]:
    """Who acts on a raise in a function handed to a library that runs it and catches what it raises
    (torch's ``register_replacement`` traces a pattern function and takes its ``RuntimeError`` as a
    pattern that does not match: s43-verify's R* on qk_norm_rope_fusion): no user meets it."""
    where = f"`{short_code(record['sites'][0]['qualname'])}`"
    call = f"`{short_code(library)}`"
    exception = exception_word(record)
    return {
        "actor": "internal",
        "basis": f"raised in {where}, which is handed to {call}: the library runs it and catches its `{exception}`",
        "says": (
            f"This {_noun(record)} does not reach you: {where} is handed to {call}, which runs it and catches this `{exception}` "
            "(torch's pattern matcher takes it as a pattern that does not match what it traced), so the rewrite that pattern describes "
            "is only not applied there."
        ),
        "remedy": None,
        "steps": [
            f"Nothing to do about this {_noun(record)} itself: the library catches it. Report it to {_project(record)} only if it "
            f"reaches you anyway (a traceback that ends in {where}), with that traceback and the version you run."
        ],
    }


# --------------------------------------------------------------------------- s44-rules2: seed 66's wrong claims and open pages
# (bench/RESULTS.md, s44-judge: W14 W28 W34 W35, O3 O15, R*24): facts of the code, each a small function
# of its own that ``classify`` asks at one place.

#: An assert's whole condition: a config's field is there (``not (vllm_config.kv_transfer_config.engine_id is not None)``).
_FIELD_PRESENT = re.compile(r"not \(((?:[A-Za-z_]\w*\.)*[a-z_]\w*_config\.[a-z_]\w*) is not None\)")


def _filled_field(record: dict[str, Any], own: str, names: SettingNames | None) -> str | None:
    """The config field an assert finds there, when the settings class the record's knob of it names
    gives it a value itself whenever none is given (``KVTransferConfig.__post_init__``: ``if
    self.engine_id is None: self.engine_id = str(uuid.uuid4())``; ``SettingNames.filled``): never None
    once the config is built, so the assert narrows the code's own value and no user has to set it
    (W14 of s44-judge). Else None."""
    found = _FIELD_PRESENT.fullmatch(own.strip())
    if found is None or names is None or not names.filled:
        return None
    chain = found.group(1)
    field = chain.rpartition(".")[2]
    for knob in record["meaning"].get("knobs") or []:
        if knob["kind"] == "config_field" and knob.get("field") == field and f"{knob.get('owner')}.{field}" in names.filled:
            return _config_field(chain) or chain
    return None


#: ``Attention.__init__`` builds its backend's implementation with ``kv_cache_dtype`` from
#: ``cache_config.cache_dtype`` (``--kv-cache-dtype``), which the base ``AttentionImpl`` stores.
_IMPL_KV_DTYPE = re.compile(r"(?<![\w.])self\.kv_cache_dtype\b")
_KV_DTYPE_FIELD = "cache_config.cache_dtype"
#: A model's own part built from a piece of its configuration (``cfg: MlpProjectorConfig``, ``vision_config``).
_CONFIG_PARAM = re.compile(r"(?:[a-z][a-z0-9]*_)*(?:config|cfg)")


def _caught_log(record: dict[str, Any], handler: str) -> bool:
    """``logger.exception(...)`` inside ``except Exception:``: what it prints with it is the traceback
    of whatever failed (W34 of s44-judge: a registry's function of a ``model_arch`` reads no model)."""
    return record["kind"] == LOG and (record.get("log") or {}).get("level") == "exception" and bool(_BROAD_HANDLER.match(handler.strip()))


def _model_part_unsupported(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str) -> list[str]:
    """The parameters an assert in a model architecture's ``__init__`` tests, when they are pieces of
    the model's configuration it is built with (``cfg``, ``projector_config``: none of the engine's
    settings, no quantization config) and it tests their fields against constants only, with a
    message that says what is not supported (``assert not cfg.token_pooling, "Token pooling is not
    supported currently."``): the checkpoint's config.json is a variant this code does not take
    (W35 of s44-judge). Else []."""
    path, site = _where(record)
    params = reads.get("param") or []
    if (
        record["kind"] != ASSERT
        or site["qualname"].rpartition(".")[2] != "__init__"
        or not any(p in path for p in _ARCHITECTURE_PATHS)
        or not params
        or not set(reads) <= {"param", "constant"}
        or not _UNSUPPORTED.search(text)
    ):
        return []
    for param in params:
        if not _CONFIG_PARAM.fullmatch(param) or guard_reads.CONFIG_PART.fullmatch(param) or "quant" in param:
            return []
        if not re.search(rf"(?<![\w.]){re.escape(param)}\.[a-z_]\w*", own):
            return []
    return params


def _rules2_decided(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str, handler: str) -> tuple[str, str] | None:
    """(actor, basis) of seed 66's rules that come before "a model's directory: the model"."""
    path, site = _where(record)
    if _caught_log(record, handler):
        return "internal", "logged for an exception it caught: that exception is the cause"
    if (
        record["kind"] in (RAISE, ASSERT)
        and _BACKEND_IMPL.fullmatch(site["qualname"])
        and not any(p in path for p in _BACKEND_PATHS)
        and _IMPL_KV_DTYPE.search(own)
        and set(reads) <= {"other", "state", "constant"}
        and all(_IMPL_KV_DTYPE.fullmatch(c) for source in ("other", "state") for c in reads.get(source) or [])
    ):
        return (  # (W28: in a model's own attention implementation the backend is the model's; the cache's dtype is yours)
            "setting",
            "the check tests the KV cache dtype its attention implementation is built with (`self.kv_cache_dtype`, which the "
            f"attention layer passes it from the cache config): the check reads the configuration `{_KV_DTYPE_FIELD}`",
        )
    parts = _model_part_unsupported(record, reads, own, text)
    if parts:
        return (
            "model",
            "an assert on the checkpoint's own configuration, a piece of which the model's module is built with ("
            + _shown(parts)
            + "): a variant this code does not support",
        )
    return None


#: A cleanup method (``cleanup``, ``close``, ``shutdown``, ``__del__``) that logs what it could not undo and goes on.
#: (not ``release``, ``free``, ``stop``: a request's blocks released at run time are no teardown)
_CLEANUP = re.compile(r"_?(?:cleanup|clean_up|close|shutdown|shut_down|teardown|tear_down|destroy)\w*|__del__|__exit__|__aexit__")
#: A message that quotes the error another process replied with (``{response.get('message')}``, ``{reply["error"]}``).
_REPLIED = re.compile(r"\{(\w+(?:\.get\(\s*['\"](?:message|error|detail|reason)['\"]\s*\)|\[['\"](?:message|error|detail|reason)['\"]\]))(?:![rs])?\}")


#: "Attention + quant fusion is enabled, but no attention layers were found ...": a feature on that has nothing to act on.
_ENABLED_BUT = re.compile(r"[^.]{1,120}?\b(?:is|are) enabled,? but\b")
#: "Round-robin placement requires DeepEP-ll or NIXL backend": what a choice needs of the backend chosen.
_REQUIRES_BACKEND = re.compile(r"\brequires?\b[^.]{0,80}?\bbackends?\b", re.I)
#: "Unexpected {status} message for engine {i} in {engine.state} state": a protocol's message the state does not take.
_UNEXPECTED_MESSAGE = re.compile(r"\bunexpected\b.{0,80}?\bmessage\b.{0,120}?\bstate\b", re.I)
#: "Request decoded media exceeds VLLM_MAX_MEDIA_REQUEST_DECODE_BYTES": one request over a limit of the server's.
_REQUEST_OVER = re.compile(r"Request\b[^.]{0,200}?\bexceeds?\b")


def _raises_after(site: dict[str, Any]) -> bool:
    """Whether the block a log line is in goes on to raise (``logger.warning(...)`` then ``raise`` in
    its ``except``), as far as the snippet shows: a bare ``raise`` (or any ``raise``) at the log's
    indentation or deeper before the block ends; True when the snippet does not show the line."""
    snippet = site.get("snippet") or {}
    lines = str(snippet.get("code") or "").splitlines()
    at = int(site["line"]) - int(snippet.get("start_line") or site["line"])
    if not 0 <= at < len(lines):
        return True
    indent = len(lines[at]) - len(lines[at].lstrip())
    for line in lines[at + 1 :]:
        if not line.strip():
            continue
        if len(line) - len(line.lstrip()) < indent:
            return False
        if re.match(r"\s*raise\b", line):
            return True
    return False


def _rules2_open(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> tuple[str, str] | None:
    """(actor, basis) of seed 66's rules for a check no other rule decides; None to leave it open."""
    _, site = _where(record)
    facts = site.get("facts") or {}
    handler = (facts.get("handler") or "").strip()
    method = site["qualname"].rpartition(".")[2]
    if (
        record["kind"] == LOG
        and (record.get("log") or {}).get("level") in ("warning", "info", "debug")
        and handler.startswith("except")
        and _CLEANUP.fullmatch(method)
        and not facts.get("reraise")
        and not _raises_after(site)
        and not set(reads) & {"config", "request", "model", "platform"}
    ):
        return (  # (O3)
            "internal",
            f"logged while `{short_code(site['qualname'])}` cleans up, for an error it catches (`{short_code(handler)}`) and goes on: "
            "what it could not undo is left as it is, nothing to do",
        )
    if record["kind"] == LOG and (record.get("log") or {}).get("level") in ("warning", "info") and _ENABLED_BUT.match(text) and not handler:
        return (  # (O32)
            "setting",
            "the warning says a feature you enabled does not apply to what it runs with (it names what is missing) and goes on without it",
        )
    if record["kind"] in (RAISE, LOG) and not handler and _REQUIRES_BACKEND.search(text) and not _HARDWARE.search(text):
        return "setting", "the message says the backend chosen does not support it"  # (O31: "requires DeepEP-ll or NIXL backend")
    if (
        record["kind"] == RAISE
        and _UNEXPECTED_MESSAGE.search(text)
        and reads
        and set(reads) <= {"other", "state", "constant", "param"}  # (``param``: the socket it was received on)
        and not _reached_from_outside(record, "/" + site["path"])
    ):
        return (  # (O18)
            "internal",
            "the check finds a message of the code's own protocol that the state it is in does not expect (a message between the project's own processes)",
        )
    replied = _REPLIED.search(text) if record["kind"] == RAISE and not record["message"].get("opaque") else None
    if replied:
        return (  # (O15)
            "internal",
            f"the message quotes the error the process it asked replied with (`{short_code(replied.group(1))}`): it wraps the error it carries, "
            "and that error is the cause",
        )
    return None


def _rules2_steps(record: dict[str, Any], actor: str, basis: str) -> list[str]:
    """The steps of seed 66's rules that need their own words."""
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    if actor == "internal" and basis.startswith("logged while `") and basis.endswith("nothing to do"):
        return ["Nothing to do: it could not undo one thing while cleaning up, says so and goes on."]
    if actor == "setting" and basis.startswith("the warning says a feature you enabled does not apply"):
        return [
            "Nothing breaks: it goes on without the feature (the message says what it found missing). If you meant it to apply, "
            "check the options that enable it against what the message names; otherwise leave it off to silence the warning."
        ]
    env = _ENV_NAME.search(text)
    if actor == "setting" and _REQUEST_OVER.match(text) and env and env.group(0).startswith(_env_prefixes(record)):
        return [  # (R*13: the request first, the server's limit second)
            "If you sent the request: it is over a limit of the server's; send a smaller one (fewer or smaller media items, or a shorter "
            f"input). If you run the server and such requests should pass, raise `{env.group(0)}` where it runs."
        ]
    return []


def _rules2_what(actor: str, basis: str) -> str | None:
    """What the page's first sentence names for seed 66's rules that need their own words."""
    if actor == "setting" and basis.startswith("the warning says a feature you enabled does not apply"):
        return "a feature you enabled, which the message names"
    return None


# --------------------------------------------------------------------------- s45-rules2: seed 67's wrong claims and open pages
# (bench/RESULTS.md, s45-judge: W5 W6 W9 W12 W16 W18 W35, O3 O13 O19, R*26 R*38): facts of the code,
# each a small function of its own that ``classify`` asks at one place.

#: The server's parsed command-line options as a request handler reaches them (``req.app.state.args.log_error_stack``).
_APP_ARGS = re.compile(r"(?<![\w.])\w+\.app\.state\.args\.([a-z_][a-z0-9_]*)$")


def _server_args(reads: dict[str, list[str]]) -> list[str]:
    """The options of the server's command line the check reads through the app a request reaches
    (``req.app.state.args.log_error_stack``: ``log_error_stack``), when it reads nothing else but
    constants (W5 of s45-judge: the server's own state is what the options started it with); else []."""
    chains = reads.get("request") or []
    if not chains or not set(reads) <= {"request", "constant"}:
        return []
    found = [_APP_ARGS.match(c) for c in chains]
    return [m.group(1) for m in found if m] if all(found) else []


def _server_option(dest: str, names: SettingNames | None) -> str:
    flag = _flag_of(dest, names)
    return f"`{flag}`" if flag else f"`args.{dest}`"


#: A CUDA or HIP runtime call that fills a local through its address (``cudaDeviceGetAttribute(&x, ...)``).
_OUT_PARAM = re.compile(r"\b((?:cuda|hip|cu)[A-Z]\w*)\(\s*&\s*([A-Za-z_]\w*)\b")
_C_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_C_WORDS = frozenset({"true", "false", "nullptr", "NULL", "sizeof"})


def _device_filled(record: dict[str, Any], own: str) -> tuple[str, str] | None:
    """(local, call) when a native check tests only locals the CUDA or HIP runtime filled through
    their address above it in the function (``cudaDeviceGetAttribute(&max_shared_mem, ...)`` then
    ``STD_TORCH_CHECK(max_shared_mem > 0)``): what the device or driver reports, no argument the
    project's code passed (W6 of s45-judge). Else None."""
    if record["kind"] != NATIVE or not own:
        return None
    site = record["sites"][0]
    snippet = site.get("snippet") or {}
    lines = str(snippet.get("code") or "").splitlines()
    above = "\n".join(lines[: max(0, int(site["line"]) - int(snippet.get("start_line") or site["line"]))])
    filled = {m.group(2): m.group(1) for m in _OUT_PARAM.finditer(above)}
    used = [n for n in _C_NAME.findall(_STRING.sub("", own)) if n not in _C_WORDS]
    if not used or not all(n in filled for n in used):
        return None
    return used[0], filled[used[0]]


#: A preprocessor test of the platform or the GPU architecture a native file is built for.
_PLATFORM_MACRO = re.compile(r"\b(?:USE_ROCM|__HIP\w*|__HIPCC__|__CUDA_ARCH\w*|__gfx\w+|USE_XPU|__SYCL\w*)\b")
_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


def _platform_branch(record: dict[str, Any]) -> str | None:
    """The preprocessor test of the platform branch (``#if defined(USE_ROCM)``, an ``#else`` of one,
    ``#if __CUDA_ARCH__ < 800``) an unguarded native throw is in, as the snippet shows it above the
    site: the throw is built only for that platform, and fails whatever it is given (W12 of
    s45-judge: "not supported on ROCm" in the ROCm build). Else None."""
    site = record["sites"][0]
    if record["kind"] != NATIVE or (site.get("facts") or {}).get("guards"):
        return None
    snippet = site.get("snippet") or {}
    lines = str(snippet.get("code") or "").splitlines()
    open_: list[str] = []
    for line in lines[: max(0, int(site["line"]) - int(snippet.get("start_line") or site["line"]))]:
        found = _DIRECTIVE.match(line)
        if found is None:
            continue
        word, rest = found.group(1), found.group(2).strip()
        if word in ("if", "ifdef", "ifndef"):
            open_.append(f"#{word} {rest}")
        elif word == "endif" and open_:
            open_.pop()
        elif word in ("elif", "else") and open_:
            open_[-1] = open_[-1] + f" (#{word}{' ' + rest if rest else ''})"
    return next((b for b in reversed(open_) if _PLATFORM_MACRO.search(b)), None)


#: A function of a platform's code that reads a property of the device (``_capability_from_gcn_arch``,
#: ``get_device_numa_node``, ``get_device_total_memory``), not a model's (``verify_model_arch``).
#: (a search for the words, the name tested for "model" apart: ``\w*`` before them was quadratic in a long name)
_DEVICE_READER = re.compile(r"capabilit|gcn_arch|numa_node|total_memory")


def _platform_reads_device(record: dict[str, Any], reads: dict[str, list[str]]) -> bool:
    """Whether a check is in a platform's own code (``vllm/platforms/rocm.py``), in a function that
    parses what the device reports (its capability, its architecture: ``_capability_from_gcn_arch``),
    reading no setting, request or model (W9 of s45-judge: the GPU, not a model's config.json)."""
    path, site = _where(record)
    method = site["qualname"].rpartition(".")[2]
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    return (
        record["kind"] in (RAISE, LOG)
        and "/platforms/" in path
        and bool(text)  # (an empty ``raise NotImplementedError`` is the base class's, for a platform to implement)
        and exception_word(record) != "NotImplementedError"
        and bool(_DEVICE_READER.search(method))
        and "model" not in method
        and not set(reads) & {"config", "request", "model"}
    )


#: A quantization method's parameter as the layer holds it (``layer.w13_weight``, ``getattr(layer, name)``).
_LAYER_DTYPE = re.compile(r"(?:layer\.[A-Za-z_]\w*|getattr\(layer, [\w'\"]+\))\.dtype")


def _registered_dtype(record: dict[str, Any], reads: dict[str, list[str]]) -> list[str]:
    """The dtypes of the layer's own parameters a check in a quantization method tests after the
    weights are loaded (``getattr(layer, name).dtype != expected_dtype`` in a function of
    ``process_weights_after_loading``), when it tests nothing else but constants: the method's
    ``create_weights`` registered each parameter with its dtype and loading copies the checkpoint's
    tensor into it, so the dtype is the code's own (W16 of s45-judge). Else []."""
    path, site = _where(record)
    tensors = reads.get("tensor") or []
    callers = [c.get("qualname") or "" for c in record["meaning"].get("callers") or []]
    after_load = [site["qualname"], *callers[:1]]
    if (
        record["kind"] not in (RAISE, ASSERT)
        or "/layers/quantization/" not in path
        or not tensors
        or not set(reads) <= {"tensor", "constant"}
        or not all(_LAYER_DTYPE.fullmatch(t) for t in tensors)
        or not any(q.rpartition(".")[2] == "process_weights_after_loading" for q in after_load)
    ):
        return []
    return tensors


#: A KV connector's code (``kv_connector/v1/hf3fs/``), chosen with ``--kv-transfer-config``.
_CONNECTOR_PATHS = ("/kv_connector/",)
#: "HF3FS requires uniform KV cache shapes and strides.": what the connector itself needs.
_CONNECTOR_NEEDS = re.compile(r"^`?([A-Z][\w-]*)`? (?:connector )?(?:requires|needs|only supports)\b")


def _connector_limit(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> str | None:
    """The connector a check in a KV connector's code names as what requires something ("HF3FS
    requires uniform KV cache shapes and strides."), reading no request, no parameter and no probe
    of the machine: a limit of the connector chosen for what the model's layers are (W18 of
    s45-judge: not a bug). Else None."""
    path, _ = _where(record)
    found = _CONNECTOR_NEEDS.match(text)
    if (
        record["kind"] not in (RAISE, ASSERT)
        or found is None
        or not any(p in path for p in _CONNECTOR_PATHS)
        or set(reads) & {"request", "param", "platform"}
        or _HARDWARE.search(text)
    ):
        return None
    return found.group(1)


#: A presence test of a tokenizer (``tokenizer is None``, ``not (tokenizer is not None)``).
_TOKENIZER_MISSING = re.compile(r"not \((?:self\.)?(?:\w+\.)*tokenizer is not None\)|(?:self\.)?(?:\w+\.)*tokenizer is None")
_TOKENIZER_HELD = re.compile(r"(?:self\.)?(?:\w+\.)*tokenizer")
_SKIP_TOKENIZER = "model_config.skip_tokenizer_init"


def _tokenizer_skipped(record: dict[str, Any], reads: dict[str, list[str]], own: str, names: SettingNames | None) -> str | None:
    """The option that starts the server without a tokenizer, when a check in the code that serves
    requests finds the tokenizer it holds missing (``assert tokenizer is not None``, the tokenizer
    ``self.renderer.tokenizer``) and the project has that option (``skip_tokenizer_init``: the
    renderer holds None exactly when it is set; W35 of s45-judge). Else None."""
    path, _ = _where(record)
    flag = (names.flags.get(_SKIP_TOKENIZER) if names is not None else None) or None
    held = [c for source in ("other", "state") for c in reads.get(source) or []]
    if (
        flag is None
        or record["kind"] not in (RAISE, ASSERT)
        or not any(p in path for p in _REQUEST_PATHS)
        or not _TOKENIZER_MISSING.fullmatch(own.strip())
        or not held
        or not set(reads) <= {"other", "state"}
        or not all(_TOKENIZER_HELD.fullmatch(c) for c in held)
    ):
        return None
    return flag


def _s45_decided(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(actor, basis) of seed 67's rules that come before "a model's directory: the model"."""
    filled = _device_filled(record, own)
    if filled:
        return (
            "environment",
            f"the check tests what the GPU runtime reports of the device (`{filled[0]}`, filled by `{filled[1]}`): "
            "the GPU or its driver, no argument the code passed",
        )
    branch = _platform_branch(record)
    if branch:
        return (
            "environment",
            f"thrown whenever it is reached in the build for one platform (`{short_code(branch)}`): the platform or GPU it runs on "
            "does not have it, whatever the kernel is given",
        )
    if _platform_reads_device(record, reads):
        return "environment", f"the check reads the hardware: `{short_code(record['sites'][0]['qualname'])}` parses what the device reports"
    dtypes = _registered_dtype(record, reads)
    if dtypes:
        return (
            "internal",
            "the check tests the dtype of the layer's own parameters (" + _shown(dtypes) + "), which the quantization method's "
            "`create_weights` registered with that dtype (loading copies the checkpoint into them): the code's own value",
        )
    connector = _connector_limit(record, reads, text)
    if connector:
        return (
            "setting",
            f"a limit of the KV connector chosen (`{connector}`, with `--kv-transfer-config`): the message says what it requires of "
            "the KV cache the model's layers make",
        )
    skipped = _tokenizer_skipped(record, reads, own, names)
    if skipped:
        return (
            "setting",
            f"the check finds the server's tokenizer missing, which it is only when started with `{skipped}`: the setting `{skipped}` leads to it",
        )
    return None


#: ``isinstance(failure, asyncio.CancelledError)``: a task the code runs was cancelled.
_CANCELLED = re.compile(r"isinstance\((\w+), (?:asyncio\.)?CancelledError\)")
#: A file's kind on this machine, as ``os.stat``/``os.lstat`` gives it (``stat.S_ISLNK(info.st_mode)``).
_FILE_KIND = re.compile(r"\bstat\.S_IS(?:LNK|SOCK|DIR|REG|FIFO|CHR|BLK)\(|\bos\.path\.islink\(")
#: "Replacing legacy rope_type 'mrope' with 'default'": a legacy spelling of the model's config rewritten.
_LEGACY = re.compile(r"\b(?:legacy|deprecated)\b", re.I)
_CONFIG_CODE = ("/transformers_utils/",)


def _s45_open(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> tuple[str, str] | None:
    """(actor, basis) of seed 67's rules for a check no other rule decides; None to leave it open."""
    path, site = _where(record)
    own = guard_reads.own_condition(site) or ""
    facts = site.get("facts") or {}
    cancelled = _CANCELLED.fullmatch(own.strip())
    if record["kind"] == RAISE and cancelled:
        return (  # (O3)
            "internal",
            f"a task the code itself runs was cancelled (`{cancelled.group(1)}` is an `asyncio.CancelledError`): it had already stopped, "
            "and what stopped it comes earlier",
        )
    if record["kind"] == RAISE and _FILE_KIND.search(own) and "param" in reads and not set(reads) & {"config", "request", "model"}:
        return (  # (O19)
            "environment",
            f"the check tests the kind of a file on this machine (`{short_code(own.strip())}`): the path it names is not the file it expects",
        )
    if (
        record["kind"] == LOG
        and (record.get("log") or {}).get("level") in ("warning", "info")
        and not facts.get("handler")
        and any(p in path for p in _CONFIG_CODE)
        and _LEGACY.search(text)
        and not set(reads) & {"config", "request", "platform"}
    ):
        return (  # (O13)
            "model",
            "informational: the warning says the model's configuration (its config.json) uses a legacy form, which the code rewrites "
            "as it reads it and goes on",
        )
    return None


def _s45_steps(record: dict[str, Any], actor: str, basis: str, names: SettingNames | None) -> list[str]:
    """The steps of seed 67's rules that need their own words."""
    if actor == "setting" and basis.startswith("the check reads the server's command-line options"):
        option = f"`{basis.split('`')[1]}`"
        if option.startswith("`args."):  # (no option of the project's declares it by name: argparse's spelling of the dest)
            option += f" (`--{option[6:-1].replace('_', '-')}`, as argparse spells that name)"
        if record["kind"] == LOG:
            return [
                f"It is logged because the server was started with {option}: what it logs is the error the server answered a request "
                "with; look that error up by its own message (its page says whose move it is). Start without the option to stop these lines."
            ]
        return [f'Check the value you give {option} when you start the server: the condition under "When it is raised" is what it fails.']
    if actor == "setting" and basis.startswith("a limit of the KV connector chosen"):
        return [
            "Give this KV connector what the message says it requires (of the KV cache the model's layers make, or of a setting it "
            "names), or use another KV connector in `--kv-transfer-config` for this model."
        ]
    if actor == "setting" and basis.startswith("the check finds the server's tokenizer missing"):
        flag = basis.split("`")[1]
        return [f"Start the server without `{flag}`: this endpoint needs the tokenizer."]
    if actor == "environment" and basis.startswith("the check tests the kind of a file on this machine"):
        return [
            "Check the file it tests on this machine (the path the message names, or the one the setting that gives it holds): what it is, "
            "a link, its owner; point that setting at the real file, or remove what stands in its place."
        ]
    if actor == "model" and basis.startswith("informational: the warning says the model's configuration"):
        return ["Nothing to do: it reads the model's config.json in its legacy form and goes on (the message names what it rewrites)."]
    return []


def _s45_what(record: dict[str, Any], actor: str, basis: str, names: SettingNames | None) -> str | None:
    """What the page's first sentence names for seed 67's rules that need their own words."""
    if actor == "setting" and basis.startswith("the check reads the server's command-line options"):
        return "the server's option " + _joined([f"`{c}`" for c in _CODES.findall(basis)])
    if actor == "setting" and basis.startswith("a limit of the KV connector chosen"):
        return f"the KV connector you chose, `{basis.split('`')[1]}`, for this model"
    if actor == "setting" and basis.startswith("the check finds the server's tokenizer missing"):
        return f"`{basis.split('`')[1]}`"
    if actor == "environment" and basis.startswith(("the check tests what the GPU runtime reports", "thrown whenever it is reached in the build")):
        return "the GPU, its driver or the platform it runs on"
    if actor == "environment" and basis.startswith("the check reads the hardware: "):
        return "the GPU it runs on"
    if actor == "environment" and basis.startswith("the check tests the kind of a file on this machine"):
        return "a file on this machine: its kind, a link or its owner"
    if actor == "model" and basis.startswith("informational: the warning says the model's configuration"):
        return "its config.json, in a legacy form this version rewrites"
    return None


def _names_inputs(record: dict[str, Any]) -> bool:
    """Whether a check in a model's code names what a request gives it (a prompt, media, a frame or a
    patch) in its message or its own condition: only then is "check the inputs you give it" a step
    (R*26 of s45-judge: not for a kernel's stage count against the model's latent size)."""
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    return bool(_MEDIA_WORDS.search(text + " " + (guard_reads.own_condition(record["sites"][0]) or "")))


# --------------------------------------------------------------------------- s45-rules: what to install (#32)
# An import guard's placeholder (brief item 4) and an environment page whose step said "install what is
# missing" without a name (item 3): the step names what the code or the message names, or says that
# neither names it and where the name is (bench/RESULTS.md, s45-rules).

#: The basis of a page whose package is missing (``classify``).
_PACKAGE_BASIS = "a package that is not installed (or cannot be imported) leads to it"
#: The generic environment step (``_steps``), which names nothing to install.
_GENERIC_ENV_STEP = "Check the packages, driver and hardware this runs on against what the message names;"
#: A probe's name around the package it tests for (``HAS_TRITON``, ``is_numba_available()``, ``has_deep_gemm()``).
_PROBE_WORD = re.compile(r"(?:[A-Za-z_]\w*\.)*_?(?:(?:HAS|has)_(?P<a>\w+?)|(?:is_)?(?P<b>\w+?)_(?:available|AVAILABLE|installed|INSTALLED))(?:\(\))?")
#: What a message says is missing, by name: "DeepGEMM is not available", "requires the `cohere_melody`
#: package", "flashinfer is not installed", "No module named 'x'", "pip install x".
_MISSING_NAMED = (
    re.compile(r"^`?(?!The\b|This\b|It\b)(?P<n>[A-Za-z][\w.-]*)`? (?:(?:is|are) )?(?:not (?:available|installed)|unavailable)\b"),
    re.compile(r"`(?P<n>[A-Za-z][\w.-]*)` (?:is|are) not (?:available|installed)\b"),
    re.compile(
        r"\brequires? (?:the |a |an )?(?:usable |working |compatible )?`?(?P<n>[A-Za-z][\w.-]*)`? (?:package|library|module|to be installed|installation)\b",
        re.I,
    ),
    re.compile(r"\brequires? (?:the )?installation of `?(?P<n>[A-Za-z][\w.-]*)", re.I),
    re.compile(r"\brequires? `?(?P<n>[A-Za-z][\w.-]*)`? ?(?:>=|==|<=|~=)", re.I),
    re.compile(r"\b(?:package|module) [`'\"](?P<n>[A-Za-z][\w.-]*)[`'\"]? (?:is|was) not (?:installed|found)\b", re.I),
    re.compile(r"\bNo module named [`'\"]?(?P<n>[A-Za-z][\w.]*)", re.I),
    re.compile(r"\bpip install (?:-U )?[`'\"]?(?!git\+|https?:)(?P<n>[A-Za-z][\w.\[\]-]*)", re.I),
    re.compile(r"^`?(?P<n>[A-Za-z][\w.-]*)`? (?:[<>=~!]=? ?\S+ )?(?:is|are) required\b"),
)


def _probe_word(probe: str) -> str | None:
    """The package a probe's name says it tests for (``HAS_TRITON``: triton), lower-cased; None for
    a name that says none (``torch.cuda.is_available()``)."""
    m = _PROBE_WORD.fullmatch(probe)
    word = (m.group("a") or m.group("b") or "") if m else ""
    word = word.lower().strip("_")
    return word if len(word) >= 3 and word not in ("is", "available", "installed") else None


def _said(word: str, text: str) -> bool:
    """Whether the message names the word as written (``triton``; "NIXL transport" is no ``nixl``: the
    package it needs there is another, ``nixl_rocm``)."""
    return bool(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text))


def _placeholder(record: dict[str, Any], stub: list[str], names: SettingNames | None) -> dict[str, Any]:
    """Who acts on a raise in a placeholder: a function or class defined where an optional import
    failed (in ``except ImportError:`` after ``from flash_attn import ...``; in the branch where
    ``HAS_TRITON`` / ``is_numba_available()`` is false), with no ``if`` of its own around the raise:
    it stands in for the real one and raises whenever it is used, so the package is missing from the
    environment (brief item 4: ``_raise_exception`` "as lack of triton", the numba and flash-attn ones
    were internal or named no package)."""
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    where = f"`{short_code(record['sites'][0]['qualname'])}`"
    form, named = stub[0], [short_code(n) for n in stub[1:]]
    if form == "import":
        modules = _joined([f"`{m}`" for m in named])
        failed = f"the import of {modules} failed (its `except ImportError`)"
        what = f"the package that provides {modules}" if len(named) == 1 else f"the package that provides {modules} (the one this platform imports)"
    else:
        probe = f"`{named[0]}`"
        failed = f"{probe} is false"
        word = _probe_word(stub[1])
        what = f"`{word}` (the package {probe} tests for, and the message names)" if word and _said(word, text) else f"the optional package {probe} tests for"
    found = remedy(record, names)
    if found and re.search(r"\{[^{}]*\}", found):  # ("Please install {package} first.": the code fills it in)
        found = None
    project = _project(record)
    return {
        "actor": "environment",
        "basis": f"raised in {where}, a placeholder defined where {failed}: it raises whenever it is used, in place of code that needs {what}",
        "says": (
            f"Your environment (a package missing from the Python environment {project} runs in: {where} is the placeholder "
            f"{project} defines where {failed}, and it raises whenever it is used) leads to this {_noun(record)}."
        ),
        "remedy": found,
        "steps": ([f"Do what the message says: {found}"] if found else [])
        + [
            f"Install {what} in the Python environment {project} runs in (a version this release supports) and start it again; "
            f"or choose a backend, kernel or feature that does not use {where}."
        ],
    }


def _message_names(text: str) -> str | None:
    """The package or module a message names as missing ("DeepGEMM is not available": DeepGEMM), else None."""
    for pattern in _MISSING_NAMED:
        m = pattern.search(text)
        if m and m.group("n").lower() not in ("it", "this", "that", "the", "a", "an", "package", "module"):
            return m.group("n").rstrip(".")
    return None


def _install_steps(record: dict[str, Any], steps: list[str], found: str | None, reads: dict[str, list[str]], importing: list[str] | None) -> list[str]:
    """The steps of a page whose package is missing, with the generic one ("install or upgrade what is
    missing") replaced by one that names what to install: the modules the ``try`` around it imports
    (``importing``); else, with the message's own remedy, nothing more; else the package a probe of it
    tests for, or the name the message gives; with none of them, what the page does know and where the
    name is (brief item 3: a step must name what to install, or say what it knows)."""
    if not any(step.startswith(_GENERIC_ENV_STEP) for step in steps):
        return steps
    kept = [step for step in steps if not step.startswith(_GENERIC_ENV_STEP)]
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    project = _project(record)
    probes = [p for p in reads.get("platform") or [] if _probe_word(p)]
    named = _message_names(text)
    if importing:
        return [*kept, _import_step(record, importing)]
    if found:
        return kept or steps
    shown = _joined([f"`{short_code(p)}`" for p in probes]) if probes else ""
    word = next((w for w in (_probe_word(p) for p in probes) if w and _said(w, text)), None)
    if word or (probes and not named):
        what = f"`{word}` (which {shown} tests for, and the message names)" if word else f"the optional package {shown} tests for"
        return [*kept, f"Install {what} where {project} runs, in a version this release supports, or run without the feature that needs it."]
    if named and "." in named.strip("."):
        whole = short_code(named)
        return [
            *kept,
            f"Install or upgrade `{short_code(named.split('.')[0])}` where {project} runs, to a build that has `{whole}` (the message names it), "
            "or run without the feature that needs it.",
        ]
    if named:
        return [
            *kept,
            f"Install `{short_code(named)}` (the message names it) where {project} runs, in a version this release supports, or run "
            "without the feature that needs it.",
        ]
    return [
        *kept,
        "The code does not show which package this needs: install what the message names, or the module the `ImportError` with it "
        f'names (in the traceback or the lines before it in the log: "No module named ..."), where {project} runs.',
    ]


#: A module of the project's own that is a compiled extension (``vllm._C``, ``vllm._rocm_C``, ``vllm._C_AVX512``).
_EXTENSION = re.compile(r"(?:\w+\.)*_(?:[a-z0-9]+_)?C(?:_\w+)?")


def _import_step(record: dict[str, Any], importing: list[str]) -> str:
    """The step for a check in the ``except ImportError`` of a ``try`` that imports ``importing``
    (said as "if that is what failed" where the ``except`` catches other errors too)."""
    project = _project(record)
    modules = _joined([f"`{short_code(m)}`" for m in importing])
    handler = (record["sites"][0].get("facts") or {}).get("handler") or ""
    only = not re.sub(r"\b(?:ImportError|ModuleNotFoundError|except|as\s+\w+)\b|[\s(),:]", "", handler)
    failed = f"The import that failed is {modules}" if only else f"If the import of {modules} is what failed (the `except` catches other errors too)"
    top = record["sites"][0]["module"].split(".")[0]
    own = [m for m in importing if m.split(".")[0] == top]
    if own and len(own) == len(importing) and all(_EXTENSION.fullmatch(m) for m in own):
        return (
            f"{failed}, {project}'s own compiled extension: install a build of {project} made for this platform and this torch "
            "(the release's wheel for it), or build it from source; the `ImportError` in the message or the log says which "
            "library it could not load."
        )
    if own and len(own) == len(importing):
        return (
            f"{failed}, a module of {project}'s own: the `ImportError` in the message or the log names what it could not import "
            "in turn; install that package where it runs, or a build of this release that has the module."
        )
    return (
        f"{failed}: install the package that provides it in the Python environment {project} runs in, or upgrade it to a "
        "version this release supports; the `ImportError` in the message or the log says why it failed."
    )


def _set_up(record: dict[str, Any]) -> bool:
    """Whether the site's function builds the model or loads its checkpoint (``__init__``, ``load_weights``,
    a config's or a quantization method's function: ``_MODEL_SETUP``), where no request has reached it."""
    return bool(_MODEL_SETUP.fullmatch(record["sites"][0]["qualname"].rpartition(".")[2]))


#: A settings class's loader of its own config file (``MooncakeStoreConfig.from_file``): what the
#: functions it alone calls check is a value of the file the user points it at.
_FILE_LOADER = re.compile(r"(?:\w+\.)*\w*Config\.(?:from_file|from_\w+_file|load_from_file|load_file|from_path)")
_CONFIG_FILE_BASIS = "raised for a value of the config file its only caller reads"


def _config_file_read(record: dict[str, Any]) -> str | None:
    """The loader, when a raise of a bad value (``ValueError``, ``TypeError``, ``KeyError``) is in a
    function every caller of which is a settings class's loader of its config file (``_parse_size``,
    called only by ``MooncakeStoreConfig.from_file`` on ``json.load``'s fields: O33 of s44-judge);
    else None. (``TorchAOConfig.from_config``, called by its file's loader and by a JSON dict's, is not.)"""
    callers = record["meaning"].get("callers") or []
    if record["kind"] != RAISE or exception_word(record) not in ("ValueError", "TypeError", "KeyError") or not callers:
        return None
    loaders = {c.get("qualname") or "" for c in callers}
    return next(iter(loaders)) if len(loaders) == 1 and all(_FILE_LOADER.fullmatch(q) for q in loaders) else None


def _rules45_steps(actor: str, basis: str) -> list[str]:
    if actor == "setting" and basis.startswith(_CONFIG_FILE_BASIS):
        loader = basis.split("`")[1]
        return [f'Check the value in the config file `{loader}` reads (the file your set-up gives it) against the condition under "When it is raised".']
    return []


def _rules45_what(actor: str, basis: str) -> str | None:
    if actor == "setting" and basis.startswith(_CONFIG_FILE_BASIS):
        return f"a value in the config file `{basis.split('`')[1]}` reads"
    return None


# --------------------------------------------------------------------------- s45-rules3: seed 68's wrong claims and open pages
# (bench/RESULTS.md, s45-judge2: W15 W16 W23 W32 W33, O30): facts of the code, each a small function
# of its own that ``classify`` (or the steps) asks at one place.

#: An assert's whole condition: the object's own field is there (``not (self.stop_token_ids is not None)``).
_SELF_PRESENT = re.compile(r"not \(self\.([a-z_]\w*) is not None\)")
_SETUP_METHODS = frozenset({"__init__", "__post_init__", "__attrs_post_init__", "model_post_init", "__new__"})


def _own_field_filled(record: dict[str, Any], own: str, names: SettingNames | None) -> str | None:
    """``Class.field`` when an assert in a method of a class (past its set-up) finds the object's own
    field there (``assert self.stop_token_ids is not None``) and the class's set-up gives that field a
    value whenever none is given (``SamplingParams.__post_init__``: ``if self.stop_token_ids is None:
    self.stop_token_ids = []``; ``SettingNames.filled``): once built it is never None, whatever a
    request or a setting gave it (W33 of s45-judge2). Else None."""
    found = _SELF_PRESENT.fullmatch(own.strip())
    if record["kind"] != ASSERT or found is None or names is None or not names.filled:
        return None
    _, site = _where(record)
    owner, _, method = site["qualname"].rpartition(".")
    if not owner or "." in owner or method in _SETUP_METHODS:
        return None
    module = site["path"].removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    key = f"{owner}.{found.group(1)}"
    if any(f == f"{module}.{key}" or (f.endswith("." + key) and module.endswith(f[: -len(key) - 1])) for f in names.filled):
        return key
    return None


#: A warm-up's function or message ("Multi-modal warmup failed", ``warmup_mm``, ``_warm_up_model``).
_WARMUP = re.compile(r"warm[_ -]?up", re.I)


def _warmup_caught(record: dict[str, Any], handler: str, text: str) -> bool:
    """A warning (or info) logged in ``except Exception:`` of a warm-up (its function's name or its
    message says warm-up) that does not raise again: the warm-up runs the code on dummy inputs before
    serving, the log is all it does with what failed, and serving goes on (W16 of s45-judge2)."""
    _, site = _where(record)
    method = site["qualname"].rpartition(".")[2]
    return (
        record["kind"] == LOG
        and (record.get("log") or {}).get("level") in ("warning", "info", "debug")
        and bool(_BROAD_HANDLER.match(handler.strip()))
        and bool(_WARMUP.search(method) or _WARMUP.search(text))
        and not (site.get("facts") or {}).get("reraise")
        and not _raises_after(site)
    )


#: A divisibility test of a tensor's dimension by the size of a process group (``input_tensor.shape[0] % world_size``).
_SHAPE_BY_GROUP = re.compile(
    r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.(?:shape\[-?\d+\]|size\(-?\d*\))\s*%\s*(?:self\.)?(?:world_size|group_size_of_ranks|num_ranks|tp_size|tp_world_size)\b"
)


def _tensor_divisible(record: dict[str, Any], reads: dict[str, list[str]], own: str) -> bool:
    """An assert or raise whose own condition is a divisibility test of a runtime tensor's dimension
    by its process group's size (``input_tensor.shape[0] % world_size == 0`` in a communicator),
    reading nothing of a setting, a request or the model, and no checkpoint's tensor in a weight
    loader: the tensor is one the project's code sized (its callers pad it to the group's size), so
    no parallel size fixes it; only a test on a config value (heads, hidden size, experts) is a
    setting's (W32 of s45-judge2)."""
    _, site = _where(record)
    return (
        record["kind"] in (RAISE, ASSERT)
        and bool(_SHAPE_BY_GROUP.search(own))
        and "tensor" in reads
        and not set(reads) & {"config", "request", "model", "platform"}
        and not _WEIGHT_LOADER.fullmatch(site["qualname"].rpartition(".")[2])
        and not _LOADED.search(own)
        and not _PARALLEL.search("" if record["message"].get("opaque") else record["message"]["text"])
    )


#: A class decorator's wrapper (``register_quantization_config.<locals>._wrapper``) testing the class it is given.
_REGISTER_WRAPPER = re.compile(r"_?register\w*\.<locals>\.\w+")
_SUBCLASS_TEST = re.compile(r"not issubclass\((\w+), ([A-Za-z_][\w.]*)\)")


def _registered_subclass(record: dict[str, Any], own: str) -> str | None:
    """The base class a registration decorator's wrapper requires of the class it is applied to
    (``def register_quantization_config(name)`` returning ``_wrapper(cls)`` that tests ``not
    issubclass(cls, QuantizationConfig)``): the plugin or user code that registers its class (W15 of
    s45-judge2: it reads no model). Else None."""
    _, site = _where(record)
    found = _SUBCLASS_TEST.fullmatch(own.strip())
    if record["kind"] not in (RAISE, ASSERT) or found is None or not _REGISTER_WRAPPER.fullmatch(site["qualname"]):
        return None
    return found.group(2)


#: "PyNvVideoCodec decoder slots are not configured": a set-up step of the code's own had not run.
_NOT_SET_UP = re.compile(r"\b(?:is|are) not (?:yet )?(?:configured|initiali[sz]ed|set up)\b", re.I)
#: A presence test of a field of a module's own private state (``pool.max_slots is None``, ``pool = _pynv_decoder_pool``).
_STATE_NONE = re.compile(r"[a-z_]\w*\.[a-z_]\w* is None")


def _module_state_unset(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str) -> str | None:
    """The module's private state a raise finds unset (``_pynv_decoder_pool``: ``if pool.max_slots is
    None: raise RuntimeError("... slots are not configured")``), when the condition reads nothing else
    and the message says it is not configured yet: the module's own ``configure()`` had not run
    before it, an order of the code's own calls, whatever class or media it serves (W28 of
    s45-judge2). Else None."""
    state = reads.get("other") or []
    if (
        record["kind"] != RAISE
        or not _NOT_SET_UP.search(text)
        or not _STATE_NONE.fullmatch(own.strip())
        or set(reads) != {"other"}
        or len(state) != 1
        or not re.fullmatch(r"_[a-z]\w*", state[0])
    ):
        return None
    return state[0]


def _rules3_early(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str, handler: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(actor, basis) of seed 68's rules that come before the request's and the settings' rules."""
    filled = _own_field_filled(record, own, names)
    if filled:
        return (
            "internal",
            f"an assert that `{filled}` is there, which the class's own set-up gives a value whenever none is given: "
            "it narrows the code's own value, whatever was sent or set",
        )
    if _warmup_caught(record, handler, text):
        return (
            "internal",
            f"logged when a warm-up with dummy inputs fails (`{short_code(handler)}`), and serving goes on without it: the exception it caught is the cause",
        )
    if _tensor_divisible(record, reads, own):
        return (
            "internal",
            f"the check tests that a tensor the project's own code sized divides evenly (`{short_code(own.strip())}`): "
            "its callers size it, no parallel size of yours",
        )
    state = _module_state_unset(record, reads, own, text)
    if state:
        return (
            "internal",
            f"the check finds the module's own state (`{state}`) not set up yet, which its own set-up call fills before use: the order of the code's own calls",
        )
    base = _registered_subclass(record, own)
    if base:
        return "caller", f"a registration decorator requires the class it is applied to to subclass `{base}`: the plugin or code that registers it"
    return None


def _built_by_model_config(record: dict[str, Any]) -> list[str]:
    """The ``__init__`` of the model's config classes (``BailingMoeV3TextConfig.__init__`` in
    ``transformers_utils/configs/``) when every caller of a raise's function is one: they are built
    from the checkpoint's config.json, and the function checks what they were given (O30 of
    s45-judge2). Else []."""
    path, _ = _where(record)
    callers = record["meaning"].get("callers") or []
    if record["kind"] != RAISE or "/transformers_utils/configs/" not in path or not callers:
        return []
    inits = [c.get("qualname") or "" for c in callers]
    if not all(
        "/transformers_utils/configs/" in "/" + (c.get("path") or "") and re.fullmatch(r"\w*Config\.__init__", q) for c, q in zip(callers, inits, strict=True)
    ):
        return []
    return inits


def _rules3_open(record: dict[str, Any]) -> tuple[str, str] | None:
    """(actor, basis) of seed 68's rules for a check no other rule decides; None to leave it open."""
    inits = _built_by_model_config(record)
    if inits:
        return (
            "model",
            "called only while the model's configuration is built (" + _shown(inits) + ", from its config.json): "
            "the checkpoint's config has values this code does not take",
        )
    return None


def _server_flag_step(record: dict[str, Any]) -> str | None:
    """The step for a request's page whose message names a server option (``--trust-request-chat-
    template``) that the check's own condition finds unset by its name (``not
    trust_request_chat_template and ...``): the operator may start the server with it, so "nothing
    needs to change on the server" is wrong (W23 of s45-judge2). Not one the condition finds set
    (``--kv-sharing-fast-prefill``: "disable it"). Else None."""
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    own = guard_reads.own_condition(record["sites"][0]) or ""
    for flag in dict.fromkeys(_FLAG.findall(text)):
        dest = flag[2:].replace("-", "_")
        if re.search(rf"(?<![\w.])not (?:[A-Za-z_]\w*\.)*{re.escape(dest)}\b", own):
            return (
                f"Send the request without what the message says needs `{flag}`, or, if you run the server and mean to allow it, "
                f"start the server with `{flag}` (the check tests that `{dest}` is not set)."
            )
    return None


def _rules3_steps(actor: str, basis: str) -> list[str]:
    """The steps of seed 68's rules that need their own words."""
    if actor == "caller" and basis.startswith("a registration decorator requires the class it is applied to to subclass `"):
        base = basis.split("`")[1]
        return [f"Make the class your code or plugin registers with this decorator a subclass of `{base}` (it takes no other class)."]
    return []


# --------------------------------------------------------------------------- s45-rules4: a setting row names a knob, not an object

#: ``vllm_config.model_config``, ``attention_config.hisparse_config``: a read that ends on a config
#: object (a dataclass of settings), not on a field anyone sets; ``*extra_config`` is a dict-valued
#: option itself (``--kv-transfer-config``'s ``kv_connector_extra_config``) and stays.
_CONFIG_OBJECT = re.compile(r"(?:^|\.)(?!\w*extra_config$)\w*config$")


def _rules4_guards(record: dict[str, Any]) -> str:
    site = record["sites"][0]
    return "\n".join([*((site.get("facts") or {}).get("guards") or []), site.get("condition") or ""])


def _rules4_configs_shown(code: list[str], names: SettingNames | None, record: dict[str, Any]) -> str:
    """The config values a check reads, each shown as its option where one sets it, but never a
    config object as if it were a knob (s45-judge2 W16): an object read beside one of its own fields
    is left out (`config.speculative_config` beside `config.speculative_config.num_speculative_tokens`);
    one whose field the check's own condition reads is that field (``pass_config.fuse_allreduce_rms``);
    one the condition tests ``is None``/``is not None`` is whether it is set, as its feature's option
    where one enables it (``lora_config``: ``--enable-lora``); the model's config is the model and its
    options; any other is one of the object's values, not a setting of its own."""
    guards = _rules4_guards(record)
    code = list(dict.fromkeys(code))
    kept = [c for c in code if not any(o != c and o.startswith(c + ".") for o in code)]
    shown: list[str] = []
    for c in kept:
        if not _CONFIG_OBJECT.search(c) or _flag_of(c, names):
            shown.append(f"`{short_code(_flag_of(c, names) or c)}`")
            continue
        leaves = [c + "." + m for m in dict.fromkeys(re.findall(re.escape(c) + r"\.([a-z_]\w*)\b(?![\w.]*\s*\()", guards))]
        if leaves and not any(_CONFIG_OBJECT.search(leaf) for leaf in leaves):
            shown.extend(f"`{short_code(_flag_of(leaf, names) or leaf)}`" for leaf in leaves)
            continue
        last = c.rpartition(".")[2]
        flag = _feature_flag(last, names) if last not in ("model_config", "vllm_config") else None
        tested = re.search(re.escape(c) + r"\s+is\s+(?:not\s+)?None\b", guards)
        if flag:
            shown.append(f"the feature `{last}` configures (`{short_code(flag)}`)")
        elif tested:
            shown.append(f"whether `{short_code(c)}` is set")
        elif last == "model_config":
            shown.append(f"the model you load or an option about it, which `{short_code(c)}` holds")
        else:
            shown.append(f'one of the values `{short_code(c)}` holds, as the condition under "When it is raised" shows')
    return _joined(list(dict.fromkeys(shown)))


# --------------------------------------------------------------------------- s46-opens: open groups decided by a fact of the code
# (#32 items 1-3, bench/RESULTS.md "s46-opens"): groups of v0.33.0's open pages, each rule read against
# the source on every page it takes. Run only where every rule above left the check open.

#: The JIT warmup's own machinery: it reads the compile keys, dispatch expressions and warmup cases
#: that the project's kernels declare (from their source) and checks how its kernels are called.
_JIT_WARMUP = re.compile(r"(?:^|/)warmup/jit_warmup\w*\.py$")
#: A wait that ran out (the message as written, its ``{...}`` fields left out).
_TIMED_OUT = re.compile(r"\btimed out\b|\bin time\b|^Timeout waiting for\b", re.I)
#: ... that is not the wait on a peer: an id it does not know (a late answer), a local process or
#: child, a shutdown or drain, a wait still going on, a value that must be set.
_NOT_PEER_WAIT = re.compile(r"\bunknown\b|\bduplicate\b|\bstill\b|\bshut ?down\b|\bprocess\b|\bchild\b|\bnot implemented\b|\bmust\b|\bfailed\b", re.I)
_SHUTDOWN_METHOD = re.compile(r"shutdown|stop|close|drain|__del__|__exit__", re.I)
#: Code that waits on peers: the distributed package, the KV/EC transfer connectors, the KV offload tiers.
_PEER_PATHS = ("vllm/distributed/", "/distributed/", "/kv_transfer/", "/ec_transfer/", "/kv_offload/")
_PEER_WORDS = re.compile(r"\bpeer\b|\bremote\b|\branks?\b|\bP side\b", re.I)
#: What the client of the weight-transfer API drives, in this order (``WeightTransferEngine`` in
#: ``weight_transfer/base.py``: ``init_transfer_engine``, ``start_weight_update``, ``update_weights``;
#: the client's ``init_weight_transfer_engine``).
_TRANSFER_CALLS = r"(?:init_transfer_engine|init_weight_transfer_engine|start_weight_update|update_weights)"
_TRANSFER_CALL_FIRST = re.compile(rf"\bCall `?({_TRANSFER_CALLS})\(\)`? first\b|\b({_TRANSFER_CALLS}) must (?:run|be called) before\b", re.I)
_USER_READS = frozenset({"config", "request", "model", "platform", "parallel"})
#: A connector's ``register_kv_caches`` refusing what it does not support, finding nothing to handle
#: ("found no hot-cache handles": the connector chosen for a model without what it serves), or a call
#: into its transfer library that returned an error code.
_KV_LIMIT = re.compile(r"\bsupports?\b|\brequires?\b|\bonly\b|\bexited\b|\bfailed\b|\bno\b", re.I)
_RETURN_CODE = re.compile(r"(?<![\w.])(?:ret|ret_value|rc|status|result(?:\.value)?)\s*(?:!=|<|==)\s*-?\d")

_WARMUP_BASIS = "the check is in the JIT warmup's own machinery"
_PEER_BASIS = "it waited for a peer it exchanges with (another rank, or the instance at the other end of a transfer)"
_CALL_ORDER_BASIS = "the message names the weight-transfer call that has to come first"
_KV_CACHES_BASIS = "the check tests the KV caches the model runner allocated and handed to the connector"


def _opens46_open(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> tuple[str, str] | None:
    """(actor, basis) for a check every rule above left open, from a fact of its code; None to leave it open."""
    path, site = _where(record)
    kind, method = record["kind"], site["qualname"].rpartition(".")[2]
    own = guard_reads.own_condition(site) or ""
    if set(reads) & _USER_READS:
        return None
    if kind == RAISE and _JIT_WARMUP.search(path):
        return (
            "internal",
            f"{_WARMUP_BASIS} (`{short_code(site['path'])}`): what it checks is how {_project(record)}'s own kernels declare their warmup "
            "(compile keys, dispatch expressions, warmup cases, read from the kernels' source) and how its code calls them, "
            "no setting, request or model of yours",
        )
    plain = re.sub(r"\{[^{}]*\}", " ", text)
    if (
        kind in (RAISE, LOG)
        and _TIMED_OUT.search(plain)
        and not _NOT_PEER_WAIT.search(plain)
        and not _SHUTDOWN_METHOD.search(method)
        and (any(p in "/" + path for p in _PEER_PATHS) or _PEER_WORDS.search(plain))
        and not _FLAG.search(text)
        and not _CONFIG_PATH.search(text)
    ):
        return "environment", f"{_PEER_BASIS}, and it did not answer in time: that peer, or the network between them"
    called = _TRANSFER_CALL_FIRST.search(text) if kind == RAISE and "/weight_transfer/" in path else None
    if called:
        return (
            "caller",
            f"{_CALL_ORDER_BASIS} (`{called.group(1) or called.group(2)}()`): the weight-transfer API is driven by the trainer's "
            "or RL client's code, which made its calls out of that order",
        )
    if (
        kind == RAISE
        and method == "register_kv_caches"
        and "/kv_connector/" in path
        and exception_word(record) != "NotImplementedError"
        and text
        and not _KV_LIMIT.search(text)
        and not _RETURN_CODE.search(own)
        and not _FLAG.search(text)
        and not _ENV_NAME.search(text)
    ):
        return (
            "internal",
            f"{_KV_CACHES_BASIS} at start-up (their layers, blocks and layout) against what the connector planned from the same "
            "configuration: the two do not agree, and no value of yours is what it tests",
        )
    return None


def _opens46_steps(record: dict[str, Any], actor: str, basis: str) -> list[str]:
    """The steps of this section's rules that need their own words."""
    if actor == "environment" and basis.startswith(_PEER_BASIS):
        return [
            "Check that the peer the message names (the other rank, or the instance at the other end) is up, not stalled or overloaded "
            "(its own log says), and that this machine reaches it over the network; if it keeps coming with both sides up, report it "
            f"to {_project(record)} with the logs of both sides."
        ]
    if actor == "caller" and basis.startswith(_CALL_ORDER_BASIS):
        first = basis.split("`")[1]
        via = " (from the RL API: `init_weight_transfer_engine`)" if first.startswith("init_") else ""
        return [f"In your trainer's or RL client's code, call `{first}`{via} first, as the message says, then the call that failed."]
    return []


def _opens46_what(record: dict[str, Any], actor: str, basis: str) -> str | None:
    """What the page's first sentence names for this section's rules that need their own words."""
    if actor == "environment" and basis.startswith(_PEER_BASIS):
        return "a peer it waits on, or the network to it"
    if actor == "caller" and basis.startswith(_CALL_ORDER_BASIS):
        return f"the order of its calls to the weight-transfer API: `{basis.split('`')[1]}` comes first"
    if actor == "internal" and basis.startswith((_WARMUP_BASIS, _KV_CACHES_BASIS)):
        return f"in `{short_code(record['sites'][0]['qualname'])}`"
    return None


# --------------------------------------------------------------------------- s46-opens2: the biggest open groups, second pass
# (#32, bench/RESULTS.md "s46-opens2"): read against v0.33.0's source on every page each rule takes. Run
# after s46-opens, only where every rule above left the check open.

#: A message that says the code never gets there ("Should not be reached", "This line should be
#: unreachable", "{self} should not be called", "... should not be called as prefix caching is
#: disabled"): the phrase ends its clause, so "should not be called with X" (a caller's) is not one.
_NEVER_HERE = re.compile(
    r"\bunreachable\b|\bshould(?:n't| not| never) be (?:called|reached)(?=\s*(?:$|[.;:!,)-]|\bas\b|\bon\b|\bhere\b))",
    re.I,
)
#: What a model's ``_parse_and_validate_*_input`` pops from the keyword arguments the project's
#: multimodal processor builds (its fields config): a test of a value's type, or that it is there.
_KWARGS_TEST = re.compile(r"(?:\w+ is not None and )?not isinstance\(\s*\w+,\s*(?:\([\w., ]+\)|[\w.]+)\s*\)|\w+ is None|not \(\w+ is not None\)")
#: ... and the embeddings a request may carry in place of the media (``image_embeds``): the request's.
_EMBEDS = re.compile(r"embed", re.I)
_PROVIDED_EMBEDS = re.compile(r"((?:image|video|audio)_embeds) is not None")

_NEVER_HERE_BASIS = "the message says the code never gets there"
_MM_KWARGS_BASIS = "the check tests the keyword arguments the project's multimodal processor builds for the model"
_EMBEDS_BASIS = "the request carries embeddings in place of its media"


def _opens46b_open(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> tuple[str, str] | None:
    """(actor, basis) for a check every rule above left open, from a fact of its code; None to leave it open."""
    path, site = _where(record)
    kind, method = record["kind"], site["qualname"].rpartition(".")[2]
    if kind != RAISE or set(reads) & _USER_READS:
        return None
    if _NEVER_HERE.search(text) and not _FLAG.search(text) and not _ENV_NAME.search(text):
        return "internal", f"{_NEVER_HERE_BASIS} (`{short_code(site['qualname'])}`): reaching it is a fault of {_project(record)}'s own order of calls"
    if not (re.match(r"_parse_and_validate\w*", method) and any(p in path for p in _ARCHITECTURE_PATHS)):
        return None
    if (reads.get("param") or []) != ["kwargs"] or not set(reads) <= {"param", "state"}:
        return None
    own = re.sub(r"\s+", " ", guard_reads.own_condition(site) or "").strip()
    exception = exception_word(record)
    embeds = _PROVIDED_EMBEDS.fullmatch(own)
    if exception == "NotImplementedError" and embeds:
        return "request", f"{_EMBEDS_BASIS} (`{embeds.group(1)}`), which this model's code does not take: it takes only the media itself"
    if exception == "NotImplementedError":
        return None
    if exception == "AssertionError" or (_KWARGS_TEST.fullmatch(own) and not _EMBEDS.search(own + " " + text)):
        tested = (
            "the `AssertionError` after every input it handles"
            if exception == "AssertionError"
            else "a value it pops from `kwargs`, its type or that it is there"
        )
        return (
            "internal",
            f"{_MM_KWARGS_BASIS} (`{short_code(site['qualname'])}`: {tested}): "
            "they are what the processor made of the request's media, declared by the model's own fields config, not the request itself",
        )
    return None


def _opens46b_steps(record: dict[str, Any], actor: str, basis: str) -> list[str]:
    """The steps of this section's rules that need their own words."""
    if actor == "request" and basis.startswith(_EMBEDS_BASIS):
        modality = basis.split("`")[1].partition("_")[0]
        return [f"Send the {modality} itself in the request, not its embeddings: this model's code does not take {modality} embeddings."]
    return []


def _opens46b_what(record: dict[str, Any], actor: str, basis: str) -> str | None:
    """What the page's first sentence names for this section's rules that need their own words."""
    if actor == "request" and basis.startswith(_EMBEDS_BASIS):
        return f"the {basis.split('`')[1].partition('_')[0]} embeddings it carries, which this model does not take"
    if actor == "internal" and basis.startswith((_NEVER_HERE_BASIS, _MM_KWARGS_BASIS)):
        return f"in `{short_code(record['sites'][0]['qualname'])}`"
    return None


# --------------------------------------------------------------------------- s46-opens3: the open groups, third pass
# (#32, bench/RESULTS.md "s46-opens3"): read against v0.33.0's source on every page each rule takes. Run
# after s46-opens2, only where every rule above left the check open.

#: "No Glm4MoE layer found in model.layers.", "DeepSeekV2: No DeepseekV2MoE layer found in model.layers.":
#: a MoE model's set-up that found, among the layers its config built, none of its MoE class.
_NO_MOE_LAYER = re.compile(r"(?:[\w.-]+: )?No [\w.]+ layer found\s+in (?:the )?[\w.]+\.?")
_NO_MOE_TEST = re.compile(r"example_\w+ is None")
#: A step of the project's own set-up that did not run first ("pooling_cursor has not been initialized",
#: "b12x decode plan was not prepared before ...").
_NOT_READY = re.compile(r"\b(?:not|never) (?:been |yet )?(?:initiali[sz]ed|prepared)\b", re.I)
#: What a check refuses to do while a CUDA graph is being captured ("must be prepared before CUDA graph
#: capture", "would allocate during CUDA capture", "first reached inside a CUDA graph capture").
_CAPTURE_WORDS = re.compile(r"\b(?:before|during|inside)(?: an?)? (?:CUDA[ -]?)?(?:graph )?capture\b", re.I)
#: An ``isinstance`` else-branch: ``not (isinstance(x, A))`` (``x`` a name or a chain of names).
_NOT_ISINSTANCE = re.compile(r"not \(isinstance\(\s*([A-Za-z_][\w.]*)\s*,\s*(?:\([\w., ]+\)|[\w.| ]+)\s*\)\)")
#: Where the value an ``isinstance`` else-branch tests may be what a user, a request, a file or a
#: plugin gave (media, a model's inputs, a template, a trainer's tensors).
_OUTSIDE_VALUES = ("/processors/", "/multimodal/", "/entrypoints/", "/parser/", "/lora/", "/weight_transfer/", "/inputs/", "/renderers/")

#: A model's ``_process_image_input`` / ``_process_audio_input``: what it turns into the encoder's input is the
#: output of the project's multimodal processor (its fields config; "The Rust frontend ships one flat buffer").
_PROCESS_INPUT = re.compile(r"_process_\w*_input")
#: ... unless the check compares it with the model's configuration ("configured audio merger count").
_CONFIGURED = re.compile(r"\bconfig(?:ured|uration)?\b", re.I)

_PROCESSED_BASIS = "the check tests the inputs the project's multimodal processor built, as the model's code turns them into encoder inputs"
_NO_MOE_BASIS = "the model's set-up found no MoE layer among the layers its config built"
_NOT_READY_BASIS = "the message says a step of the project's own set-up has not run"
_CAPTURE_BASIS = "the check refuses what would be set up or allocated while a CUDA graph is being captured"
_ELSE_BASIS = "the check is the else-branch of `isinstance` tests on a value only the project's own code passes"


def _opens46c_open(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> tuple[str, str] | None:
    """(actor, basis) for a check every rule above left open, from a fact of its code; None to leave it open."""
    path, site = _where(record)
    kind = record["kind"]
    own = re.sub(r"\s+", " ", guard_reads.own_condition(site) or "").strip()
    if set(reads) & _USER_READS or not text or _FLAG.search(text) or _ENV_NAME.search(text):
        return None
    if kind in (RAISE, LOG) and any(p in path for p in _ARCHITECTURE_PATHS) and _NO_MOE_LAYER.fullmatch(text.strip()) and _NO_MOE_TEST.fullmatch(own):
        return (
            "model",
            f"{_NO_MOE_BASIS} (`{own}` after its loop over the model's layers): the checkpoint's config gives this pipeline stage no "
            "MoE layer (a dense model, or dense layers only in this stage's share), which this MoE architecture's code expects",
        )
    if kind != RAISE or _reached_from_outside(record, path) or exception_word(record) == "NotImplementedError":
        return None
    callers = record["meaning"].get("callers") or []
    guards = [re.sub(r"\s+", " ", g).strip() for g in (site.get("facts") or {}).get("guards") or []]
    if (
        _PROCESS_INPUT.fullmatch(site["qualname"].rpartition(".")[2])
        and any(p in path for p in _ARCHITECTURE_PATHS)
        and not _CONFIGURED.search(text)
        and not any(_CONFIGURED.search(g) for g in guards)
    ):
        return (
            "internal",
            f"{_PROCESSED_BASIS} (`{short_code(site['qualname'])}`): the shapes, counts and layout of what the processor built for the "
            "request's media, which the model's own code declares; a mismatch is between the project's processor and its model code",
        )
    if _CAPTURE_WORDS.search(text):
        return (
            "internal",
            f"{_CAPTURE_BASIS} (`{short_code(site['qualname'])}`): what it needs is set up by {_project(record)}'s own warm-up "
            "before capture, which did not reach it for this shape or batch size",
        )
    if _NOT_READY.search(text) and callers:
        return (
            "internal",
            f"{_NOT_READY_BASIS} (`{short_code(site['qualname'])}`), and only its own code calls it ("
            + _shown([str(c.get("qualname") or "") for c in callers[:3]])
            + ", no entry point): the order of its own calls",
        )
    tested = [m.group(1) for g in guards for m in [_NOT_ISINSTANCE.fullmatch(g)] if m]
    trailing = list(itertools.takewhile(lambda g: _NOT_ISINSTANCE.fullmatch(g) is not None, reversed(guards)))
    if (
        callers
        and len(trailing) >= 2
        and len(set(tested[-len(trailing) :])) == 1
        and not any(p in "/" + path for p in _OUTSIDE_VALUES)
        and not any(p in path for p in _ARCHITECTURE_PATHS)
    ):
        return (
            "internal",
            f"{_ELSE_BASIS} (`{tested[-1]}`, from "
            + _shown([str(c.get("qualname") or "") for c in callers[:3]])
            + "): none of the types it handles, a value its own code built",
        )
    return None


def _opens46c_steps(record: dict[str, Any], actor: str, basis: str, names: SettingNames | None) -> list[str]:
    """The steps of this section's rules that need their own words."""
    if actor == "model" and basis.startswith(_NO_MOE_BASIS):
        pipeline = _opens46c_flag(names, "pipeline_parallel_size")
        split = (
            f" With `{pipeline}` above 1, a stage whose share of the layers is all dense meets it too: split the layers so each stage holds one."
            if pipeline
            else ""
        )
        check = "this architecture's code builds its MoE layers from it (the expert count, and which layers are dense) and found none"
        if record["kind"] == LOG:
            return [
                "If the checkpoint is dense here on purpose (a dense variant, or a draft or MTP head without experts), nothing is wrong: "
                f"it goes on without expert bookkeeping (no expert load balancing for it). If you meant to load a MoE model, check its `config.json`: {check}.{split}"
            ]
        return [
            f"Check the model's `config.json`: {check}. Load a checkpoint of the MoE variant this architecture is for, or the dense architecture for a dense one.{split}"
        ]
    if actor == "internal" and basis.startswith(_CAPTURE_BASIS):
        eager = _opens46c_flag(names, "enforce_eager")
        if eager:
            return [f"Until it is fixed, starting with `{eager}` (no CUDA graphs are captured) avoids this path, at some speed."]
    return []


def _opens46c_flag(names: SettingNames | None, dest: str) -> str | None:
    """The option the repository declares for a settings field or dest named ``dest`` (``--enforce-eager``), else None."""
    if names is None:
        return None
    return names.flags.get(dest) or next((f for k, f in sorted(names.flags.items()) if k.endswith("." + dest)), None)


def _opens46c_what(record: dict[str, Any], actor: str, basis: str) -> str | None:
    """What the page's first sentence names for this section's rules that need their own words."""
    if actor == "model" and basis.startswith(_NO_MOE_BASIS):
        return "its config builds no MoE layer for this MoE architecture's code"
    if actor == "internal" and basis.startswith((_NOT_READY_BASIS, _CAPTURE_BASIS, _ELSE_BASIS, _PROCESSED_BASIS)):
        return f"in `{short_code(record['sites'][0]['qualname'])}`"
    return None


# --------------------------------------------------------------------------- s46-rules: seed 69's wrong claims and open pages
# (bench/RESULTS.md, s45-judge3: W19, O3, O27, and s45-rules4's "noticed"): facts of the code, each a
# small function of its own that ``classify`` (or the steps, or the sentence) asks at one place.

#: An absence test of one chain (``config.model_config is None``).
_NONE_TERM = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s+is\s+None")


def _always_held(field_name: str, chains: list[str], names: SettingNames) -> str | None:
    """``vllm_config.model_config`` when every settings class that has a field ``field_name`` declares it
    with a settings class and nothing that admits None (``SettingNames.required``): the declaration
    shown is the one of the class the check's own chain names (``vllm_config.cache_config``), else the
    one of the class that holds the most such parts (the engine's whole configuration). Else None."""
    holders = [snake for snake, declared in sorted(names.fields.items()) if field_name in declared]
    if not holders or any(f"{snake}.{field_name}" not in names.required for snake in holders):
        return None
    named = [h for h in holders if any(re.search(rf"(?<![\w.]){re.escape(h)}\.{re.escape(field_name)}$", c) for c in chains)]
    parts = {h: sum(r.startswith(h + ".") for r in names.required) for h in holders}
    return f"{(named or sorted(holders, key=lambda h: (-parts[h], h)))[0]}.{field_name}"


def _engine_always_has(record: dict[str, Any], reads: dict[str, list[str]], own: str, names: SettingNames | None) -> list[str]:
    """The config objects a raise's or log's whole condition finds None (``config.model_config is None``,
    ``self.model_config is None or self.cache_config is None``) when it reads nothing but those, and
    each is a field the configuration declares as always there (:func:`_always_held`): a running engine
    builds every one of them, so only the project's own code (a test, a partial set-up) leaves one None
    (s45-rules4's "noticed": mooncake's "mostly exists for unit tests", the all-reduce fusion pass,
    Kimi's GDN layer). Not ``lora_config``/``speculative_config``: declared ``| None``, a feature that is
    off; not an assert (already the code's own). The declarations it stands on, else []."""
    if record["kind"] not in (RAISE, LOG) or names is None or not names.required or set(reads) != {"config"}:
        return []
    tested: list[str] = []
    for term in re.split(r"(?<!\s)\s+or\s+", own.strip()):
        found = _NONE_TERM.fullmatch(term.strip())
        if found is None:
            return []
        tested.append(found.group(1).rpartition(".")[2])
    if {c.rpartition(".")[2] for c in reads["config"]} != set(tested):
        return []
    held: list[str] = []
    for name in dict.fromkeys(tested):
        declared = _always_held(name, reads["config"], names)
        if declared is None:
            return []
        held.append(declared)
    return held


#: "Call init_transfer_engine() first", "trainer_init() must be called before sending weights",
#: "call shutdown_weight_transfer_engine() before initializing again": the call the message says comes first.
_CALL_FIRST = re.compile(
    r"\bcall `?([A-Za-z_][\w.]{0,80})\(\)`? (?:first|before)\b|`?(?<![\w.])([A-Za-z_][\w.]{0,80})\(\)`? (?:must|should|has to|needs to) be called (?:first|before)\b",
    re.I,
)


def _call_first(record: dict[str, Any], text: str) -> tuple[str, str] | None:
    """(the call, the engine) when a raise or assert of a weight-transfer engine (a class of
    ``weight_transfer/`` whose name ends in ``Engine``: the object the trainer's or RL client's code
    drives through the weight-transfer API) says which public call must come first ("Call
    init_transfer_engine() first", O3 of s45-judge3): that code made its calls in the wrong order.
    Not a helper the engine drives itself (``RdtRouter``: "call bind() first", bound by the engine's
    own init), not a private call, not a class elsewhere (EPLB's "set_transfer_context() must be
    called before add_recv()": the project's own code calls both). Else None."""
    path, site = _where(record)
    owner = site["qualname"].partition(".")[0]
    found = _CALL_FIRST.search(text)
    if record["kind"] not in (RAISE, ASSERT) or found is None or "/weight_transfer/" not in path or not owner.endswith("Engine"):
        return None
    call = found.group(1) or found.group(2)
    if call.rpartition(".")[2].startswith("_"):
        return None
    return call, owner


#: A loop over a list field of the function's ``request`` (``for i, message in enumerate(request.messages)``).
_REQUEST_LOOP = re.compile(r"for (?:[A-Za-z_]\w*\s*,\s*)?([A-Za-z_]\w*) in (?:enumerate\()?request\.([a-z_]\w*)\)?")


def _request_item_key(record: dict[str, Any], text: str) -> tuple[str, str] | None:
    """(the request's list field, the key) when a raise or log is inside a loop over a list field of
    ``request`` (the request the function is given: ``request.messages``), a guard around it reads a
    key of the item (``message.get("tool_calls")``) and the message names that key (W19 of
    s45-judge3, mistral's "Please ensure `tool_calls` are iterable of tool calls": what to change is in
    the request's messages, not a setting). Not a loop that rebinds ``request`` (``for request in
    requests``), not a key the message does not name. Else None."""
    facts = record["sites"][0].get("facts") or {}
    if record["kind"] not in (RAISE, LOG) or not text:
        return None
    guards = facts.get("guards") or []
    for loop in facts.get("loops") or []:
        found = _REQUEST_LOOP.fullmatch(loop.strip())
        if found is None or any(re.search(r"\bfor (?:[\w\s,]{0,200}\b)?request\b[\w\s,]{0,200} in\b", g) for g in [*guards, *(facts.get("loops") or [])]):
            continue
        item, listed = found.groups()
        for guard in guards:
            for key in re.findall(rf"(?<![\w.]){re.escape(item)}(?:\.get\(|\[)\s*[\"']([A-Za-z_]\w*)[\"']", guard):
                if _word(key, text):
                    return listed, key
    return None


#: The parser objects a delegating parser builds from the class an option chose (``self.reasoning_parser``
#: from ``reasoning_parser_cls``, which the parser manager sets from ``--reasoning-parser``'s name), and the
#: option's dest for each.
_PARSER_OPTIONS = {"reasoning_parser": ("reasoning_parser",), "tool_parser": ("tool_call_parser", "tool_parser")}
_PARSER_CLASS_TEST = re.compile(r"not isinstance\(\s*self\.(reasoning_parser|tool_parser)\s*,\s*([A-Za-z_][\w.]*)\s*\)")


def _parser_chosen(record: dict[str, Any], own: str, names: SettingNames | None) -> tuple[str, str, str] | None:
    """(the attribute, the class it must be, the option) when a raise in the parser package
    (``parser/``) tests the class of the reasoning or tool parser the object holds (``not
    isinstance(self.reasoning_parser, GptOssReasoningParser)``), which is built from the class the
    server's option named (``--reasoning-parser``, ``--tool-call-parser``; O27 of s45-judge3): the
    option's value does not fit this parser. Only where the repository declares that option; not a
    parser's own private object (``self._parser``). Else None."""
    path, _ = _where(record)
    found = _PARSER_CLASS_TEST.search(own)
    if record["kind"] != RAISE or found is None or "/parser/" not in path or names is None:
        return None
    attribute, required = found.groups()
    for dest in _PARSER_OPTIONS[attribute]:
        flag = names.flags.get(dest) or next((f for k, f in sorted(names.flags.items()) if k.endswith("." + dest)), None)
        if flag:
            return attribute, required, flag
    return None


def _rules46_early(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(actor, basis) of seed 69's rules, which come before the request's and the settings' rules."""
    held = _engine_always_has(record, reads, own, names)
    if held:
        return (
            "internal",
            "the check finds missing a part of the configuration a running engine always has ("
            + _shown(held)
            + ", declared with its settings class and not optional wherever a settings class declares it): only the project's own code, "
            "a test or a partial set-up, leaves it None",
        )
    first = _call_first(record, text)
    if first:
        return (
            "caller",
            f"the message names the call that must come first (`{first[0]}()`) on the weight-transfer engine `{first[1]}`, "
            "which the trainer's or RL client's code drives: its calls came in another order",
        )
    item = _request_item_key(record, text)
    if item:
        return (
            "request",
            f"the check reads `{item[1]}` of an item of the request's `{item[0]}` (the loop over `request.{item[0]}`), which the message names: what the request sent",
        )
    parser = _parser_chosen(record, own, names)
    if parser:
        return (
            "setting",
            f"the check tests the class of the {parser[0].replace('_', ' ')} (`self.{parser[0]}`), built from the class the option `{parser[2]}` names: "
            f"that parser is not `{parser[1]}`, which this code requires",
        )
    return None


def _rules46_steps(actor: str, basis: str) -> list[str]:
    """The steps of seed 69's rules that need their own words."""
    if actor == "caller" and basis.startswith("the message names the call that must come first (`"):
        call, engine = basis.split("`")[1], basis.split("`")[3]
        via = " (from the RL API: `init_weight_transfer_engine`)" if call.startswith("init_") else ""
        return [
            f"Call `{call}` first{via}, as the message says: your trainer's or RL client's code drives `{engine}` (through the "
            "weight-transfer API or the server's routes for it), and made this call before that one."
        ]
    if actor == "setting" and basis.startswith("the check tests the class of the ") and ", built from the class the option `" in basis:
        flag, required = basis.split("`")[3], basis.split("`")[5]
        return [
            f"Start the server with `{flag}` naming the parser this code requires (`{required}`, the class the message names), "
            "or without the option if you do not need that parser."
        ]
    return []


def _rules46_what(actor: str, basis: str) -> str | None:
    """What a page of seed 69's rules names in its first sentence."""
    if actor == "caller" and basis.startswith("the message names the call that must come first (`"):
        return f"the order of the calls it makes: `{basis.split('`')[1]}` first"
    if actor == "setting" and basis.startswith("the check tests the class of the ") and ", built from the class the option `" in basis:
        return f"`{basis.split('`')[3]}`"
    if actor == "request" and basis.startswith("the check reads `") and "of an item of the request's `" in basis:
        return f"`{basis.split('`')[1]}` in the request's `{basis.split('`')[3]}`"
    return None


def _quietly_handled(record: dict[str, Any], basis: str) -> dict[str, Any]:
    """Who acts on a raise whose every call catches it and only logs or falls back
    (``callers.quietly_caught``; O21 of s45-judge3, a fuser's "activation does not directly wrap the
    gate", which the model's set-up catches and logs at debug, leaving that module unfused): nobody
    meets this error, so nobody is told to act on it or to report it; what they may meet is what the
    handler does instead, which has its own page when it is a log line."""
    name = basis.split("`")[1]
    return {
        "actor": "internal",
        "basis": basis,
        "says": (
            f"{_project(record)} catches this {_noun(record)} wherever it calls `{name}` and goes on without raising it again "
            "(it logs it, or falls back to what it does without this step): it does not reach you as this error."
        ),
        "remedy": None,
        "steps": [
            f"Nothing to do about this {_noun(record)} itself: every call of `{name}` catches it. If what the handler does instead is what "
            "you see (a log line, a step left out, a slower fallback), look that up by its own message; report this one to "
            f"{_project(record)} only if that behaviour is wrong for what you run."
        ],
    }


# --------------------------------------------------------------------------- s46-rules2: seed 70's wrong claims and open pages
# (bench/RESULTS.md, s46-judge: W21 W26 W27 W36, O7 O15 O19): facts of the code, each a small function of
# its own that ``classify`` (or the steps, or the sentence) asks at one place.

#: An assert of the class of one name (``not (isinstance(response_format, (A, B)))``), and that name's
#: ``type`` compared with a literal in a guard before it (``response_format.type == "json_object"``).
_CLASS_ASSERT = re.compile(r"not \(isinstance\(\s*([A-Za-z_]\w*)\s*,")
_SEED70_DISCRIMINATED = "an assert on the class of `"
_SEED70_LOOKUP = "the check looks `"


def _seed70_narrowed(record: dict[str, Any], own: str) -> tuple[str, list[str]] | None:
    """(the name, the ``type`` values the branches before it took) when an assert tests the class of
    a name (``isinstance(response_format, (LegacyStructuralTagResponseFormat, ...))``) in the branch
    the guards before it leave after testing that name's ``type`` against literals (``"text"``,
    ``"json_object"``, ``"json_schema"``; W36 of s46-judge): the branches dispatched on the
    discriminator, and the assert narrows what is left for the type checker. Not an ``isinstance``
    assert without such branches (what a caller passed). Else None."""
    found = _CLASS_ASSERT.match(own.strip())
    if record["kind"] != ASSERT or found is None:
        return None
    name = found.group(1)
    guards = ((record["sites"][0].get("facts") or {}).get("guards") or [])[:-1]
    taken = [v for g in guards for v in re.findall(rf"(?<![\w.]){re.escape(name)}\.type == ([\"'][\w.-]+[\"'])", g)]
    return (name, list(dict.fromkeys(taken))) if taken else None


#: "16-token blocks": the KV cache block size a message says the code takes.
_BLOCK_TOKENS = re.compile(r"\b(\d+)-token blocks?\b", re.I)


def _seed70_block_size(record: dict[str, Any], text: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(the block size, the option) when a raise or assert's message says the code takes KV cache
    blocks of N tokens ("needs FlashInfer's HND bf16 KV cache with 16-token blocks", W27 of s46-judge:
    the check compares the cache's block dimension, which ``--block-size`` sets, with a constant) and
    the repository declares the option whose dest is ``block_size``. Else None."""
    found = _BLOCK_TOKENS.search(text)
    if record["kind"] not in (RAISE, ASSERT) or found is None or names is None:
        return None
    flag = names.flags.get("block_size") or next((f for k, f in sorted(names.flags.items()) if k.endswith(".block_size")), None)
    return (found.group(1), flag) if flag else None


#: "Disable sinks if they are required for correctness": a remedy that turns off what one name holds.
_DISABLE = re.compile(r"^Disable ([a-z_]\w*)\b")


def _seed70_remedy_param(record: dict[str, Any], reads: dict[str, list[str]], own: str, found: str | None, text: str, names: SettingNames | None) -> str | None:
    """The name when a log's remedy says to disable what one name holds ("Disable sinks if they are
    required for correctness", W26 of s46-judge) and its own condition is that name's presence
    (``sinks is not None``, a value the function is given), with no setting anywhere: no option,
    environment variable or configuration read in the message, the check or the record's settings,
    and no option of the repository of that name. What is disabled there is what the code calling
    the function passes, not a setting. Else None."""
    said = _DISABLE.match(found or "")
    if record["kind"] != LOG or said is None or _FLAG.search(text) or _ENV_NAME.search(text) or reads.get("config"):
        return None
    name = said.group(1)
    if not re.search(rf"(?<![\w.]){re.escape(name)} is not None\b", own):
        return None
    if _settings(record["meaning"].get("knobs") or [], _validated(record), "cli_flag", "config_field", "env_var"):
        return None
    known = set(names.flags) if names is not None else set()
    return None if name in known or any(k.endswith("." + name) for k in known) else name


#: A lookup of one name in a module's table (``model not in XGRAMMAR_BUILTIN_STRUCTURAL_TAG_MODELS``).
_TABLE_LOOKUP = re.compile(r"([a-z_]\w*) (?:not )?in [A-Z_][A-Z0-9_]*")


def _seed70_request_on_the_way(record: dict[str, Any], reads: dict[str, list[str]], own: str) -> bool:
    """Whether a raise's request words (``tools``, ``tool_choice``: ``_REQUEST_GUARD``) are only in the
    guards on the way to it, while its own condition looks one parameter of its function up in a
    module's table (``model not in XGRAMMAR_BUILTIN_STRUCTURAL_TAG_MODELS``, W21 of s46-judge: ``model``
    is the tool parser's ``structural_tag_model``, which every call passes; the request's fields only
    decide whether it gets there). Then "the check names what the request carries" does not hold."""
    found = _TABLE_LOOKUP.fullmatch(own.strip())
    guards = (record["sites"][0].get("facts") or {}).get("guards") or []
    return (
        record["kind"] == RAISE
        and found is not None
        and any(_REQUEST_GUARD.search(g) for g in guards)
        and not _REQUEST_GUARD.search(own)
        and set(reads) <= {"param", "constant"}
        and reads.get("param") == [found.group(1)]
        and not _REQUEST_GUARD.search(found.group(1))
    )


def _seed70_early(
    record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str, found: str | None, names: SettingNames | None
) -> tuple[str, str] | None:
    """(actor, basis) of seed 70's rules, which come before the request's and the settings' rules."""
    narrowed = _seed70_narrowed(record, own)
    if narrowed:
        name, taken = narrowed
        return (
            "internal",
            f"{_SEED70_DISCRIMINATED}{name}` in the branch left after the ones for each other value of its `type` ({', '.join(f'`{t}`' for t in taken)}): "
            "it narrows the type of what those branches left, the classes it names",
        )
    if _seed70_request_on_the_way(record, reads, own) and not _settings(
        record["meaning"].get("knobs") or [], _validated(record), "cli_flag", "config_field", "env_var"
    ):
        looked_up = _TABLE_LOOKUP.fullmatch(own.strip())
        assert looked_up is not None
        return (
            "internal",
            f"{_SEED70_LOOKUP}{looked_up.group(1)}`, a parameter of `{short_code(record['sites'][0]['qualname'])}`, up in the module's table "
            f"(`{short_code(own.strip())}`): the request's fields are tested only on the way there, and what is looked up is what the code calling it passes",
        )
    block = _seed70_block_size(record, text, names)
    if block:
        return (
            "setting",
            f"the message says the code takes KV cache blocks of {block[0]} tokens: the block size is the setting `{block[1]}`",
        )
    param = _seed70_remedy_param(record, reads, own, found, text, names)
    if param:
        return (
            "internal",
            f"the message's remedy names `{param}`, a value `{short_code(record['sites'][0]['qualname'])}` is given and its condition tests, and no setting: "
            "what to disable is what the code calling it passes",
        )
    return None


#: "cudaHostRegister failed (code=...)": a call of the CUDA runtime that returned an error.
_CUDA_CALL_FAILED = re.compile(r"\b(cuda[A-Z][A-Za-z]+)\b[^.;:]{0,20}?\bfailed\b")
#: "backpressure config must include 'backpressure_cls'": a key missing from a config dict.
#: A call that gives back what an earlier one took (``cudaHostUnregister``, ``cudaFree``): its failure is of that earlier call's state.
_RELEASE = re.compile(r"Un[a-z]|Free|Destroy|Release")
_KEY_MISSING = re.compile(r"^(\w+) config must (?:include|contain|have|specify) ['\"`](\w+)['\"`]")
_OFFLOAD_PATHS = ("/kv_offload/",)
#: "Either 'messages' or 'conversation' must be provided": two names of which one must be given.
_EITHER = re.compile(r"^Either [`'\"]?([A-Za-z_]\w*)[`'\"]? or [`'\"]?([A-Za-z_]\w*)[`'\"]? must be (?:provided|given|passed)\b")

_CUDA_BASIS = "the check tests the status the CUDA runtime's `"
_KEY_BASIS = "the check finds the key `"
_EITHER_BASIS = "the message names two arguments of `"


def _seed70_given(name: str, code: str) -> bool:
    """Whether ``code`` (the snippet, from the function's ``def``) takes ``name`` as a parameter or a
    keyword it reads from ``kwargs`` (``kwargs.get("conversation")``)."""
    head = code.partition(")")[0] if code.lstrip().startswith(("def ", "async def ")) else ""
    return bool(re.search(rf"(?<![\w.]){re.escape(name)}\s*[:=,)]", head + ")") or re.search(rf"\bkwargs\.get\(\s*[\"']{re.escape(name)}[\"']", code))


def _seed70_open(record: dict[str, Any], reads: dict[str, list[str]], text: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(actor, basis) of seed 70's open pages, asked only where every rule above left the check open."""
    path, site = _where(record)
    code = (site.get("snippet") or {}).get("code") or ""
    kind = record["kind"]
    cuda = _CUDA_CALL_FAILED.search(text)
    if cuda and kind in (RAISE, LOG) and not _RELEASE.search(cuda.group(1)) and re.search(rf"\b{cuda.group(1)}\(", code):
        return (
            "environment",
            f"{_CUDA_BASIS}{cuda.group(1)}` returned: the driver, or the limits of the machine or container it runs in, refused the call",
        )
    missing = _KEY_MISSING.search(text)
    flag = names.flags.get("kv_transfer_config") if names is not None else None
    if missing and kind == RAISE and flag and any(p in path for p in _OFFLOAD_PATHS) and re.search(r"\bis None\b", guard_reads.own_condition(site) or ""):
        return (
            "setting",
            f"{_KEY_BASIS}{missing.group(2)}` missing from the `{missing.group(1)}` config, which the KV offloading reads from `{flag}` "
            "(its `kv_connector_extra_config`)",
        )
    either = _EITHER.search(text)
    method = site["qualname"].rpartition(".")[2]
    if (
        either
        and kind == RAISE
        and not method.startswith("_")
        and method != "forward"
        and not any(p in path for p in _ARCHITECTURE_PATHS)
        and all(_seed70_given(n, code) for n in either.groups())
    ):
        return (
            "caller",
            f"{_EITHER_BASIS}{short_code(site['qualname'])}` (`{either.group(1)}`, `{either.group(2)}`), one of which the code calling it must pass: it passed neither",
        )
    return None


def _seed70_steps(record: dict[str, Any], actor: str, basis: str) -> list[str]:
    """The steps of seed 70's rules that need their own words."""
    if actor == "setting" and basis.startswith("the message says the code takes KV cache blocks of "):
        size, flag = basis.split(" tokens")[0].rpartition(" ")[2], basis.split("`")[1]
        return [
            f"Start the server with `{flag} {size}` (the block size this code takes), or with the default if it is {size}; "
            "a KV cache layout or dtype the message names besides is set the same way (`VLLM_KV_CACHE_LAYOUT`, `--kv-cache-dtype`)."
        ]
    if actor == "internal" and basis.startswith("the message's remedy names `"):
        return [
            f"Nothing to set or disable on your side: `{basis.split('`')[1]}` is what {_project(record)}'s own code passes `{basis.split('`')[3]}`, "
            "no option of yours."
        ]
    if actor == "internal" and basis.startswith(_SEED70_LOOKUP):
        name, where = basis.split("`")[1], basis.split("`")[3]
        return [
            f"If your own code or a plugin calls `{where}`, or sets what its callers pass as `{name}` (a class attribute of a plugin's class, say), "
            "give it one of the values the message lists."
        ]
    if actor == "environment" and basis.startswith(_CUDA_BASIS):
        call = basis.split("`")[1]
        return [
            f"Check the machine or container this runs on for what `{call}` needs: for pinned host memory, the locked-memory limit "
            "(`ulimit -l`, a container's memlock limit) and free host memory; the code in the message is the CUDA runtime's error "
            "number. No option changes it; where the message says it goes on without it, it only runs slower."
        ]
    if actor == "setting" and basis.startswith(_KEY_BASIS):
        key, holder, flag = basis.split("`")[1], basis.split("`")[3], basis.split("`")[5]
        return [f'Add `"{key}"` to the `{holder}` config in `{flag}`\'s `kv_connector_extra_config` (the message names an example), or leave `{holder}` out.']
    if actor == "caller" and basis.startswith(_EITHER_BASIS):
        where, a, b = basis.split("`")[1], basis.split("`")[3], basis.split("`")[5]
        return [f"Pass `{a}` (or `{b}`) when your code calls `{where}`: {_project(record)}'s own calls pass one."]
    return []


def _seed70_what(record: dict[str, Any], actor: str, basis: str) -> str | None:
    """What a page of seed 70's rules names in its first sentence."""
    if actor == "setting" and basis.startswith("the message says the code takes KV cache blocks of "):
        return f"`{basis.split('`')[1]}`"
    if actor == "internal" and basis.startswith("the message's remedy names `"):
        return f"`{basis.split('`')[1]}`, what its own code passes `{basis.split('`')[3]}`"
    if actor == "internal" and basis.startswith(_SEED70_LOOKUP):
        return f"the value `{basis.split('`')[3]}` is given as `{basis.split('`')[1]}`"
    if actor == "internal" and basis.startswith(_SEED70_DISCRIMINATED):
        return f"the class of `{basis.split('`')[1]}` its branches left"
    if actor == "environment" and basis.startswith(_CUDA_BASIS):
        return f"the CUDA runtime's `{basis.split('`')[1]}` on this machine: its driver or limits"
    if actor == "setting" and basis.startswith(_KEY_BASIS):
        return f"`{basis.split('`')[5]}`: the `{basis.split('`')[3]}` config lacks `{basis.split('`')[1]}`"
    if actor == "caller" and basis.startswith(_EITHER_BASIS):
        return f"the arguments it passes to `{basis.split('`')[1]}`"
    return None


# --------------------------------------------------------------------------- s46-rules3: seed 71's wrong claims and open pages
# (bench/RESULTS.md, s46-judge2: W12 W17 W25 W39, O16 O19): facts of the code, each a small function of
# its own that ``classify`` (or the steps, or the sentence) asks at one place.

#: The draft checkpoint's own config: ``draft_hf_config`` (``draft_model_config.hf_config``), read whole
#: or through ``getattr(draft_hf_config, ...)`` / a helper given it.
_S71_DRAFT_CONFIG = re.compile(r"(?<![\w.])draft_hf_config\b|(?:^|\.)draft_model_config\.hf_config$")
#: The MoE backend a check tests (``moe.moe_backend``, ``moe_config.moe_backend``): the ``--moe-backend`` value.
_S71_MOE_BACKEND = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)+moe_backend\b")
#: An online quantization method: it quantizes an unquantized checkpoint's weights when asked to.
_S71_ONLINE = "/layers/quantization/online/"
#: An assert's message that says the weight shape it tests is not supported ("ragged-K weights are unsupported").
_S71_WEIGHT_UNSUPPORTED = re.compile(r"\bweights? (?:shapes? )?(?:is |are )?(?:unsupported|not supported)\b", re.I)
#: ``except BaseException as error``: whatever failed, an interrupt too.
_S71_BASE_HANDLER = re.compile(r"except BaseException as ([A-Za-z_]\w*)\s*:?")
#: A state-space layer's type as the KV cache spec carries it (``mamba_spec.mamba_type``).
_S71_MAMBA_TYPE = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)+mamba_type\b")

_S71_DRAFT_BASIS = "the check reads the draft model's own config"
_S71_MOE_BASIS = "the check tests the MoE backend chosen"
_S71_ONLINE_BASIS = "raised by an online quantization method"
_S71_WEIGHT_BASIS = "the message says the weight shape it tests is unsupported here"
_S71_CHAINED_BASIS = "it is raised from what its handler caught"
_S71_MAMBA_BASIS = "the check tests the type of the model's state-space layers"


def _s71_flag(names: SettingNames | None, field_name: str) -> str | None:
    """The option that sets ``field_name`` (``moe_backend``: ``--moe-backend``), where the repository declares one."""
    if names is None:
        return None
    return names.flags.get(field_name) or next((f for k, f in sorted(names.flags.items()) if k.endswith("." + field_name)), None)


def _s71_draft_config(record: dict[str, Any], reads: dict[str, list[str]]) -> list[str]:
    """What a raise reads when all of it is the draft checkpoint's own config (``markov_head_type =
    getattr(draft_hf_config, "markov_head_type", None)``, W17 of s46-judge2): the config.json of the
    speculative draft model, not the method setting that leads there (the guard on the way,
    ``method == "dspark"``, is the context). Not a check that also reads the target model, a
    setting, the request or a value of its own (``num_speculative_tokens != block_size``). Else []."""
    if record["kind"] != RAISE or not set(reads) <= {"other", "model", "constant"}:
        return []
    chains = [c for source in ("other", "model") for c in reads.get(source) or []]
    if not chains or not all(_S71_DRAFT_CONFIG.search(c) for c in chains):
        return []
    return chains


def _s71_moe_backend(record: dict[str, Any], reads: dict[str, list[str]], own: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(the value tested, its option) when a raise's own condition tests the MoE backend
    (``moe.moe_backend in FLASHINFER_MOE_EP_BACKENDS``, W25 of s46-judge2), a value the option
    ``--moe-backend`` sets (``KernelConfig.moe_backend``), even inside a quantization scheme or a
    model's ``__init__``: not the checkpoint. Only where the repository declares that option; not a
    check with settings of its own on the way (their rule names them) or reading parallel sizes. Else None."""
    found = _S71_MOE_BACKEND.search(own)
    if record["kind"] != RAISE or found is None or reads.get("parallel") or record["meaning"].get("knobs"):
        return None
    flag = _s71_flag(names, "moe_backend")
    return (found.group(0), flag) if flag else None


def _s71_online_quant(record: dict[str, Any], own: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(the method's class, the option) for a divisibility test in the ``create_weights`` of an
    online quantization method (``layers/quantization/online/mxfp8.py``: ``input_size_per_partition
    % MXFP8_BLOCK_SIZE != 0``, W12 of s46-judge2): that code is no model's; it runs only when
    ``--quantization`` asks for online quantization of an unquantized checkpoint, and it does not
    take this layer's size. Else None."""
    path, site = _where(record)
    owner, _, method = site["qualname"].rpartition(".")
    if record["kind"] != RAISE or _S71_ONLINE not in "/" + path or method != "create_weights" or "%" not in own or not owner:
        return None
    flag = _s71_flag(names, "quantization")
    return (owner, flag) if flag else None


def _s71_weight_shape(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> bool:
    """An assert whose message says the weight shape it tests is unsupported ("XPU block-scaled FP8
    requires K ... ragged-K weights are unsupported", W39 of s46-judge2), reading nothing of the
    request: a checkpoint whose layer this kernel does not take, by design, not a bug to report."""
    return record["kind"] == ASSERT and bool(_S71_WEIGHT_UNSUPPORTED.search(text)) and "request" not in reads


def _s71_early(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(actor, basis) of seed 71's rules, which come before the request's and the settings' rules."""
    draft = _s71_draft_config(record, reads)
    if draft:
        speculative = _s71_flag(names, "speculative_config")
        given = f" (the `model` of `{speculative}`, or the checkpoint's own draft layers, as MTP's)" if speculative else ""
        return (
            "model",
            f"{_S71_DRAFT_BASIS} ({_shown(draft)}): the config.json of the speculative draft model{given}, "
            "not the method setting that leads there, has a value this code does not take",
        )
    backend = _s71_moe_backend(record, reads, own, names)
    if backend:
        return "setting", f"{_S71_MOE_BASIS} (`{backend[0]}`), the value of the option `{backend[1]}`: not the checkpoint"
    online = _s71_online_quant(record, own, names)
    if online:
        return (
            "setting",
            f"{_S71_ONLINE_BASIS} (`{online[0]}`), which runs only when `{online[1]}` asks for online quantization: "
            f"it does not take this layer's size (`{short_code(own.strip())}`)",
        )
    if _s71_weight_shape(record, reads, text):
        return "model", f"{_S71_WEIGHT_BASIS} (`{short_code(own.strip())}`): a checkpoint with a layer this kernel does not take, by design"
    return None


def _s71_open(record: dict[str, Any], own: str) -> tuple[str, str] | None:
    """(actor, basis) of seed 71's rules for a check every rule above left open; None to leave it open."""
    site = record["sites"][0]
    facts = site.get("facts") or {}
    bound = _S71_BASE_HANDLER.fullmatch((facts.get("handler") or "").strip())
    if record["kind"] == RAISE and bound and facts.get("cause") == bound.group(1):
        # (O19: ``raise X(...) from error`` in ``except BaseException as error``: what failed is the cause)
        return "internal", f"{_S71_CHAINED_BASIS} (`{short_code(bound.group(0))}`), chained as its cause: that exception is what failed"
    mamba = _S71_MAMBA_TYPE.search(own)
    if record["kind"] == RAISE and mamba:
        # (O16: ``mamba_spec.mamba_type``, the model's own layer type as its KV cache spec carries it)
        return "model", f"{_S71_MAMBA_BASIS} (`{mamba.group(0)}`, from the KV cache spec of the model's layers): a type this code does not take"
    return None


def _s71_steps(record: dict[str, Any], actor: str, basis: str, names: SettingNames | None) -> list[str]:
    """The steps of seed 71's rules that need their own words."""
    if actor == "model" and basis.startswith(_S71_DRAFT_BASIS):
        speculative = _s71_flag(names, "speculative_config")
        where = (
            f" (the `model` you give `{speculative}`; for a method that drafts with the checkpoint's own layers, as MTP does, the checkpoint)"
            if speculative
            else ""
        )
        return [
            f'Use a draft model{where} whose config.json has what the condition under "When it is raised" tests: one made for this '
            "target model and speculative method: what it tests is the draft checkpoint's config, not the method option."
        ]
    if actor == "setting" and basis.startswith(_S71_MOE_BASIS):
        flag = basis.split("`")[3]
        site = record["sites"][0]
        own = guard_reads.own_condition(site) or ""
        guards = " ".join((site.get("facts") or {}).get("guards") or [])
        # (the default passes only where the check lists what fails, ``in FLASHINFER_MOE_EP_BACKENDS``, or names
        # ``"auto"``; MuseSpark's FP8 ``moe_backend != "triton"`` fails on it too)
        default = bool(re.search(r"moe_backend in\b", own) or re.search(r"[\"']auto[\"']", guards))
        without = f"Start without `{flag}` (its default, `auto`, passes this check) or with it" if default else f"Start with `{flag}`"
        return [
            f'{without} naming a backend this code supports (the message or the condition under "When it is raised" says which); '
            "the checkpoint is not what it tests."
        ]
    if actor == "setting" and basis.startswith(_S71_ONLINE_BASIS):
        flag = basis.split("`")[3]
        config = _s71_flag(names, "quantization_config")
        ignore = f", leave these layers out of it (the `ignore` list of `{config}`)" if config else ""
        own = guard_reads.own_condition(record["sites"][0]) or ""
        parallel = ", or choose a `--tensor-parallel-size` that keeps each partition's size a multiple of what it needs" if "per_partition" in own else ""
        return [
            f"This online quantization does not take the size of this model's layer: start without that `{flag}` method "
            f"(or with one that takes it){ignore}{parallel}."
        ]
    if actor == "model" and basis.startswith(_S71_WEIGHT_BASIS):
        return [
            "This kernel does not take the shape of one of the checkpoint's weights (the message says which): use a checkpoint whose "
            "weights have the shape it needs, or run on a platform or kernel that takes them; it is not a bug to report."
        ]
    if actor == "internal" and basis.startswith(_S71_CHAINED_BASIS):
        return [
            'Read the exception Python prints above this one ("The above exception was the direct cause of the following exception"): '
            f"that is what failed (a device or library error, an interrupt), and its own message or page says whose move it is. Report this "
            f"one to {_project(record)} only if that exception is one of {_project(record)}'s own checks with nothing of yours in it."
        ]
    if actor == "model" and basis.startswith(_S71_MAMBA_BASIS):
        connector = ", or run it without the KV connector whose transfer needs it" if "/kv_transfer/" in "/" + record["sites"][0]["path"] else ""
        return [f"This model's state-space layer type (the message names it) is not one this code takes: use a model with a type it takes{connector}."]
    return []


def _s71_what(record: dict[str, Any], actor: str, basis: str, names: SettingNames | None) -> str | None:
    """What a page of seed 71's rules names in its first sentence."""
    if actor == "model" and basis.startswith(_S71_DRAFT_BASIS):
        speculative = _s71_flag(names, "speculative_config")
        return "the speculative draft model's config.json" + (f": the `model` of `{speculative}`, or the checkpoint's own draft layers" if speculative else "")
    if actor == "setting" and basis.startswith((_S71_MOE_BASIS, _S71_ONLINE_BASIS)):
        return f"`{basis.split('`')[3]}`"
    if actor == "model" and basis.startswith(_S71_WEIGHT_BASIS):
        return "the shape of one of its weights, which this kernel does not take"
    if actor == "model" and basis.startswith(_S71_MAMBA_BASIS):
        return f"the type of its state-space layers (`{basis.split('`')[1]}`)"
    if actor == "internal" and basis.startswith(_S71_CHAINED_BASIS):
        return f"in `{short_code(record['sites'][0]['qualname'])}`"
    return None


# --------------------------------------------------------------------------- s46-rules4: seed 72's wrong claims and open pages
# (bench/RESULTS.md, s46-judge3: W10 W20 W34, O26): facts of the code, each a small function of its own
# that ``classify`` (or the steps, or the sentence) asks at one place.

#: "selective_scan_fwd not implemented for state type 'BFloat16'": a kernel's dtype dispatch that
#: rejects the dtype of the state it is given.
_SEED72_STATE_TYPE = re.compile(r"\bnot (?:implemented|supported) for state (?:type|dtype)\b", re.I)
#: The setting that picks a Mamba kernel's state dtype: its state is the SSM state cache.
_SEED72_SSM_CACHE_DTYPE = "mamba_ssm_cache_dtype"
#: "if current_platform.is_xpu():" around the check: the platform it is on.
_SEED72_PLATFORM_GUARD = re.compile(r"^current_platform\.is_([a-z]\w{0,30})\(\)$")
#: ``not symmetric``: a property of the quantization scheme (zero points or not), not of a kernel.
_SEED72_SYMMETRY = re.compile(r"(?:not )?\(?(?:[a-z_]\w{0,40}\.)?((?:input_|is_)?symmetric)\)?")
#: "This indicates the chat template was invoked with tokenize=False": the earlier call's keyword.
_SEED72_INVOKED_WITH = re.compile(r"\bThis (?:indicates|means) (?:that )?[\w ]{0,60}?\bwas (?:invoked|called|run) with `?([a-z_]\w{0,40})=(\w{1,20})`?")
#: "Mismatch between the number of pixel_values entries (...) and tilings (...)": two counts of what
#: the multimodal processor makes of the request's media (the request carries the images, not these).
_SEED72_PIXEL_COUNTS = re.compile(r"\bnumber of `?(pixel_values\w{0,20})`? entries\b[^.]{0,80}?\band `?([a-z_]\w{0,40})`?")

_SEED72_STATE_BASIS = "the kernel's dispatch rejects the dtype of the SSM state it is given, the state cache whose dtype the setting `"
_SEED72_SYMMETRY_BASIS = "the check tests `"
_SEED72_INVOKED_BASIS = "the message says the project's own earlier call was made with `"
_SEED72_PIXEL_BASIS = "the check compares the counts of `"


def _seed72_state_dtype(record: dict[str, Any], text: str, names: SettingNames | None) -> str | None:
    """The flag of the SSM state cache's dtype, for a Mamba kernel's dispatch that rejects its state's dtype."""
    path = "/" + record["sites"][0]["path"]
    if record["kind"] != NATIVE or "/mamba/" not in path or not _SEED72_STATE_TYPE.search(text) or names is None:
        return None
    return names.flags.get(_SEED72_SSM_CACHE_DTYPE)


def _seed72_symmetry(record: dict[str, Any], own: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(parameter, platform) for a raise on a quantization scheme's symmetry under a platform test, where
    no option sets a field of that name (no option picks it: the checkpoint's config does)."""
    site = record["sites"][0]
    around = ((site.get("facts") or {}).get("guards") or [])[:-1]
    platform = next((m.group(1) for g in around if (m := _SEED72_PLATFORM_GUARD.match(g.strip()))), None)
    symmetry = _SEED72_SYMMETRY.fullmatch(own.strip())
    if record["kind"] != RAISE or platform is None or symmetry is None or not re.search(r"quantiz", record["message"].get("text") or "", re.I):
        return None
    if names is not None and any(key.rpartition(".")[2] == symmetry.group(1) for key in names.flags):
        return None
    return symmetry.group(1), platform


def _seed72_invoked_with(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> tuple[str, str] | None:
    """(keyword, value) a message says the project's own earlier call passed, raised in a private method
    (only the project's own code calls it, with what that call made) whose check reads no request or config."""
    method = record["sites"][0]["qualname"].rpartition(".")[2]
    said = _SEED72_INVOKED_WITH.search(text)
    if record["kind"] != RAISE or said is None or not method.startswith("_") or method.startswith("__") or set(reads) & _USER_READS:
        return None
    return said.group(1), said.group(2)


def _seed72_pixel_counts(record: dict[str, Any], reads: dict[str, list[str]], text: str) -> tuple[str, str] | None:
    """The two processor outputs a model's raise compares the counts of (``pixel_values`` and another)."""
    path = "/" + record["sites"][0]["path"]
    counts = _SEED72_PIXEL_COUNTS.search(text)
    if record["kind"] != RAISE or counts is None or not any(p in path for p in _ARCHITECTURE_PATHS) or set(reads) & _USER_READS:
        return None
    if _EMBEDS.search(counts.group(2)):  # (embeddings a request may carry in place of its media)
        return None
    return counts.group(1), counts.group(2)


def _seed72_early(record: dict[str, Any], reads: dict[str, list[str]], own: str, text: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(actor, basis) of seed 72's rules, which come before the request's, the settings' and the model's rules."""
    flag = _seed72_state_dtype(record, text, names)
    if flag:
        return (
            "setting",
            f"{_SEED72_STATE_BASIS}{flag}` picks (a Mamba kernel's state tensor is its SSM state cache; the input's dtype is the model's)",
        )
    symmetry = _seed72_symmetry(record, own, names)
    if symmetry:
        return (
            "model",
            f"{_SEED72_SYMMETRY_BASIS}{symmetry[0]}`, a property of the quantization scheme the checkpoint's quantization config declares "
            f"(no option sets it), on the platform its guard tests (`{symmetry[1]}`): this checkpoint on this device",
        )
    invoked = _seed72_invoked_with(record, reads, text)
    if invoked:
        return (
            "internal",
            f"{_SEED72_INVOKED_BASIS}{invoked[0]}={invoked[1]}`, in a private method (`{short_code(record['sites'][0]['qualname'])}`) "
            "that only its own code calls, with what that call made",
        )
    pixels = _seed72_pixel_counts(record, reads, text)
    if pixels:
        return (
            "internal",
            f"{_SEED72_PIXEL_BASIS}{pixels[0]}` and `{pixels[1]}`, which the project's multimodal processor builds for the model "
            "from the request's media: the request carries the images, not these tensors",
        )
    return None


#: "... Falling back to the Triton attention backend.", "Overriding cudagraph_mode to PIECEWISE.": a log that
#: says the code went on without what was asked, or with a value it set itself.
_SEED72_FELL_BACK = re.compile(r"\b(?:(Falling back)|Overriding)\b")
_SEED72_QUIET_LEVELS = ("warning", "info", "debug")


def _seed72_fell_back(record: dict[str, Any], actor: str, basis: str, names: SettingNames | None) -> list[str]:
    """The step of a setting's warning that says the code falls back by itself (R*9 of s46-judge3): the
    value is not refused, so "the condition is what it fails" is no step."""
    level = str((record.get("log") or {}).get("level") or "")
    text = "" if record["message"].get("opaque") else record["message"]["text"]
    said = _SEED72_FELL_BACK.search(text)
    if actor != "setting" or record["kind"] != LOG or level not in _SEED72_QUIET_LEVELS or not said:
        return []
    settings = _settings(record["meaning"].get("knobs") or [], _validated(record), "cli_flag", "config_field", "env_var")
    shown = _settings_shown(record, settings, basis, names) if settings else "the options the message names"
    done, undone = ("falls back by itself", "get what it fell back from") if said.group(1) else ("overrides the value by itself", "keep what it overrode")
    return [
        f"Nothing fails here: the code {done}, as the message says, and goes on. To stop the warning, or to {undone} "
        f"where that can be had, change {shown} (or the model or platform it names) as the message says; otherwise nothing is to be done."
    ]


def _seed72_steps(record: dict[str, Any], actor: str, basis: str, names: SettingNames | None) -> list[str]:
    """The steps of seed 72's rules that need their own words."""
    fell_back = _seed72_fell_back(record, actor, basis, names)
    if fell_back:
        return fell_back
    if actor == "setting" and basis.startswith(_SEED72_STATE_BASIS):
        flag = basis.split("`")[1]
        return [
            f"Start the server with `{flag} auto` (the state in the model's dtype), or `{flag} float32`: "
            "the kernel takes a state of the model's dtype or float32, not another 16-bit one."
        ]
    if actor == "model" and basis.startswith(_SEED72_SYMMETRY_BASIS):
        name, platform = basis.split("`")[1], basis.split("`")[3]
        return [
            f"Use a checkpoint whose quantization config has `{name}` true (no zero points) on this device ({platform}), "
            "or run this checkpoint on a platform whose kernels take it: no option of the server changes it."
        ]
    return []


def _seed72_what(actor: str, basis: str) -> str | None:
    """What a page of seed 72's rules names in its first sentence."""
    if actor == "setting" and basis.startswith(_SEED72_STATE_BASIS):
        return f"`{basis.split('`')[1]}`"
    if actor == "model" and basis.startswith(_SEED72_SYMMETRY_BASIS):
        return f"the checkpoint's quantization (`{basis.split('`')[1]}`) on {basis.split('`')[3]}"
    if actor == "internal" and basis.startswith(_SEED72_INVOKED_BASIS):
        return f"its own call with `{basis.split('`')[1]}`"
    if actor == "internal" and basis.startswith(_SEED72_PIXEL_BASIS):
        return f"the processor's `{basis.split('`')[1]}` and `{basis.split('`')[3]}`"
    return None


# --------------------------------------------------------------------------- s46-rules5: seed 73's wrong claims
# (bench/RESULTS.md, s46-judge4: W22 W35; W4 is in ``catalogue.meaning``: a native check's bare name is
# no environment variable): facts of the code, each a small function of its own that ``classify`` asks.

#: The processor keyword arguments a multimodal processor is handed: the request's ``mm_processor_kwargs``
#: (or ``--mm-processor-kwargs``), not what the processor made (``out_mm_kwargs``).
_S73_PROCESSOR_KWARGS = re.compile(r"(?<![\w.])hf_processor_mm_kwargs(?:\.get)?")
#: A divisibility test in the check's own condition (``k % 16 == 0``).
_S73_DIVISIBLE = re.compile(r"[\w)\]]\s{0,4}%\s{0,4}[\w(]")

_S73_KWARGS_BASIS = "the check tests a value read from `"
_S73_ONLINE_BASIS = _S71_ONLINE_BASIS  # (the same steps and sentence as seed 71's online rule)


def _s73_processor_kwargs(record: dict[str, Any], reads: dict[str, list[str]]) -> str | None:
    """The chain a check reads when all it reads (but constants) is the processor kwargs the request
    sent (``do_sample_frames = hf_processor_mm_kwargs.get("do_sample_frames")``, W22 of s46-judge4).
    Not a check that also reads the media items or what the processor returned. Else None."""
    if record["kind"] not in (ASSERT, RAISE) or not set(reads) <= {"other", "constant"}:
        return None
    chains = reads.get("other") or []
    if not chains or not all(_S73_PROCESSOR_KWARGS.fullmatch(c) for c in chains):
        return None
    return chains[0]


def _s73_online_owner(record: dict[str, Any], own: str) -> str | None:
    """The online quantization method a divisibility check in ``layers/quantization/online/`` belongs to
    (its own class, or the class of every caller: ``_quantize_moe_weight_to_nvfp4``'s ``k % 16`` called by
    ``Nvfp4OnlineMoEMethod._quantize_weights``, W35 of s46-judge4), outside ``create_weights`` (seed 71's
    rule). That code runs only when the user asks for online quantization. Not a check with no ``%``
    (``weight.dim() == 3`` stays the project's own). Else None."""
    path, site = _where(record)
    if record["kind"] not in (ASSERT, RAISE) or _S71_ONLINE not in "/" + path or not _S73_DIVISIBLE.search(own):
        return None
    owners = [site["qualname"].partition(".")[0]] if "." in site["qualname"] else []
    if not owners:
        callers = record["meaning"].get("callers") or []
        if not callers or not all(_S71_ONLINE in "/" + c["path"] and "." in c["qualname"] for c in callers):
            return None
        owners = sorted({c["qualname"].partition(".")[0] for c in callers})
    return owners[0] if all(o.endswith("Method") for o in owners) else None


def _s73_early(record: dict[str, Any], reads: dict[str, list[str]], own: str, names: SettingNames | None) -> tuple[str, str] | None:
    """(actor, basis) of seed 73's rules, which come after seed 72's."""
    kwargs = _s73_processor_kwargs(record, reads)
    if kwargs:
        flag = _s71_flag(names, "mm_processor_kwargs")
        also = f" (or `{flag}`)" if flag else ""
        return (
            "request",
            f"{_S73_KWARGS_BASIS}{kwargs}`, the processor keyword arguments the request sends as `mm_processor_kwargs`{also}: "
            "a value of a type or kind this processor does not take",
        )
    owner = _s73_online_owner(record, own)
    flag = _s71_flag(names, "quantization") if owner else None
    if owner and flag:
        return (
            "setting",
            f"{_S73_ONLINE_BASIS} (`{owner}`), which runs only when `{flag}` asks for online quantization: "
            f"it does not take this layer's size (`{short_code(own.strip())}`)",
        )
    return None


def _s73_steps(actor: str, basis: str) -> list[str]:
    """The steps of seed 73's rules that need their own words."""
    if actor == "request" and basis.startswith(_S73_KWARGS_BASIS):
        return [
            'Send the key the condition under "When it is raised" tests in `mm_processor_kwargs` with a value of the type it takes '
            "(a JSON boolean, not a string or a number, where it tests for `bool`), or leave it out."
        ]
    return []


def _s73_what(actor: str, basis: str) -> str | None:
    """What a page of seed 73's rules names in its first sentence."""
    if actor == "request" and basis.startswith(_S73_KWARGS_BASIS):
        return "its `mm_processor_kwargs`"
    return None
