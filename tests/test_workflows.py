"""The GitHub workflows: actionlint-clean, pinned, least privilege, and the sync workflow's own
``run:`` commands executed against a local fixture upstream with two commits."""

from __future__ import annotations

import fnmatch
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import CHECK_CODE, ChatAnswers, serving

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
    assert {p.name for p in FILES} >= {"ci.yml", "sync.yml", "backfill.yml"}


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


def jobs(workflow: str = "sync.yml") -> dict:
    return load(WORKFLOWS / workflow)["jobs"]


@pytest.mark.slow
def test_sync_runs_daily_and_on_demand_and_opens_one_pull_request_per_upstream():
    data = load(WORKFLOWS / "sync.yml")
    assert set(data["on"]) == {"schedule", "workflow_dispatch"} and data["on"]["schedule"][0]["cron"]
    job = jobs()["pull-request"]
    (pr,) = [s for s in job["steps"] if s.get("uses", "").startswith("peter-evans/create-pull-request@")]
    assert job["needs"] == ["upstreams", "crawl"] and job["if"] == "${{ !cancelled() && needs.upstreams.result == 'success' }}"
    # one branch per upstream, so one pull request each
    assert pr["with"]["branch"] == "errcat/sync-${{ matrix.upstream }}" and "branch-suffix" not in pr["with"]
    # output/, and curated/ only when the pull request carries drafts (git add fails on a path that is not there)
    assert pr["with"]["add-paths"] == "${{ steps.adopt.outputs.drafts && 'output/,curated/' || 'output/' }}"
    for name in ("crawl", "pull-request"):
        assert jobs()[name]["strategy"]["matrix"] == {"upstream": "${{ fromJSON(needs.upstreams.outputs.upstreams) }}"}
        assert jobs()[name]["env"] == {"ERRCAT_UPSTREAM": "${{ matrix.upstream }}"}
    assert jobs()["crawl"]["strategy"]["fail-fast"] is False  # one upstream's failure holds back no other's


