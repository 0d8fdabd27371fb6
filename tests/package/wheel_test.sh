#!/usr/bin/env bash
# ctest package.wheel: the wheel setup.py builds carries the module and the attnsel command.
# Installed by pip into a scratch directory, its `attnsel` entry point and `python -m attnsel` run
# the same CLI as the build tree, with its exit status. Packaged from this build
# (ATTNSEL_PREBUILT_DIR), so nothing is compiled twice: the compile is the build's own.
# Usage: wheel_test.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
src=$1 build=$2 py=$3
out=$build/package-test/wheel
fail() { echo "package.wheel: $*" >&2; exit 1; }
"$py" -m pip --version >/dev/null 2>&1 || fail "$py has no pip (apt-get install python3-pip; scripts/dev installs it)"
"$py" -c 'import wheel, setuptools' 2>/dev/null || fail "$py lacks wheel or setuptools (apt-get install python3-wheel)"
rm -rf "$out"
mkdir -p "$out/src/python" "$out/dist"
# What the wheel is made of, apart from the tree (setup.py writes its build directory beside itself).
cp "$src/setup.py" "$src/pyproject.toml" "$src/README.md" "$src/LICENSE" "$src/CMakeLists.txt" "$out/src/"
cp -r "$src/python/attnsel" "$out/src/python/"
ATTNSEL_PREBUILT_DIR=$build "$py" -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$out/dist" "$out/src" \
  >"$out/pip-wheel.log" 2>&1 || { cat "$out/pip-wheel.log" >&2; fail "pip wheel failed"; }
wheels=("$out"/dist/attnsel-*.whl)
[[ -f ${wheels[0]} ]] || fail "no wheel in $out/dist"
"$py" - "${wheels[0]}" <<'PY' || fail "the wheel lacks a part (above)"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["attnsel/__init__.py", "attnsel/__main__.py", "attnsel/bin/attnsel", "attnsel/py.typed"]
missing = [n for n in need if n not in names]
if not any(n.startswith("attnsel/_attnsel") for n in names):
    missing.append("attnsel/_attnsel*")
entry = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
if not entry or "attnsel = attnsel.__main__:main" not in zipfile.ZipFile(sys.argv[1]).read(entry[0]).decode():
    missing.append("entry_points.txt: attnsel = attnsel.__main__:main")
if missing:
    print("missing:", ", ".join(missing), file=sys.stderr)
    sys.exit(1)
PY
"$py" -m pip install -q --no-deps --no-index --target "$out/site" "${wheels[0]}" >"$out/pip-install.log" 2>&1 ||
  { cat "$out/pip-install.log" >&2; fail "pip install failed"; }
[[ -x $out/site/bin/attnsel ]] || fail "pip installed no attnsel command ($out/site/bin)"
cli=$build/tools/attnsel/attnsel
run() { env -u ATTNSEL_CLI -u ATTNSEL_GPU -u ATTNSEL_MATRIX PYTHONPATH="$out/site" "$@"; }
want=$("$cli" --version)
[[ $(run "$out/site/bin/attnsel" --version) == "$want" ]] || fail "the entry point's --version differs from $cli's"
[[ $(run "$py" -m attnsel --version) == "$want" ]] || fail "python -m attnsel --version differs from $cli's"
want=$("$cli" --gpu sm90 --model mla --format json)
[[ $(run "$out/site/bin/attnsel" --gpu sm90 --model mla --format json) == "$want" ]] || fail "the entry point plans differently"
status=0
run "$out/site/bin/attnsel" --gpu no-such-gpu --model mha >/dev/null 2>&1 || status=$?
[[ $status == 2 ]] || fail "the entry point exited $status for a bad --gpu, not the CLI's 2"
status=0
run "$py" -m attnsel --gpu no-such-gpu --model mha >/dev/null 2>&1 || status=$?
[[ $status == 2 ]] || fail "python -m attnsel exited $status for a bad --gpu, not the CLI's 2"
echo "package.wheel: $(basename "${wheels[0]}") carries the module and the attnsel command; both entry points run it"
