#!/usr/bin/env python3
"""Extract the launch-command grammar of `vllm serve` (and `python -m
vllm.entrypoints.openai.api_server`, which builds the same parser) from saved vLLM source files.

Nothing is imported or run: the files are read with the standard library's ast module, so vLLM
need not be installed. vLLM builds its parser at run time from config dataclasses; this script
replays that construction statically:

  --src DIR   a local copy of (excerpts of) the vLLM tree, e.g. /tmp/vllm-src/v0.11, holding
              vllm/entrypoints/openai/cli_args.py   make_arg_parser + FrontendArgs
              vllm/engine/arg_utils.py              EngineArgs.add_cli_args,
                                                    AsyncEngineArgs.add_cli_args, the
                                                    EngineArgs field annotations
              vllm/config/*.py                      the config dataclasses (ModelConfig, ...)
              and a file COMMITS with lines "path=commit" naming the stored commit each file
              was read at (they go into "source" and each flag's "file").

How a flag is derived (vllm/engine/arg_utils.py: get_kwargs/_compute_kwargs; the rules are
the same in 2025 and 2026 versions):
  * every `*.add_argument(...)` call of make_arg_parser, FrontendArgs.add_cli_args (one flag per
    dataclass field: --field-name), EngineArgs.add_cli_args and AsyncEngineArgs.add_cli_args, in
    that order (the order make_arg_parser registers them); positionals (model_tag) are skipped;
  * explicit keyword arguments (type=, action=, nargs=, choices=, default=, deprecated=) win;
  * `**X_kwargs["field"]` with `X_kwargs = get_kwargs(SomeConfig)` takes the type hints of
    SomeConfig.field (from vllm/config/*.py; if that class or field is not in the copies, the
    annotation of the same-named EngineArgs field, which mirrors it, is used, and "file" says
    so). From the hints, in _compute_kwargs order: a config dataclass -> JSON (pydantic
    validate_json); bool -> BooleanOptionalAction (--X and --no-X); Literal -> choices (sorted;
    when str is also allowed, only a metavar: no choices); tuple/list/set -> nargs "+" of the
    element type; int -> int (human_readable_int for the names in `human_readable_ints`);
    float; dict with str or a non-builtin -> union_dict_and_str; dict -> JSON; str or any
    non-builtin -> str. `None` among the hints wraps the type in optional_type (accepts "" and
    "None": written as "optional_<type>") and appends "None" to the choices.
  * assignments in add_cli_args that patch the kwargs (`X_kwargs["f"]["type"] = json.loads`,
    `del X_kwargs["f"]["nargs"]`, `["action"] = "append"`, the permutations added to
    --collect-detailed-traces' choices) are applied.
  * type aliases are resolved across all files read; a name bound to Any in the run-time
    branch of `if TYPE_CHECKING: ... else: X = Any` is Any (so e.g. QuantizationMethods gives
    --quantization no choices at run time).

Output: a grammar JSON for attnsel (schema: data/grammar.schema.json; see
docs/engine-grammar-notes.md, section vLLM).
"""
import argparse
import ast
import itertools
import json
import os
import sys

BUILTIN_SCALARS = {"bool", "int", "float", "str", "dict", "list", "tuple", "set", "object", "bytes"}
MAX_HELP = 200


def parse(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), path)


class Source:
    def __init__(self, root):
        self.root = root
        self.commits = {}
        cpath = os.path.join(root, "COMMITS")
        if os.path.exists(cpath):
            for line in open(cpath, encoding="utf-8"):
                line = line.strip()
                if line and not line.startswith("#") and "=" in line:
                    p, c = line.split("=", 1)
                    self.commits[p.strip()] = c.strip()
        self.trees = {}
        for dirpath, _, files in os.walk(os.path.join(root, "vllm")):
            for f in sorted(files):
                if f.endswith(".py"):
                    full = os.path.join(dirpath, f)
                    self.trees[os.path.relpath(full, root)] = parse(full)
        self.aliases = {}  # name -> AST expression
        self.classes = {}  # name -> (file, {field: (annotation, default, doc)})
        for rel, tree in sorted(self.trees.items()):
            self._collect(rel, tree)

    def label(self, rel):
        c = self.commits.get(rel)
        return f"{rel}@{c}" if c else rel

    def _collect(self, rel, tree):
        def module_assign(stmt):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                self.aliases.setdefault(stmt.targets[0].id, stmt.value)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                self.aliases.setdefault(stmt.target.id, stmt.value)

        for stmt in tree.body:
            module_assign(stmt)
            if isinstance(stmt, ast.If) and ast.unparse(stmt.test) == "TYPE_CHECKING":
                for s in stmt.orelse:  # the run-time branch
                    module_assign(s)
            if isinstance(stmt, ast.ClassDef):
                fields = {}
                body = stmt.body
                for i, s in enumerate(body):
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                        doc = None
                        if i + 1 < len(body) and isinstance(body[i + 1], ast.Expr) and isinstance(body[i + 1].value, ast.Constant) \
                                and isinstance(body[i + 1].value.value, str):
                            doc = body[i + 1].value.value
                        fields[s.target.id] = (s.annotation, s.value, doc)
                self.classes.setdefault(stmt.name, (rel, fields, stmt))


