#!/usr/bin/python3
"""Runs vLLM's own attention selection over a set of cases and writes its answers.

    tools/oracle/vllm_oracle.py --src TREE --release 0.13 [--jobs 2]   # -> tests/oracle/vllm/0.13.jsonl

TREE is a vLLM source tree (the folder holding vllm/); nothing of it is copied here. --release
names an entry of tests/oracle/vllm/index.json (its commit goes into the answers' header). For
each case (a platform and GPU, a model's config.json, the environment and the launch flags) the
engine's code runs as it does at start-up, hardware stubbed (fakeenv.py, vllm_shims.py):

  1. `EngineArgs.add_cli_args` builds the release's parser and parses the flags (argparse errors,
     `choices`, mutually exclusive options included);
  2. `EngineArgs.from_cli_args(...).create_engine_config()`: ModelConfig reads the config.json
     through vLLM's own loader, CacheConfig/AttentionConfig validators, VllmConfig.__post_init__
     and the platform's `check_and_update_config` (the block size of the VLLM_ATTENTION_BACKEND
     era is forced here);
  3. under `set_current_vllm_config`, the selector exactly as the attention layer calls it:
     `get_attn_backend(head_size, dtype, kv_cache_dtype, use_mla=, use_sparse=, has_sink=,
     use_mm_prefix=, num_heads=, ...)` (arguments the release's signature declares), which runs
     the platform's `get_attn_backend_cls`: the explicit backend's `validate_configuration`, or
     the priority walk over every backend's `validate_configuration` / `supports_*` hooks;
     head size, heads per rank under tensor parallelism, MLA and the multimodal-prefix flag come
     from vLLM's ModelConfig (`get_head_size`, `get_num_attention_heads(parallel_config)`,
     `use_mla`, `is_mm_prefix_lm`); the layer-level inputs the model code passes (attention sinks,
     the DSA indexer, sliding window) are the archetype's, as its model file passes them;
  4. the block size: `Platform.update_block_size_for_backend` where the release has it (the
     chosen backend's `get_preferred_block_size`, the hybrid alignment), with the layer lookup
     answered by the backend of step 3.

The answer is the backend (its enum name), the block size and KV cache dtype, or the exception
(type, message, file:line, stage). Hardware is pinned per group of cases and the engine is
imported once per group; each case runs in a forked child. See docs/oracle.md.
"""
from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import json
import os
import signal
import sys
import time
import traceback
import types
import typing

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fakeenv  # noqa: E402
import vllm_cases as case_space  # noqa: E402
import vllm_shims  # noqa: E402

HARNESS_VERSION = 1
CASE_TIMEOUT_S = 30
REPO = os.path.dirname(os.path.dirname(HERE))

# Compiled modules of vLLM's own wheel: present in every image of the platform (`import vllm._C`).
EXTENSIONS = {
    "cuda": {"vllm._C", "vllm._moe_C", "vllm._C_stable_libtorch", "vllm._moe_C_stable_libtorch",
             "vllm.vllm_flash_attn._vllm_fa2_C", "vllm.vllm_flash_attn._vllm_fa3_C", "vllm._flashmla_C",
             "vllm._flashmla_extension_C", "vllm.cumem_allocator", "vllm._qutlass_C", "vllm.third_party.flashmla"},
    "rocm": {"vllm._C", "vllm._moe_C", "vllm._rocm_C", "vllm._C_stable_libtorch", "vllm._moe_C_stable_libtorch",
             "vllm.cumem_allocator"},
    "xpu": {"vllm._C", "vllm._moe_C"},
    "cpu": {"vllm._C", "vllm._C_AVX", "vllm._C_utils"},
}
# Platform plugins of machines that are not the case's: their probes fail to import.
NOT_INSTALLED = {"cuda": {"tpu_inference", "libtpu", "amdsmi", "zentorch", "modelscope"},
                 "rocm": {"tpu_inference", "libtpu", "zentorch", "modelscope"},
                 "xpu": {"tpu_inference", "libtpu", "amdsmi", "zentorch", "modelscope"},
                 "cpu": {"tpu_inference", "libtpu", "amdsmi", "zentorch", "modelscope"}}
PLATFORM_CLASS = {"cuda": "vllm.platforms.cuda.CudaPlatform", "rocm": "vllm.platforms.rocm.RocmPlatform",
                  "xpu": "vllm.platforms.xpu.XPUPlatform", "cpu": "vllm.platforms.cpu.CpuPlatform"}


# ---------------------------------------------------------------------------------------------
# The fake machine, vLLM's part.
# ---------------------------------------------------------------------------------------------
def _infer_schema(fn, *args, **kwargs):
    """torch.library.infer_schema from the op's annotations: vLLM's IR checks the op's arity."""
    sig = inspect.signature(fn)
    params = ", ".join(f"Tensor {n}" for n in sig.parameters)
    n = str(sig.return_annotation).count("Tensor")
    out = "()" if n == 0 else ("Tensor" if n == 1 else "(" + ", ".join(["Tensor"] * n) + ")")
    return f"({params}) -> {out}"


