#!/usr/bin/env python3
"""Extract SGLang's launch-command grammar (every CLI flag) from saved source files.

Inputs (read with the standard library's ast module; nothing is imported or run):
  --root DIR        a local copy of the SGLang tree at one commit, e.g. /tmp/sglang-src/<sha>.
                    The script looks for, in order:
                    * python/sglang/srt/arg_groups/fields/*.py  (main, 2026: one dataclass per
                      namespace; flags derived from `A[T, "help" | Arg(...)]` annotations the way
                      arg_groups/arg_utils.py:add_cli_args_from_dataclass derives them)
                    * python/sglang/srt/server_args.py  (ServerArgs: annotated dataclass fields
                      as above, plus every parser.add_argument(...) call inside add_cli_args)
                    * python/sglang/srt/arg_groups/choices.py  (module constants used as choices)
                    * python/sglang/srt/arg_groups/argparse_actions.py  (the nargs each custom
                      Action's __init__ defaults to)
  --manual FILE     optional: take the parser.add_argument(...) calls of add_cli_args from this
                    file instead of <root>/.../server_args.py (used for main, whose own
                    server_args.py is not stored; the flags then carry "file")
  --commit SHA      the commit the copies were read at (goes into "source")
  --engine-version  e.g. v0.5.3 or main@1234567
  --source-note     free text appended to "source"; --note sets "note"
  --out FILE        the grammar JSON (schema: docs/engine-grammar-notes.md)

Choices given as module constants (NAME = [...], NAME = OTHER, A + [...]) are resolved across
all files read; a choices expression that cannot be resolved is kept as text in
"choices_unresolved". Defaults are kept where they are literals (or constant arithmetic).
"""
import argparse
import ast
import json
import os
import re
import sys

SA = "python/sglang/srt/server_args.py"
FIELDS = "python/sglang/srt/arg_groups/fields"
CHOICES = "python/sglang/srt/arg_groups/choices.py"
ACTIONS = "python/sglang/srt/arg_groups/argparse_actions.py"
UNRESOLVED = object()
# Custom argparse.Action classes -> the nargs their __init__ defaults to (read from ACTIONS), so a
# flag declared with action=DeprecatedStoreTrueAction and no nargs is known to take no value.
ACTION_NARGS = {}


def read_action_nargs(path):
    if not os.path.exists(path):
        return {}
    out = {}
    for node in ast.walk(parse(path)):
        if not isinstance(node, ast.ClassDef):
            continue
        for fn in node.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                args = fn.args.args[len(fn.args.args) - len(fn.args.defaults):]
                for a, d in zip(args, fn.args.defaults):
                    if a.arg == "nargs" and isinstance(d, ast.Constant):
                        out[node.name] = d.value
    return out


def parse(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), path)


def collect_constants(trees, consts):
    """Module-level NAME = <literal list/tuple/set/str> (and NAME = OTHER / A + B) in every file."""
    for tree in trees:
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                val = const_value(node.value, consts)
                if val is not UNRESOLVED:
                    consts[node.targets[0].id] = val


FSTRING_VARS = {}  # --fstring NAME=VALUE: values for f-string option names (f"--{prefix}policy")


def const_value(node, consts):
    """Evaluate a literal, a known constant name, or + / * of those; UNRESOLVED otherwise."""
    if node is None:
        return UNRESOLVED
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and dotted(v.value) in FSTRING_VARS:
                parts.append(FSTRING_VARS[dotted(v.value)])
            else:
                return UNRESOLVED
        return "".join(parts)
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        pass
    if isinstance(node, ast.Name):
        return consts.get(node.id, UNRESOLVED)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult, ast.Pow)):
        a, b = const_value(node.left, consts), const_value(node.right, consts)
        if a is UNRESOLVED or b is UNRESOLVED:
            return UNRESOLVED
        try:
            return a + b if isinstance(node.op, ast.Add) else a * b if isinstance(node.op, ast.Mult) else a ** b
        except TypeError:
            return UNRESOLVED
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        vals = [const_value(e, consts) for e in node.elts]
        return UNRESOLVED if any(v is UNRESOLVED for v in vals) else list(vals)
    if isinstance(node, ast.Subscript):
        base, idx = const_value(node.value, consts), const_value(node.slice, consts)
        try:
            return UNRESOLVED if UNRESOLVED in (base, idx) else list(base)[idx]
        except (TypeError, IndexError, KeyError):
            return UNRESOLVED
    if isinstance(node, ast.Call) and dotted(node.func) in ("list", "sorted") and len(node.args) == 1:
        v = const_value(node.args[0], consts)
        return sorted(v) if v is not UNRESOLVED and dotted(node.func) == "sorted" else v
    return UNRESOLVED


