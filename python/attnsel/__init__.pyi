import os
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

version: str
__version__: str

FlagValue = Union[str, int, float, bool, None, Sequence[Union[str, int, float]]]

class Error(Exception):
    message: str
    code: str
    where: str
    rule: str
    suggestion: str
    choices: List[str]
    findings: List[Finding]
    def __init__(self, message: str, *, code: str = ..., where: str = ..., rule: str = ..., suggestion: str = ...,
                 choices: Sequence[str] = ..., findings: Sequence[Finding] = ...) -> None: ...

class UsageError(Error, ValueError): ...
class UnknownNameError(UsageError): ...
class NoDeviceError(Error): ...

@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    message: str
    source: str = ...
    backend: str = ...
    phase: str = ...
    flag: str = ...
    value: str = ...
    line: int = ...
    gpu: str = ...
    file: str = ...
    column: int = ...
    command: Optional[int] = ...
    suppressed_by: str = ...

@dataclass(frozen=True)
class Rejection:
    backend: str
    slot: str
    reasons: List[Finding]

class Selection:
    ok: bool
    flags: List[str]
    errors: List[Finding]
    warnings: List[Finding]
    notes: List[Finding]
    flag_notes: List[Finding]
    rejected: List[Rejection]
    devices: List["Selection"]
    same_plan: bool
    @property
    def plan(self) -> Dict[str, Any]: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...
    def __bool__(self) -> bool: ...

@dataclass(frozen=True)
class CheckedCommand:
    launcher: str
    engine: str
    args: List[str]
    file: str
    line: int
    gpu: str
    verdict: str
    flags: Optional[List[str]]
    fix: Optional[str] = ...
    fix_args: Optional[List[str]] = ...
    fix_all_targets: Optional[str] = ...

@dataclass(frozen=True)
class SkippedPath:
    path: str
    directory: bool
    reason: str
    detail: str

class CheckResult:
    ok: bool
    strict: bool
    release: str
    findings: List[Finding]
    suppressed: List[Finding]
    commands: List[CheckedCommand]
    files: List[str]
    skipped: List[SkippedPath]
    input_warnings: List[str]
    binary_skipped: int
    @property
    def errors(self) -> List[Finding]: ...
    @property
    def warnings(self) -> List[Finding]: ...
    def to_dict(self) -> Any: ...
    def to_json(self) -> str: ...
    def __bool__(self) -> bool: ...

class ProbeReport:
    devices: List[Dict[str, Any]]
    text: str
    def to_dict(self) -> Dict[str, Any]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Dict[str, Any]]: ...

def launch_flags(**engine_flags: FlagValue) -> List[str]: ...
def select(gpu: Union[None, str, Sequence[str]] = ..., model: Optional[str] = ..., cuda: Optional[str] = ..., *, engine: str = ...,
           engine_version: Optional[str] = ..., platform: Optional[str] = ..., sliding_window: bool = ...,
           multimodal: bool = ..., attention_sinks: bool = ..., dtype: str = ..., strict: bool = ...,
           prefer: Optional[str] = ..., installed: Optional[Sequence[str]] = ..., device: int = ...,
           launch_args: Sequence[str] = ..., **engine_flags: FlagValue) -> Selection: ...
def check(command_or_text: Union[None, str, os.PathLike[str], Sequence[str]] = ...,
          gpus: Union[None, str, Sequence[str]] = ..., cuda: Optional[str] = ..., *, text: Optional[str] = ...,
          path: Union[None, str, os.PathLike[str]] = ..., filename: Optional[str] = ..., strict: bool = ...,
          engine: str = ..., engine_version: Optional[str] = ..., model_kind: Optional[str] = ...,
          unknown_model: str = ..., installed: Optional[Sequence[str]] = ..., exclude: Sequence[str] = ...,
          include: Sequence[str] = ..., gitignore: bool = ..., select: Sequence[str] = ...,
          ignore: Sequence[str] = ...) -> CheckResult: ...
def probe(timeout: float = ...) -> ProbeReport: ...
def gpus() -> List[Dict[str, Any]]: ...
def backends(engine: str = ..., engine_version: Optional[str] = ...) -> List[Dict[str, Any]]: ...