def _split(workflow: str, readers: list[str], writer: str, reads: tuple[str, ...]) -> None:
    """The jobs that read the upstream can only read; the one that writes runs none of it."""
    assert set(jobs(workflow)) == {*readers, writer}
    for name in readers:
        assert jobs(workflow)[name]["permissions"] == {"contents": "read"}, name
    pr = jobs(workflow)[writer]
    assert pr["permissions"] == {"contents": "write", "pull-requests": "write"}
    reader_runs = "\n".join(s.get("run", "") for name in readers for s in jobs(workflow)[name]["steps"])
    pr_runs = "\n".join(s.get("run", "") for s in pr["steps"])
    for word in reads:
        assert word in reader_runs, word
    # The write job crawls nothing, runs no tests, restores no cache a crawl job wrote.
    for word in ("errcat sync", "errcat crawl", "errcat diff", "errcat history", "pytest", "requirements/test.txt"):
        assert word not in pr_runs, word
    assert not [s for s in pr["steps"] if s.get("uses", "").startswith("actions/cache")]
    names = [s.get("name") or s.get("uses") for s in pr["steps"]]
    (download,) = [s for s in pr["steps"] if s.get("uses", "").startswith("actions/download-artifact@")]
    (adopt,) = [s for s in pr["steps"] if "errcat adopt" in s.get("run", "")]
    (create,) = [s for s in pr["steps"] if s.get("uses", "").startswith("peter-evans/create-pull-request@")]
    assert names.index(download["name"]) < names.index(adopt["name"]) < names.index(create["name"])
    # The artifact lands outside the checkout and is read only by `errcat adopt`.
    assert download["with"]["path"] == "${{ runner.temp }}/artifact"
    assert adopt["run"].startswith('errcat adopt "$RUNNER_TEMP/artifact" --out output --changelog "$RUNNER_TEMP/changelog.md"')
    assert sum("errcat" in s.get("run", "") and "artifact" in s.get("run", "") for s in pr["steps"]) == 1
    assert create["with"]["body-path"] == "${{ runner.temp }}/changelog.md"
    assert re.findall(r"\$\{\{(.*?)\}\}", create["with"]["commit-message"]) == [" steps.adopt.outputs.commit "]
    uploads = [s for name in readers for s in jobs(workflow)[name]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert download["with"].get("name", download["with"].get("pattern")) in {u["with"]["name"] for u in uploads}
    for name in readers:  # no commit id or crawled text reaches the write job through job outputs
        assert set(jobs(workflow)[name].get("outputs", {})) <= {"upstreams", "groups"}, name


@pytest.mark.slow
def test_the_job_that_reads_the_upstream_cannot_write_and_the_one_that_writes_runs_none_of_it():
    _split("sync.yml", ["upstreams", "crawl"], "pull-request", ("errcat sync", "errcat validate", "pytest"))


@pytest.mark.slow
def test_the_backfill_keeps_the_same_split():
    _split("backfill.yml", ["plan", "crawl", "fold"], "pull-request", ("errcat history --per-release", "errcat history --fold", "errcat validate", "pytest"))
    data = load(WORKFLOWS / "backfill.yml")
    assert set(data["on"]) == {"workflow_dispatch"}
    assert jobs("backfill.yml")["crawl"]["strategy"]["matrix"] == {"releases": "${{ fromJSON(needs.plan.outputs.groups) }}"}


@pytest.mark.parametrize(("workflow", "label"), [("sync.yml", "sync"), ("backfill.yml", "backfill")])
def test_each_workflow_labels_its_pull_request_as_its_own(workflow, label):
    """A backfill's pull request (a whole history, reviewed once) is not a daily sync's: each
    workflow labels its own, so a reviewer, a filter or an automation on ``sync`` tells them apart."""
    (create,) = [s for s in jobs(workflow)["pull-request"]["steps"] if s.get("uses", "").startswith("peter-evans/create-pull-request@")]
    if workflow == "sync.yml":  # and machine-written besides when it carries drafts (adopt's drafts=N)
        assert create["with"]["labels"] == "${{ steps.adopt.outputs.drafts && 'sync,machine-written' || 'sync' }}"
    else:
        assert create["with"]["labels"] == label


def test_backfills_of_different_upstreams_do_not_cancel_each_other():
    """A concurrency group keeps one pending run and cancels the one pending before it: backfills
    share a group only when they are of the same upstream (they would write the same branch)."""
    data = load(WORKFLOWS / "backfill.yml")
    assert data["concurrency"] == {"group": "backfill-${{ inputs.upstream }}", "cancel-in-progress": False}


def test_everything_the_workflows_install_is_pinned_by_hash():
    """pip installs only hash-checked requirement files, then errcat itself without dependencies."""
    commands = []
    for path in FILES:
        for job in load(path)["jobs"].values():
            for step in job["steps"]:
                commands += [ln.strip() for ln in step.get("run", "").splitlines() if "pip install" in ln]
    assert commands
    for command in commands:
        assert (
            re.fullmatch(r"python -m pip install --require-hashes --no-deps -r requirements/(bootstrap|run|test)\.txt", command)
            or command == "python -m pip install --no-deps --no-build-isolation ."
        ), command
    assert "bash .ci/run" in (WORKFLOWS / "ci.yml").read_text()  # which installs the same way (tests/test_packaging.py)


@pytest.mark.parametrize("workflow, job", [("sync.yml", "crawl"), ("backfill.yml", "fold")])
def test_the_tests_run_before_the_catalogue_leaves_the_crawl_job(workflow, job):
    steps = jobs(workflow)[job]["steps"]
    names = [s.get("name") for s in steps]
    (tests,) = [s for s in steps if s.get("run") == "python -m pytest"]
    (validate,) = [s for s in steps if s.get("run", "").startswith("errcat validate ")]
    (upload,) = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert names.index(validate["name"]) < names.index(tests["name"]) < names.index(upload["name"])


#: What the sync workflow keeps of the cache directory between runs: all a sync reads again.
SYNC_CACHE = ["results.sqlite3", "joins/results.sqlite3", "search/", "carried/", "curated.json"]


def test_sync_restores_the_extraction_cache_errcat_writes():
    job = jobs()["crawl"]
    names = [s.get("name") for s in job["steps"]]
    (cache,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
    (sync,) = [s for s in job["steps"] if s.get("id") == "sync"]
    assert names.index(cache["name"]) < names.index(sync["name"])
    cache_dir = sync["env"]["ERRCAT_CACHE_DIR"]  # what a sync reads again (test_a_sync_takes_over_what_the_last_one_saved)
    assert cache["with"]["path"].splitlines() == [f"{cache_dir}/{p}" for p in SYNC_CACHE]
    assert cache["with"]["key"].startswith(cache["with"]["restore-keys"])  # a new key each run, the newest restored
    # each upstream its own cache: the prefix ends in a character no upstream name holds
    assert cache["with"]["restore-keys"].endswith("${{ matrix.upstream }}+")


def test_backfill_crawl_jobs_restore_and_save_the_extraction_cache():
    job = jobs("backfill.yml")["crawl"]
    names = [s.get("name") for s in job["steps"]]
    (cache,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@")]
    (crawl,) = [s for s in job["steps"] if "--per-release" in s.get("run", "")]
    assert names.index(cache["name"]) < names.index(crawl["name"])
    cache_dir = crawl["env"]["ERRCAT_CACHE_DIR"]
    assert cache["with"]["path"].splitlines() == [f"{cache_dir}/{p}" for p in SYNC_CACHE]
    first, then = cache["with"]["restore-keys"].splitlines()
    assert cache["with"]["key"].startswith(first)  # each job saves its own key; the newest is restored
    assert first.endswith("${{ inputs.upstream }}+") and then.endswith("${{ inputs.upstream }}+")
    # the daily sync's cache is the fallback: the same key prefix sync.yml saves under
    sync = [s for s in jobs()["crawl"]["steps"] if s.get("uses", "").startswith("actions/cache@")][0]
    assert then == sync["with"]["restore-keys"].replace("matrix.upstream", "inputs.upstream")
    # and with the sync's paths, in its order: actions/cache restores a key only for the paths it was saved with
    assert cache["with"]["path"] == sync["with"]["path"]


# --------------------------------------------------------------------------- running the steps

CODE = CHECK_CODE


def _condition_holds(condition: str | None, outputs: dict[str, dict[str, str]]) -> bool:
    """``steps.ID.outputs.X == 'Y'`` (step outputs), ``needs.JOB.outputs.X == 'Y'`` (job outputs),
    ``needs.JOB.result == 'Y'`` and ``!cancelled()`` (nothing is cancelled here), joined by &&."""
    if condition is None:
        return True
    condition = condition.removeprefix("${{ ").removesuffix(" }}")
    for part in condition.split(" && "):
        if part == "!cancelled()":
            continue
        m = re.fullmatch(r"(?:steps|needs)\.([\w-]+)\.(?:outputs\.(\w+)|(result)) == '(\w+)'", part)
        assert m, f"the test understands only steps/needs.ID.outputs.X == 'Y' conditions, not {part!r}"
        if outputs.get(m.group(1), {}).get(m.group(2) or "result") != m.group(4):
            return False
    return True


def run_job(
    workflow: str,
    name: str,
    checkout: Path,
    runner_temp: Path,
    env: dict[str, str],
    needs: dict[str, dict[str, str]],
    artifacts: Path,
    context: dict[str, str] | None = None,
) -> tuple[dict[str, str], list[str]] | None:
    """Run one job (one matrix leg: ``context`` holds ``matrix.*`` and ``inputs.*``) as the runner
    would: its `run:` steps in order (bash -e), the workflow's and the job's env, the artifact
    actions as copies through ``artifacts``; the install and the cache actions are skipped
    (errcat is on PATH already; the caller carries the cache), and so is the test suite (this is
    it). Returns the job's outputs and the names of the steps that ran, or None when the job's
    `if:` is false."""
    data = load(WORKFLOWS / workflow)
    job = data["jobs"][name]
    if not _condition_holds(job.get("if"), needs):
        return None
    runner_temp.mkdir(parents=True, exist_ok=True)
    steps: dict[str, dict[str, str]] = {}
    known = {"runner.temp": str(runner_temp), "runner.os": "Linux", "github.run_id": "7", **(context or {})}

    def expand(value: str) -> str:
        def one(m: re.Match) -> str:
            ref = m.group(1)
            got = re.fullmatch(r"steps\.([\w-]+)\.outputs\.(\w+)", ref)
            if got:
                return steps.get(got.group(1), {}).get(got.group(2), "")
            if ref.startswith(("vars.", "secrets.")):  # as GitHub expands one the repository does not set
                return known.get(ref, "")
            assert ref in known, f"the test does not know {ref!r}"
            return known[ref]

        return re.sub(r"\$\{\{ ([\w.-]+) \}\}", one, str(value))

    ran = []
    for step in job["steps"]:
        uses = step.get("uses", "")
        if not _condition_holds(step.get("if"), steps):
            continue
        if uses.startswith("actions/upload-artifact@"):
            shutil.copytree(expand(step["with"]["path"]), artifacts / expand(step["with"]["name"]), symlinks=True)
        elif uses.startswith("actions/download-artifact@"):
            wanted = step["with"].get("name") or step["with"]["pattern"]
            found = sorted(a for a in artifacts.iterdir() if fnmatch.fnmatchcase(a.name, expand(wanted)))
            if "name" in step["with"]:
                assert found, f"artifact {wanted} not found"  # as the action fails
            for artifact in found:  # merge-multiple (or one by name): the contents into path
                shutil.copytree(artifact, expand(step["with"]["path"]), symlinks=True, dirs_exist_ok=True)
        elif "run" not in step or "pip install" in step["run"] or step["run"] == "python -m pytest":
            continue
        else:
            github_output = runner_temp / f"output-{len(ran)}"
            github_output.write_text("")
            step_env = {k: expand(v) for k, v in {**data.get("env", {}), **job.get("env", {}), **step.get("env", {})}.items()}
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=checkout,
                env={**env, **step_env, "GITHUB_OUTPUT": str(github_output), "RUNNER_TEMP": str(runner_temp)},
                capture_output=True,
                text=True,
            )
            assert proc.returncode == 0, f"{step.get('name')}: {proc.stdout}{proc.stderr}"
            (runner_temp / f"log-{step.get('id', len(ran))}").write_text(proc.stderr)
            (runner_temp / f"stdout-{step.get('id', len(ran))}").write_text(proc.stdout)
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


def _merge(main: Path, pr_checkout: Path, dataset: str) -> None:
    """The pull request is merged: it changed this upstream's dataset (and added its drafts) and nothing else."""
    staged = subprocess.run(["git", "diff", "--cached", "--name-status"], cwd=pr_checkout, capture_output=True, text=True, check=True)
    rows = [line.split("\t") for line in staged.stdout.splitlines()]
    assert rows and all(
        p.startswith(f"output/{dataset}/") or (status == "A" and re.fullmatch(rf"curated/{dataset}/[0-9a-f]{{16}}\.yaml", p)) for status, p in rows
    ), staged.stdout
    shutil.rmtree(main / "output" / dataset, ignore_errors=True)
    shutil.copytree(pr_checkout / "output" / dataset, main / "output" / dataset)
    subprocess.run(["git", "add", "--force", "--", f"output/{dataset}"], cwd=main, check=True)
    for _, p in rows:
        if p.startswith("curated/"):
            (main / p).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(pr_checkout / p, main / p)
            subprocess.run(["git", "add", "--", p], cwd=main, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "merge"], cwd=main, check=True)


def _restore_cache(previous: Path, runner_temp: Path) -> None:
    """actions/cache: the paths the crawl job's cache step lists, as the previous run left them
    (with their modification times, as the action's tar keeps them), and nothing else."""
    (cache,) = [s for s in jobs()["crawl"]["steps"] if s.get("uses", "").startswith("actions/cache@")]
    for listed in cache["with"]["path"].splitlines():
        rel = listed.removeprefix("${{ runner.temp }}/")
        assert rel != listed, listed
        src, dst = previous / rel, runner_temp / rel
        if src.is_dir():
            shutil.copytree(src, dst)
        elif src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def run_workflow(
    main: Path,
    runs: Path,
    env: dict[str, str],
    upstreams: dict[str, tuple[dict[str, str], str]],
    workflow: str = "sync.yml",
    inputs: dict[str, str] | None = None,
    settings: dict[str, str] | None = None,
) -> dict[str, dict[str, tuple[dict[str, str], list[str]] | None]]:
    """One run of sync.yml: the upstreams job, then for each upstream it lists, its crawl leg and
    its pull-request leg, each in its own fresh checkout of ``main`` and its own runner temp; each
    crawl leg's cache carried over from that upstream's leg of the previous run, as actions/cache
    would. ``upstreams`` maps each name to the env that stands in for its remote repository and
    its dataset directory; ``settings`` are the repository's ``vars.*`` and ``secrets.*`` (those
    not given expand to nothing, as on GitHub). A pull request it opens is merged into main."""
    n = len(list(runs.glob("run-*")))
    run = runs / f"run-{n}"
    artifacts = run / "artifacts"
    artifacts.mkdir(parents=True)
    given = {**{f"inputs.{k}": v for k, v in (inputs or {}).items()}, **(settings or {})}
    listed = run_job(workflow, "upstreams", _job_checkout(main, run / "upstreams"), run / "upstreams-temp", env, {}, artifacts, given)
    assert listed is not None
    names = json.loads(listed[0]["upstreams"])
    assert names == sorted(upstreams)
    legs: dict[str, dict[str, tuple[dict[str, str], list[str]] | None]] = {}
    for name in names:
        leg_env = {**env, **upstreams[name][0]}
        _restore_cache(runs / f"run-{n - 1}" / f"crawl-{name}-temp", run / f"crawl-{name}-temp")
        context = {"matrix.upstream": name, **given}
        crawl = run_job(
            workflow,
            "crawl",
            _job_checkout(main, run / f"crawl-{name}"),
            run / f"crawl-{name}-temp",
            leg_env,
            {"upstreams": {**listed[0], "result": "success"}},
            artifacts,
            context,
        )
        legs[name] = {"crawl": crawl}
    for name in names:
        pr_checkout = _job_checkout(main, run / f"pull-request-{name}")
        pr = run_job(
            workflow,
            "pull-request",
            pr_checkout,
            run / f"pr-{name}-temp",
            {**env, **upstreams[name][0]},
            {"upstreams": {**listed[0], "result": "success"}, "crawl": {"result": "success"}},
            artifacts,
            context={"matrix.upstream": name, **given},
        )
        assert pr is not None
        if pr[1][-1] == "Stage the catalogue":
            _merge(main, pr_checkout, upstreams[name][1])
        legs[name]["pull-request"] = pr
    return legs


CONFIG = """\
[upstreams.vllm]  # stands in for the built-in one: no test reaches GitHub
url = "https://github.com/acme/widgets"
include = ["vllm/**/*.py"]

[upstreams.gadgets]
url = "https://github.com/acme/gadgets"
include = ["gadgets/**/*.py"]
"""


@pytest.fixture
def runner(tmp_path, cache_dir):
    """Main of this project (a git repo ignoring output/, like ours, configuring two upstreams),
    a place for runs, and the runner's env, with an `errcat` on PATH that runs this source tree."""
    main = tmp_path / "main"
    main.mkdir()
    (main / ".gitignore").write_text("/output/*\n!/output/README.md\n")
    (main / "errcat.toml").write_text(CONFIG)
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "errcat"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m crawler "$@"\n')
    shim.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "ERRCAT_CACHE_DIR": str(cache_dir),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return main, tmp_path / "runs", env


@pytest.fixture
def gadgets(tmp_path):
    """A second upstream's repository."""
    from tests.conftest import FixtureRepo

    return FixtureRepo(tmp_path / "gadgets-upstream")


CRAWL_STEPS = [
    "Sync with the upstream",
    "Draft new and changed entries through the endpoint",
    "Validate the catalogue",
    "Gather the catalogue",
    "Upload the catalogue",
]
PR_STEPS = ["Download the catalogue", "See whether the upstream changed", "Check the catalogue and take it into output/", "Stage the catalogue"]
PR_UNCHANGED = ["Download the catalogue", "See whether the upstream changed"]


@pytest.mark.slow
def test_the_sync_workflow_runs_one_job_per_upstream(fixture_repo, gadgets, runner):
    main, runs, env = runner
    first = fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE})
    gadget = gadgets.commit({"gadgets/__init__.py": "", "gadgets/g.py": "def g(n):\n    raise KeyError(f'no gadget {n}')\n"})
    # The workflow follows the configured upstreams; here local repositories stand in for them.
    upstreams = {"vllm": ({"ERRCAT_REPO": str(fixture_repo.path)}, "acme/widgets"), "gadgets": ({"ERRCAT_REPO": str(gadgets.path)}, "acme/gadgets")}

    result = run_workflow(main, runs, env, upstreams)
    for name in ("vllm", "gadgets"):
        assert result[name]["crawl"] == ({}, CRAWL_STEPS) and result[name]["pull-request"][1] == PR_STEPS
    assert (runs / "run-0" / "pr-vllm-temp" / "output-2").read_text() == f"commit={first}\n"  # adopt's, for the commit message
    assert (runs / "run-0" / "pr-gadgets-temp" / "output-2").read_text() == f"commit={gadget}\n"
    assert "First catalogue" in (runs / "run-0" / "pr-vllm-temp" / "changelog.md").read_text()
    for name in ("vllm", "gadgets"):  # each upstream's own cache, carried to its own next run
        assert (runs / "run-0" / f"crawl-{name}-temp" / "errcat-cache" / "results.sqlite3").is_file()
    assert sorted(p.name for p in (main / "output" / "acme" / "widgets").iterdir()) == [
        "errors",
        "errors.jsonl.gz",
        "index.json",
        "manifest.json",
        "search.json",
    ]
    assert (main / "output" / "acme" / "gadgets" / "manifest.json").is_file()
    assert sorted((runs / "run-0" / "artifacts").iterdir()) == [
        runs / "run-0" / "artifacts" / "catalogue-gadgets",
        runs / "run-0" / "artifacts" / "catalogue-vllm",
    ]

    result = run_workflow(main, runs, env, upstreams)
    for name in ("vllm", "gadgets"):
        assert result[name] == {"crawl": ({}, ["Sync with the upstream"]), "pull-request": ({}, PR_UNCHANGED)}

    # One upstream moves: its job alone opens a pull request, on its own dataset.
    second = fixture_repo.commit({"vllm/config.py": "import os\n" + CODE.replace("far too large", "much too large")})
    result = run_workflow(main, runs, env, upstreams)
    assert result["vllm"]["crawl"] == ({}, CRAWL_STEPS) and result["vllm"]["pull-request"][1] == PR_STEPS
    assert result["gadgets"] == {"crawl": ({}, ["Sync with the upstream"]), "pull-request": ({}, PR_UNCHANGED)}
    assert (runs / "run-2" / "pr-vllm-temp" / "output-2").read_text() == f"commit={second}\n"
    changelog = (runs / "run-2" / "pr-vllm-temp" / "changelog.md").read_text()
    assert changelog.startswith(f"## Error catalogue: `acme/widgets` `{first[:12]}` → `{second[:12]}`")
    assert "| Message reworded | 1 |" in changelog and "| Error moved | 1 |" in changelog


