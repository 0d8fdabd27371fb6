"""run_docs.py must fail on stale docs: tests/docs/stale holds a wrong transcript, an unknown
format, a misspelt subcommand and an option a subcommand lacks; each must be named."""
import os
import subprocess
import sys

cli, source = sys.argv[1], sys.argv[2]
here = os.path.join(source, "tests", "docs")
r = subprocess.run([sys.executable, os.path.join(here, "run_docs.py"), cli, os.path.join(here, "stale")],
                   capture_output=True, text=True, env={k: v for k, v in os.environ.items() if k != "ATTNSEL_UPDATE_DOCS"})
expected = ["README.md:4: the shown output differs", "README.md:9: attnsel refuses the documented syntax",
            "README.md:10: attnsel refuses the documented syntax", "README.md:11: --exit-status is not an option of `attnsel matrix diff`",
            "6 commands run, 1 transcripts compared, 1 synopsis lines checked; 4 failure(s)"]
missing = [e for e in expected if e not in r.stdout]
if r.returncode != 1 or missing:
    print(r.stdout, r.stderr)
    print(f"FAIL: exit {r.returncode} (expected 1); not said: {missing}")
    sys.exit(1)
print("run_docs.py names every stale line of tests/docs/stale")
