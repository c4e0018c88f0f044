"""The `kernel` keys of a kernel written in Python: a Triton launch's block is 32 x
num_warps (left out of `launch`), Triton's keys belong to Triton, and each is checked for
shape in one line."""

from __future__ import annotations

from typing import Any

import pytest

from sectorviz.model import PatternError
from sectorviz.model.pattern import pattern_from_dict


def doc(kernel: dict[str, Any], launch: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"format": "sectorviz.pattern/1", "params": {"n": 4096},
            "launch": launch or {"grid": ["n / 1024"]},
            "arrays": {"x": {"dtype": "float32", "length": "n"}},
            "kernel": {"function": "k", **kernel}}


def block(kernel: dict[str, Any]) -> str:
    return pattern_from_dict(doc(kernel)).block[0].text


def test_a_triton_block_is_32_threads_per_warp():
    assert block({"triton": "k.py"}) == "128"  # 4 warps by default
    assert block({"triton": "k.py", "num_warps": 8}) == "256"


@pytest.mark.parametrize("kernel, launch, place, words", [
    ({"triton": "k.py"}, {"grid": [4], "block": [128]}, "launch.block", "leave it out"),
    ({"numba": "k.py"}, {"grid": [4]}, "launch", "block"),
    ({"numba": "k.py", "num_warps": 4}, None, "kernel.num_warps", "only a Triton kernel"),
    ({"triton": "k.py", "num_warps": 3}, None, "kernel.num_warps", "a power of two"),
    ({"triton": "k.py", "num_stages": 0}, None, "kernel.num_stages", "expected 1 to 8"),
    ({"triton": "k.py", "constexprs": {"B": [1]}}, None, "kernel.constexprs", "number"),
    ({"triton": "k.py", "divisibility": {"n": 16}}, None, "kernel.divisibility", "true or"),
    ({"triton": "k.py", "flags": ["-DX"]}, None, "kernel", "leave out 'flags'"),
    ({"triton": "k.py", "source": "k.cu"}, None, "kernel", "exactly one of"),
])
def test_bad_keys_are_refused_in_one_line(kernel, launch, place, words):
    with pytest.raises(PatternError) as err:
        pattern_from_dict(doc(kernel, launch))
    assert err.value.place.startswith(place) and words in err.value.message
