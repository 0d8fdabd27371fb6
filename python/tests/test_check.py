"""attnsel.check: launch commands (argv) and files (text) judged for target GPUs, with findings
located on their line and flag, and the same document as `attnsel check --format json`."""
import os

import pytest

import attnsel

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8"]

SCRIPT = """#!/usr/bin/env bash
set -e
python3 -m sglang.launch_server \\
  --model-path deepseek-ai/DeepSeek-V3 \\
  --tp 8 \\
  --attention-backend trtllm_mla
"""


def test_a_bad_command_fails_with_the_rule():
    r = attnsel.check(LAUNCH + ["--attention-backend", "trtllm_mla"], gpus="sm90")
    assert not r.ok and not bool(r)
    assert [(f.rule, f.gpu, f.severity) for f in r.errors] == [("cell.compute-capability", "sm90", "error")]
    assert r.errors[0].line == 0  # an argv has no lines
    assert [c.verdict for c in r.commands] == ["error"]


def test_a_failing_command_names_its_fix_and_the_fix_passes():
    r = attnsel.check(LAUNCH + ["--attention-backend", "trtllm_mla"], gpus="sm90,B200")
    by_gpu = {c.gpu: c for c in r.commands}
    assert by_gpu["sm90"].fix == "--attention-backend trtllm_mla -> flashinfer"
    assert by_gpu["B200"].fix is None  # it passes there
    assert by_gpu["sm90"].fix_all_targets == by_gpu["B200"].fix_all_targets == by_gpu["sm90"].fix
    fixed = attnsel.check(["python3", "-m", "sglang.launch_server"] + by_gpu["sm90"].fix_args, gpus="sm90,B200")
    assert fixed.ok, [str(f) for f in fixed.errors]
    assert [d["fix"]["summary"] for d in r.to_dict()["results"] if d["fix"]] == [by_gpu["sm90"].fix]


def test_a_good_command_passes_with_the_plan():
    r = attnsel.check(LAUNCH + ["--attention-backend", "trtllm_mla"], gpus="B200")
    assert r.ok
    assert r.errors == []
    (cmd,) = r.commands
    assert cmd.verdict in ("clean", "warning") and cmd.gpu == "B200"
    assert cmd.launcher.endswith("sglang.launch_server")
    assert "--attention-backend" in cmd.flags and "trtllm_mla" in cmd.flags


def test_one_command_per_target():
    r = attnsel.check(LAUNCH + ["--attention-backend", "trtllm_mla"], gpus=["sm90", "sm100"])
    assert [(c.gpu, c.verdict) for c in r.commands][0] == ("sm90", "error")
    assert r.commands[1].gpu == "sm100" and r.commands[1].verdict != "error"
    assert not r.ok


def test_a_script_locates_the_flag_on_its_line():
    r = attnsel.check(SCRIPT, gpus="sm90", filename="launch.sh")
    (error,) = r.errors
    assert error.line == 6
    assert error.flag == "--attention-backend" and error.value == "trtllm_mla"
    assert error.file == "launch.sh"
    assert r.commands[0].line == 3


def test_strict_makes_warnings_fail():
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3",
            "--attention-backend", "flashmla", "--kv-cache-dtype", "fp8_e4m3"]
    relaxed = attnsel.check(argv, gpus="sm90")
    assert relaxed.ok and relaxed.warnings
    assert not attnsel.check(argv, gpus="sm90", strict=True).ok


def test_a_block_that_does_not_tokenise_is_one_finding_and_the_rest_is_checked():
    text = SCRIPT + "echo 'unterminated\n"
    r = attnsel.check(text, gpus="sm90", filename="launch.sh")
    skipped = [f for f in r.findings if f.rule == "check.skipped"]
    assert len(skipped) == 1 and skipped[0].line == 7 and skipped[0].severity == "warning"
    assert len(r.commands) == 1


def test_no_command_is_not_an_error():
    r = attnsel.check("echo hello\n", gpus="sm90")
    assert r.ok and r.commands == [] and r.findings == []


def test_the_gpus_a_manifest_names(source_dir, cli):
    path = os.path.join(source_dir, "tests", "fixtures", "deploy", "k8s", "deployment.yaml")
    with open(path) as f:
        text = f.read()
    r = attnsel.check(text, filename=path)
    assert r.commands, "the manifest holds launch commands"
    named = [f.message.split()[1] for f in r.findings if f.rule == "check.gpu-from-file"]
    assert named and {c.gpu for c in r.commands} == set(named)
    code, printed = cli("check", "--format", "json", path)
    assert r.to_dict() == printed


def test_a_text_without_gpus_needs_them(source_dir):
    path = os.path.join(source_dir, "tests", "fixtures", "check", "deployment.yaml")
    with pytest.raises(attnsel.UsageError) as e:
        attnsel.check(open(path).read(), filename=path)
    assert e.value.where == "gpus"