def jsonable(v):
    if isinstance(v, (set, frozenset)):  # sorted: a set's order changes from run to run
        return sorted(jsonable(x) for x in v)
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return v


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return None


def string_of(node):
    """Concatenated text of a help expression (str, implicit concat, parenthesised, + of strs, f-str)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(string_of(v) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return string_of(node.left) + string_of(node.right)
    return ""


def type_name(node):
    """argparse type= / Arg(type_parser=) as the schema's string."""
    if node is None:
        return None
    name = dotted(node)
    if name in ("str", "int", "float", "bool"):
        return name
    if name == "json.loads":
        return "json"
    if name:
        return name.split(".")[-1]
    if isinstance(node, ast.Lambda):
        return "lambda"
    return ast.unparse(node)


def action_name(node):
    if node is None:
        return "store"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {"store_true": "store_true", "store_false": "store_false", "store_const": "store_const",
                "append": "append", "append_const": "append_const", "count": "count",
                "store": "store", "extend": "extend", "help": "help", "version": "version"}.get(node.value, node.value)
    name = dotted(node) or ast.unparse(node)
    if name.endswith("BooleanOptionalAction"):
        return "boolean_optional"
    return name.split(".")[-1]


DEPRECATED_HELP = re.compile(r"^\W*deprecated|[(\[]deprecated|\bis deprecated\b|\bdeprecated alias\b", re.I)


def is_deprecated(action, help_text):
    """A Deprecated* action, or help that calls this flag deprecated ("[Deprecated] ...", "... is
    deprecated", "Deprecated alias ..."; not "replaces the deprecated --x")."""
    return "deprecated" in action.lower() or bool(DEPRECATED_HELP.search(help_text))


def make_flag(names, dest, action, typ, nargs, choices, default, required, help_text, line, consts, choices_node, extra=None):
    if nargs is None and action in ACTION_NARGS:
        nargs = ACTION_NARGS[action]
    flag = {"names": names, "dest": dest, "action": action, "type": typ, "nargs": nargs}
    if choices_node is not None and choices is UNRESOLVED:
        flag["choices"] = None
        flag["choices_unresolved"] = ast.unparse(choices_node)
    else:
        flag["choices"] = jsonable(choices) if choices is not None else None
    flag["default"] = jsonable(default) if default not in (UNRESOLVED, MISSING) else None
    flag["required"] = bool(required)
    flag["deprecated"] = is_deprecated(action, help_text)
    if action == "boolean_optional":
        flag["names"] = names + ["--no-" + n[2:] for n in names if n.startswith("--")]
    flag["line"] = line
    if help_text == "==SUPPRESS==":
        flag["help_suppressed"] = True
    if extra:
        flag.update(extra)
    return flag


# ---- dataclass fields: A[T, "help"] / A[T, Arg(...)] (arg_utils.add_cli_args_from_dataclass) ----

def unwrap_optional(t):
    """Optional[X] / Union[X, None] -> (X, True)."""
    if isinstance(t, ast.Subscript) and dotted(t.value) in ("Optional", "typing.Optional"):
        return t.slice, True
    if isinstance(t, ast.Subscript) and dotted(t.value) in ("Union", "typing.Union"):
        elts = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
        rest = [e for e in elts if not (isinstance(e, ast.Constant) and e.value is None)]
        if len(rest) == 1 and len(rest) != len(elts):
            return rest[0], True
    return t, False


def literal_values(t):
    if isinstance(t, ast.Subscript) and dotted(t.value) in ("Literal", "typing.Literal"):
        elts = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
        return [ast.literal_eval(e) for e in elts]
    return None


def infer_type(t):
    name = dotted(t)
    return name if name in ("str", "int", "float") else "str"


