"""Builds attnsel._attnsel and the attnsel command with the project's CMake build (pyproject.toml
has the metadata); the wheel carries both, the command as attnsel/bin/attnsel, run by the `attnsel`
entry point and `python -m attnsel`.

Only the library, the module and the CLI are built (no tests), for the running interpreter, in
setuptools' build directory, with CMake's progress on stderr. CMAKE_BUILD_PARALLEL_LEVEL sets the
parallelism (default: all cores); ATTNSEL_CMAKE_ARGS adds options ("-DATTNSEL_WITH_YAML=OFF").
ATTNSEL_PREBUILT_DIR names a CMake build directory that already has both (python/attnsel/_attnsel*
and tools/attnsel/attnsel, built for this interpreter): they are packaged as they are, nothing is
compiled.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import setuptools
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# setuptools before 70.1 builds wheels through the `wheel` package; without it (pip install
# --no-build-isolation with a Python that lacks it: pyenv's, a bare venv) it stops with "invalid
# command 'bdist_wheel'". Say what to do instead.
if "bdist_wheel" in sys.argv:
    try:
        import wheel  # noqa: F401
    except ImportError:
        if tuple(int(p) for p in re.findall(r"\d+", setuptools.__version__)[:2]) < (70, 1):
            sys.exit(f"attnsel: setuptools {setuptools.__version__} builds a wheel with the 'wheel' package, which "
                     f"{sys.executable} lacks: pip install wheel, or let pip build in isolation (drop "
                     "--no-build-isolation)")

ROOT = Path(__file__).resolve().parent


def project_version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(attnsel\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt: no project(attnsel VERSION x.y.z)")
    return match.group(1)


def log(message: str) -> None:
    print(f"attnsel setup.py: {message}", file=sys.stderr, flush=True)


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        prebuilt = os.environ.get("ATTNSEL_PREBUILT_DIR")
        build = Path(prebuilt).resolve() if prebuilt else self.cmake_build()
        modules = sorted((build / "python" / "attnsel").glob("_attnsel*"))
        cli = build / "tools" / "attnsel" / "attnsel"
        if not modules:
            raise RuntimeError(f"no _attnsel module in {build / 'python' / 'attnsel'}")
        if not cli.is_file():
            raise RuntimeError(f"no attnsel command at {cli}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(modules[0], target)
        command = target.parent / "bin" / "attnsel"
        command.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cli, command)
        command.chmod(0o755)
        log(f"packaged {modules[0].name} and the attnsel command from {build}")

    def cmake_build(self) -> Path:
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("cmake is needed to build attnsel (apt-get install cmake)")
        build = Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        configure = [
            cmake, "-S", str(ROOT), "-B", str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DATTNSEL_BUILD_TESTS=OFF", "-DATTNSEL_BUILD_TOOLS=ON", "-DATTNSEL_INSTALL=OFF",
            "-DATTNSEL_BUILD_PYTHON=ON",
            f"-DPython3_EXECUTABLE={sys.executable}",
            *shlex.split(os.environ.get("ATTNSEL_CMAKE_ARGS", "")),
        ]
        try:
            import pybind11  # the build dependency; its CMake package comes with it
            configure.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass  # CMake may still find pybind11-dev's package
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        log(f"configuring in {build}")
        # pip hides a build's stdout unless -v: CMake's progress goes to stderr, which it shows.
        subprocess.run(configure, check=True, stdout=sys.stderr)
        log(f"building the module and the attnsel command with {jobs} jobs (a few minutes on 2 cores)")
        subprocess.run([cmake, "--build", str(build), "--target", "attnsel_python", "attnsel_cli", "-j", jobs],
                       check=True, stdout=sys.stderr)
        return build


# setuptools' build directory and egg-info, apart from CMake's build/ and the sources.
BUILD_BASE = "build-python"
os.makedirs(BUILD_BASE, exist_ok=True)

setup(
    version=project_version(),
    ext_modules=[Extension("attnsel._attnsel", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
    zip_safe=False,
)
