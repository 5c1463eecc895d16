"""Entity resolution: which node does a name stand for?

One matcher serves ingest (a mention extracted from text → the node it names)
and queries (a target or a name in a question → anchor nodes). Tiers, first
hit wins:

1. **exact / alias** — the name's normalized key (case, accents, articles,
   possessives folded: :func:`~cef.extract.normalize.normalize_name`) or one
   of its alias keys (``"WUIN (FM)"`` is also ``"wuin"``) equals a key of a
   node's name or of one of its ``aliases``;
2. **fuzzy** — string similarity of the keys (rapidfuzz ``ratio``) at least
   ``fuzzy_cutoff``: ``"warfarine"`` → Warfarin, ``"atrial fibrilation"`` →
   Atrial fibrillation;
3. **partial** — every content word of the name is a word of exactly one
   node's name: ``"Dr. Chen"`` → Dr. Maria Chen, ``"Miller"`` → John Miller
   (when no other node name has that word).

Tiers 2 and 3 look only at *curated* nodes (nodes a user wrote, not
``Entity`` nodes extracted from text): guessing between thousands of
extracted names would merge different things, while a user's own graph is
the vocabulary a mention should land on. A type hint (an NER label such as
``PERSON``, or a node label) only breaks ties between candidates; it never
rejects one — spaCy calls "Lisinopril" a PERSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from cef.extract.normalize import alias_keys, normalize_name
from cef.extract.spacy_ner import spacy_stopwords

__all__ = ["NameResolver", "Resolved"]

#: words a partial name must hold more than: honorifics and initials say little on their own
_WEAK = frozenset({"dr", "mr", "mrs", "ms", "prof", "sir", "st", "jr", "sr"})


@dataclass(frozen=True, slots=True)
class Resolved:
    """A name resolved to a node: ``how`` is ``exact``, ``alias``, ``fuzzy`` or ``partial``."""

    node_id: str
    label: str
    how: str
    score: float
    key: str


@dataclass
class _Entry:
    node_id: str
    label: str
    curated: bool
    types: tuple[str, ...] = ()


@dataclass
class NameResolver:
    """Node names indexed for :meth:`resolve` (see the module doc for the tiers).

    ``fuzzy_cutoff``: similarity (0..1) a fuzzy match needs. A key shared by
    several nodes resolves to the first curated one added, else the first one.
    """

    fuzzy_cutoff: float = 0.88
    _keys: dict[str, _Entry] = field(default_factory=dict)
    _curated_keys: dict[str, None] = field(default_factory=dict)
    _key_list: list[str] | None = None
    _words: dict[str, set[str]] = field(default_factory=dict)  # word -> curated node ids
    _entries: dict[str, _Entry] = field(default_factory=dict)  # node id -> entry
    _stop: frozenset[str] = field(default_factory=spacy_stopwords)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._entries

    def add(
        self,
        node_id: str,
        label: str,
        names: Iterable[str],
        *,
        curated: bool = True,
        types: Sequence[str] = (),
    ) -> None:
        """Index a node under its names (name and aliases)."""
        entry = _Entry(node_id, label, curated, tuple(types))
        self._entries[node_id] = entry
        for name in names:
            for key in alias_keys(name):
                cur = self._keys.get(key)
                if cur is None or (curated and not cur.curated):
                    self._keys[key] = entry
                    if curated:
                        self._curated_keys[key] = None
                        self._key_list = None
                if curated:
                    for w in key.split():
                        if w not in self._stop and w not in _WEAK and len(w) >= 2:
                            self._add_word(w, node_id)

    def _add_word(self, word: str, node_id: str) -> None:
        members = self._words.get(word)
        if members is None:
            self._words[word] = {node_id}
        elif node_id not in members:
            if type(self._words) is dict:
                members.add(node_id)
            else:  # a resolver over a shared mapping (an Overlay): new sets, never the ones read through
                self._words[word] = {*members, node_id}

    def derive(self) -> NameResolver:
        """A resolver that starts with this one's names and takes more without changing this one
        (its mappings read through to this one's: :class:`~cef.graph.arrays.Overlay`)."""
        from cef.graph.arrays import Overlay

        out = NameResolver(fuzzy_cutoff=self.fuzzy_cutoff, _stop=self._stop)
        out._keys = Overlay(self._keys)  # type: ignore[assignment]
        out._curated_keys = Overlay(self._curated_keys)  # type: ignore[assignment]
        out._words = Overlay(self._words)  # type: ignore[assignment]
        out._entries = Overlay(self._entries)  # type: ignore[assignment]
        return out

    def key_of(self, key: str) -> str | None:
        """The node a normalized key names exactly (no fuzzy tiers)."""
        entry = self._keys.get(key)
        return entry.node_id if entry is not None else None

    def resolve(
        self, name: str, *, hint: str | None = None, fuzzy: bool = True, partial: bool = True
    ) -> Resolved | None:
        """The node ``name`` stands for, or None (see the module doc)."""
        key = normalize_name(name)
        if not key:
            return None
        entry = self._keys.get(key)
        if entry is not None:
            return Resolved(entry.node_id, entry.label, "exact", 1.0, key)
        for ak in alias_keys(name):
            entry = self._keys.get(ak)
            if entry is not None:
                return Resolved(entry.node_id, entry.label, "alias", 0.98, ak)
        if fuzzy and self._curated_keys and len(key) >= 4:
            got = self._fuzzy(key, hint)
            if got is not None:
                return got
        if partial:
            return self._partial(key, hint)
        return None

    def _fuzzy(self, key: str, hint: str | None) -> Resolved | None:
        from rapidfuzz import fuzz, process

        if self._key_list is None:
            self._key_list = list(self._curated_keys)
        found = process.extract(
            key,
            self._key_list,
            scorer=fuzz.ratio,
            score_cutoff=self.fuzzy_cutoff * 100,
            limit=5,
        )
        if not found:
            return None
        best = max(s for _, s, _ in found)
        top = [k for k, s, _ in found if s == best]
        entries = self._prefer([self._keys[k] for k in top], hint)
        if len({e.node_id for e in entries}) != 1:
            return None  # as close to two nodes: not a match
        e = entries[0]
        return Resolved(e.node_id, e.label, "fuzzy", round(best / 100.0, 4), key)

    def _partial(self, key: str, hint: str | None) -> Resolved | None:
        words = [w for w in key.split() if w not in self._stop and w not in _WEAK]
        if not words or all(len(w) < 3 for w in words):
            return None
        sets = [self._words.get(w) for w in words]
        if any(s is None for s in sets):
            return None
        common = set.intersection(*(s for s in sets if s is not None))
        entries = self._prefer([self._entries[n] for n in sorted(common)], hint)
        if len(entries) != 1:
            return None  # nobody, or ambiguous ("Miller" when two Millers exist)
        e = entries[0]
        return Resolved(e.node_id, e.label, "partial", 0.8, key)

    @staticmethod
    def _prefer(entries: list[_Entry], hint: str | None) -> list[_Entry]:
        """Candidates whose label or extracted types match the hint, when some do; else all."""
        if not hint or len(entries) < 2:
            return entries
        h = hint.lower()
        fit = [e for e in entries if e.label.lower() == h or h in (t.lower() for t in e.types)]
        return fit or entries
