"""attnsel: pick and check attention backends for LLM serving engines (SGLang, vLLM).

    >>> import attnsel
    >>> s = attnsel.select(gpu="H100", model="deepseek-ai/DeepSeek-V3", kv_cache_dtype="fp8_e4m3")
    >>> s.ok, s.flags
    (True, ['--attention-backend', 'flashinfer', '--page-size', '1', '--kv-cache-dtype', 'fp8_e4m3'])
    >>> r = attnsel.check(["sglang", "serve", "deepseek-ai/DeepSeek-V3", "--attention-backend", "trtllm_mla"],
    ...                   gpus="sm90")
    >>> r.ok, [f.rule for f in r.errors]
    (False, ['cell.compute-capability'])

The C++ library does the work (attnsel._attnsel); ``to_dict()`` gives the objects the
``attnsel`` command prints with ``--json`` / ``--format json``.
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _attnsel

__all__ = [
    "Error", "UsageError", "UnknownNameError", "NoDeviceError",
    "Finding", "Rejection", "Selection", "CheckedCommand", "CheckResult", "SkippedPath", "ProbeReport",
    "select", "check", "probe", "gpus", "backends", "launch_flags", "version", "__version__",
]

version: str = _attnsel.version
__version__: str = version


# ---- errors -------------------------------------------------------------------------------------

class Error(Exception):
    """attnsel could not answer: bad input, an unknown name, no GPU found.

    ``code`` is the library's error code ("unknown_name", "invalid_argument", "no_device" ...),
    ``where`` the argument or flag it is about, ``rule`` the rule id of a refused engine flag
    ("args.choice"), ``suggestion`` the closest valid name and ``choices`` the valid ones.
    """

    def __init__(self, message: str, *, code: str = "internal", where: str = "", rule: str = "",
                 suggestion: str = "", choices: Sequence[str] = (), findings: Sequence["Finding"] = ()):
        super().__init__(message)
        self.message = message
        self.code = code
        self.where = where
        self.rule = rule
        self.suggestion = suggestion
        self.choices = list(choices)
        self.findings = list(findings)


class UsageError(Error, ValueError):
    """Bad input: a malformed value, a refused engine flag, an unreadable file (the CLI's exit 2)."""


class UnknownNameError(UsageError):
    """A GPU, model, backend, engine or release attnsel does not know; ``choices`` lists the valid ones."""


class NoDeviceError(Error):
    """No GPU was named and the probe found none (the CLI's exit 3)."""


def _raise(error: Mapping[str, Any]) -> None:
    code = error["code"]
    cls = UnknownNameError if code == "unknown_name" else NoDeviceError if code == "no_device" else UsageError
    raise cls(error["description"], code=code, where=error["where"], rule=error["rule"],
              suggestion=error["suggestion"], choices=error["choices"],
              findings=[Finding._from(f) for f in error["findings"]])


def _answer(result: Any) -> Any:
    if isinstance(result, dict) and "error" in result:
        _raise(result["error"])
    return result


# ---- results ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Finding:
    """One reason: the rule that fired (a stable id), what it says and the upstream source.

    Findings of ``check`` also say where: ``line`` (0 for an argv), ``flag`` and ``value`` as
    written, ``gpu`` (the target), ``file`` and ``column`` (blocks that could not be read).
    """

    rule: str
    severity: str
    message: str
    source: str = ""
    backend: str = ""
    phase: str = ""
    flag: str = ""
    value: str = ""
    line: int = 0
    gpu: str = ""
    file: str = ""
    column: int = 0
    command: Optional[int] = None
    #: Set on a suppressed finding (``CheckResult.suppressed``): what suppressed it.
    suppressed_by: str = ""

    @classmethod
    def _from(cls, d: Mapping[str, Any]) -> "Finding":
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.message} [{self.rule}]"


@dataclass(frozen=True)
class Rejection:
    """A backend that cannot run here, with every reason."""

    backend: str
    slot: str
    reasons: List[Finding]


