"""errcat.toml / [tool.errcat] loading and the rules that say which upstream a crawl is of."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from crawler.base.errors import ConfigError, SourceError, UsageError
from crawler.source.config import VLLM, Config, identify, load_config


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def git_repo(path: Path, origin: str | None) -> Path:
    path.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    if origin:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", origin], check=True, env=env)
    return path


MYLIB = """
[upstreams.mylib]
url = "https://github.com/acme/mylib.git"
include = ["src/**/*.py"]
exclude = ["src/vendor/"]
branch = "trunk"
"""


def test_defaults_without_a_config(tmp_path: Path) -> None:
    cfg = load_config(tmp_path)
    assert cfg.path is None and cfg.default == "vllm"
    up = cfg.default_upstream
    assert (up.url, up.owner, up.repo) == ("https://github.com/vllm-project/vllm", "vllm-project", "vllm")
    assert up.include == ["vllm/**/*.py"] and up.pypi == "vllm" and up.version_file == "vllm/_version.py"


def test_errcat_toml(tmp_path: Path) -> None:
    write(tmp_path / "errcat.toml", 'default = "mylib"\n' + MYLIB)
    cfg = load_config(tmp_path)
    assert cfg.path == tmp_path / "errcat.toml" and set(cfg.upstreams) == {"vllm", "mylib"}
    up = cfg.default_upstream
    assert (up.name, up.url, up.owner, up.repo, up.branch) == ("mylib", "https://github.com/acme/mylib", "acme", "mylib", "trunk")
    assert up.include == ["src/**/*.py"] and up.exclude == ["src/vendor/"]
    assert load_config(tmp_path / "errcat.toml").default == "mylib"  # a file path works too


def test_pyproject_tool_errcat(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n\n' + MYLIB.replace("[upstreams.", "[tool.errcat.upstreams."))
    cfg = load_config(tmp_path)
    assert cfg.path == tmp_path / "pyproject.toml" and "mylib" in cfg.upstreams and cfg.default == "vllm"


def test_pyproject_without_tool_errcat_is_ignored(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    assert load_config(tmp_path).path is None


def test_errcat_toml_wins_over_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.errcat]\nbogus = 1\n")
    write(tmp_path / "errcat.toml", MYLIB)
    assert "mylib" in load_config(tmp_path).upstreams


def test_vllm_can_be_redefined(tmp_path: Path) -> None:
    write(tmp_path / "errcat.toml", '[upstreams.vllm]\nurl = "https://github.com/vllm-project/vllm"\ninclude = ["vllm/v1/**/*.py"]\n')
    assert load_config(tmp_path).upstreams["vllm"].include == ["vllm/v1/**/*.py"]


@pytest.mark.parametrize(
    "text,problem",
    [
        ("default = \n", "not valid TOML"),
        ("colour = 'red'\n", "unknown key(s) colour"),
        ("upstreams = 3\n", "'upstreams' must be a table"),
        ("[upstreams]\nx = 1\n", "upstreams.x must be a table"),
        ("[upstreams.x]\ninclude = ['a']\n", "upstreams.x.url"),
        ("[upstreams.x]\nurl = 'ssh://git@github.com/a/b'\n", "only https://"),
        ("[upstreams.x]\nurl = 'https://github.com/a/b'\ncolour = 1\n", "upstreams.x.colour"),
        ("[upstreams.x]\nurl = 'https://github.com/a/b'\ninclude = 'a'\n", "upstreams.x.include"),
        ("[upstreams.x]\nurl = 'https://github.com/a/b'\ninclude = ['!a']\n", "bad glob"),
        ("[upstreams.x]\nurl = 'https://github.com/a/b'\nversion_pattern = '('\n", "not a regular expression"),
        ("[upstreams.x]\nurl = 'https://github.com/a/b'\nversion_pattern = 'x'\n", "capturing group"),
        ("default = 'nope'\n", "default 'nope' is not a configured upstream"),
    ],
)
def test_bad_config_names_the_file_and_problem(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path / "errcat.toml", text)
    with pytest.raises(ConfigError) as ei:
        load_config(tmp_path)
    msg = str(ei.value)
    assert msg.startswith(str(path)) and problem in msg and "\n" not in msg


def test_bad_pyproject_names_the_table(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.errcat]\ncolour = 1\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml \[tool.errcat\]: unknown key"):
        load_config(tmp_path)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.toml")


# --------------------------------------------------------------------------- identify


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    write(tmp_path / "errcat.toml", MYLIB)
    return load_config(tmp_path)


def test_default_when_nothing_given(cfg: Config) -> None:
    assert identify(None, None, None, cfg) == VLLM


def test_upstream_by_name(cfg: Config) -> None:
    assert identify(None, "mylib", None, cfg).name == "mylib"
    assert identify("https://github.com/someone/fork", "mylib", None, cfg).name == "mylib"
    with pytest.raises(UsageError, match="unknown upstream 'nope'"):
        identify(None, "nope", None, cfg)


@pytest.mark.parametrize("url", ["https://github.com/acme/mylib", "https://GitHub.com/Acme/MyLib.git", "https://github.com/acme/mylib/"])
def test_url_matching_a_configured_upstream(cfg: Config, url: str) -> None:
    assert identify(url, None, None, cfg).name == "mylib"


def test_url_not_configured_takes_identity_from_url(cfg: Config) -> None:
    up = identify("https://gitlab.example.com/group/tool.git", None, None, cfg)
    assert (up.url, up.owner, up.repo, up.include) == ("https://gitlab.example.com/group/tool", "group", "tool", ["**/*.py"])
    assert up.pypi is None and up.version_file is None


@pytest.mark.parametrize("bad", ["git@github.com:acme/mylib.git", "ssh://github.com/acme/mylib", "ext::sh", "http://github.com/a/b", "--upload-pack=x"])
def test_refused_urls(cfg: Config, bad: str) -> None:
    with pytest.raises(SourceError, match="refusing"):
        identify(bad, None, None, cfg)


@pytest.mark.parametrize(
    "origin", ["https://github.com/acme/mylib.git", "git@github.com:acme/mylib.git", "ssh://git@github.com/acme/mylib", "https://github.com/ACME/mylib"]
)
def test_local_path_origin_matching_config(cfg: Config, tmp_path: Path, origin: str) -> None:
    r = git_repo(tmp_path / "clone", origin)
    assert identify(str(r), None, None, cfg).name == "mylib"


def test_local_path_origin_elsewhere(cfg: Config, tmp_path: Path) -> None:
    r = git_repo(tmp_path / "clone", "git@gitlab.example.com:group/tool.git")
    up = identify(str(r), None, None, cfg)
    assert (up.url, up.owner, up.repo, up.include) == ("https://gitlab.example.com/group/tool", "group", "tool", ["**/*.py"])


@pytest.mark.parametrize("origin", [None, "/some/local/path", "file:///x/y"])
def test_local_path_without_usable_origin_is_the_default(cfg: Config, tmp_path: Path, origin: str | None) -> None:
    r = git_repo(tmp_path / "clone", origin)
    assert identify(str(r), None, None, cfg) == VLLM
    assert identify(str(tmp_path / "not-there"), None, None, cfg) == VLLM  # open_snapshot reports it


def test_name_override(cfg: Config) -> None:
    up = identify(None, None, "me/vllm-fork", cfg)
    assert (up.owner, up.repo, up.url) == ("me", "vllm-fork", "https://github.com/me/vllm-fork")
    assert up.include == VLLM.include  # everything else stays
    for bad in ("justone", "a/b/c", "../x", "a/..", "-x/y", "acme/.", "./.", "a_b/c"):
        with pytest.raises(UsageError, match="expected OWNER/NAME"):
            identify(None, None, bad, cfg)


# --------------------------------------------------------------------------- GitHub identities

IDENTITIES = [
    ("a", "b", True),
    ("A-b-C9", "x.y_z-1", True),
    ("a" * 39, "n" * 100, True),
    ("acme", "...", True),
    ("acme", ".github", True),
    ("a" * 40, "n", False),
    ("acme", "n" * 101, False),
    ("-acme", "n", False),
    ("acme-", "n", False),
    ("ac--me", "n", False),
    ("a_b", "n", False),
    ("a.b", "n", False),
    ("", "n", False),
    ("acme", "", False),
    ("acme", ".", False),
    ("acme", "..", False),
    ("acme", "a/b", False),
    ("acme", "a b", False),
    ("acme", "n\n", False),
    ("ácme", "n", False),
    ("acme", "ñ", False),
]


@pytest.mark.parametrize("owner, name, valid", IDENTITIES)
def test_one_identity_pattern_for_the_checks_the_models_and_the_schema(owner: str, name: str, valid: bool) -> None:
    import jsonschema
    import jsonschema_rs

    from crawler.model.records import Provenance, RepoRef, identity_problem
    from crawler.model.schemas import schema_for

    assert (identity_problem(owner, name) is None) == valid
    try:
        RepoRef(url="https://github.com/x/y", owner=owner, name=name)
        assert valid
    except ValueError:
        assert not valid
    record = schema_for("record")
    slug = record["$defs"]["Provenance"]["properties"]["repo"]
    ref = {**record["$defs"]["RepoRef"], "$defs": record["$defs"]}
    for schema, value in ((slug, f"{owner}/{name}"), (ref, {"url": "https://github.com/x/y", "owner": owner, "name": name})):
        assert jsonschema.Draft202012Validator(schema).is_valid(value) == valid
        assert jsonschema_rs.validator_for(schema).is_valid(value) == valid
    assert "pattern" not in Provenance.model_fields["repo"].metadata  # the one pattern lives in models' constants


@pytest.mark.parametrize(
    "text, problem",
    [
        ('owner = "../../tmp/x"', "upstreams.x.owner: '../../tmp/x' is not a GitHub owner"),
        ('repo = ".."', "upstreams.x.repo: '..' is not a GitHub repository name"),
        ('tag = "v"', "tag needs {version}"),
        ('tag = "v{version}{version}"', "tag needs {version}"),
        ('tag = "{version.__class__}"', "tag needs {version}"),
        ('tag = "v {version}"', "does not make a git tag name"),
        ('tag = "-{version}"', "does not make a git tag name"),
        ('path_prefix = "../src"', "is not a relative directory"),
        ('path_prefix = "/src"', "is not a relative directory"),
        ('path_prefix = "src/*"', "is not a relative directory"),
    ],
)
def test_identity_tag_and_prefix_are_checked_in_the_config(tmp_path: Path, text: str, problem: str) -> None:
    write(tmp_path / "errcat.toml", f'[upstreams.x]\nurl = "https://github.com/acme/x"\n{text}\n')
    with pytest.raises(ConfigError, match=re.escape(problem)):
        load_config(tmp_path)


def test_tag_and_prefix_read_from_the_config(tmp_path: Path) -> None:
    write(tmp_path / "errcat.toml", '[upstreams.x]\nurl = "https://github.com/acme/x"\ntag = "release/{version}"\npath_prefix = "src/lib"\n')
    up = load_config(tmp_path).upstreams["x"]
    assert up.tag_of("1.2.3") == "release/1.2.3" and up.path_prefix == "src/lib/"
    assert VLLM.tag_of("0.33.0") == "v0.33.0" and VLLM.path_prefix == ""


FUNDING = ("Funding", "https://github.com/sponsors/someone")


@pytest.mark.parametrize(
    "urls, found",
    [
        ([FUNDING, ("Homepage", "https://github.com/pydantic/pydantic"), ("Source", "https://github.com/pydantic/pydantic")], ("pydantic", "pydantic")),
        ([("Home-page", "https://github.com/huggingface/transformers")], ("huggingface", "transformers")),
        ([("Changelog", "https://github.com/o/n/releases"), ("Source", "http://www.github.com/o/n.git")], ("o", "n")),
        ([("Homepage", "https://github.com/o/site"), ("Repository", "https://github.com/o/code")], ("o", "code")),
        ([FUNDING, ("Docs", "https://o.github.io/n"), ("Source", "https://gitlab.com/o/n")], None),
        ([("Source", "https://github.com/a_b/n"), ("Source", "https://github.com/o/..")], None),
        ([("Source", "https://github.com/o"), ("Source", "ftp://github.com/o/n"), ("Source", "https://[::1/o/n")], None),
    ],
)
def test_a_packages_repository_from_its_project_urls(urls: list[tuple[str, str]], found: tuple[str, str] | None) -> None:
    from crawler.source.config import github_identity

    assert github_identity(urls, "pkg==1") == found


def test_a_package_naming_two_repositories_equally_is_refused() -> None:
    from crawler.source.config import github_identity

    with pytest.raises(UsageError, match=r"pkg==1: its metadata names several GitHub repositories \(a/x, b/y\)"):
        github_identity([("Source", "https://github.com/b/y"), ("Code", "https://github.com/a/x")], "pkg==1")


def test_a_configured_upstream_is_found_by_its_package_name(cfg: Config, tmp_path: Path) -> None:
    from crawler.source.config import identify_package

    def unused():
        raise AssertionError("a configured package needs no metadata")

    write(tmp_path / "errcat.toml", MYLIB + 'pypi = "My_Lib"\n')
    cfg = load_config(tmp_path)
    assert identify_package("my.lib==1.0", None, None, cfg, unused).name == "mylib"
    assert identify_package("VLLM==0.33.0", None, None, cfg, unused) == VLLM
    assert identify_package("anything==1", "mylib", "me/fork", cfg, unused).slug == "me/fork"
