"""scripts/ctest_verdict.py against real ctest runs: a clean project passes; every way a test can
not run (a skip code, a skip pattern, a missing program, DISABLED, pytest's own skips, a gtest
skip inside a test that passed) fails, and is named."""
import os
import subprocess
import sys
import tempfile

CMAKE, CTEST, SOURCE = sys.argv[1], sys.argv[2], sys.argv[3]
VERDICT = os.path.join(SOURCE, "scripts", "ctest_verdict.py")

CLEAN = """
add_test(NAME ok COMMAND true)
add_test(NAME pytest_like COMMAND sh -c "echo '65 passed in 3.35s'")
set_tests_properties(pytest_like PROPERTIES LABELS python)
"""
# Each test that does not run in full, and the words the verdict must say about it.
NOT_RUN = {
    "skip_code": ('add_test(NAME skip_code COMMAND sh -c "exit 77")\n'
                  "set_tests_properties(skip_code PROPERTIES SKIP_RETURN_CODE 77)", "skip_code: skipped or not run"),
    "skip_pattern": ("add_test(NAME skip_pattern COMMAND sh -c \"echo '[  SKIPPED ] A.b'\")\n"
                     'set_tests_properties(skip_pattern PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED")',
                     "skip_pattern: skipped or not run"),
    "missing": ("add_test(NAME missing COMMAND /nonexistent/attnsel_test)", "missing: skipped or not run"),
    "disabled": ("add_test(NAME disabled COMMAND true)\nset_tests_properties(disabled PROPERTIES DISABLED TRUE)",
                 "disabled: disabled"),
    "pytest_skips": ("add_test(NAME pytest_skips COMMAND sh -c \"echo '3 passed, 2 skipped in 0.10s'\")",
                     "pytest_skips: pytest reports 2 skipped"),
    "gtest_skip": ("add_test(NAME gtest_skip COMMAND sh -c \"echo '[  SKIPPED ] Suite.Case (0 ms)'\")",
                   "gtest_skip: gtest skipped Suite.Case"),
}

failures = []


def project(tmp, name, body):
    src = os.path.join(tmp, name)
    os.makedirs(src)
    with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\nenable_testing()\n" + body + "\n")
    build = os.path.join(src, "b")
    subprocess.run([CMAKE, "-S", src, "-B", build], check=True, capture_output=True)
    junit = os.path.join(src, "junit.xml")
    subprocess.run([CTEST, "--test-dir", build, "--output-junit", junit], capture_output=True)
    return subprocess.run([sys.executable, VERDICT, "--build-dir", build, junit], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    r = project(tmp, "clean", CLEAN)
    if r.returncode != 0:
        failures.append(f"clean project: exit {r.returncode}: {r.stderr}")
    if "tests that ran: 2 of 2" not in r.stdout or "python 1 (65 passed)" not in r.stdout:
        failures.append(f"clean project: summary does not count the suites: {r.stdout!r}")
    for name, (body, said) in NOT_RUN.items():
        r = project(tmp, name, CLEAN + body)
        if r.returncode != 1:
            failures.append(f"{name}: exit {r.returncode}, expected 1: {r.stdout} {r.stderr}")
        if said not in r.stderr:
            failures.append(f"{name}: the verdict does not say {said!r}: {r.stderr!r}")
    r = project(tmp, "empty", "")
    if r.returncode != 1 or "nothing ran" not in r.stderr:
        failures.append(f"a run with no test: exit {r.returncode}: {r.stderr!r}")

for f in failures:
    print("FAIL:", f)
print(f"{len(NOT_RUN) + 2} projects, {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
