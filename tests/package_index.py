"""A package index on localhost, speaking the JSON simple API (PEP 691, PEP 700's upload-time)
as PyPI does: pip downloads the wheels from it and errcat asks it when each was uploaded."""

from __future__ import annotations

import functools
import http.server
import json
import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import serving as serve


def release_wheel(directory: Path, version: str, commit_line: str | None, message: str = "bad value") -> Path:
    """A wheel of the package ``relpkg`` whose _version.py records ``commit_line``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"relpkg-{version}-py3-none-any.whl"
    info = f"relpkg-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("relpkg/__init__.py", f"def f(x):\n    if x:\n        raise ValueError({message!r})\n")
        if commit_line is not None:
            z.writestr("relpkg/_version.py", commit_line)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: relpkg\nVersion: {version}\nProject-URL: Source, https://github.com/acme/relpkg\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return path


def release_sdist(directory: Path, version: str, message: str = "bad value", extra: list | None = None) -> Path:
    """A source distribution of ``relpkg`` (no wheel: vLLM's before 0.1.4), its files under
    ``relpkg-VERSION/``; ``extra``: more ``tarfile.TarInfo`` members (links, files elsewhere)."""
    import io
    import tarfile

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"relpkg-{version}.tar.gz"
    top = f"relpkg-{version}"
    with tarfile.open(path, "w:gz") as t:
        for name, text in [
            ("setup.py", "from setuptools import setup\nsetup()\n"),
            ("relpkg/__init__.py", f"def f(x):\n    if x:\n        raise ValueError({message!r})\n"),
            ("PKG-INFO", f"Metadata-Version: 2.1\nName: relpkg\nVersion: {version}\nProject-URL: Source, https://github.com/acme/relpkg\n"),
        ]:
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        for info in extra or []:
            t.addfile(info, io.BytesIO(b"x" * info.size) if info.isreg() else None)
    return path


class _Index(http.server.SimpleHTTPRequestHandler):
    """/simple/relpkg/ as PEP 691 JSON (with PEP 700's upload-time), the wheels under /files/."""

    times: dict[str, object] = {}
    #: The SHA-256 the page gives for an sdist, when not its own (a file changed on the way).
    sdist_hashes: dict[str, str] = {}
    #: What errcat alone is told (pip refuses a page whose times do not parse before errcat asks).
    told_errcat: dict[str, object] = {}
    asked: list[str] = []
    #: The page errcat alone is given instead, as bytes (a hostile index: JSON nested past the decoder).
    errcat_page: bytes | None = None

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/simple/relpkg" and self.errcat_page is not None and self.headers.get("User-Agent") == "errcat":
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(self.errcat_page)))
            self.end_headers()
            self.wfile.write(self.errcat_page)
            return
        if self.path.rstrip("/") == "/simple/relpkg":
            self.asked.append(self.headers.get("Accept", ""))
            times = {**self.times, **self.told_errcat} if self.headers.get("User-Agent") == "errcat" else self.times
            import hashlib

            here = Path(self.directory, "files")
            files = [
                {
                    "filename": p.name,
                    "url": f"../../files/{p.name}",
                    "hashes": {"sha256": hashlib.sha256(p.read_bytes()).hexdigest()},
                    "upload-time": times.get(p.name),
                }
                for p in sorted(here.glob("*.whl"))
            ]
            files += [
                {
                    "filename": p.name,
                    "url": f"../../files/{p.name}",
                    "upload-time": times.get(p.name),
                    "hashes": {"sha256": self.sdist_hashes.get(p.name) or hashlib.sha256(p.read_bytes()).hexdigest()},
                }
                for p in sorted(here.glob("*.tar.gz"))
            ]
            body = json.dumps(
                {
                    "meta": {"api-version": "1.1"},
                    "name": "relpkg",
                    "files": files,
                    "versions": sorted({p["filename"].removesuffix(".tar.gz").split("-")[1] for p in files}),
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """The index of the wheels in ``root / "files"``, at the URL yielded (pip's PIP_INDEX_URL)."""
    (root / "files").mkdir(parents=True, exist_ok=True)
    _Index.times, _Index.told_errcat, _Index.asked, _Index.sdist_hashes, _Index.errcat_page = {}, {}, [], {}, None
    with serve(functools.partial(_Index, directory=str(root))) as base:
        yield f"{base}/simple/"


@contextmanager
def pip_uses(root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """:func:`serving` as the only index pip and errcat ask (``monkeypatch``, pytest's, sets the
    environment for the test); yields the directory of the wheels it serves."""
    with serving(root) as url:
        for name in [k for k in os.environ if k.startswith("PIP_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
        monkeypatch.setenv("PIP_INDEX_URL", url)
        monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
        yield root / "files"
