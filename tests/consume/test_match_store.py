"""The matcher's store on disk (crawler/consume/match_store.py): the same answers as the in-memory
matcher, rebuilt when the dataset changes or the file is damaged, and a match path that
imports no models."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import consumer_data as cd
import pytest

from crawler.consume.match import Matcher, match
from crawler.consume.match_store import open_matcher, store_path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from match_real import render_template, wrappings


@pytest.fixture()
def dataset(tmp_path) -> Path:
    return cd.write(tmp_path / "data")


def _answers(result) -> list:
    return (
        [(m.entry.id, m.how, round(m.support, 6), m.values, m.role) for m in result.matches],
        [w.entry.id for w in result.weak],
        [f.error.name for f in result.foreign],
    )


@pytest.mark.slow
def test_store_answers_as_the_index_does(dataset, tmp_path):
    memory, stored = Matcher.load(dataset), open_matcher(dataset, tmp_path / "cache")
    rng = random.Random(5)
    texts = ["Unknown KV cash grop kind", "something nobody raises", "Bad " + " x" * 20 + " end"]
    for entry in memory.index.entries:
        message = render_template(entry.text, entry.fields, rng)
        texts += wrappings(message, entry.exception, entry.catch_as).values()
        texts.append(message[: len(message) // 2] + "...")
    for text in texts:
        assert _answers(match(text, [stored])) == _answers(match(text, [memory])), text


def test_a_changed_dataset_gets_a_new_store(dataset, tmp_path):
    cache = tmp_path / "cache"
    first = store_path(dataset, cache)
    open_matcher(dataset, cache)
    assert first.is_file()
    search = dataset / "search.json"
    data = json.loads(search.read_text())
    data["entries"] = data["entries"][:1]
    search.write_text(json.dumps(data))  # rewritten: another size and time
    assert store_path(dataset, cache) != first
    assert open_matcher(dataset, cache).total == 1


def test_a_damaged_store_is_set_aside_and_rebuilt(dataset, tmp_path):
    cache = tmp_path / "cache"
    path = store_path(dataset, cache)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 100)
    matcher = open_matcher(dataset, cache)
    assert matcher.total == len(Matcher.load(dataset).entries)
    assert path.with_name(path.name + ".damaged").exists()


@pytest.mark.slow
def test_match_imports_no_models(dataset, tmp_path):
    """The match path must not pay for pydantic: it reads the store, built by an earlier run (the
    kind registry, plain Python, is all it takes of the models' package)."""
    code = (
        "import sys\n"
        "from crawler.cli import main\n"
        "try:\n"
        f"    main(['match', '--data', {str(dataset)!r}, 'Invalid value 3'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'crawler.model', 'crawler.catalogue.search', 'yaml'))))\n"
    )
    env = {"ERRCAT_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120, check=True)  # builds the store
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert run.stdout.strip().splitlines()[-1] == "['crawler.model', 'crawler.model.kinds']"


@pytest.mark.slow
def test_match_reads_the_store_the_crawl_built_in_the_cache_dir_it_was_given(fixture_repo, cli, cache_dir, tmp_path):
    """``errcat crawl --cache-dir A`` builds the match store in A; ``errcat match --cache-dir A``
    must read that one, not build another in the default cache (its first match was slow)."""
    from helpers import CHECK_CODE

    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE})
    given = tmp_path / "given-cache"
    out = tmp_path / "out"
    crawled = cli("crawl", "--repo", fixture_repo.path, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, "--cache-dir", given)
    assert crawled.exit_code == 0, crawled.output
    built = sorted((given / "match").iterdir())
    assert built
    found = cli("match", "--data", out, "--cache-dir", given, "--json", "ValueError: x is far too large")
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["matches"]
    assert sorted((given / "match").iterdir()) == built and not (cache_dir / "match").exists()