class _StubProtocolMeta(typing._ProtocolMeta):  # noqa: SLF001
    """A stand-in base class (torch.nn.Module ...) that can be mixed with vLLM's Protocol
    interfaces (SupportsPP ...) and that invents no class attributes: the model registry reads a
    model class's capabilities with getattr(cls, name, default). Only torch.autograd.Function's
    `apply` is invented (`triton_attention = _attention.apply` at import)."""

    def __getattr__(cls, attr):
        if attr == "apply":
            return fakeenv.Stub(f"{cls.__name__}.apply")
        raise AttributeError(attr)


def _generic_stub_classes():
    original = fakeenv._stub_class

    def stub_class(name):
        known = name in fakeenv._STUB_CLASSES
        cls = original(name)
        if not known:
            body = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
            body["__class_getitem__"] = classmethod(lambda c, item: c)  # class C(cachetools.LRUCache[K, V])
            cls = _StubProtocolMeta(cls.__name__, (), body)
            fakeenv._STUB_CLASSES[name] = cls
        return cls

    fakeenv._stub_class = stub_class


def _transformers_v5():
    """The PretrainedConfig methods of transformers 5 that vLLM's config loader calls."""
    pc = fakeenv.PretrainedConfig

    def standardize_rope_params(self):
        if self.__dict__.get("rope_parameters") is None:
            theta = self.__dict__.get("rope_theta")
            scaling = self.__dict__.get("rope_scaling") or {}
            params = {"rope_type": scaling.get("rope_type", scaling.get("type", "default"))}
            params.update({k: v for k, v in scaling.items() if k != "type"})
            if theta is not None:
                params["rope_theta"] = theta
            object.__setattr__(self, "rope_parameters", params)

    pc.standardize_rope_params = standardize_rope_params
    pc.validate_rope = lambda self, *a, **k: None
    pc.validate_layer_type = lambda self, *a, **k: None
    pc.rope_parameters = None


_DTYPES: dict = {}


def extend_torch():
    """What vLLM asks torch beyond fakeenv's answers: the device count it reads without CUDA.
    Called after every fakeenv.pin(), which builds torch's dtypes anew: the first ones are put
    back, because vLLM's backends hold them in their supported-dtype lists (compared by identity)."""
    import torch
    torch.__file__ = "/usr/lib/python3/dist-packages/torch/__init__.py"  # the CPU platform looks beside it for libgomp
    if not _DTYPES:
        _DTYPES.update({n: v for n, v in vars(torch).items() if isinstance(v, fakeenv._DType)})
    else:
        for n, v in _DTYPES.items():
            setattr(torch, n, v)
    accelerated = fakeenv.CASE.get("platform") in ("cuda", "rocm")
    count = int(fakeenv.CASE.get("device_count", 8))
    torch.cuda._is_compiled = lambda: accelerated
    torch.cuda._device_count_nvml = lambda: count if accelerated else 0
    torch.cuda._device_count_amdsmi = lambda: count if accelerated else 0
    torch.accelerator = types.SimpleNamespace(device_count=lambda: count if accelerated or
                                              fakeenv.CASE.get("platform") == "xpu" else 0,
                                              is_available=lambda: accelerated)
    if fakeenv.CASE.get("platform") == "xpu":
        torch.xpu.device_count = lambda: count
    # An x86 host with AVX-512 (bf16) and no AMX: the CPU image's usual server.
    torch.cpu = types.SimpleNamespace(is_available=lambda: True, _is_avx512_supported=lambda: True,
                                      _is_avx512_bf16_supported=lambda: True, _is_amx_tile_supported=lambda: False,
                                      _is_avx2_supported=lambda: True, _is_arm_sve_supported=lambda: False,
                                      device_count=lambda: 1)

    class Tensor(fakeenv.Stub):  # torch.tensor([], dtype=d).element_size(): vLLM's get_dtype_size
        __slots__ = ("_dtype",)

        def __init__(self, dtype):
            fakeenv.Stub.__init__(self, "torch.tensor()")
            object.__setattr__(self, "_dtype", dtype)

        def element_size(self):
            return getattr(self._dtype, "itemsize", 4)

    torch.tensor = lambda data=None, *a, dtype=None, **k: Tensor(dtype if dtype is not None else torch.float32)
    torch.empty = lambda *a, dtype=None, **k: Tensor(dtype if dtype is not None else torch.float32)


def _fa_capability():
    cap = fakeenv.CASE.get("capability", [0, 0])
    return int(cap[0]) * 10 + int(cap[1])


