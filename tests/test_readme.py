"""The README's standard-library lookup snippet, run exactly as written against a fixture dataset."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import consumer_data as cd
import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def snippet() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Using the dataset", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return code


@pytest.mark.slow
def test_readme_lookup_snippet_finds_the_entry(tmp_path):
    dataset = cd.write(tmp_path)
    script = tmp_path / "lookup.py"
    script.write_text(snippet(), encoding="utf-8")
    message = "Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: decoder, encoder_only."
    tree = ast.parse(snippet())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
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


def test_every_toml_example_in_the_readme_is_a_config_errcat_loads(tmp_path):
    """A user copies these into errcat.toml: each must parse (TOML refuses a key given twice) and
    load as errcat's configuration."""
    from crawler.source.config import load_config

    blocks = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks
    for n, block in enumerate(blocks):
        path = tmp_path / str(n) / "errcat.toml"
        path.parent.mkdir()
        path.write_text(block, encoding="utf-8")
        assert load_config(path).upstreams, block
