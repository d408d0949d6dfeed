"""A package index on localhost, speaking the JSON simple API (PEP 691, PEP 700's upload-time)
as PyPI does: pip downloads the wheels from it and errcat asks it when each was uploaded."""

from __future__ import annotations

import functools
import http.server
import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: relpkg\nVersion: {version}\n"
                                       "Project-URL: Source, https://github.com/acme/relpkg\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return path


class _Index(http.server.SimpleHTTPRequestHandler):
    """/simple/relpkg/ as PEP 691 JSON (with PEP 700's upload-time), the wheels under /files/."""

    times: dict[str, object] = {}
    #: What errcat alone is told (pip refuses a page whose times do not parse before errcat asks).
    told_errcat: dict[str, object] = {}
    asked: list[str] = []

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/simple/relpkg":
            self.asked.append(self.headers.get("Accept", ""))
            times = {**self.times, **self.told_errcat} if self.headers.get("User-Agent") == "errcat" else self.times
            files = [{"filename": p.name, "url": f"../../files/{p.name}", "hashes": {}, "upload-time": times.get(p.name)}
                     for p in sorted(Path(self.directory, "files").glob("*.whl"))]
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": "relpkg", "files": files,
                               "versions": sorted({p["filename"].split("-")[1] for p in files})}).encode()
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
    _Index.times, _Index.told_errcat, _Index.asked = {}, {}, []
    with serve(functools.partial(_Index, directory=str(root))) as base:
        yield f"{base}/simple/"


