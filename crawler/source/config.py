"""errcat configuration: the upstreams errcat knows, from ``errcat.toml`` or ``[tool.errcat]``.

Shape (``errcat.toml`` top level, or ``[tool.errcat]`` in ``pyproject.toml``)::

    default = "vllm"                      # optional; the upstream used when nothing says otherwise

    [upstreams.vllm]                      # [tool.errcat.upstreams.vllm] in pyproject.toml
    url = "https://github.com/vllm-project/vllm"
    include = ["vllm/**/*.py"]
    exclude = ["vllm/**/third_party/", "vllm/vllm_flash_attn/", "vllm/_version.py"]
    branch = "main"
    pypi = "vllm"
    version_file = "vllm/_version.py"
    tag = "v{version}"                    # a release's tag, for permalinks when it records no commit
    path_prefix = ""                      # where the packages sit in the repository, e.g. "src/"
    tests = ["tests/**/*.py"]             # test files read for reproductions (default: none)
    kinds = ["raise", "assert", "log", "response", "native"]   # the sites that become entries (models.SiteKind;
                                          #   default: raise, assert, log)
    native = ["csrc/**", "rust/**"]       # native trees (C++/CUDA, Rust) read for kind "native"
    max_output_bytes = 52428800           # limits (see models.Limits), each optional:
    max_file_sites = 1000                 #   crawl options override them
    max_file_bytes = 2000000
    knob_kwargs = ["get_kwargs"]          # the meaning section: get_kwargs(ConfigClass)[field] -> an option
    request_models = ["vllm/sampling_params.py"]   # files whose classes' fields are request parameters
    draft_link_hosts = ["docs.vllm.ai"]   # hosts a machine draft (curate draft --llm) may link to, besides
                                          #   the repository's own pages (default: none)

    [[upstreams.vllm.responses]]          # a call that builds an HTTP error response (kind "response")
    call = "create_error_response"        # the callee's name
    params = ["message", "err_type", "status_code"]   # its parameters, to read positional arguments
    message = "message"                   # which one holds the message, the error type, the status
    error_type = "err_type"
    status_code = "status_code"
    default_error_type = "BadRequestError"   # what the builder uses when a call leaves them out
    default_status_code = 400

``owner``/``repo`` default to the URL's last two path segments and must be a GitHub identity
(see ``records.OWNER_PATTERN``). Paths and globs are the repository's: a wheel's files are
matched as ``path_prefix`` + their path in the wheel. The built-in ``vllm`` upstream is always
present unless the file redefines it.

A package crawled with ``--pypi`` that no upstream names (``pypi = ...``) is its own upstream:
its identity comes from the GitHub URL in its metadata (or ``--name``), its globs from its
top-level packages.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from crawler.base.errors import ConfigError, SourceError, UsageError
from crawler.model.kinds import NATIVE
from crawler.model.records import UPSTREAM_COMMIT_HEX, Owner, RepoName, SiteKind, identity_problem

if TYPE_CHECKING:  # the source stage is imported where it is used, as everywhere in this module
    from crawler.source.wheel import PackageInfo


# vcs-versioning / setuptools-scm style: `__commit_id__ = commit_id = 'g4ba787ec9'` or a full id.
DEFAULT_VERSION_PATTERN = (
    r"""^\s*(?:__commit_id__|commit_id|__commit__)\b[^=\n]*=\s*(?:[A-Za-z_]\w*\s*=\s*)*['"]g?((?i:""" + UPSTREAM_COMMIT_HEX + r"""))['"]"""
)