def test_the_release_a_dockerfile_names(source_dir):
    path = os.path.join(source_dir, "tests", "fixtures", "check", "Dockerfile")
    with open(path) as f:
        r = attnsel.check(f.read(), gpus="sm90", filename=path)
    assert r.release == "0.5.4"
    assert attnsel.check(open(path).read(), gpus="sm90", filename=path, engine_version="0.5.3").release == "0.5.3"


def test_to_dict_of_a_file_is_what_the_cli_prints(cli, source_dir, tmp_path):
    script = tmp_path / "launch.sh"
    script.write_text(SCRIPT + "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --attention-backend fa3\n")
    code, printed = cli("check", "--gpu", "sm90,B200", "--format", "json", str(script))
    r = attnsel.check(script.read_text(), gpus="sm90,B200", filename=str(script))
    assert r.to_dict() == printed
    assert code == (0 if r.ok else 1)


def test_to_dict_of_the_fixture_script_is_what_the_cli_prints(cli, source_dir):
    path = os.path.join(source_dir, "tests", "fixtures", "check", "launch.sh")
    code, printed = cli("check", "--gpu", "sm90", "--format", "json", path)
    r = attnsel.check(open(path).read(), gpus="sm90", filename=path)
    assert r.to_dict() == printed
    assert code == (0 if r.ok else 1)


def test_to_dict_of_an_argv_is_what_the_cli_prints(cli):
    argv = LAUNCH + ["--attention-backend", "fa4", "--page-size", "64"]
    code, printed = cli("check", "--gpu", "sm90", "--format", "json", "--", *argv)
    r = attnsel.check(argv, gpus="sm90")
    assert r.to_dict() == printed
    assert code == (0 if r.ok else 1)


# ---- errors ----

def test_an_argv_needs_gpus():
    with pytest.raises(attnsel.UsageError) as e:
        attnsel.check(LAUNCH)
    assert e.value.where == "gpus"


def test_unknown_gpu():
    with pytest.raises(attnsel.UnknownNameError) as e:
        attnsel.check(LAUNCH, gpus="sm90,H1000")
    assert "H100" in e.value.choices


def test_not_a_launch_command():
    with pytest.raises(attnsel.UsageError):
        attnsel.check(["ls", "-l"], gpus="sm90")


@pytest.mark.parametrize("kwargs", [
    dict(command_or_text=[], gpus="sm90"),
    dict(command_or_text=42, gpus="sm90"),
    dict(command_or_text=LAUNCH, gpus="sm90", model_kind="xyz"),
    dict(command_or_text=LAUNCH, gpus="sm90", unknown_model="warn"),
    dict(command_or_text=LAUNCH, gpus="sm90", engine_version="five"),
])
def test_bad_arguments(kwargs):
    with pytest.raises(attnsel.UsageError):
        attnsel.check(**kwargs)


# ---- paths: files and directories, walked as `attnsel check PATH` walks them ----

def walk_dir(source_dir):
    return os.path.join(source_dir, "tests", "fixtures", "walk")


def test_a_path_is_read_as_a_path_not_as_text(source_dir):
    path = os.path.join(source_dir, "tests", "fixtures", "check", "launch.sh")
    r = attnsel.check(path, gpus="sm90")
    assert r.files == [path]
    assert r.commands and all(c.file == path for c in r.commands)
    assert r.to_dict() == attnsel.check(text=open(path).read(), filename=path, gpus="sm90").to_dict()


def test_a_pathlike_and_the_path_keyword(source_dir):
    import pathlib
    path = pathlib.Path(walk_dir(source_dir)) / "Makefile"
    by_pathlike = attnsel.check(path, gpus="sm90")
    by_keyword = attnsel.check(path=str(path), gpus="sm90")
    assert by_pathlike.files == by_keyword.files == [str(path)]
    assert [c.line for c in by_pathlike.commands] == [c.line for c in by_keyword.commands]
    assert by_pathlike.commands


def test_a_directory_is_walked_and_what_it_passes_over_is_listed(cli, source_dir):
    root = walk_dir(source_dir)
    r = attnsel.check(root, gpus="sm90,sm100")
    reasons = {os.path.relpath(p.path, root): (p.directory, p.reason) for p in r.skipped}
    assert reasons["build"] == (True, "skip-list")
    assert reasons["node_modules"] == (True, "skip-list")
    assert reasons["config/notes.txt"] == (False, "other-kind")
    assert os.path.join(root, "Makefile") in r.files and os.path.join(root, "Procfile") in r.files
    assert len(r.commands) > 40
    code, printed = cli("check", "--gpu", "sm90,sm100", "--format", "json", root)
    assert r.to_dict() == printed
    assert printed["summary"]["skipped_directories"] == sum(p.directory for p in r.skipped)
    assert code == (0 if r.ok else 1)


def test_a_directory_gives_the_findings_of_its_files_one_by_one(source_dir):
    root = walk_dir(source_dir)
    walked = attnsel.check(root, gpus="sm90")
    one_by_one = [attnsel.check(f, gpus="sm90") for f in walked.files]
    assert [c for r in one_by_one for c in r.commands] == walked.commands
    key = lambda f: (f.file, f.line, f.rule, f.gpu, f.message)
    assert [key(f) for r in one_by_one for f in r.findings] == [key(f) for f in walked.findings]


