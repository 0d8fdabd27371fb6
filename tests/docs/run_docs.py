"""Every attnsel command shown in README.md and docs/*.md, run: the docs cannot drift from the CLI.

Usage: run_docs.py ATTNSEL_CLI SOURCE_DIR

1. Each command line in a shell code block (```sh, bash, console, shell or no language) that
   starts with `attnsel` (or `$ attnsel`) is run by bash in a scratch directory where `attnsel` is
   the built CLI and every file the command names exists (the repository's own files where it has
   them, else a small file of that kind holding a launch command). A command fails the test when
   attnsel refuses its syntax: exit 2 with a usage message (an unknown option, subcommand or value).
   Exit codes 0, 1, 3 and 4 are outcomes a doc may show. Synopsis lines (`[--cuda X.Y]`,
   `text|json`, `FILE...`) are not run; the options they name must exist in the subcommand's help.
2. A transcript (a block whose first line is `$ attnsel ...` followed by output) must match the
   command's output exactly (colour off, trailing blanks ignored); ATTNSEL_UPDATE_DOCS=1 rewrites
   the shown output from the CLI instead.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

CLI, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
UPDATE = os.environ.get("ATTNSEL_UPDATE_DOCS") == "1"
HANG_LIMIT = 600  # seconds; only to turn a hang into a failure (`matrix lint --full` takes minutes)
SHELL_LANGS = {"", "sh", "bash", "console", "shell", "shell-session"}
# What attnsel says when it refuses a command line's syntax (not its inputs).
USAGE = re.compile(r"unknown option|not in \{|did you mean|Run with --help|unknown subcommand|requires at least|"
                   r"expected|needs an argument|invalid value|cannot be combined|is not a valid", re.I)
# A synopsis, not a command: optional parts, alternatives, repetition, metavariables.
METAVARS = r"GPU|GPUS|FILE|FILES|DIR|PATH|MODEL|ENGINE|E|A|B|N|ID|X\.Y|X\.Y\.Z|V|ARGS|FLAGS|OPTIONS|RELEASE|KIND"
PLACEHOLDER = re.compile(r"\[|\]|\||\.\.\.|<[^>]*>|\{\{|(?:^|\.)X(?:\.|$)|^(?:--[a-z-]+=)?(?:" + METAVARS + r")(?:[,:].*)?$")
LAUNCH = "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp 1\n"
CONTENT = {
    ".sh": "#!/bin/sh\n" + LAUNCH,
    ".md": "```sh\n" + LAUNCH + "```\n",
    ".yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  containers:\n  - name: s\n"
             "    command: [python3, -m, sglang.launch_server, --model-path, meta-llama/Llama-3.1-8B-Instruct]\n",
    "Dockerfile": "FROM lmsysorg/sglang:v0.5.5\nCMD " + LAUNCH,
}
CONTENT[".yml"] = CONTENT[".yaml"]

failures = []
stats = {"run": 0, "synopsis": 0, "transcripts": 0}


def fail(where, message):
    failures.append(f"{where}: {message}")


def code_blocks(path):
    """(first line number, language, lines) of each fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+|~~~+)\s*([\w-]*)", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        body, start = [], i + 2
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        yield start, lang, body, indent


def commands(body):
    """(offset, command text) of each attnsel command line, continuations joined. In a transcript
    (a block whose first line is `$ ...`) only `$` lines are commands; the rest is their output."""
    transcript = bool(body) and body[0].startswith("$ ")
    k = 0
    while k < len(body):
        line = body[k]
        stripped = line.strip()
        if transcript and not stripped.startswith("$ "):
            k += 1
            continue
        if stripped.startswith("$ "):
            stripped = stripped[2:]
        if not re.match(r"attnsel(\s|$)", stripped):
            k += 1
            continue
        start = k
        text = stripped
        while text.endswith("\\") and k + 1 < len(body):
            k += 1
            text = text[:-1] + " " + body[k].strip()
        yield start, text
        k += 1


_HELP = {}


def options_of(sub):
    """The long options `attnsel [sub] --help` lists."""
    if sub not in _HELP:
        args = [CLI] + sub.split() + ["--help"]
        out = subprocess.run(args, capture_output=True, text=True, env=env()).stdout
        _HELP[sub] = set(re.findall(r"(--[a-z0-9][a-z0-9-]*)", out))
    return _HELP[sub]


_SUBCOMMANDS = {}


def subcommands(parent=""):
    """The subcommands `attnsel [parent] --help` lists."""
    if parent not in _SUBCOMMANDS:
        out = subprocess.run([CLI] + parent.split() + ["--help"], capture_output=True, text=True, env=env()).stdout
        block = out.split("Subcommands:", 1)[1] if "Subcommands:" in out else ""
        block = block.split("\n\n", 1)[0]
        _SUBCOMMANDS[parent] = set(re.findall(r"^  ([a-z][a-z-]*)\s", block, re.M))
    return _SUBCOMMANDS[parent]


def subcommand_of(tokens):
    """`matrix diff` for `attnsel matrix diff A B`, "" for the default command."""
    chain = []
    for t in tokens[1:]:
        if t in subcommands(" ".join(chain)):
            chain.append(t)
        else:
            break
    return " ".join(chain)


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith(("ATTNSEL_", "GITHUB_"))}
    e.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "100", "LC_ALL": "C.UTF-8"})
    return e


def words(text):
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return None


