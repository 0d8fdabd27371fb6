#!/usr/bin/env python3
"""Hostile inputs for `attnsel check` (issue 26), data-driven: every case is an input (a file
from tests/fixtures/hostile, or one generated here when it is a name no checkout can hold or
megabytes no repository should) and the properties its run must have. No timings are asserted;
a run that does not end within a generous limit fails as a hang.

Properties checked on every run, in every format (text, json, github, markdown, sarif, concise,
gitlab), on stdout and stderr alike:
  - no line starts a workflow command (`::` after blanks) but attnsel's own annotations;
  - `##[` never appears; no ESC, BEL, C0 (but newline and tab) or C1 control, no bidi control;
  - JSON is one valid document whose `ok` is true exactly when the exit status is 0 (SARIF: the
    run's properties.ok; GitLab's report: an array);
  - the exit status is the one the case expects, and never a crash (a signal, 134, 139);
  - a secret planted outside the checked tree never appears.

Usage: run_hostile.py ATTNSEL_BINARY SOURCE_DIR
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

FORMATS = ("text", "json", "github", "markdown", "sarif", "concise", "gitlab")
SECRET = "ATTNSEL-SECRET-7f3a9c"
HANG_LIMIT = 120  # seconds; far above any run's time, only to turn a hang into a failure

# attnsel's own workflow commands: ::error/::warning/::notice with escaped properties and title.
OWN_COMMAND = re.compile(
    r"^::(error|warning|notice) (file=[^,:\n]*,)?(line=[0-9]+,)?(col=[0-9]+,)?(endLine=[0-9]+,endColumn=[0-9]+,)?"
    r"title=attnsel[ %][^:\n]*::")
BAD_CODE_POINTS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

failures = []
runs = 0


def fail(case, message):
    failures.append(f"{case}: {message}")


def check_channel(case, name, data, fmt, allow_commands):
    text = data.decode("utf-8", errors="replace")
    if "##[" in text:
        fail(case, f"{name} ({fmt}) holds ##[")
    bad = BAD_CODE_POINTS.search(text)
    if bad:
        fail(case, f"{name} ({fmt}) holds U+{ord(bad.group()):04X}")
    for line in text.split("\n"):
        if line.lstrip(" \t").startswith("::") and not (allow_commands and OWN_COMMAND.match(line)):
            fail(case, f"{name} ({fmt}) has a forged workflow command: {line[:120]!r}")
    if SECRET in text:
        fail(case, f"{name} ({fmt}) shows the secret planted outside the tree")


def run(cli, case, args, cwd, fmt=None, expect=None, env=None, stdout=None):
    """Runs attnsel; checks the channel properties; returns (status, stdout, stderr)."""
    global runs
    runs += 1
    argv = [cli] + args
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("ATTNSEL_", "GITHUB_"))}
    environment.update({"NO_COLOR": "1", "HOME": os.environ.get("HOSTILE_HOME", "/nonexistent")})
    environment.update(env or {})
    try:
        p = subprocess.run(argv, cwd=cwd, env=environment, stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=HANG_LIMIT)
    except subprocess.TimeoutExpired:
        fail(case, f"no end within {HANG_LIMIT} s: {args[:6]}")
        return None, b"", b""
    out = p.stdout or b""
    if p.returncode < 0 or p.returncode in (134, 139):
        fail(case, f"crashed with status {p.returncode}: {p.stderr[-300:]!r}")
    if expect is not None and p.returncode not in expect:
        fail(case, f"exit {p.returncode}, expected one of {sorted(expect)} ({fmt}); stderr: {p.stderr[-400:]!r}")
    check_channel(case, "stdout", out, fmt, allow_commands=fmt == "github")
    check_channel(case, "stderr", p.stderr, fmt, allow_commands=False)
    if fmt in ("json", "sarif", "gitlab") and stdout is None:
        try:
            doc = json.loads(out.decode("utf-8"))
            if fmt == "gitlab":
                if not isinstance(doc, list):
                    fail(case, "the GitLab report is not a JSON array")
            else:
                ok = doc.get("ok") if fmt == "json" else doc["runs"][0]["properties"].get("ok")
                if ok is not (p.returncode == 0):
                    fail(case, f"{fmt} ok={ok} but exit {p.returncode}")
        except (ValueError, KeyError, IndexError, TypeError) as e:
            fail(case, f"stdout is not one {fmt} document: {e}")
    return p.returncode, out, p.stderr


def check_all_formats(cli, case, paths, cwd, expect, extra=(), env=None):
    for fmt in FORMATS:
        run(cli, case, ["check", "--gpu", "sm90", *extra, "--format", fmt, "--files", *paths], cwd, fmt, expect, env)


# ---- hostile file names: generated (a checkout cannot hold most of them) ----

NAMES = [
    "x\n::error title=forged::p.sh",
    "x\n::add-mask::secret.sh",
    "x\r\n::warning::cr.sh",
    "  ::notice::lead.sh",
    "::stop-commands::token.sh",
    "##[error]anywhere.sh",
    "a##[group]b.sh",
    "esc\x1b]52;c;QUJD\x07clip.sh",
    "esc\x1b[2J\x1b[Hclear.sh",
    "bel\x07.sh",
    "csi\u009b2J.sh",
    "rlo\u202etxt.sh",
    "iso\u2066x\u2069.sh",
    "ls\u2028ps\u2029.sh",
    "pct%0A::error::x.sh",
    "comma,colon:percent%.sh",
    "md|pipe`tick`[link](javascript:x)<b>.sh",
    "\x01\x02\x7f.sh",
    "bad\xff\xfeutf8.sh".encode("latin-1").decode("utf-8", errors="surrogateescape"),
    "--help",
    "-h",
    "--version",
    "--matrix=evil.json",
    "--format=json",
    "--json",
    "--",
    "-",
    "--files",
    "--gpu=cpu",
    "--strict=false",
    "x\n##[add-mask]y.sh",
    "\t::error::tab.sh",
    "x\n\n::group::g.sh",
    "nel\u0085::error::x.sh",
    "osc8\x1b]8;;mailto:evil\x1b\\link.sh",
    b"raw-c1-\x9b31m.sh".decode("utf-8", errors="surrogateescape"),
    "rlm\u200f\u200ealm\u061c.sh",
    "%25%0A%0D.sh",
    "::",
    "##[",
    "-- --help",
    "--stdin-filename=x.sh",
    "--engine-version=0.0.1",
    "--unknown-model=note",
    "*",
    "?",
]
BAD_COMMAND = b"python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct --attention-backend flashinfr\n"


def hostile_names(cli, work):
    tree = os.path.join(work, "names")
    os.makedirs(tree)
    with open(os.path.join(tree, "evil.json"), "w") as f:
        f.write('{"schema_version": 1}\n')
    for i, name in enumerate(NAMES):
        path = os.path.join(os.fsencode(tree), os.fsencode(name))
        with open(path, "wb") as f:
            f.write(BAD_COMMAND)
        case = f"name {i} {name!r}"
        # A file with a failing command: never exit 0, never an option, never a forged line.
        check_all_formats(cli, case, [os.fsdecode(os.fsencode(name))], tree, {1})
        os.unlink(path)
        # The same name as a dangling symlink: the "cannot read" message on stderr.
        os.symlink("/nonexistent/target", path)
        check_all_formats(cli, case + " (dangling)", [os.fsdecode(os.fsencode(name))], tree, {2})
        os.unlink(path)
    # All of them at once in one directory, walked.
    for name in NAMES:
        with open(os.path.join(os.fsencode(tree), os.fsencode(name + ".sh")), "wb") as f:
            f.write(BAD_COMMAND)
    check_all_formats(cli, "all names, walked", ["."], tree, {1})


# ---- hostile file contents: tests/fixtures/hostile/*, with manifest.json ----

def hostile_fixtures(cli, fixtures, work):
    manifest = json.load(open(os.path.join(fixtures, "manifest.json")))
    tree = os.path.join(work, "fixtures")
    shutil.copytree(fixtures, tree)
    # Outside the checked tree: a secret the fixtures name by absolute and relative path.
    outside = os.path.join(work, "outside")
    os.makedirs(os.path.join(outside, "model"))
    for p in (os.path.join(outside, "secret.json"), os.path.join(outside, "model", "config.json")):
        with open(p, "w") as f:
            f.write('{"architectures": [' + SECRET + "]}\n")
    os.symlink(os.path.join(outside, "model"), os.path.join(tree, "inside", "link-to-outside"))
    for entry in manifest["cases"]:
        text_args = [a.replace("@OUTSIDE@", outside) for a in entry.get("args", [])]
        env = {k: v.replace("@OUTSIDE@", outside) for k, v in entry.get("env", {}).items()}
        if "@OUTSIDE@" in open(os.path.join(tree, entry["file"]), "rb").read().decode("utf-8", "replace"):
            p = os.path.join(tree, entry["file"])
            data = open(p, "rb").read().replace(b"@OUTSIDE@", outside.encode())
            open(p, "wb").write(data)
        case = f"fixture {entry['file']}"
        expect = set(entry["exit"])
        for fmt in FORMATS:
            status, out, err = run(cli, case, ["check", "--gpu", "sm90", *text_args, "--format", fmt, "--files",
                                               entry["file"]], tree, fmt, expect, env)
            if status is None:
                continue
            shown = (out + err).decode("utf-8", "replace")
            for needle in entry.get("shows", []):
                if fmt == "text" and needle not in shown:
                    fail(case, f"({fmt}) does not show {needle!r}")
            for needle in entry.get("never", []):
                if needle in shown:
                    fail(case, f"({fmt}) shows {needle!r}")


# ---- generated: budgets, quadratic inputs, special files, failed writes ----

def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def deep_tree(root, depth):
    """A directory `depth` levels deep, made and removed through descriptors (no path is that short)."""
    fd = os.open(root, os.O_RDONLY)
    fds = [fd]
    for _ in range(depth):
        os.mkdir("d", dir_fd=fds[-1])
        fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
    with open(os.open("x.sh", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fds[-1]), "wb") as f:
        f.write(BAD_COMMAND)
    return fds


def remove_deep_tree(fds):
    os.unlink("x.sh", dir_fd=fds[-1])
    for i in range(len(fds) - 1, 0, -1):
        os.close(fds[i])
        os.rmdir("d", dir_fd=fds[i - 1])
    os.close(fds[0])


def generated(cli, work):
    g = os.path.join(work, "generated")
    os.makedirs(g)
    launch = "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct"
    # A variable doubled 40 times (2^40 bytes if built): a finding, exit 2, no bad_alloc.
    write(os.path.join(g, "double.sh"), "X=ab\n" + 'X="$X$X"\n' * 40 + launch + ' --attention-backend "$X"\n')
    # X+= in a loop of lines.
    write(os.path.join(g, "append.sh"), "X=" + "a" * 4096 + "\n" + 'X+="$X"\n' * 40 + launch + " --attention-backend $X\n")
    # An array spliced into itself.
    write(os.path.join(g, "splice.sh"), "A=(a b c d)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 30 + launch + ' "${A[@]}"\n')
    # One command with a million arguments.
    write(os.path.join(g, "million.sh"), launch + " --tp 1" * 500000 + "\n")
    # 300k arguments in a Kubernetes args list.
    write(os.path.join(g, "pod.yaml"), "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n    command: [python3, -m, "
          "sglang.launch_server]\n    args:\n" + "    - --tp\n    - '1'\n" * 150000)
    # (An array keeps at most 4,096 elements: splice.sh stays within the budget and is judged; so
    # does the Pod's 300,000 arguments, under the 524,288 a command may have.)
    for name, expect in (("double.sh", {2}), ("append.sh", {2}), ("splice.sh", {1}), ("million.sh", {2}),
                         ("pod.yaml", {1})):
        check_all_formats(cli, f"budget {name}", [name], g, expect)
    # Quadratic before: 30k commands in one file, one file named 20,000 times, 100k --tp,
    # 50k unknown flags, a --config with 100k unknown keys.
    write(os.path.join(g, "many.sh"), (launch + " --attention-backend fa3\n") * 30000)
    run(cli, "30k commands", ["check", "--gpu", "sm90", "--format", "github", "--files", "many.sh"], g, "github", {0})
    # JSON streams the same results (12 KB each, every rejected alternative with its rule): a tenth
    # of them is a valid document of 38 MB; the 30k would be 380 MB for Python to parse.
    write(os.path.join(g, "many-json.sh"), (launch + " --attention-backend fa3\n") * 3000)
    run(cli, "3k commands as JSON", ["check", "--gpu", "sm90", "--format", "json", "--files", "many-json.sh"], g, "json", {0})
    run(cli, "one file 20,000 times", ["check", "--gpu", "sm90", "--format", "github", "--files"] + ["many.sh"] * 20000, g,
        "github", {0})
    write(os.path.join(g, "tp.sh"), launch + " --tp 1" * 100000 + "\n")
    status, out, _ = run(cli, "100k --tp", ["check", "--gpu", "sm90", "--format", "json", "--files", "tp.sh"], g, "json", {0})
    if status == 0 and out.count(b'"rule": "args.prefix"') > 1:
        fail("100k --tp", f"{out.count(b'args.prefix')} prefix notes, expected one")
    write(os.path.join(g, "unknown.sh"), launch + "".join(f" --no-such-flag-{i}" for i in range(50000)) + "\n")
    run(cli, "50k unknown flags", ["check", "--gpu", "sm90", "--format", "text", "--files", "unknown.sh"], g, "text", {1})
    write(os.path.join(g, "cfg", "keys.yaml"), "".join(f"unknown-key-{i}: {i}\n" for i in range(100000)))
    write(os.path.join(g, "cfg", "run.sh"), launch + " --config keys.yaml\n")
    run(cli, "--config with 100k unknown keys", ["check", "--gpu", "sm90", "--format", "github", "--files", "cfg"], g,
        "github", {1})
    # A tree 5,000 directories deep: refused past the walk's depth, with a message; exit 2.
    fds = deep_tree(g, 5000)
    try:
        _, _, err = run(cli, "5,000 levels deep", ["check", "--gpu", "sm90", "--files", "d"], g, "text", {2})
        if b"deeper than" not in err:
            fail("5,000 levels deep", f"no message about the depth: {err[-300:]!r}")
    finally:
        remove_deep_tree(fds)
    # GITHUB_STEP_SUMMARY naming a FIFO, a directory, /dev/null: never waited on, never written.
    fifo = os.path.join(g, "summary.fifo")
    os.mkfifo(fifo)
    for summary in (fifo, g, "/dev/null"):
        run(cli, f"step summary {summary}", ["check", "--gpu", "sm90", "--format", "github", "--files", "many.sh"], g,
            "github", {0}, env={"GITHUB_STEP_SUMMARY": summary})
    # A failed write never passes: stdout on /dev/full, in every subcommand.
    with open("/dev/full", "wb") as full:
        for args in (["check", "--gpu", "sm90", "--files", "many.sh"], ["check", "--gpu", "sm90", "--json", "--files", "many.sh"],
                     ["--version"], ["--help"], ["matrix"], ["matrix", "--json"], ["select", "--gpu", "sm90", "--model", "mla"],
                     ["explain", "--gpu", "sm90", "--model", "mla"], ["completion", "bash"], ["man"]):
            status, _, err = run(cli, f"/dev/full {' '.join(args)}", args, g, None, {2}, stdout=full)
            if status == 2 and b"writing standard output failed" not in err:
                fail(f"/dev/full {' '.join(args)}", f"no message: {err[-200:]!r}")


def main():
    cli, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    fixtures = os.path.join(source, "tests", "fixtures", "hostile")
    work = tempfile.mkdtemp(prefix="attnsel-hostile.")
    try:
        hostile_names(cli, work)
        hostile_fixtures(cli, fixtures, work)
        generated(cli, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print(f"{runs} runs, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
