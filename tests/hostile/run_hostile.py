#!/usr/bin/env python3
"""Hostile inputs for `attnsel check` (issue 26), data-driven: every case is an input (a file
from tests/fixtures/hostile, or one generated here when it is a name no checkout can hold or
megabytes no repository should) and the properties its run must have. No timings are asserted;
a run that does not end within a generous limit fails as a hang.

Properties checked on every run, in every format it runs in (text, json, github, markdown, sarif,
concise, gitlab; a case whose property does not depend on the format runs in fewer, as it says),
on stdout and stderr alike:
  - no line starts a workflow command (`::` after blanks) but attnsel's own annotations;
  - `##[` never appears; no ESC, BEL, C0 (but newline and tab) or C1 control, no bidi control;
  - JSON is one valid document whose `ok` is true exactly when the exit status is 0 (SARIF: the
    run's properties.ok; GitLab's report: an array);
  - the exit status is the one the case expects, and never a crash (a signal, 134, 139);
  - a secret planted outside the checked tree never appears;
  - the run's peak memory stays under 1 GiB (3 GiB for a sanitizer build).

The inputs of round four (tests/fixtures/hostile/h4 and round_four() here) are counted per class
of hostile input, printed at the end.

Usage: run_hostile.py ATTNSEL_BINARY SOURCE_DIR
"""
import json
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import tempfile

FORMATS = ("text", "json", "github", "markdown", "sarif", "concise", "gitlab")
SECRET = "ATTNSEL-SECRET-7f3a9c"
HANG_LIMIT = 120  # seconds; far above any run's time, only to turn a hang into a failure
# Memory: no run may reach 1 GiB resident (the inputs took more); a sanitizer build maps
# shadow memory and keeps freed blocks in quarantine, so it is allowed three. Without a sanitizer
# the address space is also capped, so that a run that grows without bound fails fast instead of
# taking the machine's memory.
RSS_LIMIT_MIB = 1024
ADDRESS_SPACE_LIMIT = 4 << 30
sanitized = False
max_rss_seen = 0  # KiB: the largest child so far (getrusage reports the maximum over all children)

# attnsel's own workflow commands: ::error/::warning/::notice with escaped properties and title.
OWN_COMMAND = re.compile(
    r"^::(error|warning|notice) (file=[^,:\n]*,)?(line=[0-9]+,)?(col=[0-9]+,)?(endLine=[0-9]+,endColumn=[0-9]+,)?"
    r"title=attnsel[ %][^:\n]*::")
BAD_CODE_POINTS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

failures = []
runs = 0
classes = {}  # the new inputs of each class (round four), for the count printed at the end


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


def limit_memory():
    if not sanitized:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))


def check_memory(case):
    """Fails the case when the run just waited for was the largest child yet, and over the limit."""
    global max_rss_seen
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    limit = RSS_LIMIT_MIB * (3 if sanitized else 1) * 1024
    if rss > max_rss_seen and rss > limit:
        fail(case, f"peak memory {rss // 1024} MiB, over {limit // 1024} MiB")
    max_rss_seen = max(max_rss_seen, rss)


def run(cli, case, args, cwd, fmt=None, expect=None, env=None, stdout=None, preexec=None, action=False):
    """Runs attnsel; checks the channel properties; returns (status, stdout, stderr)."""
    global runs
    runs += 1
    argv = [cli] + args
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("ATTNSEL_", "GITHUB_"))}
    environment.update({"NO_COLOR": "1", "HOME": os.environ.get("HOSTILE_HOME", "/nonexistent")})
    environment.update(env or {})
    try:
        p = subprocess.run(argv, cwd=cwd, env=environment, stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=HANG_LIMIT, preexec_fn=lambda: (limit_memory(), preexec and preexec()))
    except subprocess.TimeoutExpired:
        fail(case, f"no end within {HANG_LIMIT} s: {args[:6]}")
        return None, b"", b""
    finally:
        check_memory(case)
    out = p.stdout or b""
    if p.returncode < 0 or p.returncode in (134, 139):
        fail(case, f"crashed with status {p.returncode}: {p.stderr[-300:]!r}")
    if expect is not None and p.returncode not in expect:
        fail(case, f"exit {p.returncode}, expected one of {sorted(expect)} ({fmt}); stderr: {p.stderr[-400:]!r}")
    check_channel(case, "stdout", out, fmt, allow_commands=fmt == "github")
    check_channel(case, "stderr", p.stderr, fmt, allow_commands=action)  # the Action's own errors go there
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

def prepare_fixture(entry, tree, outside):
    """What a checkout cannot hold, made beside the case's files: symbolic links (a copy would follow
    them), FIFOs, sparse files of gigabytes."""
    for rel, target in entry.get("symlinks", {}).items():
        path = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.lexists(path):
            os.symlink(target.replace("@OUTSIDE@", outside), path)
    for rel in entry.get("fifos", []):
        path = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            os.mkfifo(path)
    for rel, size in entry.get("sparse", {}).items():
        path = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.truncate(size)


