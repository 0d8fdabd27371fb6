#!/usr/bin/python3
"""Runs SGLang's own resolution code over a set of cases and writes its answers.

    tools/oracle/sglang_oracle.py --src TREE --release 0.5.3 [--jobs 2]   # -> tests/oracle/sglang/0.5.3.jsonl

TREE is an SGLang source tree (the folder holding python/sglang); nothing of it is copied here.
--release names an entry of data/engines/sglang/oracle.json (its commit, PR and date go into the
answers' header). For each case (a GPU, a CUDA version, a model's config.json, installed kernel
packages, the environment and the launch flags) the engine's code runs as it would at launch:

  0. the model registry: an architecture no `EntryClass` serves is refused, unless the release
     has the Transformers fallback;
  1. `ServerArgs.add_cli_args` builds the parser and parses the flags (argparse errors included);
  2. `ServerArgs.from_cli_args` constructs ServerArgs, whose `__post_init__` runs the whole
     resolution: defaults, model-specific adjustments, backend compatibility, page size,
     speculative decoding ... nothing skipped or patched;
  3. where the release has it, `ModelRunner.model_specific_adjustment` (the automatic backend of
     v0.5.3-era releases), reached by running ModelRunner.__init__'s own statements up to that call;
  4. the attention registry's factory for each chosen prefill/decode backend and
     `attn_backend_wrapper` (hybrid linear attention), up to the first statement that would need
     a real GPU.

The answer is SGLang's resolved fields, or its exception (type, message, file:line). The hardware
is pinned per group of cases and the engine is imported once per group; each case runs in a
forked child. See docs/oracle.md.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import signal
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases as case_space  # noqa: E402
import fakeenv  # noqa: E402

HARNESS_VERSION = 4
CASE_TIMEOUT_S = 30
ARCHITECTURES: set = set()  # filled per profile from the release's model registry
PRELOAD = ("sglang.srt.model_executor.model_runner", "sglang.srt.layers.attention.attention_registry",
           "sglang.srt.configs.model_config")


# ---------------------------------------------------------------------------------------------
# One case, in its own process, the engine already imported.
# ---------------------------------------------------------------------------------------------
def _where(tb, src_root):
    """The innermost frame inside the engine's tree: 'sglang/srt/server_args.py:123 func'."""
    found = None
    for frame in traceback.extract_tb(tb):
        if frame.filename.startswith(src_root):
            found = frame
    if found is None:
        return None
    rel = os.path.relpath(found.filename, src_root)
    return f"{rel}:{found.lineno} {found.name}"


def _error(exc, src_root, stage):
    message = str(exc).strip() or type(exc).__name__
    return {"stage": stage, "type": type(exc).__name__, "message": message[:400],
            "where": _where(exc.__traceback__, src_root)}


RESOLVED_FIELDS = (
    "attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
    "kv_cache_dtype", "speculative_algorithm", "speculative_eagle_topk", "speculative_num_steps",
    "speculative_num_draft_tokens", "linear_attn_backend", "linear_attn_prefill_backend",
    "linear_attn_decode_backend", "mamba_backend", "mm_attention_backend", "nsa_prefill_backend",
    "nsa_decode_backend", "dsa_prefill_backend", "dsa_decode_backend", "disable_radix_cache",
    "disable_chunked_prefix_cache", "enable_deterministic_inference", "disable_cuda_graph",
)


def _resolved(server_args):
    out = {}
    for name in RESOLVED_FIELDS:
        if hasattr(server_args, name):
            value = getattr(server_args, name)
            if value is None or isinstance(value, (str, int, float, bool)):
                out[name] = value
    out["prefill"] = out.get("prefill_attention_backend") or out.get("attention_backend")
    out["decode"] = out.get("decode_attention_backend") or out.get("attention_backend")
    return out


def _call_with_names(func, names: dict):
    """Calls func with the arguments it declares, taken by name from `names`."""
    kwargs = {}
    for p in inspect.signature(func).parameters.values():
        if p.name in names:
            kwargs[p.name] = names[p.name]
        elif p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            kwargs[p.name] = fakeenv.Stub(p.name)  # what the caller builds on a real machine (ParallelState ...)
    return func(**kwargs)


