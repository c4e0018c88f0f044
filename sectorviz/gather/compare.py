"""Two patterns (or two pattern files) -> their Comparison (scene.compare): each side's
listing, analysis and the selected warp's details gathered here, for `sectorviz compare`, the
exported slide and the app's comparison window alike."""

from __future__ import annotations

from typing import Callable

from ..model import Analysis, Pattern, PatternError, analyze, load_pattern, warp_detail
from ..model.assume import assuming
from ..model.listing import listing_of
from ..model.one_warp import shared_warp_detail
from ..model.pattern import with_kernel
from ..scene import compare as scene
from ..scene.compare import Comparison, Pair, Side


def side(pattern: Pattern, analysis: Analysis, warp: int) -> Side:
    """One analysed pattern and the selected warp (valid in it) -> its Side."""
    listing = listing_of(pattern)
    shared = shared_warp_detail(pattern, warp) if listing.shared_instructions else None
    return Side(listing, analysis, warp_detail(pattern, warp), shared)


def compare(a: Pattern, analysis_a: Analysis, b: Pattern, analysis_b: Analysis,
            warp: int = 0) -> Comparison:
    """Two analysed patterns and one warp index (valid in both) -> their Comparison."""
    return scene.comparison(side(a, analysis_a, warp), side(b, analysis_b, warp))


def match_instructions(a: Pattern, b: Pattern) -> tuple[Pair, ...]:
    """A's and B's global instructions -> pairs (scene.compare's rule)."""
    return scene.match_instructions(listing_of(a), listing_of(b))


def match_shared(a: Pattern, b: Pattern) -> tuple[Pair, ...]:
    """A's and B's shared instructions -> pairs (scene.compare's rule)."""
    return scene.match_shared(listing_of(a), listing_of(b))


class SideError(Exception):
    """Bad input in one compared file: `path` and the PatternError it gave."""

    def __init__(self, path: str, error: PatternError):
        super().__init__(f"{path}: {error}")
        self.path, self.error = path, error


def load_comparison(file_a: str, file_b: str, warp: int = 0,
                    progress: Callable[[int, int], None] | None = None,
                    include_dirs: tuple[str, ...] = (),
                    kernel_keys: tuple[dict[str, str | None], dict[str, str | None]] = ({}, {})
                    ) -> tuple[Comparison, tuple[Pattern, Pattern]]:
    """Two pattern files (which may also read files in `include_dirs`) -> their Comparison
    about `warp` and the two patterns read, spending the open work budget; a PatternError
    from either file (the warp out of its range too) as SideError. A side that is a CUDA
    kernel pattern gets its `kernel_keys` (engine, arch; None: as the file says), so one file
    can be compared with itself read by two engines; a side's `assume_values` key is applied
    (model.assume)."""
    sides, patterns = [], []
    for path, keys in zip((file_a, file_b), kernel_keys):
        try:
            pattern = load_pattern(path, include_dirs)
            if pattern.kernel is not None:
                pattern = with_kernel(pattern, "--engine", **keys)
            warps = listing_of(pattern).warps
            if not 0 <= warp < warps:
                raise PatternError("--warp", f"warp {warp} outside [0, {warps})")
            pattern, analysis, _ = assuming(pattern, pattern.assume_values,
                                            lambda p: analyze(p, progress=progress))
            sides.append(side(pattern, analysis, warp))
            patterns.append(pattern)
        except PatternError as err:
            raise SideError(path, err) from err
    a, b = patterns
    return scene.comparison(*sides), (a, b)


def side_pair(c: Comparison, file_a: str, key: str | None) -> Pair | None:
    """The pair of A's instruction `key`: a global one by index or name, else a shared one by
    name (None without a key); SideError naming `file_a` when it has none such."""
    if key is None:
        return None
    try:
        return c.pair_of(c.a.listing.index(key))
    except PatternError as err:
        shared = [i.name for i in c.a.listing.shared_instructions]
        if key not in shared:
            raise SideError(file_a, err) from err
        return next(p for p in c.shared_pairs if p.a == shared.index(key))