def test_exclude_include_and_gitignore(tmp_path):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "serve.sh").write_text("python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "run.sh").write_text("python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B\n")
    (tmp_path / "old.sh").write_text("python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B\n")
    (tmp_path / ".gitignore").write_text("old.sh\n")
    plain = attnsel.check(str(tmp_path), gpus="sm90")
    assert [os.path.relpath(f, tmp_path) for f in plain.files] == ["deploy/serve.sh"]
    ignored = [p for p in plain.skipped if p.reason == "gitignored"]
    assert [os.path.basename(p.path) for p in ignored] == ["old.sh"] and ".gitignore:1" in ignored[0].detail
    everything = attnsel.check(str(tmp_path), gpus="sm90", include=["build"], gitignore=False, exclude=["deploy"])
    assert sorted(os.path.relpath(f, tmp_path) for f in everything.files) == ["build/run.sh", "old.sh"]
    with pytest.raises(attnsel.UsageError):
        attnsel.check(str(tmp_path), gpus="sm90", exclude="deploy")  # a list, not one string


def test_a_directory_that_gives_nothing_raises_with_what_was_passed_over(tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "run.sh").write_text("python3 -m sglang.launch_server --model-path x\n")
    (tmp_path / "notes.txt").write_text("nothing\n")
    with pytest.raises(attnsel.UsageError) as e:
        attnsel.check(str(tmp_path), gpus="sm90")
    assert e.value.code == "io_error"
    assert "passed over 1 folder and 1 file" in str(e.value) and "--include 'build'" in str(e.value)
    # Named, the folder of the skip list is read.
    assert len(attnsel.check(str(tmp_path / "build"), gpus="sm90").files) == 1


def test_text_stays_possible_and_a_missing_path_is_said():
    assert attnsel.check(text="python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B", gpus="sm90").commands
    # One line with blanks that is not a path: a one-line script, as before.
    assert attnsel.check("python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B\n", gpus="sm90").commands
    with pytest.raises(attnsel.UsageError) as e:
        attnsel.check("deploy/serve.sh", gpus="sm90")
    assert "not a file or directory" in str(e.value) and "text=" in str(e.value)
    with pytest.raises(attnsel.UsageError):
        attnsel.check(text="x", path="y", gpus="sm90")
    with pytest.raises(attnsel.UsageError):
        attnsel.check(path="/nonexistent/attnsel/serve.sh", gpus="sm90")
    with pytest.raises(attnsel.UsageError):
        attnsel.check(os.path.abspath(__file__), gpus="sm90", filename="x.sh")


def test_a_branch_on_compute_capability_is_judged_on_its_gpus():
    recipe = os.path.join(os.environ["ATTNSEL_SOURCE_DIR"], "tests", "fixtures", "deploy", "docs", "llama33_recipe.md")
    hopper = attnsel.check(recipe, gpus="sm90")
    assert len(hopper.commands) == 1 and "Instruct-FP8" in " ".join(hopper.commands[0].args)
    told = [f for f in hopper.findings if f.rule == "check.capability-branch"]
    assert len(told) == 1 and told[0].severity == "info" and "compute capability 10.0" in told[0].message
    both = attnsel.check(recipe, gpus="sm90,B200")
    assert len(both.commands) == 2
    assert not [f for f in both.findings if f.rule == "check.capability-branch"]


PREFIXED = """#!/bin/sh
# attnsel: ignore[args.prefix]
python3 -m sglang.launch_server --model-pa meta-llama/Llama-3.1-8B-Instruct --attention-backend trtllm_mla
"""


def test_comments_select_and_ignore_suppress_findings_without_dropping_them():
    r = attnsel.check(PREFIXED, gpus="sm90", filename="serve.sh")
    assert not r.ok and {f.rule for f in r.errors} == {"cell.kind"}
    assert [(f.rule, f.suppressed_by, f.line) for f in r.suppressed] == [("args.prefix", "serve.sh:2", 3)]
    ignored = attnsel.check(PREFIXED, gpus="sm90", filename="serve.sh", ignore=["cell"])
    assert ignored.ok and ignored.errors == []
    assert {(f.rule, f.suppressed_by) for f in ignored.suppressed} == {("args.prefix", "serve.sh:2"),
                                                                        ("cell.kind", "ignore")}
    assert ignored.to_dict()["summary"]["suppressed"] == 2
    selected = attnsel.check(PREFIXED, gpus="sm90", filename="serve.sh", select=["args"])
    assert selected.ok and "cell.kind" in {f.rule for f in selected.suppressed}


def test_an_unknown_rule_in_select_or_ignore_names_the_closest():
    with pytest.raises(attnsel.UnknownNameError) as e:
        attnsel.check(PREFIXED, gpus="sm90", filename="serve.sh", ignore=["args.prefx"])
    assert e.value.suggestion == "args.prefix" and e.value.where == "ignore"
    with pytest.raises(attnsel.UsageError):
        attnsel.check(PREFIXED, gpus="sm90", filename="serve.sh", ignore="cell")
