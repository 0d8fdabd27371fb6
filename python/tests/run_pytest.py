"""Runs the Python module's tests under ctest: exit 77 (ctest: skipped) when pytest is missing."""
import sys

try:
    import pytest
except ImportError:
    print(f"pytest is not installed for {sys.executable}: the Python tests are skipped "
          "(apt-get install python3-pytest)")
    sys.exit(77)

sys.exit(pytest.main(sys.argv[1:]))
