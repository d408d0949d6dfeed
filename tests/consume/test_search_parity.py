"""The site's search box answers as ``errcat match`` does, checked under Node on every run.

The box (crawler/consume/static/search.js) is a second implementation of the matcher. Here the
search.js and search-index.js a render wrote are loaded into Node (node_search.js, no browser),
and every paste of the real corpora (tests/data/pastes*.jsonl, their ``current`` and ``current_on`` wordings too)
and of the pasted forms the other tests use is answered by both, over fixture datasets of every
kind (raises, logs, a response, assembled messages, a history catalogue with retired entries):
the same readings, the same entries in the same order, the same strength. The browser test
(test_browser.py) keeps what only a browser shows: the page, the keyboard, the layout.

CI installs Node (.ci/run); elsewhere the test is skipped only when node is genuinely absent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import consumer_data as cd
import pytest

from crawler.consume.match import Matcher, match, paste_readings
from crawler.consume.site import render_site

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
NODE = shutil.which("node") or shutil.which("nodejs")
BEGINNING = "no full match: the message is its beginning"
#: The rows the box shows (search.js LIMIT).
LIMIT = 10


def corpus() -> list[str]:
    rows = [json.loads(line) for name in ("pastes.jsonl", "pastes_old.jsonl") for line in (DATA / name).read_text().splitlines()]
    return [r["text"] for r in rows] + [r["current"] for r in rows if "current" in r] + [t for r in rows for t in (r.get("current_on") or {}).values()]


@pytest.fixture(scope="module")
def node() -> str:
    if NODE is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the search box's parity test must run in CI: node is missing (apt-get install nodejs)")
        pytest.skip("node is not installed (apt-get install nodejs)")
    return NODE


def box(node: str, site: Path, pastes: list[str]) -> list[dict]:
    """The box's readings and rows for each paste, from the site's own scripts run in Node."""
    done = subprocess.run([node, str(HERE / "node_search.js"), str(site)], input=json.dumps(pastes), capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def answer_rows(dataset: Path, paste: str, matcher: Matcher) -> dict:
    """errcat match's answer (``match.match``, as the CLI calls it) as the box shows it: its matches
    with their badges, then, when none matches or only umbrellas do, its weak candidates."""
    result = match(paste, [matcher], LIMIT)
    rows, shown = [], set()
    for m in result.matches:
        if m.entry.id not in shown:
            shown.add(m.entry.id)
            how = " \u00b7 matches" if m.how == "full" else f" \u00b7 {BEGINNING}"
            lineage = m.lineage or {}
            # the lineage errcat match gives: retired, the releases that raised it, whether the
            # release the paste names did, and what raises its error today
            said = " \u00b7 retired" + (f", raised in {lineage['raised_in']}" if lineage.get("raised_in") else "") if lineage.get("retired") else ""
            if result.version and m.live_in:
                said += f" \u00b7 {'raised by' if m.live_in > 0 else 'not raised by'} {result.version}"
            today = lineage.get("today") if lineage.get("retired") else None
            rows.append([m.entry.id, m.entry.exception + how + (f" \u00b7 {m.role}" if m.role else "") + said, today])
    if not rows or all(m.role == "umbrella" for m in result.matches):
        for w in result.weak:
            if w.entry.id not in shown:
                shown.add(w.entry.id)
                rows.append([w.entry.id, f"{w.entry.exception} \u00b7 weak", None])
    return {"rows": rows[:LIMIT], "foreign": [h.error.name for h in result.foreign], "version": result.version}


def assert_parity(node: str, dataset: Path, tmp: Path, pastes: list[str]) -> dict[str, int]:
    """Renders the site of ``dataset`` and holds the box to errcat match on every paste; returns
    how many pastes each answered with a match, a weak candidate or a foreign error."""
    site = tmp / "site"
    render_site(dataset, site)
    got = box(node, site, pastes)
    matcher = Matcher.load(dataset)
    seen = {"match": 0, "weak": 0, "foreign": 0, "retired": 0, "release": 0}
    for paste, answer in zip(pastes, got, strict=True):
        want_readings = [
            [r.message, r.exception, r.source, [r.frame.path, r.frame.line, r.frame.function] if r.frame else None, r.truncated, r.line]
            for r in paste_readings(paste)
        ]
        assert answer["readings"] == want_readings, paste
        want = answer_rows(dataset, paste, matcher)
        rows = [row for row in answer["results"]["rows"] if not row[1].endswith("\u00b7 shares words")]
        assert rows == want["rows"][: len(rows)] and len(rows) == min(len(want["rows"]), LIMIT), (paste, rows, want)
        assert answer["results"]["foreign"] == want["foreign"], paste
        assert answer["results"]["version"] == want["version"], paste
        seen["match"] += any("\u00b7 weak" not in b for _, b, _ in rows)
        seen["weak"] += any(b.endswith("\u00b7 weak") for _, b, _ in rows)
        seen["foreign"] += bool(want["foreign"])
        seen["retired"] += any("\u00b7 retired" in b for _, b, _ in rows)
        seen["release"] += any("raised by " in b for _, b, _ in rows)
    return seen


def test_the_box_answers_the_corpus_as_errcat_match_does_on_the_catalogue_fixture(node, tmp_path):
    """The consumer fixture: raises, a log, a response, hostile text, a foreign error."""
    from test_browser import FOREIGN, KV_LOGGED

    dataset = cd.write(tmp_path)
    (dataset / "foreign.json").write_text(json.dumps(FOREIGN))
    pastes = corpus() + [
        KV_LOGGED,
        "ValueError: Unknown KV cache group kind 'full' in backend_per",
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. Invalid value 3",
        "TypeError: Expected 3 items, got 4",
        "ValueError: Expected 3 items, got 4",
        "kv cache",
    ]
    seen = assert_parity(node, dataset, tmp_path, pastes)
    assert seen["match"] >= 4 and seen["weak"] >= 10 and seen["foreign"] >= 1, seen


def test_the_box_ranks_ties_as_errcat_match_does(node, tmp_path):
    """The ranking fixture: the frame's function, a log's level, a Rust check's repeat."""
    dataset = cd.write_ranking(tmp_path)
    frame = (
        'Traceback (most recent call last):\n  File "/venv/lib/python3.12/site-packages/pkg/lora/{}", line 99, in {}\n'
        "    self.load(name)\nRuntimeError: Loading adapter sql-lora failed"
    )
    body = "openai.BadRequestError: Error code: 400 - {{'object': 'error', 'message': '{}', 'type': 'BadRequestError'}}"
    pastes = corpus() + [
        frame.format("manager.py", "_load_adapter"),
        frame.format("loader.py", "load_weights"),
        "(APIServer pid=3084) WARNING 07-14 08:38:33 [envs.py:2041] Unknown environment variable detected: FOO",
        "Unknown environment variable detected: FOO",
        "ValueError: Unknown environment variable detected: FOO",
        body.format("Too many bad words: 120. The max number is 100."),
        body.format("At most 1 image(s) may be provided in one request."),
    ]
    seen = assert_parity(node, dataset, tmp_path, pastes)
    assert seen["match"] >= 5, seen


