"""The generated site in a real headless browser: Debian's chromium, driven by Selenium.

CI (CI=true) installs chromium and chromium-driver in .ci/run and this test must run there;
elsewhere it is skipped, with the reason, only when they are genuinely absent.
"""

from __future__ import annotations

import json
import os
import shutil

import consumer_data as cd
import pytest
from helpers import jsonl_bytes

from crawler.base.sink import visible
from crawler.consume.site import render_site

# Every test here drives a real browser, whose start alone takes seconds: none is in the quick subset.
pytestmark = pytest.mark.slow

# Debian's chromium here and in this project's CI; GitHub's hosted runners ship Google Chrome.
CHROMIUM = shutil.which("chromium") or shutil.which("google-chrome") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
#: How long a page load, a script or a wait for an element may take: a hang guard, not a speed
#: check (a wait ends as soon as its element is there). 10 s fired on a loaded machine.
WAIT = 180


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path, package in ((CHROMIUM, "chromium"), (DRIVER, "chromium-driver")):
        if not os.path.exists(path):
            return f"{path} is missing (apt-get install {package})"
    return None


def _loads_wholly(driver) -> None:
    """``driver.get`` by way of about:blank, returning once the new page is the one scripts run in.

    On a loaded machine ChromeDriver at times returns from a file:// navigation while the page in
    place is still the old one (seen in CI: a paste typed into it, the list then empty, no error
    logged). Going through about:blank makes every get a load of its own, and the wait holds the
    test until the page asked for is loaded."""
    from selenium.webdriver.support.ui import WebDriverWait

    real = driver.get

    def get(url: str) -> None:
        real("about:blank")
        real(url)
        if not url.startswith("about:"):
            WebDriverWait(driver, WAIT).until(lambda d: d.execute_script("return location.protocol !== 'about:' && document.readyState === 'complete'"))

    driver.get = get


@pytest.fixture(scope="module")
def browser():
    reason = _missing()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser test must run in CI: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ARGS:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(WAIT)
    _loads_wholly(driver)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site")
    dataset = cd.write(tmp)
    (dataset / "foreign.json").write_text(json.dumps(FOREIGN))
    out = tmp / "site"
    render_site(dataset, out)
    records = {r["message"]["text"]: r for r in (json.loads(x) for x in jsonl_bytes(dataset).splitlines())}
    return out, records


FOREIGN = {
    "errors": [
        {
            "name": "torch-cuda-oom",
            "origin": "torch",
            "match": ["CUDA out of memory. Tried to allocate"],
            "example": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB.",
            "urls": [],
            "explanation": "PyTorch's allocator ran out of GPU memory.",
            "check": [],
        }
    ]
}
KV_LOGGED = (
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021] Traceback (most recent call last):\n"
    '(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021]   File "/x/pkg/config/attention.py", line 17, in _check\n'
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021]     raise ValueError(\n"
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021] ValueError: Unknown KV cache group kind 'full' in "
    "backend_per_kind. Valid kinds are: decoder, encoder_only.\n"
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021] Invalid value 3 for this and that\n"
)


def shown_title(record: dict) -> str:
    """A search result's link text (search.js shownTitle): the title, or where the title is cut at
    a field, the message template on one line, its first 120 characters (a paste of the whole
    message holds its first word: the window starts at the beginning)."""
    if not record["title"].endswith("\u2026"):
        return record["title"]
    text = visible(" ".join(record["message"]["text"].split()))
    return text[:120] + ("\u2026" if len(text) > 120 else "")


def _errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.slow
def test_entry_page_renders_every_section(browser, site):
    from selenium.webdriver.common.by import By

    out, records = site
    kv = records[cd.KV["text"]]
    browser.get((out / "errors" / f"{kv['id']}.html").as_uri())
    assert browser.find_element(By.ID, "title").text == kv["title"]
    for section in ["message", "what-it-means", "source", "facts", "solutions", "example-fix", "prevention", "related", "provenance"]:
        assert browser.find_element(By.ID, section).is_displayed(), section
    assert browser.find_element(By.CSS_SELECTOR, "#message pre").text == kv["message"]["text"]
    assert "The <kind> is not one of" in browser.find_element(By.ID, "what-it-means").text
    assert not browser.find_elements(By.ID, "defensive-patterns")  # nothing curated there: left out
    code = browser.find_element(By.CSS_SELECTOR, "#source .highlight")
    assert "raise" in code.text and code.find_elements(By.CSS_SELECTOR, "span.k")  # highlighted keywords
    assert browser.find_element(By.CSS_SELECTOR, "#source a.permalink").get_attribute("href") == kv["location"]["permalink"]
    assert cd.COMMIT in browser.find_element(By.ID, "provenance").text
    json_link = browser.find_element(By.ID, "json-link").get_attribute("href")
    assert json_link == (out.parent / "out" / "acme" / "widgets" / "errors" / f"{kv['id']}.json").as_uri()  # the dataset's own
    related = browser.find_elements(By.CSS_SELECTOR, "#related a")
    assert len(related) == 2
    related[0].click()
    assert browser.find_element(By.ID, "title").text.startswith("Invalid value")
    assert _errors(browser) == []


@pytest.mark.slow
def test_hostile_text_is_shown_not_run(browser, site):
    from selenium.webdriver.common.by import By

    out, records = site
    evil = records[cd.HOSTILE["text"]]
    browser.get((out / "errors" / f"{evil['id']}.html").as_uri())
    # shown as the terminal shows it: its U+2028 as an escape, not a line break only some readers make
    assert browser.find_element(By.CSS_SELECTOR, "#message pre").get_attribute("textContent") == visible(evil["message"]["text"], newlines=True)
    scripts = browser.find_elements(By.TAG_NAME, "script")
    assert len(scripts) == 2  # search index, search box: nothing injected
    assert browser.find_element(By.ID, "title").text == evil["title"]
    assert _errors(browser) == []


