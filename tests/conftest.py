"""Shared fixtures: real git repositories built from code strings, and the real CLI."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import git
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from crawler.base.home import _checkout as checkout_of_this_errcat
from crawler.cli.main import main

# Tests never touch the user's cache or git configuration.
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
# Nor a package index: a crawl of a wheel asks pip's index when it was uploaded, and a test that
# means it to starts its own (a local server) and names it.
os.environ["PIP_NO_INDEX"] = "1"

# Property tests assert what holds of every example, never how fast one runs: on a loaded machine
# (CI beside other jobs, pytest-xdist's workers on every core) hypothesis's 200 ms deadline per
# example and its too-slow health check fail tests whose code is right. Speed is bench/'s.
settings.register_profile("errcat", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("errcat")


class FixtureRepo:
    """A real git repository; each ``commit`` lays down files (dedented) and may tag the commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo = git.Repo.init(path, initial_branch="main")
        with self.repo.config_writer() as cw:
            cw.set_value("user", "name", "fixture")
            cw.set_value("user", "email", "fixture@example.invalid")

    def commit(self, files: dict[str, str | bytes | None], message: str = "commit", tag: str | None = None, date: str = "1767323045 +0000") -> str:
        for rel, content in files.items():
            target = self.path / rel
            if content is None:
                self.repo.index.remove([rel], working_tree=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
            self.repo.index.add([rel])
        commit = self.repo.index.commit(message, author_date=date, commit_date=date)
        if tag:
            self.repo.create_tag(tag, ref=commit)
        return commit.hexsha


@pytest.fixture
def fixture_repo(tmp_path: Path) -> FixtureRepo:
    return FixtureRepo(tmp_path / "upstream")


@pytest.fixture(autouse=True)
def no_shared_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test falls back to errcat's checkout or the user's data directory as its errcat home
    (``crawler.base.home``): a command run from a directory that is no home would read and write
    curated/ and output/ there (a test's draft once landed in the checkout's curated/). A test
    of that fallback asks for ``checkout_home``."""
    from crawler.base import home

    monkeypatch.setattr(home, "_checkout", lambda: None)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture
def checkout_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """The errcat home falls back to this checkout again, as it does outside the tests."""
    from crawler.base import home

    monkeypatch.setattr(home, "_checkout", checkout_of_this_errcat)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cache"
    monkeypatch.setenv("ERRCAT_CACHE_DIR", str(path))
    monkeypatch.delenv("ERRCAT_HOME", raising=False)  # a developer's own home reaches no test
    return path


@pytest.fixture
def cli(cache_dir: Path):
    """Invoke the real errcat CLI in-process; returns Click's Result."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)

    return invoke


@pytest.fixture(scope="module")
def crawl_once(tmp_path_factory: pytest.TempPathFactory):
    """Crawl a fixture repository once for a whole module: ``crawl_once(files, *crawl_args)`` commits
    ``files`` (tagged v1) to a new repository, runs the real ``errcat crawl`` of it with the given
    options (and ``--config`` of an errcat.toml holding ``config``, when given) and its own cache,
    and returns the ``--out`` directory. For datasets the module's tests only read: a test that
    changes its dataset, or crawls its repository again, builds its own."""

    def crawl(files: dict[str, str | bytes | None], *args: object, config: str | None = None) -> Path:
        tmp = tmp_path_factory.mktemp("crawl")
        repo = FixtureRepo(tmp / "upstream")
        repo.commit(files, tag="v1")
        if config is not None:
            (tmp / "errcat.toml").write_text(config, encoding="utf-8")
            args = (*args, "--config", tmp / "errcat.toml")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ERRCAT_CACHE_DIR", str(tmp / "cache"))
            run = CliRunner().invoke(
                main, ["crawl", "--repo", str(repo.path), "--ref", "v1", *map(str, args), "--out", str(tmp / "out")], catch_exceptions=False
            )
        assert run.exit_code == 0, run.output
        return tmp / "out"

    return crawl


@pytest.fixture
def no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to run git fails the test: for refusals that must come before git runs."""
    from crawler.source import snapshot as source

    def boom(*a, **k):
        raise AssertionError(f"git ran: {a}")

    monkeypatch.setattr(source.subprocess, "run", boom)
    monkeypatch.setattr(source.subprocess, "Popen", boom)
