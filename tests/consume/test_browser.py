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

from crawler.consume.site import render_site

# Debian's chromium here and in this project's CI; GitHub's hosted runners ship Google Chrome.
CHROMIUM = shutil.which("chromium") or shutil.which("google-chrome") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path, package in ((CHROMIUM, "chromium"), (DRIVER, "chromium-driver")):
        if not os.path.exists(path):
            return f"{path} is missing (apt-get install {package})"
    return None


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
    driver.set_page_load_timeout(30)
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


FOREIGN = {"errors": [{"name": "torch-cuda-oom", "origin": "torch", "match": ["CUDA out of memory. Tried to allocate"],
                       "example": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB.", "urls": [],
                       "explanation": "PyTorch's allocator ran out of GPU memory.", "check": []}]}
KV_LOGGED = (
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021] Traceback (most recent call last):\n"
    '(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021]   File "/x/pkg/config/attention.py", line 17, in _check\n'
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021]     raise ValueError(\n"
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021] ValueError: Unknown KV cache group kind 'full' in "
    "backend_per_kind. Valid kinds are: decoder, encoder_only.\n"
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021] Invalid value 3 for this and that\n"
)


def _errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_entry_page_renders_every_section(browser, site):
    from selenium.webdriver.common.by import By

    out, records = site
    kv = records[cd.KV["text"]]
    browser.get((out / "errors" / f"{kv['id']}.html").as_uri())
    assert browser.find_element(By.ID, "title").text == kv["title"]
    for section in ["message", "what-it-means", "source", "facts", "solutions", "example-fix", "defensive-patterns",
                    "prevention", "when-it-happens", "related", "provenance"]:
        assert browser.find_element(By.ID, section).is_displayed(), section
    assert browser.find_element(By.CSS_SELECTOR, "#message pre").text == kv["message"]["text"]
    assert "The <kind> is not one of" in browser.find_element(By.ID, "what-it-means").text
    assert "Not yet explained." in browser.find_element(By.ID, "defensive-patterns").text
    code = browser.find_element(By.CSS_SELECTOR, "#source .highlight")
    assert "raise" in code.text and code.find_elements(By.CSS_SELECTOR, "span.k")  # highlighted keywords
    assert browser.find_element(By.CSS_SELECTOR, "#source a.permalink").get_attribute("href") == kv["location"]["permalink"]
    assert cd.COMMIT in browser.find_element(By.ID, "provenance").text
    json_link = browser.find_element(By.ID, "json-link").get_attribute("href")
    assert json_link.endswith(f"/errors/{kv['id']}.json")
    related = browser.find_elements(By.CSS_SELECTOR, "#related a")
    assert len(related) == 2
    related[0].click()
    assert browser.find_element(By.ID, "title").text.startswith("Invalid value")
    assert _errors(browser) == []


def test_hostile_text_is_shown_not_run(browser, site):
    from selenium.webdriver.common.by import By

    out, records = site
    evil = records[cd.HOSTILE["text"]]
    browser.get((out / "errors" / f"{evil['id']}.html").as_uri())
    assert browser.find_element(By.CSS_SELECTOR, "#message pre").get_attribute("textContent") == evil["message"]["text"]
    scripts = browser.find_elements(By.TAG_NAME, "script")
    assert len(scripts) == 3  # entry data, search index, search box: nothing injected
    data = browser.execute_script("return JSON.parse(document.getElementById('entry-data').textContent)")
    assert data["pattern"] == evil["message"]["pattern"] and data["title"] == evil["title"]
    assert _errors(browser) == []


