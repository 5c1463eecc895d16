"""The names and the MENTIONS graph of one graph generation, as the graph strategies read them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from cef.extract.resolve import NameResolver
from cef.extract.spacy_ner import Gazetteer, SpacyEntityExtractor
from cef.graph.push import PushGraph

if TYPE_CHECKING:
    from scipy import sparse

__all__ = ["EntityIndex"]


@dataclass
class EntityIndex:
    """Names and the MENTIONS graph of one graph generation (what the graph strategies read).

    Positions are :class:`~cef.graph.index.GraphIndex` node positions.
    ``passages`` are the nodes with MENTIONS edges out (chunk holders), in
    position order; ``passage_entities[i]`` the entity positions passage ``i``
    links to; ``ent_ptr``/``ent_passage``/``ent_weight``/``ent_edge`` a CSR
    from entity position to the passages that mention it (weight, edge position);
    ``title_owners`` maps an entity position to the passages it titles.
    """

    stamp: tuple[int, int]
    gazetteer: Gazetteer
    key_index: MutableMapping[str, int]
    names: Mapping[int, str]
    types: Mapping[int, list[str]]
    matrix: sparse.csr_matrix | None = None
    push: PushGraph | None = None
    passages: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    passage_index: Mapping[int, int] = field(default_factory=dict)
    passage_entities: Sequence[np.ndarray] = field(default_factory=list)
    df: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ent_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    ent_passage: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ent_weight: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ent_edge: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    title_owners: Mapping[int, list[int]] = field(default_factory=dict)
    chunk_ids: list[str] = field(default_factory=list)  # grouped by passage
    chunk_passage: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    passage_chunks: Sequence[list[str]] = field(default_factory=list)
    extractor: SpacyEntityExtractor | None = None
    ner_failed: bool = False
    _written: dict[str, list[int]] | None = field(default=None, repr=False)  # see written_names()
    from_file: bool = False  # read from the file saved beside the store (not built from the store)
    _resolver: NameResolver | None = field(default=None, repr=False)
    _resolver_from: Callable[[], NameResolver] | None = field(default=None, repr=False)

    @property
    def resolver(self) -> NameResolver:
        """Names -> node ids (exact … partial); an index read from its file makes it on first use."""
        if self._resolver is None:
            made = self._resolver_from() if self._resolver_from is not None else NameResolver()
            self._resolver, self._resolver_from = made, None
        return self._resolver

    def written_names(self) -> dict[str, list[int]]:
        """Node positions by name as written (the index is keyed by normalized names); made on first use."""
        if self._written is None:
            got: dict[str, list[int]] = {}
            for pos, name in self.names.items():
                got.setdefault(name, []).append(pos)
            self._written = got
        return self._written

    @property
    def has_mentions(self) -> bool:
        return self.matrix is not None and len(self.passages) > 0

    def passages_of(self, entity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(passage indices, edge weights, edge positions) of the passages that mention an entity."""
        if entity + 1 >= len(self.ent_ptr):
            empty = np.zeros(0, dtype=np.int64)
            return empty, np.zeros(0), empty
        a, b = int(self.ent_ptr[entity]), int(self.ent_ptr[entity + 1])
        return self.ent_passage[a:b], self.ent_weight[a:b], self.ent_edge[a:b]