@pytest.mark.slow
def test_search_box_finds_a_pasted_message_and_follows_it(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    out, records = site
    kv = records[cd.KV["text"]]
    browser.get((out / "index.html").as_uri())
    assert len(browser.find_elements(By.CSS_SELECTOR, "#groups li")) == len(list((out / "errors").glob("*.html")))
    box = browser.find_element(By.ID, "search")
    box.send_keys("ValueError: Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: sliding.")
    first = WebDriverWait(browser, WAIT).until(ec.presence_of_element_located((By.CSS_SELECTOR, "#results li a")))
    assert first.text == shown_title(kv)
    badge = browser.find_element(By.CSS_SELECTOR, "#results li .badge").text
    assert badge == "ValueError \u00b7 matches"  # the pattern itself matched, in JS
    first.click()
    WebDriverWait(browser, WAIT).until(ec.url_contains(f"{kv['id']}.html"))
    assert browser.find_element(By.ID, "title").text == kv["title"]

    box = browser.find_element(By.ID, "search")  # the box on an entry page searches too
    box.send_keys("json")
    hit = WebDriverWait(browser, WAIT).until(ec.presence_of_element_located((By.CSS_SELECTOR, "#results li a")))
    assert "not json" in hit.text
    assert _errors(browser) == []


@pytest.mark.slow
def test_a_link_with_a_hostile_query_answers(browser, site):
    """index.html?q=... runs the search as the page loads: twelve adjacent fields and 48 spaces make
    the entry's regex backtrack for minutes, hanging the tab for anyone who opened the link."""
    from urllib.parse import quote

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    out, records = site
    adjacent = records[cd.ADJACENT["text"]]
    for message, full in (("ValueError: Bad " + " " * 48 + " end x", False), ("ValueError: Bad " + " " * 48 + " end", True)):
        browser.get((out / "index.html").as_uri() + "?q=" + quote(message))  # the page-load timeout is the hang guard
        WebDriverWait(browser, WAIT).until(ec.presence_of_element_located((By.CSS_SELECTOR, "#results li a")))
        shown = {
            li.find_element(By.TAG_NAME, "a").text: li.find_element(By.CSS_SELECTOR, ".badge").text
            for li in browser.find_elements(By.CSS_SELECTOR, "#results li")
        }
        # not a full match: shown (weak, by its wording, as errcat match's nearest), never as a match
        assert shown[shown_title(adjacent)] == "ValueError \u00b7 " + ("matches" if full else "weak")
    assert _errors(browser) == []


@pytest.mark.slow
def test_the_search_box_places_fragments_as_errcat_match_does(browser, site):
    """errcatGaps (search.js) and fragment_gaps (crawler/consume/match.py) are one function in two languages."""
    import random

    from crawler.consume.match import fragment_gaps

    out, _ = site
    browser.get((out / "index.html").as_uri())
    rng = random.Random(5)
    alphabet = "ab {}\n\u00e9\U0001f600"  # astral: JavaScript counts it twice, so gaps are compared as text
    cases = []
    for _ in range(3000):
        frags = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(0, 5))]
        starts, ends = rng.random() < 0.5, rng.random() < 0.5
        if rng.random() < 0.5:
            message = "".join(f + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3))) for f in frags)
        else:
            message = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        cases.append([frags, starts, ends, message])
    cases.append([["Bad "] + [" "] * 11 + [" end"], True, True, "Bad " + " " * 36 + " end"])
    got = browser.execute_script(
        "return arguments[0].map(function (c) { var g = window.errcatGaps(c[0], c[1], c[2], c[3]);"
        " return g && g.map(function (p) { return c[3].slice(p[0], p[1]); }); });",
        cases,
    )
    want = [None if (g := fragment_gaps(f, s, e, m)) is None else [m[a:b] for a, b in g] for f, s, e, m in cases]
    assert got == want
    assert sum(w is not None for w in want) > 500  # both outcomes well represented


def test_the_search_box_gives_back_what_a_paste_dropped_as_errcat_match_does(browser, site):
    """droppedTail (search.js) and _dropped_tail (crawler/consume/match.py) are one function in two languages."""
    import random

    from crawler.consume.match import _dropped_tail

    out, _ = site
    browser.get((out / "index.html").as_uri())
    rng = random.Random(7)
    fragments = ["".join(rng.choice("a. \n\t") for _ in range(rng.randint(0, 6))) for _ in range(2000)]
    got = browser.execute_script("return arguments[0].map(window.errcatDroppedTail);", fragments)
    want = [_dropped_tail(f) for f in fragments]
    assert got == want
    assert sum("." in w for w in want) > 100 and sum(w == "" for w in want) > 100


def _answered(browser, script, text):
    """``script`` (which types ``text`` into the box and reads the list) run until the list answers.

    A paste with anything in it always gets a line ("No entry found." at the least), so an empty
    list means the typing reached a document that was still being replaced: ChromeDriver at times
    returns from a file:// navigation, on a loaded machine, before the new page is the one scripts
    run in (seen in CI: the page complete, its scripts loaded, no error logged, the list empty).
    Typed again until it answers; a box that never answers still fails after WAIT."""
    from selenium.webdriver.support.ui import WebDriverWait

    if not text.strip():
        return browser.execute_script(script, text)
    return WebDriverWait(browser, WAIT).until(lambda d: d.execute_script(script, text) or None)


TYPED = (
    "var b = document.getElementById('search'); if (!b) return null; b.value = arguments[0]; b.dispatchEvent(new Event('input'));"
    "return document.querySelectorAll('#results li').length;"
)


def _paste(browser, out, text):
    from selenium.webdriver.common.by import By

    browser.get((out / "index.html").as_uri())
    _answered(browser, TYPED, text)
    return [(li.get_attribute("class"), li.text) for li in browser.find_elements(By.CSS_SELECTOR, "#results li")]


@pytest.mark.slow
def test_a_pasted_traceback_puts_its_entry_first(browser, site):
    """The search box reads a paste as errcat match does: vLLM's log prefixes stripped, each
    exception line a candidate, a match only with real literal support, foreign errors named."""
    out, records = site
    shown = _paste(browser, out, KV_LOGGED)
    assert shown[0] == ("", f"{shown_title(records[cd.KV['text']])} ValueError \u00b7 matches")
    shown = _paste(browser, out, "vllm serve: error: argument --x: Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: a.")
    assert shown[0][1].endswith("\u00b7 matches") and shown[0][1].startswith(shown_title(records[cd.KV["text"]]))
    kv = shown_title(records[cd.KV["text"]])
    cut = "ValueError: Unknown KV cache group kind 'full' in backend_per"  # cut inside a literal: the start of the message
    assert _paste(browser, out, cut)[0] == ("", f"{kv} ValueError \u00b7 no full match: the message is its beginning")
    body = (
        """openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': "Unknown KV cache group kind 'x' in """
        """backend_per_kind. Valid kinds are: a.", 'type': 'BadRequestError'}"""
    )
    assert _paste(browser, out, body)[0] == ("", f"{kv} ValueError \u00b7 matches")
    # a server's body with VLLMValidationError's "(parameter=..., value=...)" after the message
    seq = next(r for text, r in records.items() if text.startswith("The model's max seq len"))
    suffixed = (
        '{"error": {"message": "The model\'s max seq len (4096) is larger than the maximum number of tokens that can be '
        "stored in KV cache (2048). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
        'the engine. (parameter=max_model_len, value=4096)", "type": "BadRequestError", "param": "max_model_len", "code": 400}}'
    )
    assert _paste(browser, out, suffixed)[0] == ("", f"{shown_title(seq)} ValueError \u00b7 matches")
    shown = _paste(browser, out, "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. Invalid value 3")
    assert shown[0] == ("foreign", "Not raised by acme/widgets: raised by torch (torch-cuda-oom). PyTorch's allocator ran out of GPU memory.")
    assert not any(text.endswith("matches") for _, text in shown)
    assert _errors(browser) == []