def field_flag(stmt, field_default, consts, file_label):
    """One flag from an annotated dataclass field, or None (no Arg metadata / no_cli)."""
    ann = stmt.annotation
    if not (isinstance(ann, ast.Subscript) and dotted(ann.value) in ("A", "Annotated", "typing.Annotated")):
        return None
    parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    raw_type, metas = parts[0], parts[1:]
    meta = None
    for m in metas:
        if isinstance(m, ast.Call) and dotted(m.func) == "Arg":
            meta = {k.arg: k.value for k in m.keywords}
            break
        if string_of(m) or (isinstance(m, ast.Constant) and isinstance(m.value, str)):
            meta = {"help": m}
            break
    if meta is None:
        return None
    if "no_cli" in meta and const_value(meta["no_cli"], consts) is True:
        return None
    field = stmt.target.id
    cli = const_value(meta.get("cli_name"), consts)
    cli = cli if isinstance(cli, str) else "--" + field.replace("_", "-")
    aliases = const_value(meta.get("aliases"), consts)
    names = [cli] + (list(aliases) if isinstance(aliases, (list, tuple)) else [])
    help_text = string_of(meta["help"]) if "help" in meta else ""
    if "help" in meta and dotted(meta["help"]) == "argparse.SUPPRESS":
        help_text = "==SUPPRESS=="
    default = field_default
    choices_node = meta.get("choices")
    choices = const_value(choices_node, consts) if choices_node is not None else None
    tp = meta.get("type_parser")
    nargs = const_value(meta.get("nargs"), consts) if "nargs" in meta else None
    extra = {"file": file_label} if file_label else {}
    if "const" in meta:
        cv = const_value(meta["const"], consts)
        extra["const"] = jsonable(cv) if cv is not UNRESOLVED else ast.unparse(meta["const"])
    line = stmt.lineno
    if "action" in meta:
        act = action_name(meta["action"])
        akw = meta.get("action_kwargs")
        akw_d = {}
        if isinstance(akw, ast.Dict):
            akw_d = {k.value: v for k, v in zip(akw.keys, akw.values) if isinstance(k, ast.Constant)}
        typ = type_name(akw_d["type"]) if "type" in akw_d else (None if act == "boolean_optional" else None)
        n = const_value(akw_d["nargs"], consts) if "nargs" in akw_d else None
        return make_flag(names, field, act, typ, n, choices, default, False, help_text, line, consts,
                         choices_node, extra)
    inner, _ = unwrap_optional(raw_type)
    lits = literal_values(inner)
    if lits is not None:
        if choices_node is None or choices is UNRESOLVED:
            if choices_node is not None:
                extra["choices_expr"] = ast.unparse(choices_node)
            choices, choices_node = lits, None
        typ = type_name(tp) if tp is not None else infer_type(ast.Name(type(lits[0]).__name__) if lits and lits[0] is not None else ast.Name("str"))
        if lits and lits[0] is None:  # Literal[None, "a", ...]: type(None) -> str
            typ = type_name(tp) if tp is not None else "str"
        return make_flag(names, field, "store", typ, nargs, choices, default, False, help_text, line, consts,
                         choices_node, extra)
    if isinstance(inner, ast.Subscript) and dotted(inner.value) in ("List", "list", "typing.List") and tp is None:
        elem = inner.slice
        return make_flag(names, field, "store", infer_type(elem), nargs or "+", choices, default, False, help_text,
                         line, consts, choices_node, extra)
    if dotted(inner) == "bool":
        return make_flag(names, field, "store_true", None, None, None, default, False, help_text, line, consts,
                         None, extra)
    typ = type_name(tp) if tp is not None else infer_type(inner)
    req = const_value(meta.get("required"), consts) if "required" in meta else None
    required = req is True or (req is None and field_default is MISSING)
    return make_flag(names, field, "store", typ, nargs, choices, default, required, help_text, line, consts,
                     choices_node, extra)


MISSING = object()


