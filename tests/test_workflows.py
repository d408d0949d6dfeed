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
import yaml
from helpers import CHECK_CODE

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


def jobs() -> dict:
    return load(WORKFLOWS / "sync.yml")["jobs"]


def test_sync_runs_daily_and_on_demand_and_opens_one_pull_request():
    data = load(WORKFLOWS / "sync.yml")
    assert set(data["on"]) == {"schedule", "workflow_dispatch"} and data["on"]["schedule"][0]["cron"]
    job = jobs()["pull-request"]
    (pr,) = [s for s in job["steps"] if s.get("uses", "").startswith("peter-evans/create-pull-request@")]
    assert job["if"] == "needs.crawl.outputs.changed == 'true'" and job["needs"] == "crawl"
    assert pr["with"]["branch"] and "branch-suffix" not in pr["with"]  # one branch, so one pull request
    assert pr["with"]["add-paths"] == "output/"


def test_the_job_that_reads_the_upstream_cannot_write_and_the_one_that_writes_runs_none_of_it():
    crawl, pr = jobs()["crawl"], jobs()["pull-request"]
    assert set(jobs()) == {"crawl", "pull-request"}
    assert crawl["permissions"] == {"contents": "read"}
    assert pr["permissions"] == {"contents": "write", "pull-requests": "write"}
    crawl_runs = "\n".join(s.get("run", "") for s in crawl["steps"])
    pr_runs = "\n".join(s.get("run", "") for s in pr["steps"])
    assert "errcat sync" in crawl_runs and "errcat validate" in crawl_runs and "pytest" in crawl_runs
    # The write job crawls nothing, runs no tests, restores no cache the crawl job wrote.
    for word in ("errcat sync", "errcat crawl", "errcat diff", "errcat history", "pytest", "requirements/test.txt"):
        assert word not in pr_runs, word
    assert not [s for s in pr["steps"] if s.get("uses", "").startswith("actions/cache@")]
    names = [s.get("name") or s.get("uses") for s in pr["steps"]]
    (download,) = [s for s in pr["steps"] if s.get("uses", "").startswith("actions/download-artifact@")]
    (adopt,) = [s for s in pr["steps"] if "errcat adopt" in s.get("run", "")]
    (create,) = [s for s in pr["steps"] if s.get("uses", "").startswith("peter-evans/create-pull-request@")]
    assert names.index(download["name"]) < names.index(adopt["name"]) < names.index(create["name"])
    # The artifact lands outside the checkout and is read only by `errcat adopt`.
    assert download["with"]["path"] == "${{ runner.temp }}/artifact"
    assert adopt["run"].startswith('errcat adopt "$RUNNER_TEMP/artifact" --out output --changelog "$RUNNER_TEMP/changelog.md"')
    assert sum("artifact" in s.get("run", "") for s in pr["steps"]) == 1
    assert create["with"]["body-path"] == "${{ runner.temp }}/changelog.md"
    assert re.findall(r"\$\{\{(.*?)\}\}", create["with"]["commit-message"]) == [" steps.adopt.outputs.commit "]
    (upload,) = [s for s in crawl["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["with"]["name"] == download["with"]["name"]
    assert list(crawl["outputs"]) == ["changed"]  # the commit id reaches the write job only through adopt's check


def test_everything_the_workflows_install_is_pinned_by_hash():
    """pip installs only hash-checked requirement files, then errcat itself without dependencies."""
    commands = []
    for path in FILES:
        for job in load(path)["jobs"].values():
            for step in job["steps"]:
                commands += [ln.strip() for ln in step.get("run", "").splitlines() if "pip install" in ln]
    assert commands
    for command in commands:
        assert re.fullmatch(r"python -m pip install --require-hashes --no-deps -r requirements/(bootstrap|run|test)\.txt", command) \
            or command == "python -m pip install --no-deps --no-build-isolation .", command
    assert "bash .ci/run" in (WORKFLOWS / "ci.yml").read_text()  # which installs the same way (tests/test_packaging.py)


def test_the_tests_run_before_the_catalogue_leaves_the_crawl_job():
    crawl = jobs()["crawl"]
    names = [s.get("name") for s in crawl["steps"]]
    (tests,) = [s for s in crawl["steps"] if s.get("run") == "python -m pytest"]
    (validate,) = [s for s in crawl["steps"] if s.get("run") == "errcat validate output"]
    (upload,) = [s for s in crawl["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert names.index(validate["name"]) < names.index(tests["name"]) < names.index(upload["name"])


def test_sync_restores_the_extraction_cache_errcat_writes():
    job = jobs()["crawl"]
    names = [s.get("name") for s in job["steps"]]
    (cache,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
    (sync,) = [s for s in job["steps"] if s.get("id") == "sync"]
    assert names.index(cache["name"]) < names.index(sync["name"])
    assert cache["with"]["path"] == sync["env"]["ERRCAT_CACHE_DIR"] + "/results.sqlite3"
    assert cache["with"]["key"].startswith(cache["with"]["restore-keys"])  # a new key each run, the newest restored


# --------------------------------------------------------------------------- running the steps

CODE = CHECK_CODE


def _condition_holds(condition: str | None, outputs: dict[str, dict[str, str]]) -> bool:
    """``steps.ID.outputs.X == 'Y'`` (step outputs) or ``needs.JOB.outputs.X == 'Y'`` (job outputs)."""
    if condition is None:
        return True
    m = re.fullmatch(r"(?:steps|needs)\.([\w-]+)\.outputs\.(\w+) == '(\w+)'", condition)
    assert m, f"the test understands only steps/needs.ID.outputs.X == 'Y' conditions, not {condition!r}"
    return outputs.get(m.group(1), {}).get(m.group(2)) == m.group(3)


def run_job(name: str, checkout: Path, runner_temp: Path, env: dict[str, str], needs: dict[str, dict[str, str]],
            artifacts: Path) -> tuple[dict[str, str], list[str]] | None:
    """Run one job of sync.yml as the runner would: its `run:` steps in order (bash -e), the
    artifact actions as copies through ``artifacts``; the install is skipped (errcat is on PATH
    already), and so is the test suite (this is it). Returns the job's outputs and the names of
    the steps that ran, or None when the job's `if:` is false."""
    job = jobs()[name]
    if not _condition_holds(job.get("if"), needs):
        return None
    runner_temp.mkdir(parents=True, exist_ok=True)

    def expand(value: str) -> str:
        value = value.replace("${{ runner.temp }}", str(runner_temp))
        assert "${{" not in value, value
        return value

    steps: dict[str, dict[str, str]] = {}
    ran = []
    for step in job["steps"]:
        uses = step.get("uses", "")
        if not _condition_holds(step.get("if"), steps):
            continue
        if uses.startswith("actions/upload-artifact@"):
            shutil.copytree(expand(step["with"]["path"]), artifacts / step["with"]["name"], symlinks=True)
        elif uses.startswith("actions/download-artifact@"):
            shutil.copytree(artifacts / step["with"]["name"], expand(step["with"]["path"]), symlinks=True)
        elif "run" not in step or "pip install" in step["run"] or step["run"] == "python -m pytest":
            continue
        else:
            github_output = runner_temp / f"output-{len(ran)}"
            github_output.write_text("")
            step_env = {k: expand(v) for k, v in step.get("env", {}).items()}
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=checkout,
                                  env={**env, **step_env, "GITHUB_OUTPUT": str(github_output), "RUNNER_TEMP": str(runner_temp)},
                                  capture_output=True, text=True)
            assert proc.returncode == 0, f"{step.get('name')}: {proc.stdout}{proc.stderr}"
            if "id" in step:
                steps[step["id"]] = dict(line.split("=", 1) for line in github_output.read_text().splitlines())
        ran.append(step.get("name", step.get("run")))
    outputs = {}
    for key, expression in job.get("outputs", {}).items():
        m = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.(\w+) \}\}", expression)
        assert m, expression
        outputs[key] = steps.get(m.group(1), {}).get(m.group(2), "")
    return outputs, ran


def _job_checkout(main: Path, where: Path) -> Path:
    """A fresh checkout of main for one job (actions/checkout)."""
    shutil.copytree(main, where, symlinks=True)
    return where


def run_workflow(main: Path, runs: Path, env: dict[str, str]) -> dict[str, tuple[dict[str, str], list[str]] | None]:
    """One run of sync.yml: the crawl job, then the pull-request job when its `if:` holds, each in
    its own fresh checkout of ``main`` and its own runner temp; the crawl job's cache carried over
    from the previous run as actions/cache would. A pull request it opens is merged into main."""
    n = len(list(runs.glob("run-*")))
    run = runs / f"run-{n}"
    artifacts = run / "artifacts"
    artifacts.mkdir(parents=True)
    previous = runs / f"run-{n - 1}" / "crawl-temp" / "errcat-cache"
    if previous.is_dir():
        shutil.copytree(previous, run / "crawl-temp" / "errcat-cache")
    crawl = run_job("crawl", _job_checkout(main, run / "crawl"), run / "crawl-temp", env, {}, artifacts)
    assert crawl is not None
    pr_checkout = _job_checkout(main, run / "pull-request")
    pr = run_job("pull-request", pr_checkout, run / "pr-temp", env, {"crawl": crawl[0]}, artifacts)
    if pr is not None:
        staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=pr_checkout, capture_output=True, text=True, check=True)
        assert staged.stdout.split() and all(p.startswith("output/") for p in staged.stdout.split())
        shutil.rmtree(main / "output", ignore_errors=True)
        shutil.copytree(pr_checkout / "output", main / "output")  # the pull request is merged
    return {"crawl": crawl, "pull-request": pr}


@pytest.fixture
def runner(tmp_path, cache_dir):
    """Main of this project (a git repo ignoring output/, like ours), a place for runs, and the
    runner's env, with an `errcat` on PATH that runs this source tree."""
    main = tmp_path / "main"
    main.mkdir()
    (main / ".gitignore").write_text("/output/*\n!/output/README.md\n")
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "errcat"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m crawler "$@"\n')
    shim.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
        "ERRCAT_CACHE_DIR": str(cache_dir), "GIT_CONFIG_NOSYSTEM": "1",
    }
    return main, tmp_path / "runs", env