def test_the_search_box_reads_pastes_as_errcat_match_does(browser, site):
    """The site's readings of a paste (search.js) are match.paste_readings's, in order, on every
    paste of the real corpus: message, exception named, where it was read, frame, cut, line."""
    from pathlib import Path

    from crawler.consume.match import paste_readings

    out, _ = site
    browser.get((out / "index.html").as_uri())
    rows = [
        json.loads(line)
        for name in ("pastes.jsonl", "pastes_old.jsonl")
        for line in (Path(__file__).resolve().parents[1] / "data" / name).read_text().splitlines()
    ]
    texts = [r["text"] for r in rows] + [r["current"] for r in rows if "current" in r]
    got = browser.execute_script(
        "return arguments[0].map(function (t) { return window.errcatReadings(t).map(function (r) {"
        " return [r.m, r.x, r.src, r.f ? r.f.slice(0, 3) : null, r.f ? r.f[3] || '' : null, r.t, r.ln]; }); });",
        texts,
    )
    want = [
        [
            [
                r.message,
                r.exception,
                r.source,
                [r.frame.path, r.frame.line, r.frame.function] if r.frame else None,
                r.frame.code if r.frame else None,  # the frame's code line, read alike too
                r.truncated,
                r.line,
            ]
            for r in paste_readings(text)
        ]
        for text in texts
    ]
    assert got == want
    assert sum(1 for readings in want for r in readings if r[3]) > 20 and sum(1 for readings in want for r in readings if r[4]) > 10  # frames, read alike


def _assert_both_match_first(browser, cli, data, cases, strength="match"):
    """errcat match and the box (on the page open) both answer each paste with the entry
    expected of it first, as a match (or both as a weak candidate)."""
    for paste, want in cases:
        answer = json.loads(cli("match", "--data", data, "--json", paste).stdout)
        top = (answer["matches"] or answer["weak"])[0]
        href, text = _answered(browser, FIRST, paste)
        assert top["id"] == href.rsplit("/", 1)[-1].removesuffix(".html") == want, (paste, top, text)
        assert top.get("strength", "weak") == strength and f"\u00b7 {strength}" in text, (paste, text)


@pytest.mark.slow
def test_the_search_box_ranks_ties_as_errcat_match_does(browser, tmp_path, cli):
    """Entries one paste matches equally well by wording come in errcat match's order in the box
    too: the one raised in the traceback frame's function first, a logged warning for a log line
    at WARNING, a raise for a bare message or one naming an exception, a Python raise before the
    Rust frontend's repeat of its message."""
    data = cd.write_ranking(tmp_path)
    out = tmp_path / "site"
    render_site(data, out)
    browser.get((out / "index.html").as_uri())
    by = {(r["exception"], r["sites"][0]["qualname"]): r["id"] for r in json.loads((data / "search.json").read_text())["entries"]}
    frame = (
        'Traceback (most recent call last):\n  File "/venv/lib/python3.12/site-packages/pkg/lora/{}", line 99, in {}\n'
        "    self.load(name)\nRuntimeError: Loading adapter sql-lora failed"
    )
    cases = [
        (frame.format("manager.py", "_load_adapter"), by["ValueError", "WorkerManager._load_adapter"]),
        (frame.format("loader.py", "load_weights"), by["TypeError", "load_weights"]),
        ("(APIServer pid=3084) WARNING 07-14 08:38:33 [envs.py:2041] Unknown environment variable detected: FOO", by["WARNING", "check_env"]),
        ("Unknown environment variable detected: FOO", by["ValueError", "strict_env"]),
        ("ValueError: Unknown environment variable detected: FOO", by["ValueError", "strict_env"]),
    ]
    _assert_both_match_first(browser, cli, data, cases)
    # a JSON body says nothing of the server: the Python server's entry before the Rust
    # frontend's repeat of it, when both match, and when the repeat is only worded more like it
    body = "openai.BadRequestError: Error code: 400 - {{'object': 'error', 'message': '{}', 'type': 'BadRequestError'}}"
    _assert_both_match_first(browser, cli, data, [(body.format("Too many bad words: 120. The max number is 100."), by["ValueError", "verify_bad_words"])])
    _assert_both_match_first(
        browser, cli, data, [(body.format("At most 1 image(s) may be provided in one request."), by["ValueError", "validate_num_items"])], strength="weak"
    )
    assert _errors(browser) == []


@pytest.mark.slow
def test_the_search_box_names_the_exception_and_the_frame_as_errcat_match_does(browser, site, cli):
    """Of two entries of one wording the one raising the exception the paste names comes first,
    and an entry with no literal text (``raise RuntimeError(msg)``) matches where the traceback's
    frame is in its function, as in errcat match."""
    out, records = site
    data = out.parent / "out" / "acme" / "widgets"
    browser.get((out / "index.html").as_uri())
    every = [json.loads(x) for x in jsonl_bytes(data).splitlines()]  # records keeps one entry per wording
    exceptions = {r["exception"]["name"]: r["id"] for r in every if r["message"]["text"] == "Expected {n} items, got {len(items)}"}
    store = records["{msg}"]["id"]
    cases = [
        ("TypeError: Expected 3 items, got 4", exceptions["TypeError"]),
        ("ValueError: Expected 3 items, got 4", exceptions["ValueError"]),
        ('Traceback (most recent call last):\n  File "/srv/app/pkg/io.py", line 12, in store\n    self.flush()\nRuntimeError: disk full', store),
    ]
    _assert_both_match_first(browser, cli, data, cases)


