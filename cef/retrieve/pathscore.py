"""How well a typed relation path fits a question: words, cues and embeddings.

A relation path is a sequence of hops, each a relation walked forward (source
→ target) or backward. Its words come from the graph's own schema: the
relation's name (``directed_by`` → "directed by"), its inverse name when the
hop is walked backward (else "directed by of"), its description, and a few
example values that the last hop reaches ("has genre: Drama, Comedy,
Thriller" says what kind of answer the path gives).

The score of a path for a question whose anchor mention is masked:

``cos(question, path words) + distinct · cos(question, distinct relations)
+ answer · cos(question, example answers of the last hop)
+ cue · (hops explained by a question word − cue_cost · hops) − length · (hops − 1)
+ order · (cued relations named in walking order from the anchor)``

A naming of a relation in the question *explains* one hop of it. A question
word names a relation when it shares a stem with one of the relation's name words (same lemma, or a common prefix of at least 3
letters and half the shorter word: "acted"/"actors", "written"/"writer"; or inside a
compound: "screenwriter");
each question word explains one hop, so "the films written by the writer of X"
asks for two ``written_by`` hops. A word that asks for things sharing a
neighbour ("same", "share", "also", "co-") explains a hop that walks straight
back along the previous relation. Description words explain half a hop.
Nothing here knows a domain: the words all come from the graph.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from cef.retrieve.presets import PathSettings

if TYPE_CHECKING:
    from cef.graph.index import GraphIndex
    from cef.retrieve.ports import EngineView as EngineState

__all__ = ["Hop", "PathScorer", "RelationPath", "path_scorer", "relation_words"]


@dataclass(frozen=True)
class Hop:
    """One hop of a relation path: ``relation`` walked source → target (``forward``) or back."""

    relation: str
    forward: bool


RelationPath = tuple[Hop, ...]
#: texts -> their vectors, one row each (None without an embedder)
EmbedMany = Callable[[Sequence[str]], np.ndarray | None]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*", re.UNICODE)
#: words that ask for things sharing a neighbour ("same director", "co-starred", "also appear")
SHARING_CUE = re.compile(r"\b(?:same|share[sd]?|sharing|also|together|co-\w+)\b", re.IGNORECASE)
#: function words that name no relation
_FUNCTION = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "by",
        "in",
        "on",
        "at",
        "to",
        "for",
        "with",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "its",
        "it",
        "as",
        "and",
        "or",
        "that",
        "this",
        "these",
        "those",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "when",
        "where",
        "why",
        "how",
        "do",
        "does",
        "did",
    ]
)
_EXAMPLES = 5
_MASK = "X"


def relation_words(name: str) -> list[str]:
    """``directed_by`` → ``["directed", "by"]``; ``hasGenre`` → ``["has", "genre"]``."""
    return [w.lower() for w in _CAMEL.sub("_", name).replace("-", "_").split("_") if w]


def _content(words: Sequence[str]) -> list[str]:
    return [w for w in words if w not in _FUNCTION and len(w) > 1]


def _stem_match(a: str, b: str, la: str, lb: str) -> bool:
    """``a`` (a question word) names ``b`` (a relation word): same lemma, a common prefix of >= 3
    letters covering half the shorter word, or ``b``'s first 4 letters inside a long compound
    (``screenwriter`` names ``written``)."""
    if la == lb or a == b:
        return True
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    if n >= 3 and n >= 0.5 * min(len(a), len(b)):
        return True
    return len(b) >= 4 and len(a) >= 8 and b[:4] in a[2:]


Lemmatize = Callable[[str], list[tuple[str, str]]]


def surface_tokens(text: str) -> list[tuple[str, str]]:
    """(token, lemma) pairs without a lemmatizer: the lemma is the lower-case token."""
    return [(w.lower(), w.lower()) for w in _WORD.findall(text)]


@lru_cache(maxsize=1)
def default_lemmatizer() -> Lemmatize:
    """spaCy's lemmas when the ``nlp`` extra is installed, else lower-case tokens."""
    try:
        import spacy

        from cef.extract.spacy_ner import DEFAULT_MODEL

        nlp = spacy.load(DEFAULT_MODEL, exclude=["parser", "ner"])
    except (ImportError, OSError):
        return surface_tokens

    def lemmas(text: str) -> list[tuple[str, str]]:
        return [(t.text.lower(), t.lemma_.lower()) for t in nlp(text) if not (t.is_punct or t.is_space)]

    return lemmas


