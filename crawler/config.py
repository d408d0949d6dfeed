"""errcat configuration: the upstreams errcat knows, from ``errcat.toml`` or ``[tool.errcat]``.

Shape (``errcat.toml`` top level, or ``[tool.errcat]`` in ``pyproject.toml``)::

    default = "vllm"                      # optional; the upstream used when nothing says otherwise

    [upstreams.vllm]                      # [tool.errcat.upstreams.vllm] in pyproject.toml
    url = "https://github.com/vllm-project/vllm"
    include = ["vllm/**/*.py"]
    exclude = []
    branch = "main"
    pypi = "vllm"
    version_file = "vllm/_version.py"
    max_output_bytes = 52428800           # limits (see models.Limits), each optional:
    max_file_sites = 1000                 #   crawl options override them
    max_file_bytes = 2000000

``owner``/``repo`` default to the URL's last two path segments. The built-in ``vllm`` upstream
is always present unless the file redefines it.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import ConfigError, SourceError, UsageError

# vcs-versioning / setuptools-scm style: `__commit_id__ = commit_id = 'g4ba787ec9'` or a full id.
DEFAULT_VERSION_PATTERN = r"""^\s*(?:__commit_id__|commit_id|__commit__)\b[^=\n]*=\s*(?:[A-Za-z_]\w*\s*=\s*)*['"]g?([0-9a-fA-F]{7,40})['"]"""


class Upstream(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    url: str
    owner: str
    repo: str
    branch: str | None = None
    include: list[str] = Field(default_factory=lambda: ["**/*.py"])
    exclude: list[str] = Field(default_factory=list)
    pypi: str | None = None
    version_file: str | None = None
    version_pattern: str = DEFAULT_VERSION_PATTERN
    # limits (models.Limits): None is the default; a crawl option overrides either
    max_file_bytes: int | None = Field(default=None, ge=1)
    max_file_sites: int | None = Field(default=None, ge=1)
    max_output_bytes: int | None = Field(default=None, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _identity_from_url(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("url"), str):
            from .source import parse_https_url

            try:
                remote = parse_https_url(data["url"])
            except SourceError as e:
                raise ValueError(str(e)) from None
            data = {**data, "url": remote.url}
            data.setdefault("owner", remote.owner)
            data.setdefault("repo", remote.name)
        return data

    @model_validator(mode="after")
    def _check(self) -> Upstream:
        from .source import PathFilter

        try:
            PathFilter(self.include, self.exclude)
        except UsageError as e:
            raise ValueError(str(e)) from None
        try:
            if re.compile(self.version_pattern).groups < 1:
                raise ValueError("version_pattern needs one capturing group (the commit)")
        except re.error as e:
            raise ValueError(f"version_pattern is not a regular expression: {e}") from None
        return self

    @property
    def slug(self) -> str:
        return f"{self.owner}/{self.repo}"


VLLM = Upstream(
    name="vllm",
    url="https://github.com/vllm-project/vllm",
    branch="main",
    include=["vllm/**/*.py"],
    pypi="vllm",
    version_file="vllm/_version.py",
)


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default: str = "vllm"
    upstreams: dict[str, Upstream] = Field(default_factory=lambda: {"vllm": VLLM})
    path: Path | None = None  # the file it came from, for messages

    @property
    def default_upstream(self) -> Upstream:
        return self.upstreams[self.default]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None


def _find(start: Path) -> tuple[Path | None, dict[str, Any] | None]:
    if start.is_file():
        data = _read_toml(start)
        if start.name == "pyproject.toml":
            return start, data.get("tool", {}).get("errcat", {})
        return start, data
    if start.is_dir():
        if (start / "errcat.toml").is_file():
            return start / "errcat.toml", _read_toml(start / "errcat.toml")
        pp = start / "pyproject.toml"
        if pp.is_file():
            tool = _read_toml(pp).get("tool", {})
            if isinstance(tool, dict) and "errcat" in tool:
                return pp, tool["errcat"]
        return None, None
    raise ConfigError(f"{start}: no such config file")


def load_config(path: Path | str | None = None) -> Config:
    """Read errcat.toml (or [tool.errcat] of pyproject.toml) from ``path`` (file or dir; default cwd)."""
    src, data = _find(Path(path) if path is not None else Path.cwd())
    if src is None or data is None:
        return Config()
    where = f"{src}" + ("" if src.name == "errcat.toml" else " [tool.errcat]")
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a table")
    unknown = set(data) - {"default", "upstreams"}
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (expected default, upstreams)")
    ups_raw = data.get("upstreams", {})
    if not isinstance(ups_raw, dict):
        raise ConfigError(f"{where}: 'upstreams' must be a table of tables")
    upstreams: dict[str, Upstream] = {"vllm": VLLM}
    for name, body in ups_raw.items():
        if not isinstance(body, dict):
            raise ConfigError(f"{where}: upstreams.{name} must be a table")
        try:
            upstreams[name] = Upstream(**{"name": name, **body})
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(x) for x in err["loc"]) or "(table)"
            raise ConfigError(f"{where}: upstreams.{name}.{loc}: {err['msg'].removeprefix('Value error, ')}") from None
        except TypeError as e:
            raise ConfigError(f"{where}: upstreams.{name}: {e}") from None
    default = data.get("default", "vllm")
    if not isinstance(default, str) or default not in upstreams:
        raise ConfigError(f"{where}: default {default!r} is not a configured upstream ({', '.join(sorted(upstreams))})")
    return Config(default=default, upstreams=upstreams, path=src)


# --------------------------------------------------------------------------- identity

_SCP_REMOTE = re.compile(r"^(?:[^@/:]+@)?([A-Za-z0-9.-]+):/?([^:]+)$")


def _remote_identity(url: str) -> tuple[str, str, str] | None:
    """(host, owner, name) of an origin URL in any common form (https, ssh, scp-style); None if odd."""
    from urllib.parse import urlsplit

    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        host, path = parts.hostname, parts.path
        if parts.scheme.lower() not in ("https", "http", "ssh", "git") or not host:
            return None
    else:
        m = _SCP_REMOTE.match(url)
        if not m:
            return None
        host, path = m.group(1), m.group(2)
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    segs = path.split("/")
    if len(segs) < 2 or not all(re.fullmatch(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*", s) and s not in (".", "..") for s in segs[-2:]):
        return None
    return host.lower(), segs[-2], segs[-1]


def _key(host: str, owner: str, name: str) -> tuple[str, str, str]:
    return host.lower(), owner.lower(), name.lower()


def _match(config: Config, host: str, owner: str, name: str) -> Upstream | None:
    from .source import parse_https_url

    for up in config.upstreams.values():
        r = parse_https_url(up.url)
        if _key(r.host, r.owner, r.name) == _key(host, owner, name):
            return up
    return None


def origin_url(path: Path) -> str | None:
    """The ``origin`` remote URL recorded in a local repository's own config, read with the
    hardened git (no global/system config). None when there is none."""
    from .source import Git, _local_git_dir

    try:
        git = Git(_local_git_dir(path, str(path)), allow_file=True)
        proc = git.run("config", "--local", "--get", "remote.origin.url", check=False)
    except SourceError:
        return None
    url = proc.stdout.decode("utf-8", "replace").strip()
    return url if proc.returncode == 0 and url else None


def identify(repo_arg: str | None, upstream_name: str | None, name_override: str | None, config: Config) -> Upstream:
    """Which upstream a crawl is of: see the module docs of the CLI. Refuses bad URLs first."""
    from .source import RemoteURL, classify_repo_arg

    up: Upstream | None = None
    if upstream_name is not None:
        if upstream_name not in config.upstreams:
            raise UsageError(f"unknown upstream {upstream_name!r} (configured: {', '.join(sorted(config.upstreams))})")
        up = config.upstreams[upstream_name]
    if repo_arg is not None:
        kind, target = classify_repo_arg(repo_arg)  # refusals (ssh, ext::, ...) happen here
        if up is None and kind == "url":
            assert isinstance(target, RemoteURL)
            up = _match(config, target.host, target.owner, target.name) or Upstream(
                name=f"{target.owner}/{target.name}", url=target.url
            )
        elif up is None:
            assert isinstance(target, Path)
            origin = origin_url(target) if target.is_dir() else None
            ident = _remote_identity(origin) if origin else None
            if ident is not None:
                host, owner, name = ident
                up = _match(config, host, owner, name) or Upstream(
                    name=f"{owner}/{name}", url=f"https://{host}/{owner}/{name}"
                )
    if up is None:
        up = config.default_upstream
    if name_override is not None:
        m = re.fullmatch(r"([A-Za-z0-9_.][A-Za-z0-9_.-]*)/([A-Za-z0-9_.][A-Za-z0-9_.-]*)", name_override)
        if not m or ".." in name_override:
            raise UsageError(f"--name {name_override!r}: expected OWNER/NAME")
        from .source import parse_https_url

        host = parse_https_url(up.url).host
        up = up.model_copy(update={"owner": m.group(1), "repo": m.group(2), "url": f"https://{host}/{m.group(1)}/{m.group(2)}"})
    return up