def test_site_codes_are_the_same_in_python_and_in_the_box(browser, site):
    """The box finds a frame's function by site_search.code, computed again in search.js."""
    from crawler.consume.site_search import code

    out, _ = site
    browser.get((out / "index.html").as_uri())
    texts = ["", "load", "vllm/lora/worker_manager.py\0_load_adapter", "pkg/\u00e9t\u00e9.py\0f\u00fcr", "\U0001f600"]
    assert browser.execute_script("return arguments[0].map(window.errcatSiteCode);", texts) == [code(t) for t in texts]
    assert len({code(t) for t in texts}) == len(texts)


# --------------------------------------------------------------------------- as a person uses it

#: axe-core from the npm registry, pinned: the tarball must have this sha512 (npm's "integrity").
AXE_VERSION = "4.14.1"
AXE_SHA512 = "FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="


def _axe_source() -> str:
    """axe.min.js of the pinned axe-core, fetched once with ``npm pack`` into the user cache and
    checked against its hash before it is run in the browser."""
    import base64
    import hashlib
    import subprocess
    import tarfile

    import platformdirs

    cache = platformdirs.user_cache_path("errcat-tests") / "npm"
    tarball = cache / f"axe-core-{AXE_VERSION}.tgz"
    if not tarball.is_file():
        npm = shutil.which("npm")
        reason = "npm is missing" if npm is None else None
        if npm is not None:
            import tempfile

            cache.mkdir(parents=True, exist_ok=True)
            # packed into a folder of its own, then moved into place: another run packing at the
            # same time (pytest-xdist, a second checkout) never reads a half-written tarball
            with tempfile.TemporaryDirectory(dir=cache) as part:
                done = subprocess.run(
                    [npm, "pack", f"axe-core@{AXE_VERSION}", "--pack-destination", part], capture_output=True, text=True, timeout=600, cwd=part
                )
                packed = os.path.join(part, tarball.name)
                if done.returncode == 0 and os.path.isfile(packed):
                    os.replace(packed, tarball)
            reason = None if done.returncode == 0 and tarball.is_file() else f"npm pack failed: {done.stderr.strip()[-300:]}"
        if reason:
            if os.environ.get("CI") == "true":
                pytest.fail(f"the accessibility check must run in CI: {reason}")
            pytest.skip(reason)
    data = tarball.read_bytes()
    if base64.b64encode(hashlib.sha512(data).digest()).decode() != AXE_SHA512:
        tarball.unlink()
        pytest.fail(f"{tarball} does not have the pinned sha512 of axe-core {AXE_VERSION}")
    import io

    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        member = tar.extractfile("package/axe.min.js")
        assert member is not None
        return member.read().decode("utf-8")


@pytest.fixture(scope="module")
def rich_site(tmp_path_factory):
    """The site of a dataset with curated Markdown, history (the index's chart) and a changelog."""
    tmp = tmp_path_factory.mktemp("rich")
    dataset, records = cd.write_rich(tmp)
    render_site(dataset, tmp / "site", changelog=cd.write_changelog(tmp))
    return tmp / "site", records


def _no_horizontal_scroll(browser) -> bool:
    return browser.execute_script("var d = document.documentElement; return d.scrollWidth <= d.clientWidth;")


def _viewport(browser, width: int) -> None:
    browser.set_window_size(width, 900)
    inner = browser.execute_script("return window.innerWidth")
    browser.set_window_size(2 * width - inner, 900)  # the window's frame aside, the page is `width` wide
    assert browser.execute_script("return window.innerWidth") == width


@pytest.mark.slow
def test_a_pasted_traceback_found_and_opened_with_the_keyboard_only(browser, rich_site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    out, records = rich_site
    kv = records[cd.KV["text"]]
    _viewport(browser, 1280)
    browser.get((out / "index.html").as_uri())
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    for _ in range(3):  # the home link, then the search box
        if browser.switch_to.active_element.get_attribute("id") == "search":
            break
        browser.switch_to.active_element.send_keys(Keys.TAB)
    box = browser.switch_to.active_element
    assert box.get_attribute("id") == "search"
    box.send_keys(KV_LOGGED)
    WebDriverWait(browser, WAIT).until(ec.presence_of_element_located((By.CSS_SELECTOR, "#results li a")))
    box.send_keys(Keys.ARROW_DOWN)
    first = browser.switch_to.active_element
    assert first.tag_name == "a" and first.text == shown_title(kv)
    first.send_keys(Keys.ARROW_DOWN)
    assert browser.switch_to.active_element.text != shown_title(kv)
    browser.switch_to.active_element.send_keys(Keys.ARROW_UP)
    assert browser.switch_to.active_element.text == shown_title(kv)
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    assert browser.switch_to.active_element.get_attribute("id") == "search"
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    WebDriverWait(browser, WAIT).until(ec.url_contains(f"{kv['id']}.html"))
    assert browser.find_element(By.ID, "title").text == kv["title"]
    assert "<code>kind</code>" in browser.find_element(By.ID, "what-it-means").get_attribute("innerHTML")
    assert _errors(browser) == []


def _pages(out):
    return [out / "index.html", *sorted((out / "errors").glob("*.html"))]


@pytest.mark.slow
@pytest.mark.parametrize("width", [375, 1280])
def test_no_page_scrolls_sideways(browser, rich_site, width):
    from selenium.webdriver.common.by import By

    out, _ = rich_site
    _viewport(browser, width)
    for page in _pages(out):
        browser.get(page.as_uri())
        browser.execute_script("document.querySelectorAll('details').forEach(function (d) { d.open = true; });")
        assert _no_horizontal_scroll(browser), (page.name, width)
    browser.get((out / "index.html").as_uri() + "?q=" + "ValueError%3A%20Unknown%20KV%20cache%20group%20kind")
    assert browser.find_elements(By.CSS_SELECTOR, "#results li a")
    assert _no_horizontal_scroll(browser), ("results", width)
    assert _errors(browser) == []


@pytest.mark.slow
def test_the_index_filters_groups_and_sorts(browser, rich_site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    out, records = rich_site
    _viewport(browser, 1280)
    browser.get((out / "index.html").as_uri())
    total = len(records["_ordered"])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#groups li")) == total
    browser.find_element(By.CSS_SELECTOR, "input[name=show][value=explained]").click()
    shown = browser.find_elements(By.CSS_SELECTOR, "#groups li")
    assert [li.get_attribute("data-s") for li in shown] == ["explained"]
    browser.find_element(By.CSS_SELECTOR, "input[name=show][value=all]").click()
    Select(browser.find_element(By.ID, "group-by")).select_by_value("x")
    Select(browser.find_element(By.ID, "sort-by")).select_by_value("count")
    keys = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "#groups summary code")]
    counts = [int(c.get_attribute("textContent")) for c in browser.find_elements(By.CSS_SELECTOR, "#groups summary .count")]
    assert "ValueError" in keys and counts == sorted(counts, reverse=True) and sum(counts) == total
    assert _errors(browser) == []


