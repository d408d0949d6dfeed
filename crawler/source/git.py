"""A hardened git: no hooks, no submodules, inherited GIT_* variables dropped, every command under a timeout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from crawler.base.errors import SourceError
from crawler.model.records import COMMIT_RE

GIT_TIMEOUT = 60.0  # seconds for a local git command
FETCH_TIMEOUT = 600.0  # seconds for a network fetch


# --------------------------------------------------------------------------- hardened git


def _git_env(allow_file: bool) -> dict[str, str]:
    # Drop inherited GIT_* (GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_SSH_COMMAND, ...): only ours apply.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_ALLOW_PROTOCOL="https:file" if allow_file else "https",
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,  # an always-empty global config
        GIT_LFS_SKIP_SMUDGE="1",
        GIT_NO_REPLACE_OBJECTS="1",  # read the objects as stored, never refs/replace substitutes
        GIT_OPTIONAL_LOCKS="0",
        GIT_ATTR_NOSYSTEM="1",
        LC_ALL="C",
    )
    return env


_GIT_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "protocol.allow=never",
    "protocol.https.allow=always",
    "credential.helper=",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "log.showSignature=false",
)


def git_cmd(git_dir: Path | None, allow_file: bool) -> list[str]:
    cmd = ["git"]
    for item in _GIT_CONFIG:
        cmd += ["-c", item]
    if allow_file:
        cmd += ["-c", "protocol.file.allow=always"]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    return cmd


class Git:
    """One repository's git, always run with the hardened environment and a timeout."""

    def __init__(self, git_dir: Path | None, *, allow_file: bool = False) -> None:
        self.git_dir = git_dir
        self.allow_file = allow_file
        self.env = _git_env(allow_file)

    def cmd(self, *args: str) -> list[str]:
        return [*git_cmd(self.git_dir, self.allow_file), *args]

    def run(self, *args: str, timeout: float = GIT_TIMEOUT, check: bool = True, what: str | None = None) -> subprocess.CompletedProcess[bytes]:
        try:
            proc = subprocess.run(self.cmd(*args), env=self.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SourceError(f"{what or 'git ' + args[0]}: timed out after {timeout:g}s") from None
        except FileNotFoundError:
            raise SourceError("git is not installed (or not on PATH)") from None
        if check and proc.returncode != 0:
            raise SourceError(f"{what or 'git ' + args[0]}: {first_line(proc.stderr)}")
        return proc

    def out(self, *args: str, **kw: Any) -> str:
        return self.run(*args, **kw).stdout.decode("utf-8", "replace").strip()

    def commit_of(self, ref: str) -> str | None:
        proc = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
        sha = proc.stdout.decode("ascii", "replace").strip()
        return sha if proc.returncode == 0 and COMMIT_RE.fullmatch(sha) else None


def first_line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    # git prints "fatal: ..." last; prefer it over hints and warnings.
    for ln in reversed(lines):
        if ln.startswith(("fatal:", "error:")):
            return ln
    return lines[-1] if lines else "failed"
