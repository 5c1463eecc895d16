"""Knowledge-graph question answering benchmark: triples in, entity answers out.

The data (``../shared/bench/metaqa/``) is a triple file (``kb.tsv.gz``: head,
relation, tail) and question files (``{"id", "question", "topic_entity",
"answers", "hops", "qtype"}``). :func:`load_triples` puts the triples into a
fresh knowledge base (entities as nodes named by their string, relations as
registered typed edges; no embeddings). Two modes answer the questions:

* ``pattern`` — :func:`pattern_for_relation_path` writes the
  :class:`~cef.patterns.GraphPattern` an LLM would write through the MCP tool,
  from the question's topic entity and gold relation path (:class:`RoleMap`
  turns a ``qtype`` such as ``actor_to_movie_to_director`` into relations and
  directions); the pattern engine runs it.
* ``text`` — :class:`TextAnswerer` uses only the question text: an entity
  mention (text in ``[brackets]`` is an entity mention; else the longest known
  name in the text, see :class:`NameIndex`), the relation paths of length 1..3
  that exist from it, each verbalized from its relation names and scored
  against the question (MiniLM cosine plus learned-free priors, see
  :class:`PathScoring`); the best path becomes a pattern, run like the other.

Answers are the distinct end nodes of the matched paths, the topic excluded
(paths never come back to it), ranked by how many paths reach them.
:func:`ceiling` computes, independently of the engine, what the gold relation
path reaches in the loaded triples (some triples are missing from the data).
Nothing here knows which dataset it runs on except :data:`METAQA_ROLES`, the
``qtype`` vocabulary the pattern mode translates (bench code, standing in for
the LLM that knows the schema).
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import numpy as np

import cef
from cef.embed.base import Embedder
from cef.engine.kb import KnowledgeBase
from cef.errors import ValidationError
from cef.graph.index import GraphIndex
from cef.model import Batch, Edge, Node, RelationType
from cef.patterns import (
    Constraint,
    ConstraintType,
    Direction,
    GraphPattern,
    PatternResult,
    PatternStart,
    RankingStrategy,
)
from cef.patterns import TraversalStep as Step

__all__ = [
    "METAQA_ROLES",
    "BenchReport",
    "HopSignatures",
    "KgqaLine",
    "LoadReport",
    "Mode",
    "ModeScore",
    "NameIndex",
    "NameMention",
    "PathScoring",
    "QuestionCues",
    "RelationHop",
    "RelationPath",
    "RoleMap",
    "TextAnswerer",
    "TripleIndex",
    "answer_pattern",
    "bracket_mentions",
    "ceiling",
    "format_table",
    "hops_label",
    "limit_torch_threads",
    "load_triples",
    "pattern_for_relation_path",
    "question_files",
    "read_jsonl",
    "read_triples",
    "relation_paths",
    "relation_words",
    "run_benchmark",
    "run_questions",
    "score_entities",
    "spacy_lemmatizer",
    "verbalize",
    "write_run",
]

Mode = Literal["text", "pattern"]
Progress = Callable[[str], None]
#: label of every entity node (a triple file carries no types)
ENTITY_LABEL = "Entity"


# ---------------------------------------------------------------------------- files
def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a JSON Lines file (``.gz`` decompressed)."""
    p = Path(path)
    opener: Any = gzip.open if p.name.endswith(".gz") else open
    with opener(p, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


Triple = tuple[str, str, str]


def read_triples(path: str | Path) -> list[Triple]:
    """``head<TAB>relation<TAB>tail`` lines (``.gz`` decompressed), duplicates dropped, order kept."""
    p = Path(path)
    opener: Any = gzip.open if p.name.endswith(".gz") else open
    seen: dict[Triple, None] = {}
    with opener(p, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n\r")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not all(x.strip() for x in parts):
                raise ValidationError(f"{p.name}:{n}: expected head<TAB>relation<TAB>tail, got {line!r}")
            h, r, t = (x.strip() for x in parts)
            seen.setdefault((h, r, t), None)
    return list(seen)


_REL_BAD = re.compile(r"[^A-Za-z0-9_]+")


def relation_type_name(raw: str) -> str:
    """A registrable relation type name for a raw relation (invalid characters become ``_``)."""
    name = _REL_BAD.sub("_", raw.strip()).strip("_") or "related_to"
    return name if not name[0].isdigit() else f"r_{name}"


# ---------------------------------------------------------------------------- loading
@dataclass
class LoadReport:
    """What :func:`load_triples` put in the store and how long it took."""

    triples: int
    nodes: int
    edges: int
    relations: dict[str, int]
    load_s: float


def load_triples(
    triples: Sequence[Triple], db: str | Path, *, progress: Progress | None = None
) -> tuple[KnowledgeBase, LoadReport]:
    """A new knowledge base at ``db`` holding the triples as a graph (no embedder: graph and names only).

    Each distinct entity string is one node (id and ``name`` = the string,
    label ``Entity``); each relation is a registered relation type; each
    triple an edge head → tail. One ``index_batch`` transaction.
    """
    t0 = time.perf_counter()
    names: dict[str, None] = {}
    rels: Counter[str] = Counter()
    for h, r, t in triples:
        names.setdefault(h, None)
        names.setdefault(t, None)
        rels[relation_type_name(r)] += 1
    batch = Batch(
        relation_types=[
            RelationType(name=r, description=f"{' '.join(relation_words(r))} (head -> tail)") for r in rels
        ],
        nodes=[Node(id=n, label=ENTITY_LABEL, properties={"name": n}) for n in names],
        edges=[
            Edge(id=f"t{i}", relation_type=relation_type_name(r), source=h, target=t)
            for i, (h, r, t) in enumerate(triples)
        ],
    )
    if progress is not None:
        progress(f"{len(names):,} entities, {len(triples):,} triples, {len(rels)} relations: indexing")
    kb = cef.open(db, embedder=None)
    try:
        kb.index_batch(batch)
    except BaseException:
        kb.close()
        raise
    report = LoadReport(len(triples), len(names), len(triples), dict(rels), time.perf_counter() - t0)
    return kb, report


# ---------------------------------------------------------------------------- relation paths
@dataclass(frozen=True)
class RelationHop:
    """One hop of a relation path: a relation walked head → tail (``forward``) or tail → head."""

    relation: str
    forward: bool = True

    def step(self) -> Step:
        return Step(
            relation_type=self.relation, direction=Direction.OUTGOING if self.forward else Direction.INCOMING
        )


RelationPath = tuple[RelationHop, ...]


def pattern_for_relation_path(
    start_id: str, path: Sequence[RelationHop], *, pattern_id: str = "kgqa", max_paths: int = 10_000
) -> GraphPattern:
    """The pattern that walks ``path`` from ``start_id`` and never comes back to it.

    Other nodes may repeat (``allow_cycles``), so "films sharing an actor with
    X, their actors" includes X's own actors; the start is excluded at every
    step by an ``@id NOT_IN`` constraint. Ranked by EDGE_WEIGHT (no semantic
    part: the relation path already says what is wanted).
    """
    if not path:
        raise ValidationError("a relation path needs at least one hop")
    return GraphPattern(
        pattern_id=pattern_id,
        description=" / ".join(f"{h.relation}{'' if h.forward else '^-1'}" for h in path),
        start=PatternStart(node_ids=[start_id]),
        steps=[h.step() for h in path],
        constraints=[Constraint(type=ConstraintType.NOT_IN, property="@id", value=[start_id])],
        allow_cycles=True,
        ranking=RankingStrategy.EDGE_WEIGHT,
        max_paths=max_paths,
        time_limit_ms=5000,
    )


@dataclass(frozen=True)
class RoleMap:
    """A question-type vocabulary: ``role_to_role`` hops over a star schema centred on ``head``.

    ``relations`` maps each non-head role to the relation linking the head
    to it (head → role). A hop ``head_to_X`` walks that relation forward;
    ``X_to_head`` walks it backward.
    """

    head: str
    relations: dict[str, str]
    separator: str = "_to_"

    def relation_path(self, qtype: str) -> RelationPath:
        roles = qtype.split(self.separator)
        if len(roles) < 2:
            raise ValidationError(f"question type {qtype!r} has no hop (expected a{self.separator}b)")
        hops = []
        for a, b in pairwise(roles):
            if a == self.head and b in self.relations:
                hops.append(RelationHop(self.relations[b], True))
            elif b == self.head and a in self.relations:
                hops.append(RelationHop(self.relations[a], False))
            else:
                raise ValidationError(f"question type {qtype!r}: no relation for the hop {a} -> {b}")
        return tuple(hops)


#: MetaQA's qtype vocabulary over the WikiMovies relations (every relation goes movie -> value)
METAQA_ROLES = RoleMap(
    head="movie",
    relations={
        "director": "directed_by",
        "actor": "starred_actors",
        "writer": "written_by",
        "year": "release_year",
        "genre": "has_genre",
        "tags": "has_tags",
        "tag": "has_tags",
        "language": "in_language",
    },
)


class HopSignatures:
    """Which hops (relation × direction) leave each node: a boolean matrix over the graph's live edges.

    Hop code ``2 * relation code + forward``. Built once per graph generation;
    used to list the last hop of relation paths without walking it, and to
    derive the relation paths the schema allows (:meth:`schema_paths`).
    """

    def __init__(self, graph: GraphIndex) -> None:
        self.graph = graph
        self.generation = graph.generation
        n, r = len(graph.node_ids), len(graph.relations)
        alive = np.flatnonzero(graph.e_alive.view)
        rel = graph.e_rel.view[alive].astype(np.int64)
        self.src = graph.e_src.view[alive].astype(np.int64)
        self.dst = graph.e_dst.view[alive].astype(np.int64)
        self.rel = rel
        self.matrix = np.zeros((n, 2 * r), dtype=np.bool_)
        self.matrix[self.src, 2 * rel + 1] = True  # walk the edge forward from its source
        self.matrix[self.dst, 2 * rel] = True  # walk it backward from its target

    def hop(self, code: int) -> RelationHop:
        return RelationHop(self.graph.relations.names[code // 2], bool(code % 2))

    def leaving(self, nodes: np.ndarray) -> list[int]:
        """Hop codes that leave at least one of ``nodes``."""
        if not len(nodes):
            return []
        return np.flatnonzero(self.matrix[nodes].any(axis=0)).tolist()

    def schema_paths(self, max_hops: int = 3) -> list[RelationPath]:
        """Every relation path the graph's shape allows (a hop may follow another when some node the
        first reaches has the second leaving it); a superset of the paths from any one node."""
        codes = np.flatnonzero(self.matrix.any(axis=0)).tolist()
        after: dict[int, list[int]] = {}
        for code in codes:
            mask = self.rel == code // 2
            reached = np.unique(self.dst[mask] if code % 2 else self.src[mask])
            after[code] = self.leaving(reached)
        out: list[RelationPath] = []
        level: list[tuple[int, ...]] = [(c,) for c in codes]
        for _ in range(max_hops):
            out.extend(tuple(self.hop(c) for c in p) for p in level)
            level = [(*p, c) for p in level for c in after[p[-1]]]
        return out


def relation_paths(
    graph: GraphIndex, start: int, max_hops: int = 3, signatures: HopSignatures | None = None
) -> list[RelationPath]:
    """The relation paths of 1..``max_hops`` hops that exist from node position ``start``.

    Walks never come back to the start (answers exclude it). The last hop is
    read from ``signatures`` when given (faster from big frontiers; it may list
    a hop whose only move returns to the start).
    """
    flt = graph.edge_filter()
    out: list[RelationPath] = []
    level: dict[RelationPath, np.ndarray] = {(): np.asarray([start], dtype=np.int64)}
    names = graph.relations.names
    rel = graph.e_rel.view
    if signatures is not None and signatures.generation != graph.generation:
        signatures = None
    for depth in range(max_hops):
        nxt: dict[RelationPath, np.ndarray] = {}
        last = depth == max_hops - 1
        for path, frontier in level.items():
            if last and signatures is not None:
                out.extend((*path, signatures.hop(c)) for c in signatures.leaving(frontier))
                continue
            edges, _, targets, fwd = graph.step(frontier, flt)
            keep = targets != start
            if not keep.all():
                edges, targets, fwd = edges[keep], targets[keep], fwd[keep]
            if not len(edges):
                continue
            key = rel[edges].astype(np.int64) * 2 + fwd.astype(np.int64)
            order = np.argsort(key, kind="stable")
            key, targets = key[order], targets[order]
            bounds = np.flatnonzero(np.diff(key)) + 1
            for group_keys, group_targets in zip(
                np.split(key, bounds), np.split(targets, bounds), strict=True
            ):
                code = int(group_keys[0])
                hop = RelationHop(names[code // 2], bool(code % 2))
                out.append((*path, hop))
                if not last:
                    nxt[(*path, hop)] = np.unique(group_targets)
        level = nxt
    return out


# ---------------------------------------------------------------------------- answering
def answer_pattern(result: PatternResult, exclude: Iterable[str] = ()) -> list[str]:
    """End-node names of the matched paths, most-reached first (then first reached), excluding ``exclude``."""
    skip = set(exclude)
    count: Counter[str] = Counter()
    first: dict[str, int] = {}
    for i, p in enumerate(result.paths):
        if p.end_node_id in skip:
            continue
        name = p.node_names[-1] if p.node_names else p.end_node_id
        count[name] += 1
        first.setdefault(name, i)
    return sorted(count, key=lambda n: (-count[n], first[n]))


# ---------------------------------------------------------------------------- entity mentions
_BRACKETS = re.compile(r"\[([^\[\]]+)\]")
_TOKEN = re.compile(r"\S+")
_EDGE_PUNCT = ".,;:!?\"'()"


def bracket_mentions(text: str) -> list[str]:
    """Text in ``[brackets]`` is an entity mention (a generic convention for marked-up questions)."""
    return [m.strip() for m in _BRACKETS.findall(text) if m.strip()]


@dataclass(frozen=True)
class NameMention:
    """A known name found in a text: ``span`` as written, the ``name`` it matched and its node, where."""

    span: str
    name: str
    node_id: str
    start: int
    end: int
    exact: bool

    @property
    def proper(self) -> bool:
        """Written like a proper name: holds a capital letter or a digit."""
        return any(c.isupper() or c.isdigit() for c in self.span)


class NameIndex:
    """Node names, found in question text by exact word-boundary match (a gazetteer without normalization).

    :meth:`best` prefers a span that looks like a proper name (a capital or a
    digit), then an exact-case match, then the longest span: in "who directed
    the films [Tom Hanks] acted in" or "who directed The Band Wagon", the
    entity beats lower-case words that happen to be names too.
    """

    def __init__(self, entries: Iterable[tuple[str, str]]) -> None:
        """``entries``: (name, node id) pairs; the first node listed for a name wins."""
        self._exact: dict[str, str] = {}
        self._lower: dict[str, str] = {}
        self._max_tokens = 1
        for name, node_id in entries:
            if not name:
                continue
            self._exact.setdefault(name, node_id)
            self._lower.setdefault(name.lower(), name)
            self._max_tokens = max(self._max_tokens, len(name.split()))

    def __len__(self) -> int:
        return len(self._exact)

    @classmethod
    def from_kb(cls, kb: KnowledgeBase) -> NameIndex:
        """Names and aliases of every node of the knowledge base."""
        return cls((name, node.id) for node in kb.store.iter_nodes() for name in (node.name, *node.aliases))

    def lookup(self, name: str) -> NameMention | None:
        """The node ``name`` refers to: exact, else case-insensitive."""
        known = name if name in self._exact else self._lower.get(name.lower())
        if known is None:
            return None
        return NameMention(name, known, self._exact[known], 0, len(name), known == name)

    def find(self, text: str) -> list[NameMention]:
        """Every known name in ``text`` (overlapping), spans cut at whitespace (edge punctuation optional)."""
        toks = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        out: list[NameMention] = []
        for i in range(len(toks)):
            for j in range(i, min(len(toks), i + self._max_tokens)):
                raw = text[toks[i][0] : toks[j][1]]
                for span in dict.fromkeys((raw, raw.rstrip(_EDGE_PUNCT), raw.strip(_EDGE_PUNCT))):
                    if not span:
                        continue
                    start = toks[i][0] + raw.index(span)
                    if span in self._exact:
                        out.append(NameMention(span, span, self._exact[span], start, start + len(span), True))
                    elif (name := self._lower.get(span.lower())) is not None:
                        node = self._exact[name]
                        out.append(NameMention(span, name, node, start, start + len(span), False))
        return out

    def best(self, text: str) -> NameMention | None:
        found = self.find(text)
        if not found:
            return None
        return max(found, key=lambda m: (m.proper, m.exact, len(m.span), -m.start))


# ---------------------------------------------------------------------------- verbalizing
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: function words left out of relation cues (they name no relation)
_FUNCTION_WORDS = frozenset(
    {"a", "an", "the", "of", "by", "in", "on", "at", "to", "for", "with", "from", "is", "are", "was"}
    | {"were", "be", "been", "has", "have", "had", "its", "it", "as"}
)


def relation_words(name: str) -> list[str]:
    """``directed_by`` → ``["directed", "by"]``; ``hasGenre`` → ``["has", "genre"]``."""
    return [w.lower() for w in _CAMEL.sub("_", name).replace("-", "_").split("_") if w]


def verbalize(path: Sequence[RelationHop]) -> str:
    """Words for a relation path: ``directed by, starred actors of`` (a reversed hop reads "X of")."""
    return ", ".join(" ".join(relation_words(h.relation)) + ("" if h.forward else " of") for h in path)


def verbalize_relations(path: Sequence[RelationHop]) -> str:
    """The distinct relations of a path, in order, as words."""
    return ", ".join(" ".join(relation_words(r)) for r in dict.fromkeys(h.relation for h in path))


def has_return(path: Sequence[RelationHop]) -> bool:
    """A hop followed by the same relation walked back ("films sharing an actor with X")."""
    return any(a.relation == b.relation and a.forward != b.forward for a, b in pairwise(path))


#: words that ask for things sharing a neighbour ("same director", "co-starred", "also appear")
SHARING_CUE = re.compile(r"\b(?:same|share[sd]?|sharing|also|together|co-\w+)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*", re.UNICODE)

Lemmatize = Callable[[str], list[tuple[str, str]]]


def surface_tokens(text: str) -> list[tuple[str, str]]:
    """(token, lemma) pairs without a lemmatizer: the lemma is the lower-case token."""
    return [(w.lower(), w.lower()) for w in _WORD.findall(text)]


def spacy_lemmatizer(model: str | None = None) -> Lemmatize | None:
    """(token, lemma) pairs from spaCy's tagger and lemmatizer; None when spaCy or the model is missing."""
    try:
        import spacy

        from cef.extract.spacy_ner import DEFAULT_MODEL
    except ImportError:
        return None
    try:
        nlp = spacy.load(model or DEFAULT_MODEL, exclude=["parser", "ner"])
    except OSError:
        return None

    def lemmas(text: str) -> list[tuple[str, str]]:
        return [(t.text.lower(), t.lemma_.lower()) for t in nlp(text) if not (t.is_punct or t.is_space)]

    return lemmas


@dataclass
class QuestionCues:
    """What a question says about relations: which relations its words name, how far from the entity."""

    masked: str  # the question with the entity mention replaced by a placeholder
    distance: dict[str, int]  # relation -> distance in tokens from the entity mention to its nearest cue
    sharing: bool  # the question asks for things that share something

    @classmethod
    def of(
        cls,
        question: str,
        mention: tuple[int, int] | None,
        relations: Sequence[str],
        lemmatize: Lemmatize | None = None,
        *,
        stem: int = 4,
    ) -> QuestionCues:
        """A relation is cued by a question word holding the first ``stem`` letters of one of its content
        words (``writ`` in "screenwriter") or sharing its lemma ("wrote" / "written")."""
        placeholder = "X"
        if mention is not None:
            masked = f"{question[: mention[0]]} {placeholder} {question[mention[1] :]}"
        else:
            masked = question
        lem = lemmatize or surface_tokens
        tokens = lem(masked)
        at = next((i for i, (t, _) in enumerate(tokens) if t == placeholder.lower()), None)
        distance: dict[str, int] = {}
        for r in relations:
            for w in relation_words(r):
                if w in _FUNCTION_WORDS:
                    continue
                w_lemma = lem(w)[0][1] if lemmatize is not None else w
                key = w[: min(stem, len(w))]
                for i, (tok, lemma) in enumerate(tokens):
                    if i == at:
                        continue
                    if key in tok or lemma == w_lemma:
                        d = abs(i - at) if at is not None else i + 1
                        distance[r] = min(distance.get(r, d), d)
        return cls(" ".join(masked.split()), distance, bool(SHARING_CUE.search(masked)))


@dataclass(frozen=True)
class PathScoring:
    """Weights of the text-mode path score (learned-free priors; tuned on the benchmark data).

    ``score = cos(question, verbalize(path)) + distinct · cos(question, distinct relations)
    + cue · (cued relations − cue_cost · distinct relations) − length · (hops − 1)
    + sharing · [path returns along a relation == question has a sharing cue]
    + order · (+1 when the cued relations come in order of distance from the entity, −1 when not)``
    """

    distinct: float = 0.25
    cue: float = 0.8
    cue_cost: float = 0.6
    length: float = 0.035
    sharing: float = 0.1
    order: float = 0.1
    max_hops: int = 3


class TextAnswerer:
    """Answers a question from its text alone: entity mention → relation paths → best path → pattern.

    ``embedder`` embeds the question and the verbalized paths (node names are
    not embedded); path verbalizations are cached across questions.
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        embedder: Embedder,
        *,
        names: NameIndex | None = None,
        lemmatize: Lemmatize | None = None,
        scoring: PathScoring | None = None,
    ) -> None:
        self.kb = kb
        self.embedder = embedder
        self.names = names if names is not None else NameIndex.from_kb(kb)
        self.lemmatize = lemmatize
        self.scoring = scoring or PathScoring()
        self._vectors: dict[str, np.ndarray] = {}
        self._signatures: HopSignatures | None = None

    def signatures(self) -> HopSignatures:
        g = self.kb.state.graph
        sig = self._signatures
        if sig is None or sig.graph is not g or sig.generation != g.generation:
            sig = self._signatures = HopSignatures(g)
        return sig

    def prepare(self) -> int:
        """Embed the verbalization of every relation path the graph's shape allows (from the graph
        alone, before any question); returns how many texts were embedded."""
        with self.kb.state.reading():
            paths = self.signatures().schema_paths(self.scoring.max_hops)
        texts = list(dict.fromkeys([*map(verbalize, paths), *map(verbalize_relations, paths)]))
        before = len(self._vectors)
        for i in range(0, len(texts), 512):
            self._embed(texts[i : i + 512])
        return len(self._vectors) - before

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if todo:
            for t, v in zip(todo, self.embedder.embed(todo), strict=True):
                self._vectors[t] = np.asarray(v, dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def anchor(self, question: str) -> tuple[str, tuple[int, int] | None] | None:
        """The node the question is about and where it is mentioned (None: found by text search)."""
        for m in bracket_mentions(question):
            found = self.names.lookup(m)
            if found is not None:
                i = question.find(f"[{m}]")
                return found.node_id, (i, i + len(m) + 2)
        best = self.names.best(question)
        if best is not None:
            return best.node_id, (best.start, best.end)
        return self._anchor_by_text_search(question)

    def _anchor_by_text_search(self, question: str) -> tuple[str, tuple[int, int] | None] | None:
        """A node whose name nearly appears in the question, among the node full-text hits."""
        from rapidfuzz import fuzz

        with self.kb.state.reading():
            hits = self.kb.store.search_text("node", question, 20)
            nodes = self.kb.state.get_nodes([h.id for h in hits])
        best: tuple[float, int, str] | None = None
        for node in nodes:
            s = fuzz.partial_ratio(node.name.lower(), question.lower())
            if s >= 90 and (best is None or (s, len(node.name)) > best[:2]):
                best = (s, len(node.name), node.id)
        return (best[2], None) if best else None

    def rank_paths(self, question: str) -> tuple[str | None, list[tuple[float, RelationPath]]]:
        """The anchor node and the candidate relation paths, best first, with their scores."""
        found = self.anchor(question)
        if found is None:
            return None, []
        anchor, span = found
        with self.kb.state.reading():
            g = self.kb.state.graph
            pos = g.pos(anchor)
            sig = self.signatures()
            cands = relation_paths(g, pos, self.scoring.max_hops, sig) if pos is not None else []
        if not cands:
            return anchor, []
        relations = sorted({h.relation for p in cands for h in p})
        cues = QuestionCues.of(question, span, relations, self.lemmatize)
        s = self.scoring
        q = self._embed([cues.masked])[0]
        full = self._embed([verbalize(p) for p in cands]) @ q
        distinct = self._embed([verbalize_relations(p) for p in cands]) @ q
        scores = []
        for i, p in enumerate(cands):
            rels = list(dict.fromkeys(h.relation for h in p))
            cued = [cues.distance[r] for r in rels if r in cues.distance]
            order = 0.0
            if len(cued) >= 2:
                pairs = list(pairwise(cued))
                order = (
                    1.0 if all(a < b for a, b in pairs) else (-1.0 if any(a > b for a, b in pairs) else 0.0)
                )
            value = (
                float(full[i])
                + s.distinct * float(distinct[i])
                + s.cue * (len(cued) - s.cue_cost * len(rels))
                - s.length * (len(p) - 1)
                + s.sharing * (has_return(p) == cues.sharing)
                + s.order * order
            )
            scores.append((value, p))
        scores.sort(key=lambda x: -x[0])
        return anchor, scores

    def answer(self, question: str) -> tuple[str | None, RelationPath | None, list[str]]:
        """(anchor, chosen relation path, ranked answers): the best path that reaches anything."""
        anchor, ranked = self.rank_paths(question)
        if anchor is None:
            return None, None, []
        for _, path in ranked[:5]:
            result = self.kb.match_patterns(pattern_for_relation_path(anchor, path))
            found = answer_pattern(result, exclude=[anchor])
            if found:
                return anchor, path, found
        return anchor, None, []


# ---------------------------------------------------------------------------- runs and scores
@dataclass
class KgqaLine:
    """One answered question in the run format ``score.py entities`` reads (plus diagnostics)."""

    id: str
    ranked: list[str]
    answers: list[str]
    latency_ms: float
    cpu_ms: float = 0.0
    anchor: str | None = None
    path: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def run_questions(
    kb: KnowledgeBase,
    questions: Sequence[dict[str, Any]],
    mode: Mode,
    *,
    roles: RoleMap = METAQA_ROLES,
    text: TextAnswerer | None = None,
    progress: Progress | None = None,
) -> list[KgqaLine]:
    """Answer every question in ``mode``; ``text`` mode needs a :class:`TextAnswerer`."""
    if mode == "text" and text is None:
        raise ValidationError("text mode needs a TextAnswerer (an embedder for the question and paths)")
    lines: list[KgqaLine] = []
    for n, q in enumerate(questions, 1):
        t0, c0 = time.perf_counter(), time.thread_time()
        if mode == "pattern":
            topic = str(q["topic_entity"])
            path = roles.relation_path(str(q["qtype"]))
            result = kb.match_patterns(pattern_for_relation_path(topic, path))
            ranked = answer_pattern(result, exclude=[topic])
            anchor: str | None = topic
        else:
            assert text is not None
            anchor, chosen, ranked = text.answer(str(q["question"]))
            path = chosen or ()
        ms, cpu = (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000
        lines.append(
            KgqaLine(
                str(q["id"]), ranked, ranked, round(ms, 3), round(cpu, 3), anchor, verbalize(path) or None
            )
        )
        if progress is not None and n % 500 == 0:
            progress(f"{n}/{len(questions)} questions")
    return lines


def write_run(path: str | Path, lines: Sequence[KgqaLine]) -> None:
    Path(path).write_text("".join(x.to_json() + "\n" for x in lines), encoding="utf-8")


def _norm(s: object) -> str:
    return " ".join(str(s).lower().split())


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def score_entities(lines: Sequence[KgqaLine], questions: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Hits@1/5 and answer-set precision/recall/F1 (percent) plus latency percentiles, as ``score.py entities``."""
    run = {x.id: x for x in lines}
    h1: list[float] = []
    h5: list[float] = []
    p: list[float] = []
    r: list[float] = []
    f: list[float] = []
    for q in questions:
        want = {_norm(a) for a in q["answers"]}
        line = run.get(str(q["id"]))
        ranked = [_norm(e) for e in (line.ranked if line else [])]
        h1.append(1.0 if ranked[:1] and ranked[0] in want else 0.0)
        h5.append(1.0 if want & set(ranked[:5]) else 0.0)
        got = {_norm(a) for a in (line.answers if line else [])}
        tp = len(got & want)
        pi = tp / len(got) if got else 0.0
        ri = tp / len(want)
        p.append(pi)
        r.append(ri)
        f.append(0.0 if tp == 0 else 2 * pi * ri / (pi + ri))
    out: dict[str, float] = {
        "questions": len(questions),
        "answered": sum(1 for q in questions if str(q["id"]) in run),
        "hits@1": round(100 * statistics.mean(h1), 2),
        "hits@5": round(100 * statistics.mean(h5), 2),
        "precision": round(100 * statistics.mean(p), 2),
        "recall": round(100 * statistics.mean(r), 2),
        "f1": round(100 * statistics.mean(f), 2),
    }
    lat = [x.latency_ms for x in lines]
    if lat:
        out["latency_ms_p50"] = _pct(lat, 0.5) or 0.0
        out["latency_ms_p95"] = _pct(lat, 0.95) or 0.0
        cpu = [x.cpu_ms for x in lines]
        out["cpu_ms_p50"] = _pct(cpu, 0.5) or 0.0
        out["cpu_ms_p95"] = _pct(cpu, 0.95) or 0.0
    return out


class TripleIndex:
    """The triples as plain adjacency sets: an engine-independent reference for the ceiling."""

    def __init__(self, triples: Iterable[Triple]) -> None:
        self.out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        self.into: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for h, r, t in triples:
            rel = relation_type_name(r)
            self.out[rel][h].add(t)
            self.into[rel][t].add(h)

    def walk(self, start: str, path: Sequence[RelationHop]) -> set[str]:
        """Every node ``path`` reaches from ``start`` without coming back to it."""
        frontier = {start}
        for hop in path:
            side = self.out if hop.forward else self.into
            table = side.get(hop.relation, {})
            nxt: set[str] = set()
            for n in frontier:
                nxt |= table.get(n, set())
            nxt.discard(start)
            frontier = nxt
        return frontier


def ceiling(
    index: TripleIndex, questions: Sequence[dict[str, Any]], roles: RoleMap = METAQA_ROLES
) -> dict[str, float]:
    """What the gold relation path reaches in the loaded triples: share of gold answers reached
    (``recall``) and the F1 of answering exactly that set (``f1``), in percent."""
    rec: list[float] = []
    f1: list[float] = []
    for q in questions:
        want = {_norm(a) for a in q["answers"]}
        got = {_norm(x) for x in index.walk(str(q["topic_entity"]), roles.relation_path(str(q["qtype"])))}
        tp = len(got & want)
        rec.append(tp / len(want))
        f1.append(0.0 if tp == 0 else 2 * tp / (len(got) + len(want)))
    return {"recall": round(100 * statistics.mean(rec), 2), "f1": round(100 * statistics.mean(f1), 2)}


@dataclass
class ModeScore:
    """One mode on one question file: score.py's metrics and the ceiling of the gold relation paths."""

    mode: str
    hops: str
    metrics: dict[str, float]
    ceiling: dict[str, float] = field(default_factory=dict)


def format_table(scores: Sequence[ModeScore]) -> str:
    """A Markdown table: Hits@1, F1 and the ceiling, wall-clock and CPU latency per mode and question file."""
    nan = float("nan")
    rows = [
        "| mode | hops | questions | Hits@1 | F1 | ceiling F1 | ceiling recall | p50 ms | p95 ms | p95 CPU ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in scores:
        m = s.metrics
        rows.append(
            f"| {s.mode} | {s.hops} | {int(m['questions'])} | {m['hits@1']:.1f} | {m['f1']:.1f} | "
            f"{s.ceiling.get('f1', nan):.1f} | {s.ceiling.get('recall', nan):.1f} | "
            f"{m.get('latency_ms_p50', nan):.2f} | {m.get('latency_ms_p95', nan):.2f} | "
            f"{m.get('cpu_ms_p95', nan):.2f} |"
        )
    return "\n".join(rows)


_HOPS_FILE = re.compile(r"questions_(\d+)hop\.jsonl(?:\.gz)?")


def hops_label(path: str | Path) -> str:
    """``"2"`` for ``questions_2hop.jsonl.gz``; the file name without extensions otherwise."""
    name = Path(path).name
    m = _HOPS_FILE.fullmatch(name)
    return m.group(1) if m else name.split(".")[0]


def question_files(data_dir: str | Path) -> list[tuple[str, Path]]:
    """``(hops, path)`` of the ``questions_<n>hop.jsonl(.gz)`` files in a folder, by hop count."""
    found = [(int(hops_label(p)), p) for p in Path(data_dir).iterdir() if _HOPS_FILE.fullmatch(p.name)]
    return [(str(n), p) for n, p in sorted(found)]


def limit_torch_threads(n: int | None) -> None:
    """Run the embedding model on ``n`` threads (one query at a time gains nothing from more, and
    loses much on a busy machine); no-op without torch or with ``None``."""
    if n is None:
        return
    try:
        import torch
    except ImportError:  # pragma: no cover - torch comes with the default embedder
        return
    torch.set_num_threads(n)


@dataclass
class BenchReport:
    """Everything one benchmark run measured."""

    load: LoadReport
    scores: list[ModeScore]
    text_prepare_s: float | None = None
    text_prepared: int = 0
    lemmatizer: bool = False
    runs: dict[tuple[str, str], list[KgqaLine]] = field(default_factory=dict)


def run_benchmark(
    triples_path: str | Path,
    files: Sequence[tuple[str, Path]],
    modes: Sequence[Mode],
    db: str | Path,
    *,
    embedder: Embedder | None = None,
    torch_threads: int | None = 1,
    progress: Progress | None = None,
) -> BenchReport:
    """Load the triples into a fresh store at ``db``, then answer each question file in each mode.

    Question files are read only after loading. ``text`` mode loads the
    default embedder unless one is given, prepares the path verbalizations
    (:meth:`TextAnswerer.prepare`) and lemmatizes with spaCy when available.
    """
    triples = read_triples(triples_path)
    kb, load = load_triples(triples, db, progress=progress)
    report = BenchReport(load, [])
    try:
        with kb.state.reading():  # the graph fits in memory: so do the node records the answers name
            kb.state.get_nodes(list(kb.state.graph.node_ids))
        reference = TripleIndex(triples)
        answerer: TextAnswerer | None = None
        if "text" in modes:
            from cef.embed import get_default_embedder

            t0 = time.perf_counter()
            lemmatize = spacy_lemmatizer()
            answerer = TextAnswerer(kb, embedder or get_default_embedder(), lemmatize=lemmatize)
            report.text_prepared = answerer.prepare()
            report.text_prepare_s = time.perf_counter() - t0
            report.lemmatizer = lemmatize is not None
        limit_torch_threads(torch_threads)
        for hops, path in files:
            questions = read_jsonl(path)
            try:
                top = ceiling(reference, questions)
            except (KeyError, ValidationError):  # no gold relation path in the vocabulary
                top = {}
            for mode in modes:
                if progress is not None:
                    progress(f"{path.name}: {mode} mode")
                lines = run_questions(kb, questions, mode, text=answerer)
                report.runs[(mode, hops)] = lines
                report.scores.append(ModeScore(mode, hops, score_entities(lines, questions), top))
    finally:
        kb.close()
    return report
