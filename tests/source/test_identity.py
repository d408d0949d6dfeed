"""Which repository a crawl is of, where its dataset goes, and where its permalinks lead.

Issue #12.2: an identity is a GitHub OWNER/NAME wherever it comes from (a config file, --name, a
remote URL, a wheel's metadata), and a crawl only ever replaces its own <out>/<owner>/<name>/.
Issue #13: a package that is not the configured upstream never takes over the upstream's
dataset; a crawl that selects nothing publishes nothing; permalinks name a revision the
repository has (the recorded commit, else the configured tag) or are null, with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cached_wheel, jsonl_bytes

from crawler.base.errors import UsageError
from crawler.base.layout import dataset_dir
from crawler.catalogue.entries import Identity
from crawler.model.records import Manifest, RepoRef
from crawler.source.config import VLLM
from crawler.source.globs import PathFilter

CODE = "def check(x):\n    if x is None:\n        raise ValueError(f'no value for {x}')\n"
SHA = "4ba787ec9" + "0" * 31


def read_tree(directory: Path) -> dict[str, bytes]:
    if not directory.exists():
        return {}
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("errcat: ") and "Traceback" not in result.stderr, result.stderr
    assert sum(line.startswith("errcat: ") for line in lines) == 1, result.stderr
    return lines[-1]


def records(dataset: Path) -> list[dict]:
    return [json.loads(line) for line in jsonl_bytes(dataset).splitlines()]


# --------------------------------------------------------------------------- #12.2 path traversal


@pytest.fixture
def two_datasets(fixture_repo, cli, tmp_path):
    """out/acme/alpha and out/acme/beta, crawled from one repository."""
    fixture_repo.commit({"pkg/a.py": CODE}, tag="v1")
    out = tmp_path / "out"
    for name in ("alpha", "beta"):
        result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", f"acme/{name}", "--include", "pkg/**/*.py", "--out", out)
        assert result.exit_code == 0, result.output
    return fixture_repo, out


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["acme/.", "./.", "acme/..", "../acme", "acme/alpha/..", "a--b/c", "-acme/x", "acme-/x", "a" * 40 + "/x", "acme/" + "x" * 101, "acme/x\n", "acme/x y"],
)
@pytest.mark.parametrize("no_cache", [False, True])
def test_name_cannot_reach_outside_its_own_dataset(two_datasets, cli, tmp_path, name, no_cache):
    repo, out = two_datasets
    before = read_tree(tmp_path)
    result = cli("crawl", "--repo", repo.path, "--ref", "v1", "--name", name, "--include", "pkg/**/*.py", "--out", out, *(["--no-cache"] if no_cache else []))
    assert "--name" in one_line_error(result) and "OWNER/NAME" in result.stderr
    assert read_tree(tmp_path) == before


@pytest.mark.parametrize("key, value", [("owner", "../../escaped"), ("repo", ".."), ("owner", "acme/../.."), ("repo", "x/../../y")])
def test_a_hostile_config_identity_is_refused_before_anything_is_written(fixture_repo, cli, tmp_path, monkeypatch, key, value):
    """A checkout's own pyproject.toml names its identity; crawled with `--repo .` as the README shows."""
    fixture_repo.commit(
        {
            "pkg/a.py": CODE,
            "pyproject.toml": f'''
        [tool.errcat]
        default = "x"

        [tool.errcat.upstreams.x]
        url = "https://github.com/acme/x"
        {key} = "{value}"
        include = ["pkg/**/*.py"]
        ''',
        },
        tag="v1",
    )
    monkeypatch.chdir(fixture_repo.path)
    before = read_tree(tmp_path)
    error = one_line_error(cli("crawl", "--repo", ".", "--out", tmp_path / "out"))
    assert "pyproject.toml [tool.errcat]: upstreams.x." + key in error and "is not a GitHub" in error
    assert read_tree(tmp_path) == before and not (tmp_path / "out").exists()


