"""A small, hostile fixture dataset for the consumer side (match, search index, pages).

Templates are built the way the extractor builds them: literal text with ``{expr}`` fields and an
anchored pattern with one lazy named group per field.
"""

from __future__ import annotations

import re
from pathlib import Path

from crawler.catalogue.entries import Identity, build_records
from crawler.catalogue.search import search_file
from crawler.model.records import SCHEMA_VERSION, Manifest, RepoRef
from crawler.publish.writer import render_dataset, write_dataset

COMMIT = "c" * 40
IDENTITY = Identity(RepoRef(url="https://github.com/acme/widgets", owner="acme", name="widgets"), COMMIT, "2026-01-02T03:04:05+00:00", None, "git")


def template(*parts, form: str = "fstring") -> dict:
    """parts: literal strings and 1-tuples (expr,) for fields."""
    text, fields, pattern = [], [], ["(?s)^"]  # as the extractor writes them
    for part in parts:
        if isinstance(part, tuple):
            expr = part[0]
            text.append("{" + expr + "}")
            name = expr if expr.isidentifier() else None
            fields.append({"expr": expr, "name": name})
            pattern.append(f"(?P<f{len(fields) - 1}>.*?)")
        else:
            text.append(part.replace("{", "{{").replace("}", "}}"))
            pattern.append(re.escape(part))
    pattern.append("$")
    opaque = len(parts) == 1 and isinstance(parts[0], tuple) or not parts
    if not parts:
        pattern = ["(?s)^$"]
    return {"text": "".join(text), "fields": fields, "pattern": "".join(pattern), "form": "none" if not parts else form, "opaque": opaque}


def site(
    tmpl: dict, path: str, line: int, qualname: str, exception: str = "ValueError", qualified: str | None = None, kind: str = "raise", code: str | None = None
) -> dict:
    return {
        "path": path,
        "line": line,
        "end_line": line + 1,
        "module": path[:-3].replace("/", "."),
        "qualname": qualname,
        "kind": kind,
        "exception": exception,
        "exception_qualname": qualified or f"builtins.{exception}",
        "template": tmpl,
        "snippet": {
            "start_line": line - 1,
            "end_line": line + 1,
            "code": code or f'def {qualname.rpartition(".")[2]}(x):\n    raise {exception}(f"{tmpl["text"]}")\n    return x',
        },
        "facts": {"guards": ["x is None"], "decorators": ["classmethod"]},
    }


KV = template("Unknown KV cache group kind '", ("kind",), "' in backend_per_kind. Valid kinds are: ", ("', '.join(sorted(valid_kinds))",), ".")
HOSTILE = template('bad <tag> & "quote" \'', ("x",), "' </script><script>alert(1)</script> \u2028 end")
# twelve fields apart by single spaces: a backtracking regex of this pattern takes exponential
# time on a message that almost matches ("Bad " + 36 spaces + " end x")
ADJACENT = template("Bad ", *[part for i in range(12) for part in ([(f"a{i}",)] if i == 0 else [" ", (f"a{i}",)])], " end")

