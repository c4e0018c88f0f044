"""Constructs seen in public kernels that once blocked them: namespace aliases in a body,
branches on loaded data that touch no memory, namespaced template calls, per-thread arrays
passed as pointers, values of vector arrays read by component, `return {};`."""

from __future__ import annotations

import pytest

from cuda_helpers import elements
from sectorviz.model.errors import PatternError

BIG = {"a": {"dtype": "float32", "length": 1 << 16}}


def test_namespace_alias_in_a_function_body_names_cooperative_groups():
    got = elements("""#include <cooperative_groups.h>
    __device__ int where() {
        namespace grp = cooperative_groups;
        grp::thread_block block = grp::this_thread_block();
        grp::thread_block_tile<8> tile = grp::tiled_partition<8>(block);
        return tile.meta_group_rank() * 100 + tile.thread_rank();
    }
    __global__ void k(float *a) {
        namespace g = ::cooperative_groups;
        a[where() + g::this_thread_block().thread_rank()] = 0;
    }""", arrays=BIG)
    assert got == [("line 10: a[where() + g::this_thread_block().thread_rank()]",
                    [t // 8 * 100 + t % 8 + t for t in range(32)])]


def test_namespace_alias_ends_with_its_block():
    with pytest.raises(PatternError, match="line 5.*grp::this_thread_block"):
        elements("""#include <cooperative_groups.h>
        __global__ void k(float *a) {
            { namespace grp = cooperative_groups; }
            a[threadIdx.x] = 0;
            a[grp::this_thread_block().thread_rank()] = 0;
        }""", arrays=BIG)


def test_namespace_alias_of_another_namespace_is_refused_naming_it():
    with pytest.raises(PatternError, match="line 2.*alias of 'std'"):
        elements("""__global__ void k(float *a) {
            namespace s = std;
            a[threadIdx.x] = 0;
        }""", arrays=BIG)