def field_default_of(stmt, consts):
    if stmt.value is None:
        return MISSING
    v = stmt.value
    if isinstance(v, ast.Call) and dotted(v.func) in ("dataclasses.field", "field"):
        kw = {k.arg: k.value for k in v.keywords}
        if "default" in kw:
            return const_value(kw["default"], consts)
        fac_node = kw.get("default_factory")
        if isinstance(fac_node, ast.Lambda):  # default_factory=lambda: list(CONST)
            return const_value(fac_node.body, consts)
        fac = dotted(fac_node) if fac_node is not None else None
        return {"list": [], "dict": {}, "set": []}.get(fac, UNRESOLVED)
    return const_value(v, consts)


def dataclass_fields(tree, consts, file_label=None, class_names=None):
    flags, defaults = [], {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or (class_names and node.name not in class_names):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                d = field_default_of(stmt, consts)
                defaults[stmt.target.id] = d
                f = field_flag(stmt, d, consts, file_label)
                if f is not None:
                    flags.append(f)
    return flags, defaults


# ---- explicit parser.add_argument(...) calls inside add_cli_args ----

def add_argument_calls(tree, consts, defaults, file_label=None, no_lines=False):
    flags, positionals = [], []
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "add_cli_args"]
    calls = []
    for fn in funcs:
        calls += [c for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                  and c.func.attr == "add_argument"]
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        names = [const_value(a, consts) for a in call.args]
        if any(not isinstance(n, str) for n in names) or not names:
            names = [n if isinstance(n, str) else ast.unparse(a) for n, a in zip(names, call.args)]
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        act = action_name(kw.get("action"))
        dest = const_value(kw["dest"], consts) if "dest" in kw else None
        if not isinstance(dest, str):
            longs = [n for n in names if n.startswith("--")]
            dest = (longs or names)[0].lstrip("-").replace("-", "_")
        default = UNRESOLVED
        if "default" in kw:
            d = kw["default"]
            if isinstance(d, ast.Attribute) and isinstance(d.value, ast.Name) and d.attr in defaults:
                default = defaults.get(d.attr, UNRESOLVED)
                default = UNRESOLVED if default is MISSING else default
            else:
                default = const_value(d, consts)
        elif act == "store_true":
            default = False
        elif act == "store_false":
            default = True
        help_text = string_of(kw["help"]) if "help" in kw else ""
        choices_node = kw.get("choices")
        choices = const_value(choices_node, consts) if choices_node is not None else None
        nargs = const_value(kw["nargs"], consts) if "nargs" in kw else None
        typ = type_name(kw.get("type")) if "type" in kw else (
            None if act in ("store_true", "store_false", "store_const", "count", "boolean_optional", "DeprecatedAction",
                            "DeprecatedStoreTrueAction", "DeprecatedStoreConstAction", "append_const") else "str")
        required = const_value(kw.get("required"), consts) is True if "required" in kw else False
        extra = {"file": file_label} if file_label else {}
        if "new_flag" in kw:
            nf = const_value(kw["new_flag"], consts)
            if isinstance(nf, str):
                extra["replacement"] = nf
        for ck in ("const", "const_value"):  # DeprecatedStoreConstAction takes const_value=
            if ck in kw:
                cv = const_value(kw[ck], consts)
                extra["const"] = jsonable(cv) if cv is not UNRESOLVED else ast.unparse(kw[ck])
        if "error_message" in kw:  # DeprecatedAction(error_message=...): the flag is rejected
            extra["removed"] = True
        if "default" in kw and dotted(kw["default"]) == "argparse.SUPPRESS":
            extra["default_suppressed"] = True
        flag = make_flag(names, dest, act, typ, nargs, choices, default, required, help_text,
                         None if no_lines else call.lineno, consts, choices_node, extra)
        (flags if names[0].startswith("-") else positionals).append(flag)
    return flags, positionals