def test_the_index_filters_by_the_release_that_raised_an_entry(browser, rich_site):
    """Over a history the index lists each covered release; picking one shows the entries it
    raised (lineage.live_in), the retired one only in the releases before its removal."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from crawler.consume.lineage import live_in

    out, records = rich_site
    browser.get((out / "index.html").as_uri())
    for release in ("v0.9.0", "v0.10.0", "v0.11.0"):
        Select(browser.find_element(By.ID, "release")).select_by_visible_text(release)
        shown = {
            li.find_element(By.TAG_NAME, "a").get_attribute("href").rsplit("/", 1)[-1].removesuffix(".html")
            for li in browser.find_elements(By.CSS_SELECTOR, "#groups li")
        }
        assert shown == {r["id"] for r in records["_ordered"] if live_in(r["history"], release)}, release
    Select(browser.find_element(By.ID, "release")).select_by_value("")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#groups li")) == len(records["_ordered"])
    assert _errors(browser) == []


def test_the_front_page_puts_the_search_box_first_and_its_counts_lead_into_the_list(browser, rich_site):
    """A count of the front page (by kind, who must act, area) is a link: followed, the list is
    grouped by it and that group is open, holding as many entries as the count says."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    out, records = rich_site
    _viewport(browser, 1280)
    browser.get((out / "index.html").as_uri())
    box, title = browser.find_element(By.ID, "search"), browser.find_element(By.TAG_NAME, "h1")
    assert box.location["y"] < title.location["y"] and box.is_displayed()
    live = [r for r in records["_ordered"] if not r["history"].get("retired")]
    for facet in ("by-k", "by-w", "by-a"):
        counts = [int(c.text.replace(",", "")) for c in browser.find_elements(By.CSS_SELECTOR, f"#{facet} .count")]
        assert counts and (sum(counts) == len(live) or facet == "by-a"), facet
    link = browser.find_element(By.CSS_SELECTOR, "#by-k li a")
    want = int(browser.find_element(By.CSS_SELECTOR, "#by-k li .count").text)
    link.click()
    opened = WebDriverWait(browser, WAIT).until(ec.presence_of_element_located((By.CSS_SELECTOR, "#groups details[open]")))
    kind = opened.find_element(By.CSS_SELECTOR, "summary code").text
    assert browser.find_element(By.ID, "group-by").get_attribute("value") == "k"
    assert {li.get_attribute("data-k") for li in opened.find_elements(By.CSS_SELECTOR, "li")} == {kind}
    assert len([li for li in opened.find_elements(By.CSS_SELECTOR, "li") if not li.get_attribute("data-r")]) == want
    assert _errors(browser) == []


def test_search_results_are_labelled_and_stop_at_what_matches(browser, site):
    """A paste that matches shows its matches and nothing worded alike below them, as errcat
    match does; words that are no paste show the entries sharing them, labelled so, the words marked."""
    out, records = site
    kv = records[cd.KV["text"]]
    shown = _paste(browser, out, "ValueError: Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: sliding.")
    assert shown == [("", f"{shown_title(kv)} ValueError \u00b7 matches")]
    words = _paste(browser, out, "backend kinds")  # worded alike (weak) first, then the entries sharing a word
    labels = [text.rsplit(" \u00b7 ", 1)[-1] for _, text in words]
    assert "shares words" in labels and set(labels) <= {"weak", "shares words"}, words
    assert labels == sorted(labels, key=["weak", "shares words"].index)
    marked = browser.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#results li a mark'), function (m) { return m.textContent.toLowerCase(); });"
    )
    assert marked and set(marked) <= {"backend", "kinds"}, marked
    assert _errors(browser) == []


@pytest.mark.slow
def test_axe_finds_no_serious_accessibility_violations(browser, rich_site):
    """axe-core (pinned above) run in the same browser over the index (search results shown,
    groups open), an entry with curated text and a retired one, at phone and desktop width."""
    out, records = rich_site
    axe = _axe_source()
    kv, retired = records[cd.KV["text"]], records["_ordered"][-1]
    seen = []
    for width in (375, 1280):
        _viewport(browser, width)
        for url in (
            (out / "index.html").as_uri() + "?q=ValueError%3A%20Unknown%20KV%20cache",
            (out / "errors" / f"{kv['id']}.html").as_uri(),
            (out / "errors" / f"{retired['id']}.html").as_uri(),
        ):
            browser.get(url)
            browser.execute_script("document.querySelectorAll('details').forEach(function (d) { d.open = true; });")
            assert _errors(browser) == [], url
            browser.execute_script(axe)
            browser.set_script_timeout(WAIT)
            result = browser.execute_async_script(
                "var done = arguments[arguments.length - 1];"
                "axe.run(document, {resultTypes: ['violations']}).then(function (r) { done(r.violations.map(function (v) {"
                " return [v.id, v.impact, v.nodes.length, v.nodes.slice(0, 2).map(function (n) { return n.html; })]; })); },"
                " function (e) { done([['axe failed', String(e), 0, []]]); });"
            )
            seen.append(len(result))
            serious = [v for v in result if v[1] in ("serious", "critical") or v[0] == "axe failed"]
            assert serious == [], (url, width, serious)
            browser.get_log("browser")  # axe's own reads of the stylesheet, which the page's CSP refuses
    assert sum(seen) < 30  # the check ran and answered (its minor findings counted, not asserted)


ASSEMBLED = """
def check(items, limit):
    errors = []
    for item in items:
        if item < 0:
            errors.append(f"item {item} is negative")
        if item > limit:
            errors.append(f"item {item} exceeds the limit of {limit}")
    raise ValueError("\\\\n".join(errors))
"""
FIRST = (
    "var b = document.getElementById('search'); b.value = arguments[0]; b.dispatchEvent(new Event('input'));"
    "var l = document.querySelector('#results li'); var a = l && l.querySelector('a');"
    "return l ? [a ? a.getAttribute('href') : '', l.textContent] : null;"
)


