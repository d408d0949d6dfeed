"""A wrapper whose field swallows the root cause's sentence, and the corpus's ``raised_by``
(tests/data/pastes.jsonl; bench/match_corpus.py).

- "Exception in worker {name} while processing method {method}." with "NCCL error: ..." in its
  last field (vLLM #7800): the whole-template fit of the swallowed sentence is the root cause
  (a match, first), the wrapper its umbrella, in ``errcat match`` and the site's box alike.
- A wording an older release raised, whose check today is another one (not its successor):
  over a history the retired entry named in ``raised_by`` is a right answer; a single release
  keeps ``expect``.

One fixture repository, two releases (v0.1.0, v0.2.0), crawled and as a history by the real
CLI, once for the module.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from crawler.cli.main import main
from tests.conftest import FixtureRepo
from tests.consume.test_match45 import _ids  # and bench/ on the path (match_corpus)

WRAPPER = "Exception in worker {name} while processing method {method}."
CAUSE = "NCCL error: {error_str}"
OLD_LORA = "Model {name} does not support gizmos, but gizmos are enabled. Support may be added in the future."
TODAY_LORA = "Gizmos are not supported for {name}: check the widget configuration"
COMMON = "".join(f"def {f}({args}):\n    raise RuntimeError(f{t!r})\n\n\n" for f, args, t in (("work", "name, method", WRAPPER), ("nccl", "error_str", CAUSE)))
V1 = {"pkg/__init__.py": "", "pkg/worker.py": COMMON, "pkg/loader.py": f"def load(name):\n    raise ValueError(f{OLD_LORA!r})\n"}
V2 = {"pkg/loader.py": None, "pkg/config.py": f"def check(name):\n    raise ValueError(f{TODAY_LORA!r})\n"}
WORKER_PASTE = (
    "(WorkerProcess pid=232) ERROR 08-23 08:25:25 worker_utils.py:226] Exception in worker WorkerProcess while processing "
    "method init_device: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details), Traceback (most recent call last):"
)
LORA_PASTE = "ValueError: Model Sprocket does not support gizmos, but gizmos are enabled. Support may be added in the future."
URL = "https://github.com/acme/widgets/issues/"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("match45b")
    repo = FixtureRepo(tmp / "upstream")
    repo.commit(V1, tag="v0.1.0")
    repo.commit(V2, tag="v0.2.0")
    args = ["--repo", str(repo.path), "--name", "acme/widgets", "--include", "pkg/**/*.py"]
    out: dict = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ERRCAT_CACHE_DIR", str(tmp / "cache"))
        mp.chdir(tmp)  # no curated/ of errcat's own checkout
        for name, command in (
            ("v1", ["crawl", *args, "--ref", "v0.1.0", "--out", str(tmp / "v1")]),
            ("history", ["history", *args, "--out", str(tmp / "history"), "v0.1.0", "v0.2.0"]),
        ):
            run = CliRunner().invoke(main, command, catch_exceptions=False)
            assert run.exit_code == 0, run.output
            out[name] = tmp / name / "acme" / "widgets"
    out["ids"] = _ids(out["history"])
    return out


def test_the_sentence_a_wrappers_field_swallows_is_the_root_cause(data):
    """The cause's template covers too little of its sentence to be a match alone (its field holds
    most of it); held whole in the wrapper's field, it is the root cause, the wrapper the umbrella."""
    from crawler.consume.match import Matcher, match

    ids = data["ids"]
    for dataset in (data["v1"], data["history"]):
        result = match(WORKER_PASTE, [Matcher.load(dataset)], 5)
        got = [(m.entry.id, m.role, m.strong) for m in result.matches]
        assert got == [(ids[CAUSE], "root cause", True), (ids[WRAPPER], "umbrella", True)], got
        assert ids[CAUSE] not in [w.entry.id for w in result.weak]
    # the cause's sentence alone is still only weak (nothing swallowed it): the rule adds no claim
    alone = match("NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)", [Matcher.load(data["v1"])], 5)
    assert not alone.matches and alone.weak[0].entry.id == ids[CAUSE]
    # a wrapper holding a sentence no entry fits stays the one match, with no role
    other = match("RuntimeError: Exception in worker W while processing method run: disk on fire.", [Matcher.load(data["v1"])], 5)
    assert [(m.entry.id, m.role) for m in other.matches] == [(ids[WRAPPER], "")]


@pytest.mark.slow  # crawls, renders a site and runs the box under Node
def test_the_box_answers_the_swallowed_root_cause_as_errcat_match_does(data, tmp_path):
    from tests.consume.test_search_parity import NODE, assert_parity

    if NODE is None:
        pytest.skip("node is not installed (apt-get install nodejs)")
    pastes = [WORKER_PASTE, "RuntimeError: Exception in worker W while processing method run: disk on fire.", LORA_PASTE]
    seen = assert_parity(NODE, data["history"], tmp_path, pastes)
    assert seen["match"] == 3 and seen["retired"] >= 1, seen


def test_raised_by_is_right_over_a_history_only(data):
    """A paste in v0.1.0's words whose check today is another entry (``expect``, not the retired
    one's successor): over the history the retired entry of ``raised_by`` counts as top-1; on the
    v0.1.0 crawl alone (nothing retired) the same answer is a miss against ``expect``; a wrong
    ``raised_by`` is no right answer."""
    from match_corpus import evaluate

    from crawler.consume.match import Matcher

    ids = data["ids"]
    old, today = ids[OLD_LORA], ids[TODAY_LORA]
    row = {"url": URL + "1", "text": LORA_PASTE, "expect": today, "raised_by": old}
    history = evaluate([row], [Matcher.load(data["history"])], False, "0.2.0")
    assert (history["top1"], history["raised_by"], history["through_successor"], history["misses"]) == (1, 1, 0, [])
    single = evaluate([row], [Matcher.load(data["v1"])], False, "0.1.0")
    assert (single["top1"], single["raised_by"]) == (0, 0) and single["misses"] == [(URL + "1", today, old)]
    wrong = evaluate([dict(row, raised_by=ids[CAUSE])], [Matcher.load(data["history"])], False, "0.2.0")
    assert (wrong["top1"], wrong["raised_by"]) == (0, 0)


def test_the_real_corpus_names_raised_by_where_the_history_answers_with_the_retired_entry():
    """``raised_by`` rows (read in vLLM 0.10.0's and 0.4.0's wheels): an entry id other than
    ``expect``, on rows that expect an entry."""
    from match_corpus import CORPUS

    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    raised = {r["url"].rsplit("/", 1)[1]: r["raised_by"] for r in rows if "raised_by" in r}
    assert raised == {"20409": "7450a2fac4a55d00", "3044": "b06ea7dc0ad9551c", "4615": "b06ea7dc0ad9551c", "8484": "b06ea7dc0ad9551c"}
    assert all(r["raised_by"] != r["expect"] and r["expect"] not in ("foreign", "none") for r in rows if "raised_by" in r)