def test_search_box_finds_a_pasted_message_and_follows_it(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    out, records = site
    kv = records[cd.KV["text"]]
    browser.get((out / "index.html").as_uri())
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.entries tr")) == len(list((out / "errors").glob("*.html")))
    box = browser.find_element(By.ID, "search")
    box.send_keys("ValueError: Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: sliding.")
    first = WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.CSS_SELECTOR, "#results li a")))
    assert first.text == kv["title"]
    badge = browser.find_element(By.CSS_SELECTOR, "#results li .badge").text
    assert badge == "ValueError \u00b7 matches"  # the pattern itself matched, in JS
    first.click()
    WebDriverWait(browser, 10).until(ec.url_contains(f"{kv['id']}.html"))
    assert browser.find_element(By.ID, "title").text == kv["title"]

    box = browser.find_element(By.ID, "search")  # the box on an entry page searches too
    box.send_keys("json")
    hit = WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.CSS_SELECTOR, "#results li a")))
    assert "not json" in hit.text
    assert _errors(browser) == []


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
        WebDriverWait(browser, 60).until(ec.presence_of_element_located((By.CSS_SELECTOR, "#results li a")))
        shown = {li.find_element(By.TAG_NAME, "a").text: li.find_element(By.CSS_SELECTOR, ".badge").text
                 for li in browser.find_elements(By.CSS_SELECTOR, "#results li")}
        assert shown[adjacent["title"]] == "ValueError" + (" \u00b7 matches" if full else "")
    assert _errors(browser) == []


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
        " return g && g.map(function (p) { return c[3].slice(p[0], p[1]); }); });", cases)
    want = [None if (g := fragment_gaps(f, s, e, m)) is None else [m[a:b] for a, b in g] for f, s, e, m in cases]
    assert got == want
    assert sum(w is not None for w in want) > 500  # both outcomes well represented


def _paste(browser, out, text):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((out / "index.html").as_uri())
    browser.execute_script("var b = document.getElementById('search'); b.value = arguments[0];"
                           " b.dispatchEvent(new Event('input'));", text)
    WebDriverWait(browser, 30).until(ec.presence_of_element_located((By.CSS_SELECTOR, "#results li")))
    return [(li.get_attribute("class"), li.text) for li in browser.find_elements(By.CSS_SELECTOR, "#results li")]


def test_a_pasted_traceback_puts_its_entry_first(browser, site):
    """The search box reads a paste as errcat match does: vLLM's log prefixes stripped, each
    exception line a candidate, a match only with real literal support, foreign errors named."""
    out, records = site
    shown = _paste(browser, out, KV_LOGGED)
    assert shown[0] == ("", f"{records[cd.KV['text']]['title']} ValueError \u00b7 matches")
    shown = _paste(browser, out, "vllm serve: error: argument --x: Unknown KV cache group kind 'full' in backend_per_kind. "
                                 "Valid kinds are: a.")
    assert shown[0][1].endswith("\u00b7 matches") and shown[0][1].startswith(records[cd.KV["text"]]["title"])
    kv = records[cd.KV["text"]]["title"]
    for cut in ("ValueError: Unknown KV cache group kind 'full' in backend_per",  # cut inside a literal: the start of the message
                """openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': "Unknown KV cache group kind 'x' in """
                """backend_per_kind. Valid kinds are: a.", 'type': 'BadRequestError'}"""):
        assert _paste(browser, out, cut)[0] == ("", f"{kv} ValueError \u00b7 matches"), cut
    shown = _paste(browser, out, "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. Invalid value 3")
    assert shown[0] == ("foreign", "Not raised by acme/widgets: raised by torch (torch-cuda-oom). PyTorch's allocator ran out of GPU memory.")
    assert not any(text.endswith("matches") for _, text in shown)
    assert _errors(browser) == []


def test_the_search_box_reads_pastes_as_errcat_match_does(browser, site):
    """The site's reading of a paste (search.js: prefixes, exception lines) is paste.py's, on
    every paste of the real corpus."""
    from pathlib import Path

    from crawler.consume.paste import candidates, clean, without_parameter

    out, _ = site
    browser.get((out / "index.html").as_uri())
    texts = [json.loads(line)["text"] for line in (Path(__file__).resolve().parents[1] / "data" / "pastes.jsonl").read_text().splitlines()]
    got = browser.execute_script("return arguments[0].map(function (t) { return window.errcatCandidates(t).messages.slice(0, -1); });", texts)
    want = []
    for text in texts:
        messages = []
        for c in candidates(clean(text)):
            if c.source == "line":
                messages += [c.message] + ([without_parameter(c.message)] if without_parameter(c.message) != c.message else [])
        want.append(messages)
    assert got == want
    assert sum(map(len, want)) > 100