def allow_abbrev_of(trees):
    for tree in trees:
        for c in ast.walk(tree):
            if isinstance(c, ast.Call) and dotted(c.func) in ("argparse.ArgumentParser", "ArgumentParser"):
                for k in c.keywords:
                    if k.arg == "allow_abbrev" and isinstance(k.value, ast.Constant):
                        return bool(k.value.value)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--engine-version", required=True)
    ap.add_argument("--manual", help="file whose add_cli_args add_argument calls to use")
    ap.add_argument("--manual-label", help="how --manual's flags name their file")
    ap.add_argument("--manual-no-lines", action="store_true",
                    help="--manual is an excerpt: its flags get line null (line in the real file unknown)")
    ap.add_argument("--fstring", action="append", default=[], metavar="NAME=VALUE",
                    help="value of a variable used in f-string option names")
    ap.add_argument("--drop", action="append", default=[], help="option string registered only conditionally: leave out")
    ap.add_argument("--extra-consts", action="append", default=[],
                    help="another file whose module constants may resolve --manual's choices (root's files win)")
    ap.add_argument("--source-note", default="")
    ap.add_argument("--note", default=None)
    ap.add_argument("--config-flag", default=None)
    ap.add_argument("--config-merge", default=None)
    ap.add_argument("--allow-abbrev", choices=["true", "false"], help="override (the parser is built in a launcher)")
    args = ap.parse_args()
    ACTION_NARGS.update(read_action_nargs(os.path.join(args.root, ACTIONS)))

    root = args.root
    FSTRING_VARS.update(kv.split("=", 1) for kv in args.fstring)
    sa_path = os.path.join(root, SA)
    fields_dir = os.path.join(root, FIELDS)
    field_files = sorted(os.path.join(fields_dir, f) for f in os.listdir(fields_dir)
                         if f.endswith(".py") and f != "__init__.py") if os.path.isdir(fields_dir) else []
    const_files = [p for p in [os.path.join(root, CHOICES), sa_path] if os.path.exists(p)] + field_files
    if args.manual:
        const_files.append(args.manual)
    trees = {p: parse(p) for p in const_files}
    consts = {}
    collect_constants([parse(p) for p in args.extra_consts], consts)
    collect_constants(trees.values(), consts)

    flags, defaults, read = [], {}, []
    for p in field_files:  # namespace modules, in file order, fields in source order
        rel = os.path.relpath(p, root)
        fl, d = dataclass_fields(trees[p], consts, rel)
        flags += fl
        defaults.update(d)
        read.append(rel)
    if os.path.exists(sa_path):
        fl, d = dataclass_fields(trees[sa_path], consts, SA if field_files else None, {"ServerArgs"})
        flags += fl
        defaults.update(d)
        read.append(SA)
    manual = args.manual or (sa_path if os.path.exists(sa_path) else None)
    positionals = []
    if manual:
        label = args.manual_label or (SA if field_files or args.manual else None)
        if args.manual and not os.path.exists(sa_path) and not field_files:  # a standalone parser module
            _, d = dataclass_fields(trees[manual], consts)
            defaults.update(d)
            read.append(os.path.relpath(manual, root))
            label = None
        mfl, positionals = add_argument_calls(trees[manual], consts, defaults, label, args.manual_no_lines)
        flags += [f for f in mfl if f["names"][0] not in args.drop]
    # Order = argparse registration order: dataclass fields first (add_cli_args_from_dataclass is
    # called at the top of add_cli_args), then the explicit add_argument calls in source order.

    seen = {}
    for f in flags:
        for n in f["names"]:
            if n in seen:
                print(f"warning: {n} defined twice (lines {seen[n]} and {f['line']})", file=sys.stderr)
            seen[n] = f["line"]

    if args.allow_abbrev:
        allow_abbrev = args.allow_abbrev == "true"
    else:
        allow_abbrev = allow_abbrev_of(trees.values())
    out = {
        "$schema": "../../grammar.schema.json",
        "source": f"sgl-project/sglang {' + '.join(read)}@{args.commit}"
                  + (" (ServerArgs.add_cli_args)" if SA in read else "")
                  + (f" {args.source_note}" if args.source_note else ""),
        "engine_version": args.engine_version,
        "extracted_by": "tools/profile/extract_argparse.py",
        "allow_abbrev": allow_abbrev,
        "config_flag": args.config_flag if args.config_flag else (
            "--config" if any(f["names"][0] == "--config" for f in flags) else None),
        "config_merge": args.config_merge,
    }
    if args.note:
        out["note"] = args.note
    out["flags"] = flags
    out["positionals"] = positionals
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{args.out}: {len(flags)} flags, {len(positionals)} positionals", file=sys.stderr)


if __name__ == "__main__":
    main()