class ResponseBuilder(BaseModel):
    """A call that builds an HTTP error response without raising (``errcat.toml``:
    ``[[upstreams.NAME.responses]]``): its sites are entries of kind ``response``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$", description="The callee's name (its last dotted part).")
    params: list[str] = Field(default_factory=list, description="Its parameters in order, to read positional arguments.")
    message: str = Field(default="message", description="The parameter that holds the message.")
    error_type: str | None = Field(default=None, description="The parameter that holds the body's error type, read when static.")
    status_code: str | None = Field(default=None, description="The parameter that holds the HTTP status code, read when static.")
    default_error_type: str | None = Field(default=None, description="The error type the builder uses when a call leaves it out.")
    default_status_code: int | None = Field(default=None, ge=100, le=599, description="The status code the builder uses when a call leaves it out.")


class Upstream(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    url: str = Field(description="The repository's https:// URL; a crawl without --repo fetches it.")
    owner: Owner = Field(description="The identity's owner: the URL's first path segment unless given.")
    repo: RepoName = Field(description="The identity's name: the URL's second path segment unless given.")
    branch: str | None = Field(default=None, description="The branch `errcat sync` follows (default: the remote's HEAD).")
    include: list[str] = Field(default_factory=lambda: ["**/*.py"], description="Globs of the source files read (gitwildmatch, the repository's paths).")
    exclude: list[str] = Field(default_factory=list, description="Globs of files left out of every tree read (source, tests, native).")
    pypi: str | None = Field(default=None, description="The package's name on the package index: `errcat crawl --pypi NAME==VERSION` crawls this upstream.")
    version_file: str | None = Field(
        default=None, description="The file where a release records its upstream commit (permalinks of a wheel's records point there)."
    )
    version_pattern: str = Field(default=DEFAULT_VERSION_PATTERN, description="The regular expression whose first group is the commit in `version_file`.")
    tag: str | None = Field(default=None, description="How release tags are named, e.g. `v{version}`: the permalinks of a release that records no commit.")
    path_prefix: str = Field(
        default="", description="Where the packages sit in the repository (`src/` for a src layout): a wheel's paths are matched as this prefix + their path."
    )
    #: The repository's test files, read for reproductions of its errors (never for entries).
    #: None by default: an unknown repository's tests may sit anywhere, and a glob that caught
    #: source files would take their entries away.
    tests: list[str] = Field(
        default_factory=list, description="Globs of the upstream's test files, read for reproductions only, never for entries (default: none)."
    )
    #: The kinds of sites read (``records.SiteKind``); a plain Python repository: raises and logs.
    kinds: list[str] = Field(
        default_factory=lambda: ["raise", "assert", "log"], description="The kinds of sites that become entries: raise, assert, log, response, native."
    )
    #: Globs of the native trees whose C++/CUDA and Rust files are read for kind ``native``
    #: (only files of those languages, by suffix; ``exclude`` applies to them too).
    native: list[str] = Field(
        default_factory=list, description="Globs of the native trees whose C++/CUDA and Rust files give kind `native` (with `native` in `kinds`)."
    )

    @field_validator("kinds")
    @classmethod
    def _check_kinds(cls, kinds: list[str]) -> list[str]:
        from typing import get_args

        unknown = [k for k in kinds if k not in get_args(SiteKind)]
        if unknown:
            raise ValueError(f"unknown kind(s) {', '.join(map(repr, unknown))} (known: {', '.join(get_args(SiteKind))})")
        return kinds

    @property
    def native_globs(self) -> list[str]:
        """The native trees read: none unless the upstream reads kind ``native``."""
        return list(self.native) if NATIVE in self.kinds else []

    @field_validator("tag")
    @classmethod
    def _check_tag(cls, tag: str | None) -> str | None:
        if tag is None:
            return None
        # Filled in with str.replace, never str.format: a config's braces reach no attribute.
        rest = tag.replace("{version}", "")
        if tag.count("{version}") != 1 or "{" in rest or "}" in rest:
            raise ValueError('tag needs {version} once and no other braces, e.g. "v{version}"')
        from crawler.source.policy import check_ref

        try:
            check_ref(tag.replace("{version}", "1.0"))
        except SourceError:
            raise ValueError(f"tag {tag!r} does not make a git tag name") from None
        return tag

    @field_validator("path_prefix")
    @classmethod
    def _check_prefix(cls, prefix: str) -> str:
        segs = prefix.strip("/").split("/") if prefix.strip("/") else []
        if prefix.startswith("/") or any(s in (".", "..") or not re.fullmatch(r"[A-Za-z0-9._-]+", s) for s in segs):
            raise ValueError(f'path_prefix {prefix!r} is not a relative directory of the repository, e.g. "src/"')
        return "".join(s + "/" for s in segs)

    def tag_of(self, version: str) -> str | None:
        """The release's tag, when the config says how tags are named."""
        return self.tag.replace("{version}", version) if self.tag is not None else None

    # limits (models.Limits): None is the default; a crawl option overrides either
    max_file_bytes: int | None = Field(
        default=None, ge=1, description="A source file larger is skipped, never read (default 2,000,000; --max-file-bytes wins)."
    )
    max_file_sites: int | None = Field(default=None, ge=1, description="A source file with more sites is skipped (default 1,000; --max-file-sites wins).")
    max_output_bytes: int | None = Field(default=None, ge=1, description="No file of the dataset is larger (default 52,428,800; --max-output-bytes wins).")
    # the meaning section (crawler.meaning): an upstream's conventions for its settings
    knob_kwargs: list[str] = Field(
        default_factory=list,
        description="Functions f(ConfigClass) that return an option's keywords per field, "
        'so `add_argument("--flag", **kwargs["field"])` maps the flag to that field.',
    )
    request_models: list[str] = Field(default_factory=list, description="Globs of the files whose classes' fields are request parameters.")
    responses: list[ResponseBuilder] = Field(default_factory=list, description="The calls that build HTTP error responses (kind `response`).")
    #: Hosts a machine-written draft may link to (https, any path) besides the repository's own
    #: pages (``curate.links``): the upstream's documentation, say.
    draft_link_hosts: list[str] = Field(default_factory=list, description="Hosts a machine-written draft may link to besides the repository's own pages.")

    @field_validator("draft_link_hosts")
    @classmethod
    def _check_link_hosts(cls, hosts: list[str]) -> list[str]:
        from crawler.source.policy import is_host

        bad = [h for h in hosts if not is_host(h)]
        if bad:
            raise ValueError(f'{bad[0]!r} is not a host name (e.g. "docs.vllm.ai": no scheme, port or path)')
        return [h.lower() for h in hosts]

    @model_validator(mode="before")
    @classmethod
    def _identity_from_url(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("url"), str):
            from crawler.source.policy import parse_https_url

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
        from crawler.source.globs import PathFilter

        try:
            PathFilter(self.include, self.exclude)
            PathFilter(self.tests)
            PathFilter(self.native)
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
    owner="vllm-project",
    repo="vllm",
    branch="main",
    include=["vllm/**/*.py"],
    # Vendored code is other projects' (a wheel also carries kernels copied in at build time) and
    # _version.py is generated: a release's wheel and its git tag give the same catalogue.
    # Rust tests, examples and build scripts give no error a user of vLLM meets.
    exclude=["vllm/**/third_party/", "vllm/vllm_flash_attn/", "vllm/_version.py", "rust/**/tests/", "rust/**/examples/", "rust/**/build.rs"],
    pypi="vllm",
    kinds=["raise", "assert", "log", "response", "native"],
    native=["csrc/**", "rust/**"],
    tests=["tests/**/*.py"],
    version_file="vllm/_version.py",
    tag="v{version}",
    # add_argument("--gpu-memory-utilization", **cache_kwargs["gpu_memory_utilization"]) where
    # cache_kwargs = get_kwargs(CacheConfig): the flag sets that field of that config class.
    knob_kwargs=["get_kwargs"],
    request_models=["vllm/entrypoints/**/protocol.py", "vllm/entrypoints/**/protocol/*.py", "vllm/sampling_params.py", "vllm/pooling_params.py"],
    draft_link_hosts=["docs.vllm.ai"],
    # The OpenAI-compatible server answers errors with create_error_response(message, err_type,
    # status_code) (a function, and a static method of every serving class) or builds the body
    # itself: ErrorResponse(error=ErrorInfo(message=..., type=..., code=...)).
    responses=[
        ResponseBuilder(
            call="create_error_response",
            params=["message", "err_type", "status_code", "param"],
            message="message",
            error_type="err_type",
            status_code="status_code",
            default_error_type="BadRequestError",
            default_status_code=400,
        ),
        ResponseBuilder(call="ErrorInfo", params=["message", "type", "param", "code"], message="message", error_type="type", status_code="code"),
    ],
)


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default: str = Field(default="vllm", description="The upstream a command uses when nothing names one.")
    upstreams: dict[str, Upstream] = Field(default_factory=lambda: {"vllm": VLLM}, description="The upstreams by name: `[upstreams.NAME]` tables.")
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
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None