def check_synopsis(where, tokens):
    """A synopsis line: its subcommand exists and every --option it names is in that help."""
    stats["synopsis"] += 1
    sub = subcommand_of(tokens)
    first = tokens[len(sub.split()) + 1] if len(tokens) > len(sub.split()) + 1 else ""
    if re.fullmatch(r"[a-z][a-z-]+", first) and not sub:
        fail(where, f"no subcommand {first!r} (attnsel --help lists {sorted(subcommands())})")
    known = options_of(sub) | options_of("")
    for t in tokens[1:]:
        for opt in re.findall(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)", t):
            if opt not in known and sub in ("", "select", "explain", "check"):
                continue  # an engine flag: the engine grammar reads it (checked where the line runs)
            if opt not in known:
                fail(where, f"{opt} is not an option of `attnsel {sub}`")


def make_inputs(scratch, tokens):
    """The files a command names, in the scratch directory: the repository's where it has them."""
    for t in tokens:
        if t.startswith("-") or "=" in t or t in ("<", ">", "|", "&&", "||"):
            continue
        looks_like_path = "/" in t or "*" in t or re.search(r"\.(sh|ya?ml|md|json|rst|adoc|py|toml)$", t) or \
            t in ("Dockerfile", "Makefile")
        if not looks_like_path or t.startswith(("http://", "https://", "/")):
            continue
        real = t.replace("**", "x").replace("*", "example")
        if real.endswith("/"):
            real += "example.sh"
        target = os.path.join(scratch, real)
        if os.path.exists(target):
            continue
        source = os.path.join(SOURCE, t)
        os.makedirs(os.path.dirname(target) or scratch, exist_ok=True)
        if os.path.isfile(source):
            shutil.copyfile(source, target)
        elif os.path.isdir(source):
            shutil.copytree(source, target, dirs_exist_ok=True)
        elif real.endswith(".json"):
            continue  # a matrix, a config.json: an input the doc's reader brings
        else:
            ext = next((e for e in CONTENT if real.endswith(e)), ".sh")
            if "." not in os.path.basename(real) and "Dockerfile" not in real:
                os.makedirs(target, exist_ok=True)
                target = os.path.join(target, "example.sh")
            with open(target, "w") as f:
                f.write(CONTENT["Dockerfile" if "Dockerfile" in real else ext])


def run_command(where, text, scratch):
    stats["run"] += 1
    make_inputs(scratch, words(text) or [])
    bindir = os.path.join(scratch, ".bin")
    e = env()
    e["PATH"] = bindir + os.pathsep + e.get("PATH", "")
    try:
        r = subprocess.run(["bash", "-c", text], cwd=scratch, env=e, capture_output=True, text=True, timeout=HANG_LIMIT,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        fail(where, f"no end within {HANG_LIMIT} s: {text}")
        return None
    if r.returncode == 2 and USAGE.search(r.stderr):
        fail(where, f"attnsel refuses the documented syntax: {text}\n    {r.stderr.strip()[:400]}")
    if r.returncode in (126, 127):
        fail(where, f"does not run ({r.returncode}): {text}\n    {r.stderr.strip()[:200]}")
    return r


def main():
    docs = [os.path.join(SOURCE, "README.md")] + sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md")))
    # A generated page (docs/rules.md: `attnsel rule --list --format markdown`) is diffed against its
    # generator by its own test, and its examples show the one finding line each rule is about.
    docs = [d for d in docs if "<!-- Generated by" not in open(d, encoding="utf-8").read(400)]
    for path in docs:
        rel = os.path.relpath(path, SOURCE)
        file_lines = open(path, encoding="utf-8").read().split("\n")
        updates = []  # (first line index, lines replaced, new lines)
        for start, lang, body, indent in code_blocks(path):
            if lang not in SHELL_LANGS:
                continue
            transcript = bool(body) and body[0].startswith("$ attnsel")
            for offset, text in commands(body):
                where = f"{rel}:{start + offset}"
                tokens = words(text)
                if tokens is None:
                    fail(where, f"does not parse as a shell command: {text}")
                    continue
                if any(PLACEHOLDER.search(t) for t in tokens[1:]):
                    check_synopsis(where, tokens)
                    continue
                with tempfile.TemporaryDirectory(prefix="attnsel-docs.") as scratch:
                    os.makedirs(os.path.join(scratch, ".bin"))
                    os.symlink(CLI, os.path.join(scratch, ".bin", "attnsel"))
                    r = run_command(where, text, scratch)
                if not (transcript and offset == 0) or r is None:
                    continue
                stats["transcripts"] += 1
                shown = [l.rstrip() for l in body[1:]]
                while shown and not shown[-1]:
                    shown.pop()
                got = [l.rstrip() for l in (r.stdout + r.stderr).rstrip("\n").split("\n")]
                if shown != got:
                    if UPDATE:  # the output lines follow the `$ attnsel` line (start is 1-based)
                        updates.append((start, len(body) - 1, [(indent + g).rstrip() for g in got]))
                        continue
                    diff = next((i for i in range(max(len(shown), len(got)))
                                 if i >= len(shown) or i >= len(got) or shown[i] != got[i]), 0)
                    fail(where, f"the shown output differs from `{text}` at its line {diff + 1}:\n"
                                f"    shown: {shown[diff] if diff < len(shown) else '(nothing)'!r}\n"
                                f"    got:   {got[diff] if diff < len(got) else '(nothing)'!r}\n"
                                f"    (ATTNSEL_UPDATE_DOCS=1 rewrites it)")
        for first, count, new_lines in sorted(updates, reverse=True):
            file_lines[first:first + count] = new_lines
        if updates:
            open(path, "w", encoding="utf-8").write("\n".join(file_lines))
    for f in failures:
        print("FAIL:", f)
    print(f"docs: {stats['run']} commands run, {stats['transcripts']} transcripts compared, "
          f"{stats['synopsis']} synopsis lines checked; {len(failures)} failure(s)")
    if stats["run"] == 0:
        print("FAIL: no command found in the docs: the extraction is broken")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
