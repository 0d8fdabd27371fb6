"""`python -m attnsel` and the wheel's `attnsel` command: run the attnsel CLI with these arguments.

The wheel carries the CLI as attnsel/bin/attnsel, built with the module (setup.py). A module built
in a CMake tree has none there; ATTNSEL_CLI may then name a built attnsel binary.
"""
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional


def cli_path() -> Optional[str]:
    """The attnsel binary this module runs: the wheel's own, else ATTNSEL_CLI; None without either."""
    own = Path(__file__).resolve().parent / "bin" / "attnsel"
    if own.is_file() and os.access(own, os.X_OK):
        return str(own)
    named = os.environ.get("ATTNSEL_CLI", "")
    if named and os.path.isfile(named) and os.access(named, os.X_OK):
        return named
    return None


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    cli = cli_path()
    if cli is None:
        sys.stderr.write(
            "attnsel: this installation has no attnsel command: the Python module was built without it "
            "(a CMake tree). Install the wheel (pip install . builds the module and the command), or set "
            "ATTNSEL_CLI to a built attnsel binary\n")
        return 2
    if argv is None and os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(cli, [cli, *args])  # the CLI's exit status and signals are the command's own
    return subprocess.call([cli, *args])


if __name__ == "__main__":
    sys.exit(main())