def test_a_remote_url_that_is_no_github_identity_is_refused_before_git_runs(cli, tmp_path, no_git):
    error = one_line_error(cli("crawl", "--repo", "https://example.com/a_b/tool", "--out", tmp_path / "out"))
    assert "refusing repository" in error and "'a_b' is not a GitHub owner" in error and "--name" in error


def test_an_origin_that_is_no_github_identity_needs_a_name(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/a.py": CODE}, tag="v1")
    fixture_repo.repo.create_remote("origin", "https://github.com/acme/widgets.git/..")
    out = tmp_path / "out"
    error = one_line_error(cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--out", out))
    assert "origin remote names no GitHub repository" in error and "--name OWNER/NAME" in error
    assert not out.exists()
    ok = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--out", out)
    assert ok.exit_code == 0, ok.output
    assert (out / "acme" / "widgets" / "manifest.json").is_file()


@pytest.mark.parametrize("owner, name", [("acme", "."), (".", "."), ("acme", ".."), ("..", "x"), ("acme/x", "y"), ("acme", "x/y"), ("", "x")])
def test_dataset_and_curated_directories_are_only_ever_an_identity(tmp_path, owner, name):
    # one function names both: <out>/<owner>/<name> and <curated>/<owner>/<name>
    with pytest.raises(UsageError, match="is not a GitHub"):
        dataset_dir(tmp_path, owner, name)
    with pytest.raises(ValueError, match="is not a GitHub"):
        RepoRef(url="https://github.com/x/y", owner=owner, name=name)
    assert dataset_dir(tmp_path, "acme", "x.y") == tmp_path / "acme" / "x.y"


def test_a_dataset_that_names_a_hostile_identity_is_refused_when_read(tmp_path, fixture_repo, cli):
    """`errcat curate` builds curated/<owner>/<name>/ from a dataset's manifest: the manifest's
    identity is checked when it is read."""
    fixture_repo.commit({"pkg/a.py": CODE}, tag="v1")
    out = tmp_path / "out"
    cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out)
    path = out / "acme" / "widgets" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["repo"]["name"] = ".."
    with pytest.raises(ValueError, match="is not a GitHub repository name"):
        Manifest.model_validate(manifest)
    path.write_text(json.dumps(manifest))
    assert cli("validate", out).exit_code == 1


# --------------------------------------------------------------------------- #13.2 another package, nothing selected


@pytest.fixture
def vllm_dataset(fixture_repo, cli, tmp_path):
    """The built-in upstream's dataset (a local repository without origin is taken as vLLM)."""
    fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE}, tag="v1")
    out = tmp_path / "out"
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--out", out)
    assert result.exit_code == 0, result.output
    assert (out / "vllm-project" / "vllm" / "manifest.json").is_file()
    return out


FUNDING = "Project-URL: Funding, https://github.com/sponsors/someone"


@pytest.mark.slow
def test_a_package_that_is_not_the_upstream_leaves_the_upstreams_dataset(vllm_dataset, cli, cache_dir, tmp_path):
    out = vllm_dataset
    before = read_tree(out / "vllm-project")
    cached_wheel(
        cache_dir,
        {"other/__init__.py": CODE, "other/sub/m.py": "raise KeyError('k')\n", "single.py": CODE, "other-1.0.data/scripts/tool.py": CODE},
        name="other",
        version="1.0",
        metadata=[FUNDING, "Project-URL: Homepage, https://other.example.com", "Project-URL: Source, https://github.com/Some-One/other.py"],
    )
    result = cli("crawl", "--pypi", "other==1.0", "--out", out)
    assert result.exit_code == 0, result.output
    assert read_tree(out / "vllm-project") == before
    manifest = json.loads((out / "Some-One" / "other.py" / "manifest.json").read_text())
    assert manifest["repo"] == {"url": "https://github.com/Some-One/other.py", "owner": "Some-One", "name": "other.py"}
    assert manifest["include"] == ["/single.py", "other/**/*.py"] and manifest["exclude"] == []
    assert manifest["counts"]["files"] == 3