def hostile_fixtures(cli, fixtures, work, round_four_only=None):
    """The manifest's fixtures; `round_four_only` True: those of round four (with a class), False: the
    others, None: all."""
    manifest = json.load(open(os.path.join(fixtures, "manifest.json")))
    tree = os.path.join(work, "fixtures")
    shutil.copytree(fixtures, tree)
    # Outside the checked tree: a secret the fixtures name by absolute and relative path.
    outside = os.path.join(work, "outside")
    os.makedirs(os.path.join(outside, "model"))
    for p in (os.path.join(outside, "secret.json"), os.path.join(outside, "model", "config.json")):
        with open(p, "w") as f:
            f.write('{"architectures": [' + SECRET + "]}\n")
    with open(os.path.join(outside, "cfg.yaml"), "w") as f:
        f.write(f"attention-backend: {SECRET}\n{SECRET}: 1\n")
    os.symlink(os.path.join(outside, "model"), os.path.join(tree, "inside", "link-to-outside"))
    for entry in manifest["cases"]:
        if round_four_only is not None and ("class" in entry) != round_four_only:
            continue
        text_args = [a.replace("@OUTSIDE@", outside) for a in entry.get("args", [])]
        env = {k: v.replace("@OUTSIDE@", outside) for k, v in entry.get("env", {}).items()}
        p = os.path.join(tree, entry["file"])
        if os.path.isfile(p) and b"@OUTSIDE@" in open(p, "rb").read():  # (a directory is walked as it is)
            data = open(p, "rb").read().replace(b"@OUTSIDE@", outside.encode())
            open(p, "wb").write(data)
        prepare_fixture(entry, tree, outside)
        case = f"fixture {entry['file']}"
        if "class" in entry:
            classes[entry["class"]] = classes.get(entry["class"], 0) + 1
        expect = set(entry["exit"])
        gpu = ["--gpu", "sm90"] if entry.get("gpu", True) else []
        for fmt in entry.get("formats", FORMATS):
            status, out, err = run(cli, case, ["check", *gpu, *text_args, "--format", fmt, "--files", entry["file"]], tree,
                                   fmt, expect, env)
            if status is None:
                continue
            shown = (out + err).decode("utf-8", "replace")
            for needle in entry.get("shows", []):
                if fmt in ("text", "json") and needle not in shown:
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
    # 20k refused values of one choice flag (each looked up against every given flag: 50 s before;
    # bench/hostile_quadratic.sh times it), a failing command whose fix is not searched past 512 args.
    write(os.path.join(g, "choices.sh"), launch + "".join(f" --kv-cache-dtype fp8_e{i % 9}m2" for i in range(20000)) + "\n")
    run(cli, "20k refused choices", ["check", "--gpu", "sm90", "--format", "text", "--files", "choices.sh"], g, "text", {1})
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


# ---- round four (issue 26): generated inputs of every class, beside the fixtures of h4/ ----
#
# Inputs a checkout cannot hold (names, special files, failed writes) or should not (megabytes).
# Escapes and workflow commands in names are checked in one format of each output channel (text,
# markdown, github, json); a property that does not depend on the output format (an option taken
# from a file name, a run's time, its memory) in one, the Action's github: this test also runs
# under ASan in CI, where each run costs several times as much.

LAUNCH = "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct"
K8S_POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: s\nspec:\n  containers:\n  - name: s\n"
           "    image: lmsysorg/sglang:latest\n")
K8S_COMMAND = "[python3, -m, sglang.launch_server, --model-path, meta-llama/Meta-Llama-3.1-8B-Instruct"


def count(cls):
    classes[cls] = classes.get(cls, 0) + 1


CHANNELS = ("text", "markdown", "github", "json")  # one format of each output channel


def check_formats(cli, cls, case, paths, cwd, expect, formats=("github",), env=None, files=True, flags=()):
    """One input of class `cls`: `check --gpu sm90 FLAGS --format F --files PATHS` in each format."""
    count(cls)
    out = {}
    for fmt in formats:
        out[fmt] = run(cli, f"{cls}: {case}", ["check", "--gpu", "sm90", *flags, "--format", fmt,
                                               *(["--files"] if files else []), *paths], cwd, fmt, expect, env)
    return out