def _build_vllm_flash_attn(module):
    """vllm.vllm_flash_attn where the tree does not carry it (releases before it was vendored into
    the tree): the wheel's module, built from vllm-project/flash-attention, answers the version
    questions as the in-tree copy of later releases does (vllm/vllm_flash_attn/flash_attn_interface.py
    @c57d38d6: FA2 on compute capability >= 8.0, FA3 on the 9.x family; no FA4 in these wheels)."""
    def supported(version):
        cap = _fa_capability()
        return (version == 2 and cap >= 80) or (version == 3 and 90 <= cap < 100)

    def reason(version):
        if supported(version):
            return None
        return {2: "FA2 is only supported on devices with compute capability >= 8",
                3: "FA3 is only supported on devices with compute capability 9.x"}.get(version, "FA4 is unavailable")

    module.is_fa_version_supported = supported
    module.fa_version_unsupported_reason = reason
    module.flash_attn_interface = module
    sys.modules[module.__name__ + ".flash_attn_interface"] = module


class _FlashAttnFinder(importlib.abc.MetaPathFinder):
    def __init__(self, src):
        self.absent = not os.path.exists(os.path.join(src, "vllm", "vllm_flash_attn", "__init__.py"))

    def find_spec(self, name, path=None, target=None):
        if self.absent and fakeenv.CASE.get("platform") in ("cuda", "xpu"):
            if name == "vllm.vllm_flash_attn":
                return importlib.machinery.ModuleSpec(name, fakeenv._StubLoader(_build_vllm_flash_attn), is_package=True)
            if name.startswith("vllm.vllm_flash_attn."):
                return importlib.machinery.ModuleSpec(name, fakeenv._StubLoader(), is_package=True)
        return None


# Python packages of the platform's image that vLLM asks about with find_spec (present), beside the
# kernel packages of fakeenv.KERNEL_PACKAGES that each case lists.
PRESENT = {"cuda": {"triton"}, "rocm": {"triton"}, "xpu": {"triton"}, "cpu": set()}


def _find_spec_with_image(find_spec):
    def wrapped(name, package=None):
        if name.split(".")[0] in PRESENT.get(fakeenv.CASE.get("platform"), ()):
            return importlib.machinery.ModuleSpec(name, fakeenv._StubLoader())
        return find_spec(name, package)
    return wrapped


def _amdsmi():
    """amdsmi on the ROCm image: the GPU's marketing name and gfx target (vllm/platforms/rocm.py)."""
    m = fakeenv.StubModule("amdsmi")
    m.__path__ = []
    arch = lambda: fakeenv.CASE.get("gcn_arch", "gfx942").split(":")[0]  # noqa: E731
    m.AmdSmiException = type("AmdSmiException", (Exception,), {})
    m.amdsmi_init = m.amdsmi_shut_down = lambda *a, **k: None
    m.amdsmi_get_processor_handles = lambda: list(range(int(fakeenv.CASE.get("device_count", 8))))
    m.amdsmi_get_gpu_asic_info = lambda h: {"market_name": fakeenv.CASE.get("device_name", ""),
                                            "target_graphics_version": arch(), "device_id": "0x74a1",
                                            "vendor_name": "Advanced Micro Devices Inc. [AMD/ATI]"}
    m.amdsmi_get_gpu_board_info = lambda h: {"product_name": fakeenv.CASE.get("device_name", "")}
    m.amdsmi_topo_get_link_type = lambda a, b: {"hops": 1, "type": 2}
    m.amdsmi_get_gpu_memory_total = lambda *a: int(fakeenv.CASE.get("memory_mib", 196592)) << 20
    m.amdsmi_get_gpu_device_uuid = lambda h: "00000000-0000-0000-0000-000000000000"
    return m


def _hide_cute_interface(src):
    """FA4's CuTe sources ship in the CUDA wheel only: vllm_flash_attn is a CUDA external project
    (CMakeLists.txt@4765f0f1:1349, inside the CUDA branch), so on another platform the test
    flash_attn_interface.py makes for FA4 (os.path.exists of cute/interface.py, @4765f0f1:32-45)
    finds nothing, whatever stand-in main() put in the source tree for CUDA cases."""
    hidden = os.path.realpath(os.path.join(src, "vllm", "vllm_flash_attn", "cute", "interface.py"))
    exists = os.path.exists

    def exists_off_cuda(path):
        name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
        if isinstance(name, str) and name.endswith("interface.py") and os.path.realpath(name) == hidden:
            return False
        return exists(path)

    os.path.exists = exists_off_cuda