SITES = [
    site(KV, "pkg/config/attention.py", 17, "AttentionConfig._check"),
    site(template("Invalid value ", ("x",)), "pkg/a.py", 10, "parse"),
    site(template("Invalid value ", ("x",), " for ", ("name",)), "pkg/a.py", 20, "parse_named"),
    site(template("Expected ", ("n",), " items, got ", ("len(items)",)), "pkg/b.py", 5, "check", exception="ValueError"),
    site(template("Expected ", ("n",), " items, got ", ("len(items)",)), "pkg/b.py", 9, "check_type", exception="TypeError"),
    site(
        template("Model ", ("name!r",), " is not supported by ", ("backend",), "."),
        "pkg/models.py",
        40,
        "Registry.resolve",
        exception="UnsupportedModelError",
        qualified="pkg.errors.UnsupportedModelError",
    ),
    site(template("not json: ", ("path!r",)), "pkg/io.py", 3, "load", exception="AssertionError", kind="assert"),
    site(template(), "pkg/io.py", 7, "load", exception="NotImplementedError"),
    site(template(("msg",), form="variable"), "pkg/io.py", 11, "store", exception="RuntimeError"),
    site(HOSTILE, "pkg/evil.py", 2, "render"),
    site(ADJACENT, "pkg/bad.py", 3, "bad"),
    site(template("line one\nline two: ", ("detail",)), "pkg/multi.py", 6, "explain"),
    site(
        template(
            "The model's max seq len (",
            ("max_model_len",),
            ") is larger than the maximum number of tokens that can be stored in KV cache (",
            ("max_tokens",),
            "). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        ),
        "pkg/engine.py",
        88,
        "check_kv",
    ),
]

EXCEPTIONS = {
    "pkg.errors.UnsupportedModelError": {
        "name": "UnsupportedModelError",
        "qualname": "pkg.errors.UnsupportedModelError",
        "builtin_ancestor": "ValueError",
        "bases": ["pkg.errors.ModelError", "builtins.ValueError"],
    },
}


def records() -> list[dict]:
    recs = build_records(IDENTITY, SITES, EXCEPTIONS)
    by_text = {r["message"]["text"]: r for r in recs}
    kv = by_text[KV["text"]]
    # one curated entry, so pages show both states
    kv["explanation_status"] = "curated"
    kv["explanation"].update(
        what_it_means="The <kind> is not one of the KV cache group kinds.",
        solutions=["Use one of the valid kinds & retry."],
        example_fix={"before": "backend_per_kind={'full': 'x'}", "after": "backend_per_kind={'sliding': 'x'}"},
        prevention=["Validate kinds early."],
    )
    kv["related"] = [
        {"id": r["id"], "title": r["title"], "reason": "same package"} for r in recs if r is not kv and r["message"]["text"].startswith("Invalid value")
    ]
    return recs


def manifest_for(recs: list[dict]) -> Manifest:
    return Manifest.model_validate(
        {
            "schema_version": SCHEMA_VERSION,
            "errcat_version": "0",
            "extractor_version": "0",
            "repo": IDENTITY.repo.model_dump(),
            "commit": COMMIT,
            "commit_date": IDENTITY.commit_date,
            "upstream_commit": None,
            "ref": "v1",
            "source": "git",
            "include": ["pkg/**/*.py"],
            "exclude": [],
            "skipped": [],
            "curated_digest": None,
            "input_digest": "0" * 64,
            "counts": {"files": 8, "parsed": 8, "skipped": 0, "sites": len(SITES), "entries": len(recs), "bare_asserts": 0, "reraises": 0},
            "content_digest": "",
        }
    )


def write(tmp_path: Path) -> Path:
    """The fixture dataset written as the crawl writes it; returns its directory."""
    recs = records()
    manifest = manifest_for(recs)
    files = render_dataset(recs, manifest, extra=search_file(recs, manifest))
    return write_dataset(tmp_path / "out" / "acme" / "widgets", files)


def write_many(root: Path, n: int, version: str, drop: int = 0) -> Path:
    """A dataset of ``n`` entries whose messages name ``version`` (so two versions share no page),
    without the last ``drop`` of them; returns its directory."""
    sites = [site(template(f"{version} error number {i}: ", ("x",)), f"pkg/m{i % 7}.py", 10 + i, f"f{i}") for i in range(n - drop)]
    recs = build_records(IDENTITY, sites, {})
    manifest = manifest_for(recs)
    return write_dataset(root / "acme" / "widgets", render_dataset(recs, manifest, extra=search_file(recs, manifest)))


CURATED_MD = {
    "what_it_means": (
        "The `kind` is not one of the **valid** kinds. See [the docs](https://docs.vllm.ai/x) and "
        "[a page](other.html); [bad](javascript:alert(1)) [data](data:text/html,x) [plain](http://evil.example/) "
        "[proto](//evil.example/x) ![img](https://evil.example/p.png) <script>alert(2)</script>"
    ),
    "solutions": ["Pass `--kv-cache-dtype auto`.", "Restart & retry <b>now</b>."],
    "example_fix": {"before": "vllm serve m --kv-cache-dtype fp9\n", "after": "vllm serve m --kv-cache-dtype auto\n"},
    "defensive_patterns": [{"strategy": "Check with `assert`:", "code": "assert kind in KINDS\n"}],
    "prevention": ["Read the list:\n\n```bash\nvllm serve --help | grep kv\n```"],
}


def write_rich(tmp: Path, ref: str | None = "v1") -> tuple[Path, dict]:
    """The fixture dataset with curated Markdown (hostile links and HTML in it), a derived
    trigger, and history over three releases (one entry retired, reworded as another)."""
    recs = records()
    by_text = {r["message"]["text"]: r for r in recs}
    by_text[KV["text"]]["explanation"].update(CURATED_MD)
    by_text[ADJACENT["text"]]["meaning"]["trigger"] = "Raised when `a0` is <bad>."
    for n, r in enumerate(sorted(recs, key=lambda r: r["id"])):
        first = "v0.9.0" if n % 3 == 0 else "v0.10.0"
        r["history"] = {"first_seen": {"version": first, "commit": "a" * 40}, "last_seen": {"version": "v0.11.0", "commit": "b" * 40}}
    retired = sorted(recs, key=lambda r: r["id"])[-1]
    retired["history"].update(
        retired=True,
        removed_in={"version": "v0.11.0", "commit": "b" * 40},
        retired_note="removed in v0.11.0",
        last_seen={"version": "v0.10.0", "commit": "a" * 40},
    )
    successor = sorted(recs, key=lambda r: r["id"])[0]
    retired["history"]["replaced_by"] = successor["id"]
    successor["history"]["replaces"] = [retired["id"]]
    base = manifest_for(recs)
    manifest = base.model_copy(update={"ref": ref, "counts": base.counts.model_copy(update={"entries": len(recs) - 1, "retired": 1})})
    out = write_dataset(tmp / "out" / "acme" / "widgets", render_dataset(recs, manifest, extra=search_file(recs, manifest)))
    by_text["_ordered"] = sorted(recs, key=lambda r: r["id"])  # type: ignore[assignment]
    return out, by_text


def write_changelog(tmp: Path) -> Path:
    """A sync changelog with a hostile link and raw HTML in it."""
    changelog = tmp / "changelog.md"
    changelog.write_text("## vLLM v0.11.0\n\n- 1 removed: `Bad x`\n- [evil](javascript:alert(3)) <img src=x onerror=alert(4)>\n")
    return changelog


# --------------------------------------------------------------------------- ranking ties

#: Entries that match a paste equally well by wording, told apart only by what errcat match's
#: ranking also weighs: the traceback frame's function (two of one wording raised in two
#: functions as different exceptions), the kind (a logged warning and a raise of one wording), and a
#: Rust frontend's check repeating a Python raise's message.
ADAPTER = template("Loading adapter ", ("name",), " failed")
ENV = template("Unknown environment variable detected: ", ("env",))
RANKING_SITES = [
    site(ADAPTER, "pkg/lora/manager.py", 30, "WorkerManager._load_adapter", exception="ValueError"),
    site(ADAPTER, "pkg/lora/loader.py", 12, "load_weights", exception="TypeError"),
    {
        **site(ENV, "pkg/envs.py", 50, "check_env", exception="WARNING", qualified="logging.WARNING", kind="log"),
        "log": {"level": "warning", "logger": "logger", "once": False},
    },
    site(ENV, "pkg/envs.py", 60, "strict_env", exception="ValueError"),
    # a Rust frontend's checks repeating the Python server's messages, one of them cut short
    site(
        template("At most ", ("limit",), " ", ("modality",), "(s) may be provided in one prompt. Set `--limit-mm-per-prompt` to increase this limit."),
        "pkg/mm.py",
        8,
        "validate_num_items",
    ),
    site(template("Too many bad words: ", ("n",), ". The max number is ", ("limit",), "."), "pkg/sampling.py", 70, "verify_bad_words"),
    *(
        {
            **site(template(*parts), "rust/src/chat/error.rs", line, name, exception="Error", qualified="builtins.Error", kind="native"),
            "native": {"macro": "#[error]", "language": "rust", "surfaces_as": "Error"},
        }
        for parts, line, name in (
            (("At most ", ("limit",), " ", ("modality",), "(s) may be provided in one prompt."), 5, "MmLimitExceeded"),
            (("Too many bad words: ", ("n",), ". The max number is ", ("limit",), "."), 9, "TooManyBadWords"),
        )
    ),
]


def write_ranking(tmp: Path) -> Path:
    """A dataset of the ``RANKING_SITES`` (entries tied on wording); returns its directory."""
    recs = build_records(IDENTITY, RANKING_SITES, {})
    manifest = manifest_for(recs)
    return write_dataset(tmp / "ranking" / "acme" / "widgets", render_dataset(recs, manifest, extra=search_file(recs, manifest)))