def _find(start: Path) -> tuple[Path | None, dict[str, Any] | None]:
    if start.is_file():
        data = _read_toml(start)
        if start.name == "pyproject.toml":
            tool = data.get("tool", {})
            return start, tool.get("errcat", {}) if isinstance(tool, dict) else {}
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
    """Read errcat.toml (or [tool.errcat] of pyproject.toml) from ``path`` (file or dir; default
    the errcat home, ``base.home``)."""
    from crawler.base.home import home

    if path is None and not home().is_dir():  # a home not made yet holds no config
        return Config()
    src, data = _find(Path(path) if path is not None else home())
    if src is None or data is None:
        return Config()
    where = f"{src}" + (" [tool.errcat]" if src.name == "pyproject.toml" else "")
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
    """(host, owner, name) of an origin URL in any common form (https, ssh, scp-style); None when
    it is no remote URL. The identity is not checked here (see :func:`identify`)."""
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
    if len(segs) < 2:
        return None
    return host.lower(), segs[-2], segs[-1]


def _key(host: str, owner: str, name: str) -> tuple[str, str, str]:
    return host.lower(), owner.lower(), name.lower()


def _match(config: Config, host: str, owner: str, name: str) -> Upstream | None:
    from crawler.source.policy import parse_https_url

    for up in config.upstreams.values():
        r = parse_https_url(up.url)
        if _key(r.host, r.owner, r.name) == _key(host, owner, name):
            return up
    return None


