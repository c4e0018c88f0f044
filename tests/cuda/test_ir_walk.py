"""One definition of the IR's children: every traversal (closed forms' loop shapes, step
counts, guesses on unknown branches, macro relocation, common loads) walks the same nodes,
and every node class is paired with its closed-form handler or listed as lane-path-only."""

from __future__ import annotations

from cuda_helpers import kernel_pattern

import sectorviz.cuda.kernel  # noqa: F401  (loads every IR module)
from sectorviz.cuda import closed, ir, lanes
from sectorviz.cuda.closed import CLOSED_EXPRESSIONS, CLOSED_STATEMENTS, LANE_PATH_ONLY, loop_shape
from sectorviz.cuda.kernel import CudaKernel

ABSTRACT = {ir.Expr, ir.Stmt, ir.Pair}


def node_classes() -> set[type]:
    found: set[type] = set()
    stack = list(ir.NODE_TYPES)
    while stack:
        cls = stack.pop()
        if cls not in found:
            found.add(cls)
            stack.extend(cls.__subclasses__())
    return found - ABSTRACT


def test_every_node_class_has_a_closed_form_or_is_lane_path_only():
    closed_forms = set(CLOSED_EXPRESSIONS) | set(CLOSED_STATEMENTS)
    assert not closed_forms & LANE_PATH_ONLY
    assert node_classes() == closed_forms | LANE_PATH_ONLY
    carrier = next(v for v in vars(closed).values()  # the class holding the handlers
                   if isinstance(v, type) and hasattr(v, "e_const"))
    for name in {**CLOSED_EXPRESSIONS, **CLOSED_STATEMENTS}.values():
        assert callable(getattr(carrier, name)), name


ARRAYS = {name: {"dtype": dtype, "length": 1024}
          for name, dtype in (("a", "float32"), ("u", "float32"), ("o", "float32"))}


def body(source: str, arrays=None):
    kernel = CudaKernel(kernel_pattern(source, arrays=arrays or {"a": ARRAYS["a"]}))
    return kernel.program.body


def test_a_switch_sections_statements_are_children():
    tree = body("""__global__ void k(float *a) {
  for (int i = 0; i < 4; i++) {
    switch (threadIdx.x & 1) { case 0: a[i] = 1; break; default: return; }
  }
}""")
    nodes = list(ir.walk(tree))
    switches = [n for n in nodes if isinstance(n, lanes.Switch)]
    assert switches
    under = list(ir.walk(switches[0]))
    assert any(isinstance(n, ir.Leave) for n in under)
    assert any(isinstance(n, ir.Memory) for n in under)
    # a return inside the switch leaves the loop: it cannot be counted in closed form
    loop = next(n for n in nodes if isinstance(n, ir.Loop))
    assert loop_shape(loop).counter is None


def test_walk_visits_parents_first_and_once_when_asked():
    tree = body("__global__ void k(float *a) { a[threadIdx.x] = a[threadIdx.x + 1] * 2; }")
    nodes = list(ir.walk(tree))
    assert nodes[0] is tree
    for x in nodes:
        for child in ir.children(x):
            assert nodes.index(child) > nodes.index(x)
    assert len(list(ir.walk([tree, tree]))) == 2 * len(nodes)
    assert len(list(ir.walk([tree, tree], once=True))) == len({id(n) for n in nodes})
    assert ir.size(tree) == len(nodes)


def test_a_global_load_inside_a_per_thread_index_blocks_a_guess():
    """`t[a[i]]` on both sides of an unknown branch would count a load that may not run:
    the per-thread array's index is walked like any other child."""
    tree = body("""__global__ void k(const int *a, const float *u, float *o) {
  float t[4] = {0, 1, 2, 3};
  float v = 0;
  if (u[threadIdx.x] > 0) v = t[a[threadIdx.x] & 3];
  o[threadIdx.x] = v;
}""", {"a": {"dtype": "int32", "length": 1024}, "u": ARRAYS["u"], "o": ARRAYS["o"]})
    branch = next(n for n in ir.walk(tree) if isinstance(n, ir.If))
    assert not branch.guessable


def test_only_declared_pure_nodes_are_guessable():
    assert lanes.Shuffle not in ir.PURE and ir.Memory not in ir.PURE and ir.Loop not in ir.PURE
    assert {ir.Const, ir.Binary, ir.Assign, ir.Block, lanes.Local} <= ir.PURE