def _crawled_site(browser, fixture_repo, cli, tmp_path, package: str, files: dict[str, str], slug: str):
    """The package's files crawled as the upstream ``slug``, its site rendered and open; the dataset."""
    fixture_repo.commit({f"{package}/__init__.py": "", **{f"{package}/{k}": v for k, v in files.items()}}, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(f'default = "u"\n[upstreams.u]\nurl = "https://github.com/{slug}"\ninclude = ["{package}/**/*.py"]\n')
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--out", tmp_path / "out").exit_code == 0
    data = tmp_path / "out" / slug
    assert cli("render", "--data", data, "--out", tmp_path / "site").exit_code == 0
    browser.get((tmp_path / "site" / "index.html").as_uri())
    return data


@pytest.mark.slow
def test_the_search_box_matches_an_assembled_messages_pieces(browser, fixture_repo, cli, tmp_path):
    """A message joined from pieces ("\\n".join(errors)) has no literal text of its own: the box
    matches its pieces (SearchEntry.alternatives), each anywhere in the message, as errcat match does."""
    data = _crawled_site(browser, fixture_repo, cli, tmp_path, "srv", {"check.py": ASSEMBLED}, "acme/server")
    for paste in (
        "ValueError: item 7 exceeds the limit of 5\nitem -1 is negative",
        'Traceback (most recent call last):\n  File "/srv/app.py", line 3, in <module>\n    check([9], 5)\nValueError: item 9 exceeds the limit of 5',
    ):
        done = cli("match", "--data", data, "--json", paste)
        answer = json.loads(done.stdout)
        (entry,) = [m["id"] for m in answer["matches"]]
        href, text = _answered(browser, FIRST, paste)
        assert href.endswith(f"errors/{entry}.html") and text.endswith("ValueError \u00b7 matches"), (paste, text)
    # a message that only shares the pieces' words is no match
    shown = _answered(browser, FIRST, "ValueError: the limit is negative")
    assert shown is None or "matches" not in shown[1]
    assert _errors(browser) == []


ROWS = (
    "var b = document.getElementById('search'); b.value = arguments[0]; b.dispatchEvent(new Event('input'));"
    "return Array.prototype.map.call(document.querySelectorAll('#results li'), function (l) {"
    " var a = l.querySelector('a'), s = l.querySelector('.badge');"
    " return [a ? a.getAttribute('href') : '', s ? s.textContent : '', a ? a.textContent : l.textContent]; });"
)


def test_the_search_box_says_no_full_match_for_a_beginning_as_errcat_match_does(browser, site, cli):
    """A paste that is only the start of an entry's message ("... in backend_per", a message cut
    short) is a full match nowhere: errcat match says "no full match; entries this message is the
    beginning of", and the box's badge says so for each such match, not "matches"."""
    out, _ = site
    data = out.parent / "out" / "acme" / "widgets"
    browser.get((out / "index.html").as_uri())
    pastes = [
        "ValueError: Unknown KV cache group kind 'full' in backend_per",
        "The model's max seq len (4096) is larger than the maximum number of tokens",
        "UnsupportedModelError: Model 'opt' is not supported by",
        "ValueError: Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: a.",
        "TypeError: Expected 3 items, got 4",
    ]
    hows = set()
    for paste in pastes:
        answer = json.loads(cli("match", "--data", data, "--json", paste).stdout)
        want = [
            (
                m["id"],
                m["exception"]
                + (" \u00b7 matches" if m["match"] == "full" else " \u00b7 no full match: the message is its beginning")
                + (f" \u00b7 {m['role']}" if m.get("role") else ""),
            )
            for m in answer["matches"]
        ]
        hows |= {m["match"] for m in answer["matches"]}
        rows = _answered(browser, ROWS, paste)
        got = [(href.rsplit("/", 1)[-1].removesuffix(".html"), badge) for href, badge, _ in rows[: len(want)]]
        assert want and got == want, paste
        assert not any("\u00b7 matches" in badge for _, badge, _ in rows[len(want) :]), paste  # no more matches than errcat match's
    assert hows == {"full", "prefix"}  # both answers held equal
    assert _errors(browser) == []


def test_the_search_box_shows_controls_as_the_pages_do(browser, site):
    """errcatVisible (search.js) and sink.visible (crawler/base/sink.py) are one function in two languages."""
    import random

    out, _ = site
    browser.get((out / "index.html").as_uri())
    rng = random.Random(11)
    alphabet = [
        "a",
        " ",
        "\t",
        "\n",
        "\r",
        "\x00",
        "\x1b",
        "\x7f",
        "\x85",
        "\x9b",
        "\xa0",
        "\u061c",
        "\u200d",
        "\u200e",
        "\u200f",
        "\u202a",
        "\u202e",
        "\u202f",
        "\u2065",
        "\u2066",
        "\u2069",
        "\u206a",
        "\u2028",
        "\u2029",
        "\u00e9",
        "\U0001f600",
        "\\",
        "\ufff0",
    ]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(3000)] + ["\ufff1a\ufff1"]
    # WebDriver's JSON cannot carry a lone surrogate: U+FFF0 stands for a low one, U+FFF1 for a high
    # one followed by no low one (a pair would be one character in JavaScript, two in Python)
    got = browser.execute_script(
        "return arguments[0].map(function (t) { return window.errcatVisible(t.replace(/\\ufff0/g, '\\udc00').replace(/\\ufff1/g, '\\ud800')); });", texts
    )
    assert got == [visible(t.replace("\ufff0", "\udc00").replace("\ufff1", "\ud800")) for t in texts]
    assert got[-1] == "\\ud800a\\ud800"
    assert sum("\\u202e" in w for w in got) > 100 and sum(w == t for w, t in zip(got, texts, strict=True)) > 100