def origin_url(path: Path) -> str | None:
    """The ``origin`` remote URL recorded in a local repository's own config, read with the
    hardened git (no global/system config). None when there is none."""
    from crawler.source.git import Git
    from crawler.source.snapshot import local_git_dir

    try:
        git = Git(local_git_dir(path, str(path)), allow_file=True)
        proc = git.run("config", "--local", "--get", "remote.origin.url", check=False)
    except SourceError:
        return None
    url = proc.stdout.decode("utf-8", "replace").strip()
    return url if proc.returncode == 0 and url else None


def _override(name_override: str) -> tuple[str, str]:
    owner, _, name = name_override.partition("/")
    problem = identity_problem(owner, name)
    if problem is not None:
        raise UsageError(f"--name {name_override!r}: expected OWNER/NAME of a GitHub repository; {problem}")
    return owner, name


def _new_upstream(url: str, owner: str, name: str, **settings: Any) -> Upstream:
    return Upstream(name=f"{owner}/{name}", url=url, owner=owner, repo=name, **settings)


def identify(repo_arg: str | None, upstream_name: str | None, name_override: str | None, config: Config) -> Upstream:
    """Which upstream a crawl is of: see the module docs of the CLI. Refuses bad URLs and
    identities that are not GitHub's (they become output directories) first."""
    from crawler.source.policy import RemoteURL, classify_repo_arg

    override = _override(name_override) if name_override is not None else None
    up: Upstream | None = None
    if upstream_name is not None:
        if upstream_name not in config.upstreams:
            raise UsageError(f"unknown upstream {upstream_name!r} (configured: {', '.join(sorted(config.upstreams))})")
        up = config.upstreams[upstream_name]
    if repo_arg is not None:
        kind, target = classify_repo_arg(repo_arg)  # refusals (ssh, ext::, ...) happen here
        if up is None and kind == "url":
            assert isinstance(target, RemoteURL)
            up = _match(config, target.host, target.owner, target.name)
            if up is None:
                owner, name = override or (target.owner, target.name)
                problem = identity_problem(owner, name)
                if problem is not None:
                    raise SourceError(f"refusing repository {repo_arg!r}: {problem} (say which repository it is with --name OWNER/NAME)")
                up = _new_upstream(target.url, owner, name)
        elif up is None:
            assert isinstance(target, Path)
            origin = origin_url(target) if target.is_dir() else None
            ident = _remote_identity(origin) if origin else None
            if ident is not None:
                host, owner, name = ident
                up = _match(config, host, owner, name)
                if up is None:
                    owner, name = override or (owner, name)
                    problem = identity_problem(owner, name)
                    if problem is not None:
                        raise UsageError(f"{repo_arg}: its origin remote names no GitHub repository ({problem}): say which with --name OWNER/NAME")
                    up = _new_upstream(f"https://{host}/{owner}/{name}", owner, name)
    if up is None:
        up = config.default_upstream
    if override is not None:
        from crawler.source.policy import parse_https_url

        owner, name = override
        host = parse_https_url(up.url).host
        up = up.model_copy(update={"owner": owner, "repo": name, "url": f"https://{host}/{owner}/{name}"})
    return up


