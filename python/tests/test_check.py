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