@pytest.mark.slow
def test_a_sync_takes_over_what_the_last_one_saved(fixture_repo, gadgets, runner):
    """The next day's sync, its cache restored from exactly the paths the workflow lists as the
    last run left them, parses only the file upstream added and takes every search row from the
    last run's: its memo is not even written again. (The sync crawls in memory: the rows are
    made once, for the dataset it writes, the history's; no crawl writes a dataset of its own.)"""
    main, runs, env = runner
    fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE})
    gadgets.commit({"gadgets/__init__.py": "", "gadgets/g.py": "def g(n):\n    raise KeyError(f'no gadget {n}')\n"})
    upstreams = {"vllm": ({"ERRCAT_REPO": str(fixture_repo.path)}, "acme/widgets"), "gadgets": ({"ERRCAT_REPO": str(gadgets.path)}, "acme/gadgets")}
    run_workflow(main, runs, env, upstreams)
    fixture_repo.commit({"vllm/extra.py": "LIMIT = 1\n"})  # no error in it: every record's row stays the same
    result = run_workflow(main, runs, env, upstreams)
    assert result["vllm"]["crawl"] == ({}, ["Sync with the upstream"])  # no error changed: no pull request
    log = (runs / "run-1" / "crawl-vllm-temp" / "log-sync").read_text()
    assert re.search(r"^extracting \(2 cached\): 1 files$", log, re.M), log
    first, second = (runs / f"run-{n}" / "crawl-vllm-temp" / "errcat-cache" / "search" for n in (0, 1))
    memos = sorted(p.name for p in first.iterdir())
    assert memos and all(name.endswith("-history.json") for name in memos), memos  # the history's, no crawl's
    assert sorted(p.name for p in second.iterdir()) == memos
    for name in memos:
        assert (second / name).stat().st_mtime_ns == (first / name).stat().st_mtime_ns, name