@pytest.mark.slow
def test_a_package_whose_metadata_names_no_github_repository_asks_for_a_name(vllm_dataset, cli, cache_dir, tmp_path):
    out = vllm_dataset
    before = read_tree(out)
    upstreams = read_tree(out / "vllm-project")
    cached_wheel(
        cache_dir,
        {"tool/__init__.py": CODE},
        name="tool",
        version="2.0",
        metadata=["Home-page: https://gitlab.com/group/tool", FUNDING, "Project-URL: Source, https://github.com/a_b/tool"],
    )
    error = one_line_error(cli("crawl", "--pypi", "tool==2.0", "--out", out))
    assert "tool==2.0 is not a configured upstream" in error and "--name OWNER/NAME" in error
    assert read_tree(out) == before
    result = cli("crawl", "--pypi", "tool==2.0", "--name", "group/tool", "--out", out)
    assert result.exit_code == 0, result.output
    assert json.loads((out / "group" / "tool" / "manifest.json").read_text())["include"] == ["tool/**/*.py"]
    assert read_tree(out / "vllm-project") == upstreams


@pytest.mark.slow
@pytest.mark.parametrize("how", ["include", "pypi"])
def test_a_crawl_that_selects_no_file_publishes_nothing(vllm_dataset, cli, cache_dir, fixture_repo, how):
    out = vllm_dataset
    before = read_tree(out)
    if how == "include":
        result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--include", "docs/**/*.py", "--out", out)
        globs = "--include docs/**/*.py --exclude vllm/**/third_party/"
    else:  # the upstream's own package, but a release that holds none of its files
        cached_wheel(cache_dir, {"other/__init__.py": CODE}, name="vllm", version="9.9")
        result = cli("crawl", "--pypi", "vllm==9.9", "--out", out)
        globs = "--include vllm/**/*.py --exclude vllm/**/third_party/"
    error = one_line_error(result)
    assert "no file of " in error and globs in error and "nothing was written" in error
    assert read_tree(out) == before


# --------------------------------------------------------------------------- #13.3 permalinks

CONFIG = """
[upstreams.pkg]
url = "https://github.com/acme/pkg"
pypi = "pkg"
include = ["src/pkg/**/*.py"]
exclude = ["src/pkg/vendored/"]
version_file = "src/pkg/_version.py"
{extra}
"""


def crawl_release(cli, cache_dir, tmp_path, *, extra: str = "", version_line: str | None = None, name: str = "pkg"):
    files = {"pkg/__init__.py": "", "pkg/core.py": CODE, "pkg/vendored/x.py": CODE}
    if version_line is not None:
        files["pkg/_version.py"] = version_line
    cached_wheel(cache_dir, files, name=name, version="1.0")
    config = tmp_path / "errcat.toml"
    config.write_text(CONFIG.format(extra=extra))
    out = tmp_path / "out"
    result = cli("crawl", "--pypi", f"{name}==1.0", "--config", config, "--out", out)
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "pkg"
    (record,) = [r for r in records(dataset) if r["location"]["path"] == "pkg/core.py"]
    return dataset, record


@pytest.mark.parametrize(
    "extra, version_line, basis, rev, link",
    [
        ('tag = "v{version}"\npath_prefix = "src/"', None, "tag", "v1.0", "https://github.com/acme/pkg/blob/v1.0/src/pkg/core.py#L3"),
        (
            'tag = "release-{version}"\npath_prefix = "src"',
            f"commit_id = '{SHA}'\n",
            "commit",
            SHA,
            f"https://github.com/acme/pkg/blob/{SHA}/src/pkg/core.py#L3",
        ),
        ('path_prefix = "src/"', "commit_id = 'g4ba787ec9'\n", "commit", "4ba787ec9", "https://github.com/acme/pkg/blob/4ba787ec9/src/pkg/core.py#L3"),
    ],
)
def test_a_permalink_names_the_recorded_commit_else_the_configured_tag(cli, cache_dir, tmp_path, extra, version_line, basis, rev, link):
    dataset, record = crawl_release(cli, cache_dir, tmp_path, extra=extra, version_line=version_line)
    assert record["provenance"]["permalinks"] == {"basis": basis, "rev": rev}
    assert record["location"]["permalink"] == link and record["sites"][0]["permalink"] == link
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["counts"]["files"] == 2 + (version_line is not None)  # globs are the repository's paths