def prepare(src, platform):
    """Install the fakes and import vLLM for one hardware profile (fakeenv.pin done by caller)."""
    fakeenv.ENGINE_TOPS.add("vllm")
    fakeenv.EXTENSIONS.clear()
    fakeenv.EXTENSIONS.update(EXTENSIONS.get(platform, ()))
    fakeenv.NOT_INSTALLED.update(NOT_INSTALLED[platform])
    fakeenv.install()
    vllm_shims.install()
    sys.meta_path.insert(0, _FlashAttnFinder(src))
    if platform != "cuda":
        _hide_cute_interface(src)
    importlib.util.find_spec = _find_spec_with_image(importlib.util.find_spec)
    _generic_stub_classes()
    # A stub compared for equality decides a branch as surely as one tested for truth (vLLM:
    # `response.status_code == 200`): in this process, that is a probe too.
    fakeenv.Stub.__eq__ = lambda self, other: (self is other) or (fakeenv._probe(self._name, "==") and False)
    fakeenv.Stub.__ne__ = lambda self, other: not fakeenv.Stub.__eq__(self, other)
    fakeenv.Stub.__hash__ = lambda self: id(self)
    if str(fakeenv.CASE.get("transformers_version", "4")).split(".")[0] >= "5":
        _transformers_v5()
    fakeenv.import_torch_now()
    import torch
    torch.library.infer_schema = _infer_schema
    extend_torch()
    if "triton" in PRESENT.get(platform, ()):
        import triton  # fakeenv's triton; vLLM counts its active drivers (vllm/triton_utils/importing.py)
        driver = types.SimpleNamespace(is_active=lambda: True)
        backends = fakeenv.StubModule("triton.backends")
        backends.__path__ = []
        backends.backends = {"hip" if platform == "rocm" else "nvidia": types.SimpleNamespace(driver=driver)}
        sys.modules["triton.backends"] = triton.backends = backends
    if "triton" in PRESENT.get(platform, ()):
        import triton
        props = {"max_shared_mem": 232448 if platform == "cuda" else 65536, "multiprocessor_count": 132,
                 "max_num_regs": 65536, "warpSize": 64 if platform == "rocm" else 32, "sm_clock_rate": 1980000,
                 "mem_clock_rate": 2619000, "mem_bus_width": 5120}
        triton.runtime.driver.active.utils = types.SimpleNamespace(get_device_properties=lambda *a: props)
    if platform == "rocm":
        sys.modules["amdsmi"] = _amdsmi()
    sys.path.insert(0, src)
    import transformers.utils as tu  # names vLLM's loader reads (a stub module otherwise)
    tu.CONFIG_NAME, tu.SAFE_WEIGHTS_NAME, tu.WEIGHTS_NAME = "config.json", "model.safetensors", "pytorch_model.bin"
    tu.SAFE_WEIGHTS_INDEX_NAME = "model.safetensors.index.json"
    import vllm.platforms as platforms
    qualname = PLATFORM_CLASS[platform]
    module, _, name = qualname.rpartition(".")
    platforms._current_platform = getattr(__import__(module, fromlist=[name]), name)()
    # The model registry inspects a model class in a subprocess "to avoid initializing CUDA";
    # there is no CUDA here, so the same function runs in this process, on the fake machine.
    from vllm.model_executor.models import registry
    registry._run_in_subprocess = lambda fn, *a, **k: fn()


# ---------------------------------------------------------------------------------------------
# One case, in its own process, the engine already imported.
# ---------------------------------------------------------------------------------------------
def _where(tb, src_root):
    found = None
    for frame in traceback.extract_tb(tb):
        if frame.filename.startswith(src_root):
            found = frame
    if found is None:
        return None
    return f"{os.path.relpath(found.filename, src_root)}:{found.lineno} {found.name}"


def _error(exc, src_root, stage):
    message = str(exc).strip() or type(exc).__name__
    return {"stage": stage, "type": type(exc).__name__, "message": message[:500],
            "where": _where(exc.__traceback__, src_root)}


def _parser():
    from vllm.engine.arg_utils import EngineArgs
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    parser = FlexibleArgumentParser(prog="vllm serve", exit_on_error=False)
    EngineArgs.add_cli_args(parser)
    return parser


class _ArgparseExit(Exception):
    pass


def _parse(parser, argv):
    def error(message):
        raise _ArgparseExit(message)

    parser.error = error
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:
        raise _ArgparseExit(f"argparse exit {exc.code}") from exc


def _call_with_signature(func, args, kwargs):
    params = inspect.signature(func).parameters
    return func(*args, **{k: v for k, v in kwargs.items() if k in params})


def _backend_name(cls):
    try:
        return cls.get_name()
    except Exception:  # noqa: BLE001
        return getattr(cls, "__name__", str(cls))


def _selector_module():
    try:
        from vllm.v1.attention import selector
        return selector
    except ImportError:
        from vllm.attention import selector
        return selector