@pytest.mark.slow
def test_a_tampered_artifact_stops_the_pull_request_job(fixture_repo, gadgets, runner, monkeypatch):
    """Whatever a crawl job uploads, the write job takes nothing that is not its dataset as written."""
    main, runs, env = runner
    fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE})
    gadgets.commit({"gadgets/__init__.py": "", "gadgets/g.py": "def g(n):\n    raise KeyError(f'no gadget {n}')\n"})
    upstreams = {"vllm": ({"ERRCAT_REPO": str(fixture_repo.path)}, "acme/widgets"), "gadgets": ({"ERRCAT_REPO": str(gadgets.path)}, "acme/gadgets")}
    real_copytree = shutil.copytree

    def tampering_upload(src, dst, *a, **k):
        out = real_copytree(src, dst, *a, **k)
        if Path(dst).parent.name == "artifacts":  # the upload: plant a file for the write job's checkout
            (Path(dst) / "output" / "acme" / "evil.sh").write_text("echo pwned\n")
        return out

    monkeypatch.setattr(shutil, "copytree", tampering_upload)
    with pytest.raises(AssertionError, match=r"refusing the artifact: 'output/acme/evil.sh' is not a file a dataset has"):
        run_workflow(main, runs, env, upstreams)
    assert not (main / "output").exists()
    assert not list(runs.glob("run-0/pull-request-*/output"))


