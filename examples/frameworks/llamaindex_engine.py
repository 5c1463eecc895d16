"""A LlamaIndex query engine over cef, end to end and offline: retriever → response synthesizer → answer.

    python examples/frameworks/llamaindex_engine.py
    python examples/frameworks/llamaindex_engine.py --server http://127.0.0.1:8080 --api-key KEY "who treats Amira?"

``MockLLM`` (llama-index-core's own offline mock) answers with the prompt it
was given, so the "answer" shows exactly what a real LLM would read; put
``OpenAI(...)`` or ``Ollama(...)`` in its place.
"""

from __future__ import annotations

import sys

from common import embedder, knowledge_base, parse_args
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

from cef import CefError
from cef.adapters.llamaindex import CefRetriever


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    with knowledge_base(args) as location:
        retriever = CefRetriever(
            location,
            api_key=args.api_key,
            embedder=embedder(args),
            similarity_top_k=args.k,
            strategy=args.strategy,
            depth=args.depth,
        )
        engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
        try:
            response = engine.query(args.question)
        except CefError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            retriever.close()
    print(f"question: {args.question}\n")
    for i, n in enumerate(response.source_nodes, 1):
        m = n.node.metadata
        print(f"{i}. {n.node.node_id}  score {n.score:.3f}  strategy {m['strategy']}")
        print(f"   path: {m['path']}")
    print(f"\nwhat the LLM read (MockLLM echoes its prompt):\n{response}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
