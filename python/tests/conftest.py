"""Shared fixtures: the attnsel CLI built next to the module (ATTNSEL_CLI, set by ctest), to
compare the module's documents with the command line's."""
import json
import os
import subprocess

import pytest


@pytest.fixture(autouse=True)
def no_gpu_from_environment(monkeypatch):
    # A GPU named in the environment would change what select() plans for.
    monkeypatch.delenv("ATTNSEL_GPU", raising=False)
    monkeypatch.delenv("ATTNSEL_MATRIX", raising=False)


@pytest.fixture
def cli():
    """Runs the attnsel binary: (exit code, stdout parsed as JSON)."""
    path = os.environ.get("ATTNSEL_CLI", "")
    if not path or not os.path.exists(path):
        pytest.skip("ATTNSEL_CLI names no built attnsel binary (ctest sets it)")

    def run(*args, cwd=None):
        env = {k: v for k, v in os.environ.items() if k not in ("ATTNSEL_GPU", "ATTNSEL_MATRIX")}
        p = subprocess.run([path, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
        assert p.returncode in (0, 1), f"attnsel {' '.join(args)} exited {p.returncode}: {p.stderr}"
        return p.returncode, json.loads(p.stdout)

    return run


@pytest.fixture
def source_dir():
    return os.environ.get("ATTNSEL_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
