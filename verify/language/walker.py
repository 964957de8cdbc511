"""A walker base class: dispatch on a node's class to ``walk_<class>``."""
from __future__ import annotations

from typing import Any

from verify.errors import SourceLoc, VerifyError

__all__ = ["Walker", "UnsupportedNode"]


class UnsupportedNode(VerifyError, TypeError):
    """A walker met a node kind it does not handle."""

    def __init__(self, kind: str, loc: SourceLoc):
        self.kind, self.loc = kind, loc
        super().__init__(f"{loc}: error: unsupported expression '{kind}'")


class Walker:
    """Calls ``self.walk_<NodeClass>(node, *args)``.

    Subclasses implement one method per node class they support; anything else
    raises :class:`UnsupportedNode` with the node's location. Each subclass finds a
    node class's method once (a compiler walks hundreds of thousands of nodes).
    """

    _methods: dict[type, Any] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._methods = {}

    def walk(self, node: Any, *args: Any) -> Any:
        method = self._methods.get(type(node))
        if method is None:
            method = getattr(type(self), "walk_" + type(node).__name__, None)
            if method is None:
                raise UnsupportedNode(type(node).__name__, getattr(node, "loc", SourceLoc("?")))
            self._methods[type(node)] = method
        return method(self, node, *args)