class Selection:
    """A plan for one device: ``ok``, ``plan``, ``flags`` and every reason.

    ``errors`` say why the plan is invalid, ``warnings`` what the engine would silently change,
    ``notes`` why things were decided; ``flag_notes`` what reading the engine flags assumed.
    """

    def __init__(self, raw: Mapping[str, Any]):
        self._document = raw["document"]
        self._selection = json.loads(raw["selection"])
        self.ok: bool = raw["ok"]
        self.flags: List[str] = list(raw["flags"])
        self.errors: List[Finding] = [Finding._from(f) for f in raw["errors"]]
        self.warnings: List[Finding] = [Finding._from(f) for f in raw["warnings"]]
        self.notes: List[Finding] = [Finding._from(f) for f in raw["notes"]]
        self.flag_notes: List[Finding] = [Finding._from(f) for f in raw["flag_notes"]]
        self.rejected: List[Rejection] = [
            Rejection(r["backend"], r["slot"], [Finding._from(f) for f in r["reasons"]]) for r in raw["rejected"]]
        #: One Selection per GPU asked for (``select(gpu="sm90,B200")``); ``[self]`` for one GPU.
        self.devices: List["Selection"] = [self]
        #: Whether every GPU gets the same plan, so that one launch command fits them all.
        self.same_plan: bool = True

    @classmethod
    def _of_devices(cls, each: List["Selection"]) -> "Selection":
        """The plans of several GPUs: ok when every one is, the flags when they are the same plan."""
        same = all(s.flags == each[0].flags and s.plan == each[0].plan for s in each)
        self = cls.__new__(cls)
        self.devices, self.same_plan = list(each), same
        self.ok = all(s.ok for s in each)
        self.flags = list(each[0].flags) if same else []
        self.errors = [f for s in each for f in s.errors]
        self.warnings = [f for s in each for f in s.warnings]
        self.notes = [f for s in each for f in s.notes]
        self.flag_notes = list(each[0].flag_notes)
        self.rejected = [r for s in each for r in s.rejected]
        self._selection = {"plan": each[0].plan if same else None}
        docs = [json.loads(s._document) for s in each]
        self._document = json.dumps({"schema_version": docs[0].get("schema_version", 1),
                                     "attnsel_version": docs[0].get("attnsel_version"), "kind": "select",
                                     "ok": self.ok, "same_plan": same, "flags": self.flags if same else None,
                                     "devices": docs})
        return self

    @property
    def plan(self) -> Dict[str, Any]:
        """The plan: backends per phase, page size, KV cache dtype, flags (as ``--json`` has it)."""
        return self._selection["plan"]

    def to_dict(self) -> Dict[str, Any]:
        """The object ``attnsel --gpu G --model M --json`` prints."""
        return json.loads(self._document)

    def to_json(self) -> str:
        return self._document

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return f"Selection(ok={self.ok}, flags={self.flags!r})"


@dataclass(frozen=True)
class CheckedCommand:
    """One launch command judged for one target GPU."""

    launcher: str
    engine: str
    args: List[str]
    file: str
    line: int
    gpu: str
    verdict: str  # "clean", "warning", "error"
    flags: Optional[List[str]]  # the flags of the plan the engine would run; None when it would not get that far
    #: When it fails here: the nearest change that passes ("--attention-backend trtllm_mla -> flashinfer"),
    #: and the arguments with it made; None when it passes or no change of the flags its errors name does.
    fix: Optional[str] = None
    fix_args: Optional[List[str]] = None
    #: When it fails on some GPU: one change that passes on every GPU it was checked for, or None.
    fix_all_targets: Optional[str] = None


@dataclass(frozen=True)
class SkippedPath:
    """A path a directory walk passed over: ``reason`` is one of skip-list, excluded, gitignored,
    other-kind, symlink, special; ``detail`` says it for people ("build output", "--exclude 'x'")."""

    path: str
    directory: bool
    reason: str
    detail: str