# ---------------------------------------------------------------- type hints (get_type_hints)

def hints_of(node, src, seen=frozenset()):
    """The flattened set of type hints of an annotation, as _compute_kwargs sees them."""
    out = []
    if node is None:
        return [("other", "?")]
    if isinstance(node, ast.Constant):
        if node.value is None:
            return [("none",)]
        if isinstance(node.value, str):  # forward reference
            return hints_of(ast.parse(node.value, mode="eval").body, src, seen)
        return [("other", repr(node.value))]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return hints_of(node.left, src, seen) + hints_of(node.right, src, seen)
    if isinstance(node, ast.Attribute):
        return [("other", ast.unparse(node))]
    if isinstance(node, ast.Name):
        n = node.id
        if n in BUILTIN_SCALARS:
            return [(n,)]
        if n == "Any":
            return [("other", "Any")]
        if n in src.aliases and n not in seen:
            return hints_of(src.aliases[n], src, seen | {n})
        if n.endswith("Config") or n in src.classes and n.endswith("Args"):
            return [("dataclass", n)]
        return [("other", n)]
    if isinstance(node, ast.Subscript):
        base = ast.unparse(node.value)
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base in ("SkipValidation", "Annotated", "InitVar", "ClassVar"):
            return hints_of(args[0], src, seen)
        if base in ("Optional",):
            return hints_of(args[0], src, seen) + [("none",)]
        if base in ("Union",):
            return [h for a in args for h in hints_of(a, src, seen)]
        if base == "Literal":
            return [("literal", tuple(literal_values(args, src, seen)))]
        if base in ("list", "set", "List", "Set", "Sequence"):
            return [("list" if base.lower() != "set" else "set", args[0])]
        if base in ("tuple", "Tuple"):
            return [("tuple", tuple(args))]
        if base in ("dict", "Dict", "Mapping"):
            return [("dict",)]
        if base == "type":
            return [("type",)]  # type[X]: a builtins GenericAlias, neither str nor non-builtin
        return [("other", base)]
    return [("other", ast.unparse(node))]


def literal_values(args, src, seen):
    vals = []
    for a in args:
        if isinstance(a, ast.Constant):
            vals.append(a.value)
        elif isinstance(a, ast.Name) and a.id in src.aliases and a.id not in seen:
            for h in hints_of(src.aliases[a.id], src, seen | {a.id}):
                if h[0] == "literal":
                    vals.extend(h[1])
        else:
            raise ValueError(f"cannot evaluate Literal argument {ast.unparse(a)}")
    return vals


def kinds(hints):
    return {h[0] for h in hints}


def derive(hints, name, src, human_readable_ints):
    """argparse kwargs as _compute_kwargs builds them: dict with type/choices/nargs/action."""
    k = kinds(hints)
    nonbuiltin = "other" in k or "dataclass" in k
    kw = {}
    if "dataclass" in k:
        kw["type"] = "json"
    elif "bool" in k:
        kw["action"] = "boolean_optional"
    elif "literal" in k:
        vals = next(h[1] for h in hints if h[0] == "literal")
        kw["type"] = type(vals[0]).__name__
        if "str" not in k:
            kw["choices"] = sorted(vals)
    elif k & {"tuple", "list", "set"}:
        h = next(h for h in hints if h[0] in ("tuple", "list", "set"))
        elem = h[1][0] if h[0] == "tuple" else h[1]
        eh = hints_of(elem, src)
        ek = kinds(eh)
        if "literal" in ek:
            vals = next(x[1] for x in eh if x[0] == "literal")
            kw["type"] = type(vals[0]).__name__
            kw["choices"] = sorted(vals)
        elif len(eh) > 1:
            kw["type"] = "str"  # list[int | str] -> str
        else:
            kw["type"] = eh[0][0] if eh[0][0] in ("int", "float", "str") else "str"
        kw["nargs"] = "+" if h[0] != "tuple" or any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in h[1]) \
            else len(h[1])
    elif "int" in k:
        kw["type"] = "human_readable_int" if name in human_readable_ints else "int"
    elif "float" in k:
        kw["type"] = "float"
    elif "dict" in k and ("str" in k or nonbuiltin):
        kw["type"] = "union_dict_and_str"
    elif "dict" in k:
        kw["type"] = "json"
    elif "str" in k or nonbuiltin:
        kw["type"] = "str"
    else:
        raise ValueError(f"unsupported type hints {hints} for {name}")
    if "none" in k and "bool" not in k:
        kw["optional"] = True
        if kw.get("choices"):
            kw["choices"] = kw["choices"] + ["None"]
    return kw


