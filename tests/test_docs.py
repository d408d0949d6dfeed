"""The README and the docs site hold to what they say.

- the site builds with warnings as errors (``mkdocs build --strict``);
- the reference pages are what ``docs/generate.py`` writes from the code;
- the tutorial's commands, run as written on the repository it makes, print what the page shows;
- the lookup snippet runs as written, outside errcat, against a fixture dataset;
- every ``errcat.toml`` example is a configuration errcat loads;
- every test the guarantees name exists, and every promise names one;
- the README stays short, links only to pages that exist, and runs only commands and options
  errcat has.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import consumer_data as cd
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


# --------------------------------------------------------------------------- the site


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("mkdocs-material is not installed (pip install -e '.[docs]')")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WARNING" not in result.stderr, result.stderr[-3000:]
    # every page of the nav was built, the generated reference among them
    for name in ("tutorial", "reference/cli", "reference/dataset", "reference/configuration", "explanation/guarantees"):
        assert (tmp_path / "site" / name / "index.html").is_file(), name
    assert not list((tmp_path / "site").rglob("*.py")), "docs/generate.py is no page of the site"


@pytest.mark.slow
def test_the_reference_pages_are_what_the_generator_writes() -> None:
    result = subprocess.run(
        [sys.executable, str(DOCS / "generate.py"), "--check"], capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert result.returncode == 0, result.stderr


def test_the_cli_reference_names_every_command_and_option() -> None:
    from crawler.cli import main

    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")

    def walk(command: click.Command, path: list[str]) -> None:
        assert f"`{' '.join(path)}`" in page, path
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("-") and opt not in ("-h", "--help") and not getattr(param, "hidden", False):
                    assert f"`{opt}`" in page, (path, opt)
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])

    for name, sub in main.commands.items():
        walk(sub, ["errcat", name])


def test_the_configuration_reference_names_every_key_and_its_example_loads(tmp_path: Path) -> None:
    from crawler.source.config import VLLM, ResponseBuilder, Upstream, load_config

    page = (DOCS / "reference" / "configuration.md").read_text(encoding="utf-8")
    for model, skip in ((Upstream, {"name"}), (ResponseBuilder, set())):
        for key in set(model.model_fields) - skip:
            assert f"| `{key}` |" in page, key
    (block,) = re.findall(r"```toml\n(.*?)```", page, re.S)
    (tmp_path / "errcat.toml").write_text(block, encoding="utf-8")
    assert load_config(tmp_path / "errcat.toml").upstreams["vllm"] == VLLM  # the page spells the built-in upstream exactly


# --------------------------------------------------------------------------- the tutorial

# What differs from run to run: commit ids (full and abbreviated), dates, seconds.
VOLATILE = [
    (re.compile(r"\b[0-9a-f]{40}\b"), "<commit>"),
    (re.compile(r"\b[0-9a-f]{12}\b"), "<commit>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"), "<date>"),
    (re.compile(r"\b\d+\.\ds$", re.M), "<seconds>"),
]


def normalized(text: str) -> str:
    for pattern, put in VOLATILE:
        text = pattern.sub(put, text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def tutorial_steps(text: str) -> list[tuple[str, str, str]]:
    """("file", path, content) for each titled code block, ("run", command, expected stdout) for each
    ``$`` line of a console block, in the page's order."""
    steps: list[tuple[str, str, str]] = []
    for info, body in re.findall(r"^```(\w+[^\n]*)\n(.*?)^```$", text, re.S | re.M):
        titled = re.fullmatch(r'\w+ title="([^"]+)"', info)
        if titled:
            steps.append(("file", titled.group(1), body))
        elif info == "console":
            for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
                command, _, output = chunk.partition("\n")
                steps.append(("run", command, output))
    return steps


