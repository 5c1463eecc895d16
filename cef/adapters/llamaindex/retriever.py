"""``CefRetriever``: a LlamaIndex ``BaseRetriever`` over a cef knowledge base, sync and async."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cef.adapters.base import CEF_METADATA_KEYS, CefRetrieverOptions, Hit
from cef.engine.kb import KnowledgeBase
from cef.errors import MissingExtraError

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.constants import DEFAULT_SIMILARITY_TOP_K
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import (
        NodeRelationship,
        NodeWithScore,
        QueryBundle,
        RelatedNodeInfo,
        TextNode,
    )
except ModuleNotFoundError as exc:
    raise MissingExtraError(
        "cef.adapters.llamaindex", "llamaindex", (exc.name or "llama_index").split(".")[0]
    ) from None

__all__ = ["CefRetriever"]

#: metadata the LLM does not need to read (the path stays: it explains the passage)
_HIDDEN_FROM_LLM = [k for k in CEF_METADATA_KEYS if k != "path"]


class CefRetriever(BaseRetriever):
    """Retrieve ranked chunks, with the graph paths that explain them, from a cef knowledge base.

    ``knowledge_base`` is an open :class:`cef.KnowledgeBase`, a file path, a
    ``postgresql://`` URL, or the URL of a running ``cef serve http`` (then
    ``api_key``). The other keyword arguments are the retrieval options of
    :class:`~cef.adapters.base.CefRetrieverOptions` (``strategy``, ``depth``,
    ``relation_types``, ``targets``, ``as_of``, ``scope``,
    ``max_token_budget``, ``traversal``, ``search_kwargs``, ...); a bad one
    raises pydantic's ``ValidationError`` here.

    Each :class:`~llama_index.core.schema.NodeWithScore` holds a ``TextNode``
    whose id is the chunk's id, whose source is the cef node the chunk is
    linked to, and whose metadata has ``score``, ``chunk_id``, ``node_id``,
    ``strategy``, ``path`` and ``explanation`` (only ``path`` and the chunk's
    own metadata are shown to the LLM).

    Example:
        .. code-block:: python

            retriever = CefRetriever("kb.db", similarity_top_k=4, depth=2)
            engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
    """

    def __init__(
        self,
        knowledge_base: KnowledgeBase | str | Path,
        *,
        similarity_top_k: int = DEFAULT_SIMILARITY_TOP_K,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
        **options: Any,
    ) -> None:
        if similarity_top_k < 1:
            raise ValueError(f"similarity_top_k must be at least 1, not {similarity_top_k}")
        self.options = CefRetrieverOptions(knowledge_base=knowledge_base, **options)
        self.similarity_top_k = similarity_top_k
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [_node(h) for h in self.options.search(query_bundle.query_str, self.similarity_top_k)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = await self.options.asearch(query_bundle.query_str, self.similarity_top_k)
        return [_node(h) for h in hits]

    def close(self) -> None:
        """Close what the retriever opened (a knowledge base it opened from a path, an HTTP client)."""
        self.options.close()


def _node(hit: Hit) -> NodeWithScore:
    relationships = {}
    if hit.node_id is not None and hit.node_id != hit.id:
        relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=hit.node_id)
    node = TextNode(
        id_=hit.id,
        text=hit.text,
        metadata=hit.metadata,
        relationships=relationships,
        excluded_llm_metadata_keys=list(_HIDDEN_FROM_LLM),
        excluded_embed_metadata_keys=list(CEF_METADATA_KEYS),
    )
    return NodeWithScore(node=node, score=hit.score)
