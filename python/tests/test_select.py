"""attnsel.select: the plan, the same document as `attnsel --json`, engine flags read with the
engine's grammar, and errors as exceptions that name the place and the valid choices."""
import threading

import pytest

import attnsel


def test_plans_mla_on_hopper():
    s = attnsel.select(gpu="sm90", model="mla")
    assert s.ok and bool(s)
    assert s.plan["attention_backend"] == "fa3"
    assert s.flags == ["--attention-backend", "fa3", "--page-size", "1"]
    assert s.errors == []
    rejected = {r.backend: r for r in s.rejected}
    assert "cell.compute-capability" in [f.rule for f in rejected["trtllm_mla"].reasons]
    assert rejected["trtllm_mla"].slot == "attention"


def test_engine_flags_set_the_request():
    s = attnsel.select(gpu="H100", model="deepseek-ai/DeepSeek-V3", attention_backend="flashmla",
                       kv_cache_dtype="fp8_e4m3")
    assert s.plan["attention_backend"] == "flashmla"
    assert s.plan["kv_cache_dtype"] == "fp8_e4m3"
    assert s.plan["page_size"] == 64  # SGLang rewrites FlashMLA's page size, and attnsel says so
    assert any(w.rule for w in s.warnings)


def test_invalid_plan_is_a_selection_with_errors():
    s = attnsel.select(gpu="sm90", model="mla", attention_backend="trtllm_mla")
    assert not s.ok and not bool(s)
    assert [e.rule for e in s.errors] == ["cell.compute-capability"]
    assert "sm90" in s.errors[0].message
    assert s.errors[0].source


@pytest.mark.parametrize("kwargs, argv", [
    (dict(page_size=64), ["--page-size", "64"]),
    (dict(enable_deterministic_inference=True), ["--enable-deterministic-inference"]),
    (dict(disable_radix_cache=False), []),
    (dict(attention_backend=None), []),
    (dict(speculative_eagle_topk=4, kv_cache_dtype="fp8_e4m3"),
     ["--speculative-eagle-topk", "4", "--kv-cache-dtype", "fp8_e4m3"]),
    (dict(some_list=["a", 2]), ["--some-list", "a", "2"]),
])
def test_launch_flags_from_keywords(kwargs, argv):
    assert attnsel.launch_flags(**kwargs) == argv


def test_keywords_and_launch_args_are_the_same_request():
    a = attnsel.select(gpu="B200", model="mla", attention_backend="trtllm_mla", page_size=64)
    b = attnsel.select(gpu="B200", model="mla", launch_args=["--attention-backend", "trtllm_mla", "--page-size", "64"])
    assert a.to_dict() == b.to_dict()


def test_a_unique_prefix_is_read_as_argparse_reads_it_with_a_note():
    s = attnsel.select(gpu="sm90", model="mla", launch_args=["--attention-back", "triton"])
    assert s.plan["attention_backend"] == "triton"
    assert "args.prefix" in [n.rule for n in s.flag_notes]


def test_model_from_the_engines_own_flag():
    s = attnsel.select(gpu="sm90", model_path="deepseek-ai/DeepSeek-V3")
    assert s.to_dict()["devices"][0]["model"]["kind"] == "mla"


# ---- the same document as the command line ----

CLI_CASES = [
    (["--gpu", "sm90", "--model", "mla"], dict(gpu="sm90", model="mla")),
    (["--gpu", "H100", "--model", "deepseek-ai/DeepSeek-V3", "--kv-cache-dtype", "fp8_e4m3", "--page-size", "16"],
     dict(gpu="H100", model="deepseek-ai/DeepSeek-V3", kv_cache_dtype="fp8_e4m3", page_size=16)),
    (["--gpu", "sm90", "--model", "mla", "--attention-backend", "trtllm_mla"],
     dict(gpu="sm90", model="mla", attention_backend="trtllm_mla")),
    (["--gpu", "B200", "--model", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--prefer", "prefix-reuse", "--strict"],
     dict(gpu="B200", model="Qwen/Qwen3-Next-80B-A3B-Instruct", prefer="prefix-reuse", strict=True)),
    (["--gpu", "sm90", "--cuda", "12.4", "--model", "mha", "--sliding-window", "--speculative-eagle-topk", "4"],
     dict(gpu="sm90", cuda="12.4", model="mha", sliding_window=True, speculative_eagle_topk=4)),
    (["--engine", "vllm", "--gpu", "B200", "--model", "deepseek-ai/DeepSeek-V3"],
     dict(engine="vllm", gpu="B200", model="deepseek-ai/DeepSeek-V3")),
    (["--engine-version", "0.5.3", "--gpu", "sm100", "--model", "mla"],
     dict(engine_version="0.5.3", gpu="sm100", model="mla")),
    (["--platform", "npu", "--model", "mha"], dict(platform="npu", model="mha")),
]


@pytest.mark.parametrize("argv, kwargs", CLI_CASES, ids=[" ".join(a) for a, _ in CLI_CASES])
def test_to_dict_is_what_the_cli_prints(cli, argv, kwargs):
    code, printed = cli(*argv, "--json")
    s = attnsel.select(**kwargs)
    assert s.to_dict() == printed
    assert code == (0 if s.ok else 1)


# ---- errors ----

def test_unknown_gpu_lists_the_valid_ones_and_the_closest():
    with pytest.raises(attnsel.UnknownNameError) as e:
        attnsel.select(gpu="H1000", model="mla")
    assert e.value.code == "unknown_name"
    assert e.value.where == "--gpu"
    assert "H100" in e.value.choices and "sm90" in e.value.choices
    assert e.value.suggestion == "H100"
    assert "H1000" in str(e.value) and "did you mean 'H100'" in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, attnsel.Error)