def run_backfill(main: Path, runs: Path, env: dict[str, str], inputs: dict[str, str]) -> dict[str, object]:
    """One run of backfill.yml, dispatched with ``inputs``: plan, a crawl leg per group, fold and
    pull request, each in its own checkout and runner temp (the legs share no cache)."""
    run = runs / "backfill"
    artifacts = run / "artifacts"
    artifacts.mkdir(parents=True)
    data = load(WORKFLOWS / "backfill.yml")
    dispatch = data.get("on", data.get(True))["workflow_dispatch"]["inputs"]  # (YAML 1.1 reads a bare `on` as True)
    defaults = {k: str(v["default"]) for k, v in dispatch.items() if "default" in v}
    context = {f"inputs.{k}": v for k, v in {**defaults, **inputs}.items()}
    plan = run_job("backfill.yml", "plan", _job_checkout(main, run / "plan"), run / "plan-temp", env, {}, artifacts, context)
    assert plan is not None
    groups = json.loads(plan[0]["groups"])
    for n, group in enumerate(groups):
        leg = {**context, "matrix.releases": group, "strategy.job-index": str(n)}
        crawl = run_job(
            "backfill.yml",
            "crawl",
            _job_checkout(main, run / f"crawl-{n}"),
            run / f"crawl-{n}-temp",
            {**env, "ERRCAT_CACHE_DIR": str(run / f"cache-{n}")},
            {"plan": plan[0]},
            artifacts,
            leg,
        )
        assert crawl is not None
    fold = run_job("backfill.yml", "fold", _job_checkout(main, run / "fold"), run / "fold-temp", env, {}, artifacts, context)
    assert fold is not None
    pr_checkout = _job_checkout(main, run / "pull-request")
    pr = run_job("backfill.yml", "pull-request", pr_checkout, run / "pr-temp", env, {}, artifacts, context)
    assert pr is not None
    return {"groups": groups, "fold": fold[1], "pull-request": pr[1], "checkout": pr_checkout}


@pytest.mark.slow
def test_the_backfill_workflow_spreads_releases_over_jobs_and_folds_them(fixture_repo, runner, cli, tmp_path):
    main, runs, env = runner
    versions = ["v1.8", "v1.9", "v1.10", "v2.0"]
    code = CODE
    for n, tag in enumerate(versions):
        code = code.replace("far too large", f"far too large ({n})") if n % 2 else code + f"\n\ndef f{n}():\n    raise ValueError('gone {n}')\n"
        fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": code}, tag=tag)
    env = {**env, "ERRCAT_REPO": str(fixture_repo.path)}

    result = run_backfill(main, runs, env, {"upstream": "vllm", "range": "v1.8..v2.0", "jobs": "3"})
    assert result["groups"] == ["v1.8 v1.9", "v1.10", "v2.0"]
    assert result["fold"] == ["Download the releases", "Fold the releases into the history", "Validate the catalogue", "Upload the catalogue"]
    assert result["pull-request"] == ["Download the catalogue", "Check the catalogue and take it into output/", "Stage the catalogue"]
    checkout = result["checkout"]
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=checkout, capture_output=True, text=True, check=True)
    assert staged.stdout.split() and all(p.startswith("output/acme/widgets/") for p in staged.stdout.split())
    # The same catalogue one `errcat history` run on one machine writes.
    alone = cli("history", "--repo", fixture_repo.path, "--config", main / "errcat.toml", "--out", tmp_path / "alone", *versions)
    assert alone.exit_code == 0, alone.output
    assert tree(checkout / "output") == tree(tmp_path / "alone")
    changelog = (runs / "backfill" / "pr-temp" / "changelog.md").read_text()
    assert changelog.startswith("## Error catalogue: `acme/widgets` history") and "4 version(s)" in changelog


def tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_a_backfill_merged_after_the_syncs_keeps_their_catalogue_the_newest(fixture_repo, gadgets, runner, cli, tmp_path):
    """Syncs moved the catalogue past the range's newest release; the backfill's pull request,
    merged, keeps it there (the releases' history behind it) and the next sync has nothing to do.
    Before, the pull request took the catalogue back to v2.0 and the next sync re-listed it all."""
    main, runs, env = runner
    versions = ["v1.9", "v2.0"]
    fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE}, tag="v1.9")
    fixture_repo.commit({"vllm/config.py": CODE.replace("far too large", "much too large")}, tag="v2.0")
    gadgets.commit({"gadgets/__init__.py": "", "gadgets/g.py": "def g(n):\n    raise KeyError(f'no gadget {n}')\n"})
    upstreams = {"vllm": ({"ERRCAT_REPO": str(fixture_repo.path)}, "acme/widgets"), "gadgets": ({"ERRCAT_REPO": str(gadgets.path)}, "acme/gadgets")}
    head = fixture_repo.commit({"vllm/config.py": CODE.replace("far too large", "way too large")})
    run_workflow(main, runs, env, upstreams)  # the branch head, past v2.0
    synced = tree(main / "output" / "acme" / "widgets")
    assert json.loads(synced["manifest.json"])["commit"] == head

    result = run_backfill(main, runs, {**env, "ERRCAT_REPO": str(fixture_repo.path)}, {"upstream": "vllm", "range": "v1.9..v2.0", "jobs": "2"})
    assert result["groups"] == versions
    _merge(main, result["checkout"], "acme/widgets")
    backfilled = tree(main / "output" / "acme" / "widgets")
    manifest = json.loads(backfilled["manifest.json"])
    assert manifest["commit"] == head and manifest["counts"]["retired"] == 2  # v1.9's and v2.0's wording
    records = [json.loads(line) for line in gzip.decompress(backfilled["errors.jsonl.gz"]).splitlines()]
    live = sorted(r["message"]["text"] for r in records if not r["history"]["retired"])
    assert live == ["x is way too large", "x must be positive, got {x}"]
    assert {r["message"]["text"]: r["history"]["first_seen"]["version"] for r in records} == {
        "x is far too large": "v1.9",
        "x is much too large": "v2.0",
        "x must be positive, got {x}": "v1.9",
        "x is way too large": None,
    }
    changelog = (runs / "backfill" / "pr-temp" / "changelog.md").read_text()
    assert "Folded behind the catalogue in place" in changelog

    again = run_workflow(main, runs, env, upstreams)
    assert again["vllm"] == {"crawl": ({}, ["Sync with the upstream"]), "pull-request": ({}, PR_UNCHANGED)}


