"""The GitHub workflows: actionlint-clean, pinned, least privilege, and the sync workflow's own
``run:`` commands executed against a local fixture upstream with two commits."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import CHECK_CODE
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads a bare `on` key as True
    return data


def actionlint() -> str | None:
    found = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    return found


def test_both_workflows_exist():
    assert {p.name for p in FILES} >= {"ci.yml", "sync.yml"}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_actionlint_is_clean(path):
    binary = actionlint()
    if binary is None:
        pytest.skip("actionlint is not installed (pip install -e '.[test]')")
    proc = subprocess.run([binary, "-no-color", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_actions_are_pinned_and_privileges_least(path):
    text = path.read_text()
    uses = re.findall(r"uses:\s*(.+)", text)
    assert uses and all(PINNED.match(u.strip()) for u in uses), uses
    data = load(path)
    assert data["permissions"] in ({}, {"contents": "read"})  # nothing by default; jobs ask for more
    assert "concurrency" in data
    for job in data["jobs"].values():
        for step in job["steps"]:
            if "run" in step:
                assert "${{" not in step["run"], f"expression interpolated into a script: {step['run']!r}"
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_sync_runs_daily_and_on_demand_and_opens_one_pull_request():
    data = load(WORKFLOWS / "sync.yml")
    assert set(data["on"]) == {"schedule", "workflow_dispatch"} and data["on"]["schedule"][0]["cron"]
    (job,) = data["jobs"].values()
    assert job["permissions"] == {"contents": "write", "pull-requests": "write"}
    (pr,) = [s for s in job["steps"] if s.get("uses", "").startswith("peter-evans/create-pull-request@")]
    assert pr["if"] == "steps.sync.outputs.changed == 'true'"
    assert pr["with"]["body-path"] == "${{ runner.temp }}/changelog.md"
    assert pr["with"]["branch"] and "branch-suffix" not in pr["with"]  # one branch, so one pull request


def test_sync_restores_the_extraction_cache_errcat_writes():
    (job,) = load(WORKFLOWS / "sync.yml")["jobs"].values()
    names = [s.get("name") for s in job["steps"]]
    (cache,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
    (sync,) = [s for s in job["steps"] if s.get("id") == "sync"]
    assert names.index(cache["name"]) < names.index(sync["name"])
    assert cache["with"]["path"] == sync["env"]["ERRCAT_CACHE_DIR"] + "/results.sqlite3"
    assert cache["with"]["key"].startswith(cache["with"]["restore-keys"])  # a new key each run, the newest restored


# --------------------------------------------------------------------------- running the steps

CODE = CHECK_CODE


def _condition_holds(condition: str | None, outputs: dict[str, str]) -> bool:
    if condition is None:
        return True
    m = re.fullmatch(r"steps\.sync\.outputs\.(\w+) == '(\w+)'", condition)
    assert m, f"the test understands only steps.sync.outputs.X == 'Y' conditions, not {condition!r}"
    return outputs.get(m.group(1)) == m.group(2)


def run_workflow(checkout: Path, runner_temp: Path, env: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Run sync.yml's `run:` steps in order as the runner would (bash -e), skipping the install
    (errcat is on PATH already) and steps whose `if:` is false. Returns the sync step's outputs
    and the names of the steps that ran."""
    (job,) = load(WORKFLOWS / "sync.yml")["jobs"].values()
    outputs: dict[str, str] = {}
    ran = []
    for step in job["steps"]:
        if "run" not in step or "pip install" in step["run"] or not _condition_holds(step.get("if"), outputs):
            continue
        github_output = runner_temp / f"output-{len(ran)}"
        github_output.write_text("")
        step_env = {k: v.replace("${{ runner.temp }}", str(runner_temp)) for k, v in step.get("env", {}).items()}
        assert all("${{" not in v for v in step_env.values()), step_env
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=checkout,
                              env={**env, **step_env, "GITHUB_OUTPUT": str(github_output)}, capture_output=True, text=True)
        assert proc.returncode == 0, f"{step.get('name')}: {proc.stdout}{proc.stderr}"
        if step.get("id") == "sync":
            outputs = dict(line.split("=", 1) for line in github_output.read_text().splitlines())
        ran.append(step.get("name", step["run"]))
    return outputs, ran


@pytest.fixture
def runner(tmp_path, cache_dir):
    """A checkout of this project (a git repo ignoring output/, like ours) and the runner's env,
    with an `errcat` on PATH that runs this source tree."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".gitignore").write_text("/output/*\n!/output/README.md\n")
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "errcat"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m crawler "$@"\n')
    shim.chmod(0o755)
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
        "RUNNER_TEMP": str(runner_temp), "ERRCAT_CACHE_DIR": str(cache_dir), "GIT_CONFIG_NOSYSTEM": "1",
    }
    return checkout, runner_temp, env


def test_the_sync_workflow_runs_against_a_local_upstream(fixture_repo, runner):
    checkout, runner_temp, env = runner
    first = fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE})
    # The workflow follows the configured upstream; here a local repository stands in for it.
    env = {**env, "ERRCAT_REPO": str(fixture_repo.path), "ERRCAT_NAME": "acme/widgets"}

    outputs, ran = run_workflow(checkout, runner_temp, env)
    assert outputs == {"changed": "true", "commit": first}
    assert ran == ["Sync with the upstream", "Validate the catalogue", "Stage the catalogue"]
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=checkout, capture_output=True, text=True).stdout.split()
    assert "output/acme/widgets/manifest.json" in staged and "output/acme/widgets/errors.jsonl" in staged
    assert "First catalogue" in (runner_temp / "changelog.md").read_text()
    assert (runner_temp / "errcat-cache" / "results.sqlite3").is_file()  # what the cache step saves

    outputs, ran = run_workflow(checkout, runner_temp, env)
    assert outputs == {"changed": "false", "commit": first}
    assert ran == ["Sync with the upstream"]  # no validate, no pull request

    second = fixture_repo.commit({"vllm/config.py": "import os\n" + CODE.replace("far too large", "much too large")})
    outputs, ran = run_workflow(checkout, runner_temp, env)
    assert outputs == {"changed": "true", "commit": second}
    changelog = (runner_temp / "changelog.md").read_text()
    assert changelog.startswith(f"## Error catalogue: `acme/widgets` `{first[:12]}` → `{second[:12]}`")
    assert "| Message reworded | 1 |" in changelog and "| Error moved | 1 |" in changelog