OPTION_NAMES = [
    "--gpu=sm100", "--exit-zero", "-q", "--quiet", "--format=sarif", "--exclude=*", "--include=**", "--no-gitignore",
    "--verbose", "--cuda=13.0", "--sglang-version=0.4.0", "--vllm-version=0.10.0", "--engine-version=0.4.0",
    "--model-kind=mla", "--unknown-model=error", "--installed=x", "--color=always", "--matrix", "---",
    "\u2013-help", "--=", "-=", "--files=x", "-qq", "@args.txt", "-V", "--json=false", "--help-all", "-hq", " --help",
    "--help ", "=", "-0", "--gpu", "--stdin-filename=x.sh", "-- python3 -m sglang.launch_server",
    "--\n--help", "--exit-zero\n--strict",
]


def round_four_arguments(cli, work, source):
    tree = os.path.join(work, "r4-args")
    os.makedirs(tree)
    # A matrix-shaped file beside the names: never loaded, whatever a name says.
    write(os.path.join(tree, "evil.json"), '{"schema_version": 1, "engine": "sglang", "backends": []}\n')
    write(os.path.join(tree, "args.txt"), "--exit-zero\n")
    for name in OPTION_NAMES:
        path = os.path.join(tree, name)
        write(path, BAD_COMMAND)
        check_formats(cli, "argument hygiene", f"file named {name!r}", [name], tree, {1})
        os.unlink(path)
        os.symlink("/nonexistent/target", path)
        check_formats(cli, "argument hygiene", f"dangling symlink named {name!r}", [name], tree, {2})
        os.unlink(path)
    write(os.path.join(tree, "bad.sh"), BAD_COMMAND)
    write(os.path.join(tree, "--matrix"), BAD_COMMAND)
    # Pairs and orders: an option and its value as two names; --files twice; a launch command after
    # --files (paths, that do not exist); --files with nothing after it; an empty name.
    check_formats(cli, "argument hygiene", "--matrix evil.json as two names", ["--matrix", "evil.json", "bad.sh"], tree, {1})
    check_formats(cli, "argument hygiene", "--files twice", ["--files", "bad.sh"], tree, {2})
    check_formats(cli, "argument hygiene", "-- COMMAND after --files", ["bad.sh", "--", *LAUNCH.split()], tree, {2})
    check_formats(cli, "argument hygiene", "--files alone", [], tree, {2})
    check_formats(cli, "argument hygiene", "an empty name", ["", "bad.sh"], tree, {2})
    check_formats(cli, "argument hygiene", "- (a file named -, absent)", ["-"], tree, {2})
    write(os.path.join(tree, "-"), BAD_COMMAND)
    check_formats(cli, "argument hygiene", "- (a file named -)", ["-"], tree, {1})
    # --files before `--`: the marker is taken; after `--` it is the launch command's.
    check_formats(cli, "argument hygiene", "--files inside the launch command",
                  ["--", *LAUNCH.split(), "--files", "x", "--attention-backend", "flashinfr"], tree, {1}, files=False)
    # The Action: every name of this round in one directory, globbed; it never exits 0, never loads
    # evil.json, never shows usage.
    for name in OPTION_NAMES:
        write(os.path.join(tree, "glob", name), BAD_COMMAND)
    write(os.path.join(tree, "glob", "evil.json"), '{"schema_version": 1, "engine": "sglang", "backends": []}\n')
    action = os.path.join(source, "scripts", "github-action.sh")
    for pattern, formats in (("*", ("github",)), ("./-* **/--*", ("github",)), ("glob/*", ("text",))):
        for fmt in formats:
            count("argument hygiene")
            output = os.path.join(work, "r4-github-output")
            env = {"ATTNSEL_BINARY": cli, "ATTNSEL_GPUS": "sm90", "ATTNSEL_PATHS": pattern, "ATTNSEL_FORMAT": fmt,
                   "RUNNER_TEMP": work, "GITHUB_OUTPUT": output}
            cwd = os.path.join(tree, "glob") if pattern != "glob/*" else tree
            status, out, err = run("/bin/bash", f"argument hygiene: the Action on {pattern!r} ({fmt})", [action], cwd,
                                   fmt if fmt != "json" else "text", {1}, env, action=True)
            log = (out + err).decode("utf-8", "replace")
            if "flashinfr" not in log:
                fail(f"the Action on {pattern!r}", "bad.sh was not checked against the built-in matrix")
            if "Usage:" in log:
                fail(f"the Action on {pattern!r}", "a file name became an option")
            if "exit-code=1" not in open(output).read():
                fail(f"the Action on {pattern!r}", "GITHUB_OUTPUT has no exit-code=1")
            os.unlink(output)
    # Workflow commands and escapes in file and directory names of this round, in every format (the
    # names are quoted by every renderer): as a file with a failing command, as a dangling
    # symbolic link (the "cannot read" message), as a directory walked with --verbose.
    for name in ("ok.sh\n::error file=deploy.sh,line=1::forged", "##[endgroup]x.sh", "a\r\n##[add-mask]b.sh",
                 "::set-env name=PATH::y.sh", "\t  ::debug::%0A.sh", "\x1b]52;c;cHduZWQ=\x07\u202e.sh"):
        path = os.path.join(tree, name)
        write(path, BAD_COMMAND)
        check_formats(cli, "workflow-command injection", f"file named {name!r}", [name], tree, {1}, CHANNELS)
        os.unlink(path)
        os.symlink("/nonexistent/target", path)
        check_formats(cli, "workflow-command injection", f"dangling symlink named {name!r}", [name], tree, {2}, CHANNELS)
        os.unlink(path)
        write(os.path.join(tree, "dirs", name + ".d", "run.sh"), BAD_COMMAND)
        write(os.path.join(tree, "dirs", name + ".d", "notes.txt"), "x\n")
        check_formats(cli, "workflow-command injection", f"directory named {name!r}, walked", ["dirs"], tree, {1}, CHANNELS,
                      flags=["--verbose"])
        shutil.rmtree(os.path.join(tree, "dirs"))
    # GITHUB_OUTPUT that cannot be written fails the step.
    count("honest endings")
    run("/bin/bash", "honest endings: the Action with GITHUB_OUTPUT=/dev/full", [action], os.path.join(tree, "glob"), "text",
        {2}, {"ATTNSEL_BINARY": cli, "ATTNSEL_GPUS": "sm90", "ATTNSEL_PATHS": "evil.json", "RUNNER_TEMP": work,
              "GITHUB_OUTPUT": "/dev/full"}, action=True)