def _layer_inputs(vllm_config, archetype):
    """What the model's attention layers pass to get_attn_backend, from vLLM's ModelConfig."""
    mc, pc, cc = vllm_config.model_config, vllm_config.parallel_config, vllm_config.cache_config
    use_mla = bool(getattr(mc, "use_mla", False))
    inputs = {
        "head_size": mc.get_head_size(),
        "dtype": mc.dtype,
        "kv_cache_dtype": cc.cache_dtype,
        "block_size": cc.block_size,
        "use_mla": use_mla,
        "has_sink": bool(archetype.get("sinks")),
        "use_sparse": bool(use_mla and archetype.get("sparse")),
        "use_mm_prefix": bool(getattr(mc, "is_mm_prefix_lm", False)),
        "num_heads": mc.get_num_attention_heads(pc),
        "has_sliding_window": bool(archetype.get("sliding_first")),
    }
    return inputs


# The exceptions vLLM raises on purpose when it refuses a configuration; anything else (a TypeError
# on a stub, an import the fake machine cannot serve) is the harness's limit, not an answer.
REFUSALS = {"ValueError", "AssertionError", "NotImplementedError", "RuntimeError", "ArgumentError", "ValidationError",
            "ArgumentTypeError", "KeyError"}


def _harness_limit(error, case):
    text = error["message"]
    if error["type"] not in REFUSALS:
        return f"{error['type']} at {error['where']}"
    if "stub" in text.lower() or "failed to be inspected" in text:
        return f"{error['type']} on the fake machine: {text[:120]}"
    if "ImportError" in text and case.get("platform") == "cuda":
        return "a backend module did not import on the fake machine (the CUDA image ships it)"
    return None


def run_case(case, src_root):
    """Returns the answer dict for one case (called in the child)."""
    from vllm.engine.arg_utils import EngineArgs
    stage = "parse"
    fakeenv.PROBES.clear()
    try:
        parser = _PARSER[0]
        try:
            ns = _parse(parser, case["argv"])
        except _ArgparseExit as exc:
            return {"ok": False, "error": {"stage": "parse", "type": "ArgumentError", "message": str(exc)[:500],
                                           "where": None}}
        stage = "config"
        engine_args = EngineArgs.from_cli_args(ns)
        vllm_config = engine_args.create_engine_config()
        stage = "select"
        from vllm.config import set_current_vllm_config
        selector = _selector_module()
        archetype = case.get("archetype", {})
        inputs = _layer_inputs(vllm_config, archetype)
        with set_current_vllm_config(vllm_config):
            backend_cls = _call_with_signature(selector.get_attn_backend, (), inputs)
            name = _backend_name(backend_cls)
            stage = "block_size"
            from vllm.platforms import current_platform
            if hasattr(type(current_platform), "update_block_size_for_backend"):
                # The model's attention layers, as the block-size resolution looks them up
                # (get_layers_from_vllm_config over the forward context): one layer, whose backend
                # is the one just selected. No model is built on the fake machine.
                import vllm.config.vllm as config_vllm
                layer = types.SimpleNamespace(get_attn_backend=lambda: backend_cls)
                config_vllm.get_layers_from_vllm_config = lambda *a, **k: {"model.layers.0.self_attn.attn": layer}
                current_platform.update_block_size_for_backend(vllm_config)
        answer = {"ok": True, "backend": name, "block_size": vllm_config.cache_config.block_size,
                  "kv_cache_dtype": vllm_config.cache_config.cache_dtype,
                  "inputs": {k: (str(v) if k == "dtype" else v) for k, v in inputs.items()}}
    except Exception as exc:  # noqa: BLE001
        answer = {"ok": False, "error": _error(exc, src_root, stage)}
        limit = _harness_limit(answer["error"], case)
        if limit:
            answer = {"ok": None, "harness_limit": limit, "error": answer["error"]}
    if fakeenv.PROBES:
        answer["probes"] = sorted(fakeenv.PROBES)
    return answer


_PARSER = []


