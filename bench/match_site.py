#!/usr/bin/env python3
"""The site's search box on the real-paste corpus, in headless chromium.

    errcat render --data output/vllm-project/vllm --out /tmp/site
    python bench/match_site.py /tmp/site [--corpus tests/data/pastes.jsonl]

Each paste is put into the search box; top-1 is the first entry listed (foreign notes aside),
a claim is a first entry badged "matches" for a paste vLLM does not raise (foreign or none).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "pastes.jsonl"
SHOW = (
    "var b = document.getElementById('search'); b.value = arguments[0]; b.dispatchEvent(new Event('input'));"
    "return Array.from(document.querySelectorAll('#results li')).slice(0, 3).map(function (l) {"
    " var a = l.querySelector('a'); return [l.className, a ? a.getAttribute('href') : '', l.textContent]; });"
)


def main() -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", type=Path)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    try:
        driver.get((args.site.resolve() / "index.html").as_uri())
        for current in (False, True):
            top = entries = claims = others = 0
            for r in rows:
                shown = driver.execute_script(SHOW, r.get("current", r["text"]) if current else r["text"])
                first = next((x for x in shown if x[0] != "foreign"), None)
                got = first[1].rsplit("/", 1)[-1].removesuffix(".html") if first else None
                if r["expect"] in ("foreign", "none"):
                    others += 1
                    claims += first is not None and ("matches" in first[2] or "its beginning" in first[2])
                else:
                    entries += 1
                    top += got == r["expect"]
            label = "reworded ones in current words" if current else "as pasted"
            print(f"{label}: site top-1 {top}/{entries}; matches claimed on foreign/none {claims}/{others}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
