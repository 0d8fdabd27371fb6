"""The fake machine an engine's Python is imported into: torch, triton, transformers and the GPU.

Nothing here decides anything for the engine. It answers the questions the engine's code asks
(compute capability, CUDA version, device memory, which kernel packages are installed, what a
model's config.json says) with the values of one case, and stands in for every other library
with an inert stub. Each stub value that decides a branch (`if stub:`, `stub < x`) is recorded as
an *unpinned probe*, so a question the case did not answer cannot silently take the "no" path:
the answer set lists them and the oracle fails on probes it was not told to accept.

Debian's python3 and python3-packaging only: torch, triton, transformers and the rest are
never imported for real.
"""
from __future__ import annotations

import abc
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import sys
import types
import typing

# The case being answered: set by `pin()` before the engine is imported (hardware) and again in
# each forked child (packages, environment, model). Read by every fake below.
CASE: dict = {}
# Stub values that fed a branch, in first-seen order: {"name": ..., "used_as": ...}.
PROBES: dict = {}


# How many times a stub fed a branch, repeats included: a verdict is taken as the engine's only when
# this did not move while it was reached.
PROBE_COUNT = [0]

# The names of the stubs that fed a branch, in order (the first few hundred): which stub a verdict
# rested on, for the answer's "not judged" reason.
PROBE_LOG: list = []


def _probe(name: str, used_as: str):
    PROBE_COUNT[0] += 1
    if len(PROBE_LOG) < 512:
        PROBE_LOG.append(name)
    PROBES.setdefault(f"{name}:{used_as}", {"name": name, "used_as": used_as})