def debug_main():
    """VLLM_ORACLE_DEBUG=1 vllm_oracle.py --src TREE --gpu H100 --model DIR [flags]: one case, in
    this process, the engine's log on stderr."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--gpu", default="H100")
    ap.add_argument("--model", required=True)
    ap.add_argument("--arch", default="{}")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    hw = next(p for p in case_space.platforms() if p["gpu"] == a.gpu)
    VERSIONS.update(case_space.engine_versions(a.src))
    fakeenv.pin(_hw_case(dict(hw)))
    prepare(os.path.abspath(a.src), hw["platform"])
    _PARSER.append(_parser())
    rest = a.rest[1:] if a.rest[:1] == ["--"] else a.rest
    case = {"argv": ["--model", a.model] + rest, "archetype": json.loads(a.arch)}
    print(json.dumps(run_case(case, os.path.abspath(a.src)), indent=1, default=str))


def grammar_choices():
    """The release's own choices, read from its parser (built in this process)."""
    parser = _PARSER[0]
    options = {}
    for action in parser._actions:  # noqa: SLF001
        for opt in action.option_strings:
            options[opt] = action
    backend_flag = "--attention-backend" if "--attention-backend" in options else None
    if backend_flag and options[backend_flag].choices:
        backends = [str(c) for c in options[backend_flag].choices]
    else:
        import importlib
        enum = None
        for module in ("vllm.v1.attention.backends.registry", "vllm.attention.backends.registry",
                       "vllm.platforms.interface"):
            try:
                mod = importlib.import_module(module)
            except ImportError:
                continue
            enum = getattr(mod, "AttentionBackendEnum", None) or getattr(mod, "_Backend", None)
            if enum is not None:
                break
        backends = [m.name for m in enum]
    skip = {"TORCH_SDPA", "NO_ATTENTION", "CUSTOM", "IPEX", "PALLAS", "PALLAS_VLLM_V1", "FLASH_ATTN_DIFFKV",
            "TRITON_ATTN_DIFFKV"}
    backends = [b for b in backends if b.upper() not in skip and not b.upper().endswith("_DSV4")]
    kv = options.get("--kv-cache-dtype")
    bs = options.get("--block-size")
    return {"backend_flag": backend_flag, "backends": backends,
            "kv_cache_dtypes": [str(c) for c in (kv.choices or [])] if kv else [],
            "block_sizes": [str(c) for c in (bs.choices or [])] if bs and bs.choices else [],
            "flags": sorted(options)}


def _run_child(case, src_root, write_fd):
    import gc
    gc.disable()
    signal.alarm(CASE_TIMEOUT_S)
    try:
        fakeenv.pin(_hw_case(case))
        extend_torch()
        answer = run_case(case, src_root)
    except BaseException as exc:  # noqa: BLE001
        answer = {"ok": None, "harness_limit": f"{type(exc).__name__}: {exc}"[:300]}
    answer["id"] = case["id"]
    with os.fdopen(write_fd, "wb") as f:
        f.write(json.dumps(answer, sort_keys=True, default=str).encode())
    os._exit(0)


def _quiet_child():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    return pid, r, w


VERSIONS: dict = {}


def _hw_case(case):
    hw = {k: case[k] for k in ("platform", "capability", "device_name", "memory_mib", "cuda", "gcn_arch",
                               "packages") if k in case}
    hw.update(VERSIONS)
    hw["env"] = dict(case.get("env", {}))
    hw["env"].setdefault("HF_HUB_OFFLINE", "1")
    hw["device_count"] = 8
    # Every kernel package the image does not list is absent (its import fails), not a question.
    hw["absent"] = [k for k in fakeenv.KERNEL_PACKAGES if k not in hw.get("packages", ()) and k != "vllm"]
    return hw


def _profile_worker(group, src, model_dir, jobs, out_fd, choices_out=None):
    sys.dont_write_bytecode = False
    import logging
    import warnings
    warnings.filterwarnings("ignore")
    fakeenv.pin(_hw_case(group[0]))
    try:
        prepare(src, group[0]["platform"])
        logging.disable(logging.CRITICAL)
        _PARSER.append(_parser())
        if choices_out is not None:
            os.write(choices_out, json.dumps(grammar_choices()).encode())
            os._exit(0)
        from vllm.engine import arg_utils  # noqa: F401  (imported once per profile)
        for name in ("vllm.v1.attention.selector", "vllm.attention.selector", "vllm.config"):
            try:
                __import__(name)
            except BaseException:  # noqa: BLE001
                pass
    except BaseException as exc:  # noqa: BLE001
        msg = f"import vllm: {type(exc).__name__}: {exc}"[:300]
        if choices_out is not None:
            os.write(choices_out, json.dumps({"error": msg}).encode())
            os._exit(0)
        lost = [{"id": c["id"], "ok": None, "harness_limit": msg} for c in group]
        os.write(out_fd, ("\n".join(json.dumps(r, sort_keys=True) for r in lost) + "\n").encode())
        os._exit(0)
    for case in group:
        case["argv"] = ["--model", os.path.join(model_dir, case["model"])] + case["flags"]
        case["archetype"] = case_space.LAYERS.get(case["model"], {})
    _warm(group, model_dir)
    import gc
    gc.collect()
    gc.freeze()
    running = {}
    pending = list(group)
    while pending or running:
        while pending and len(running) < jobs:
            case = pending.pop(0)
            pid, r, w = _quiet_child()
            if pid == 0:
                _run_child(case, src, w)
            os.close(w)
            running[pid] = (case, r)
        pid, status = os.wait()
        case, r = running.pop(pid)
        with os.fdopen(r, "rb") as f:
            data = f.read()
        if data:
            answer = json.loads(data)
        else:
            why = "timed out" if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM else f"died ({status})"
            answer = {"id": case["id"], "ok": None, "harness_limit": why}
        os.write(out_fd, (json.dumps(answer, sort_keys=True) + "\n").encode())
    os._exit(0)