def summary(doc):
    if not doc:
        return None
    s = " ".join(doc.strip().split("\n\n", 1)[0].split())
    return s if len(s) <= MAX_HELP else s[: MAX_HELP - 3] + "..."


def const(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


# ---------------------------------------------------------------- walking add_cli_args

class Walker:
    def __init__(self, src, human_readable_ints, engine_fields):
        self.src = src
        self.hri = human_readable_ints
        self.engine_fields = engine_fields  # EngineArgs annotations (fallback)
        self.kwvars = {}  # X_kwargs -> config class name
        self.patches = {}  # (var, field) -> dict of overrides
        self.flags = []

    def field_kwargs(self, cls, field, file_label):
        info = self.src.classes.get(cls)
        where = None
        if info and field in info[1]:
            ann, default, doc = info[1][field]
            where = self.src.label(info[0])
        else:
            alias = {"cache_dtype": "kv_cache_dtype", "limit_per_prompt": "limit_mm_per_prompt", "policy": "scheduling_policy"}
            ef = self.engine_fields.get(alias.get(field, field))
            if ef is None:
                return {"unresolved": True}, None, f"{cls}.{field} not in the copies read"
            ann, default, doc = ef[0], None, None
            where = f"{file_label} (EngineArgs.{alias.get(field, field)} annotation; {cls} not read)" if not info else \
                f"{file_label} (EngineArgs.{alias.get(field, field)} annotation; {cls}.{field} not in {self.src.label(info[0])})"
        kw = derive(hints_of(ann, self.src), field, self.src, self.hri)
        d = const(default) if default is not None and not isinstance(default, ast.Call) else None
        if isinstance(default, ast.Call) and ast.unparse(default.func) in ("Field", "field"):
            for kwd in default.keywords:
                if kwd.arg == "default":
                    d = const(kwd.value)
        kw["default"] = d
        kw["help"] = summary(doc)
        # An alias defined in a file not read (e.g. ChatTemplateContentFormatOption in
        # vllm/entrypoints/chat_utils.py): its Literal choices are unknown, so none are checked.
        unknown = [h[1] for h in hints_of(ann, self.src) if h[0] == "other" and h[1].endswith("Option")]
        if unknown and "choices" not in kw:
            kw["choices_unresolved"] = f"{unknown[0]} (defined in a file not read)"
        return kw, where, None

    def add(self, call, file_label, loopvars=None):
        names = []
        for a in call.args:
            v = const(a) if not isinstance(a, ast.Name) else (loopvars or {}).get(a.id)
            if isinstance(a, ast.JoinedStr):
                v = None
            if isinstance(v, str):
                names.append(v)
        if not names or not names[0].startswith("-"):
            return  # positional (model_tag)
        kw, where, problem = {}, file_label, None
        for k in call.keywords:
            if k.arg is None:  # **X_kwargs["field"]
                sub = k.value
                if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and sub.value.id in self.kwvars:
                    field = const(sub.slice)
                    fkw, fwhere, problem = self.field_kwargs(self.kwvars[sub.value.id], field, file_label)
                    kw.update(fkw)
                    where = fwhere or where
                    kw.update(self.patches.get((sub.value.id, field), {}))
                    for key in [x for x, v in kw.items() if v is DELETED]:
                        del kw[key]
                continue
            val = k.value
            if k.arg == "type":
                t = ast.unparse(val)
                if loopvars and isinstance(val, ast.Name) and val.id in loopvars:
                    t = loopvars[val.id]
                kw["type"] = {"int": "int", "float": "float", "str": "str", "json.loads": "json"}.get(t, t)
                kw.pop("optional", None)
            elif k.arg == "action":
                a = ast.unparse(val)
                kw["action"] = {"argparse.BooleanOptionalAction": "boolean_optional"}.get(a, const(val) if isinstance(val, ast.Constant) else a)
            elif k.arg in ("nargs", "choices", "const", "default", "deprecated", "required"):
                v = const(val)
                if k.arg == "choices" and v is None:
                    kw["choices"] = None
                    kw["choices_unresolved"] = ast.unparse(val)
                elif k.arg == "default" and v is None and not (isinstance(val, ast.Constant)):
                    kw["default"] = None
                else:
                    kw[k.arg] = v
            elif k.arg == "help":
                if isinstance(val, (ast.Constant, ast.BinOp)) and const(val) is not None:
                    kw["help"] = summary(const(val))
                elif isinstance(val, ast.JoinedStr) and loopvars:
                    kw["help"] = "".join(str(loopvars.get(v.value.id, "")) if isinstance(v, ast.FormattedValue) else v.value
                                         for v in val.values)
        self.flags.append(make_flag(names, kw, where, problem))

    def walk(self, body, file_label, loopvars=None):
        for stmt in body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                t = stmt.targets[0]
                if isinstance(t, ast.Name) and isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) == "get_kwargs":
                    self.kwvars[t.id] = ast.unparse(stmt.value.args[0])
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Subscript) and isinstance(t.value.value, ast.Name) \
                        and t.value.value.id in self.kwvars:
                    key = (t.value.value.id, const(t.value.slice))
                    attr = const(t.slice)
                    v = ast.unparse(stmt.value)
                    if attr == "type":
                        self.patches.setdefault(key, {})["type"] = {
                            "json.loads": "json", "optional_type(json.loads)": "optional_json", "str": "str",
                            "optional_type(str)": "str"}.get(v, v)
                        self.patches[key]["optional"] = DELETED
                    elif attr == "action":
                        self.patches.setdefault(key, {})["action"] = const(stmt.value) or v
                    elif attr == "default":
                        self.patches.setdefault(key, {})["default"] = const(stmt.value)
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript) and const(stmt.target.slice) == "choices":
                # observability_kwargs[...]["choices"] += [",".join(p) for p in permutations(get_args(Alias), r=2)]
                var = stmt.target.value
                key = (var.value.id, const(var.slice))
                text = ast.unparse(stmt.value)
                alias = text.split("get_args(")[1].split(")")[0]
                vals = list(hints_of(ast.Name(alias), self.src)[0][1])
                self.patches.setdefault(key, {})["choices_extra"] = [",".join(p) for p in itertools.permutations(vals, r=2)]
            elif isinstance(stmt, ast.Delete):
                for t in stmt.targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Subscript) and t.value.value.id in self.kwvars:
                        self.patches.setdefault((t.value.value.id, const(t.value.slice)), {})[const(t.slice)] = DELETED
            elif isinstance(stmt, ast.If):
                self.walk(stmt.body, file_label, loopvars)  # e.g. `if not ("serve" in argv and "--help" in argv)`
            elif isinstance(stmt, ast.For) and isinstance(stmt.iter, (ast.List, ast.Tuple)):
                targets = [e.id for e in stmt.target.elts] if isinstance(stmt.target, ast.Tuple) else [stmt.target.id]
                for item in stmt.iter.elts:
                    vals = item.elts if isinstance(item, ast.Tuple) else [item]
                    lv = dict(loopvars or {})
                    for n, v in zip(targets, vals):
                        lv[n] = const(v) if isinstance(v, ast.Constant) else ast.unparse(v)
                    self.walk(stmt.body, file_label, lv)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
                    and stmt.value.func.attr == "add_argument":
                self.add(stmt.value, file_label, loopvars)


