"""The source stage against real git repositories and wheels built here, in tmp dirs."""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
from pathlib import Path

import pytest
from helpers import git

from crawler.base.errors import SourceError, UsageError
from crawler.source import git as source_git
from crawler.source import opener as source_opener
from crawler.source import policy as source_policy
from crawler.source import remote as source_remote
from crawler.source import snapshot as source_snapshot
from crawler.source.config import Upstream
from crawler.source.globs import PathFilter, glob_regex
from crawler.source.opener import open_snapshot
from crawler.source.policy import RemoteURL
from crawler.source.wheel import git_blob_id, open_wheel

PKG = Upstream(name="pkg", url="https://example.invalid/acme/pkg", include=["pkg/**/*.py"], version_file="pkg/_version.py")
UPSTREAM_SHA = "4ba787ec9" + "a" * 31


def hash_object(repo: Path, data: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=data)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repo whose HEAD (tag v1, branch main) has regular files plus every kind of odd entry."""
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q")
    (r / "pkg" / "sub").mkdir(parents=True)
    (r / "pkg" / "a.py").write_text("raise ValueError('a')\n")
    (r / "pkg" / "sub" / "b.py").write_text("assert x, 'b'\n")
    (r / "pkg" / "big.py").write_text("x = 1\n" * 100)
    (r / "pkg" / "_version.py").write_text(f"__commit_id__ = commit_id = '{UPSTREAM_SHA}'\n")
    (r / "pkg" / "notes.txt").write_text("not python\n")
    (r / "other.py").write_text("raise KeyError\n")
    os.symlink("a.py", r / "pkg" / "link.py")
    git(r, "add", "-A")
    # Entries a checkout could not even create: added straight to the index.
    blob = hash_object(r, b"raise OSError\n")
    info = b"".join(
        b"%s %s\t%s\0" % (mode, sha.encode(), path)
        for mode, sha, path in [
            (b"160000", "1" * 40, b"pkg/vendored.py"),  # a gitlink (submodule)
            (b"100644", blob, b"pkg/bad\xff.py"),  # not UTF-8
            (b"100644", blob, b"pkg/new\nline.py"),  # a control character
        ]
    )
    git(r, "update-index", "-z", "--index-info", input=info)
    git(r, "commit", "-q", "-m", "first")
    git(r, "tag", "-a", "-m", "release 1", "v1")
    git(r, "checkout", "-q", "-b", "feature")
    (r / "pkg" / "a.py").write_text("raise ValueError('a2')\n")
    git(r, "commit", "-q", "-am", "second", date="1700003600 -0500")
    git(r, "checkout", "-q", "main")
    return r


def snap(repo_arg: str | None, ref: str | None = None, **kw) -> source_snapshot.Snapshot:
    kw.setdefault("upstream", PKG)
    kw.setdefault("include", [])
    kw.setdefault("exclude", [])
    return open_snapshot(repo=repo_arg, ref=ref, pypi=kw.pop("pypi", None), **kw)


def tree_state(path: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(path.rglob("*")) if not p.is_symlink()}


# --------------------------------------------------------------------------- local repositories


@pytest.mark.slow
def test_lists_selected_files_sorted_with_git_blob_ids(repo: Path) -> None:
    s = snap(str(repo), "v1", max_blob_bytes=200)
    assert [f.path for f in s.files] == ["pkg/_version.py", "pkg/a.py", "pkg/sub/b.py"]
    for f in s.files:
        data = (repo / f.path).read_bytes()
        assert f.blob == git_blob_id(data) == git(repo, "rev-parse", f"v1:{f.path}")
        assert f.size == len(data)
    assert s.source == "git" and s.ref == "v1"
    assert s.repo.owner == "acme" and s.repo.name == "pkg"


@pytest.mark.slow
def test_odd_entries_are_skipped_with_reasons(repo: Path) -> None:
    s = snap(str(repo), "v1", max_blob_bytes=200)
    reasons = {k.path: k.reason for k in s.skipped}
    assert reasons["pkg/link.py"] == "symlink"
    assert reasons["pkg/vendored.py"] == "gitlink (submodule)"
    assert reasons["pkg/big.py"].startswith("over size limit (600 > 200")
    assert reasons["pkg/bad\\xff.py"] == "path is not valid UTF-8"
    assert reasons["pkg/new\\x0aline.py"] == "path contains control characters"
    for k in s.skipped:  # printable: no lone surrogates, no control characters
        k.path.encode("utf-8")
        assert k.path.isprintable()
    assert "other.py" not in reasons and "pkg/notes.txt" not in reasons  # not selected: not reported


def test_a_tree_entry_named_dot_or_dot_dot_is_skipped_not_crawled(tmp_path: Path) -> None:
    """git's index refuses ``pkg/../up.py``, but a tree object made with ``git mktree`` holds it:
    crawled, it reached the records, the changelog and the pull request as a permalink
    ``.../blob/<commit>/pkg/../up.py``, which a browser opens as another file, ``up.py``."""
    r = tmp_path / "dots"
    r.mkdir()
    git(r, "init", "-q")
    blob = hash_object(r, b"raise ValueError('up')\n")

    def tree(entries: list[tuple[bytes, bytes, str, bytes]]) -> str:
        return git(r, "mktree", "-z", input=b"".join(b"%s %s %s\t%s\0" % (m, k, sha.encode(), n) for m, k, sha, n in entries))

    up = tree([(b"100644", b"blob", blob, b"up.py")])
    pkg = tree([(b"100644", b"blob", blob, b"a.py"), (b"040000", b"tree", up, b".."), (b"040000", b"tree", up, b".")])
    root = tree([(b"040000", b"tree", pkg, b"pkg")])
    commit = git(r, "commit-tree", root, "-m", "dots")
    s = snap(str(r), commit)
    assert [f.path for f in s.files] == ["pkg/a.py"]
    assert {k.path: k.reason for k in s.skipped} == {"pkg/../up.py": "unsafe path in the tree", "pkg/./up.py": "unsafe path in the tree"}


@pytest.mark.slow
def test_read_streams_in_given_order(repo: Path) -> None:
    s = snap(str(repo), "v1")
    order = list(reversed(s.files)) + s.files[:1]
    got = list(s.read(order))
    assert [e for e, _ in got] == order
    for e, data in got:
        assert data == (repo / e.path).read_bytes()
    # abandoning a read half-way leaves the snapshot usable
    it = s.read(s.files)
    next(it)
    it.close()
    assert len(list(s.read(s.files))) == len(s.files)
    s.close()
    with pytest.raises(SourceError):
        s.read(s.files)


@pytest.mark.slow
@pytest.mark.parametrize("ref", ["v1", "main", "refs/tags/v1", "HEAD", None])
def test_refs_resolve_to_the_full_commit(repo: Path, ref: str | None) -> None:
    assert snap(str(repo), ref).commit == git(repo, "rev-parse", "main")


@pytest.mark.slow
def test_branch_and_short_and_full_sha(repo: Path) -> None:
    feature = git(repo, "rev-parse", "feature")
    assert snap(str(repo), "feature").commit == feature
    assert snap(str(repo), feature[:8]).commit == feature
    assert snap(str(repo), feature).commit == feature
    data = dict((e.path, d) for e, d in snap(str(repo), "feature").read(snap(str(repo), "feature").files))
    assert data["pkg/a.py"] == b"raise ValueError('a2')\n"  # read from the commit, not the work tree


@pytest.mark.slow
def test_commit_date_is_the_committer_date_with_offset(repo: Path) -> None:
    assert snap(str(repo), "v1").commit_date == "2023-11-15T00:13:20+02:00"
    assert snap(str(repo), "feature").commit_date == "2023-11-14T18:13:20-05:00"


@pytest.mark.slow
def test_upstream_commit_from_version_file(repo: Path) -> None:
    s = snap(str(repo), "v1")
    assert s.upstream_commit == UPSTREAM_SHA
    assert snap(str(repo), "v1", upstream=PKG.model_copy(update={"version_file": None})).upstream_commit is None


def test_short_recorded_upstream_is_kept_as_information_only(tmp_path: Path) -> None:
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q")
    (r / "pkg").mkdir()
    (r / "pkg" / "_version.py").write_text("__commit_id__ = commit_id = 'g4ba787ec9'\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "x")
    s = snap(str(r))
    assert s.upstream_commit is None and s.upstream_recorded == "4ba787ec9"


@pytest.mark.parametrize("written, recorded", [("4BA787EC9", "4ba787ec9"), ("g4ba787ec9", None), ("main", None), ("4ba78", None)])
def test_only_a_commit_is_taken_from_the_version_file(tmp_path: Path, written: str, recorded: str | None) -> None:
    """A configured version_pattern may capture anything; what is not 7 to 40 hex digits is no
    commit (it once went into every record's provenance, failed the schema and stopped the crawl)."""
    r = tmp_path / "r"
    (r / "pkg").mkdir(parents=True)
    git(r, "init", "-q")
    (r / "pkg" / "_version.py").write_text(f"commit = '{written}'\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "x")
    s = snap(str(r), upstream=PKG.model_copy(update={"version_pattern": r"^commit = '([^']*)'"}))
    assert s.upstream_commit is None and s.upstream_recorded == recorded


def test_include_exclude_globs(repo: Path) -> None:
    s = snap(str(repo), "v1", include=["**/*.py"], exclude=["pkg/sub/", "**/_version.py"])
    assert [f.path for f in s.files] == ["other.py", "pkg/a.py", "pkg/big.py"]
    with pytest.raises(UsageError):
        snap(str(repo), "v1", include=["!pkg"])


def test_unknown_ref_missing_path_not_a_repo(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="unknown ref or commit 'nope'"):
        snap(str(repo), "nope")
    with pytest.raises(SourceError, match="unknown ref"):
        snap(str(repo), "f" * 40)
    with pytest.raises(SourceError, match="no such directory"):
        snap(str(tmp_path / "missing"))
    (tmp_path / "plain").mkdir()
    with pytest.raises(SourceError, match="not a git repository"):
        snap(str(tmp_path / "plain"))
    # a subdirectory of a repository is not that repository
    with pytest.raises(SourceError, match="not a git repository"):
        snap(str(repo / "pkg"))


@pytest.mark.slow
def test_bare_repository_and_no_writes(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    before, before_wt = tree_state(bare), tree_state(repo)
    s = snap(str(bare), "v1")
    assert s.commit == git(repo, "rev-parse", "v1^{commit}")
    list(s.read(s.files))
    s2 = snap(str(repo), "feature")
    list(s2.read(s2.files))
    assert tree_state(bare) == before and tree_state(repo) == before_wt


# --------------------------------------------------------------------------- refusals before git

BAD_REPOS = [
    "ext::sh -c touch% /tmp/pwned",
    "file:///tmp/x",
    "ssh://git@github.com/vllm-project/vllm",
    "git@github.com:vllm-project/vllm.git",
    "github.com:vllm-project/vllm",
    "http://github.com/vllm-project/vllm",
    "git://github.com/vllm-project/vllm",
    "-uhttps://github.com/a/b",
    "--upload-pack=touch /tmp/x",
    "https://user:pw@github.com/a/b",
    "https://github.com/a",
    "https://github.com/a/../b",
    "https://-oProxyCommand=x/a/b",
    "https://github.com/a/b\n",
    "https://github.com/a/b c",
    "https://github.com/a/b?x=1",
    "",
]
BAD_REFS = ["--upload-pack=touch /tmp/x", "-uevil", "-", "a..b", "main\n", "v1\x00", "a b", "HEAD~1", "x^{tree}", "@{-1}", "/abs", "x:y", "refs/heads/x.lock"]


@pytest.mark.parametrize("bad", BAD_REPOS)
def test_bad_repo_refused_before_git(bad: str, no_git: None, tmp_path: Path) -> None:
    with pytest.raises(SourceError) as ei:
        snap(bad, "main", cache_dir=tmp_path / "cache")
    assert "\n" not in str(ei.value).strip()
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("bad", BAD_REFS)
def test_bad_ref_refused_before_git(bad: str, no_git: None, tmp_path: Path) -> None:
    for repo_arg in ("https://github.com/vllm-project/vllm", str(tmp_path)):
        with pytest.raises(SourceError, match="refusing ref"):
            snap(repo_arg, bad, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("bad", ["vllm", "vllm>=0.3", "vllm==", "==1", "vllm==1;rm", "-r==1", "vllm==1 --index-url x", "vllm===1"])
def test_bad_pypi_spec_refused_before_pip(bad: str, no_git: None) -> None:
    with pytest.raises(SourceError, match="expected NAME==VERSION"):
        snap(None, pypi=bad)


def test_pypi_with_repo_is_a_usage_error(no_git: None) -> None:
    with pytest.raises(UsageError):
        snap("https://github.com/a/b", pypi="vllm==1")


# --------------------------------------------------------------------------- hardened git


def test_hardened_environment_and_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/nonexistent")
    monkeypatch.setenv("GIT_SSH_COMMAND", "touch /tmp/pwned")
    env = source_git._git_env(allow_file=False)
    assert env["GIT_ALLOW_PROTOCOL"] == "https"
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_CONFIG_GLOBAL"] == os.devnull and env["GIT_LFS_SKIP_SMUDGE"] == "1"
    assert "GIT_DIR" not in env and "GIT_SSH_COMMAND" not in env
    assert source_git._git_env(allow_file=True)["GIT_ALLOW_PROTOCOL"] == "https:file"
    cmd = source_git.git_cmd(None, False)
    for opt in ("core.hooksPath=/dev/null", "protocol.allow=never", "protocol.https.allow=always"):
        assert opt in cmd
    assert "protocol.file.allow=always" not in cmd


def test_hostile_global_config_and_env_have_no_effect(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "gitconfig"
    bad.write_text("[core\n this is not config\n")  # git refuses to run at all with this
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".gitconfig").write_text(bad.read_text())
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(bad))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.bare'='maybe'")
    s = snap(str(repo), "v1")
    assert [f.path for f in s.files][0] == "pkg/_version.py"


def test_replace_refs_are_ignored(repo: Path) -> None:
    a = git(repo, "rev-parse", "v1:pkg/a.py")
    git(repo, "replace", a, hash_object(repo, b"raise Replaced\n"))
    s = snap(str(repo), "v1")
    assert dict((e.path, d) for e, d in s.read(s.files))["pkg/a.py"] == b"raise ValueError('a')\n"


# --------------------------------------------------------------------------- remote fetch (file:// stands in for https)


@pytest.fixture
def remote(repo: Path, tmp_path: Path) -> RemoteURL:
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(bare, "config", "uploadpack.allowAnySHA1InWant", "true")
    return RemoteURL(url=bare.as_uri(), host="example.invalid", owner="acme", name="pkg")


def remote_snap(remote: RemoteURL, ref: str | None, cache: Path) -> source_snapshot.Snapshot:
    return source_remote.open_remote(
        remote,
        ref,
        cache,
        _allow_file=True,
        repo=source_opener._repo_ref(PKG),
        upstream=PKG,
        include=["pkg/**/*.py"],
        exclude=[],
        max_blob_bytes=2_000_000,
    )


def cache_git(cache: Path) -> Path:
    (d,) = (cache / "repos").iterdir()
    return d


@pytest.mark.slow
def test_fetch_tag_then_reuse_cache_offline(repo: Path, remote: RemoteURL, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    s = remote_snap(remote, "v1", cache)
    assert s.commit == git(repo, "rev-parse", "v1^{commit}")
    assert (cache_git(cache) / "shallow").is_file()  # depth 1
    assert {e.path: d for e, d in s.read(s.files)}["pkg/a.py"] == b"raise ValueError('a')\n"
    s.close()
    assert git(cache_git(cache), "for-each-ref", "refs/errcat/tmp") == ""
    # the remote disappears: tags and full ids already in the cache need no fetch
    shutil.move(Path(remote.url.removeprefix("file://")), tmp_path / "gone.git")
    assert remote_snap(remote, "v1", cache).commit == s.commit
    assert remote_snap(remote, s.commit, cache).commit == s.commit
    with pytest.raises(SourceError, match="cannot fetch 'main'"):
        remote_snap(remote, "main", cache)  # branches move: always fetched


@pytest.mark.slow
def test_fetch_branch_and_full_sha(repo: Path, remote: RemoteURL, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    feature = git(repo, "rev-parse", "feature")
    assert remote_snap(remote, "feature", cache).commit == feature
    main = git(repo, "rev-parse", "main")
    assert remote_snap(remote, main, cache).commit == main
    assert remote_snap(remote, None, cache).commit == main  # upstream branch, else HEAD


@pytest.mark.slow
def test_fetch_errors(remote: RemoteURL, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with pytest.raises(SourceError, match="cannot fetch 'nope'") as ei:
        remote_snap(remote, "nope", cache)
    assert "\n" not in str(ei.value)
    with pytest.raises(SourceError, match="abbreviated commit ids"):
        remote_snap(remote, "deadbeef", cache)
    assert not cache.exists()  # a failed first fetch leaves no trace in the cache
    remote_snap(remote, "v1", cache)
    with pytest.raises(SourceError, match="cannot fetch 'nope'"):
        remote_snap(remote, "nope", cache)
    assert git(cache_git(cache), "for-each-ref", "refs/errcat/tmp") == ""  # nothing half-written
    unreachable = RemoteURL(url=(tmp_path / "nothing.git").as_uri(), host="h", owner="o", name="n")
    with pytest.raises(SourceError, match="cannot fetch"):
        remote_snap(unreachable, "main", tmp_path / "cache2")


def _loose(cache_repo: Path, oid: str) -> Path:
    return cache_repo / "objects" / oid[:2] / oid[2:]


def _garble_loose(cache_repo: Path, oid: str) -> None:
    path = _loose(cache_repo, oid)
    path.chmod(0o644)
    path.write_bytes(b"x\x9c" + b"\x00" * 40)


def _flip_checksum(cache_repo: Path, oid: str) -> None:
    """The object's header still reads (so it is listed), its zlib checksum fails (so reading
    its bytes does)."""
    path = _loose(cache_repo, oid)
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


DAMAGE = {
    "garbled HEAD": lambda d, blob, commit: (d / "HEAD").write_bytes(b"\x00\xff garbage"),
    "no HEAD": lambda d, blob, commit: (d / "HEAD").unlink(),
    "garbled config": lambda d, blob, commit: (d / "config").write_text("[[[ not a config\n"),
    "objects gone": lambda d, blob, commit: shutil.rmtree(d / "objects"),
    "corrupt commit object": lambda d, blob, commit: _garble_loose(d, commit),
    "corrupt blob header": lambda d, blob, commit: _garble_loose(d, blob),
    "corrupt blob (found while reading)": lambda d, blob, commit: _flip_checksum(d, blob),
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_cache_repository_is_set_aside_and_fetched_afresh(repo: Path, remote: RemoteURL, tmp_path: Path, damage: str) -> None:
    """The cache's bare repository is errcat's own: damage to it must not fail every later run.
    One line says so, the repository is moved aside, and the same commit is fetched afresh."""
    # a blob long enough that its header reads without its last bytes
    (repo / "pkg" / "long.py").write_text("".join(f"x{i} = {i * 7919 % 10007}\n" for i in range(3000)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "long")
    git(repo, "tag", "v2")
    git(repo, "push", "-q", remote.url, "v2")
    cache = tmp_path / "cache"
    first = remote_snap(remote, "v2", cache)
    want = {e.path: d for e, d in first.read(first.files)}
    first.close()
    cached = cache_git(cache)
    blob = git(repo, "rev-parse", "v2:pkg/long.py")
    assert _loose(cached, blob).is_file()  # a small fetch is stored loose
    DAMAGE[damage](cached, blob, git(repo, "rev-parse", "v2^{commit}"))
    said: list[str] = []
    again = source_remote.open_remote(
        remote,
        "v2",
        cache,
        _allow_file=True,
        progress=said.append,
        repo=source_opener._repo_ref(PKG),
        upstream=PKG,
        include=["pkg/**/*.py"],
        exclude=[],
        max_blob_bytes=2_000_000,
    )
    assert any("is damaged" in line for line in said) != damage.endswith("(found while reading)")
    assert {e.path: d for e, d in again.read(again.files)} == want and again.commit == first.commit
    again.close()
    said = [line for line in said if "is damaged" in line]  # not the "fetching ..." progress
    assert len(said) == 1 and "fetching afresh" in said[0], said
    assert sorted(p.name for p in (cache / "repos").iterdir()) == [cached.name, cached.name + ".damaged"]
    assert git(cached, "fsck", "--no-dangling") == ""


def test_a_sound_cache_repository_is_kept_when_the_network_fails(remote: RemoteURL, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    remote_snap(remote, "v1", cache).close()
    shutil.move(Path(remote.url.removeprefix("file://")), tmp_path / "gone.git")
    with pytest.raises(SourceError, match="cannot fetch 'main'"):
        remote_snap(remote, "main", cache)
    assert [p.name for p in (cache / "repos").iterdir()] == [cache_git(cache).name]
    assert remote_snap(remote, "v1", cache).files  # still there, still read offline


def test_file_transport_is_refused_without_the_test_switch(remote: RemoteURL, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="cannot fetch"):
        source_remote.open_remote(remote, "v1", tmp_path / "c", repo=source_opener._repo_ref(PKG), upstream=PKG, include=["**"], exclude=[], max_blob_bytes=10)


@pytest.mark.slow
def test_hooks_in_the_cache_repo_do_not_run(remote: RemoteURL, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    remote_snap(remote, "v1", cache)
    marker = tmp_path / "hook-ran"
    for hook in ("reference-transaction", "post-update", "post-checkout"):
        h = cache_git(cache) / "hooks" / hook
        h.parent.mkdir(exist_ok=True)
        h.write_text(f"#!/bin/sh\ntouch {marker}\n")
        h.chmod(0o755)
    remote_snap(remote, "feature", cache)
    assert not marker.exists()


@pytest.mark.slow
def test_cache_dir_from_environment(remote: RemoteURL, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERRCAT_CACHE_DIR", str(tmp_path / "envcache"))
    assert source_remote.cache_root(None) == tmp_path / "envcache"
    assert source_remote.cache_root(tmp_path / "explicit") == tmp_path / "explicit"
    remote_snap(remote, "v1", None)
    assert cache_git(tmp_path / "envcache").name.startswith("example.invalid-acme-pkg-")


def test_cache_dir_name_is_safe(tmp_path: Path) -> None:
    r = source_policy.parse_https_url("https://GitHub.com/vllm-project/vllm.git/")
    assert r.url == "https://github.com/vllm-project/vllm"
    d = source_remote._repo_cache(tmp_path, r)
    assert d.parent == tmp_path / "repos" and d.name.startswith("github.com-vllm-project-vllm-")


# --------------------------------------------------------------------------- wheels


def make_wheel(path: Path, version_line: str | None) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:

        def add(name: str, data: bytes, mode: int = 0o100644, when=(2025, 3, 4, 5, 6, 8)) -> None:
            info = zipfile.ZipInfo(name, date_time=when)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)

        add("pkg/__init__.py", b"raise ImportError('x')\n", when=(2025, 1, 1, 0, 0, 0))
        add("pkg/sub/m.py", b"assert 1\n")
        if version_line is not None:
            add("pkg/_version.py", version_line.encode(), when=(2025, 2, 3, 4, 5, 6))
        add("pkg/link.py", b"__init__.py", mode=0o120777)
        add("pkg/huge.py", b"#" * 5000)
        add("pkg/../evil.py", b"x")
        add("pkg/data.json", b"{}")
        add("pkg-1.0.dist-info/METADATA", b"Name: pkg\n")
    return path


def wheel_snap(path: Path, **kw) -> source_snapshot.Snapshot:
    return open_wheel(
        path,
        source="pypi:pkg==1.0",
        repo=source_opener._repo_ref(PKG),
        upstream=PKG,
        include=kw.get("include", ["pkg/**/*.py"]),
        exclude=[],
        max_blob_bytes=1000,
        version=kw.get("version"),
        package=kw.get("package"),
        uploaded=kw.get("uploaded"),
    )


@pytest.mark.slow
def test_wheel_with_recorded_commit(tmp_path: Path) -> None:
    w = make_wheel(tmp_path / "pkg-1.0-py3-none-any.whl", f"__commit_id__ = commit_id = '{UPSTREAM_SHA}'\n")
    s = wheel_snap(w, package="Pkg", version="1.0", uploaded="2025-02-04T00:00:00+00:00")
    assert [f.path for f in s.files] == ["pkg/__init__.py", "pkg/_version.py", "pkg/sub/m.py"]
    assert s.commit == s.upstream_commit == UPSTREAM_SHA
    # no date read off the archive: a wheel dates no commit; the release names its upload time
    assert s.commit_date is None and s.source == "pypi:pkg==1.0"
    assert s.release is not None and s.release.model_dump() == {
        "package": "pkg",
        "version": "1.0",
        "uploaded": "2025-02-04T00:00:00+00:00",
        "wheel": w.name,
        "commit": "recorded",
    }
    assert {k.path: k.reason for k in s.skipped} == {
        "pkg/link.py": "symlink",
        "pkg/huge.py": "over size limit (5000 > 1000 bytes)",
        "pkg/../evil.py": "unsafe path in archive",
    }
    got = dict((e.path, d) for e, d in s.read(s.files))
    assert got["pkg/__init__.py"] == b"raise ImportError('x')\n"
    r = tmp_path / "g"
    r.mkdir()
    git(r, "init", "-q")
    for e in s.files:
        assert e.blob == hash_object(r, got[e.path]) and e.size == len(got[e.path])
    s.close()


def test_wheel_without_recorded_commit_uses_a_content_hash(tmp_path: Path) -> None:
    w1 = make_wheel(tmp_path / "a.whl", None)
    w2 = make_wheel(tmp_path / "b.whl", "__commit_id__ = commit_id = 'g4ba787ec9'\n")
    s1, s1b, s2 = (wheel_snap(w, package="pkg", version="1.0") for w in (w1, w1, w2))
    assert s1.commit == s1b.commit and len(s1.commit) == 40 and s1.upstream_commit is None
    listing = "".join(f"{e.path}\0{e.blob}\n" for e in s1.files).encode()
    assert s1.commit == hashlib.sha1(listing).hexdigest()
    # the release says its commit is a digest of its files, no commit; no date is made up
    assert s1.source == "pypi:pkg==1.0" and s1.commit_date is None
    assert s1.release is not None and s1.release.commit == "files" and s1.release.uploaded is None
    assert s2.upstream_recorded == "4ba787ec9" and s2.commit != s1.commit
    assert s2.release is not None and s2.release.commit == "files"  # an abbreviated commit is no commit


def test_pypi_uses_the_cached_wheel_without_pip(tmp_path: Path, no_git: None) -> None:
    d = tmp_path / "pypi" / "pkg-1.0"
    d.mkdir(parents=True)
    make_wheel(d / "pkg-1.0-py3-none-any.whl", f"commit_id = '{UPSTREAM_SHA}'\n")
    s = snap(None, pypi="pkg==1.0", cache_dir=tmp_path)
    assert s.commit == UPSTREAM_SHA and s.source == "pypi:pkg==1.0" and s.ref is None


@pytest.mark.slow
def test_pypi_download_needs_network(tmp_path: Path) -> None:
    """Downloads one tiny pure-Python wheel; skips cleanly when the index is unreachable."""
    up = Upstream(name="six", url="https://github.com/benjaminp/six", include=["*.py"])
    try:
        s = snap(None, pypi="six==1.16.0", cache_dir=tmp_path, upstream=up)
    except SourceError as e:
        pytest.skip(f"package index unreachable: {e}")
    assert [f.path for f in s.files] == ["six.py"] and "content hash" in s.source
    assert sorted(p.name for p in (tmp_path / "pypi" / "six-1.16.0").iterdir()) == ["six-1.16.0-py2.py3-none-any.whl"]


def test_wheel_info_reads_project_urls_and_importable_top_level_names(tmp_path: Path) -> None:
    from helpers import wheel

    from crawler.source.wheel import wheel_info

    w = wheel(
        tmp_path / "w.whl",
        {
            "pkg/__init__.py": "",
            "pkg/sub/m.py": "",
            "mod.py": "",
            "we*ird/x.py": "",
            "-x.py": "",
            "pkg-1.0.data/purelib/hidden.py": "",
            "notes.txt": "",
            "data/x.json": "{}",
        },
        name="pkg",
        version="1.0",
        metadata=["Home-page: https://example.com", "Project-URL: Source , https://github.com/o/n", "Project-URL: no comma here"],
    )
    info = wheel_info(w)
    assert info.packages == ["/mod.py", "pkg/**/*.py"]
    assert info.urls == [("Home-page", "https://example.com"), ("Source", "https://github.com/o/n"), ("no comma here", "")]


def test_wheel_info_refuses_odd_metadata_with_one_line(tmp_path: Path) -> None:
    from helpers import wheel

    from crawler.source.wheel import METADATA_MAX_BYTES, wheel_info

    two = wheel(tmp_path / "two.whl", {"other-1.0.dist-info/METADATA": "Name: other\n"}, name="pkg", version="1.0")
    with pytest.raises(SourceError, match="expected one \\*.dist-info/METADATA, found 2"):
        wheel_info(two)
    big = wheel(tmp_path / "big.whl", {}, name="pkg", version="1.0", metadata=["Summary: " + "x" * METADATA_MAX_BYTES])
    with pytest.raises(SourceError, match="METADATA is over"):
        wheel_info(big)


# --------------------------------------------------------------------------- globs

GLOBS = [
    ("vllm/**/*.py", "vllm/a.py", True),
    ("vllm/**/*.py", "vllm/x/y/a.py", True),
    ("vllm/**/*.py", "other/vllm/a.py", False),
    ("vllm/**/*.py", "vllm/a.pyc", False),
    ("*.py", "a.py", True),
    ("*.py", "deep/er/a.py", True),  # no slash: any depth
    ("/*.py", "deep/a.py", False),
    ("/*.py", "a.py", True),
    ("vllm/*.py", "vllm/x/a.py", False),
    ("**/tests/**", "a/tests/b/c.py", True),
    ("tests/", "tests/x.py", True),
    ("tests/", "a/tests/x.py", True),
    ("tests", "tests", True),
    ("vllm/third_party", "vllm/third_party/x/y.py", True),
    ("a?c.py", "abc.py", True),
    ("a?c.py", "a/c.py", False),
    ("[ab].py", "b.py", True),
    ("[!ab].py", "c.py", True),
    ("[!ab].py", "a.py", False),
    ("\\*.py", "*.py", True),
    ("\\*.py", "x.py", False),
    ("**", "anything/at/all", True),
]


@pytest.mark.parametrize("pattern,path,expected", GLOBS)
def test_gitwildmatch(pattern: str, path: str, expected: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is expected


def test_exclude_wins() -> None:
    f = PathFilter(["vllm/**/*.py"], ["vllm/third_party/"])
    assert f("vllm/a.py") and not f("vllm/third_party/x.py")
    assert not PathFilter([], [])("a.py")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_globs_agree_with_pathspec() -> None:
    pathspec = pytest.importorskip("pathspec")
    from hypothesis import given, settings
    from hypothesis import strategies as st

    seg = st.sampled_from(["a", "b", "ab", "*", "?", "**", "a*", "*.py", "[ab]", "x.py"])
    pats = st.lists(seg, min_size=1, max_size=4).map("/".join)
    paths = st.lists(st.sampled_from(["a", "b", "ab", "x.py", "a.py", "c"]), min_size=1, max_size=5).map("/".join)

    @settings(max_examples=1000, deadline=None)
    @given(pats, paths, st.booleans(), st.booleans())
    def check(pat: str, path: str, lead: bool, trail: bool) -> None:
        pat = ("/" if lead else "") + pat + ("/" if trail else "")
        spec = pathspec.PathSpec.from_lines("gitwildmatch", [pat])
        assert bool(glob_regex(pat).fullmatch(path)) == spec.match_file(path), pat

    check()


# --------------------------------------------------------------------------- wheels from a package index

DEMO = "errcat_demo_pkg"


def demo_wheel(directory: Path, message: str = "demo") -> Path:
    """A real, installable wheel of errcat-demo-pkg 1.0, entries stored uncompressed (so a test
    can change their bytes under their CRC)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{DEMO}-1.0-py3-none-any.whl"
    info = f"{DEMO}-1.0.dist-info"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(f"{DEMO}/__init__.py", f"raise ValueError({message!r})\n")
        z.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: errcat-demo-pkg\nVersion: 1.0\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture
def package_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A local package index (a find-links directory) that ``pip download`` reads, and nothing else."""
    index = tmp_path / "index"
    index.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    return index


def pypi_crawl(cli, out: Path):
    return cli("crawl", "--pypi", "errcat-demo-pkg==1.0", "--name", "acme/demo", "--include", f"{DEMO}/**/*.py", "--out", out)


@pytest.mark.slow
def test_a_wheel_with_a_bad_crc_is_one_line_and_is_not_kept(package_index: Path, cli, cache_dir: Path, tmp_path: Path) -> None:
    wheel = demo_wheel(package_index)
    wheel.write_bytes(wheel.read_bytes().replace(b"raise ValueError('demo')", b"raise ValueError('DEMO')"))
    result = pypi_crawl(cli, tmp_path / "out")
    assert result.exit_code == 2, result.output
    # (the metadata is read first, then the files: the wheel may be taken for a cached one and
    # fetched once more before it is refused)
    lines = [line for line in result.stderr.strip().splitlines() if line.startswith("errcat: ")]
    assert len(lines) == 1 and lines[0].startswith("errcat: ") and "Bad CRC-32" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()
    # set aside, where no later run takes it for the cached wheel
    assert [p.parent.name for p in (cache_dir / "pypi").glob("*/*.whl")] == ["errcat-demo-pkg-1.0.damaged"]
    demo_wheel(package_index)  # the index is mended
    assert pypi_crawl(cli, tmp_path / "out").exit_code == 0


def _one_line(result) -> str:
    """The one line of a refused command, without its ``errcat: `` prefix."""
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and "Traceback" not in result.stderr, result.output
    assert [line for line in lines if line.startswith("errcat: ")] == lines[-1:], result.stderr
    return lines[-1].removeprefix("errcat: ")


def test_a_release_the_index_does_not_have_is_no_such_release(package_index: Path, cli, tmp_path: Path) -> None:
    demo_wheel(package_index)
    result = cli("crawl", "--pypi", "errcat-demo-pkg==9.9", "--name", "acme/demo", "--out", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert _one_line(result) == (
        "no such release: errcat-demo-pkg==9.9 is not on the package index (the newest is 1.0); see them all with `pip index versions errcat-demo-pkg`"
    )
    unknown = cli("crawl", "--pypi", "errcat-no-such-pkg==1.0", "--name", "acme/demo", "--out", tmp_path / "out")
    assert _one_line(unknown).startswith("no such package on the package index: errcat-no-such-pkg")


def test_pips_note_on_yanked_versions_is_not_taken_for_its_error() -> None:
    """pip's real stderr for vllm==0.99.0 starts with a note on a yanked version, also as ERROR."""
    from crawler.source.wheel import _pip_failure

    stderr = (
        "ERROR: Ignored the following yanked versions: 0.2.1\n"
        "ERROR: Could not find a version that satisfies the requirement vllm==0.99.0 (from versions: 0.1.4, 0.2.0, 0.33.0)\n"
        "ERROR: No matching distribution found for vllm==0.99.0\n"
    )
    assert _pip_failure("vllm", "0.99.0", stderr).startswith("no such release: vllm==0.99.0 is not on the package index (the newest is 0.33.0)")
    assert _pip_failure("x", "1", "ERROR: Ignored the following yanked versions: 0.2.1\nERROR: HTTP error 503\n") == "pip download x==1: ERROR: HTTP error 503"


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "bad CRC"])
def test_a_damaged_cached_wheel_is_downloaded_again(package_index: Path, cli, cache_dir: Path, tmp_path: Path, damage: str) -> None:
    demo_wheel(package_index)
    assert pypi_crawl(cli, tmp_path / "first").exit_code == 0
    (cached,) = (cache_dir / "pypi").glob("*/*.whl")
    data = cached.read_bytes()
    cached.write_bytes(data[: len(data) // 2] if damage == "truncated" else data.replace(b"'demo'", b"'DEMO'"))
    result = pypi_crawl(cli, tmp_path / "again")
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if " is damaged " in line]
    assert len(said) == 1 and "downloading it again" in said[0] and "Traceback" not in result.stderr
    assert cached.read_bytes() == data
    assert read_tree(tmp_path / "again") == read_tree(tmp_path / "first")


def read_tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_running_pip_leaves_no_pipe_open(tmp_path):
    """The download's progress pipe is closed when pip is done, not left to the collector (which
    warned about it in whichever later test it ran)."""
    import gc
    import sys
    import warnings

    from crawler.base.progress import quiet
    from crawler.source.wheel import _run_pip

    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, stderr = _run_pip([sys.executable, "-c", "print('Progress 5 of 10')"], dict(os.environ), "downloading pkg==1.0", quiet, tmp_path)
        gc.collect()
    assert code == 0 and stderr == b""
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