RELPKG = """
[upstreams.relpkg]
url = "https://github.com/acme/relpkg"
pypi = "relpkg"
include = ["relpkg/**/*.py"]
tag = "v{version}"
"""


def test_the_backfill_workflow_crawls_released_wheels_and_folds_them_in_release_order(runner, cli, tmp_path, monkeypatch):
    """from: pypi. The releases are the index's (a pre-release left out), spread over the jobs in
    PEP 440 order (1.9 before 1.10, 1.0.post1 after 1.0), each crawled from its wheel, and folded
    into the catalogue one `errcat history --pypi` run writes."""
    from tests.package_index import _Index, release_wheel, serving

    main, runs, env = runner
    (main / "errcat.toml").write_text(CONFIG + RELPKG)
    messages = {"1.0": "bad value", "1.0.post1": "bad value!", "1.9": "a bad value", "1.10rc1": "rc", "1.10": "a bad value"}
    with serving(tmp_path / "index") as url:
        for n, (version, message) in enumerate(messages.items()):
            wheel = release_wheel(tmp_path / "index" / "files", version, None, message)
            _Index.times[wheel.name] = f"2025-01-0{n + 1}T00:00:00Z"
        pip = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": url, "PIP_NO_CACHE_DIR": "1"}
        result = run_backfill(main, runs, {**env, **pip}, {"upstream": "relpkg", "range": "1.0..1.10", "jobs": "2", "from": "pypi"})
        assert result["groups"] == ["1.0 1.0.post1", "1.9 1.10"]
        for name in [k for k in os.environ if k.startswith("PIP_")]:
            monkeypatch.delenv(name)
        for name, value in pip.items():
            monkeypatch.setenv(name, value)
        alone = cli(
            "history", "--pypi", "--config", main / "errcat.toml", "--upstream", "relpkg", "--out", tmp_path / "alone", "1.0", "1.0.post1", "1.9", "1.10"
        )
    assert alone.exit_code == 0, alone.output
    checkout = result["checkout"]
    assert tree(checkout / "output") == tree(tmp_path / "alone")
    dataset = checkout / "output" / "acme" / "relpkg"
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["release"]["version"] == "1.10" and manifest["release"]["uploaded"] == "2025-01-05T00:00:00+00:00"
    records = [json.loads(line) for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines()]
    retired = sorted((r["message"]["text"], r["history"]["removed_in"]["version"]) for r in records if r["history"]["retired"])
    assert retired == [("bad value", "1.0.post1"), ("bad value!", "1.9")]
    (live,) = [r for r in records if not r["history"]["retired"]]
    assert live["history"]["first_seen"]["version"] == "1.9" and live["provenance"]["permalinks"]["basis"] == "tag"


# --------------------------------------------------------------------------- drafts through the repository's endpoint

#: The API key the repository's secret holds in the drafting tests: it must reach no file a run leaves.
LLM_KEY = "sk-sync-drafts-0123456789-never-logged"
#: A draft that names nothing (no flag, setting or function it could invent).
ANSWER = json.dumps(
    {
        "what_it_means": "The value given is outside what this check allows.",
        "when_it_happens": {"trigger": "A value outside the allowed range.", "common_situations": ["A typo in a value."]},
        "solutions": ["Pass a value inside the allowed range."],
    }
)


def test_only_the_step_that_drafts_holds_the_endpoints_key():
    """The secret is in the drafting step's environment alone, in both sync workflows: not the
    tests', not the sync's, not the write job's; and the reusable one states it as optional."""
    for workflow in ("sync.yml", "reusable-sync.yml"):
        holders = [(job, step.get("id")) for job, spec in jobs(workflow).items() for step in spec["steps"] if "secrets.ERRCAT_LLM_API_KEY" in json.dumps(step)]
        assert holders == [("crawl", "drafts")], workflow
        (drafts,) = [st for st in jobs(workflow)["crawl"]["steps"] if st.get("id") == "drafts"]
        assert drafts["env"]["ERRCAT_LLM_API_KEY"] == "${{ secrets.ERRCAT_LLM_API_KEY }}"
        assert drafts["env"]["ERRCAT_LLM_URL"] == "${{ vars.ERRCAT_LLM_URL }}" and drafts["timeout-minutes"] <= 30
        assert "unset ERRCAT_LLM_API_KEY" in drafts["run"]  # before the catalogue is synced again
        for word in ("--limit", "--time-budget", "--token-budget", "--max-tokens", "--changed"):  # bounded, and only what changed
            assert word in drafts["run"], (workflow, word)
    secret = load(WORKFLOWS / "reusable-sync.yml")["on"]["workflow_call"]["secrets"]["ERRCAT_LLM_API_KEY"]
    assert secret["required"] is False and secret["description"]


class _Drafter(ChatAnswers):
    """The repository's endpoint: a good draft, except for the error whose prompt says
    "over the limit", answered with the key echoed back (a model talked round by crawled text)."""

    answer = staticmethod(lambda prompt: f'{{"what_it_means": "{LLM_KEY}"}}' if "over the limit" in prompt else ANSWER)


