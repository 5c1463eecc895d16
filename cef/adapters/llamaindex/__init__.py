"""A LlamaIndex retriever over a cef knowledge base (``pip install 'cef-context[llamaindex]'``).

from cef.adapters.llamaindex import CefRetriever

retriever = CefRetriever("kb.db", similarity_top_k=5, strategy="hybrid", depth=2)
nodes = retriever.retrieve("which drugs interact with warfarin?")
"""

from cef.adapters.llamaindex.retriever import CefRetriever

__all__ = ["CefRetriever"]
