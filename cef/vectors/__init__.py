"""In-process vector indexes (the embedded default)."""

from cef.vectors.exact import ExactVectorIndex

__all__ = ["ExactVectorIndex"]
