"""Retrievers for agent frameworks, over a cef knowledge base in this process or behind ``cef serve http``.

* :mod:`cef.adapters.langchain` — ``CefRetriever``, a LangChain ``BaseRetriever``
  (``pip install 'cef-context[langchain]'``);
* :mod:`cef.adapters.llamaindex` — ``CefRetriever``, a LlamaIndex ``BaseRetriever``
  (``pip install 'cef-context[llamaindex]'``).

Both share :class:`~cef.adapters.base.CefRetrieverOptions` (where to retrieve
from and every retrieval option) and return the same metadata per document.
Nothing here imports a framework until its module is imported.
"""