def _warm(group, model_dir):
    """Imports, once per hardware profile, what every case would import on its way: each backend
    class of the release, and each archetype's model class (the model registry's inspection, by
    building the default configuration). Harness speed only: no selection runs here, and the
    children start from the same module state a first case would leave (the
    environment and vllm.envs are restored after each configuration built here)."""
    from vllm.engine.arg_utils import EngineArgs
    try:
        selector_enum = None
        import importlib
        for module in ("vllm.v1.attention.backends.registry", "vllm.attention.backends.registry"):
            try:
                selector_enum = importlib.import_module(module).AttentionBackendEnum
                break
            except (ImportError, AttributeError):
                continue
        for member in selector_enum or ():
            try:
                member.get_class()
            except BaseException:  # noqa: BLE001
                pass
    except BaseException:  # noqa: BLE001
        pass
    fakeenv.pin(_hw_case(group[0]))
    extend_torch()
    # Building a configuration may write process state a fresh engine would not have: v0.12's
    # CudaPlatform.check_and_update_config sets `envs.VLLM_ATTENTION_BACKEND = "CUTLASS_MLA"` for an
    # MLA model on SM100, which every later case forked from here would inherit (a Llama case then
    # fails on CUTLASS_MLA). The environment and vllm.envs are put back as they were.
    import vllm.envs as envs
    environ = dict(os.environ)
    attributes = dict(vars(envs))
    for model in sorted({c["model"] for c in group}):
        try:
            ns = _parse(_PARSER[0], ["--model", os.path.join(model_dir, model)])
            EngineArgs.from_cli_args(ns).create_engine_config()
        except BaseException:  # noqa: BLE001
            pass
        for name in [n for n in vars(envs) if n not in attributes]:
            delattr(envs, name)
        for name, value in attributes.items():
            if vars(envs).get(name, object()) is not value:
                setattr(envs, name, value)
        os.environ.clear()
        os.environ.update(environ)


def read_choices(src, model_dir):
    hw = case_space.platforms()[0]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _profile_worker([dict(hw, id="0", model="llama", flags=[])], src, model_dir, 1, None, choices_out=w)
    os.close(w)
    with os.fdopen(r) as f:
        data = json.loads(f.read() or "{}")
    os.waitpid(pid, 0)
    if "error" in data or not data:
        raise SystemExit(f"oracle: cannot read the release's parser: {data.get('error')}")
    return data


def run_all(all_cases, src, model_dir, jobs, progress=True):
    profiles = {}
    for case in all_cases:
        profiles.setdefault(case_space.hardware_key(case), []).append(case)
    answers = {}
    started = time.time()
    for n, (key, group) in enumerate(profiles.items(), 1):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _profile_worker(group, src, model_dir, jobs, w)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            for line in f:
                a = json.loads(line)
                answers[a["id"]] = a
        os.waitpid(pid, 0)
        if progress:
            print(f"oracle: profile {n}/{len(profiles)} {key}: {len(group)} cases, "
                  f"{len(answers)} done, {time.time() - started:.0f} s", file=sys.stderr)
    return answers


# Stub values the harness pins on purpose (the answer each gets is the image's): not reported.
PINNED_PROBES = ("transformers.AutoTokenizer.from_pretrained()", "huggingface_hub.get_safetensors_metadata()", "huggingface_hub.constants.HF_HUB_OFFLINE", "ray.is_initialized()", "torch.distributed.is_initialized()",
                 "torch.nn.Module", "find_spec(mori)", "find_spec(nixl_ep)", "find_spec(torchao)",
                 "find_spec(vllm_xpu_kernels)", "find_spec(humming)",
                 "find_spec(pplx_kernels)", "find_spec(pytorch-triton-xpu)", "find_spec(deep_ep)", "find_spec(deep_gemm)")


