"""Stand-ins for the pure-Python libraries vLLM's configuration code runs through.

The fake machine of fakeenv.py stubs every library that is not installed; vLLM's configuration
classes, however, are pydantic dataclasses whose validators *are* part of the resolution (an
`--attention-backend` string becomes an enum in a `mode="before"` validator; the block-size
default is applied in a `mode="after"` model validator). Debian's python3 has no pydantic 2, so
this module gives the engine a small pydantic that keeps the semantics the configuration code
relies on:

- `pydantic.dataclasses.dataclass` is the standard library's dataclass whose `__init__` runs,
  for each argument given, the field validators in pydantic's order (before, wrap, the numeric
  constraints of `Field(gt=, ge=, lt=, le=)`, after), then `__post_init__`, then the model's
  `mode="after"` validators; `mode="before"` model validators run on the arguments first;
- `Field(...)` carries a default or a default factory into the dataclass field;
- `TypeAdapter(cls)` builds a dataclass from JSON or a dict (`--attention-config '{...}'`).

What it does not do, and the answers say so (`harness.limits`): type coercion and checking of
annotated types (pydantic refuses a value of the wrong type; argparse has already converted the
command line's strings by the field's type, so this only matters for JSON values).

typing_extensions: Python 3.11's typing plus the few names vLLM imports that 3.11 lacks.
"""
from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.machinery
import inspect
import json
import sys
import types
import typing

import fakeenv


# ---------------------------------------------------------------------------------------------
# pydantic
# ---------------------------------------------------------------------------------------------
class ValidationError(ValueError):
    pass


class FieldInfo:
    def __init__(self, default=dataclasses.MISSING, *, default_factory=dataclasses.MISSING, **kw):
        self.default, self.default_factory = default, default_factory
        self.constraints = {k: kw[k] for k in ("gt", "ge", "lt", "le") if kw.get(k) is not None}
        self.init = kw.get("init", True)
        self.kw = kw


def Field(default=dataclasses.MISSING, **kw):  # noqa: N802 (pydantic's name)
    if default is Ellipsis:
        default = dataclasses.MISSING
    return FieldInfo(default, **kw)


class _Decorated:
    def __init__(self, kind, fields, mode, obj):
        self.kind, self.fields, self.mode, self.obj = kind, fields, mode, obj


def field_validator(*fields, mode="after", **_):
    return lambda obj: _Decorated("field", fields, mode, obj)


def model_validator(*, mode="after"):
    return lambda obj: _Decorated("model", (), mode, obj)


def _func(obj):
    return obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj


def _call_validator(cls, obj, value, extra=()):
    func = _func(obj)
    if isinstance(obj, staticmethod):
        args = (value, *extra)
    else:
        args = (cls, value, *extra)
    params = [p for p in inspect.signature(func).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(params) > len(args):
        args = (*args, fakeenv.Stub("pydantic.ValidationInfo"))
    return func(*args)


def _check_constraints(name, value, constraints):
    if value is None or not constraints or not isinstance(value, (int, float)):
        return value
    for key, bound in constraints.items():
        ok = {"gt": value > bound, "ge": value >= bound, "lt": value < bound, "le": value <= bound}[key]
        if not ok:
            raise ValidationError(f"1 validation error\n{name}\n  Input should be {key} {bound} "
                                  f"[input_value={value!r}]")
    return value


def dataclass(cls=None, *, config=None, **kwargs):
    def wrap(cls):
        validators = []
        for base in reversed(cls.__mro__[1:]):
            validators.extend(getattr(base, "__shim_validators__", ()))
        constraints = {}
        for base in reversed(cls.__mro__[1:]):
            constraints.update(getattr(base, "__shim_constraints__", {}))
        own = []
        for name, value in list(cls.__dict__.items()):
            if isinstance(value, _Decorated):
                own.append(value)
                setattr(cls, name, value.obj)
            elif isinstance(value, FieldInfo):
                constraints[name] = value.constraints
                if value.default_factory is not dataclasses.MISSING:
                    setattr(cls, name, dataclasses.field(default_factory=value.default_factory, init=value.init))
                elif value.default is not dataclasses.MISSING:
                    setattr(cls, name, dataclasses.field(default=value.default, init=value.init))
                elif not value.init:
                    setattr(cls, name, dataclasses.field(init=False))
                else:
                    delattr(cls, name)
        validators = validators + own
        std = {k: v for k, v in kwargs.items() if k in ("init", "repr", "eq", "order", "frozen", "kw_only")}
        cls = dataclasses.dataclass(cls, **std)
        cls.__shim_validators__ = validators
        cls.__shim_constraints__ = constraints
        original = cls.__init__
        signature = inspect.signature(original)

        def __init__(self, *args, **kw):
            bound = signature.bind(self, *args, **kw)
            arguments = dict(bound.arguments)
            arguments.pop(next(iter(signature.parameters)))
            for v in validators:
                if v.kind == "model" and v.mode == "before":
                    result = _call_validator(type(self), v.obj, arguments)
                    if isinstance(result, dict):
                        arguments = result
            for name in list(arguments):
                value = arguments[name]
                for v in validators:
                    if v.kind == "field" and v.mode == "before" and name in v.fields:
                        value = _call_validator(type(self), v.obj, value)
                wraps = [v for v in validators if v.kind == "field" and v.mode == "wrap" and name in v.fields]

                def handler(x, _name=name):
                    return _check_constraints(_name, x, constraints.get(_name))

                if wraps:
                    for v in wraps:
                        value = _call_validator(type(self), v.obj, value, (handler,))
                else:
                    value = handler(value)
                for v in validators:
                    if v.kind == "field" and v.mode == "after" and name in v.fields:
                        value = _call_validator(type(self), v.obj, value)
                arguments[name] = value
            original(self, **arguments)
            for v in validators:
                if v.kind == "model" and v.mode == "after":
                    _func(v.obj)(self)
                elif v.kind == "model" and v.mode == "wrap":
                    pass

        __init__.__signature__ = signature
        __init__.__wrapped__ = original
        cls.__init__ = __init__
        cls.__pydantic_fields__ = {f.name: f for f in dataclasses.fields(cls)}
        return cls

    return wrap if cls is None else wrap(cls)


class TypeAdapter:
    def __init__(self, tp, *args, **kwargs):
        self.tp = tp

    def validate_python(self, value, *args, **kwargs):
        if isinstance(value, dict) and dataclasses.is_dataclass(self.tp):
            names = {f.name for f in dataclasses.fields(self.tp)}
            extra = set(value) - names
            if extra:
                raise ValidationError(f"1 validation error for {self.tp.__name__}\n{sorted(extra)[0]}\n"
                                      "  Unexpected keyword argument")
            return self.tp(**value)
        return value

    def validate_json(self, text, *args, **kwargs):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"Invalid JSON: {exc}") from exc
        return self.validate_python(data)

    def dump_python(self, value, *args, **kwargs):
        return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value