@pytest.mark.slow
def test_the_tutorial_prints_what_it_shows(tmp_path: Path) -> None:
    """Each command of the tutorial, run in order in an empty directory, prints what the page shows
    (commits, dates and seconds aside): the crawl's counts, the match, the page, the render."""
    steps = tutorial_steps((DOCS / "tutorial.md").read_text(encoding="utf-8"))
    assert sum(kind == "run" for kind, _, _ in steps) >= 8 and any(kind == "file" for kind, _, _ in steps)
    work = tmp_path / "work"
    work.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ERRCAT_CACHE_DIR": str(tmp_path / "cache"),
        "LC_ALL": "C",
        "NO_COLOR": "1",
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "ERRCAT_PROGRESS": "lines",
    }
    errcat = f'errcat() {{ {shlex.quote(sys.executable)} -m crawler "$@"; }}\n'
    ran = []
    for kind, what, text in steps:
        if kind == "file":
            (work / what).write_text(text, encoding="utf-8")
            continue
        result = subprocess.run(["bash", "-c", errcat + what], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (what, result.stderr)
        assert normalized(result.stdout) == normalized(text), f"$ {what}\n--- the page shows:\n{text}\n--- it prints:\n{result.stdout}"
        ran.append(what.split()[:2])
    assert ["errcat", "crawl"] in ran and ["errcat", "match"] in ran and ["errcat", "show"] in ran and ["errcat", "render"] in ran


def test_the_tutorial_check_would_catch_a_figure_that_moved() -> None:
    """The comparison is not vacuous: another count, or another id, is a difference."""
    shown = "files 2, parsed 2, skipped 0, sites 1, entries 1, 0.2s"
    assert normalized(shown) == normalized("files 2, parsed 2, skipped 0, sites 1, entries 1, 13.7s")
    assert normalized(shown) != normalized("files 2, parsed 2, skipped 0, sites 2, entries 1, 0.2s")
    assert normalized("1. 3fdc0807e2cfc0a9  ValueError") != normalized("1. 3fdc0807e2cfc0a8  ValueError")


# --------------------------------------------------------------------------- the dataset how-to


def snippet() -> str:
    text = (DOCS / "how-to" / "use-the-dataset.md").read_text(encoding="utf-8")
    section = text.split("## Look an error up with the standard library alone", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return code


def test_the_lookup_snippet_finds_the_entry(tmp_path: Path) -> None:
    dataset = cd.write(tmp_path)
    script = tmp_path / "lookup.py"
    script.write_text(snippet(), encoding="utf-8")
    message = "Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: decoder, encoder_only."
    tree = ast.parse(snippet())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported and imported <= sys.stdlib_module_names, imported - sys.stdlib_module_names
    # -I: run outside errcat (PYTHONPATH and the working directory are not on the path)
    result = subprocess.run([sys.executable, "-I", str(script), str(dataset), message], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0].split()
    kv = next(r for r in cd.records() if r["message"]["text"] == cd.KV["text"])
    assert first[0] == kv["id"] and first[1] == "builtins.ValueError"
    assert "The <kind> is not one of the KV cache group kinds." in result.stdout
    # twelve adjacent fields: the snippet must not backtrack on a near miss (timeout: hang guard)
    adjacent = next(r for r in cd.records() if r["message"]["text"] == cd.ADJACENT["text"])
    for message, found in (("Bad " + " " * 40 + " end x", []), ("Bad " + " " * 40 + " end", [adjacent["id"]])):
        result = subprocess.run([sys.executable, "-I", str(script), str(dataset), message], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert [line.split()[0] for line in result.stdout.splitlines() if not line.startswith(" ")] == found


def test_every_toml_example_is_a_config_errcat_loads(tmp_path: Path) -> None:
    """A user copies these into errcat.toml: each must parse (TOML refuses a key given twice) and
    load as errcat's configuration."""
    from crawler.source.config import load_config

    blocks = [b for path in [README, *pages()] for b in re.findall(r"```toml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)]
    assert len(blocks) >= 3
    for n, block in enumerate(blocks):
        path = tmp_path / str(n) / "errcat.toml"
        path.parent.mkdir()
        path.write_text(block, encoding="utf-8")
        assert load_config(path).upstreams, block


# --------------------------------------------------------------------------- guarantees


@pytest.mark.slow
def test_guarantees_name_existing_tests() -> None:
    text = (DOCS / "explanation" / "guarantees.md").read_text(encoding="utf-8")
    named = re.findall(r"`(tests/(?:\w+/)?test_\w+\.py)::(test_\w+)(?:\[[^\]`]*\])?`", text)
    assert len(named) >= 100, len(named)
    functions: dict[str, set[str]] = {}
    for rel in {rel for rel, _ in named}:  # each file parsed once
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        functions[rel] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    for rel, name in named:
        assert name in functions[rel], f"docs/explanation/guarantees.md names {rel}::{name}, which does not exist"
    promises = text.split("**Threat:**")[1:]
    assert len(promises) >= 80
    for promise in promises:  # every threat is backed by at least one named test
        held = promise.split("Held by:", 1)
        assert len(held) == 2 and re.search(r"`tests/(?:\w+/)*test_\w+\.py", held[1]), promise[:200]


# --------------------------------------------------------------------------- the README


def readme() -> str:
    return README.read_text(encoding="utf-8")


def test_the_readme_is_short_and_for_users() -> None:
    text = readme()
    assert len(text.splitlines()) <= 200
    assert max(len(line) for line in text.splitlines()) <= 160
    # one command installs, one runs the tests, and CI runs that same command
    assert "python -m pip install -e ." in text
    assert "python -m pytest" in text
    assert re.search(r"^python -m pytest$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)
    # the three things people do, each with its output
    for command in ("errcat crawl", "errcat match", "errcat render"):
        assert re.search(rf"^\$ {command} .*\n[^$`]", text, re.M), command


def test_the_readme_links_only_to_pages_that_exist() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme())
    local = [link for link in links if not re.match(r"https?://", link)]
    assert len(local) >= 15
    for link in local:
        assert (ROOT / link).is_file(), link
    # and every page of the docs the nav lists is one the README can reach through the site
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in pages():
        assert str(page.relative_to(DOCS)) in nav, f"{page} is in no nav"


def test_the_readme_and_the_docs_run_only_commands_and_options_errcat_has() -> None:
    """Every `errcat ...` line of a shell or console block names a command errcat has, with options
    that command takes: a renamed option fails here before a user copies it."""
    from crawler.cli import main

    checked = 0
    for path in [README, *pages()]:
        for _info, body in re.findall(r"^```(sh|console)\n(.*?)^```$", path.read_text(encoding="utf-8"), re.S | re.M):
            for line in body.splitlines():
                line = line.removeprefix("$ ").split("  #", 1)[0].split(" && ", 1)[0].strip()
                if not line.startswith("errcat "):
                    continue
                words = shlex.split(line.replace("[", "").replace("]", ""))[1:]
                command: click.Command = main
                while isinstance(command, click.Group) and words and not words[0].startswith("-"):
                    sub = command.commands.get(words[0])
                    assert sub is not None, f"{path.name}: {line}: no command {words[0]!r}"
                    command, words = sub, words[1:]
                known = {opt for p in command.params for opt in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])}
                for word in words:
                    if word.startswith("-"):
                        assert word.split("=", 1)[0] in known, f"{path.name}: {line}: {command.name} has no {word}"
                checked += 1
    assert checked >= 20, checked