def test_without_a_recorded_commit_or_a_tag_pattern_there_is_no_permalink_and_the_page_says_why(cli, cache_dir, tmp_path):
    dataset, record = crawl_release(cli, cache_dir, tmp_path, extra='path_prefix = "src/"')
    links = record["provenance"]["permalinks"]
    assert links["basis"] == "none" and "names no commit or tag of acme/pkg" in links["reason"]
    assert "errcat.toml" not in links["reason"] and "the code shown is the released package's own" in links["reason"]
    assert record["location"]["permalink"] is None and all(s["permalink"] is None for s in record["sites"])
    assert cli("validate", dataset).exit_code == 0
    shown = cli("show", record["id"], "--data", dataset)
    assert shown.exit_code == 0 and f"no permalink: {links['reason']}" in shown.stdout
    for fmt, page in (("html", "errors/{}.html"), ("markdown", "errors/{}.md")):
        site = tmp_path / f"site-{fmt}"
        assert cli("render", "--data", dataset, "--out", site, "--format", fmt).exit_code == 0
        text = (site / page.format(record["id"])).read_text()
        assert "no permalink" in text and "names no commit or tag" in text and "view on GitHub" not in text
        assert "errcat.toml" not in text


def test_a_release_without_permalinks_says_how_to_get_them_on_the_command_line(cli, cache_dir, tmp_path):
    """The fix is the maintainer's to make, so the hint goes to the command line, not the page."""
    files = {"pkg/__init__.py": "", "pkg/core.py": CODE}
    cached_wheel(cache_dir, files, name="pkg", version="1.0")
    config = tmp_path / "errcat.toml"
    config.write_text(CONFIG.format(extra='path_prefix = "src/"'))
    result = cli("crawl", "--pypi", "pkg==1.0", "--config", config, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    (note,) = [line for line in result.stderr.splitlines() if line.startswith("note: the pages will have no links")]
    assert "https://github.com/acme/pkg" in note and 'tag = "v{version}"' in note and "like v1.0" in note
    assert "errcat crawl --repo URL --ref TAG" in note
    tagged = tmp_path / "tagged.toml"
    tagged.write_text(CONFIG.format(extra='path_prefix = "src/"\ntag = "v{version}"'))
    again = cli("crawl", "--pypi", "pkg==1.0", "--config", tagged, "--out", tmp_path / "out2")
    assert again.exit_code == 0 and "no links" not in again.stderr


def test_a_local_repository_named_with_name_gets_a_plain_python_projects_globs(cli, fixture_repo, tmp_path):
    """vLLM's globs (vllm/**/*.py) found nothing of a project of one's own: --name makes it its own."""
    fixture_repo.commit({"toy/__init__.py": "", "toy/core.py": CODE}, tag="t1")
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "t1", "--name", "me/toy", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "me" / "toy" / "manifest.json").read_text())
    assert manifest["include"] == ["**/*.py"] and manifest["exclude"] == [] and manifest["counts"]["entries"] == 1
    # naming the configured upstream's repository keeps its globs
    named = cli("crawl", "--repo", fixture_repo.path, "--ref", "t1", "--name", "vllm-project/vllm", "--out", tmp_path / "v")
    assert named.exit_code == 2 and "no file of " in one_line_error(named) and "--include vllm/**/*.py" in one_line_error(named)


def test_the_same_inputs_with_another_tag_pattern_are_crawled_again(cli, cache_dir, tmp_path):
    _, record = crawl_release(cli, cache_dir, tmp_path, extra='path_prefix = "src/"')
    assert record["location"]["permalink"] is None
    _, record = crawl_release(cli, cache_dir, tmp_path, extra='path_prefix = "src/"\ntag = "v{version}"')
    assert record["location"]["permalink"] == "https://github.com/acme/pkg/blob/v1.0/src/pkg/core.py#L3"