@pytest.mark.slow
def test_bidi_overrides_in_a_template_do_not_reorder_the_search_results(browser, cli, fixture_repo, tmp_path):
    """Trojan Source in the results: a right-to-left override in a raised message, shown raw in the
    list, reversed everything after it on the line (the title and the badge); the box shows it as
    the escape the entry's page shows."""
    from selenium.webdriver.common.by import By
    from test_site_controls import HIDDEN, SOURCE

    fixture_repo.commit({"pkg/a.py": SOURCE}, tag="v1")
    out = tmp_path / "out"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out).exit_code == 0
    site = tmp_path / "site"
    assert cli("render", "--data", out / "acme" / "widgets", "--out", site).exit_code == 0
    browser.get((site / "index.html").as_uri())
    for query in ("user required", "ValueError: user \u202egnissim\u202c \x1b]0;owned\x07 is required"):
        rows = _answered(browser, ROWS, query)
        assert rows, query
        shown = "".join(title + badge for _, badge, title in rows) + browser.find_element(By.ID, "results").text
        assert not HIDDEN.search(shown), (query, shown)
        assert "user \\u202egnissim\\u202c \\x1b]0;owned\\x07 is required" in rows[0][2], rows[0]
    assert _errors(browser) == []


@pytest.mark.slow
def test_the_search_box_calls_a_log_line_before_a_traceback_an_umbrella_as_errcat_match_does(browser, fixture_repo, cli, tmp_path):
    """logger.exception's line, then the traceback it prints: the line is an umbrella in the box
    too, and what the box offers next is errcat match's nearest entry, not the umbrella again."""
    from test_match_cli import ENGINE, LOGGED_THEN_TRACEBACK

    data = _crawled_site(browser, fixture_repo, cli, tmp_path, "pkg", {"engine.py": ENGINE}, "acme/widgets")
    single = (
        "(EngineCore pid=209) ERROR 05-18 08:21:14 [core.py:1140] RuntimeError: Widget worker failed with error 'x', "
        "please check the stack trace above for the root cause"
    )
    for paste in (LOGGED_THEN_TRACEBACK, single):
        answer = json.loads(cli("match", "--data", data, "--json", paste).stdout)
        want = [m["id"] for m in answer["matches"]] + [w["id"] for w in answer["weak"]][:1]
        rows = _answered(browser, ROWS, paste)
        got = [href.rsplit("/", 1)[-1].removesuffix(".html") for href, _, _ in rows[: len(want)]]
        assert got == want and len(set(got)) == len(got), paste
        assert rows[0][1].endswith("\u00b7 umbrella"), rows[0]
    assert _errors(browser) == []


def test_the_search_box_reads_a_key_errors_repr_as_errcat_match_does(browser, site):
    """Python prints a KeyError's message as its repr; search.js's unrepr reads it as paste.unrepr does."""
    from crawler.consume.match import paste_readings

    out, _ = site
    browser.get((out / "index.html").as_uri())
    lines = [
        "KeyError: 'plain'",
        'KeyError: "it\'s"',
        "KeyError: 'a\\'b\\\\n\\x1b\\u2066\\U0001f600'",
        "KeyError: 'cut short",
        "KeyError: 'a' and 'b'",
        "KeyError: '\\ud800'",
        "KeyError: 'bad \\q escape'",
        "ValueError: 'kept'",
        "Traceback (most recent call last):\n  File \"x.py\", line 3, in f\nKeyError: 'no adapter named \\'x\\''",
    ]
    got = browser.execute_script("return arguments[0].map(function (t) { return window.errcatReadings(t).map(function (r) { return [r.m, r.x]; }); });", lines)
    want = [[[r.message, r.exception] for r in paste_readings(text)] for text in lines]
    assert got == want
    assert ["plain", "KeyError"] in want[0] and ["no adapter named 'x'", "KeyError"] in want[-1]