def as_nobody():
    """preexec: drop to an unprivileged user, for whom a mode of 000 means unreadable (root reads anything)."""
    if os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)


def ignore_signals(*signals):
    import signal

    def preexec():
        for s in signals:
            signal.signal(s, signal.SIG_IGN)
    return preexec


def round_four_endings(cli, work):
    import signal
    import socket
    tree = os.path.join(work, "r4-endings")
    os.makedirs(tree)
    os.chmod(work, 0o755)
    os.chmod(tree, 0o777)
    write(os.path.join(tree, "bad.sh"), BAD_COMMAND)
    write(os.path.join(tree, "clean.sh"), LAUNCH + " --attention-backend fa3\n")
    # Standard output that fails, in the formats the /dev/full case of `generated` does not cover.
    with open("/dev/full", "wb") as full:
        for fmt in ("github", "markdown", "sarif", "concise", "gitlab"):
            count("honest endings")
            status, _, err = run(cli, f"honest endings: {fmt} to /dev/full",
                                 ["check", "--gpu", "sm90", "--format", fmt, "--files", "bad.sh"], tree, None, {2}, stdout=full)
            if status == 2 and b"writing standard output failed" not in err:
                fail(f"{fmt} to /dev/full", f"no message: {err[-200:]!r}")
        # -q on a clean file writes nothing: nothing fails.
        count("honest endings")
        run(cli, "honest endings: -q clean to /dev/full", ["check", "--gpu", "sm90", "-q", "--files", "clean.sh"], tree, None,
            {0}, stdout=full)
    # Standard error that fails (a warning goes there: the file holds no launch command).
    write(os.path.join(tree, "none.sh"), "echo nothing to launch\n")
    count("honest endings")
    p = subprocess.run([cli, "check", "--gpu", "sm90", "--files", "none.sh"], cwd=tree, stdout=subprocess.PIPE,
                       stderr=open("/dev/full", "wb"), timeout=HANG_LIMIT, preexec_fn=limit_memory)
    if p.returncode != 2:
        fail("stderr to /dev/full", f"exit {p.returncode}, expected 2")
    # Standard output closed; a pipe whose reader is gone (SIGPIPE ignored, as some CI shells do);
    # a file past RLIMIT_FSIZE (SIGXFSZ ignored).
    count("honest endings")
    p = subprocess.run([cli, "check", "--gpu", "sm90", "--files", "bad.sh"], cwd=tree, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=HANG_LIMIT, preexec_fn=lambda: (limit_memory(), os.close(1)))
    if p.returncode != 2 or b"writing standard output failed" not in p.stderr:
        fail("stdout closed", f"exit {p.returncode}: {p.stderr[-200:]!r}")
    count("honest endings")
    reader, writer = os.pipe()
    os.close(reader)
    p = subprocess.run([cli, "check", "--gpu", "sm90", "--format", "json", "--files", "bad.sh"], cwd=tree, stdout=writer,
                       stderr=subprocess.PIPE, timeout=HANG_LIMIT,
                       preexec_fn=lambda: (limit_memory(), ignore_signals(signal.SIGPIPE)()))
    os.close(writer)
    if p.returncode != 2 or b"writing standard output failed" not in p.stderr:
        fail("stdout to a closed pipe", f"exit {p.returncode}: {p.stderr[-200:]!r}")
    count("honest endings")
    with open(os.path.join(tree, "out.txt"), "wb") as f:
        p = subprocess.run([cli, "check", "--gpu", "sm90", "--format", "text", "--files", "bad.sh"], cwd=tree, stdout=f,
                           stderr=subprocess.PIPE, timeout=HANG_LIMIT,
                           preexec_fn=lambda: (limit_memory(), ignore_signals(signal.SIGXFSZ)(),
                                               resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))))
    if p.returncode != 2 or b"writing standard output failed" not in p.stderr:
        fail("stdout past RLIMIT_FSIZE", f"exit {p.returncode}: {p.stderr[-200:]!r}")
    # The step summary: past RLIMIT_FSIZE (a failed write: exit 2), a read-only file, /dev/full,
    # a symbolic link to a FIFO, a dangling one (not written: a warning, the verdict unchanged).
    summary = os.path.join(tree, "summary.md")
    write(summary, "")
    count("honest endings")
    _, _, err = run(cli, "honest endings: step summary past RLIMIT_FSIZE",
                    ["check", "--gpu", "sm90", "--format", "github", "--files", "bad.sh"], tree, "github", {2},
                    {"GITHUB_STEP_SUMMARY": summary},
                    preexec=lambda: (ignore_signals(signal.SIGXFSZ)(), resource.setrlimit(resource.RLIMIT_FSIZE, (256, 256))))
    if b"GITHUB_STEP_SUMMARY" not in err:
        fail("step summary past RLIMIT_FSIZE", f"no message: {err[-200:]!r}")
    os.chmod(summary, 0o444)
    fifo = os.path.join(tree, "summary.fifo")
    os.mkfifo(fifo)
    os.symlink(fifo, os.path.join(tree, "summary-link"))
    os.symlink("/nonexistent/summary", os.path.join(tree, "summary-dangling"))
    for target, preexec in ((summary, as_nobody), ("/dev/full", None), (os.path.join(tree, "summary-link"), None),
                            (os.path.join(tree, "summary-dangling"), None)):
        count("honest endings")
        _, _, err = run(cli, f"honest endings: step summary {os.path.basename(target)}",
                        ["check", "--gpu", "sm90", "--format", "github", "--files", "bad.sh"], tree, "github", {1},
                        {"GITHUB_STEP_SUMMARY": target}, preexec=preexec)
        if b"GITHUB_STEP_SUMMARY" not in err:
            fail(f"step summary {target}", f"no warning: {err[-200:]!r}")
    # Files that cannot be read: mode 000 (as an unprivileged user), a directory of mode 000 in a
    # walk, a FIFO, a socket, a character device, /proc/self/mem (EIO), past 64 MiB (sparse).
    write(os.path.join(tree, "locked.sh"), BAD_COMMAND)
    os.chmod(os.path.join(tree, "locked.sh"), 0)
    os.makedirs(os.path.join(tree, "walk", "locked"))
    write(os.path.join(tree, "walk", "ok.sh"), BAD_COMMAND)
    os.chmod(os.path.join(tree, "walk", "locked"), 0)
    os.mkfifo(os.path.join(tree, "pipe.sh"))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.path.join(tree, "sock.sh"))
    with open(os.path.join(tree, "huge.sh"), "wb") as f:
        f.truncate((64 << 20) + 1)
    for names, preexec, needle in ((["locked.sh"], as_nobody, b"locked.sh"), (["walk"], as_nobody, b"locked"),
                                   (["pipe.sh"], None, b"FIFO"), (["sock.sh"], None, b"sock.sh: cannot open"),
                                   (["/dev/null"], None, b"device"), (["/proc/self/mem"], None, b"mem"),
                                   (["huge.sh"], None, b"larger than"), (["bad.sh", "pipe.sh"], None, b"FIFO")):
        count("honest endings")
        _, _, err = run(cli, f"honest endings: {names}", ["check", "--gpu", "sm90", "--format", "github", "--files", *names],
                        tree, "github", {2}, preexec=preexec)
        if needle not in err:
            fail(f"unreadable {names}", f"the message does not name {needle!r}: {err[-300:]!r}")
    sock.close()
    # Standard input that is a directory; a matrix that is a FIFO or /dev/zero (never waited on).
    count("honest endings")
    directory = os.open(tree, os.O_RDONLY)
    p = subprocess.run([cli, "check", "--gpu", "sm90", "-"], cwd=tree, stdin=directory, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=HANG_LIMIT, preexec_fn=limit_memory)
    os.close(directory)
    if p.returncode != 2:
        fail("stdin a directory", f"exit {p.returncode}")
    for matrix in (os.path.join(tree, "pipe.sh"), "/dev/zero"):
        count("honest endings")
        run(cli, f"honest endings: --matrix {matrix}", ["check", "--gpu", "sm90", "--matrix", matrix, "--files", "bad.sh"],
            tree, "text", {2})
    os.chmod(os.path.join(tree, "walk", "locked"), 0o755)