@dataclass
class _RelationWords:
    """The words of one relation: name words (forward), inverse-name words, description words."""

    forward: list[str]
    inverse: list[str] | None
    description: list[str]
    cue: list[tuple[str, str]]  # (word, lemma) that explain a hop
    soft: list[tuple[str, str]]  # description words: half a hop


@dataclass
class PathScorer:
    """Scores relation paths against questions for one graph generation (see the module doc)."""

    graph: GraphIndex
    stamp: tuple[int, int]
    settings: PathSettings
    lemmatize: Lemmatize
    relations: dict[str, _RelationWords] = field(default_factory=dict)
    examples: dict[Hop, str] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    _names: dict[int, str] = field(default_factory=dict)  # example answers: node position -> name

    # ------------------------------------------------------------------ words
    def words_of(self, relation: str) -> _RelationWords:
        cur = self.relations.get(relation)
        if cur is not None:
            return cur
        rt = self.graph.rel_types.get(relation)
        fwd = relation_words(relation)
        inv = relation_words(rt.inverse) if rt is not None and rt.inverse else None
        desc = _content([w.lower() for w in _WORD.findall(rt.description or "")]) if rt is not None else []
        cue_words = list(dict.fromkeys(_content([*fwd, *(inv or [])])))
        soft_words = [w for w in dict.fromkeys(desc) if w not in cue_words]
        lem = self.lemmatize
        cur = _RelationWords(
            forward=fwd,
            inverse=inv,
            description=desc,
            cue=[(w, (lem(w) or [(w, w)])[0][1]) for w in cue_words],
            soft=[(w, (lem(w) or [(w, w)])[0][1]) for w in soft_words],
        )
        self.relations[relation] = cur
        return cur

    def hop_text(self, hop: Hop) -> str:
        w = self.words_of(hop.relation)
        rt = self.graph.rel_types.get(hop.relation)
        if hop.forward or (rt is not None and rt.bidirectional):
            return " ".join(w.forward)
        if w.inverse:
            return " ".join(w.inverse)
        return " ".join(w.forward) + " of"

    def verbalize(self, path: RelationPath) -> str:
        """``directed by, starred actors of``: the hops' words in walking order."""
        return ", ".join(self.hop_text(h) for h in path)

    def verbalize_relations(self, path: RelationPath) -> str:
        return ", ".join(" ".join(self.words_of(r).forward) for r in dict.fromkeys(h.relation for h in path))

    def describe(self, path: RelationPath) -> str:
        """``PRESCRIBED > INTERACTS_WITH`` (``<REL`` for a hop walked backward)."""
        return " > ".join(h.relation if h.forward else f"<{h.relation}" for h in path)

    def answer_text(self, hop: Hop) -> str:
        """Example values the hop reaches: what kind of answer a path ending with it gives."""
        cached = self.examples.get(hop)
        if cached is not None:
            return cached
        g = self.graph
        code = g.relations.get(hop.relation)
        text = ""
        if code is not None:
            n_edges = len(g.edge_ids)
            alive = g.e_alive.view[:n_edges] & (g.e_rel.view[:n_edges] == code)
            rt = g.rel_types.get(hop.relation)
            ends = (
                g.e_dst.view[:n_edges] if hop.forward or (rt and rt.bidirectional) else g.e_src.view[:n_edges]
            )
            counts = np.bincount(ends[alive].astype(np.int64), minlength=1)
            top = np.argsort(-counts, kind="stable")[:_EXAMPLES]
            names = [self._name(int(p)) for p in top.tolist() if counts[p] > 0]
            text = ", ".join(n for n in names if n)
        self.examples[hop] = text
        return text

    def _name(self, pos: int) -> str:
        return self._names.get(pos, "")

    # ------------------------------------------------------------------ scoring
    def _vectors(self, texts: Sequence[str], embed: EmbedMany) -> np.ndarray | None:
        """The texts' vectors, the missing ones embedded in one batch and kept."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            got = embed(missing)
            if got is None:
                return None
            for t, v in zip(missing, np.asarray(got, dtype=np.float32), strict=True):
                self.vectors[t] = v
        return np.stack([self.vectors[t] for t in texts]) if texts else None

    def texts_of(self, path: RelationPath) -> tuple[str, str, str]:
        """What a path is compared with: its words, its distinct relations, its example answers."""
        return (
            self.verbalize(path),
            self.verbalize_relations(path),
            self.answer_text(path[-1]) or self.hop_text(path[-1]),
        )

    def prepare(self, embed: EmbedMany, *, limit: int = 10_000, batch: int = 512) -> int:
        """Embed the texts of the relation paths the schema allows, up to 3 hops while there are at
        most ``limit`` of them, so that answering seldom embeds more than the question.
        Returns how many texts are embedded now."""
        paths = schema_paths(self.graph, min(self.settings.max_hops, 3), limit=limit)
        texts = list(dict.fromkeys(t for p in paths for t in self.texts_of(p)))
        todo = [t for t in texts if t not in self.vectors]
        for i in range(0, len(todo), batch):
            if self._vectors(todo[i : i + batch], embed) is None:
                break
        return len(self.vectors)

    def rank(
        self,
        question: str,
        span: tuple[int, int] | None,
        paths: Sequence[RelationPath],
        *,
        embed: EmbedMany,
        explained_out: dict[RelationPath, float] | None = None,
    ) -> list[tuple[float, RelationPath]]:
        """The paths with their scores, best first. ``explained_out`` receives, per path, the share
        of its hops a question word names (1.0: the question spells the whole path out)."""
        s = self.settings
        masked = f"{question[: span[0]]} {_MASK} {question[span[1] :]}" if span else question
        masked = " ".join(masked.split())
        tokens = self.lemmatize(masked)
        at = next((i for i, (t, _) in enumerate(tokens) if t == _MASK.lower()), None)
        sharing = bool(SHARING_CUE.search(masked))
        where: dict[str, list[int]] = {}
        cues = self._cues(tokens, at, {h.relation for p in paths for h in p}, where)
        shared = _shared_relation(tokens, where) if sharing else None

        lexical: list[float] = []
        for p in paths:
            explained, order = self._explained(p, cues, sharing, shared)
            if explained_out is not None:
                explained_out[p] = explained / len(p)
            lexical.append(
                s.cue * (explained - s.cue_cost * len(p)) - s.length * (len(p) - 1) + s.order * order
            )
        texts = [self.texts_of(p) for p in paths]
        if self._has_embedder(embed):
            # paths whose words are not embedded yet (beyond what warm() prepared) are embedded only
            # for the best of them by the words alone: the embedding adds at most a bounded amount
            fresh = [i for i, t in enumerate(texts) if any(x not in self.vectors for x in t)]
            if len(fresh) > s.embed_limit:
                keep = set(sorted(fresh, key=lambda i: -lexical[i])[: s.embed_limit])
                skip = set(fresh) - keep
                chosen = [i for i in range(len(paths)) if i not in skip]
                paths = [paths[i] for i in chosen]
                texts = [texts[i] for i in chosen]
                lexical = [lexical[i] for i in chosen]
        out: list[tuple[float, RelationPath]] = []
        if texts and self._vectors([t for three in texts for t in three], embed) is not None:
            q = embed([masked])
            if q is not None:
                qv = np.asarray(q, dtype=np.float32)[0]
                full = np.stack([self.vectors[t[0]] for t in texts]) @ qv
                distinct = np.stack([self.vectors[t[1]] for t in texts]) @ qv
                answer = np.stack([self.vectors[t[2]] for t in texts]) @ qv
                for i, p in enumerate(paths):
                    value = lexical[i] + float(full[i]) + s.distinct * float(distinct[i])
                    out.append((value + s.answer * float(answer[i]), p))
        if not out:
            out = list(zip(lexical, paths, strict=True))
        out.sort(key=lambda x: -x[0])
        return out

    def _has_embedder(self, embed: EmbedMany) -> bool:
        """Whether ``embed`` gives vectors (probed once with a text that is kept)."""
        return self._vectors(["relation"], embed) is not None

    def _cues(
        self,
        tokens: list[tuple[str, str]],
        at: int | None,
        relations: set[str],
        where: dict[str, list[int]] | None = None,
    ) -> dict[str, tuple[float, int]]:
        """relation -> (how many times the question names it, distance of the nearest naming to the anchor).

        Words naming one relation next to each other are one naming ("starred which actors"); the
        anchor, another content word or a repeat of the same relation word starts a new one ("movies
        starred by X actors" names starred_actors twice, so does "written by the writer of X").
        Description words count half.
        """
        out: dict[str, tuple[float, int]] = {}
        for r in relations:
            w = self.words_of(r)
            count = 0.0
            nearest = 10_000
            run: set[int] | None = None  # relation words matched by the current naming
            run_weight = 0.0
            for i, (t, lem) in enumerate(tokens):
                if i == at:
                    run = None
                    continue
                if t in _FUNCTION or len(t) < 2:
                    continue
                hit = next((k for k, (cw, cl) in enumerate(w.cue) if _stem_match(t, cw, lem, cl)), None)
                weight = 1.0
                if hit is None:
                    soft = next((k for k, (cw, cl) in enumerate(w.soft) if _stem_match(t, cw, lem, cl)), None)
                    if soft is None:
                        run = None
                        continue
                    hit, weight = len(w.cue) + soft, 0.5
                if run is not None and hit not in run:
                    run.add(hit)
                    if weight > run_weight:  # a naming counts as its strongest word
                        count += weight - run_weight
                        run_weight = weight
                    continue
                run = {hit}
                run_weight = weight
                count += weight
                nearest = min(nearest, abs(i - at) if at is not None else i + 1)
                if where is not None:
                    where.setdefault(r, []).append(i)
            if count:
                out[r] = (count, nearest)
        return out

    def _explained(
        self,
        path: RelationPath,
        cues: dict[str, tuple[float, int]],
        sharing: bool,
        shared: str | None = None,
    ) -> tuple[float, float]:
        """Hops a question word explains (each word one hop), and +1/-1 for cues in walking order."""
        hops: dict[str, int] = {}
        for h in path:
            hops[h.relation] = hops.get(h.relation, 0) + 1
        named = {r: c for r, (c, _) in cues.items()}
        if sharing:  # "share actors", "same director": that relation walked there and back is named twice
            for a, b in pairwise(path):
                if a.relation == b.relation and a.forward != b.forward:
                    if shared is not None and a.relation != shared:
                        continue  # the sharing word is about another relation
                    if a.relation in named:
                        named[a.relation] = max(named[a.relation], 2.0)
                    break
        explained = sum(min(named[r], n) for r, n in hops.items() if r in named)
        dist = [cues[r][1] for r in dict.fromkeys(h.relation for h in path) if r in cues]
        order = 0.0
        if len(dist) >= 2:
            pairs = list(pairwise(dist))
            order = 1.0 if all(a < b for a, b in pairs) else (-1.0 if any(a > b for a, b in pairs) else 0.0)
        return explained, order


def _shared_relation(tokens: list[tuple[str, str]], where: dict[str, list[int]]) -> str | None:
    """The relation a sharing word is about: the one named closest to it (within 3 words; a naming
    after the word wins a tie: "share actors", "whose directors also directed")."""
    marks = [i for i, (t, _) in enumerate(tokens) if SHARING_CUE.fullmatch(t)]
    best: tuple[int, int, str] | None = None
    for r, positions in where.items():
        for m in marks:
            for p in positions:
                d = abs(p - m)
                if d <= 3:
                    key = (d, 0 if p > m else 1, r)
                    if best is None or key < best:
                        best = key
    return best[2] if best is not None else None


def schema_paths(
    graph: GraphIndex, max_hops: int, *, limit: int = 20_000, exclude: frozenset[str] | None = None
) -> list[RelationPath]:
    """The relation paths the graph's shape allows, by node labels: a hop may follow another when
    some node the first reaches (by its label) has the second leaving it. Levels of 1, 2, ...
    ``max_hops`` hops are added while the total stays within ``limit``. Relations in ``exclude``
    (default: the text-graph relations) are left out."""
    from cef.schema.textgraph import TEXT_GRAPH_RELATIONS

    skip = TEXT_GRAPH_RELATIONS if exclude is None else exclude
    n_edges = len(graph.edge_ids)
    if not n_edges:
        return []
    alive = graph.e_alive.view[:n_edges]
    rel = graph.e_rel.view[:n_edges][alive].astype(np.int64)
    labels = graph.node_label.view
    src_l = labels[graph.e_src.view[:n_edges][alive].astype(np.int64)].astype(np.int64)
    dst_l = labels[graph.e_dst.view[:n_edges][alive].astype(np.int64)].astype(np.int64)
    triples = np.unique(np.stack([rel, src_l, dst_l], axis=1), axis=0)
    leaving: dict[int, list[tuple[Hop, int]]] = {}  # label -> (hop, label reached)
    for r, a, b in triples.tolist():
        name = graph.relations.names[r]
        if name in skip:
            continue
        rt = graph.rel_types.get(name)
        leaving.setdefault(a, []).append((Hop(name, True), b))
        if rt is None or not rt.bidirectional:
            leaving.setdefault(b, []).append((Hop(name, False), a))
    out: list[RelationPath] = []
    level: list[tuple[RelationPath, int]] = list(
        dict.fromkeys(((hop,), end) for start in leaving for hop, end in leaving[start])
    )
    for _ in range(max_hops):
        paths = list(dict.fromkeys(p for p, _ in level))
        if not paths or len(out) + len(paths) > limit:
            break
        out.extend(paths)
        if len(out) + sum(len(leaving.get(end, ())) for _, end in level) > 4 * limit:
            break  # the next level alone would be far too many
        level = list(dict.fromkeys(((*p, hop), nxt) for p, end in level for hop, nxt in leaving.get(end, ())))
    return out


_cache: weakref.WeakKeyDictionary[EngineState, PathScorer] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def path_scorer(state: EngineState, settings: PathSettings | None = None) -> PathScorer:
    """The scorer of the engine's current graph (words rebuilt when the graph changed, vectors kept)."""
    g = state.graph
    stamp = (id(g), g.generation)
    settings = settings or PathSettings()
    with _lock:
        cur = _cache.get(state)
        if cur is not None and cur.stamp == stamp and cur.settings == settings:
            return cur
    scorer = PathScorer(g, stamp, settings, default_lemmatizer())
    if cur is not None:
        scorer.vectors = cur.vectors  # texts embed the same whatever the graph generation
    _fill_example_names(state, scorer)
    with _lock:
        _cache[state] = scorer
    return scorer


def _fill_example_names(state: EngineState, scorer: PathScorer) -> None:
    """Names of the most reached node of each relation and direction (the hops' example answers)."""
    g = scorer.graph
    n_edges = len(g.edge_ids)
    if not n_edges:
        return
    alive = g.e_alive.view[:n_edges]
    rel = g.e_rel.view[:n_edges].astype(np.int64)
    wanted: set[int] = set()
    for code in np.unique(rel[alive]).tolist():
        mask = alive & (rel == code)
        for ends in (g.e_dst.view[:n_edges][mask], g.e_src.view[:n_edges][mask]):
            counts = np.bincount(ends.astype(np.int64))
            wanted.update(np.argsort(-counts, kind="stable")[:_EXAMPLES].tolist())
    nodes = state.get_nodes([g.node_ids[p] for p in sorted(wanted) if g.node_alive[p]])
    by_id = {n.id: n.name for n in nodes}
    scorer._names = {p: by_id[g.node_ids[p]] for p in wanted if g.node_ids[p] in by_id}
