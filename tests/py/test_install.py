"""An install without root: cmake --install and pip install ./python into one prefix by a user
who is not root (made here with useradd), then the quick ping-pong from that prefix; and the
Spack recipe kept in the repository."""

import ast
import hashlib
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.system

RECIPE = REPO / "packaging" / "spack" / "packages" / "jostle" / "package.py"
# The package's own dependencies, read from its pyproject (one list to keep).
PY_DEPS = tuple(re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0] for d in
                tomllib.loads((REPO / "python" / "pyproject.toml").read_text())["project"]["dependencies"])


def project_version():
    m = re.search(r"project\(jostle VERSION ([0-9.]+)", (REPO / "CMakeLists.txt").read_text())
    return m.group(1)


@pytest.mark.unit
def test_versions_agree_and_spack_recipe_parses():
    tree = ast.parse(RECIPE.read_text(), str(RECIPE))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert cls.name == "Jostle" and [b.id for b in cls.bases] == ["CMakePackage"]
    calls = [n for n in ast.walk(cls) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]

    def args(fn):
        return [ast.literal_eval(c.args[0]) for c in calls if c.func.id == fn and c.args]
    version = project_version()
    assert version in args("version")
    pyproject = (REPO / "python" / "pyproject.toml").read_text()
    assert f'version = "{version}"' in pyproject
    from jostle import __version__
    assert __version__ == version
    assert {"simgrid", "starpu", "openblas"} <= set(args("variant"))
    deps = args("depends_on")
    assert "mpi" in deps and any(d.startswith("hwloc") for d in deps)
    assert any(d.startswith("cmake") for d in deps)
    assert "def cmake_args" in RECIPE.read_text()


@pytest.fixture
def user():
    """(name, home) of a user who is not root: made here as root, else the current one."""
    if os.geteuid() != 0:
        yield pwd.getpwuid(os.getuid()).pw_name, Path(tempfile.mkdtemp(prefix="jostle-inst-"))
        return
    if not shutil.which("useradd"):
        pytest.skip("no useradd to make a user who is not root")
    name = f"jostle-t{os.getpid()}"
    home = Path(tempfile.mkdtemp(prefix="jostle-inst-")) / name
    subprocess.run(["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/bash",
                    name], check=True)
    home.parent.chmod(0o755)
    try:
        yield name, home
    finally:
        subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)
        shutil.rmtree(home.parent, ignore_errors=True)


# Kept between runs beside the builds (one download per set of versions, not one per run).
WHEELHOUSE = REPO / "build" / "wheelhouse"


def wheelhouse() -> Path:
    """The Python dependencies as wheels (the versions of this environment), so the user's pip
    needs no index; skipped only when they cannot be had."""
    pins = [f"{p}=={metadata.version(p)}" for p in PY_DEPS] + ["setuptools", "wheel"]
    directory = WHEELHOUSE / hashlib.sha256(" ".join(pins).encode()).hexdigest()[:12]
    if not (directory / ".complete").exists():
        directory.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(directory),
                            *pins], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            pytest.skip("cannot fetch the Python dependencies for the install: "
                        + r.stderr.strip().splitlines()[-1])
        (directory / ".complete").write_text("\n".join(pins) + "\n")
    return directory


@pytest.mark.slow
def test_install_into_a_prefix_as_a_user_then_pingpong(user):
    if not shutil.which("mpicc.openmpi"):
        pytest.skip("no Open MPI compiler (make deps)")
    name, home = user
    wheels = home.parent / "wheels"     # a copy the user can read wherever the checkout is
    shutil.copytree(wheelhouse(), wheels)
    wheels.chmod(0o755)
    src, prefix = home / "src", home / "prefix"
    # the sources as a release would ship them: what git tracks (or would), nothing built
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, check=True).stdout
    src.mkdir()
    subprocess.run(["tar", "--null", "-T", "-", "-cf", "-"], cwd=REPO, input=files, check=True,
                   stdout=open(home / "src.tar", "wb"))
    subprocess.run(["tar", "-xf", str(home / "src.tar"), "-C", str(src)], check=True)
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", f"{name}:", str(home)], check=True)
    script = f"""set -e
cd {src}
cmake -S . -B {home}/build -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER=mpicc.openmpi \\
      -DBUILD_TESTING=OFF >/dev/null
cmake --build {home}/build -j 2 --target jostle-bench >/dev/null
cmake --install {home}/build --prefix {prefix} >/dev/null
python3 -m venv {prefix}
{prefix}/bin/pip install -q --no-compile --no-index --find-links {wheels} ./python
cd {home}
export PATH={prefix}/bin:/usr/bin:/bin
test "$(command -v jostle-bench)" = {prefix}/bin/jostle-bench
jostle machine --topology {prefix}/share/jostle/topologies/henri.xml
jostle pingpong --sizes 4 --runs 1 --output-dir {home}/results --campaign inst
"""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    argv = ["bash", "-c", script]
    if os.geteuid() == 0:
        argv = ["runuser", "-u", name, "--", "env", "-i", *[f"{k}={v}" for k, v in env.items()],
                *argv]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=900,
                       env=None if os.geteuid() == 0 else {**os.environ, **env})
    assert r.returncode == 0, f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    assert "NUMA node" in r.stdout          # henri.xml from the installed share/
    runs = list((home / "results" / "inst").glob("pingpong-*.jsonl"))
    assert len(runs) == 1
    meta = runs[0].open().readline()
    assert f'"{prefix}/bin/jostle-bench"' in meta and "Open MPI" in meta
    assert runs[0].stat().st_uid == pwd.getpwnam(name).pw_uid
