"""The rest of the module: version, catalog, backends, probe, and the type stubs."""
import ast
import os
import subprocess

import attnsel


def test_version_is_the_librarys(cli):
    path = os.environ["ATTNSEL_CLI"]
    first = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    assert first == f"attnsel {attnsel.version}"
    assert attnsel.__version__ == attnsel.version


def test_gpus():
    by_name = {g["name"]: g for g in attnsel.gpus()}
    assert by_name["H100"]["arch"] == "sm90" and by_name["H100"]["platform"] == "cuda"
    assert by_name["MI300X"]["platform"] == "rocm"


def test_backends_per_engine():
    sglang = {(b["name"], b["slot"]) for b in attnsel.backends()}
    assert ("fa3", "attention") in sglang and ("triton", "linear") in sglang
    assert "FLASHINFER_MLA" in {b["name"] for b in attnsel.backends("vllm")}
    assert {(b["name"], b["slot"]) for b in attnsel.backends(engine_version="0.4.6")} != sglang


def test_probe_reports_what_it_found():
    report = attnsel.probe(timeout=5)
    assert isinstance(report.devices, list) and len(report) == len(report.devices)
    assert len(report.to_dict()["devices"]) == len(report.devices)
    assert all(d["platform"] in ("cuda", "rocm") for d in report.devices)
    assert report.text


def test_stubs_declare_every_public_name():
    package = os.path.dirname(attnsel.__file__)
    assert os.path.exists(os.path.join(package, "py.typed"))
    with open(os.path.join(package, "__init__.pyi")) as f:
        tree = ast.parse(f.read())
    declared = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            declared.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            declared.add(node.target.id)
        elif isinstance(node, ast.Assign):
            declared.update(t.id for t in node.targets)
    assert set(attnsel.__all__) <= declared


def test_the_docstring_examples_run():
    import doctest
    failures, tried = doctest.testmod(attnsel, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried > 0 and failures == 0
