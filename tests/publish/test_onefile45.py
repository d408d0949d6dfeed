"""The one-file crawl's tail (issue #36 item 4, round 45).

A served source join keeps the settings' spelling whole: with the fields a settings class fills
itself (``SettingNames.filled``), which who acts reads, so a crawl whose joins are served gives
the actions of one without the cache (vLLM's ``KVTransferConfig.engine_id`` assert was
"internal" when the join was made and "setting" when it was served).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.catalogue.test_action_seed66 import ARGS, CONFIG, CONNECTOR
from tests.helpers import MEANING_TOML, action_of

#: A settings class that fills ``engine_id`` itself, a connector that asserts it is there, and a
#: file that v2 moves down by a line (both joins served, moved).
FILLED = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/arg_utils.py": ARGS,
    "pkg/distributed/kv_transfer/widget_connector.py": CONNECTOR,
    "pkg/other.py": "X = 1\n",
}


def _records(cli, repo, config: Path, out: Path, ref: str, *extra: str) -> tuple[list[dict], dict[str, bytes]]:
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--upstream", "widgets", "--config", config, "--out", out, *extra)
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "widgets"
    files = {p.relative_to(dataset).as_posix(): p.read_bytes() for p in sorted(dataset.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    files["errors.jsonl.gz"] = gzip.decompress(files["errors.jsonl.gz"])
    return [json.loads(line) for line in files["errors.jsonl.gz"].splitlines()], files


@pytest.mark.slow
def test_a_served_source_join_gives_who_acts_the_fields_a_settings_class_fills_itself(fixture_repo, cli, tmp_path, monkeypatch):
    (tmp_path / "errcat.toml").write_text(MEANING_TOML)
    config = tmp_path / "errcat.toml"
    fixture_repo.commit(FILLED, tag="v1")
    fixture_repo.commit({"pkg/other.py": "# moved\nX = 1\n"}, tag="v2")
    made, _ = _records(cli, fixture_repo, config, tmp_path / "out", "v1")
    assert "gives a value itself" in action_of(made, "widget engine id is unset")["basis"]
    import crawler.catalogue.meaning_join as meaning_join

    joined: list[object] = []
    monkeypatch.setattr(meaning_join, "callers_by_id", lambda *a, **k: joined.append(a) or {})
    served, files = _records(cli, fixture_repo, config, tmp_path / "out", "v2")
    assert joined == []  # the source join was served
    got = action_of(served, "widget engine id is unset")
    assert got["actor"] == "internal" and "gives a value itself" in got["basis"], got
    monkeypatch.undo()
    _records(cli, fixture_repo, config, tmp_path / "fresh", "v1", "--no-cache")
    assert _records(cli, fixture_repo, config, tmp_path / "fresh", "v2", "--no-cache")[1] == files
