"""How a facade exposes a component's method without writing its signature a second time.

``KnowledgeBase.index_node = delegate("indexer", KnowledgeIndexer.index_node)``
makes ``kb.index_node`` *be* ``kb.indexer.index_node``: one signature, one
docstring, declared on the component; a change there is the facade's change.
On the class, the attribute is the component's function, so ``help()``,
:func:`inspect.signature` and the API reference (``scripts/gen_api_docs.py``)
show that signature and docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

__all__ = ["Delegate", "delegate"]

P = ParamSpec("P")
R = TypeVar("R")


class Delegate(Generic[P, R]):
    """A method of a facade that is its component's bound method (see the module docstring)."""

    def __init__(self, component: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.component = component
        self.method = method
        self.__doc__ = method.__doc__
        self.__wrapped__ = method

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Callable[Concatenate[Any, P], R]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Callable[..., R]:
        if obj is None:
            return self.method
        bound: Callable[P, R] = getattr(getattr(obj, self.component), self.method.__name__)
        return bound


def delegate(component: str, method: Callable[Concatenate[Any, P], R]) -> Delegate[P, R]:
    """Expose ``method`` (a function of the class of ``obj.<component>``) on the facade ``obj``."""
    return Delegate(component, method)
