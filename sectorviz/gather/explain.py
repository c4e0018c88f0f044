"""(pattern, one warp) -> why each of its instructions costs what it costs (scene.explain),
with the warp's shared detail computed here."""

from __future__ import annotations

from ..model import Pattern
from ..model.listing import listing_of
from ..model.one_warp import shared_warp_detail
from ..model.values import WarpDetail
from ..scene import explain


def explanations(pattern: Pattern, detail: WarpDetail, instruction: int | None = None,
                 run: int = 0) -> tuple[str, ...]:
    """The explanation of every global instruction in the warp of `detail`."""
    return explain.explanations(listing_of(pattern), detail, instruction, run)


def shared_explanations(pattern: Pattern, warp: int, instruction: int | None = None,
                        run: int = 0) -> tuple[str, ...]:
    """The explanation of every shared instruction in `warp`."""
    return explain.shared_explanations(listing_of(pattern), shared_warp_detail(pattern, warp),
                                       instruction, run)
