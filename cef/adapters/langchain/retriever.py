"""``CefRetriever``: a LangChain ``BaseRetriever`` over a cef knowledge base, sync and async."""

from __future__ import annotations

from typing import Any

from cef.adapters.base import CefRetrieverOptions, Hit
from cef.errors import MissingExtraError

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ModuleNotFoundError as exc:
    raise MissingExtraError(
        "cef.adapters.langchain", "langchain", (exc.name or "langchain_core").split(".")[0]
    ) from None

__all__ = ["CefRetriever"]


class CefRetriever(BaseRetriever, CefRetrieverOptions):
    """Retrieve ranked chunks, with the graph paths that explain them, from a cef knowledge base.

    ``knowledge_base`` is an open :class:`cef.KnowledgeBase`, a file path, a
    ``postgresql://`` URL, or the URL of a running ``cef serve http`` (then
    ``api_key``). Every retrieval option is a field (see
    :class:`~cef.adapters.base.CefRetrieverOptions`) and may be overridden for
    one call: ``retriever.invoke(question, k=3, strategy="graph", as_of=...)``.

    Each :class:`~langchain_core.documents.Document` has the chunk's id as
    ``id`` and ``score``, ``chunk_id``, ``node_id``, ``strategy``, ``path`` and
    ``explanation`` in its ``metadata``. Errors are cef errors
    (:class:`cef.CefError`) or pydantic's ``ValidationError`` for a bad option;
    LangChain reports them to ``on_retriever_error`` and raises them.

    Example:
        .. code-block:: python

            retriever = CefRetriever(knowledge_base="kb.db", k=4, depth=2)
            chain = retriever | format_docs | prompt | llm
    """

    k: int = 4
    """How many documents to return (cef's ``top_k``)."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        k = kwargs.pop("k", self.k)
        return [_document(h) for h in self.search(query, k, **kwargs)]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        k = kwargs.pop("k", self.k)
        return [_document(h) for h in await self.asearch(query, k, **kwargs)]


def _document(hit: Hit) -> Document:
    return Document(id=hit.id, page_content=hit.text, metadata=hit.metadata)