def test_unknown_model():
    with pytest.raises(attnsel.UnknownNameError) as e:
        attnsel.select(gpu="sm90", model="not-a-model-anyone-knows")
    assert e.value.where == "--model"


def test_no_model():
    with pytest.raises(attnsel.UsageError) as e:
        attnsel.select(gpu="sm90")
    assert e.value.where == "--model" and e.value.code == "invalid_argument"


def test_unknown_engine():
    with pytest.raises(attnsel.UnknownNameError) as e:
        attnsel.select(gpu="sm90", model="mla", engine="vlm")
    assert e.value.where == "engine"
    assert "vllm" in e.value.choices and e.value.suggestion == "vllm"


@pytest.mark.parametrize("version, error", [("0.5.x", attnsel.UsageError), ("0.0.1", attnsel.UsageError)])
def test_bad_engine_version(version, error):
    with pytest.raises(error) as e:
        attnsel.select(gpu="sm90", model="mla", engine_version=version)
    assert e.value.where == "engine_version"


def test_a_flag_the_engine_refuses_carries_its_rule_and_place():
    with pytest.raises(attnsel.UsageError) as e:
        attnsel.select(gpu="sm90", model="mla", attention_backend="fa9")
    assert e.value.rule == "args.choice"
    assert e.value.where == "--attention-backend"
    assert "fa9" in str(e.value) and "did you mean fa3" in str(e.value)
    assert [f.rule for f in e.value.findings if f.severity == "error"] == ["args.choice"]


def test_an_unknown_flag():
    with pytest.raises(attnsel.UsageError) as e:
        attnsel.select(gpu="sm90", model="mla", atention_backend="fa3")
    assert e.value.rule == "args.unknown"
    assert "--atention-backend" in str(e.value)


@pytest.mark.parametrize("kwargs, where", [
    (dict(gpu=90, model="mla"), "gpu"),
    (dict(gpu="sm90", model="mla", page_size=object()), "page_size"),
    (dict(gpu="sm90", model="mla", launch_args="--page-size 64"), "launch_args"),
    (dict(gpu="sm90", model="mla", prefer="fast"), "prefer"),
    (dict(gpu="sm90", model="mla", dtype="fp64"), "dtype"),
    (dict(gpu="sm90", model="mla", platform="tpu"), "platform"),
    (dict(gpu="sm90", model="mla", cuda="12.x"), "--cuda"),
])
def test_bad_values_name_their_place(kwargs, where):
    with pytest.raises(attnsel.UsageError) as e:
        attnsel.select(**kwargs)
    assert e.value.where == where


def test_without_a_gpu_the_environment_names_it(monkeypatch):
    monkeypatch.setenv("ATTNSEL_GPU", "B200")
    s = attnsel.select(model="mla")
    assert s.to_dict()["devices"][0]["device"]["arch"] == "sm100"


def test_without_a_gpu_and_none_found_the_probe_says_so():
    if attnsel.probe().devices:
        pytest.skip("this host has a GPU")
    with pytest.raises(attnsel.NoDeviceError) as e:
        attnsel.select(model="mla")
    assert e.value.code == "no_device"
    assert "--gpu" in str(e.value)


def test_threads_get_the_same_answers():
    cases = [dict(gpu=g, model=m) for g in ("sm80", "sm90", "sm100", "MI300X") for m in ("mha", "mla", "gdn")]
    expected = [attnsel.select(**c).to_dict() for c in cases]
    results = [None] * len(cases)

    def work(i):
        results[i] = attnsel.select(**cases[i]).to_dict()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected


def test_several_gpus_are_planned_each():
    both = attnsel.select(gpu="sm90,MI300X", model="deepseek-ai/DeepSeek-V3")
    assert [d.plan["attention_backend"] for d in both.devices] == ["fa3", "triton"]
    assert both.ok and not both.same_plan and both.flags == []
    assert [d["plan"]["attention_backend"] for d in both.to_dict()["devices"]] == ["fa3", "triton"]
    same = attnsel.select(gpu=["H100", "H200"], model="deepseek-ai/DeepSeek-V3")
    assert same.same_plan and same.flags == same.devices[0].flags and len(same.devices) == 2
    one = attnsel.select(gpu="sm90", model="mla")
    assert one.devices == [one] and one.same_plan
    with pytest.raises(attnsel.UsageError):
        attnsel.select(gpu="sm90,", model="mla")