class BaseModel:
    model_config: dict = {}

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __init_subclass__(cls, **kwargs):
        pass

    @classmethod
    def model_validate(cls, data, *args, **kwargs):
        return cls(**data) if isinstance(data, dict) else data

    def model_dump(self, *args, **kwargs):
        return dict(self.__dict__)


class _Subscriptable:
    def __init__(self, name):
        self.name = name

    def __getitem__(self, item):
        return item

    def __call__(self, *args, **kwargs):
        return fakeenv.Stub(self.name + "()")


def _build_pydantic(module):
    module.__version__ = "2.12.0"
    module.VERSION = "2.12.0"
    module.Field = Field
    module.field_validator = field_validator
    module.model_validator = model_validator
    module.ConfigDict = dict
    module.TypeAdapter = TypeAdapter
    module.ValidationError = ValidationError
    module.BaseModel = BaseModel
    module.SkipValidation = _Subscriptable("SkipValidation")
    module.dataclasses = types.SimpleNamespace(dataclass=dataclass, is_pydantic_dataclass=dataclasses.is_dataclass)
    sys.modules["pydantic.dataclasses"] = _module("pydantic.dataclasses", dataclass=dataclass,
                                                  is_pydantic_dataclass=dataclasses.is_dataclass)
    sys.modules["pydantic.fields"] = _module("pydantic.fields", Field=Field, FieldInfo=FieldInfo)
    module.fields = sys.modules["pydantic.fields"]


def _module(name, **attrs):
    m = fakeenv.StubModule(name)
    m.__path__ = []
    for k, v in attrs.items():
        setattr(m, k, v)
    return m


# ---------------------------------------------------------------------------------------------
# typing_extensions
# ---------------------------------------------------------------------------------------------
def _build_typing_extensions(module):
    for name in dir(typing):
        if not name.startswith("__"):
            setattr(module, name, getattr(typing, name))

    def TypeVar(name, *constraints, default=None, **kw):  # noqa: N802
        return typing.TypeVar(name, *constraints, **kw)

    def deprecated(message, *args, **kwargs):
        return lambda obj: obj

    module.TypeVar = TypeVar
    module.TypeIs = typing.TypeGuard
    module.deprecated = deprecated
    module.override = lambda f: f
    module.dataclass_transform = lambda **kw: (lambda f: f)
    module.Buffer = bytes


def _build_psutil(module):
    """psutil: the host's memory (vLLM checks the CPU swap space against it) and CPU count."""
    gib = 1 << 30
    module.virtual_memory = lambda: types.SimpleNamespace(total=512 * gib, available=480 * gib, used=32 * gib,
                                                           free=480 * gib, percent=6.0)
    module.cpu_count = lambda logical=True: 64
    module.Process = fakeenv._stub_class("psutil.Process")


def _build_requests(module):
    """requests: a deployment that reaches the internet. vLLM asks once whether NVIDIA's artifactory
    answers (vllm/utils/flashinfer.py has_nvidia_artifactory: FlashInfer's TRT-LLM cubins, and with
    them FlashInfer's attention sinks on SM100, where the image has no flashinfer-cubin)."""
    response = types.SimpleNamespace(status_code=200, ok=True, text="", content=b"", json=lambda: {},
                                     raise_for_status=lambda: None)
    module.get = module.head = lambda *a, **k: response
    module.RequestException = module.ConnectionError = module.Timeout = type("RequestException", (OSError,), {})
    module.exceptions = types.SimpleNamespace(RequestException=module.RequestException,
                                              ConnectionError=module.RequestException, Timeout=module.RequestException)


class _ShimFinder(importlib.abc.MetaPathFinder):
    BUILDERS = {"pydantic": _build_pydantic, "typing_extensions": _build_typing_extensions, "psutil": _build_psutil,
                "requests": _build_requests}

    def find_spec(self, name, path=None, target=None):
        if name in self.BUILDERS:
            return importlib.machinery.ModuleSpec(name, fakeenv._StubLoader(self.BUILDERS[name]), is_package=True)
        return None


def install():
    """Before the catch-all stub (which fakeenv.install() puts last on the import path)."""
    sys.meta_path.insert(0, _ShimFinder())
