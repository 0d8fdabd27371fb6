"""`python -m attnsel`: the CLI with the caller's arguments and its exit status (ATTNSEL_CLI in a
CMake tree; the wheel's own binary is tested by ctest package.wheel)."""
import os
import shutil
import subprocess
import sys

import attnsel
import attnsel.__main__ as entry


def run_module(*args, env_cli=True, module_dir=None):
    env = {k: v for k, v in os.environ.items() if k not in ("ATTNSEL_GPU", "ATTNSEL_MATRIX")}
    if not env_cli:
        env.pop("ATTNSEL_CLI", None)
    command = [sys.executable, "-m", "attnsel", *args]
    if module_dir is not None:  # a copy of __main__.py alone: no package, no bin/ beside it
        command = [sys.executable, os.path.join(module_dir, "__main__.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


def test_runs_the_cli_with_its_output(cli):
    p = run_module("--version")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == f"attnsel {attnsel.version}"
    plan = subprocess.run([os.environ["ATTNSEL_CLI"], "--gpu", "sm90", "--model", "mla", "--format", "json"],
                          capture_output=True, text=True).stdout
    assert run_module("--gpu", "sm90", "--model", "mla", "--format", "json").stdout == plan


def test_passes_the_exit_status_through(cli):
    p = run_module("--gpu", "no-such-gpu", "--model", "mha")
    assert p.returncode == 2
    assert "no-such-gpu" in p.stderr


def test_main_returns_the_status_when_called(cli, capfd):
    assert entry.main(["--version"]) == 0
    assert capfd.readouterr().out.startswith("attnsel ")


def test_without_a_cli_says_how_to_get_one(tmp_path):
    shutil.copy(entry.__file__, tmp_path / "__main__.py")
    p = run_module("--version", env_cli=False, module_dir=str(tmp_path))
    assert p.returncode == 2
    assert "no attnsel command" in p.stderr and "ATTNSEL_CLI" in p.stderr and "pip install" in p.stderr
    assert p.stdout == ""


def test_setup_py_says_what_to_do_without_the_wheel_package(source_dir, tmp_path):
    """pip install --no-build-isolation with a Python that lacks `wheel` (pyenv's, a bare venv) and a
    setuptools before 70.1: setup.py names the fix instead of setuptools' "invalid command 'bdist_wheel'"."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import builtins, runpy, sys\n"
        "real = builtins.__import__\n"
        "def no_wheel(name, *a, **k):\n"
        "    if name == 'wheel': raise ImportError('no wheel here')\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = no_wheel\n"
        "import setuptools\n"
        "setuptools.__version__ = '66.1.1'\n"
        "sys.argv = ['setup.py', 'bdist_wheel']\n"
        f"runpy.run_path({str(os.path.join(source_dir, 'setup.py'))!r}, run_name='__main__')\n")
    r = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, cwd=source_dir, timeout=60)
    assert r.returncode != 0
    assert "pip install wheel" in r.stderr and "--no-build-isolation" in r.stderr, r.stderr
