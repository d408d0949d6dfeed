"""Small helpers shared by several test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: A module with two raises, used by the history, sync and workflow tests.
CHECK_CODE = '''
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    if x > 10:
        raise OverflowError("x is far too large")
    return x
'''


def git(cwd: Path, *args: str | bytes, input: bytes | None = None, date: str = "1700000000 +0200") -> str:
    """Run git as a test author would, isolated from the machine's git configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="T",
        GIT_COMMITTER_EMAIL="t@example.invalid", GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date,
        GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
    )
    out = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, input=input,
                         capture_output=True, check=True)
    return out.stdout.decode().strip()


def wheel(path: Path, files: dict[str, str | bytes], *, name: str, version: str, metadata: list[str] = ()) -> Path:
    """A wheel as a build backend writes one: the files, ``.dist-info/METADATA`` (with the given
    extra header lines, e.g. ``Project-URL: Source, https://github.com/o/n``), WHEEL and RECORD."""
    import base64
    import hashlib
    import zipfile

    info = f"{name}-{version}.dist-info"
    body = {rel: data.encode() if isinstance(data, str) else data for rel, data in files.items()}
    body[f"{info}/METADATA"] = "\n".join(["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *metadata, "", ""]).encode()
    body[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: errcat-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for rel, data in body.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(data)}")
    body[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for rel, data in body.items():
            entry = zipfile.ZipInfo(rel, date_time=(2025, 3, 4, 5, 6, 8))
            entry.external_attr = 0o100644 << 16
            z.writestr(entry, data)
    return path


def cached_wheel(cache_dir: Path, files: dict[str, str | bytes], *, name: str, version: str, metadata: list[str] = ()) -> Path:
    """A wheel where ``errcat crawl --pypi NAME==VERSION`` finds it already downloaded, so tests
    need no package index."""
    return wheel(cache_dir / "pypi" / f"{name}-{version}" / f"{name}-{version}-py3-none-any.whl", files,
                 name=name, version=version, metadata=metadata)


def release_tree(short_commit: str, code: str = CHECK_CODE) -> dict[str, str]:
    """A release in vLLM's layout (the default upstream's include and version file): its
    ``vllm/_version.py`` records the upstream commit abbreviated, as vLLM's releases do
    (``'g5df63a720'``), so its manifest's upstream_commit has 9 digits, not 40."""
    return {"vllm/__init__.py": "", "vllm/_version.py": f"__commit_id__ = commit_id = 'g{short_commit}'\n",
            "vllm/check.py": code}


def write_wheel(path: Path, files: dict[str, str]) -> Path:
    """A wheel holding ``files`` (dedented code strings), as the package index serves one."""
    import textwrap
    import zipfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, text in sorted(files.items()):
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 2, 3, 4, 5)), textwrap.dedent(text).lstrip("\n"))
    return path