class CheckResult:
    """What ``check`` found: ``ok`` (nothing would fail), ``findings`` and ``commands``."""

    def __init__(self, raw: Mapping[str, Any], strict: bool):
        self._document = raw["document"]
        self.ok: bool = raw["ok"]
        self.strict = strict
        self.release: str = raw["release"]
        self.findings: List[Finding] = [Finding._from(f) for f in raw["findings"]]
        #: Findings a comment or ``select``/``ignore`` suppressed: counted toward nothing.
        self.suppressed: List[Finding] = [Finding._from(f) for f in raw["suppressed"]]
        self.commands: List[CheckedCommand] = [CheckedCommand(**c) for c in raw["commands"]]
        #: A path checked: the files read, in order; a text or an argv: empty.
        self.files: List[str] = list(raw["files"])
        #: The paths a directory walk passed over, each with why (never silently).
        self.skipped: List[SkippedPath] = [SkippedPath(**p) for p in raw["skipped"]]
        #: Warnings about the inputs (a .gitignore not fully read): ``strict`` fails on them.
        self.input_warnings: List[str] = list(raw["input_warnings"])
        self.binary_skipped: int = raw["binary_skipped"]

    @property
    def errors(self) -> List[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> List[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def to_dict(self) -> Any:
        """What ``attnsel check --format json`` prints for this input."""
        return json.loads(self._document)

    def to_json(self) -> str:
        return self._document

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return (f"CheckResult(ok={self.ok}, files={len(self.files)}, commands={len(self.commands)}, "
                f"findings={len(self.findings)}, skipped={len(self.skipped)})")


class ProbeReport:
    """The GPUs of this host: ``devices`` (dicts), ``text`` for people, ``to_dict()``."""

    def __init__(self, raw: Mapping[str, Any]):
        self.devices: List[Dict[str, Any]] = list(raw["devices"])
        self.text: str = raw["text"]
        self._document = raw["document"]

    def to_dict(self) -> Dict[str, Any]:
        """What ``attnsel probe --json`` prints."""
        return json.loads(self._document)

    def __len__(self) -> int:
        return len(self.devices)

    def __iter__(self):
        return iter(self.devices)

    def __repr__(self) -> str:
        return f"ProbeReport(devices={len(self.devices)})"


# ---- functions ----------------------------------------------------------------------------------

FlagValue = Union[str, int, float, bool, None, Sequence[Union[str, int, float]]]


def launch_flags(**engine_flags: FlagValue) -> List[str]:
    """Keyword arguments as launch flags: ``page_size=64`` -> ``--page-size 64``, ``True`` -> the
    bare flag, ``False``/``None`` -> left out, a list -> the flag with every item (nargs)."""
    out: List[str] = []
    for key, value in engine_flags.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            out.append(flag)
            out.extend(_text(v, key) for v in value)
        else:
            out.extend([flag, _text(value, key)])
    return out


def _text(value: Any, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UsageError(f"{key}: expected a string or a number, got {type(value).__name__}",
                         code="invalid_argument", where=key)
    return str(value)


def _installed(engine: str, engine_version: Optional[str]) -> Optional[List[str]]:
    """The optional packages the matrix asks about that this interpreter can import; None when it asks about none."""
    names = _answer(_attnsel.optional_packages(engine, engine_version))
    if not names:
        return None
    found = []
    for name in names:
        try:
            if importlib.util.find_spec(name) is not None:
                found.append(name)
        except (ImportError, ValueError):
            pass
    return found


def _optional_text(value: Any, name: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise UsageError(f"{name}: expected a string, got {type(value).__name__}", code="invalid_argument", where=name)


def select(gpu: Union[None, str, Sequence[str]] = None, model: Optional[str] = None, cuda: Optional[str] = None, *,
           engine: str = "sglang", engine_version: Optional[str] = None, platform: Optional[str] = None,
           sliding_window: bool = False, multimodal: bool = False, attention_sinks: bool = False,
           dtype: str = "auto", strict: bool = False, prefer: Optional[str] = None,
           installed: Optional[Sequence[str]] = None, device: int = 0,
           launch_args: Sequence[str] = (), **engine_flags: FlagValue) -> Selection:
    """Plans attention backends and the page size, as ``attnsel --gpu GPU --model MODEL`` does.

    ``engine_flags`` are the engine's own launch flags (``attention_backend="fa3"``,
    ``page_size=64``, ``kv_cache_dtype="fp8_e4m3"``, ``enable_deterministic_inference=True``),
    read with the engine's launch grammar the way its argparse reads them; ``launch_args`` takes
    them as argv items instead (pasted from a launch command). Without ``gpu`` (and without
    ATTNSEL_GPU) the GPU is probed (``device`` picks one). ``installed``: the optional Python
    packages present; by default the ones this interpreter can import.

    Raises UnknownNameError (an unknown GPU, model, backend, engine), UsageError (a bad value,
    a flag the engine would refuse: ``.rule`` and ``.findings`` say which), NoDeviceError.
    """
    if isinstance(gpu, (list, tuple)):
        gpu = ",".join(_text(g, "gpu") for g in gpu)
    gpu = _optional_text(gpu, "gpu")
    if gpu is not None and "," in gpu:
        names = [g.strip() for g in gpu.split(",")]
        if not all(names):
            raise UsageError(f"gpu: an empty name in {gpu!r}", code="invalid_argument", where="gpu")
        return Selection._of_devices([
            select(g, model, cuda, engine=engine, engine_version=engine_version, platform=platform,
                   sliding_window=sliding_window, multimodal=multimodal, attention_sinks=attention_sinks, dtype=dtype,
                   strict=strict, prefer=prefer, installed=installed, device=device, launch_args=launch_args,
                   **engine_flags) for g in names])
    model = _optional_text(model, "model")
    cuda = _optional_text(cuda, "cuda")
    if isinstance(launch_args, str):
        raise UsageError("launch_args: expected a list of argv items, not a string", code="invalid_argument",
                         where="launch_args")
    args = [_text(a, "launch_args") for a in launch_args] + launch_flags(**engine_flags)
    if installed is None:
        installed = _installed(engine, engine_version)
    raw = _answer(_attnsel.select(gpu, model, cuda, engine, engine_version, platform, bool(sliding_window),
                                  bool(multimodal), bool(attention_sinks), dtype, bool(strict),
                                  prefer or "engine-default", args,
                                  None if installed is None else list(installed), int(device)))
    return Selection(raw)


def check(command_or_text: Union[None, str, "os.PathLike[str]", Sequence[str]] = None,
          gpus: Union[None, str, Sequence[str]] = None, cuda: Optional[str] = None, *,
          text: Optional[str] = None, path: Union[None, str, "os.PathLike[str]"] = None,
          filename: Optional[str] = None, strict: bool = False, engine: str = "sglang",
          engine_version: Optional[str] = None, model_kind: Optional[str] = None, unknown_model: str = "note",
          installed: Optional[Sequence[str]] = None, exclude: Sequence[str] = (), include: Sequence[str] = (),
          gitignore: bool = True, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> CheckResult:
    """Checks engine launch commands for target GPUs, as ``attnsel check`` does.

    The first argument is one of:

    - a list or tuple: one launch command's argv (``["python3", "-m", "sglang.launch_server",
      ...]``, or bare flags);
    - a path (a ``str`` naming a file or directory that exists, or an ``os.PathLike``): a file is
      read as its name and first line say (shell, Dockerfile, compose, Kubernetes, Helm,
      Markdown, Python, Makefile, justfile, Procfile, systemd unit, notebook ...), a directory is walked as
      ``attnsel check DIR`` walks it (``exclude`` and ``include`` globs, ``gitignore``); what the walk
      passed over is in ``skipped``. A walk that finds nothing to read raises UsageError;
    - a string that is not a path and holds a newline or a blank: a file's text (say so with
      ``text=`` to be sure), read as the format ``filename`` implies (a shell script by default).

    ``gpus``: "sm90,H100" or a list; without it, the GPUs each file names. The release is
    ``engine_version``, else the one the file names (an image tag, a pinned pip install).
    ``select`` and ``ignore``: rule patterns (ids, families such as ``advisory``, prefixes ending in
    ``*``) as ``--select`` and ``--ignore`` take them; ``# attnsel: ignore[...]`` comments in the text
    are honoured. Suppressed findings are in ``suppressed``, not ``findings``.
    """
    given = [x for x in (command_or_text, text, path) if x is not None]
    if len(given) != 1:
        raise UsageError("check: give one of a command (a list), a path, or text=", code="invalid_argument",
                         where="command_or_text")
    argv: Optional[List[str]] = None
    body = ""
    target: Optional[str] = None
    if text is not None:
        body = _text(text, "text")
    elif path is not None:
        target = os.fspath(path)
    elif isinstance(command_or_text, os.PathLike):
        target = os.fspath(command_or_text)
    elif isinstance(command_or_text, str):
        if os.path.exists(command_or_text):
            target = command_or_text
        elif any(c.isspace() for c in command_or_text) or command_or_text == "":
            body = command_or_text
        else:
            raise UsageError(f"'{command_or_text}' is not a file or directory; to check a script's text, pass "
                             f"text=..., a command as a list", code="io_error", where="command_or_text")
    elif isinstance(command_or_text, (list, tuple)):
        argv = [_text(a, "command") for a in command_or_text]
        if not argv:
            raise UsageError("command: an empty argv; give the launch command to check", code="invalid_argument",
                             where="command")
    else:
        raise UsageError(f"command_or_text: expected a list of argv items, a path or a file's text, got "
                         f"{type(command_or_text).__name__}", code="invalid_argument", where="command_or_text")
    if target is not None and filename is not None:
        raise UsageError("filename: names the format of a text; a path is read as its own name says",
                         code="invalid_argument", where="filename")
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if gpus is not None and not isinstance(gpus, str):
        gpus = ",".join(_text(g, "gpus") for g in gpus)
    if unknown_model not in ("note", "error"):
        raise UnknownNameError(f"unknown_model: '{unknown_model}' is not one of note, error", code="unknown_name",
                               where="unknown_model", choices=["note", "error"])
    if isinstance(select, str) or isinstance(ignore, str):
        raise UsageError("select and ignore: a list of rule patterns, not one string", code="invalid_argument",
                         where="select" if isinstance(select, str) else "ignore")
    if isinstance(exclude, str) or isinstance(include, str):
        raise UsageError("exclude and include: a list of globs, not one string", code="invalid_argument",
                         where="exclude" if isinstance(exclude, str) else "include")
    raw = _answer(_attnsel.check(argv, body, target, _optional_text(filename, "filename"), gpus,
                                 _optional_text(cuda, "cuda"), engine, engine_version, bool(strict), model_kind,
                                 unknown_model == "error", None if installed is None else list(installed),
                                 [_text(g, "exclude") for g in exclude], [_text(g, "include") for g in include],
                                 bool(gitignore), [_text(p, "select") for p in select],
                                 [_text(p, "ignore") for p in ignore]))
    return CheckResult(raw, bool(strict))


def probe(timeout: float = 5.0) -> ProbeReport:
    """The GPUs of this host (NVML, the CUDA driver, ROCm sysfs); an empty report when there are none."""
    return ProbeReport(_attnsel.probe(float(timeout)))


def gpus() -> List[Dict[str, Any]]:
    """The GPU catalog: name, aliases, arch (sm90), platform, family."""
    return _answer(_attnsel.gpus())


def backends(engine: str = "sglang", engine_version: Optional[str] = None) -> List[Dict[str, Any]]:
    """The backends of an engine's matrix: name, title, slot (attention, linear, sparse), aliases."""
    return _answer(_attnsel.backends(engine, engine_version))