@pytest.mark.slow
@pytest.mark.parametrize("workflow", ["sync.yml", "reusable-sync.yml"])
def test_the_sync_drafts_new_and_changed_entries_through_the_repositorys_endpoint(fixture_repo, runner, monkeypatch, workflow):
    """The crawl job's own steps with a fake OpenAI-compatible server as the repository's endpoint:
    without the variable nothing is drafted and nothing fails; with it, the entries the sync added
    or reworded are drafted (the unchanged one is not), bounded by ERRCAT_LLM_MAX_DRAFTS, into the
    same pull request as `status: draft` files that the dataset's records carry as machine-written,
    labelled so; an answer quoting the key is rejected with a warning and fails nothing; and the
    key reaches no file, log or output of any run."""
    main, runs, env = runner
    monkeypatch.setattr(_Drafter, "asked", 0)
    monkeypatch.setattr(_Drafter, "seen", [])
    upstream = {"vllm": ({"ERRCAT_REPO": str(fixture_repo.path)}, "acme/widgets")}
    (main / "errcat.toml").write_text(CONFIG.split("[upstreams.gadgets]")[0])
    inputs = INPUTS if workflow == "reusable-sync.yml" else None
    fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE})
    first = run_workflow(main, runs, env, upstream, workflow, inputs)  # no endpoint configured
    assert first["vllm"]["crawl"] == ({}, CRAWL_STEPS) and first["vllm"]["pull-request"][1] == PR_STEPS
    assert "nothing drafted" in (runs / "run-0" / "crawl-vllm-temp" / "stdout-drafts").read_text()
    assert not (main / "curated").exists() and "drafts=" not in (runs / "run-0" / "pr-vllm-temp" / "output-2").read_text()

    limit = "def limit(n):\n    if n > 5:\n        raise KeyError(f'{n} is over the limit')\n"
    fixture_repo.commit({"vllm/config.py": CODE.replace("far too large", "much too large") + "\n\n" + limit})
    with serving(_Drafter) as url:
        settings = {"vars.ERRCAT_LLM_URL": url, "secrets.ERRCAT_LLM_API_KEY": LLM_KEY}
        second = run_workflow(main, runs, env, upstream, workflow, inputs, settings)
        assert second["vllm"]["crawl"] == ({}, CRAWL_STEPS) and second["vllm"]["pull-request"][1] == PR_STEPS
        asked = [re.search(r"^Message template: (.*)$", body["messages"][-1]["content"], re.M).group(1) for _, body in _Drafter.seen]
        assert len(asked) == 2 and {auth for auth, _ in _Drafter.seen} == {f"Bearer {LLM_KEY}"}
        assert sum("much too large" in p for p in asked) == 1 and sum("over the limit" in p for p in asked) == 1
        assert not any("must be positive" in p for p in asked)  # unchanged: not drafted
        assert all(body["max_tokens"] == 2000 for _, body in _Drafter.seen)
        log = (runs / "run-1" / "crawl-vllm-temp" / "stdout-drafts").read_text()
        assert (
            "::warning::some entries were not drafted" in log
            and "the answer quotes the API key" in (runs / "run-1" / "crawl-vllm-temp" / "log-drafts").read_text()
        )
        assert (runs / "run-1" / "pr-vllm-temp" / "output-2").read_text().endswith("drafts=1\n")  # the label's flag

        records = {
            r["message"]["text"]: r
            for r in map(json.loads, gzip.decompress((main / "output" / "acme" / "widgets" / "errors.jsonl.gz").read_bytes()).splitlines())
        }
        reworded = records["x is much too large"]
        (draft,) = (main / "curated" / "acme" / "widgets").iterdir()
        assert draft.name == f"{reworded['id']}.yaml"
        assert draft.read_text().startswith("# Machine-written by fake-model, not reviewed")
        assert reworded["explanation_status"] == "draft" and reworded["explanation"]["model"] == "fake-model"
        assert reworded["explanation"]["what_it_means"] == "The value given is outside what this check allows."
        assert records["{n} is over the limit"]["explanation_status"] == "absent"
        assert records["x must be positive, got {x}"]["explanation_status"] == "absent"
        changelog = (runs / "run-1" / "pr-vllm-temp" / "changelog.md").read_text()
        assert "| Message reworded | 1 |" in changelog  # the sync's changelog, then the drafts'
        assert "## Machine-written drafts, not reviewed" in changelog and f"| `{reworded['id']}` | `curated/acme/widgets/{draft.name}` |" in changelog

        # Two more errors; the repository drafts at most one a run.
        more = "def a(n):\n    raise LookupError('no such alpha')\n\n\ndef b(n):\n    raise LookupError('no such beta')\n"
        fixture_repo.commit({"vllm/more.py": more})
        settings["vars.ERRCAT_LLM_MAX_DRAFTS"] = "1"
        third = run_workflow(main, runs, env, upstream, workflow, inputs, settings)
        assert third["vllm"]["pull-request"][1] == PR_STEPS
        asked = [re.search(r"^Message template: (.*)$", body["messages"][-1]["content"], re.M).group(1) for _, body in _Drafter.seen[2:]]
        assert len(asked) == 1 and "no such" in asked[0]  # neither the rejected one nor a drafted one again
        assert len(list((main / "curated" / "acme" / "widgets").iterdir())) == 2

    leaked = [p for p in [*runs.rglob("*"), *main.rglob("*")] if p.is_file() and LLM_KEY.encode() in p.read_bytes()]
    assert not leaked, leaked


# --------------------------------------------------------------------------- adoption by another repository

REUSABLE = ["reusable-sync.yml", "reusable-pages.yml"]
#: What a caller passes: errcat pinned by commit (here any 40 hex: the checkout is the runner's).
INPUTS = {"errcat-repository": "acme/errcat", "errcat-ref": "c" * 40, "python-version": "3.11", "catch-up": "false"}


@pytest.mark.parametrize("workflow", REUSABLE)
def test_the_reusable_workflows_state_their_inputs_and_install_errcat_at_the_pinned_commit(workflow):
    data = load(WORKFLOWS / workflow)
    assert set(data["on"]) == {"workflow_call"}
    inputs = data["on"]["workflow_call"]["inputs"]
    assert inputs["errcat-repository"]["required"] is True and inputs["errcat-ref"]["required"] is True
    assert all(spec.get("description") for spec in inputs.values())
    for name, job in data["jobs"].items():
        steps = job["steps"]
        errcat = [s for s in steps if s.get("with", {}).get("repository") == "${{ inputs.errcat-repository }}"]
        installs = [s for s in steps if "pip install" in s.get("run", "")]
        if installs:  # errcat is checked out at the pinned commit, beside the caller's tree, and installed from there
            assert [s["with"]["ref"] for s in errcat] == ["${{ inputs.errcat-ref }}"] and errcat[0]["with"]["path"] == ".errcat"
            assert [s.get("working-directory") for s in installs] == [".errcat"], name
    first = data["jobs"][next(iter(data["jobs"]))]["steps"][0]
    assert first["name"] == "Check that errcat is pinned to a commit"  # before anything is checked out


def test_the_reusable_sync_keeps_the_split_and_states_its_secret():
    _split("reusable-sync.yml", ["upstreams", "crawl"], "pull-request", ("errcat sync", "errcat validate"))
    call = load(WORKFLOWS / "reusable-sync.yml")["on"]["workflow_call"]
    # both optional: a token for the pull request, and the model endpoint's key for drafts
    assert call["secrets"] == {
        name: {"description": call["secrets"][name]["description"], "required": False} for name in ("PULL_REQUEST_TOKEN", "ERRCAT_LLM_API_KEY")
    }
    (create,) = [s for s in jobs("reusable-sync.yml")["pull-request"]["steps"] if "create-pull-request" in s.get("uses", "")]
    assert create["with"]["token"] == "${{ secrets.PULL_REQUEST_TOKEN || github.token }}"
    # the same cache as sync.yml's, so a repository moving from one to the other keeps it
    assert [s for s in jobs("reusable-sync.yml")["crawl"]["steps"] if "actions/cache@" in s.get("uses", "")][0]["with"] == [
        s for s in jobs()["crawl"]["steps"] if "actions/cache@" in s.get("uses", "")
    ][0]["with"]