def _distribution(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503


def own_project(config: Config, upstream: Upstream) -> Upstream | None:
    """For a local repository named with --name that selects no file under the default upstream's
    globs (``upstream``, renamed): the project of its own it is, with a plain Python repository's
    globs; None when the name is a configured upstream's, whose globs are meant."""
    if _match(config, "github.com", upstream.owner, upstream.repo) is not None:
        return None
    return _new_upstream(upstream.url, upstream.owner, upstream.repo)


def identify_package(spec: str, upstream_name: str | None, name_override: str | None, config: Config, package: Callable[[], PackageInfo]) -> Upstream:
    """Which upstream a ``--pypi`` crawl is of: the one named with ``--upstream``, else the one
    whose ``pypi`` is this package, else the package's own. The package's own takes its identity
    from ``--name`` or from the GitHub URL its metadata gives (``package()`` reads the wheel), and
    its globs from its top-level packages: another upstream's globs would select nothing of it,
    and its dataset would replace that upstream's."""
    from crawler.source.wheel import parse_pypi_spec

    package_name = parse_pypi_spec(spec)[0]
    dist = _distribution(package_name)
    if upstream_name is None:
        upstream_name = next((key for key, up in sorted(config.upstreams.items()) if up.pypi is not None and _distribution(up.pypi) == dist), None)
    if upstream_name is not None:
        return identify(None, upstream_name, name_override, config)
    info = package()
    if name_override is not None:
        owner, name = _override(name_override)
    else:
        found = github_identity(info.urls, spec)
        if found is None:
            raise UsageError(f"{spec} is not a configured upstream and its metadata names no GitHub repository: say which with --name OWNER/NAME")
        owner, name = found
    return _match(config, "github.com", owner, name) or _new_upstream(
        f"https://github.com/{owner}/{name}", owner, name, include=list(info.packages), pypi=package_name
    )


#: Labels of project URLs that name the repository, most telling first (PEP 753 normalised).
_URL_LABELS = (("source", "sourcecode", "repository", "repo", "code", "github", "git"), ("homepage", "home"))
#: github.com paths that are not repositories (sponsors/someone is a Funding link).
_NOT_OWNERS = {
    "sponsors",
    "orgs",
    "users",
    "apps",
    "marketplace",
    "topics",
    "features",
    "settings",
    "site",
    "about",
    "collections",
    "explore",
    "organizations",
    "login",
    "join",
    "enterprise",
    "pricing",
    "security",
}


def github_identity(urls: list[tuple[str, str]], what: str) -> tuple[str, str] | None:
    """The GitHub repository a package's project URLs name: (owner, name), or None.

    Only ``https://github.com/OWNER/NAME[/...]`` URLs whose OWNER/NAME pass the identity check
    count; funding links do not. When they name more than one repository, the most telling
    label decides (Source before Homepage before the rest); a tie is refused."""
    from urllib.parse import urlsplit

    ranked: dict[int, dict[tuple[str, str], tuple[str, str]]] = {}
    for label, url in urls:
        key = re.sub(r"[^a-z0-9]", "", label.lower())
        if any(word in key for word in ("fund", "sponsor", "donat")):
            continue
        try:
            parts = urlsplit(url.strip())
        except ValueError:
            continue
        if parts.scheme not in ("https", "http") or (parts.hostname or "") not in ("github.com", "www.github.com"):
            continue
        segs = [seg for seg in parts.path.split("/") if seg]
        if len(segs) < 2 or segs[0].lower() in _NOT_OWNERS:
            continue
        owner, name = segs[0], (segs[1].removesuffix(".git") if len(segs) == 2 else segs[1])
        if identity_problem(owner, name) is not None:
            continue
        rank = next((i for i, labels in enumerate(_URL_LABELS) if key in labels), len(_URL_LABELS))
        ranked.setdefault(rank, {})[(owner.lower(), name.lower())] = (owner, name)
    if not ranked:
        return None
    best = ranked[min(ranked)]
    if len(best) > 1:
        shown = ", ".join(f"{o}/{n}" for o, n in sorted(best.values()))
        raise UsageError(f"{what}: its metadata names several GitHub repositories ({shown}): say which with --name OWNER/NAME")
    return next(iter(best.values()))
