"""Constant and shared memory checked against the limits of the PTX's target before anything
is allocated (hand-written PTX: no compiler needed)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from ptx_helpers import ptx_pattern

from sectorviz.engine.ptx.kernel import CompiledKernel
from sectorviz.engine.ptx.limits import block_shared_limit, compute_capability
from sectorviz.model.errors import PatternError

GUIDE = '"Technical Specifications per Compute Capability"'


def kernel_with(declaration: str, access: str, target: str = "sm_90",
                dynamic: int | None = None) -> CompiledKernel:
    """A kernel that declares `declaration` and reads it at its line 5 with `access`."""
    ptx = f"""
.version 9.0
.target {target}
.address_size 64
{declaration}
.visible .entry t(.param .u64 t_param_0)
{{
    .reg .b32 %r<4>;
    .reg .f32 %f<2>;
    .loc 1 5 3
    {access}
    ret;
}}
"""
    pattern, compiled = ptx_pattern(ptx, "t", ("out",),
                                    {"out": {"dtype": "float32", "length": 32}})
    if dynamic is not None:
        pattern = replace(pattern, kernel={**pattern.kernel, "dynamic_shared_bytes": dynamic})
    return CompiledKernel(pattern, compiled)


def refusal(*args, **kwargs) -> PatternError:
    with pytest.raises(PatternError) as err:
        kernel_with(*args, **kwargs)
    return err.value


def test_a_giant_constant_array_is_refused_at_its_line_before_it_is_allocated():
    err = refusal(".const .align 4 .b8 c[3400000000];", "ld.const.f32 %f1, [c+4];")
    assert err.place == "line 5" and err.column == 3
    assert err.message.startswith("the __constant__ variables total 3,400,000,000 bytes; "
                                  "sm_90 has 65,536 (64 KiB) of constant memory")
    assert GUIDE in err.message


def test_64_kib_of_constant_memory_is_taken():
    kernel_with(".const .align 4 .b8 c[65536];", "ld.const.f32 %f1, [c+4];")


@pytest.mark.parametrize("size", [49153, 2**40])
@pytest.mark.parametrize("dynamic", [None, 200_704])  # the launch's bytes are not static ones
def test_static_shared_memory_past_48_kib_is_refused(size, dynamic):
    err = refusal(f".shared .align 4 .b8 s[{size}];", "ld.shared.f32 %f1, [s];",
                  dynamic=dynamic)
    assert err.place == "line 5"
    assert err.message.startswith(f"the __shared__ variables total {size:,} bytes; a block's "
                                  "static shared memory is at most 49,152 (48 KiB)")


def test_dynamic_shared_memory_past_the_targets_block_limit_is_refused():
    extern = ".extern .shared .align 16 .b8 d[];"
    kernel_with(extern, "ld.shared.f32 %f1, [d];", dynamic=200 * 1024)  # sm_90: 227 KiB
    err = refusal(extern, "ld.shared.f32 %f1, [d];", target="sm_80", dynamic=200 * 1024)
    assert err.place == "line 5"
    assert err.message.startswith("the block's shared memory totals 204,800 bytes (0 static, "
                                  "204,800 dynamic); sm_80 allows at most 166,912 (163 KiB)")


@pytest.mark.parametrize("target, cc, most", [
    ("sm_90", (9, 0), 227), ("sm_90a", (9, 0), 227), ("sm_80", (8, 0), 163),
    ("sm_86", (8, 6), 99), ("sm_75", (7, 5), 64), ("sm_100f", (10, 0), 227),
    ("sm_120", (12, 0), 99), ("sm_61", (6, 1), 48), ("sm_999", (99, 9), 227)])
def test_block_shared_memory_per_compute_capability(target, cc, most):
    assert compute_capability(target) == cc
    assert block_shared_limit(target) == most * 1024


def test_a_module_without_a_target_gets_the_most_any_gpu_gives():
    assert compute_capability("") is None and block_shared_limit("") == 227 * 1024