# What ModelRunner.init_memory_pool() makes before the attention backends are built: objects that
# always exist then, with sizes from free memory. Their contents are stubs that record their use.
MEMORY_POOLS = ("req_to_token_pool", "token_to_kv_pool", "token_to_kv_pool_allocator")


def _unfinished_runner(cls):
    """ModelRunner as its __init__ leaves it up to model_specific_adjustment: what later steps
    would set (memory pools, distributed groups) reads as a stub, and every use of one that
    decides a branch is recorded, so a backend factory's verdict that rests on one is not taken."""
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr not in MEMORY_POOLS:  # a pool always exists by then: only what it holds is unknown
            fakeenv._probe(f"ModelRunner.{attr}", "read")  # a verdict that reads it is not the engine's
        return fakeenv.Stub(f"ModelRunner.{attr}")

    return type("UnfinishedModelRunner", (cls,), {"__getattr__": __getattr__})


_INIT_PREFIX = []


def _runner_init_prefix():
    """ModelRunner and the leading statements of its __init__, compiled once per hardware profile:
    up to and including the model_specific_adjustment() call where the release has one (the
    automatic backend of v0.5.3-era releases), else the attribute assignments made before any work."""
    if _INIT_PREFIX:
        return _INIT_PREFIX[0]
    try:
        from sglang.srt.model_executor import model_runner as mr
    except Exception as exc:  # the module itself did not import on the fake machine
        raise HarnessLimit(f"model_runner import: {type(exc).__name__}: {exc}") from exc
    cls = mr.ModelRunner
    source = inspect.getsource(cls.__init__)
    tree = ast.parse(inspect.cleandoc("\n" + source) if source.startswith((" ", "\t")) else source)
    func = tree.body[0]
    calls_adjustment = "model_specific_adjustment()" in source
    body = []
    leading = True
    for stmt in func.body:
        text = ast.unparse(stmt)
        if calls_adjustment:
            body.append(stmt)  # everything up to the adjustment, as the runner does it
            if "model_specific_adjustment" in text:
                break
        elif leading and (isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or (
                isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))):
            body.append(stmt)  # no adjustment in this release: the attributes set before any work
        else:
            leading = False
            # Past the first call that does work, each later `self.x = ...` of __init__ itself still
            # runs (page size, MLA, hybrid SWA ... are plain reads of the config); one that fails on
            # the fake machine leaves its attribute a recorded stub.
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and all(
                    isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                    for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])):
                body.append(ast.Try(body=[stmt], handlers=[ast.ExceptHandler(
                    type=ast.Name(id="Exception", ctx=ast.Load()), name=None, body=[ast.Pass()])],
                    orelse=[], finalbody=[]))
    func.body = body
    func.decorator_list = []
    module = ast.Module(body=[func], type_ignores=[])
    code = compile(ast.fix_missing_locations(module), inspect.getsourcefile(cls), "exec")
    namespace = {}
    exec(code, mr.__dict__, namespace)
    _INIT_PREFIX.append((cls, namespace["__init__"]))
    return _INIT_PREFIX[0]


def _model_runner_prefix(server_args):
    """A ModelRunner as far as its __init__ goes before any GPU work (_runner_init_prefix)."""
    cls, init_prefix = _runner_init_prefix()
    runner = object.__new__(_unfinished_runner(cls))
    model_config = _model_config(server_args)
    names = {"self": runner, "model_config": model_config, "server_args": server_args,
             "mem_fraction_static": server_args.mem_fraction_static or 0.8, "gpu_id": 0, "tp_rank": 0,
             "tp_size": server_args.tp_size, "moe_ep_rank": 0, "moe_ep_size": getattr(server_args, "ep_size", 1),
             "pp_rank": 0, "pp_size": getattr(server_args, "pp_size", 1), "nccl_port": 0, "dp_rank": None,
             "is_draft_worker": False}
    ps = _parallel_state_object(server_args)
    if ps is not None:
        names["ps"] = ps
    import sglang.srt.server_args as sa_module
    publish = getattr(sa_module, "set_global_server_args_for_scheduler", None)
    if publish is not None:  # the scheduler process publishes its ServerArgs before the runner
        publish(server_args)
    _call_with_names(init_prefix, names)
    _initialize_parallel_state(server_args)
    _finish_runner(runner, server_args)
    return runner