class _Deleted:
    pass


DELETED = _Deleted()


def make_flag(names, kw, where, problem):
    action = kw.get("action", "store")
    if action in ("store_true", "store_false", "boolean_optional", "append", "count", "store_const", "store"):
        pass
    long = [n for n in names if n.startswith("--")]
    dest = (long[0] if long else names[0]).lstrip("-").replace("-", "_")
    if action == "boolean_optional":
        names = names + [f"--no-{n[2:]}" for n in names if n.startswith("--")]
    typ = kw.get("type")
    if action in ("store_true", "store_false", "boolean_optional", "store_const", "count"):
        typ = None
    elif kw.get("optional") is True and typ in ("int", "float", "json", "human_readable_int"):
        typ = "optional_" + typ
    elif typ is None and action == "store":
        typ = "str"
    choices = kw.get("choices")
    if choices is not None and kw.get("choices_extra"):
        choices = choices + kw["choices_extra"]
    f = {"names": names, "dest": dest, "action": action, "type": typ, "nargs": kw.get("nargs"), "choices": choices}
    if kw.get("choices_unresolved"):
        f["choices_unresolved"] = kw["choices_unresolved"]
    if "const" in kw:
        f["const"] = kw["const"]
    f["default"] = kw.get("default") if isinstance(kw.get("default"), (str, int, float, bool, list, type(None))) else None
    f["required"] = bool(kw.get("required", False))
    f["deprecated"] = bool(kw.get("deprecated", False))
    if kw.get("help"):
        f["help"] = kw["help"]
    f["line"] = None
    f["file"] = where if not problem else f"{where} ({problem}: type not derived)"
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True, help="local copy of the vLLM files (see the module docstring)")
    ap.add_argument("--engine-version", required=True)
    ap.add_argument("--note", default="")
    ap.add_argument("--source-note", default="")
    ap.add_argument("--config-merge", default=None, help="prose: how the engine merges the --config file")
    ap.add_argument("--complete", choices=["true", "false"], default="false")
    ap.add_argument("--replacement", action="append", default=[], metavar="FLAG=REPLACEMENT",
                    help="the replacement of a deprecated flag (from its help text or the code that forwards it)")
    ap.add_argument("--set", action="append", default=[], metavar="FLAG:KEY=JSON",
                    help="hand-set one key of a flag (documented in the grammar's note), e.g. --set '--x:removed=true'")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    src = Source(a.src)
    au, ca = "vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py"
    au_tree = src.trees[au]
    hri = set()
    for node in ast.walk(au_tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "human_readable_ints" for t in node.targets):
            hri = set(const(node.value) or [])
    engine_fields = src.classes["EngineArgs"][1]

    w = Walker(src, hri, engine_fields)
    ca_tree = src.trees[ca]
    funcs = {n.name: n for n in ca_tree.body if isinstance(n, ast.FunctionDef)}
    mk = funcs["make_arg_parser"]
    # make_arg_parser: its own add_argument calls, then FrontendArgs.add_cli_args, then AsyncEngineArgs.add_cli_args
    own = [s for s in mk.body if isinstance(s, ast.Expr)]
    w.walk(own, src.label(ca))
    # FrontendArgs: one flag per field (for key, value in frontend_kwargs.items())
    fa_rel, fa_fields, fa_cls = src.classes["FrontendArgs"]
    fa_add = next(n for n in fa_cls.body if isinstance(n, ast.FunctionDef) and n.name == "add_cli_args")
    w.walk([s for s in fa_add.body if not isinstance(s, ast.For)], src.label(ca))
    var = next(k for k, v in w.kwvars.items() if v == "FrontendArgs")
    for field in fa_fields:
        call = ast.parse(f'g.add_argument("--{field.replace("_", "-")}", **{var}["{field}"])').body[0].value
        w.add(call, src.label(ca))
    ea = next(n for n in src.classes["EngineArgs"][2].body if isinstance(n, ast.FunctionDef) and n.name == "add_cli_args")
    w.walk(ea.body, src.label(au))
    aea = next(n for n in src.classes["AsyncEngineArgs"][2].body if isinstance(n, ast.FunctionDef) and n.name == "add_cli_args")
    w.walk(aea.body, src.label(au))

    repl = dict(r.split("=", 1) for r in a.replacement)
    for f in w.flags:
        if f["names"][0] in repl:
            f["replacement"] = repl[f["names"][0]]
    for item in a.set:
        flag, rest = item.split(":", 1)
        key, val = rest.split("=", 1)
        target = next(f for f in w.flags if f["names"][0] == flag)
        target[key] = json.loads(val)
    seen = {}
    for f in w.flags:
        for n in f["names"]:
            if n in seen:
                sys.exit(f"{n} declared twice")
            seen[n] = f

    files = sorted({f["file"].split(" ")[0] for f in w.flags} | {src.label(ca), src.label(au)})
    out = {
        "$schema": "../../grammar.schema.json",
        "source": "vllm-project/vllm " + " + ".join(files) + (f" {a.source_note}" if a.source_note else ""),
        "engine_version": a.engine_version,
        "extracted_by": "tools/profile/extract_vllm_args.py",
        "note": a.note,
        "prog": "vllm serve",
        "allow_abbrev": True,
        "complete": a.complete == "true",
        "config_flag": "--config",
        "config_merge": a.config_merge,
        "flags": w.flags,
    }
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    print(f"{a.out}: {len(w.flags)} flags, {len(seen)} option strings", file=sys.stderr)


if __name__ == "__main__":
    main()