def test_the_box_reads_the_forms_people_paste_as_errcat_match_does(node, fixture_repo, cli, tmp_path):
    """A crawl of vLLM-like code (issue #31's pasted forms, an engine's umbrella, an assembled
    message): Markdown, typographic quotes, letter case, frames, bare raises, prefixes."""
    import test_match_pasted_forms as forms
    from test_browser import ASSEMBLED
    from test_match_cli import ENGINE, LOGGED_THEN_TRACEBACK

    files = {
        "vllm/__init__.py": "",
        "vllm/config/__init__.py": "",
        "vllm/config/model.py": forms.MODEL,
        "vllm/config/pool.py": forms.CONFIG,
        "vllm/engine.py": ENGINE,
        "vllm/check.py": ASSEMBLED,
    }
    fixture_repo.commit(files, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text('default = "u"\n[upstreams.u]\nurl = "https://github.com/vllm-project/vllm"\ninclude = ["vllm/**/*.py"]\n')
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--out", tmp_path / "out").exit_code == 0
    m = forms.MESSAGE
    pastes = corpus() + [
        f"**ValueError: {m}**",
        f"> > {m}",
        "> " + "\n> ".join(forms.FIELDS_TB.rstrip().splitlines()),
        f"`{m}`",
        f"### {m}",
        m.replace("'", "\u2019").replace(" - ", " \u2013 ").replace(" ", "\u00a0", 2),
        "ValueError: (\u2018Unknown KV cache group kind\u2019, \u2018full\u2019)",
        "valueerror: unknown kv cache group kind",
        m.upper(),
        forms.FIELDS_TB,
        "ray::RayWorkerWrapper.execute_method() (pid=1234, ip=10.0.0.1, actor_id=9f3b) " + m,
        "INFO:     127.0.0.1:5000 - " + m,
        "worker-3 | 2024-05-01T10:00:00.123Z (pid=42) " + m,
        LOGGED_THEN_TRACEBACK,
        "Value error, Widget count must be positive for every pool of this engine.",
        "ValueError: No room left for the widget cache. Try increasing `--pool-size` when starting the engine.",
        # backticks a tracker's Markdown dropped, whole, stopped and cut; one kept
        "ValueError: No room left for the widget cache. Try increasing --pool-size when starting the engine "
        "(this flag also sets how much the cache may spill to disk).",
        "No room left for the widget cache. Try increasing --pool-size when starting the engine.",
        "ValueError: No room left for the widget cache. Try increasing --pool-size when",
        "ValueError: No room left for the widget cache. Try increasing `--pool-size when starting the engine.",
        # a warning run on after the message (an issue title), and text that is no warning's head
        "[Bug]: ValueError: Widget count must be positive for every pool of this engine. "
        "/root/envs/vllm/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracke",
        "ValueError: Widget count must be positive for every pool of this engine. see config.py:12: UserNotice: x",
        "Widget count must be positive for every pool of this engine. a.py:1: UserWarning: b.py:2: DeprecationWarning: c",
        "ValueError: item 7 exceeds the limit of 5\nitem -1 is negative",
        "runtimeerror: cuda error: an illegal memory access was encountered",
    ]
    seen = assert_parity(node, tmp_path / "out" / "vllm-project" / "vllm", tmp_path, pastes)
    assert seen["match"] >= 15, seen


#: Asserts with no message beside a bare raise and an assert with one: a condition over two lines
#: (a frame shows its first), one too long for the title (the box reads it from ``q``).
PLAN = """
def plan(blocks, size, table):
    assert (blocks
            and size > 0)
    assert blocks % size == 0 and size <= 4096 and table is not None and len(table) == blocks // size
    assert table, "the block table is empty: allocate it before planning"
    if size > 8192:
        raise AssertionError
    return blocks // size
"""
LONG = "assert blocks % size == 0 and size <= 4096 and table is not None and len(table) == blocks // size"


def _tb(line: int, code: str, last: str = "AssertionError", path: str = "/usr/lib/python3.12/site-packages/vllm/plan.py", function: str = "plan") -> str:
    return f'Traceback (most recent call last):\n  File "{path}", line {line}, in {function}\n    {code}\n{last}\n'


@pytest.mark.slow
def test_the_box_reads_a_frame_code_line_as_errcat_match_does(node, fixture_repo, cli, tmp_path):
    """A frame's code line tells a bare assert from the bare raise beside it, and an assert's
    condition from another's, in the box as in errcat match (``match._condition_said``)."""
    import test_match_pasted_forms as forms

    files = {"vllm/__init__.py": "", "vllm/config/__init__.py": "", "vllm/config/model.py": forms.MODEL, "vllm/plan.py": PLAN}
    fixture_repo.commit(files, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text('default = "u"\n[upstreams.u]\nurl = "https://github.com/vllm-project/vllm"\ninclude = ["vllm/**/*.py"]\n')
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--out", tmp_path / "out").exit_code == 0
    dataset = tmp_path / "out" / "vllm-project" / "vllm"
    entries = json.loads((dataset / "search.json").read_text())["entries"]
    assert sum(e.get("condition") is not None for e in entries) == 3  # workers > 0, the two of plan
    moved = forms.BARE_TB.replace("raise AssertionError", "assert workers > 0").replace(f"line {forms.BARE_LINE},", f"line {forms.ASSERT_LINE + 30},")
    pastes = [
        "```python\n" + forms.BARE_TB + "```",
        forms.BARE_TB,
        forms.BARE_TB.removeprefix("Traceback (most recent call last):\n"),
        moved,
        moved.replace("workers > 0", "workers > 1"),  # another condition: no claim
        _tb(3, "assert (blocks"),  # the first line of a condition over two
        _tb(3, "assert (size"),
        _tb(4, LONG),
        _tb(4, LONG.replace(" % ", "  %\t") + "\u00a0"),  # white space as Python collapses it
        _tb(4, LONG, path="/home/me/src/old/planner.py"),  # the file moved: a function of its name
        _tb(
            5, 'assert table, "the block table is empty: allocate it before planning"', "AssertionError: the block table is empty: allocate it before planning"
        ),
        _tb(7, "raise AssertionError"),
        _tb(forms.KIND_LINE, "assert kind", "ValueError: ('Unknown KV cache group kind', 'full')", forms._frame(0, "", "").split('"')[1], "verify"),
    ]
    seen = assert_parity(node, dataset, tmp_path, pastes)
    assert seen["match"] >= 8, seen


def test_the_box_finds_old_wordings_as_errcat_match_does(node, fixture_repo, cli, tmp_path):
    """A history catalogue over three releases: a paste in a retired wording, with or without the
    release it names, is answered by the entry that raised it, in errcat match's order."""
    from test_match_lineage import ARGS, V1, V2, V11

    fixture_repo.commit(V1, tag="v1.0")
    fixture_repo.commit(V11, tag="v1.1")
    fixture_repo.commit(V2, tag="v2.0")
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--out", tmp_path / "out", "v1.0", "v1.1", "v2.0").exit_code == 0
    pastes = corpus() + [
        "ValueError: widget size must be positive, got -3",
        "ValueError: widget size must be strictly positive, got -1",
        "OverflowError: widget size is far too large for the frame",
        "widget size must be",
        "LookupError: unknown paint for the widget frame: green",
        'Traceback (most recent call last):\n  File "/venv/lib/python3.12/site-packages/pkg/a.py", line 9, in load\n'
        '    raise FileNotFoundError(f"no widget file at {path}")\nFileNotFoundError: no widget file at /tmp/w',
    ]
    # a paste that names its release: what that release raised comes first, and each says whether it did
    named = [
        "widgets version 1.0\nValueError: widget size must be",
        "widgets version: v1.1\nValueError: widget size must be",
        "/venv/lib/python3.12/site-packages/widgets-2.0.dist-info\nValueError: widget size must be",
        "widgets==0.9\nOverflowError: widget size is far too large for the frame",
        "widgets version 1.0 and widgets version 2.0\nValueError: widget size must be",
    ]
    seen = assert_parity(node, tmp_path / "out" / "acme" / "widgets", tmp_path, pastes + named)
    assert seen["match"] >= 5 and seen["retired"] >= 3 and seen["release"] >= 3, seen


def test_the_box_ranks_a_piece_of_an_assembled_message_by_the_entrys_fields(node, fixture_repo, cli, tmp_path):
    """A message raised alone in one release and as a piece of an assembled one in the next (vLLM
    0.5's LoRA rank check, in PEFTHelper.validate_legal since): both match; the piece counts no
    fields of its own (``match.expanded``), so the live entry comes first in both, as errcat match ranks them."""
    alone = 'def check(rank, most):\n    if rank > most:\n        raise ValueError(f"LoRA rank {rank} is greater than max_lora_rank {most}.")\n'
    pieces = (
        "def check(rank, most, bias):\n    errors = []\n    if rank > most:\n"
        '        errors.append(f"LoRA rank {rank} is greater than max_lora_rank {most}.")\n'
        '    if bias:\n        errors.append("Adapter bias is not supported.")\n    raise ValueError(" ".join(errors))\n'
    )
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/lora.py": alone}, tag="v1.0")
    fixture_repo.commit({"pkg/lora.py": pieces}, tag="v2.0")
    args = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]
    assert cli("history", "--repo", fixture_repo.path, *args, "--out", tmp_path / "out", "v1.0", "v2.0").exit_code == 0
    paste = "ValueError: LoRA rank 64 is greater than max_lora_rank 16."
    seen = assert_parity(node, tmp_path / "out" / "acme" / "widgets", tmp_path, [paste, "LoRA rank 64 is greater than max_lora_rank 16."])
    assert seen["match"] == 2 and seen["retired"] == 2, seen


def test_the_box_orders_releases_and_reads_a_named_one_as_errcat_match_does(node, tmp_path):
    """search.js's release order (lineage.version_key: PEP 440's, a local tag no part of the
    release) and its reading of the
    release a paste names (paste.named_version), on every pair of versions and every line."""
    import itertools

    from crawler.consume.lineage import version_key
    from crawler.consume.paste import named_version

    site = tmp_path / "site"
    render_site(cd.write(tmp_path), site)
    versions = [
        "0.6.3",
        "v0.6.3",
        "0.6.3.post1",
        "0.6.3post2",
        "0.7.0rc1",
        "0.7.0a2",
        "0.7.0b1",
        "0.7.0.dev3",
        "0.7.0",
        "0.7",
        "v0.7.0.0",
        "1.10.0",
        "1.9.12",
        "0.10.2",
        "2.0rc2",
        "0.7.0.post",
        "0.7.0.post1.dev2",
        "1.0-rc1",
        "1.0.dev",
        "1.0-1",
        "1.0.0a",
        "V1.0.0",
        "release-1.2",
        "1.0.0+cu118",
    ]
    lines = [
        "vLLM API server version 0.6.3",
        "INFO vllm version: v0.8.5",
        "Initializing an LLM engine (v0.8.5) with config",
        "/usr/lib/python3/site-packages/vllm-0.6.3.dist-info/METADATA",
        "pip install vllm==0.10.2",
        "vllm-0.6.3+cu118-cp38",
        "vllm version 0.6.3 then vllm version 0.7.0",
        "vllm version 0.6.3 and vllm==0.6.3",
        "no version here",
        "vllmx-0.6.3",
        "see /opt/vllm/0.9.1/lib",
    ]
    script = (
        "globalThis.window = globalThis; const fs = require('fs'), vm = require('vm');"
        "for (const f of ['search-index.js', 'search.js']) vm.runInThisContext(fs.readFileSync(process.argv[1] + '/' + f, 'utf8'));"
        "const [vs, ls] = JSON.parse(fs.readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify([vs.map(a => vs.map(b => window.errcatCompareVersions(a, b))),"
        " ls.map(l => window.errcatNamedVersion(l, 'vllm'))]));"
    )
    done = subprocess.run([node, "-e", script, str(site)], input=json.dumps([versions, lines]), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    order, named = json.loads(done.stdout)
    for (i, a), (j, b) in itertools.product(enumerate(versions), repeat=2):
        ka, kb = version_key(a), version_key(b)
        assert ka is not None and kb is not None
        want = (ka > kb) - (ka < kb)
        assert order[i][j] == want, (a, b)
    assert named == [named_version(line, "vllm") for line in lines]
    assert named[0] == "0.6.3" and named[6] is None and named[7] == "0.6.3"


def test_the_box_reads_a_warning_run_on_after_a_message_with_pythons_classes(node, tmp_path):
    """paste.without_warning's classes read alike in both: a warning head whose line number is
    in other digits (Python's \\d is Unicode, ECMA-262's ASCII), whose category holds a letter
    beyond ASCII (\\w likewise), or whose path holds a space JS takes for one and Python not
    (\\s): the same readings, the same rows."""
    dataset = cd.write(tmp_path)
    pastes = [
        "ValueError: Expected 3 items, got 4 /x/resource_tracker.py:\u0662\u0662\u0664: UserWarning: leaked semaphores",
        "ValueError: Expected 3 items, got 4 /x/resource_tracker.py:224: Us\u00e9rWarning: leaked semaphores",
        "ValueError: Expected 3 items, got 4 /x/re\ufeffsource.py:224: UserWarning: leaked semaphores",
        "ValueError: Expected 3 items, got 4 /x/re\u00a0source.py:224: UserWarning: leaked semaphores",
    ]
    assert_parity(node, dataset, tmp_path, pastes)


def test_the_box_reads_pythons_digits_as_errcat_match_does(node, tmp_path):
    """Every paste class with a digit: a frame's line, a log's time stamp, a rank prefix, in
    digits of another script (Python's \\d takes them, ECMA-262's does not)."""
    dataset = cd.write(tmp_path)
    other = "\u0661\u0662"
    pastes = [
        f'Traceback (most recent call last):\n  File "/x/vllm/a.py", line {other}, in f\n    raise ValueError("x")\nValueError: Expected 3 items, got 4\n',
        f"INFO 0{other}-01 12:00:00 [a.py:{other}] Expected 3 items, got 4",
        f"[rank{other}]: ValueError: Expected 3 items, got 4",
        f"ValueError: Expected {other} items, got 4",
        "INFO 01-01 12:00:00 [mod\u00e8le.py:12] Expected 3 items, got 4",
        "[rank0]: ray::Mod\u00e8le.run() (pid=12) ValueError: Expected 3 items, got 4",
    ]
    assert_parity(node, dataset, tmp_path, pastes)


#: White space one language's class has and the other's has not (Python's str.isspace and \s
#: take \x1c-\x1f and \x85, ECMA-262's \s and trim() take \ufeff), and the ones both take that
#: end a line for ECMA-262's ^ and $ (\r, \u2028, \u2029), or are rare elsewhere.
RARE_SPACES = ["\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\ufeff", "\u1680", "\u2028", "\u2029", "\r", "\x0b", "\xa0", "\u3000"]
#: Every place of a paste where white space is read, with {c} where the rare character goes.
SPACED_PASTES = [
    "ValueError: Expected 3 items, got 4{c}",
    "{c}ValueError: Expected 3 items, got 4",
    "{c}   ValueError: Expected 3 items, got 4",
    "vllm-1{c}| ValueError: Expected 3 items, got 4",
    "[rank0]:{c}ValueError: Expected 3 items, got 4",
    "\u2502{c}ValueError: Expected 3 items, got 4",
    "ERROR:{c}Expected 3 items, got 4",
    "Jan 01 12:00:00 ho{c}st vllm[12]: ValueError: Expected 3 items, got 4",
    "INFO 01-01 12:00:00 [a.py:1] Expected 3 items, got 4{c}",
    "WARNING 01-01 12:00:00 [a.py:1]{c}Expected 3 items, got 4",
    'Traceback (most recent call last):\n{c} File "/x/vllm/a.py", line 12, in f\n    raise ValueError("x")\nValueError: Expected 3 items, got 4',
    'Traceback (most recent call last):\n  File "/x/vllm/a.py", line 12, in f\n{c}   assert x\nAssertionError',
    'Traceback (most recent call last):\n  File "/x/vllm/a.py", line 12, in f\n    raise ValueError("x"){c}\n{c}\nValueError: Expected 3 items, got 4',
    'Traceback (most recent call last):\n  File "/x/vllm/a.py", line 12, in f\n{c}   raise ValueError(\n{c}       "Expected 3 items, "{c}\n        "got 4")',
    'Traceback (most recent call last):\n  File "/x/vllm/a.py", line 12, in f{c}oo\n    raise ValueError("x")\nValueError: Expected 3 items, got 4',
    "Exception in worker w{c}1 while processing method m: ValueError: Expected 3 items, got 4",
    "ValueError: Expected 3 items, got 4\n{c}\nmore of it",
    "ValueError: Expected 3 items,\n{c}got 4",
    "1 validation error for X\n{c}Value error, Expected 3 items, got 4 [type=value_error, input_value=1, input_type=int]",
    "1 validation error for X\n  Value error, Expected 3 items, got 4{c}\n{c}For further information visit https://errors.pydantic.dev",
    "1 validation error for X\nx\n{c} Expected 3 items, got 4 (type=value_error){c}",
    "vllm serve: error: argument --a{c}b: Expected 3 items, got 4",
    "x{c}`ValueError`: Expected 3 items, got 4",
    "**{c}ValueError: Expected 3 items, got 4**",
    '"ValueError: Expected 3 items, got 4{c}"',
    "```{c}\nValueError: Expected 3 items, got 4\n```",
    "ValueError: [address=1.2.3.4:5{c}, pid=3] Expected 3 items, got 4",
    "ValueError: Expected 3 items, got 4 (parameter=n, value=4){c}",
    "Expected 3 items, got 4\nvllm==0.6.3{c}",
    "ValueError: Expected 3 items, got 4 {c}/x/resource_tracker.py:224: UserWarning: leaked semaphores",
    "kv{c}cache",
]


def test_the_box_reads_pythons_white_space_as_errcat_match_does(node, tmp_path):
    """White space is Python's (str.isspace, \\s) in both: each paste with each of the spaces the
    two languages disagree on (or ECMA-262 reads as a line's end) at every place a paste's
    white space is read: the same readings, the same rows."""
    dataset = cd.write(tmp_path)
    pastes = [p.replace("{c}", c) for p in SPACED_PASTES for c in RARE_SPACES]
    assert_parity(node, dataset, tmp_path, pastes)


def test_the_box_reads_pythons_line_starts_word_ends_and_cases_as_errcat_match_does(node, tmp_path):
    """The other places ECMA-262's classes are not Python's: a line start of a multi-line pattern
    after \r or \u2028 (ECMA-262's ^ takes them as a line's end, re.M only \n), \b beside a
    letter beyond ASCII (Python's word characters are Unicode's), and a release named with "ſ"
    or "K" (IGNORECASE folds them to s and k where "gi" does not): the same readings, the same
    rows, the same release."""
    dataset = cd.write(tmp_path)
    pastes = [
        "1 validation error for X\nx\u2028Value error, Expected 3 items, got 4 [type=value_error, input_value=1]",
        "1 validation error for X\nx\rValue error, Expected 3 items, got 4 [type=value_error, input_value=1]",
        "1 validation error for X\n  Value error, Expected 3 items, got 4 [type=value_error\u00e9, input_value=1]",
        "1 validation error for X\nx\u2028  Expected 3 items, got 4 (type=value_error)",
        'Traceback (most recent call last):\nx\u2028  File "/x/vllm/a.py", line 12, in f\n    raise ValueError("x")\nValueError: Expected 3 items, got 4',
        "Jan 01 12:00:00 \u00e9ERROR vllm[12]: Expected 3 items, got 4",
        "Jan 01 12:00:00 ERROR\u00e9 vllm[12]: Expected 3 items, got 4",
        "ValueError: Expected 3 items, got 4\nwidgets ver\u017fion 0.6.3",
        "ValueError: Expected 3 items, got 4\nwidgets==0.6.3+cu\u017f",
        "ValueError: Expected 3 items, got 4\n\u00e9widgets version 0.6.3",
        "ValueError: Expected 3 items, got 4\nwidgets version 0.6.3\x85",
        "ValueError: Expected 3 items, got 4\nwidgets==0.6.3\x1c",
        "ValueError: Expected 3 items, got 4\nwidgets==0.6.3+cu!",
    ]
    assert_parity(node, dataset, tmp_path, pastes)


def _cut_pastes() -> list[str]:
    """Pastes longer than what is read, or whose length Python and JavaScript count apart: an error
    at the end of a long log (the box read a paste's first 64 Ki UTF-16 units, errcat match its
    last 256 Ki characters), a paste of characters beyond the BMP (two UTF-16 units each: a cut by
    units would keep half as many, or split a pair), a traceback over more lines than the box
    kept (4,096), and the bounds inside a paste in such characters."""
    from crawler.consume.match import MAX_INPUT

    error = "ValueError: Expected 3 items, got 4"
    astral = "\U0001f600"
    return [
        "INFO: starting\n" * 20000 + error,
        error + "\n" + "x" * 70000,
        astral * 100000 + "\n" + error,
        # the cut falls inside the error line: read as far as the last MAX_INPUT characters reach
        error + "\n" + astral * (MAX_INPUT - 20),
        error[:12] + astral * (MAX_INPUT - len(error) + 12) + error[12:],
        astral * (MAX_INPUT - len(error) + 1) + " " + error,
        "Traceback (most recent call last):\n" + '  File "/x/vllm/a.py", line 12, in f\n    f()\n' * 3000 + error,
        # the bounds of what is read inside a paste, in characters beyond the BMP: a tuple's
        # (8,192), a warning's path (1,000, in a window of 1,120), a pydantic msg (4,096), a
        # VLLMValidationError value (1,000)
        "ValueError: ('" + astral * 5000 + " Expected 3 items, got 4', 3)",
        error + " /x/" + astral * 700 + ".py:224: UserWarning: leaked semaphores",
        "ValueError: {'msg': 'Value error, " + astral * 3000 + "Expected 3 items, got 4'}",
        error + " (parameter=n, value=" + astral * 600 + ")",
    ]


def test_the_box_reads_the_part_of_a_long_paste_errcat_match_reads(node, tmp_path):
    """Both read a paste's last MAX_INPUT characters, counted as Python counts them (code points),
    every line of them: the same readings, the same rows; a paste cut inside its error line is
    read from where the cut falls in both."""
    dataset = cd.write(tmp_path)
    pastes = _cut_pastes()
    seen = assert_parity(node, dataset, tmp_path, pastes)
    assert seen["match"] >= 4, seen