CRAWL_STEPS = ["Sync with the upstream", "Validate the catalogue", "Gather the catalogue", "Upload the catalogue"]
PR_STEPS = ["Download the catalogue", "Check the catalogue and take it into output/", "Stage the catalogue"]


def test_the_sync_workflow_runs_against_a_local_upstream(fixture_repo, runner):
    main, runs, env = runner
    first = fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE})
    # The workflow follows the configured upstream; here a local repository stands in for it.
    env = {**env, "ERRCAT_REPO": str(fixture_repo.path), "ERRCAT_NAME": "acme/widgets"}

    result = run_workflow(main, runs, env)
    crawl, pr = result["crawl"], result["pull-request"]
    assert crawl == ({"changed": "true"}, CRAWL_STEPS)
    assert pr is not None and pr[1] == PR_STEPS
    assert (runs / "run-0" / "pr-temp" / "output-1").read_text() == f"commit={first}\n"  # adopt's output, for the commit message
    assert "First catalogue" in (runs / "run-0" / "pr-temp" / "changelog.md").read_text()
    assert (runs / "run-0" / "crawl-temp" / "errcat-cache" / "results.sqlite3").is_file()  # what the cache step saves
    assert sorted(p.name for p in (main / "output" / "acme" / "widgets").iterdir()) == [
        "errors", "errors.jsonl.gz", "index.json", "manifest.json", "search.json"]

    result = run_workflow(main, runs, env)
    assert result == {"crawl": ({"changed": "false"}, ["Sync with the upstream"]), "pull-request": None}

    second = fixture_repo.commit({"vllm/config.py": "import os\n" + CODE.replace("far too large", "much too large")})
    result = run_workflow(main, runs, env)
    assert result["crawl"] == ({"changed": "true"}, CRAWL_STEPS) and result["pull-request"][1] == PR_STEPS
    assert (runs / "run-2" / "pr-temp" / "output-1").read_text() == f"commit={second}\n"
    changelog = (runs / "run-2" / "pr-temp" / "changelog.md").read_text()
    assert changelog.startswith(f"## Error catalogue: `acme/widgets` `{first[:12]}` → `{second[:12]}`")
    assert "| Message reworded | 1 |" in changelog and "| Error moved | 1 |" in changelog


def test_a_tampered_artifact_stops_the_pull_request_job(fixture_repo, runner, monkeypatch):
    """Whatever the crawl job uploads, the write job takes nothing that is not the dataset as written."""
    main, runs, env = runner
    fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE})
    env = {**env, "ERRCAT_REPO": str(fixture_repo.path), "ERRCAT_NAME": "acme/widgets"}
    real_copytree = shutil.copytree

    def tampering_upload(src, dst, *a, **k):
        out = real_copytree(src, dst, *a, **k)
        if Path(dst).parent.name == "artifacts":  # the upload: plant a file for the write job's checkout
            (Path(dst) / "output" / "acme" / "evil.sh").write_text("echo pwned\n")
        return out

    monkeypatch.setattr(shutil, "copytree", tampering_upload)
    with pytest.raises(AssertionError, match=r"refusing the artifact: 'output/acme/evil.sh' is not a file a dataset has"):
        run_workflow(main, runs, env)
    assert not (main / "output").exists()
    assert not (runs / "run-0" / "pull-request" / "output").exists()