# ---------------------------------------------------------------------------------------------
# The inert stub: any attribute, call, subscript, base class or decorator.
# ---------------------------------------------------------------------------------------------
class Stub:
    __slots__ = ("_name",)

    def __init__(self, name="stub"):
        object.__setattr__(self, "_name", name)

    def __repr__(self):
        return f"<stub {self._name}>"

    __str__ = __repr__

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{self._name}.{attr}")

    def __setattr__(self, attr, value):
        pass

    def __call__(self, *args, **kwargs):
        # A decorator (with or without arguments) hands the function back unchanged.
        if len(args) == 1 and not kwargs and (callable(args[0]) or isinstance(args[0], type)):
            return args[0]
        return Stub(f"{self._name}()")

    def __getitem__(self, key):
        return Stub(f"{self._name}[]")

    def __mro_entries__(self, bases):
        return (_stub_class(self._name),)

    def __instancecheck__(self, obj):
        return False

    def __subclasscheck__(self, cls):
        return False

    def __bool__(self):
        _probe(self._name, "bool")
        return False

    def __iter__(self):
        _probe(self._name, "iter")
        return iter(())

    def __len__(self):
        _probe(self._name, "len")
        return 0

    def __contains__(self, item):
        _probe(self._name, "in")
        return False

    def __eq__(self, other):
        if self is not other and not isinstance(other, Stub):
            _probe(self._name, "eq")  # `stub == "fa3"` decides a branch as surely as bool(stub)
        return self is other

    def __hash__(self):
        return id(self)

    def __lt__(self, other):
        _probe(self._name, "compare")
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __int__(self):
        _probe(self._name, "int")
        return 0

    __index__ = __int__

    def __float__(self):
        _probe(self._name, "float")
        return 0.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def _arith(self, *args):
        return Stub(f"{self._name}(op)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _arith
    __rtruediv__ = __floordiv__ = __mod__ = __pow__ = __or__ = __ror__ = __and__ = _arith
    __neg__ = __invert__ = _arith


_STUB_CLASSES: dict = {}


class _StubMeta(abc.ABCMeta):
    """Class-level attributes of a stand-in base class are stubs too (BaseModel.model_rebuild())."""

    def __getattr__(cls, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Stub(f"{cls.__name__}.{attr}")


def _stub_class(name: str):
    """A real class standing in for a stubbed base class (torch.nn.Module, PretrainedConfig ...)."""
    cls = _STUB_CLASSES.get(name)
    if cls is None:
        def __init__(self, *args, **kwargs):
            pass

        def __getattr__(self, attr):
            if attr.startswith("__") and attr.endswith("__"):
                raise AttributeError(attr)
            return Stub(f"{name}().{attr}")

        def __init_subclass__(cls, **kwargs):
            pass

        cls = _StubMeta(name.rsplit(".", 1)[-1], (), {"__init__": __init__, "__getattr__": __getattr__,
                                                       "__init_subclass__": classmethod(__init_subclass__)})
        _STUB_CLASSES[name] = cls
    return cls


class PartialStub(Stub):
    """A stub of which some paths are known: `known` maps a full path (as a Stub names it, `[]`
    for an index) to its value; every other path reads as a plain Stub, recorded as ever."""
    __slots__ = ("_known",)

    def __init__(self, name, known):
        super().__init__(name)
        object.__setattr__(self, "_known", known)

    def _at(self, path):
        if path in self._known:
            return self._known[path]
        if any(k.startswith(path + ".") or k.startswith(path + "[]") for k in self._known):
            return PartialStub(path, self._known)
        return Stub(path)

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return self._at(f"{self._name}.{attr}")

    def __getitem__(self, key):
        return self._at(f"{self._name}[]")


class StubModule(types.ModuleType):
    """A module whose every missing attribute is a stub (submodules are imported as stubs too)."""

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        value = Stub(f"{self.__name__}.{attr}")
        setattr(self, attr, value)
        return value


class _StubLoader(importlib.abc.Loader):
    def __init__(self, build=None):
        self.build = build

    def create_module(self, spec):
        module = StubModule(spec.name)
        module.__path__ = []  # a package, so its submodules import as stubs too
        return module

    def exec_module(self, module):
        if self.build:
            self.build(module)


# ---------------------------------------------------------------------------------------------
# torch: the device questions answered from CASE.
# ---------------------------------------------------------------------------------------------
class _DType:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    @property
    def is_floating_point(self):
        return "float" in self.name or "bfloat" in self.name


class _Device:
    """torch.device: a real class (annotations such as `torch.device | None` use it)."""

    def __init__(self, spec="cuda", index=None):
        text = str(spec)
        self.type = text.split(":")[0]
        self.index = index if index is not None else (int(text.split(":")[1]) if ":" in text else None)

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    __repr__ = __str__


def _device_props():
    return types.SimpleNamespace(
        name=CASE.get("device_name", "NVIDIA H100 80GB HBM3"),
        total_memory=int(CASE.get("memory_mib", 81559)) * 1024 * 1024,
        major=int(CASE["capability"][0]), minor=int(CASE["capability"][1]),
        multi_processor_count=int(CASE.get("sm_count", 132)),
        gcnArchName=CASE.get("gcn_arch", ""),
        L2_cache_size=50 * 1024 * 1024,
        uuid="GPU-00000000-0000-0000-0000-000000000000",
    )


def _build_torch(torch):
    platform = CASE.get("platform", "cuda")
    torch.__version__ = CASE.get("torch_version", "2.9.1")
    torch.version = types.SimpleNamespace(
        cuda=CASE.get("cuda") if platform == "cuda" else None,
        hip=CASE.get("hip", "6.4.0") if platform == "rocm" else None,
        git_version="0" * 40, __version__=torch.__version__, xpu=None)
    for name, size in (("float32", 4), ("float", 4), ("float16", 2), ("half", 2), ("bfloat16", 2),
                       ("float64", 8), ("double", 8), ("int8", 1), ("uint8", 1), ("int16", 2),
                       ("int32", 4), ("int", 4), ("int64", 8), ("long", 8), ("bool", 1),
                       ("float8_e4m3fn", 1), ("float8_e5m2", 1), ("float8_e4m3fnuz", 1),
                       ("float8_e5m2fnuz", 1), ("float8_e8m0fnu", 1), ("float4_e2m1fn_x2", 1),
                       ("uint16", 2), ("uint32", 4), ("uint64", 8), ("complex64", 8)):
        setattr(torch, name, _DType(name, size))
    torch.dtype = _DType
    torch.Tensor = _stub_class("torch.Tensor")
    torch.Size = tuple
    torch.device = _Device
    torch.Stream = _stub_class("torch.Stream")
    torch.Generator = _stub_class("torch.Generator")
    accelerated = platform in ("cuda", "rocm")

    cuda = StubModule("torch.cuda")
    cuda.__path__ = []
    cuda.is_available = lambda: accelerated
    cuda.device_count = lambda: int(CASE.get("device_count", 8)) if accelerated else 0
    cuda.get_device_capability = lambda device=None: tuple(int(x) for x in CASE["capability"])
    cuda.get_device_name = lambda device=None: CASE.get("device_name", "NVIDIA H100 80GB HBM3")
    cuda.get_device_properties = lambda device=None: _device_props()
    cuda.current_device = lambda: 0
    cuda.is_initialized = lambda: False
    cuda.mem_get_info = lambda device=None: (int(CASE.get("memory_mib", 81559)) << 20,) * 2
    cuda.is_bf16_supported = lambda *a, **k: int(CASE["capability"][0]) >= 8
    torch.cuda = cuda
    sys.modules["torch.cuda"] = cuda

    backends = StubModule("torch.backends")
    backends.__path__ = []
    backends.mps = types.SimpleNamespace(is_available=lambda: platform == "mps", is_built=lambda: platform == "mps")
    backends.cuda = Stub("torch.backends.cuda")
    backends.cudnn = Stub("torch.backends.cudnn")
    torch.backends = backends
    sys.modules["torch.backends"] = backends
    sys.modules["torch.backends.mps"] = backends.mps
    if platform == "xpu":
        torch.xpu = types.SimpleNamespace(is_available=lambda: True, device_count=lambda: 1,
                                          get_device_name=lambda *a: CASE.get("device_name", "Intel GPU"),
                                          get_device_properties=lambda *a: _device_props())
    torch.compile = lambda *a, **k: (a[0] if a and callable(a[0]) else (lambda f: f))
    torch.inference_mode = torch.no_grad = lambda *a, **k: (a[0] if a and callable(a[0]) else Stub("ctx"))
    torch.get_default_dtype = lambda: torch.float32
    torch.cpu = types.SimpleNamespace(is_available=lambda: True)

    class Library:  # torch.library.Library: an engine registers its custom ops at import
        def __init__(self, name, kind="FRAGMENT", *args):
            self.ns, self.m = name, types.SimpleNamespace(name=name)

        def define(self, *args, **kwargs):
            pass

        def impl(self, *args, **kwargs):
            return lambda f: f

        _register_fake = impl

    library = StubModule("torch.library")
    library.Library = Library
    library.infer_schema = lambda *a, **k: "() -> ()"
    library.custom_op = library.register_fake = library.impl = library.register_kernel = (
        lambda *a, **k: (a[0] if len(a) == 1 and callable(a[0]) and not k else (lambda f: f)))
    library.define = lambda *a, **k: None
    torch.library = library
    sys.modules["torch.library"] = library


# Attributes a real torch lacks on this platform: an engine tests `hasattr(torch, "npu")`.
def _torch_getattr_guard(module):
    absent = {"npu", "hpu", "musa", "mlu"}
    if CASE.get("platform") != "xpu":
        absent.add("xpu")
    original = type(module).__getattr__

    class GuardedTorch(type(module)):
        def __getattr__(self, attr):
            if attr in absent:
                raise AttributeError(attr)
            return original(self, attr)

    module.__class__ = GuardedTorch


# ---------------------------------------------------------------------------------------------
# transformers: PretrainedConfig reads the case's config.json.
# ---------------------------------------------------------------------------------------------
class PretrainedConfig:
    model_type = ""
    attribute_map: dict = {}
    is_composition = False

    def __init__(self, **kwargs):
        defaults = {"architectures": None, "torch_dtype": None, "dtype": None, "tie_word_embeddings": True,
                    "is_encoder_decoder": False, "rope_scaling": None, "quantization_config": None,
                    "name_or_path": "", "_name_or_path": "", "output_attentions": False,
                    "return_dict": True, "pruned_heads": {}, "chunk_size_feed_forward": 0,
                    "bos_token_id": None, "eos_token_id": None, "pad_token_id": None,
                    "output_hidden_states": False, "use_return_dict": True}
        for key, value in defaults.items():
            if key not in type(self).__dict__:
                object.__setattr__(self, key, value)
        for key, value in kwargs.items():
            try:
                setattr(self, key, value)
            except AttributeError:
                object.__setattr__(self, key, value)

    def __getattribute__(self, attr):
        amap = getattr(type(self), "attribute_map", None) or {}
        if attr in amap:
            attr = amap[attr]
        return object.__getattribute__(self, attr)

    def __setattr__(self, attr, value):
        amap = getattr(type(self), "attribute_map", None) or {}
        object.__setattr__(self, amap.get(attr, attr), value)

    @classmethod
    def from_dict(cls, data, **kwargs):
        data = dict(data)
        data.update({k: v for k, v in kwargs.items() if k not in ("return_unused_kwargs",)})
        return cls(**data)

    @classmethod
    def get_config_dict(cls, path, **kwargs):
        return _read_config(path), kwargs

    @classmethod
    def from_pretrained(cls, path, **kwargs):
        return cls.from_dict(_read_config(path), **kwargs)

    def to_dict(self):
        return {k: v for k, v in self.__dict__.items()}

    def to_diff_dict(self):
        return self.to_dict()

    def get_text_config(self, *args, **kwargs):
        text = self.__dict__.get("text_config")
        return text if isinstance(text, PretrainedConfig) else self

    def __contains__(self, key):
        return key in self.__dict__

    def __iter__(self):
        return iter(self.__dict__)

    def get(self, key, default=None):
        return self.__dict__.get(key, default)

    def update(self, values):
        for k, v in values.items():
            setattr(self, k, v)


def _as_config(value):
    if isinstance(value, dict) and ("model_type" in value or "num_attention_heads" in value
                                    or "hidden_size" in value):
        return PretrainedConfig(**{k: _as_config(v) for k, v in value.items()})
    return value


def _read_config(path):
    path = str(path)
    file = path if os.path.isfile(path) else os.path.join(path, "config.json")
    with open(file) as f:
        data = json.load(f)
    return data


# The model types transformers 4.57 (SGLang's pin in these releases) recognises, among those the
# archetypes use: AutoConfig refuses any other type, as the real one does, and SGLang's fallbacks
# for such types (its own config classes, the DeepSeek V3.2 loader) then run as they would.
KNOWN_MODEL_TYPES = {
    "llama", "llama4", "llama4_text", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen2_5_vl", "qwen3", "qwen3_moe",
    "qwen3_next", "deepseek_v2", "deepseek_v3", "glm4", "glm4_moe", "gpt_oss", "gemma2", "gemma3", "gemma3_text",
    "falcon_h1", "nemotron_h", "phi3", "siglip_vision_model", "minicpm3",
}


class AutoConfig:
    _registered: dict = {}  # AutoConfig.register(model_type, cls): the engine's own config classes

    @staticmethod
    def from_pretrained(path, **kwargs):
        data = _read_config(path)
        model_type = data.get("model_type", "")
        if model_type in AutoConfig._registered:
            return AutoConfig._registered[model_type].from_dict(data)
        if model_type not in KNOWN_MODEL_TYPES:
            raise ValueError(
                f"The checkpoint you are trying to load has model type `{model_type}` but Transformers does not "
                "recognize this architecture. This could be because of an issue with the checkpoint, or because "
                "your version of Transformers is out of date.")
        return PretrainedConfig(**{k: _as_config(v) for k, v in data.items()})

    @staticmethod
    def register(model_type, config_class, exist_ok=False):
        AutoConfig._registered[model_type] = config_class

    @staticmethod
    def for_model(model_type, **kwargs):
        return PretrainedConfig(model_type=model_type, **kwargs)


class _ConfigMapping(dict):
    """transformers' CONFIG_MAPPING: model types an engine registers its config classes under."""

    def __init__(self):
        super().__init__()
        self._extra_content = {}

    def register(self, key, value, exist_ok=False):
        self._extra_content[key] = value


def _build_transformers(module):
    module.__version__ = CASE.get("transformers_version", "4.57.1")
    module.PretrainedConfig = module.PreTrainedConfig = PretrainedConfig
    module.AutoConfig = AutoConfig
    module.CONFIG_MAPPING = _ConfigMapping()
    cu = StubModule("transformers.configuration_utils")
    cu.PretrainedConfig = cu.PreTrainedConfig = PretrainedConfig
    sys.modules["transformers.configuration_utils"] = cu
    module.configuration_utils = cu


class _TransformersFinder(importlib.abc.MetaPathFinder):
    """transformers.* : `*Config` names are PretrainedConfig subclasses, the rest are stubs."""

    def find_spec(self, name, path=None, target=None):
        if name == "transformers" or name.startswith("transformers."):
            if name == "transformers.configuration_utils":
                return None if name in sys.modules else importlib.machinery.ModuleSpec(name, _StubLoader(
                    lambda m: (setattr(m, "PretrainedConfig", PretrainedConfig), setattr(m, "PreTrainedConfig", PretrainedConfig))))
            return importlib.machinery.ModuleSpec(
                name, _StubLoader(_build_top_transformers if name == "transformers" else _config_names), is_package=True)
        return None


def _config_names(module):
    class ConfigModule(StubModule):
        def __getattr__(self, attr):
            if attr.endswith("Config") and not attr.startswith("_"):
                cls = type(attr, (PretrainedConfig,), {"model_type": attr[:-6].lower()})
                setattr(self, attr, cls)
                return cls
            return StubModule.__getattr__(self, attr)

    module.__class__ = ConfigModule


def _build_top_transformers(module):
    _config_names(module)  # `from transformers import DeepseekV3Config` is a config class too
    _build_transformers(module)


# ---------------------------------------------------------------------------------------------
# Everything else: modules that are not installed import as stubs (catch-all, last on the path).
# ---------------------------------------------------------------------------------------------
STUBBED: set = set()
REAL_FIND_SPEC = importlib.util.find_spec
REAL_VERSION = importlib.metadata.version


# Added for engines other than SGLang (empty by default, so SGLang's fake machine is unchanged):
# ENGINE_TOPS are engine packages never stubbed; EXTENSIONS are compiled modules of the engine that
# import as inert stubs without a probe (the engine's image ships them); NOT_INSTALLED are modules
# that fail to import on every case (platform plugins of machines that are not this one).
ENGINE_TOPS: set = set()
EXTENSIONS: set = set()
NOT_INSTALLED: set = set()


class _CatchAll(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if name in EXTENSIONS or any(name.startswith(e + ".") for e in EXTENSIONS):
            return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
        if top in NOT_INSTALLED or name in NOT_INSTALLED:
            return None
        if top in ENGINE_TOPS:
            return None
        if top == "sglang" or top in sys.stdlib_module_names:
            return None  # the engine's own modules and the standard library are never stubbed
        if top in KERNEL_PACKAGES and top not in CASE.get("packages", ()):
            if top in PLATFORM_PACKAGES or top in CASE.get("absent", ()):
                return None  # a kernel package this machine lacks fails to import, as it would there
            _probe(f"import {top}", "installed?")
        if top in ALIASES:
            return importlib.util.spec_from_loader(name, _AliasLoader(ALIASES[top]))
        STUBBED.add(top)
        return importlib.machinery.ModuleSpec(name, _StubLoader(_BUILDERS.get(name)), is_package=True)


class JITFunction:
    """triton.runtime.jit.JITFunction: keeps the kernel function; launching it is never reached."""

    def __init__(self, fn, *args, **kwargs):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.arg_names = list(getattr(getattr(fn, "__code__", None), "co_varnames", ()))

    def __getitem__(self, grid):
        return lambda *a, **k: None

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


def _decorator(make):
    """@x, @x(), @x(options): `make(fn)` in every form."""
    def deco(*args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return make(args[0])
        return make
    return deco


def _build_triton(module):
    module.__version__ = CASE.get("triton_version", "3.5.1")
    module.jit = _decorator(JITFunction)
    module.autotune = module.heuristics = _decorator(lambda fn: fn)
    module.Config = lambda *a, **k: Stub("triton.Config()")
    module.cdiv = lambda a, b: -(-a // b)
    module.next_power_of_2 = lambda n: 1 << (int(n) - 1).bit_length()
    target = types.SimpleNamespace(backend="hip" if CASE.get("platform") == "rocm" else "cuda",
                                   arch=CASE.get("gcn_arch") or int(CASE["capability"][0]) * 10 + int(CASE["capability"][1]),
                                   warp_size=64 if CASE.get("platform") == "rocm" else 32)
    runtime = StubModule("triton.runtime")
    runtime.__path__ = []
    jit = StubModule("triton.runtime.jit")
    jit.JITFunction = runtime.JITFunction = JITFunction
    jit.jit = module.jit
    driver = StubModule("triton.runtime.driver")
    driver.active = types.SimpleNamespace(get_current_target=lambda: target, get_current_device=lambda: 0,
                                          utils=Stub("triton.driver.utils"))
    runtime.jit, runtime.driver = jit, driver
    runtime.Autotuner = _stub_class("triton.runtime.Autotuner")
    module.runtime = runtime
    sys.modules.update({"triton.runtime": runtime, "triton.runtime.jit": jit, "triton.runtime.driver": driver})


class _StructMeta(type):
    """msgspec.Struct's class keywords (frozen, kw_only, omit_defaults, gc, tag ...) are accepted."""

    def __new__(mcs, name, bases, ns, **options):
        return super().__new__(mcs, name, bases, ns)

    def __init__(cls, name, bases, ns, **options):
        super().__init__(name, bases, ns)


class _Field:
    def __init__(self, default=None, default_factory=None, name=None):
        self.default, self.default_factory = default, default_factory


def _struct_fields(cls):
    """The annotated fields of a Struct class and its bases, in declaration order."""
    names = []
    for klass in reversed(cls.__mro__):
        for n, kind in klass.__dict__.get("__annotations__", {}).items():
            class_var = (kind if isinstance(kind, str) else repr(kind)).replace("typing.", "").startswith("ClassVar")
            if n not in names and not n.startswith("__") and not class_var:
                names.append(n)
    return names


class _Struct(metaclass=_StructMeta):
    """msgspec.Struct as the engine uses it: a record of its annotated fields, set from positional
    and keyword arguments, defaults (plain or msgspec.field) for the rest. The engine's resolved
    backend names (ResolvedAttentionBackendStr) are Structs: a stub there would hide every check
    that reads them."""

    def __init__(self, *args, **kwargs):
        fields = _struct_fields(type(self))
        values = dict(zip(fields, args))
        values.update(kwargs)
        for n in fields:
            if n in values:
                v = values[n]
            else:
                default = getattr(type(self), n, None)
                if isinstance(default, _Field):
                    v = default.default_factory() if default.default_factory else default.default
                elif n in getattr(type(self), "__dict__", {}) or hasattr(type(self), n):
                    v = default
                else:
                    raise TypeError(f"Missing required argument '{n}'")
            object.__setattr__(self, n, v)

    def __eq__(self, other):
        return type(self) is type(other) and all(getattr(self, n) == getattr(other, n) for n in _struct_fields(type(self)))

    def __hash__(self):
        return hash(tuple(repr(getattr(self, n, None)) for n in _struct_fields(type(self))))

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(f"{n}={getattr(self, n, None)!r}" for n in _struct_fields(type(self))) + ")"


def _build_msgspec(module):
    module.Struct = _Struct
    module.field = lambda default=None, default_factory=None, name=None: _Field(default, default_factory, name)
    module.UNSET = Stub("msgspec.UNSET")
    module.UnsetType = type(None)
    module.Meta = lambda *a, **k: None
    structs = StubModule("msgspec.structs")
    structs.replace = lambda obj, **changes: type(obj)(**{**{n: getattr(obj, n) for n in _struct_fields(type(obj))}, **changes})
    structs.asdict = lambda obj: {n: getattr(obj, n) for n in _struct_fields(type(obj))}
    structs.fields = lambda obj: tuple(_struct_fields(obj if isinstance(obj, type) else type(obj)))
    module.structs = structs
    sys.modules["msgspec.structs"] = structs


_BUILDERS = {"torch": _build_torch, "triton": _build_triton, "msgspec": _build_msgspec}

# Kernel packages whose presence an engine asks about; each case says which are installed.
KERNEL_PACKAGES = {
    "flashinfer": "flashinfer_python", "sgl_kernel": "sgl-kernel", "flash_attn": "flash-attn",
    "flash_attn_interface": "flash-attn-3", "flash_mla": "flash-mla", "deep_gemm": "deep-gemm",
    "vllm": "vllm", "aiter": "aiter", "torch_npu": "torch-npu", "intel_extension_for_pytorch": "ipex",
    "cutlass": "nvidia-cutlass-dsl", "flashinfer_cubin": "flashinfer-cubin", "kernels": "kernels",
    "flash_attn_4": "flash-attn-4", "tilelang": "tilelang", "fast_hadamard_transform": "fast-hadamard-transform",
    "deep_ep": "deep-ep", "mooncake": "mooncake-transfer-engine", "xgrammar": "xgrammar",
    "outlines": "outlines", "llguidance": "llguidance", "sgl_kernel_npu": "sgl-kernel-npu",
    "mlx": "mlx", "habana_frameworks": "habana", "triton_kernels": "triton-kernels",
    "wave_lang": "wave-lang", "iree": "iree-turbine", "flashinfer_jit_cache": "flashinfer-jit-cache",
    "cutlass_library": "nvidia-cutlass", "cuda": "cuda-python", "nvshmem": "nvshmem4py",
    "hpc": "hpc-ops",
}
VERSIONS = {"flashinfer_python": "0.5.3", "flashinfer-python": "0.5.3", "sgl-kernel": "0.3.20",
            "sglang-kernel": "0.4.6", "torch": "2.9.1", "transformers": "4.57.1", "triton": "3.5.1",
            "flash-attn": "2.8.3", "xgrammar": "0.1.27", "nvidia-cutlass-dsl": "4.3.0", "vllm": "0.11.0"}


# Packages that exist only on another platform's image: importing one elsewhere fails.
PLATFORM_PACKAGES = {"aiter", "torch_npu", "sgl_kernel_npu", "intel_extension_for_pytorch", "habana_frameworks",
                     "wave_lang", "iree", "mlx"}
# The packages of the engine's own image on each platform (pinned; a case may say otherwise).
IMAGE_PACKAGES = {"cuda": ["flashinfer", "sgl_kernel", "deep_gemm", "flashinfer_cubin", "xgrammar", "cuda"],
                  "rocm": ["aiter", "xgrammar"]}
# Libraries whose real stand-in is in the standard library.
ALIASES = {"dill": "pickle", "cloudpickle": "pickle", "orjson": "json", "ujson": "json",
           "typing_extensions": "typing", "regex": "re"}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, real):
        self.real = real

    def create_module(self, spec):
        return importlib.import_module(self.real)

    def exec_module(self, module):
        pass


def _find_spec(name, package=None):
    top = name.split(".")[0]
    if top in KERNEL_PACKAGES:
        if top in CASE.get("packages", ()):
            return importlib.machinery.ModuleSpec(name, _StubLoader())
        return None
    spec = REAL_FIND_SPEC(name, package)
    if spec is not None and isinstance(spec.loader, _StubLoader):
        _probe(f"find_spec({name})", "installed?")
        return None
    return spec


def _version(dist):
    key = dist.lower().replace("_", "-")
    for mod, pkg in KERNEL_PACKAGES.items():
        if key == pkg.replace("_", "-") and mod not in CASE.get("packages", ()):
            raise importlib.metadata.PackageNotFoundError(dist)
    pinned = CASE.get("versions", {}).get(dist) or VERSIONS.get(dist) or VERSIONS.get(key)
    if pinned:
        return pinned
    try:
        return REAL_VERSION(dist)
    except importlib.metadata.PackageNotFoundError:
        _probe(f"version({dist})", "installed?")
        raise


def install():
    """Put the fakes in place: call once, before anything of the engine is imported."""
    sys.meta_path.insert(0, _TransformersFinder())
    sys.meta_path.append(_CatchAll())
    importlib.util.find_spec = _find_spec
    importlib.metadata.version = _version
    # The engine's images run Python 3.12, whose typing has `override` (the FA4 CuTe modules import
    # it); Debian's 3.11 lacks it, which would leave every fa4 factory unjudged.
    if not hasattr(typing, "override"):
        typing.override = lambda f: f


def pin(case: dict):
    """Make `case` the machine: hardware before import, the rest in each case's process."""
    CASE.clear()
    CASE.update(case)
    for var in list(os.environ):
        if var.startswith(("SGLANG_", "SGL_", "VLLM_", "FLASHINFER_")):
            del os.environ[var]
    os.environ.update({k: str(v) for k, v in case.get("env", {}).items()})
    torch = sys.modules.get("torch")
    if torch is not None:  # hardware was pinned at import; keep the torch object, refresh its answers
        _build_torch(torch)
    PROBES.clear()


def import_torch_now():
    """torch is imported first, so that its platform guard is in place before the engine looks."""
    import torch  # noqa: F401  (a stub, built from CASE)
    _torch_getattr_guard(torch)
