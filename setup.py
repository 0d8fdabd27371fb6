"""Builds attnsel._attnsel with the project's CMake build (pyproject.toml has the metadata).

Only the library and the module are built (no CLI, no tests), for the running interpreter, in
setuptools' build directory. CMAKE_BUILD_PARALLEL_LEVEL sets the parallelism (default: all
cores); ATTNSEL_CMAKE_ARGS adds options ("-DATTNSEL_WITH_YAML=OFF").
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(attnsel\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt: no project(attnsel VERSION x.y.z)")
    return match.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("cmake is needed to build attnsel (apt-get install cmake)")
        build = Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        configure = [
            cmake, "-S", str(ROOT), "-B", str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DATTNSEL_BUILD_TESTS=OFF", "-DATTNSEL_BUILD_TOOLS=OFF", "-DATTNSEL_INSTALL=OFF",
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
        subprocess.run(configure, check=True)
        subprocess.run([cmake, "--build", str(build), "--target", "attnsel_python", "-j", jobs], check=True)
        built = sorted((build / "python" / "attnsel").glob("_attnsel*"))
        if not built:
            raise RuntimeError(f"the build made no _attnsel module in {build / 'python' / 'attnsel'}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


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
