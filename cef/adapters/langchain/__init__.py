"""A LangChain retriever over a cef knowledge base (``pip install 'cef-context[langchain]'``).

from cef.adapters.langchain import CefRetriever

retriever = CefRetriever(knowledge_base="kb.db", k=5, strategy="hybrid", depth=2)
docs = retriever.invoke("which drugs interact with warfarin?")
"""

from cef.adapters.langchain.retriever import CefRetriever

__all__ = ["CefRetriever"]