@pytest.mark.slow
def test_an_entry_page_reads_the_code_as_show_does(browser, fixture_repo, cli, tmp_path):
    """A message field wrapped over lines is one line under "Message"; a ``while`` test is listed
    once; a raise the function always catches is said never to reach a caller (derived)."""
    from selenium.webdriver.common.by import By
    from test_page_code_reading import CAUGHT, ONE_LINE, crawl

    data, ids = crawl(fixture_repo, cli, tmp_path)
    assert cli("render", "--data", data, "--out", tmp_path / "site").exit_code == 0

    def open_page(name: str) -> None:
        browser.get((tmp_path / "site" / "errors" / f"{ids[name]}.html").as_uri())

    open_page("kind")
    assert browser.find_element(By.CSS_SELECTOR, "#message pre").text == ONE_LINE
    open_page("queue")
    assert [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#facts li")] == ["if queue.broken", "in while queue.pending"]
    open_page("device")
    assert browser.find_element(By.CSS_SELECTOR, "#facts p.caught").text == CAUGHT.replace("`", "")
    assert browser.find_element(By.CSS_SELECTOR, "#facts p.caught code").text == "except Exception as exc"
    assert "(derived from the code)" in browser.find_element(By.CSS_SELECTOR, "#facts h2").text
    for name in ("empty", "blank", "long"):
        open_page(name)
        assert not browser.find_elements(By.CSS_SELECTOR, "#facts p.caught"), name
    assert _errors(browser) == []


@pytest.mark.slow
def test_the_search_box_reads_a_pydantic_line_and_an_older_full_stop_as_errcat_match_does(browser, fixture_repo, cli, tmp_path):
    """A pydantic error's last line alone, and an older wording that stopped where today's message
    goes on: a match in the box as in errcat match; a full stop elsewhere is no match in either."""
    from test_match_pasted_forms import CONFIG

    data = _crawled_site(browser, fixture_repo, cli, tmp_path, "pkg", {"config.py": CONFIG}, "acme/widgets")
    for paste, said in (
        ("Value error, Widget count must be positive for every pool of this engine.", "ValueError \u00b7 matches"),
        (
            "  Assertion failed, Widget pool must hold at least one worker before it starts.\n"
            "    For further information visit https://errors.pydantic.dev/2.12/v/assertion_error",
            "AssertionError \u00b7 matches",
        ),
        (
            "ValueError: No room left for the widget cache. Try increasing `--pool-size` when starting the engine.",
            "ValueError \u00b7 no full match: the message is its beginning",
        ),
    ):
        (entry,) = [m["id"] for m in json.loads(cli("match", "--data", data, "--json", paste).stdout)["matches"]]
        href, text = _answered(browser, FIRST, paste)
        assert href.endswith(f"errors/{entry}.html") and text.endswith(said), (paste, text)
    for paste in (
        "ValueError: No room left for the widget cache. Try increasing `--pool-size` when starting the eng.",
        "ValueError: Widget failed to start with the name.",
    ):
        assert json.loads(cli("match", "--data", data, "--json", paste).stdout)["matches"] == []
        shown = _answered(browser, FIRST, paste)
        assert shown is None or not ("matches" in shown[1] or "its beginning" in shown[1]), (paste, shown)
    assert _errors(browser) == []


@pytest.mark.slow
def test_the_search_box_reads_the_forms_people_paste_as_errcat_match_does(browser, fixture_repo, cli, tmp_path):
    """Issue #31's pasted forms in the box: Markdown, typographic quotes, another letter case, a
    traceback's last frame, a bare raise, a tuple of arguments, a product's prefixes; each the
    match errcat match gives (the same entries, each "matches"), read into the same readings; a
    frame elsewhere and a foreign error claim nothing in either."""
    import test_match_pasted_forms as forms

    from crawler.consume.match import paste_readings

    data = _crawled_site(browser, fixture_repo, cli, tmp_path, "vllm", {"config/__init__.py": "", "config/model.py": forms.MODEL}, "vllm-project/vllm")
    matched = [
        f"**ValueError: {forms.MESSAGE}**",
        "```python\n" + forms.BARE_TB + "```",
        "> " + "\n> ".join(forms.BARE_TB.rstrip().splitlines()),
        forms.BARE_TB,
        forms.BARE_TB.removeprefix("Traceback (most recent call last):\n"),
        forms.BARE_TB.replace("raise AssertionError", "assert workers > 0").replace(f"line {forms.BARE_LINE},", f"line {forms.ASSERT_LINE},"),
        f"> > {forms.MESSAGE}",
        "> " + "\n> ".join(forms.FIELDS_TB.rstrip().splitlines()),
        f"`{forms.MESSAGE}`",
        f"### {forms.MESSAGE}",
        forms.MESSAGE.replace("'", "\u2019").replace(" - ", " \u2013 ").replace(" ", "\u00a0", 2),
        "ValueError: (\u2018Unknown KV cache group kind\u2019, \u2018full\u2019)",
        "valueerror: unknown kv cache group kind",
        forms.MESSAGE.upper(),
        forms.FIELDS_TB,
        'ValueError: ("Unknown KV cache group kind", 3)',
        "ray::RayWorkerWrapper.execute_method() (pid=1234, ip=10.0.0.1, actor_id=9f3b) " + forms.MESSAGE,
        "INFO:     127.0.0.1:5000 - " + forms.MESSAGE,
        "worker-3 | 2024-05-01T10:00:00.123Z (pid=42) " + forms.MESSAGE,
    ]
    got = browser.execute_script(
        "return arguments[0].map(function (t) { return window.errcatReadings(t).map(function (r) { return [r.m, r.x, r.f ? r.f[1] : null]; }); });", matched
    )
    assert got == [[[r.message, r.exception, r.frame.line if r.frame else None] for r in paste_readings(t)] for t in matched]
    for paste in matched:
        answer = json.loads(cli("match", "--data", data, "--json", paste).stdout)
        want = [(m["id"], "matches") for m in answer["matches"]]
        rows = _answered(browser, ROWS, paste)
        shown = [(href.rsplit("/", 1)[-1].removesuffix(".html"), badge.split(" \u00b7 ")[-1]) for href, badge, _ in rows]
        assert len(want) == 1 and shown[:1] == want and not any(b == "matches" for _, b in shown[1:]), (paste, shown, want)
    claims_nothing = [
        forms.FIELDS_TB.replace("ValueError: transcription", "TypeError: transcription"),
        "Traceback (most recent call last):\n"
        + forms._frame(forms.HELPER_LINE, "helper", "return self.runner")
        + "ValueError: transcription: the model supports only the transcription task\n",
        "runtimeerror: cuda error: an illegal memory access was encountered",
        "valueerror: unknown kv cache group kind full",
    ]
    for paste in claims_nothing:
        assert json.loads(cli("match", "--data", data, "--json", paste).stdout)["matches"] == [], paste
        rows = _answered(browser, ROWS, paste)
        assert not any(badge.endswith("\u00b7 matches") for _, badge, _ in rows), (paste, rows)
    # the hostile shapes errcat match is timed on, read by the box whole (it reads the last 256 Ki characters, as errcat match)
    hostile = forms.test_hostile_pastes_are_read_in_linear_time.pytestmark[0].args[1]
    took = browser.execute_script(
        "var t0 = performance.now(); arguments[0].forEach(function (t) { window.errcatReadings(t); }); return performance.now() - t0;",
        hostile,
    )
    assert took < 30000, took  # a hang guard on a loaded machine, not a speed check
    assert _errors(browser) == []


@pytest.mark.slow
def test_the_search_box_finds_an_old_wording_as_errcat_match_does(browser, fixture_repo, cli, tmp_path):
    """Over a history catalogue the box answers a paste in an older release's wording with the
    retired entry that raised it, as a match, as errcat match does; and that page says which
    releases raised it and what raises the error today."""
    from test_match_lineage import ARGS, V1, V2, V11

    fixture_repo.commit(V1, tag="v1.0")
    fixture_repo.commit(V11, tag="v1.1")
    fixture_repo.commit(V2, tag="v2.0")
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--out", tmp_path / "out", "v1.0", "v1.1", "v2.0").exit_code == 0
    data = tmp_path / "out" / "acme" / "widgets"
    assert cli("render", "--data", data, "--out", tmp_path / "site").exit_code == 0
    browser.get((tmp_path / "site" / "index.html").as_uri())
    for paste in (
        "ValueError: widget size must be positive, got -3",
        "ValueError: widget size must be strictly positive, got -1",
        "OverflowError: widget size is far too large for the frame",
    ):
        answer = json.loads(cli("match", "--data", data, "--json", paste).stdout)
        top = answer["matches"][0]
        assert top["lineage"]["retired"], paste
        href, text = _answered(browser, FIRST, paste)
        assert href.endswith(f"errors/{top['id']}.html") and "\u00b7 matches" in text, (paste, text)
        assert "\u00b7 retired, raised in " + top["lineage"]["raised_in"] in text, text
        if top["lineage"]["today"]:  # the row links what raises the error today, as errcat match names it
            today = browser.find_element("css selector", "#results li a.today").get_attribute("href")
            assert today.endswith(f"errors/{top['lineage']['today']}.html"), today
        browser.get((tmp_path / "site" / "errors" / f"{top['id']}.html").as_uri())
        history = browser.find_element("id", "history").text
        assert "Raised in" in history and top["lineage"]["raised_in"] in history, history
        browser.get((tmp_path / "site" / "index.html").as_uri())
    assert _errors(browser) == []
