"""The relation paths' text vectors are embedded at ingest and kept beside the store, so that a
query in a new process embeds its question, not the schema's paths."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import cef
from cef.embed.base import BatchedEmbedder
from cef.ingest.pipeline import ingest_sources
from cef.retrieve.pathscore import path_scorer

CLINICAL = Path(__file__).resolve().parents[3] / "examples" / "clinical" / "graph.yaml"
QUESTION = "Which medications interact with warfarin?"


class Letters:
    """A tiny deterministic embedder (letter counts) that records every text it embeds."""

    name, dim = "letters", 26

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str], *, progress: object = None) -> np.ndarray:
        self.seen.extend(texts)
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def _saved_texts(path: Path) -> set[str]:
    with np.load(path, allow_pickle=False) as data:
        return {str(t) for t in data["texts"].tolist()}


def test_ingest_embeds_the_path_texts_and_a_new_process_embeds_only_the_question(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with cef.open(db, embedder=Letters()) as kb:  # type: ignore[arg-type]
        ingest_sources(kb, [str(CLINICAL)], extract=False)
        saved = kb.retriever.state.vectors_path("path-text")
    assert saved is not None and saved.exists()
    on_disk = _saved_texts(saved)
    assert len(on_disk) > 50  # the paths of the clinical schema, with their example answers

    emb = Letters()
    with cef.open(db, embedder=emb) as kb:  # type: ignore[arg-type]
        found = kb.retrieve(QUESTION)
        assert found.nodes and found.nodes[0].path is not None  # answered along a relation path
        assert len(path_scorer(kb.retriever.state).vectors) >= len(on_disk)
    assert emb.seen, "the question itself is embedded"
    assert not set(emb.seen) & on_disk, "a saved path text was embedded again"


def test_path_texts_a_query_embeds_are_saved_on_close(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with cef.open(db, embedder=Letters()) as kb:  # type: ignore[arg-type]
        ingest_sources(kb, [str(CLINICAL)], extract=False)
        saved = kb.retriever.state.vectors_path("path-text")
    assert saved is not None
    saved.unlink()  # as if ingested by a version that did not keep them

    first = Letters()
    with cef.open(db, embedder=first) as kb:  # type: ignore[arg-type]
        kb.retrieve(QUESTION)
    assert saved.exists(), "what the query embedded is kept for the next process"
    kept = _saved_texts(saved)
    assert kept and kept <= set(first.seen)

    second = Letters()
    with cef.open(db, embedder=second) as kb:  # type: ignore[arg-type]
        again = kb.retrieve(QUESTION)
    assert not set(second.seen) & kept
    assert set(second.seen) < set(first.seen)
    assert again.nodes


def test_without_an_embedder_nothing_is_saved(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with cef.open(db, embedder=None) as kb:
        ingest_sources(kb, [str(CLINICAL)], extract=False)
        assert kb.retriever.prepare_paths() == 0
        assert kb.retrieve(QUESTION).nodes
        saved = kb.retriever.state.vectors_path("path-text")
    assert saved is not None and not saved.exists()


class BatchedLetters(BatchedEmbedder):
    """Letter counts through the adapters' base class; records each call to the model."""

    name = "letters"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return 26

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return Letters().embed(texts) + 1e-3  # never all zeros


class QueryPrefixed(BatchedLetters):
    """An embedder that embeds questions differently from documents (an instruction prefix)."""

    def embed_query(self, text: str) -> np.ndarray:
        return super().embed([f"query: {text}"])[0]


def test_the_question_is_embedded_in_the_same_call_as_the_masked_questions(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with cef.open(db, embedder=BatchedLetters()) as kb:
        ingest_sources(kb, [str(CLINICAL)], extract=False)
    emb = BatchedLetters()
    with cef.open(db, embedder=emb) as kb:
        found = kb.retrieve(QUESTION)
    assert found.nodes and found.nodes[0].path is not None
    first = emb.calls[0]  # masked questions and the question: one batch
    assert QUESTION in first and any(t != QUESTION and t.startswith("Which medications") for t in first)
    assert [QUESTION] not in emb.calls  # never a call of its own


def test_an_embedder_with_its_own_question_form_keeps_it(tmp_path: Path) -> None:
    db = tmp_path / "kb.db"
    with cef.open(db, embedder=QueryPrefixed()) as kb:
        ingest_sources(kb, [str(CLINICAL)], extract=False)
    emb = QueryPrefixed()
    with cef.open(db, embedder=emb) as kb:
        assert kb.retrieve(QUESTION).results
    texts = [t for call in emb.calls for t in call]
    assert f"query: {QUESTION}" in texts and QUESTION not in texts


def test_deeper_paths_are_scored_without_embedding_their_texts(tmp_path: Path) -> None:
    """A 4-hop question: warm-up embeds the paths up to 3 hops; the 4-hop candidates are scored
    from their hops' texts, and the path the question names end to end still answers it."""
    from cef import Batch, Edge, Node, RelationType

    rels = ["OWNS", "HOSTS", "RUNS", "EMITS"]
    emb = Letters()
    with cef.open(tmp_path / "kb.db", embedder=emb) as kb:  # type: ignore[arg-type]
        kb.index_batch(
            Batch(
                relation_types=[RelationType(name=r) for r in rels],
                nodes=[Node(id=i, label="Thing", properties={"name": n}) for i, n in NAMES.items()]
                + [Node(id=f"x{i}", label="Thing", properties={"name": f"Spare {i}"}) for i in range(4)],
                edges=[
                    Edge(relation_type=r, source=s, target=t)
                    for r, s, t in zip(rels, "abcd", "bcde", strict=True)
                ]
                # side branches, so that 1- to 3-hop paths of other shapes compete
                + [Edge(relation_type=rels[i], source="abcd"[i], target=f"x{i}") for i in range(4)],
            )
        )
        kb.warm()
        scorer = path_scorer(kb.retriever.state)
        deep = {scorer.texts_of(p)[0] for p in candidate_four_hop_paths(kb)}
        assert deep and not deep & scorer.vectors.keys()  # warm-up embedded no 4-hop text
        emb.seen.clear()
        found = kb.retrieve(
            "Acme Group owns a cloud that hosts a service that runs a job: what does it emit?"
        )
    assert found.nodes and found.nodes[0].node.id == "e"
    assert found.nodes[0].path is not None and len(found.nodes[0].path.relation_types) == 4
    assert not deep & set(emb.seen), "a 4-hop path text was embedded to answer"


NAMES = {
    "a": "Acme Group",
    "b": "Borealis Cloud",
    "c": "Cobalt Service",
    "d": "Delta Job",
    "e": "Ember Metric",
}


def candidate_four_hop_paths(kb: cef.KnowledgeBase) -> list[tuple]:  # type: ignore[type-arg]
    from cef.retrieve.pathshapes import schema_paths

    return [p for p in schema_paths(kb.retriever.state.graph, 4) if len(p) == 4]