def test_the_pages_workflow_renders_with_read_only_rights_and_deploys_with_the_pages_action_alone():
    render, deploy = jobs("reusable-pages.yml")["render"], jobs("reusable-pages.yml")["deploy"]
    assert render["permissions"] == {"contents": "read"}
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"} and deploy["needs"] == "render"
    assert deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    (upload,) = [s for s in render["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@")]
    assert upload["with"]["path"] == "${{ runner.temp }}/site"
    names = [s.get("name") for s in render["steps"]]
    assert names.index("Validate the catalogue") < names.index("Render the site with the dataset beside it") < names.index("Upload the site")


def test_another_repository_adopts_the_sync_and_gets_a_pull_request_only_when_an_error_changed(fixture_repo, gadgets, runner):
    """The reusable sync's own steps, run for a repository of its own (errcat.toml, two upstreams):
    a pull request for the first catalogue, none for a commit that changes no error, one for a
    reworded message; with catch-up, one for a commit that changes no error too."""
    main, runs, env = runner
    fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE})
    gadgets.commit({"gadgets/__init__.py": "", "gadgets/g.py": "def g(n):\n    raise KeyError(f'no gadget {n}')\n"})
    upstreams = {"vllm": ({"ERRCAT_REPO": str(fixture_repo.path)}, "acme/widgets"), "gadgets": ({"ERRCAT_REPO": str(gadgets.path)}, "acme/gadgets")}
    crawled = CRAWL_STEPS

    def sync(**inputs: str):
        return run_workflow(main, runs, env, upstreams, "reusable-sync.yml", {**INPUTS, **inputs})

    first = sync()
    assert all(first[name]["crawl"] == ({}, crawled) and first[name]["pull-request"][1] == PR_STEPS for name in upstreams)
    assert (main / "output" / "acme" / "widgets" / "manifest.json").is_file()
    pinned = json.loads((main / "output" / "acme" / "widgets" / "manifest.json").read_text())["commit"]

    fixture_repo.commit({"vllm/notes.py": "LIMIT = 1\n", "vllm/config.py": CODE + "# a comment\n"})
    quiet = sync()
    assert quiet["vllm"] == {"crawl": ({}, ["Sync with the upstream"]), "pull-request": ({}, PR_UNCHANGED)}
    assert json.loads((main / "output" / "acme" / "widgets" / "manifest.json").read_text())["commit"] == pinned

    caught_up = sync(**{"catch-up": "true"})
    assert caught_up["vllm"]["pull-request"][1] == PR_STEPS
    assert caught_up["gadgets"]["pull-request"] == ({}, PR_UNCHANGED)  # its commit is the one in place
    changelog = (runs / "run-2" / "pr-vllm-temp" / "changelog.md").read_text()
    assert "No changes." in changelog and "no error changed" in changelog

    reworded = fixture_repo.commit({"vllm/config.py": CODE.replace("far too large", "much too large")})
    moved = sync()
    assert moved["vllm"]["pull-request"][1] == PR_STEPS and moved["gadgets"]["pull-request"] == ({}, PR_UNCHANGED)
    assert (runs / "run-3" / "pr-vllm-temp" / "output-2").read_text() == f"commit={reworded}\n"


def test_a_reusable_workflow_refuses_errcat_pinned_by_a_branch(runner):
    main, runs, env = runner
    with pytest.raises(AssertionError, match="Check that errcat is pinned to a commit: ::error::errcat-ref must be a commit id"):
        run_workflow(main, runs, env, {}, "reusable-sync.yml", {**INPUTS, "errcat-ref": "main"})


def test_the_pages_workflow_publishes_the_site_with_the_dataset_as_its_json_api(fixture_repo, gadgets, runner, tmp_path):
    """The render job's own steps over a repository whose sync pull requests were merged: the
    site, and beside it under api/ the dataset byte for byte, which the pages' JSON links reach."""
    main, runs, env = runner
    fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": CODE})
    gadgets.commit({"gadgets/__init__.py": "", "gadgets/g.py": "def g(n):\n    raise KeyError(f'no gadget {n}')\n"})
    run_workflow(
        main, runs, env, {"vllm": ({"ERRCAT_REPO": str(fixture_repo.path)}, "acme/widgets"), "gadgets": ({"ERRCAT_REPO": str(gadgets.path)}, "acme/gadgets")}
    )
    context = {f"inputs.{k}": v for k, v in {**INPUTS, "dataset": ""}.items()}

    def render(checkout: Path, temp: Path, **inputs: str):
        return run_job(
            "reusable-pages.yml", "render", checkout, temp, env, {}, tmp_path / "no-artifacts", {**context, **{f"inputs.{k}": v for k, v in inputs.items()}}
        )

    with pytest.raises(AssertionError, match="holds no catalogue or more than one: name the one to publish"):
        render(_job_checkout(main, tmp_path / "pages-1"), tmp_path / "temp-1")
    named = render(_job_checkout(main, tmp_path / "pages-2"), tmp_path / "temp-2", dataset="acme/gadgets")
    assert named == ({}, ["Check that errcat is pinned to a commit", "Validate the catalogue", "Render the site with the dataset beside it"])
    assert tree(tmp_path / "temp-2" / "site" / "api" / "acme" / "gadgets") == tree(main / "output" / "acme" / "gadgets")

    alone = _job_checkout(main, tmp_path / "pages-3")  # a repository of one upstream: no input needed
    shutil.rmtree(alone / "output" / "acme" / "gadgets")
    assert render(alone, tmp_path / "temp-3") is not None
    site = tmp_path / "temp-3" / "site"
    assert (site / "index.html").is_file() and (site / ".nojekyll").is_file()
    assert tree(site / "api" / "acme" / "widgets") == tree(main / "output" / "acme" / "widgets")
    page = next((site / "errors").glob("*.html"))
    links = re.findall(r'href="([^"]*\.json)"', page.read_text())
    assert links and all((page.parent / link).resolve().is_file() for link in links), links
    assert all((page.parent / link).resolve().is_relative_to(site.resolve() / "api") for link in links)
