"""Fuzzing CUDA kernels (issue 15, item 7, CUDA half): the example kernels with garbage tokens
inserted, spans deleted, duplicated or nested, and generated kernels with random nesting,
macro and device-function chains and loops that may never end. `report` must exit 0 with
its sheet, or exit 2 with exactly one stderr line naming the file: never a traceback, a
hang or a memory blow-up.

A case is a pattern text whose `kernel.code` holds the source, run with a small work budget
(the budget's own limits are tested in test_cuda_limits.py) by the runner and checker of
tests/test_fuzz_patterns.py. This is the short run: a few cases in-process under a time
limit, two in a subprocess under a time and memory limit; benchmarks/bench_fuzz.py
(target `kernels`) runs the same cases for minutes.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import CASE_SECONDS, broken_promise, run_report, run_report_subprocess

from sectorviz.paths import examples_dir

BUDGETS = (["--budget", "2e6"], ["--budget", "2e6", "--warp", "1"], ["--budget", "2e7"])


# ---------------------------------------------------------------- cases from the examples


def example_kernels() -> list[tuple[dict, str]]:
    """(pattern document, kernel source) of each CUDA example, shrunk to a few thousand
    threads so that a case runs in a fraction of a second."""
    cases = []
    for path in sorted(examples_dir().glob("*-cuda.sectorviz.json")):
        doc = json.loads(path.read_text())
        doc["params"] = {k: max(32, v // 64) if v >= 1024 else v
                         for k, v in doc.get("params", {}).items()}
        source = (path.parent / doc["kernel"].pop("source")).read_text()
        cases.append((doc, source))
    return cases


EXAMPLES = example_kernels()
GARBAGE = ["(", ")", "{", "}", "[", "]", ";", ",", "for (;;)", "while (1)", "do", "if (", "else",
           "return", "break;", "continue;", "#define", "#define M(x) M(x)+M(x)\n", "\n#if 1\n",
           "#endif\n", "__device__", "__global__", "__shared__", "int", "float*", "unsigned long",
           "threadIdx.x", "blockIdx.y", "1e999", "0x", "99999999999999999999999999", "0b2",
           "'\\0'", "'ab'", '"', "/*", "*/", "//", "\\\n", "<<", ">>=", "?", ":", "::", "->", ".",
           "...", "template <int N>", ">", "&", "*", "sizeof(", "(int)", "static_cast<int>(",
           "__syncthreads();", "__shfl_sync(0xffffffff, ", "\x00", "\u202e", "\U0001f642",
           "\t", "\r", "goto x;", "x:", "namespace n {", "extern \"C\" {", "auto", "= ", "++", "--"]


@st.composite
def mutated_examples(draw) -> str:
    """An example kernel with 1 to 8 edits: garbage inserted, a span deleted, duplicated or
    wrapped in many parentheses or braces."""
    doc, source = draw(st.sampled_from(EXAMPLES))
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(source)))
        end = min(len(source), at + draw(st.integers(0, 80)))
        edit = draw(st.sampled_from(["insert", "delete", "duplicate", "nest"]))
        if edit == "insert":
            source = source[:at] + draw(st.sampled_from(GARBAGE)) + source[at:]
        elif edit == "delete":
            source = source[:at] + source[end:]
        elif edit == "duplicate":
            source = source[:end] + source[at:end] * draw(st.integers(1, 4)) + source[end:]
        else:
            n = draw(st.sampled_from([1, 20, 199, 201, 600]))
            left, right = draw(st.sampled_from([("(", ")"), ("{", "}"), ("[", "]")]))
            source = source[:at] + left * n + source[at:end] + right * n + source[end:]
    doc = dict(doc, kernel={"code": source, "function": doc["kernel"]["function"]})
    return json.dumps(doc)


# ---------------------------------------------------------------- generated kernels


NUMBERS = ["0", "1", "2", "3", "31", "32", "1023", "1024", "-1", "2147483647", "4294967295u",
           "0x7fffffffffffffff", "1.5f"]


def expressions(names: list[str], depth: int) -> st.SearchStrategy[str]:
    """Integer-ish C expressions over `names`, the thread index and loads of `a`."""
    leaf = st.sampled_from(names + ["threadIdx.x", "blockIdx.x", "blockDim.x", "warpSize"]
                           + NUMBERS)
    if depth <= 0:
        return leaf
    sub = expressions(names, depth - 1)
    op = st.sampled_from(["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", "==", "&&"])
    return st.one_of(
        leaf,
        st.tuples(sub, op, sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(sub, sub, sub).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
        sub.map(lambda e: f"a[({e}) & 1023]"),
        sub.map(lambda e: f"min({e}, 7)"),
        st.tuples(st.sampled_from([1, 20, 150, 250]), sub).map(
            lambda t: "(" * t[0] + t[1] + ")" * t[0]))


LOOP_HEADS = ["for (;;)", "while (1)", "for (int j = 0; j < {n}; j++)",
              "for (int j = {e}; j != 0; j += 2)", "for (unsigned long long j = 1; j; j <<= 1)",
              "while (i < {n})"]


@st.composite
def statements(draw, depth: int) -> str:
    """A C statement: stores, loads, branches and loops that may never end, nested blocks."""
    e = lambda: draw(expressions(["i", "s"], 2))  # noqa: E731 (reads better inline)
    kinds = ["store", "assign", "if"] + (["loop", "do", "block", "nest"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    inner = (lambda: draw(statements(depth - 1))) if depth > 0 else (lambda: "s += 1;")
    if kind == "store":
        return f"a[({e()}) & 1023] = {e()};"
    if kind == "assign":
        return draw(st.sampled_from([f"s += {e()};", f"i = {e()};", "break;", "continue;",
                                     "return;", "__syncthreads();"]))
    if kind == "if":
        return f"if ({e()}) {{ {inner()} }} else {{ {inner()} }}"
    if kind == "loop":
        head = draw(st.sampled_from(LOOP_HEADS)).format(
            n=draw(st.sampled_from(["3", "100", "2147483647"])), e=e())
        return f"{head} {{ {inner()} i++; }}"
    if kind == "do":
        return f"do {{ {inner()} i++; }} while ({draw(st.sampled_from(['1', 'i < 5', e()]))});"
    if kind == "block":
        return "{ " + " ".join(draw(statements(depth - 1)) for _ in range(draw(
            st.integers(1, 3)))) + " }"
    n = draw(st.sampled_from([3, 10, 50, 150, 1000]))
    wrap = draw(st.sampled_from(["{", "if (threadIdx.x < 64) "]))
    return wrap * n + inner() + ("}" * n if wrap == "{" else "")


@st.composite
def preludes(draw) -> tuple[str, list[str]]:
    """Chains of macros and device functions, each using the one before up to 3 times ->
    (their source, calls a kernel can make)."""
    lines, calls = [], []
    for kind in draw(st.lists(st.sampled_from(["macro", "object", "device"]), max_size=2)):
        n, fan = draw(st.integers(1, 14)), draw(st.integers(1, 3))
        tag = f"{kind[0]}{len(lines)}_"
        for k in range(n):
            prev = (f"{tag}{k - 1}" + ("" if kind == "object" else "(x + 1)")) if k else (
                "1" if kind == "object" else "x")
            body = " + ".join([prev] * fan) if k else prev
            if kind == "macro":
                lines.append(f"#define {tag}{k}(x) ({body})")
            elif kind == "object":
                lines.append(f"#define {tag}{k} ({body})")
            else:
                lines.append(f"__device__ int {tag}{k}(int x) {{ return {body}; }}")
        calls.append(f"{tag}{n - 1}" + ("" if kind == "object" else "(i)"))
    return "\n".join(lines), calls


@st.composite
def generated_kernels(draw) -> str:
    prelude, calls = draw(preludes())
    body = " ".join(draw(statements(draw(st.integers(0, 3)))) for _ in range(draw(
        st.integers(1, 4))))
    uses = " ".join(f"s += {c};" for c in calls)
    variables = " ".join(f"int v{k} = i * {k};" for k in range(draw(st.sampled_from(
        [0, 10, 3000]))))
    code = (f"{prelude}\n__global__ void k(float* a, int n) {{\n  int i = threadIdx.x;\n"
            f"  int s = 0;\n  {variables}\n  {uses}\n  {body}\n  a[(s + i) & 1023] = 1;\n}}\n")
    doc = {"format": "sectorviz.pattern/1", "name": "fuzzed",
           "launch": {"grid": [draw(st.sampled_from([1, 3, 4096]))],
                      "block": [draw(st.sampled_from([32, 48, 256]))]},
           "params": {"n": 100},
           "arrays": {"a": {"dtype": "float32", "length": 1024,
                            "values": {"kind": "expr", "expr": "i % 7"}}},
           "kernel": {"code": code, "function": "k"}}
    return json.dumps(doc)


def kernel_texts() -> st.SearchStrategy[str]:
    """Pattern texts with a fuzzed kernel: mutated examples or generated kernels."""
    return st.one_of(mutated_examples(), generated_kernels())


# ---------------------------------------------------------------- the short run


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(text=kernel_texts(), args=st.sampled_from(BUDGETS))
def test_report_keeps_its_promise_on_fuzzed_kernels(tmp_path_factory, text, args):
    folder = tmp_path_factory.mktemp("fuzz")
    outcome = run_report(text, folder, args, CASE_SECONDS)
    assert broken_promise(outcome, folder) is None, text[:3000]


@settings(max_examples=2, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(text=generated_kernels())
def test_report_keeps_its_promise_in_a_subprocess(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("fuzz")
    outcome = run_report_subprocess(text, folder, list(BUDGETS[0]), CASE_SECONDS)
    assert broken_promise(outcome, folder) is None, text[:3000]


def test_the_examples_run_unchanged(tmp_path):
    """The shrunk examples themselves keep the promise with exit 0: mutations start from
    kernels that work."""
    for doc, source in EXAMPLES:
        doc = dict(doc, kernel={"code": source, "function": doc["kernel"]["function"]})
        outcome = run_report(json.dumps(doc), tmp_path, [], CASE_SECONDS)
        assert outcome.code == 0, (doc["name"], outcome.err)