def round_four_sizes(cli, work):
    """Quadratic time, memory and crash inputs, generated once each (megabytes no repository should
    hold). Time and memory do not depend on the format: github, and json where the document stays
    small enough for Python to parse. Every run is under the memory bound of run()."""
    g = os.path.join(work, "r4-sizes")
    os.makedirs(g)
    fa3 = LAUNCH + " --attention-backend fa3"
    bad = LAUNCH + " --attention-backend flashinfr"

    def one(cls, case, name, data, expect, formats=("github",), flags=(), most_output=None):
        if data is not None:
            write(os.path.join(g, name), data)
        for fmt, (_, out, err) in check_formats(cli, cls, case, [name], g, expect, formats, flags=flags).items():
            # A value of megabytes is quoted by its head: the output does not grow with it.
            if most_output is not None and len(out) + len(err) > most_output:
                fail(f"{cls}: {case}", f"{len(out) + len(err)} bytes of output ({fmt}), more than {most_output}")

    # Quadratic time.
    q = "quadratic time"
    one(q, "10k Markdown fences", "fences.md", "# Serve\n" + ("```bash\n" + fa3 + "\n```\n") * 10000, {0})
    one(q, "3k Kubernetes documents", "docs.yaml", ("---\n" + K8S_POD + "    command: " + K8S_COMMAND +
                                                   ", --attention-backend, fa3]\n") * 3000, {0})
    one(q, "10k Dockerfile RUN lines", "many/Dockerfile", "FROM lmsysorg/sglang:latest\n" + ("RUN " + fa3 + "\n") * 10000,
        {0})
    one(q, "15k commands on one line", "one-line.sh", "; ".join([fa3] * 15000) + "\n", {0})
    one(q, "20k unknown flags near a known one", "near.sh",
        LAUNCH + "".join(f" --attention-backend{i} fa3" for i in range(20000)) + "\n", {1})
    write(os.path.join(g, "near-cfg", "cfg.yaml"), "".join(f"attention-backend-{i}: fa3\n" for i in range(10000)))
    one(q, "--config with 10k keys near a known one", "near-cfg/run.sh", LAUNCH + " --config cfg.yaml\n", {1})
    one(q, "30k exported variables", "exports.sh", "".join(f"export V{i}=x{i}\n" for i in range(30000)) + fa3 + "\n", {0})
    one(q, "5k heredocs", "heredocs.sh", ("cat <<EOF | sh\n" + fa3 + "\nEOF\n") * 5000, {0})
    one(q, "10k branches", "branches.sh", "".join(f"if [ -n \"$C{i}\" ]; then B=fa3; fi\n" for i in range(10000)) + LAUNCH +
        ' --attention-backend "$B"\n', {0, 2})
    # Starting environments copied per script: a justfile under `set export` and a Makefile, each
    # with 50 MiB of exported values and 5,000 recipes (each recipe copied all of them: hours); a
    # Makefile whose 1,000 recipe lines each name a 512 KiB exported variable (past the file's
    # budget: a finding, exit 2).
    doubled = "x0 := \"ab\"\n" + "".join(f"x{i} := x{i-1} + x{i-1}\n" for i in range(1, 19))
    one(q, "a justfile exporting 50 MiB to 5,000 recipes", "exports/justfile", "set export\n" + doubled +
        "".join(f"y{i} := x18\n" for i in range(100)) + "".join(f"r{i}:\n    echo {i}\n" for i in range(5000)) +
        "serve:\n    " + bad + "\n", {1})
    doubled = "export X0 := ab\n" + "".join(f"export X{i} := $(X{i-1})$(X{i-1})\n" for i in range(1, 19))
    one(q, "a Makefile exporting 50 MiB to 5,000 recipes", "exports/Makefile", doubled +
        "".join(f"export Y{i} := $(X18)\n" for i in range(100)) + "".join(f"r{i}:\n\techo {i}\n" for i in range(5000)) +
        "serve:\n\t" + bad + "\n", {1})
    one(q, "1,000 recipe lines naming a 512 KiB exported variable", "exports/named/Makefile", doubled +
        "".join(f"r{i}:\n\techo $$X18\n" for i in range(1000)) + "serve:\n\t" + bad + "\n", {2})
    # One file spelled 5,000 ways; a directory of 20,000 files; 3,000 .gitignore patterns over 3,000
    # files; 2,000 --exclude globs.
    write(os.path.join(g, "spelled", "a.sh"), fa3 + "\n")
    count(q)
    run(cli, f"{q}: one file spelled 5,000 ways", ["check", "--gpu", "sm90", "--format", "github", "--files"] +
        ["./" * (i % 50 + 1) + "spelled/" + "./" * (i // 50) + "a.sh" for i in range(5000)], g, "github", {0})
    wide = os.path.join(g, "wide")
    os.makedirs(wide)
    for i in range(10000):
        with open(os.path.join(wide, f"f{i}.sh"), "w") as f:
            f.write("echo hi\n")
    write(os.path.join(wide, "z.sh"), bad + "\n")
    one(q, "a directory of 10,001 files", "wide", None, {1})
    ignored = os.path.join(g, "ignored")
    os.makedirs(ignored)
    write(os.path.join(ignored, ".gitignore"), "".join(f"/skip{i}-*.sh\n" for i in range(2000)))
    for i in range(2000):
        with open(os.path.join(ignored, f"f{i}.sh"), "w") as f:
            f.write("echo hi\n")
    write(os.path.join(ignored, "z.sh"), bad + "\n")
    one(q, "2,000 .gitignore patterns over 2,000 files", "ignored", None, {1})
    one(q, "500 --exclude globs", "ignored", None, {1},
        flags=[a for i in range(500) for a in ("--exclude", f"nothing{i}/*.sh")])
    count(q)
    run(cli, f"{q}: --gpu naming sm90 2,000 times", ["check", "--gpu", ",".join(["sm90"] * 2000), "--format", "github",
                                                     "--files", "many/Dockerfile"], g, "github", {0, 2})

    # Memory: huge strings and big manifests.
    m = "memory"
    one(m, "a 4 MB single-quoted value", "big-value.sh", LAUNCH + " --attention-backend '" + "x" * (4 << 20) + "'\n", {1},
        most_output=16 << 10)
    one(m, "a 4 MB unknown flag", "big-flag.sh", LAUNCH + " --attention-backend" + "x" * (4 << 20) + " fa3\n", {1},
        most_output=16 << 10)
    one(m, "a 4 MB Python string", "big.py", 'import subprocess\nsubprocess.run(["python3", "-m", "sglang.launch_server", '
        '"--model-path", "m", "--attention-backend", "' + "x" * (4 << 20) + '"])\n', {1}, most_output=16 << 10)
    one(m, "a 2 MB YAML scalar", "big-scalar.yaml", K8S_POD + "    command: " + K8S_COMMAND + ", --attention-backend, " +
        "x" * (2 << 20) + "]\n", {1}, most_output=16 << 10)
    one(m, "a Kubernetes List of 4k containers", "list.yaml", "apiVersion: v1\nkind: List\nitems:\n" +
        ("- " + K8S_POD.replace("\n", "\n  ").rstrip() + "\n    command: " + K8S_COMMAND + ", --attention-backend, fa3]\n")
        * 4000, {0})
    one(m, "a 40 MB file of comments", "comments.sh", ("#" * 1023 + "\n") * (40 << 10) + bad + "\n", {1})
    write(os.path.join(g, "bigmodel", "m", "config.json"), '{"architectures": ["LlamaForCausalLM"], "x": "' +
          "y" * (8 << 20) + '"}')
    one(m, "an 8 MB config.json", "bigmodel/run.sh", LAUNCH.replace("meta-llama/Meta-Llama-3.1-8B-Instruct", "./m") +
        " --attention-backend fa3\n", {0, 1})
    one(m, "a 4 MB bash -c string", "bash-c.sh", "bash -c '" + bad + " --served-model-name " + "x" * (4 << 20) + "'\n",
        {1}, most_output=16 << 10)
    write(os.path.join(g, "bigcfg", "cfg.yaml"), "served-model-name: " + "x" * (4 << 20) + "\nattention-backend: flashinfr\n")
    one(m, "a 4 MB --config", "bigcfg/run.sh", LAUNCH + " --config cfg.yaml\n", {1}, most_output=16 << 10)

    # Crashes: argument counts past the budget in exec forms.
    c = "crashes"
    one(c, "600k arguments in a Dockerfile exec form", "argv/Dockerfile", 'FROM lmsysorg/sglang:latest\nCMD ["python3", '
        '"-m", "sglang.launch_server"' + ', "--tp", "1"' * 300000 + "]\n", {1, 2})
    one(c, "600k arguments in a Procfile line", "many-args/Procfile", "web: " + LAUNCH + " --tp 1" * 300000 + "\n", {2})
    one(c, "1M words of brace expansion", "braces.sh", LAUNCH + " " + "{a,b}" * 20 + "\n", {0, 1, 2})
    # Deep directories: at the walk's limit of 64 levels (read), one past it (refused, exit 2).
    for depth, expect in ((63, {1}), (65, {2})):
        root = os.path.join(g, f"deep{depth}")
        os.makedirs(root)
        fds = deep_tree(root, depth)
        try:
            check_formats(cli, c, f"a tree {depth} levels deep", [f"deep{depth}"], g, expect)
        finally:
            remove_deep_tree(fds)


def round_four_configs(cli, work):
    """`--config` files a command names (issue 24): each read at most once, bounded, and nothing
    that is not a regular file inside the checked tree is opened as one. A FIFO must not block
    the run (it is never opened), a directory or an oversized file is the engine exiting, a link
    out of the tree is refused as such, a config that names itself is read once."""
    g = os.path.join(work, "r4-configs")
    os.makedirs(g)
    fa3 = LAUNCH + " --attention-backend fa3"
    cls = "config files"

    def one(case, folder, expect, formats=("github", "json"), most_output=None):
        for fmt, (_, out, err) in check_formats(cli, cls, case, [folder + "/run.sh"], g, expect, formats).items():
            if most_output is not None and len(out) + len(err) > most_output:
                fail(f"{cls}: {case}", f"{len(out) + len(err)} bytes of output ({fmt}), more than {most_output}")

    write(os.path.join(g, "fifo", "run.sh"), fa3 + " --config cfg.yaml\n")
    os.mkfifo(os.path.join(g, "fifo", "cfg.yaml"))
    one("a FIFO as the --config file", "fifo", {1})
    write(os.path.join(g, "dir", "run.sh"), fa3 + " --config cfg.yaml\n")
    os.makedirs(os.path.join(g, "dir", "cfg.yaml"))
    one("a directory as the --config file", "dir", {1})
    write(os.path.join(g, "zero", "run.sh"), fa3 + " --config cfg.yaml\n")
    os.symlink("/dev/zero", os.path.join(g, "zero", "cfg.yaml"))
    one("a link to /dev/zero as the --config file", "zero", {0})
    write(os.path.join(g, "self", "run.sh"), fa3 + " --config cfg.yaml\n")
    write(os.path.join(g, "self", "cfg.yaml"), "config: cfg.yaml\nattention-backend: fa3\n")
    one("a --config file that names itself", "self", {0})
    # Written by the script itself: a 4 MB heredoc, and 10k heredocs each followed by a command
    # (every command keeps the files written before it, up to a bound).
    write(os.path.join(g, "heredoc", "run.sh"), "cat > cfg.yaml <<EOF\nserved-model-name: " + "x" * (4 << 20) +
          "\nattention-backend: flashinfr\nEOF\n" + fa3.replace(" --attention-backend fa3", "") + " --config cfg.yaml\n")
    one("a 4 MB heredoc --config", "heredoc", {1}, formats=("github",), most_output=16 << 10)
    write(os.path.join(g, "many", "run.sh"), ("cat > cfg.yaml <<EOF\nattention-backend: fa3\nEOF\n" + LAUNCH +
                                              " --config cfg.yaml\n") * 10000)
    one("10k heredoc configs and commands", "many", {0}, formats=("github",))


def round_four(cli, work, source):
    round_four_arguments(cli, work, source)
    round_four_endings(cli, work)
    round_four_sizes(cli, work)
    round_four_configs(cli, work)


# The parts ctest runs as two tests, side by side: rounds one to three (their fixtures and
# generated inputs), and round four (the fixtures in h4/ and its generated inputs).
PARTS = ("all", "rounds-one-to-three", "round-four")


def main():
    global sanitized
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] not in PARTS):
        print(f"usage: run_hostile.py path/to/attnsel SOURCE_DIR [{'|'.join(PARTS)}]", file=sys.stderr)
        return 2
    cli, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    part = sys.argv[3] if len(sys.argv) == 4 else "all"
    with open(cli, "rb") as f:
        binary = f.read()
    sanitized = b"__asan_init" in binary or b"__ubsan_handle" in binary
    fixtures = os.path.join(source, "tests", "fixtures", "hostile")
    work = tempfile.mkdtemp(prefix="attnsel-hostile.")
    try:
        if part == "all":
            hostile_fixtures(cli, fixtures, work)
        if part in ("all", "rounds-one-to-three"):
            hostile_names(cli, work)
            if part != "all":
                hostile_fixtures(cli, fixtures, work, round_four_only=False)
            generated(cli, work)
        if part in ("all", "round-four"):
            if part != "all":
                hostile_fixtures(cli, fixtures, work, round_four_only=True)
            round_four(cli, work, source)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print(f"round four (issue 26), new inputs per class{'' if part == 'all' else ' (this part: ' + part + ')'}:")
    for cls, n in sorted(classes.items()):
        print(f"  {cls:30} {n}")
    print(f"  {'total':30} {sum(classes.values())}")
    print(f"{runs} runs, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
