"""Edits of the expression text in a pattern document, guided by the model's parser: finding
and renaming the uses of a param, let or array, and the "cover n threads" launch shape
`(n + b - 1) / b`. Documents are decoded pattern JSON with list launch dimensions (as the
form's `normalised` gives them); text is spliced at the columns the parser reports, so
spacing and everything else the user wrote stays as it was.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..model import PatternError
from ..model.expr import Binary, Call, Name, Num, Subscript, parse, walk
from .fields import get_in, place_of, set_in


def expressions(doc: dict) -> Iterator[tuple[tuple, Any, frozenset[str]]]:
    """(path, value, names bound inside it) for every expression of `doc`, in file order."""
    none: frozenset[str] = frozenset()

    def present(*paths: tuple) -> Iterator[tuple[tuple, Any, frozenset[str]]]:
        for path in paths:
            value = get_in(doc, path)
            if value is not None:
                yield path, value, none

    for key in ("grid", "block"):
        yield from present(*(("launch", key, i) for i in range(len(doc["launch"][key]))))
    for name, spec in doc["arrays"].items():
        p = ("arrays", name)
        yield from present(p + ("length",), p + ("shape", 0), p + ("shape", 1), p + ("ld",))
        if (spec.get("values") or {}).get("kind") == "expr":
            yield p + ("values", "expr"), spec["values"]["expr"], frozenset({"i"})
    yield from present(*(("let", name) for name in doc.get("let", {})), ("guard",))
    for k, acc in enumerate(doc.get("accesses", [])):
        p = ("accesses", k)
        for j in range(len(acc.get("loops", []))):
            yield from present(*(p + ("loops", j, key) for key in ("start", "stop", "step")))
        yield from present(p + ("index",), p + ("at", 0), p + ("at", 1), p + ("guard",))


def references(value: Any, name: str) -> list[int]:
    """0-based offsets where expression `value` reads `name` (a value or an array, `name[..]`)."""
    if not isinstance(value, str):
        return []
    try:
        tree = parse(value)
    except PatternError:
        return []
    return [n.col - 1 for n in walk(tree) if (isinstance(n, Name) and n.name == name)
            or (isinstance(n, Subscript) and n.array == name)]


def uses(doc: dict, name: str) -> list[str]:
    """The places that refer to param, let or array `name`, as PatternError names places."""
    places = [place_of(path) for path, value, bound in expressions(doc)
              if name not in bound and references(value, name)]
    return places + [f"accesses[{k}].array" for k, acc in enumerate(doc.get("accesses", []))
                     if acc.get("array") == name]


def taken(doc: dict) -> set[str]:
    """Every name the document declares: params, arrays, lets and loop variables."""
    names = {*doc.get("params", {}), *doc["arrays"], *doc.get("let", {})}
    return names | {loop["var"] for acc in doc.get("accesses", [])
                    for loop in acc.get("loops", [])}


def fresh_name(doc: dict, stem: str) -> str:
    """stem1, stem2, ...: the first that no declaration of `doc` uses."""
    names = taken(doc)
    return next(f"{stem}{k}" for k in range(1, len(names) + 2) if f"{stem}{k}" not in names)


def rename_refusal(doc: dict, old: str, new: str) -> str | None:
    """Why `old` cannot become `new` (one line), or None."""
    if not (new.isidentifier() and new.isascii()):
        return f"{new!r} is not a valid name (letters, digits, _)"
    if new != old and new in taken(doc):
        return f"{new!r} is already a name in this pattern"
    return None


def renamed_text(value: Any, old: str, new: str) -> Any:
    """`value` with every reference to `old` spelled `new`; other text as it was."""
    text = value
    for at in sorted(references(value, old), reverse=True):
        text = text[:at] + new + text[at + len(old):]
    return text


def rename(doc: dict, key: str, old: str, new: str) -> None:
    """Rename doc[key][old] (params, let or arrays) to `new` in place, keeping its order, and
    every reference to it: expressions and the `array` of accesses."""
    doc[key] = {(new if k == old else k): v for k, v in doc[key].items()}
    for path, value, bound in list(expressions(doc)):
        if old not in bound and references(value, old):
            set_in(doc, path, renamed_text(value, old, new))
    for acc in doc.get("accesses", []):
        if acc.get("array") == old:
            acc["array"] = new


# ---------------------------------------------------------------- cover n threads


def _atom(value: Any) -> str:
    """An expression as text, parenthesized unless it is a single operand."""
    text = str(value)
    try:
        single = isinstance(parse(text), (Num, Name, Call, Subscript))
    except PatternError:
        single = False
    return text if single else f"({text})"


def cover_grid(n: Any, block: Any) -> str:
    """Grid x that launches at least n threads in blocks of `block`: `(n + b - 1) / b`."""
    b = _atom(block)
    return f"({_atom(n)} + {b} - 1) / {b}"


def _squashed(text: str) -> str:
    return "".join(text.split())


def cover_n(grid_x: Any, block_x: Any) -> str | None:
    """n when grid x is `cover_grid(n, block_x)` (spacing aside), else None."""
    if not isinstance(grid_x, str):
        return None
    try:
        tree = parse(grid_x)
    except PatternError:
        return None
    match tree:
        case Binary("/", Binary("-", Binary("+", _, _, plus), Num(1), _), _):
            n = grid_x[grid_x.index("(") + 1:plus - 1].strip()
            for candidate in (n, n[1:-1].strip()):  # as written, or without the parens we add
                if candidate and _squashed(cover_grid(candidate, block_x)) == _squashed(grid_x):
                    return candidate
    return None