def test_permalinks_quote_the_path_and_exist_only_on_github():
    from crawler.source.snapshot import permalinks_of

    github = RepoRef(url="https://github.com/o/n", owner="o", name="n")
    identity = Identity(github, "c" * 40, "2026-01-01T00:00:00+00:00", None, "git", permalinks_of(github, "c" * 40), "src/")
    assert identity.permalink("pkg/we#ird file?%.py", 3) == f"https://github.com/o/n/blob/{'c' * 40}/src/pkg/we%23ird%20file%3F%25.py#L3"
    elsewhere = RepoRef(url="https://gitlab.example.com/o/n", owner="o", name="n")
    links = permalinks_of(elsewhere, "c" * 40)
    assert links["basis"] == "none" and "not on GitHub (gitlab.example.com)" in links["reason"]
    assert Identity(elsewhere, "c" * 40, "2026-01-01T00:00:00+00:00", None, "git", links).permalink("a.py", 1) is None


# --------------------------------------------------------------------------- #13.4 vendored and generated code

#: The trees a vLLM 0.33.0 wheel and its git tag differ by, and the vendored ones both hold.
VENDORED = [
    "vllm/third_party/fmha_sm100/interface.py",
    "vllm/third_party/tml_fa4/a.py",
    "vllm/third_party/triton_kernels/b.py",
    "vllm/third_party/deep_gemm/c.py",
    "vllm/third_party/flashmla/flash_mla_interface.py",
    "vllm/third_party/flash_linear_attention/ops/chunk.py",
    "vllm/third_party/pynvml.py",
    "vllm/models/kimi_k3/amd/ops/third_party/kda/chunk.py",
    "vllm/vllm_flash_attn/cute/interface.py",
    "vllm/vllm_flash_attn/flash_attn_interface.py",
    "vllm/vllm_flash_attn/__init__.py",
    "vllm/_version.py",
]
OWN = ["vllm/config.py", "vllm/model_executor/kernels/linear/mxfp4/rdna3_hip.py", "vllm/third_party_utils.py", "vllm/utils/third_party.py"]


def test_the_built_in_vllm_upstream_leaves_out_vendored_and_generated_code():
    select = PathFilter(VLLM.include, VLLM.exclude)
    assert [p for p in VENDORED if select(p)] == [] and [p for p in OWN if select(p)] == OWN


@pytest.mark.slow
def test_a_vllm_wheel_and_its_git_tag_give_the_same_catalogue(fixture_repo, cli, cache_dir, tmp_path):
    tree = {
        "vllm/__init__.py": "",
        "vllm/config.py": CODE,
        "vllm/third_party/pynvml.py": CODE.replace("no value", "nvml"),
        "vllm/models/k/ops/third_party/kda.py": CODE.replace("no value", "kda"),
        "vllm/vllm_flash_attn/flash_attn_interface.py": CODE.replace("no value", "fa"),
    }
    fixture_repo.commit(tree, tag="v0.0.1")
    built = {
        "vllm/third_party/fmha_sm100/x.py": CODE.replace("no value", "fmha"),
        "vllm/vllm_flash_attn/cute/y.py": CODE.replace("no value", "cute"),
        "vllm/_version.py": "__commit_id__ = commit_id = 'g4ba787ec9'\nraise ValueError('generated')\n",
    }
    cached_wheel(cache_dir, {**tree, **built}, name="vllm", version="0.0.1")
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v0.0.1", "--out", tmp_path / "git").exit_code == 0
    assert cli("crawl", "--pypi", "vllm==0.0.1", "--out", tmp_path / "pypi").exit_code == 0
    git_side, wheel_side = (records(tmp_path / side / "vllm-project" / "vllm") for side in ("git", "pypi"))
    assert [(r["id"], r["location"]["path"]) for r in git_side] == [(r["id"], r["location"]["path"]) for r in wheel_side]
    assert {r["location"]["path"] for r in git_side} == {"vllm/config.py"}
    # the version file is read for the upstream commit, though it is not catalogued
    assert wheel_side[0]["provenance"]["permalinks"] == {"basis": "commit", "rev": "4ba787ec9"}
