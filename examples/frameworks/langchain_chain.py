"""A LangChain chain over cef, end to end and offline: retriever → prompt → chat model → answer.

    python examples/frameworks/langchain_chain.py
    python examples/frameworks/langchain_chain.py --server http://127.0.0.1:8080 --api-key KEY "who treats Amira?"

``FakeListChatModel`` (langchain-core's own offline fake) stands in for a real
chat model; put ``ChatOpenAI(...)`` or ``ChatOllama(...)`` in its place.
"""

from __future__ import annotations

import sys

from common import embedder, knowledge_base, parse_args
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough

from cef import CefError
from cef.adapters.langchain import CefRetriever

PROMPT = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "Answer from the context only. Each passage starts with the graph path that explains why it "
            "was retrieved.\n\n{context}",
        ),
        ("human", "{question}"),
    ]
)


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(f"[{d.metadata['path'] or d.metadata['node_id']}]\n{d.page_content}" for d in docs)


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    llm = FakeListChatModel(responses=["(the chat model's answer: swap FakeListChatModel for a real model)"])
    with knowledge_base(args) as location:
        retriever = CefRetriever(
            knowledge_base=location,
            api_key=args.api_key,
            embedder=embedder(args),
            k=args.k,
            strategy=args.strategy,
            depth=args.depth,
        )
        # the chain returns the documents with the answer ("answering with sources")
        answer = RunnableLambda(lambda x: {"context": format_docs(x["docs"]), "question": x["question"]})
        chain = RunnableParallel(docs=retriever, question=RunnablePassthrough()).assign(
            answer=answer | PROMPT | llm | StrOutputParser()
        )
        try:
            out = chain.invoke(args.question)
        except CefError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            retriever.close()
    print(f"question: {args.question}\n")
    for i, d in enumerate(out["docs"], 1):
        m = d.metadata
        print(f"{i}. {m['chunk_id'] or m['node_id']}  score {m['score']:.3f}  strategy {m['strategy']}")
        print(f"   path: {m['path']}")
        print(f"   {d.page_content}")
    print(f"\nanswer: {out['answer']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