def _record(case, answer):
    record = {k: case[k] for k in ("id", "gpu", "platform", "model", "flags") if k in case}
    if case.get("env"):
        record["env"] = case["env"]
    record["ok"] = answer.get("ok")
    if answer.get("ok"):
        record["resolved"] = {"prefill": answer["backend"], "decode": answer["backend"],
                              "page_size": answer["block_size"], "kv_cache_dtype": answer["kv_cache_dtype"]}
        record["inputs"] = {k: v for k, v in answer.get("inputs", {}).items()
                            if k in ("head_size", "num_heads", "use_mla", "use_sparse", "has_sink", "use_mm_prefix",
                                     "has_sliding_window")}
    for key in ("error", "harness_limit"):
        if answer.get(key):
            record[key] = answer[key]
    probes = [p for p in answer.get("probes", ()) if not p.startswith(PINNED_PROBES)]
    if probes:
        record["probes"] = probes
    return record


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True, help="vLLM source tree (holds vllm/)")
    ap.add_argument("--release", required=True, help="an entry of tests/oracle/vllm/index.json")
    ap.add_argument("--index", default=os.path.join(REPO, "tests", "oracle", "vllm", "index.json"))
    ap.add_argument("--out", help="answers (JSON Lines), header first (default: tests/oracle/vllm/<release>.jsonl)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--sample", type=int, help="every Nth case only (a smoke run)")
    ap.add_argument("--gpu", action="append")
    ap.add_argument("--model", action="append")
    opts = ap.parse_args()
    src = os.path.abspath(opts.src)
    index = json.load(open(opts.index))
    entry = next((e for e in index["answer_sets"] if e["release"] == opts.release), None)
    if entry is None:
        raise SystemExit(f"oracle: --release {opts.release}: not in {opts.index}; add it there first")
    commit_file = os.path.join(src, "COMMIT")
    if os.path.exists(commit_file) and open(commit_file).read().strip() != entry["commit"]:
        raise SystemExit(f"oracle: {src} is {open(commit_file).read().strip()}, the index says {entry['commit']}")
    VERSIONS.update(case_space.engine_versions(src))
    fa = os.path.join(src, "vllm", "vllm_flash_attn")
    if os.path.exists(os.path.join(fa, "flash_attn_interface.py")) and not os.path.exists(os.path.join(fa, "cute")):
        # The CUDA wheel ships FA4's CuTe sources here (vllm_flash_attn/flash_attn_interface.py tests
        # for cute/interface.py to say FA4 is available); the git tree does not: stand in for them.
        # Other platforms do not see the stand-in (prepare: _hide_cute_interface).
        os.makedirs(os.path.join(fa, "cute"))
        open(os.path.join(fa, "cute", "interface.py"), "w").close()
    case_space.write_models(os.path.join(REPO, "tests", "oracle", "vllm", "models"))
    dirs = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"attnsel-vllm-models-{os.getpid()}")
    for name in case_space.models():  # vLLM reads a folder holding config.json
        os.makedirs(os.path.join(dirs, name), exist_ok=True)
        with open(os.path.join(dirs, name, "config.json"), "w") as f:
            json.dump(case_space.models()[name], f)
    choices = read_choices(src, dirs)
    all_cases = case_space.generate(choices)
    if os.environ.get("VLLM_ORACLE_COUNT"):
        raise SystemExit(f"oracle: {len(all_cases)} cases")
    if opts.gpu:
        all_cases = [c for c in all_cases if c["gpu"] in opts.gpu]
    if opts.model:
        all_cases = [c for c in all_cases if c["model"] in opts.model]
    if opts.sample:
        all_cases = all_cases[:: opts.sample]
    if opts.limit:
        all_cases = all_cases[: opts.limit]
    started = time.time()
    answers = run_all(all_cases, src, dirs, max(1, opts.jobs))
    out = opts.out or os.path.join(REPO, "tests", "oracle", "vllm", f"{opts.release}.jsonl")
    header = {"kind": "attnsel-oracle-answers", "engine": "vllm", "release": opts.release,
              "attnsel_release": entry["attnsel_release"], "commit": entry["commit"], "date": entry["date"],
              "harness_version": HARNESS_VERSION, "cases": len(all_cases), "seconds": round(time.time() - started, 1),
              "choices": {k: v for k, v in choices.items() if k != "flags"}, "versions": VERSIONS,
              "cases_fields": "gpu (attnsel's --gpu), platform, model (tests/oracle/models/<model>.json), flags, env; "
                              "resolved.prefill = resolved.decode = the backend, page_size = the block size"}
    with open(out, "w") as f:
        f.write(json.dumps(header, sort_keys=True) + "\n")
        for case in all_cases:
            answer = answers.get(case["id"], {"ok": None, "harness_limit": "no answer"})
            f.write(json.dumps(_record(case, answer), sort_keys=True) + "\n")
    counts = {"accepted": 0, "refused": 0, "harness_limit": 0}
    for a in answers.values():
        counts["accepted" if a.get("ok") else "refused" if a.get("ok") is False else "harness_limit"] += 1
    print(f"oracle: {len(all_cases)} cases in {time.time() - started:.0f} s: {counts}", file=sys.stderr)


if __name__ == "__main__":
    if os.environ.get("VLLM_ORACLE_DEBUG"):
        debug_main()
    else:
        main()
