"""Packaging and installation: pinned, hash-checked, reproducible, and quiet.

A fresh clone's install must not depend on what the index serves that day or on the pip the
machine's virtualenv came with (.ci/run installs requirements/*.txt with --require-hashes), and
building errcat must not print a warning of its own making.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
REQUIREMENTS = ROOT / "requirements"


def pins(name: str) -> dict[str, tuple[str, list[str], str]]:
    """requirements/<name>.txt as {package: (version, hashes, marker)}."""
    text = (REQUIREMENTS / name).read_text(encoding="utf-8")
    out = {}
    for block in re.split(r"\n(?=\S)", text):
        lines = [ln.strip().rstrip("\\").strip() for ln in block.splitlines() if ln.strip() and not ln.strip().startswith("#")]
        if not lines:
            continue
        requirement = Requirement(lines[0])
        (spec,) = requirement.specifier
        assert spec.operator == "==", lines[0]
        hashes = [ln.removeprefix("--hash=") for ln in lines[1:]]
        assert all(ln.startswith("--hash=sha256:") for ln in lines[1:]), block
        out[canonicalize_name(requirement.name)] = (spec.version, hashes, str(requirement.marker or ""))
    return out


def test_every_pin_has_hashes():
    for name in ("bootstrap.txt", "run.txt", "test.txt"):
        found = pins(name)
        assert found and all(hashes for _, hashes, _ in found.values()), name


@pytest.mark.parametrize("lock,extras", [("run.txt", []), ("test.txt", ["test"])])
def test_the_locks_satisfy_pyproject(lock, extras):
    """A dependency added to pyproject.toml without running requirements/lock fails here."""
    wanted = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    for extra in extras:
        wanted += [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"][extra]]
    locked = pins(lock)
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement} is not in requirements/{lock}: run requirements/lock"
        assert locked[name][0] in requirement.specifier, f"requirements/{lock} pins {name}=={locked[name][0]}, outside {requirement}"
    if not extras:
        test_only = {canonicalize_name(Requirement(r).name) for r in PYPROJECT["project"]["optional-dependencies"]["test"]}
        assert not test_only & locked.keys()


def test_the_build_backend_and_installers_are_pinned_in_step():
    (backend,) = PYPROJECT["build-system"]["requires"]
    requirement = Requirement(backend)
    assert requirement.name == "setuptools" and str(requirement.specifier).startswith("==")
    bootstrap = pins("bootstrap.txt")
    assert set(bootstrap) == {"pip", "setuptools"}
    assert "==" + bootstrap["setuptools"][0] == str(requirement.specifier)
    assert bootstrap["pip"][0] == pins("test.txt")["pip"][0] == pins("run.txt")["pip"][0]


def test_ci_installs_only_hash_checked_files_and_builds_with_the_pinned_backend():
    steps = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if "pip install" in ln and not ln.lstrip().startswith("#")]
    assert steps == [
        "python -m pip install --quiet --require-hashes --no-deps -r requirements/bootstrap.txt",
        "python -m pip install --quiet --require-hashes --no-deps -r requirements/test.txt",
        "python -m pip install --quiet --no-deps --no-build-isolation -e .",
    ]


def test_pyproject_names_no_missing_files_and_no_deprecated_license():
    assert isinstance(PYPROJECT["project"]["license"], str)  # an SPDX expression, not a table
    package_data = PYPROJECT.get("tool", {}).get("setuptools", {}).get("package-data", {})
    for package, patterns in package_data.items():
        for pattern in patterns:
            assert list((ROOT / package.replace(".", "/")).glob(pattern)), f"package-data {package}: {pattern} matches nothing"


def _project(tmp_path: Path) -> Path:
    """What a build reads of this checkout, copied: pyproject, README and the package."""
    project = tmp_path / "errcat"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "crawler", project / "crawler", ignore=shutil.ignore_patterns("__pycache__"))
    return project


@pytest.mark.slow
def test_building_errcat_prints_no_warning(tmp_path):
    """The wheel and the editable wheel, built by the pinned setuptools as pip would."""
    setuptools = pytest.importorskip("setuptools")
    if setuptools.__version__ != pins("bootstrap.txt")["setuptools"][0]:
        pytest.skip(f"setuptools {setuptools.__version__} is not the pinned build backend (install requirements/bootstrap.txt)")
    project = _project(tmp_path)
    script = "import setuptools.build_meta as b, sys\nprint(b.build_wheel(sys.argv[1]), b.build_editable(sys.argv[1]))\n"
    proc = subprocess.run([sys.executable, "-W", "always", "-c", script, str(tmp_path / "dist")], cwd=project, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    wheels = proc.stdout.split()[-2:]
    assert wheels[0].startswith("errcat-") and wheels[1].startswith("errcat-") and "editable" in wheels[1]
    warnings = [ln for ln in (proc.stdout + proc.stderr).splitlines() if re.search(r"Warning\b|!!", ln)]
    assert warnings == []


#: The site's own files (site_html.static_file reads them as resources): a wheel without them
#: renders no site.
STATIC = ("crawler/consume/static/search.js", "crawler/consume/static/index.js", "crawler/consume/static/site.css")


@pytest.mark.slow
def test_the_wheel_and_the_sdist_hold_the_sites_javascript_and_css(tmp_path):
    import tarfile
    import zipfile

    pytest.importorskip("setuptools")
    project = _project(tmp_path)
    built = {}
    for how in ("wheel", "sdist"):  # one process each: an sdist built after a wheel went elsewhere
        script = f"import setuptools.build_meta as b, sys\nprint(b.build_{how}(sys.argv[1]))\n"
        proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / how)], cwd=project, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        built[how] = tmp_path / how / proc.stdout.split()[-1]
    with zipfile.ZipFile(built["wheel"]) as zf:
        in_wheel = {name: zf.read(name) for name in zf.namelist() if name in STATIC}
    with tarfile.open(built["sdist"]) as tf:
        in_sdist = {m.name.partition("/")[2] for m in tf.getmembers()}
    assert in_wheel == {name: (ROOT / name).read_bytes() for name in STATIC}
    assert set(STATIC) <= in_sdist