class FakeGroup:
    """A process group of the case's one-node layout, as initialize_model_parallel leaves it: its
    size and this rank (0) are the case's; anything else reads as a recorded stub."""

    def __init__(self, name, world_size):
        self.unique_name, self.world_size = name, world_size
        self.rank = self.rank_in_group = self.local_rank = self.first_rank = 0
        self.ranks = list(range(world_size))
        self.last_rank = world_size - 1
        self.is_first_rank, self.is_last_rank = True, world_size == 1

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        fakeenv._probe(f"{self.unique_name}.{attr}", "read")
        return fakeenv.Stub(f"{self.unique_name}.{attr}")


def _layout(server_args):
    """The case's parallel layout, as ServerArgs states it: (tp, attention tp, attention dp, pp, ep)."""
    tp = getattr(server_args, "tp_size", 1) or 1
    dp = (getattr(server_args, "dp_size", 1) or 1) if getattr(server_args, "enable_dp_attention", False) else 1
    return tp, max(tp // dp, 1), dp, getattr(server_args, "pp_size", 1) or 1, getattr(server_args, "ep_size", 1) or 1


def _initialize_parallel_state(server_args):
    """The process groups and data-parallel attention globals that initialize_model_parallel and
    initialize_dp_attention set before any backend is built (one node, this process rank 0)."""
    import importlib
    tp, attn_tp, dp, pp, ep = _layout(server_args)
    sizes = {"_TP": tp, "_ATTN_TP": attn_tp, "_ATTN_TP_GROUP": attn_tp, "_PP": pp, "_MOE_EP": ep,
             "_MOE_TP": max(tp // ep, 1), "_WORLD": tp * pp}
    for module in ("sglang.srt.distributed.parallel_state", "sglang.srt.layers.dp_attention"):
        try:
            mod = importlib.import_module(module)
        except Exception:  # noqa: BLE001  a release without it
            continue
        for name in [n for n in vars(mod) if n.startswith("_") and n[1:2].isupper() and n.isupper()]:
            if getattr(mod, name) is not None or "PDMUX" in name:
                continue
            annotation = str(getattr(mod, "__annotations__", {}).get(name, ""))
            if "GroupCoordinator" in annotation or name.endswith(("_GROUP", "_TP", "_CP", "_PP", "_EP", "_DP")) and name != "_DP_RANK":
                if name.endswith(("_RANK", "_SIZE")):
                    continue
                setattr(mod, name, FakeGroup(name, sizes.get(name, 1)))
            elif name.endswith("_RANK"):
                setattr(mod, name, 0)
            elif name.endswith("_SIZE"):
                setattr(mod, name, {"_ATTN_TP_SIZE": attn_tp, "_ATTN_DP_SIZE": dp, "_LOCAL_ATTN_DP_SIZE": dp,
                                    "_DP_SIZE": dp}.get(name, 1))


def _parallel_state_object(server_args):
    """The ParallelState a scheduler passes to ModelRunner (releases that have the class)."""
    try:
        from sglang.srt.distributed.parallel_state_wrapper import ParallelState
    except Exception:  # noqa: BLE001
        return None
    tp, attn_tp, dp, pp, ep = _layout(server_args)
    overrides = dict(tp_size=tp, attn_tp_size=attn_tp, attn_dp_size=dp, dp_size=getattr(server_args, "dp_size", 1) or 1,
                     pp_size=pp, moe_ep_size=ep)
    fields = set(inspect.signature(ParallelState).parameters)
    overrides = {k: v for k, v in overrides.items() if k in fields}
    if hasattr(ParallelState, "trivial"):
        return ParallelState.trivial(**overrides)
    # Releases whose class has no trivial() (v0.5.14, v0.5.15): what trivial() gives later, one rank
    # of every group (ranks and ids 0, sizes 1), with the layout's sizes.
    return ParallelState(**{f: 1 if f.endswith("_size") else 0 for f in fields} | overrides)


def _finish_runner(runner, server_args):
    """What ModelRunner.initialize() sets before it builds the attention backends and that their
    constructors read, each computed by the engine's own function where the release has one: the
    sliding window (from the model config; a model class's own override is not seen) and the
    per-phase backend names. The memory pools stay stubs: their sizes come from free memory."""
    import importlib
    for pool in MEMORY_POOLS:
        if pool in runner.__dict__ and runner.__dict__[pool] is None:
            del runner.__dict__[pool]  # a target runner is given none: init_memory_pool makes them
    _known_pool_shapes(runner)
    if "sliding_window_size" not in runner.__dict__:
        try:
            utils = importlib.import_module("sglang.srt.model_executor.model_runner_components.load_model_utils")
            runner.sliding_window_size = utils.resolve_sliding_window_size(object(), runner.model_config)
        except Exception:  # noqa: BLE001  an older release: computed inside load_model
            pass
    if "prefill_attention_backend_str" not in runner.__dict__:
        try:
            setup = importlib.import_module("sglang.srt.model_executor.model_runner_components.attention_backend_setup")
            resolved = setup.resolve_attention_backend_strs(model_runner=runner)
            runner.prefill_attention_backend_str, runner.decode_attention_backend_str = resolved.prefill, resolved.decode
        except Exception:  # noqa: BLE001  older releases: the ServerArgs fields, as their runner reads them
            res = _resolved(server_args)
            runner.prefill_attention_backend_str, runner.decode_attention_backend_str = res["prefill"], res["decode"]


def _known_pool_shapes(runner):
    """The one part of the memory pools that is not sized by free memory: the mamba pool's conv
    state shape, from the model config's own cache parameters (the engine's MambaPool allocates
    conv[i] as (layers, slots + 1) + shape.conv[i], memory_pool.py@92b1d382). Linear-attention
    backends assert on it in their constructors. Releases without these helpers keep the stub."""
    import importlib
    try:
        arch = importlib.import_module("sglang.srt.configs.hybrid_arch")
        config = arch.mambaish_config(runner.model_config)
        shapes = config.mamba2_cache_params.shape.conv if config is not None else None
    except Exception:  # noqa: BLE001  an older release, or a model without a mamba cache
        return
    if not shapes or isinstance(shapes, fakeenv.Stub):
        return
    name = "ModelRunner.req_to_token_pool"
    runner.__dict__["req_to_token_pool"] = fakeenv.PartialStub(
        name, {f"{name}.mamba_pool.mamba_cache.conv[].shape": (1, 2) + tuple(shapes[0])})


def served_architectures(src_root):
    """The architectures the release's model registry serves: every `EntryClass` of
    sglang/srt/models/*.py (the registry imports each module and collects EntryClass; read here
    from the source, so that a module the fake machine cannot import is not lost)."""
    archs = set()
    models = os.path.join(src_root, "sglang", "srt", "models")
    for root, _, files in os.walk(models):
        for name in files:
            if not name.endswith(".py"):
                continue
            try:
                tree = ast.parse(open(os.path.join(root, name), encoding="utf-8").read())
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EntryClass" for t in node.targets):
                    values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                    archs.update(v.id for v in values if isinstance(v, ast.Name))
    return archs


class Refusal(Exception):
    """An exception of the engine's that a later stage judged to be its refusal (it carries it)."""

    def __init__(self, original):
        super().__init__(str(original))
        self.original = original


# Messages of state a real launch sets up before building backends (process groups, the
# process-wide ServerArgs): raised here only because the fake machine skipped that setup.
UNSET_STATE = ("not initialized", "not set yet", "is not initialized", "has not been initialized")


class RegistryRefusal(ValueError):
    """ModelRegistry._raise_for_unsupported's refusal, decided from the registry's EntryClass list."""
    where = "sglang/srt/models/registry.py _raise_for_unsupported (EntryClass of sglang/srt/models/*.py)"


class HarnessLimit(Exception):
    """The fake machine could not carry the engine this far: not an answer of the engine's."""


def _model_config(server_args):
    """ModelConfig as the scheduler builds it: from_server_args, or (older releases) its
    constructor with each parameter taken from the ServerArgs field of the same name."""
    from sglang.srt.configs.model_config import ModelConfig
    if hasattr(ModelConfig, "from_server_args"):
        return ModelConfig.from_server_args(server_args)
    names = {f: getattr(server_args, f) for f in dir(server_args) if not f.startswith("_")}
    names.update(model_path=server_args.model_path, model_override_args=server_args.json_model_override_args,
                 is_embedding=getattr(server_args, "is_embedding", False))
    return _call_with_names(ModelConfig, names)


def _is_refusal(exc, reg, probes_before):
    """What SGLang would stop on before any kernel runs: a check of the registry's own
    (raised in attention_registry.py), a check in a backend's constructor that rests on no stub
    value, or a kernel package the case's machine lacks."""
    if isinstance(exc, ImportError):
        top = (getattr(exc, "name", None) or "").split(".")[0]
        return top in fakeenv.KERNEL_PACKAGES and top not in fakeenv.CASE.get("packages", ())
    if any(m in str(exc) for m in UNSET_STATE) or "stub" in str(exc).lower():
        return False
    if not isinstance(exc, (ValueError, AssertionError, NotImplementedError, KeyError)) and not (
            isinstance(exc, AttributeError) and "Config' object has no attribute" in str(exc)):
        return False  # e.g. a pool or group that ModelRunner.initialize() would have made (None here)
    # The registry's own checks and the constructors' alike (an assertion, or a crash on the model's
    # real config such as an MLA backend reading kv_lora_rank of a standard-attention model): only a
    # verdict that rests on no stub value (no new probe since the factory was called) is the engine's.
    return fakeenv.PROBE_COUNT[0] == probes_before


def _registry_checks(server_args, runner, src_root):
    """The attention registry's factory for each chosen backend, then attn_backend_wrapper.
    Returns {phase: "constructed" | "not judged: why"}; raises the engine's refusals."""
    import importlib.util
    if importlib.util.find_spec("sglang.srt.layers.attention.attention_registry") is None:
        return {}  # the release predates the registry: its backends are built in ModelRunner
    try:
        from sglang.srt.layers.attention import attention_registry as reg
    except Exception as exc:
        raise HarnessLimit(f"attention_registry import: {type(exc).__name__}: {exc}") from exc
    backends = getattr(reg, "ATTENTION_BACKENDS", None)
    status = {}
    if not backends:
        return status
    res = _resolved(server_args)
    for phase in ("prefill", "decode"):
        name = res.get(phase)
        if name not in backends:
            status[phase] = f"not judged: {name!r} is not in ATTENTION_BACKENDS"
            continue
        probes_before = fakeenv.PROBE_COUNT[0]
        try:
            backend = backends[name](runner)
            wrapper = getattr(reg, "attn_backend_wrapper", None)
            if wrapper is not None:
                # The wrapper's checks are judged on what they read themselves: a stub the
                # constructor read before does not make the wrapper's own assertion a guess.
                probes_before = fakeenv.PROBE_COUNT[0]
                wrapper(runner, backend)
            status[phase] = "constructed"
        except Exception as exc:  # noqa: BLE001
            if _is_refusal(exc, reg, probes_before):
                raise Refusal(exc) from exc
            stubs = fakeenv.PROBE_LOG[probes_before:probes_before + 1] if fakeenv.PROBE_COUNT[0] > probes_before else []
            where = _where(exc.__traceback__, src_root) or "?"
            status[phase] = (f"not judged: {type(exc).__name__}: {str(exc)[:160]} at {where}"
                             + (f" after reading {stubs[0]}" if stubs else ""))
    return status


_PARSER = []


def _parser():
    """The release's own parser (ServerArgs.add_cli_args), built once per hardware profile:
    parsing does not change it, and building it is most of a case's time."""
    if not _PARSER:
        from sglang.srt.server_args import ServerArgs
        parser = argparse.ArgumentParser(exit_on_error=False)
        ServerArgs.add_cli_args(parser)
        _PARSER.append(parser)
    return _PARSER[0]


def run_case(case, src_root, config_dir):
    """Resolves one case; returns the answer dict. Runs in a forked child."""
    fakeenv.pin(case)
    from sglang.srt.server_args import ServerArgs

    model_dir = os.path.join(config_dir, case["model"])
    argv = ["--model-path", model_dir] + list(case.get("flags", []))
    answer = {"id": case["id"]}
    stage = "parse"
    try:
        parser = _parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:
            raise ValueError(f"argparse refused the flags (exit {exc.code})") from None
        stage = "model_registry"
        config = json.load(open(os.path.join(model_dir, "config.json")))
        archs = config.get("architectures") or []
        if ARCHITECTURES and not any(a in ARCHITECTURES for a in archs):
            if "TransformersForCausalLM" not in ARCHITECTURES:
                # ModelRegistry._raise_for_unsupported, at model load (no Transformers fallback yet)
                raise RegistryRefusal(f"Model architectures {archs} are not supported for now.")
            answer["model_impl"] = "transformers"  # get_model_architecture's fallback
        stage = "server_args"
        server_args = ServerArgs.from_cli_args(args)
        stage = "model_runner"
        runner = _model_runner_prefix(server_args)
        stage = "registry"
        if runner is not None:
            answer["registry"] = _registry_checks(server_args, runner, src_root)
        answer["ok"] = True
        answer["resolved"] = _resolved(server_args)
    except HarnessLimit as exc:
        answer["ok"] = None
        answer["harness_limit"] = str(exc)[:300]
    except Refusal as carried:
        answer["ok"] = False
        answer["error"] = _error(carried.original, src_root, stage)
    except argparse.ArgumentError as exc:
        answer["ok"] = False
        answer["error"] = _error(exc, src_root, "parse")
    except BaseException as exc:  # noqa: BLE001  the engine's refusal, whatever its type
        answer["ok"] = False
        answer["error"] = _error(exc, src_root, stage)
        if isinstance(exc, RegistryRefusal):
            answer["error"]["where"] = exc.where
        # Raised outside the engine's tree, while importing a module, or by a stub: the fake
        # machine's limit, not an answer.
        where = answer["error"]["where"]
        if where is None or where.endswith(" <module>") or any(m in str(exc) for m in UNSET_STATE) or (isinstance(exc, (TypeError, AttributeError)) and "stub" in str(exc)):
            answer["ok"] = None
            error = answer.pop("error")
            answer["harness_limit"] = f"{error['stage']}: {error['type']}: {error['message']}"[:300]
    answer["probes"] = sorted(fakeenv.PROBES)
    return answer


# ---------------------------------------------------------------------------------------------
# Process management: one importing process per hardware profile, one fork per case.
# ---------------------------------------------------------------------------------------------
# The vendor tools the engine shells out to for device memory, answering with the case's value.
FAKE_TOOLS = {
    "nvidia-smi": 'echo "${ATTNSEL_ORACLE_MEMORY_MIB:-81559}"',
    "rocminfo": 'printf "  Name:                    %s\\n  Pool 1\\n    Size:                    %s(0x0) KB\\n" '
                '"${ATTNSEL_ORACLE_GCN_ARCH:-gfx942}" "$(( ${ATTNSEL_ORACLE_MEMORY_MIB:-196592} * 1024 ))"',
}


def _fake_tools(bin_dir):
    for name, body in FAKE_TOOLS.items():
        path = os.path.join(bin_dir, name)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\n# attnsel oracle: the case's device, as {name} reports it\n{body}\n")
        os.chmod(path, 0o755)


def _run_child(case, src_root, config_dir, write_fd):
    import gc
    gc.disable()  # a short-lived child: nothing to collect that exit does not free
    signal.alarm(CASE_TIMEOUT_S)
    os.environ["ATTNSEL_ORACLE_MEMORY_MIB"] = str(case.get("memory_mib", 81559))
    os.environ["ATTNSEL_ORACLE_GCN_ARCH"] = case.get("gcn_arch", "gfx942").split(":")[0]
    profile_dir = os.environ.get("ATTNSEL_ORACLE_PROFILE")  # where each case's cProfile goes
    profiler = None
    if profile_dir:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
    try:
        answer = run_case(case, src_root, config_dir)
    except BaseException as exc:  # noqa: BLE001
        answer = {"id": case["id"], "ok": None, "harness_limit": f"{type(exc).__name__}: {exc}"[:300]}
    if profiler:
        profiler.disable()
        profiler.dump_stats(os.path.join(profile_dir, f"{case['id']}.prof"))
    data = json.dumps(answer, sort_keys=True).encode()
    with os.fdopen(write_fd, "wb") as f:
        f.write(data)
    os._exit(0)


def _quiet_child():
    """fork() with a pipe back to the parent: (pid, read end, write end). In the child (pid 0) the
    read end is closed and stdout/stderr go to /dev/null (the engine logs freely)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    return pid, r, w


def _modules_a_case_imports(case, src_root, config_dir):
    """The modules a case imports on its way (lazy imports inside the engine's functions), learnt
    by running one case in a throwaway child, so that the parent imports them once for all."""
    pid, r, w = _quiet_child()
    if pid == 0:
        signal.alarm(CASE_TIMEOUT_S)
        before = set(sys.modules)
        try:
            run_case(case, src_root, config_dir)
        except BaseException:  # noqa: BLE001
            pass
        with os.fdopen(w, "w") as f:
            f.write("\n".join(sorted(set(sys.modules) - before)))
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        names = [n for n in f.read().splitlines() if n]
    os.waitpid(pid, 0)
    return names


def _attention_modules(src_root):
    """The attention backends' modules (sglang/srt/layers/attention/*.py), which the registry's
    factories import: imported once per hardware profile instead of once per case."""
    folder = os.path.join(src_root, "sglang", "srt", "layers", "attention")
    if not os.path.isdir(folder):
        return ()
    return tuple(f"sglang.srt.layers.attention.{n[:-3]}" for n in sorted(os.listdir(folder))
                 if n.endswith(".py") and not n.startswith("_"))


def _memoise_typing_compile():
    """typing.ForwardRef compiles its annotation string each time one is built; the engine builds
    thousands per case (get_type_hints over ServerArgs). A harness speed-up only: the same code
    objects, compiled once."""
    import builtins
    import functools
    import typing
    typing.compile = functools.lru_cache(maxsize=None)(builtins.compile)


def _profile_worker(profile_cases, src, config_dir, jobs, out_fd):
    """Imports the engine on this hardware, then forks one child per case (`jobs` at a time)."""
    sys.dont_write_bytecode = False  # the engine's modules compile once, not once per case
    _memoise_typing_compile()
    import logging
    logging.disable(logging.CRITICAL)
    import warnings
    warnings.filterwarnings("ignore")
    fakeenv.install()
    fakeenv.pin(profile_cases[0])
    fakeenv.import_torch_now()
    src_root = os.path.join(src, "python")
    sys.path.insert(0, src_root)
    ARCHITECTURES.update(served_architectures(src_root))
    try:
        import sglang.srt.server_args  # noqa: F401  (imported once per profile)
        _parser()
        try:
            _runner_init_prefix()
        except HarnessLimit:
            pass  # each case reports it
        for later in PRELOAD + _attention_modules(src_root):  # so that no case pays for these imports
            try:
                __import__(later)
            except BaseException:  # noqa: BLE001  the stage that needs it reports the failure
                pass
    except BaseException as exc:  # noqa: BLE001
        msg = f"import sglang.srt.server_args: {type(exc).__name__}: {exc}"[:300]
        lost = [{"id": c["id"], "ok": None, "harness_limit": msg} for c in profile_cases]
        os.write(out_fd, ("\n".join(json.dumps(r, sort_keys=True) for r in lost) + "\n").encode())
        os._exit(0)
    for name in _modules_a_case_imports(profile_cases[0], src_root, config_dir):
        try:
            __import__(name)
        except BaseException:  # noqa: BLE001
            pass
    # Children share the imported engine copy-on-write: keep the collector off it (gc.freeze) so
    # that no child touches, and so copies, the whole heap.
    import gc
    gc.collect()
    gc.freeze()
    running = {}
    pending = list(profile_cases)
    while pending or running:
        while pending and len(running) < jobs:
            case = pending.pop(0)
            pid, r, w = _quiet_child()
            if pid == 0:
                _run_child(case, src_root, config_dir, w)
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


def run_all(all_cases, src, jobs, progress=True):
    config_dir = tempfile.mkdtemp(prefix="attnsel-oracle-")
    bin_dir = os.path.join(config_dir, "bin")
    os.makedirs(bin_dir)
    _fake_tools(bin_dir)
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    for name, config in case_space.MODELS.items():
        os.makedirs(os.path.join(config_dir, name))
        with open(os.path.join(config_dir, name, "config.json"), "w") as f:
            json.dump(config, f)
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
            _profile_worker(group, src, config_dir, jobs, w)
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


def _record(case, answer):
    """One line of the answer set: the case as attnsel needs it, then the engine's answer."""
    record = {k: case[k] for k in ("id", "gpu", "cuda", "platform", "model", "flags") if k in case}
    if case.get("packages") != fakeenv.IMAGE_PACKAGES.get(case.get("platform", "cuda")):
        record["packages"] = case.get("packages")
    if case.get("env"):
        record["env"] = case["env"]
    record["ok"] = answer.get("ok")
    if answer.get("resolved"):
        record["resolved"] = {k: v for k, v in answer["resolved"].items() if v is not None}
    for key in ("error", "harness_limit", "model_impl"):
        if answer.get(key):
            record[key] = answer[key]
    if any(v != "constructed" for v in answer.get("registry", {}).values()):
        record["registry"] = answer["registry"]
    # The stub values that fed the engine's own branches; the runner attributes a backend factory
    # read are summed up by its "not judged" status instead.
    probes = [p for p in answer.get("probes", ()) if not p.startswith("ModelRunner.")]
    if probes:
        record["probes"] = probes
    return record


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True, help="SGLang source tree (holds python/sglang)")
    ap.add_argument("--release", required=True,
                    help="the release this tree is: an entry of the index (data/engines/sglang/oracle.json)")
    ap.add_argument("--index", default=os.path.join(HERE, "..", "..", "data", "engines", "sglang", "oracle.json"),
                    help="the answer-set index: each release's upstream commit, PR and date")
    ap.add_argument("--out", help="answers (JSON Lines), one per case, header first (default: the index's path)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--limit", type=int, help="answer only the first N cases (a smoke run)")
    ap.add_argument("--gpu", action="append", help="only the cases on this GPU (repeatable; a smoke run)")
    opts = ap.parse_args()
    src = os.path.abspath(opts.src)
    index = json.load(open(opts.index))
    entry = next((e for e in index["answer_sets"] if e["release"] == opts.release), None)
    if entry is None:
        raise SystemExit(f"oracle: --release {opts.release}: not in {opts.index} "
                         f"(valid: {', '.join(e['release'] for e in index['answer_sets'])}); add it there first")
    commit_file = os.path.join(src, "COMMIT")  # written by whoever exported the tree (docs/oracle.md)
    if os.path.exists(commit_file) and open(commit_file).read().strip() != entry["commit"]:
        raise SystemExit(f"oracle: {src} is {open(commit_file).read().strip()}, but the index says "
                         f"{opts.release} is {entry['commit']}")
    out = opts.out or os.path.join(HERE, "..", "..", entry["answers"])
    choices = case_space.grammar_choices(src)
    all_cases = case_space.generate(choices)
    if opts.gpu:
        all_cases = [c for c in all_cases if c["gpu"] in opts.gpu]
    if opts.limit:
        all_cases = all_cases[: opts.limit]
    started = time.time()
    answers = run_all(all_cases, src, max(1, opts.jobs))
    header = {"kind": "attnsel-oracle-answers", "engine": "sglang", "release": opts.release,
              "attnsel_release": entry["attnsel_release"], "commit": entry["commit"], "pr": entry["pr"],
              "date": entry["date"], "harness_version": HARNESS_VERSION,
              "cases": len(all_cases), "seconds": round(time.time() - started, 1),
              "choices": {k: v for k, v in choices.items() if k != "flags"},
              "image_packages": fakeenv.IMAGE_PACKAGES,
              "cases_fields": "gpu, cuda, platform, model (tests/oracle/models/<model>.json), flags; packages "
                              "and env only where they differ from the platform's image (tools/oracle/fakeenv.py)"}
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
    main()
