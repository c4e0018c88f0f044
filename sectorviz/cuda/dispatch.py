"""Which compiler method handles each syntax node or built-in name, one table per family:
statements and expressions by tree-sitter node kind, built-in functions by name. A handler
registers itself where it is defined (`@EXPRESSIONS("binary_expression")`); a kind with no
entry is outside the subset. Handlers are called as `handler(compiler, node, ...)`."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

Handler = Callable[..., Any]
H = TypeVar("H", bound=Handler)


class Handlers:
    """One family's table: key (node kind or name) -> its handler."""

    def __init__(self, family: str):
        self.family = family
        self.by_key: dict[str, Handler] = {}

    def __call__(self, *keys: str) -> Callable[[H], H]:
        """A decorator registering the handler of `keys` (each handled once)."""
        def register(handler: H) -> H:
            for key in keys:
                if key in self.by_key:
                    raise ValueError(f"two {self.family} handlers for {key!r}")
                self.by_key[key] = handler
            return handler
        return register

    def get(self, key: str) -> Handler | None:
        return self.by_key.get(key)


STATEMENTS = Handlers("statement")
EXPRESSIONS = Handlers("expression")
BUILTINS = Handlers("built-in function")
