"""PatternExecutor: runs patterns and combinators over a :class:`GraphIndex` and ranks the paths."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from cef.errors import QueryTimeoutError, ValidationError
from cef.graph.index import GraphIndex
from cef.model.graph import NAME_KEYS
from cef.model.patterns import (
    CombinatorType,
    ConstraintTarget,
    GraphPattern,
    QueryCombinator,
    RankingStrategy,
)
from cef.patterns import npx
from cef.patterns.constraints import EdgeCheck, NodeCheck
from cef.patterns.explain import PathExplainer, diagnose
from cef.patterns.groups import GroupScorer, MatchGroup, MatchRun
from cef.patterns.lookup import EmbedQueryFn, NodeLookup, NodeVectors, SimilarityFn
from cef.patterns.ranking import (
    CentralityCache,
    CentralityKind,
)
from cef.patterns.result import MatchedPath, PatternResult
from cef.patterns.traverse import Plan, StepPlan, walk

log = logging.getLogger(__name__)


class PatternTimeoutError(QueryTimeoutError):
    """The time limit stopped a pattern search (raised only with ``raise_on_timeout=True``)."""

    def __init__(self, message: str, partial: PatternResult) -> None:
        super().__init__(message)
        self.partial = partial


class PatternExecutor:
    """Runs :class:`GraphPattern` and :class:`QueryCombinator` queries over an in-memory graph index.

    ``nodes`` gives node properties for property constraints and display
    names; ``embed_query`` and ``node_vectors`` enable SEMANTIC_SCORE ranking
    (or pass ``similarity`` per call). ``max_candidates`` caps the complete
    paths collected per pattern before ranking; ``clock`` is injectable for tests.

    Usage::

        ex = PatternExecutor(graph, InMemoryNodeLookup(graph, nodes))
        result = ex.execute(GraphPattern.model_validate(
            {"start": {"node_ids": ["p1"]}, "steps": [{"relation_type": "TAKES", "target_label": "Drug"}]}
        ))
        for path in result.paths:
            print(path.to_path_string(), path.score)
    """

    def __init__(
        self,
        graph: GraphIndex,
        nodes: NodeLookup,
        *,
        embed_query: EmbedQueryFn | None = None,
        node_vectors: NodeVectors | None = None,
        centrality: CentralityKind = "degree",
        max_candidates: int = 50_000,
        block_size: int = 2048,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.graph = graph
        self.nodes = nodes
        self.embed_query = embed_query
        self.node_vectors = node_vectors
        self.centrality = CentralityCache(graph, centrality)
        self.max_candidates = max_candidates
        self.block_size = block_size
        self.clock = clock

    # ------------------------------------------------------------------ entry points
    def run(
        self,
        query: GraphPattern | QueryCombinator,
        *,
        start_nodes: Sequence[str] | None = None,
        query_text: str | None = None,
        similarity: SimilarityFn | None = None,
        raise_on_timeout: bool = False,
    ) -> PatternResult:
        """Execute a pattern or a combinator."""
        if isinstance(query, QueryCombinator):
            return self.execute_combinator(
                query,
                start_nodes=start_nodes,
                query_text=query_text,
                similarity=similarity,
                raise_on_timeout=raise_on_timeout,
            )
        return self.execute(
            query,
            start_nodes=start_nodes,
            query_text=query_text,
            similarity=similarity,
            raise_on_timeout=raise_on_timeout,
        )

    def execute(
        self,
        pattern: GraphPattern,
        *,
        start_nodes: Sequence[str] | None = None,
        query_text: str | None = None,
        similarity: SimilarityFn | None = None,
        raise_on_timeout: bool = False,
    ) -> PatternResult:
        """Match one pattern.

        ``start_nodes`` are entry points (node ids) used when the pattern's
        ``start.node_ids`` is empty; ``query_text`` is what SEMANTIC_SCORE /
        HYBRID compare nodes with when the pattern has no ``semantic_query``.
        """
        warnings: list[str] = []
        # the scorer embeds the query text and computes centrality: one-time loading (the embedding
        # model, caches) that must not count against the search's time limit
        scorer = GroupScorer(
            self,
            pattern.ranking,
            pattern.hybrid_weights,
            pattern.semantic_query or query_text,
            similarity,
            warnings,
        )
        t0 = self.clock()
        deadline = t0 + pattern.time_limit_ms / 1000 if pattern.time_limit_ms else None
        stop = pattern.max_paths if scorer.strategy is RankingStrategy.PATH_LENGTH else None
        run = self._walk(0, pattern, start_nodes, None, deadline, None, stop)
        warnings.extend(run.warnings)
        group = MatchGroup.of(run)
        paths = self._materialize([group], scorer.rank([group], pattern.max_paths), scorer)
        result = PatternResult(
            paths=paths,
            ranking=scorer.strategy,
            timed_out=run.found.timed_out,
            truncated=run.found.truncated,
            elapsed_ms=(self.clock() - t0) * 1000,
            warnings=warnings,
            stats=[run.stats()],
        )
        return self._finish(result, raise_on_timeout)

    def execute_combinator(
        self,
        combinator: QueryCombinator,
        *,
        start_nodes: Sequence[str] | None = None,
        query_text: str | None = None,
        similarity: SimilarityFn | None = None,
        raise_on_timeout: bool = False,
    ) -> PatternResult:
        """Match several patterns and combine them (see :class:`QueryCombinator`)."""
        warnings: list[str] = []
        text = combinator.patterns[0].semantic_query or query_text
        scorer = GroupScorer(  # one-time loading before the clock starts (see execute)
            self, combinator.effective_ranking, combinator.effective_weights, text, similarity, warnings
        )
        t0 = self.clock()
        budget = t0 + combinator.time_limit_ms / 1000 if combinator.time_limit_ms else None
        kind = combinator.type
        if kind is CombinatorType.INTERSECTION:
            runs, groups = self._intersection(combinator, start_nodes, budget, scorer, warnings)
        elif kind is CombinatorType.UNION:
            runs, groups = self._union(combinator, start_nodes, budget, scorer)
        else:
            runs, groups = self._sequential(combinator, start_nodes, budget, scorer)
        for r in runs:
            warnings.extend(r.warnings)
        ranked = scorer.rank(groups, combinator.max_paths)
        result = PatternResult(
            paths=self._materialize(groups, ranked, scorer),
            ranking=scorer.strategy,
            timed_out=any(r.found.timed_out for r in runs),
            truncated=any(r.found.truncated for r in runs),
            elapsed_ms=(self.clock() - t0) * 1000,
            warnings=list(dict.fromkeys(warnings)),
            stats=[r.stats() for r in runs],
        )
        return self._finish(result, raise_on_timeout)

    def similarity_for(self, text: str | None) -> SimilarityFn | None:
        """Similarity of node positions to ``text`` via ``embed_query`` + ``node_vectors`` (None if either is missing)."""
        if not text or self.embed_query is None or self.node_vectors is None:
            return None
        vector = np.asarray(self.embed_query(text), dtype=np.float32)
        vectors, ids = self.node_vectors, self.graph.node_ids

        def sim(positions: np.ndarray) -> np.ndarray:
            return np.asarray(vectors.similarities(vector, [ids[p] for p in positions.tolist()]))

        return sim

    # ------------------------------------------------------------------ combinators
    def _deadline(self, budget: float | None, pattern: GraphPattern) -> float | None:
        own = self.clock() + pattern.time_limit_ms / 1000 if pattern.time_limit_ms else None
        if budget is None or own is None:
            return budget if own is None else own
        return min(budget, own)

    def _intersection(
        self,
        comb: QueryCombinator,
        start_nodes: Sequence[str] | None,
        budget: float | None,
        scorer: GroupScorer,
        warnings: list[str],
    ) -> tuple[list[MatchRun], list[MatchGroup]]:
        runs: list[MatchRun] = []
        common: np.ndarray | None = None
        for i, p in enumerate(comb.patterns):
            if common is not None and not common.any():
                warnings.append(
                    f"INTERSECTION is empty after pattern '{comb.patterns[i - 1].pattern_id}'; "
                    f"{len(comb.patterns) - i} pattern(s) not run"
                )
                return runs, []
            # ends must already be common to the earlier patterns: pruned during the walk
            run = self._walk(i, p, start_nodes, None, self._deadline(budget, p), common, None)
            runs.append(run)
            common = np.zeros(len(self.graph.node_ids), dtype=np.bool_)
            common[run.found.nodes[:, -1]] = True
        assert common is not None
        groups = []
        for run in runs:
            g = MatchGroup.of(run)
            g = g.take(np.flatnonzero(common[g.nodes[:, -1]]))
            groups.append(scorer.top(g, run.pattern.max_paths))
        return runs, groups

    def _union(
        self,
        comb: QueryCombinator,
        start_nodes: Sequence[str] | None,
        budget: float | None,
        scorer: GroupScorer,
    ) -> tuple[list[MatchRun], list[MatchGroup]]:
        runs: list[MatchRun] = []
        groups: list[MatchGroup] = []
        seen: set[tuple[bytes, bytes]] = set()
        for i, p in enumerate(comb.patterns):
            stop = p.max_paths if scorer.strategy is RankingStrategy.PATH_LENGTH else None
            run = self._walk(i, p, start_nodes, None, self._deadline(budget, p), None, stop)
            runs.append(run)
            g = scorer.top(MatchGroup.of(run), p.max_paths)
            keep = []
            for r in range(len(g)):
                key = (g.nodes[r].tobytes(), g.edges[r].tobytes())
                if key not in seen:
                    seen.add(key)
                    keep.append(r)
            groups.append(g.take(np.asarray(keep, dtype=np.int64)))
        return runs, groups

    def _sequential(
        self,
        comb: QueryCombinator,
        start_nodes: Sequence[str] | None,
        budget: float | None,
        scorer: GroupScorer,
    ) -> tuple[list[MatchRun], list[MatchGroup]]:
        runs: list[MatchRun] = []
        chain: MatchGroup | None = None
        for i, p in enumerate(comb.patterns):
            seeds = None
            if chain is not None:
                ends, best = scorer.best_per_end(chain)
                seeds = ends
            run = self._walk(
                i, p, start_nodes if i == 0 else None, seeds, self._deadline(budget, p), None, None
            )
            runs.append(run)
            seg = MatchGroup.of(run)
            if chain is not None:
                prefix = best[np.searchsorted(ends, seg.nodes[:, 0])]
                head = chain.nodes[prefix][:, :-1]
                seg = MatchGroup(
                    [*chain.segments, p],
                    np.concatenate([head, seg.nodes], axis=1),
                    np.concatenate([chain.edges[prefix], seg.edges], axis=1),
                    np.concatenate([chain.forward[prefix], seg.forward], axis=1),
                )
                if not p.allow_cycles and len(seg):  # the chain must not come back to its prefix
                    tail = seg.nodes[:, head.shape[1] + 1 :]
                    revisit = (tail[:, :, None] == head[:, None, :]).any(axis=(1, 2))
                    seg = seg.take(np.flatnonzero(~revisit))
            chain = seg
            if not len(chain):
                break
        return runs, [chain] if chain is not None else []

    # ------------------------------------------------------------------ one pattern
    def _walk(
        self,
        index: int,
        pattern: GraphPattern,
        start_nodes: Sequence[str] | None,
        seeds: np.ndarray | None,
        deadline: float | None,
        end_mask: np.ndarray | None,
        stop_after: int | None,
    ) -> MatchRun:
        warnings = [f"pattern '{pattern.pattern_id}': {w}" for w in pattern.problems()] + self._check_names(
            pattern
        )
        starts = self._starts(pattern, start_nodes, seeds, warnings)
        plan = self._plan(pattern, end_mask)
        found = walk(
            self.graph,
            plan,
            starts,
            deadline=deadline,
            clock=self.clock,
            max_candidates=self.max_candidates,
            stop_after=stop_after,
            block_size=self.block_size,
        )
        if found.count == 0 and not found.timed_out:
            why = diagnose(pattern, found)
            if why:
                warnings.append(why)
        log.debug(
            "pattern %s: %d starts, %d paths, timed_out=%s",
            pattern.pattern_id,
            len(starts),
            found.count,
            found.timed_out,
        )
        return MatchRun(index, pattern, found, warnings)

    def _plan(self, pattern: GraphPattern, end_mask: np.ndarray | None) -> Plan:
        g, steps = self.graph, pattern.steps
        start_check = NodeCheck(
            g,
            self.nodes,
            labels=[pattern.start.label, steps[0].source_label],
            constraints=pattern.start.all_constraints(),
        )
        plans = []
        for i, step in enumerate(steps):
            here = pattern.constraints_at(i)
            nxt = steps[i + 1].source_label if i + 1 < len(steps) else None
            node_check = NodeCheck(
                g,
                self.nodes,
                labels=[step.target_label, nxt],
                constraints=[c for c in here if c.target is ConstraintTarget.NODE],
                allowed=end_mask if i == len(steps) - 1 else None,
            )
            flt = g.edge_filter(
                relation_types=step.relation_names,
                direction=step.direction.index_direction,
                valid_at=pattern.valid_at,
                scope=pattern.scope,
            )
            plans.append(StepPlan(flt, EdgeCheck(g, here), node_check))
        return Plan(start_check, plans, pattern.allow_cycles)

    def _starts(
        self,
        pattern: GraphPattern,
        start_nodes: Sequence[str] | None,
        seeds: np.ndarray | None,
        warnings: list[str],
    ) -> np.ndarray:
        g = self.graph
        ids = pattern.start.node_ids or (
            list(start_nodes) if start_nodes is not None and seeds is None else None
        )
        label = pattern.start.label or pattern.steps[0].source_label
        if seeds is not None:
            pos = seeds.astype(np.int64)
            if pattern.start.node_ids:
                pos = np.intersect1d(pos, self._positions(pattern.start.node_ids, warnings))
        elif ids is not None:
            pos = self._positions(ids, warnings)
        elif label is not None:
            pos = g.nodes_with_label(label).astype(np.int64)
        else:
            raise ValidationError(
                f"pattern {pattern.pattern_id!r} has nowhere to start: set start.node_ids or start.label, "
                "or the first step's source_label, or pass entry points (start_nodes)"
            )
        pos = npx.unique(pos)
        return pos[g.visible_nodes(None if pattern.scope is None else [pattern.scope], pos)]

    def _positions(self, ids: Sequence[str], warnings: list[str]) -> np.ndarray:
        pos = [self.graph.pos(i) for i in ids]
        missing = [i for i, p in zip(ids, pos, strict=True) if p is None]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:5])
            warnings.append(f"start node id(s) not in the graph: {shown}{' ...' if len(missing) > 5 else ''}")
        return np.asarray([p for p in pos if p is not None], dtype=np.int64)

    def _check_names(self, pattern: GraphPattern) -> list[str]:
        g = self.graph
        out: list[str] = []
        labels = {
            pattern.start.label,
            *(s.source_label for s in pattern.steps),
            *(s.target_label for s in pattern.steps),
        }
        labels |= {c.node_label for c in pattern.constraints} | {
            c.node_label for s in pattern.steps for c in s.constraints
        }
        rels = {r for s in pattern.steps for r in (s.relation_names or [])}
        if pattern.scope is None:
            seen_labels = set(g.labels.names)
            seen_rels = {
                *g.relations.names,
                *g.rel_types,
                *(rt.inverse for rt in g.rel_types.values() if rt.inverse),
            }
        else:  # name only what this scope's and shared records hold (never another scope's names)
            seen_labels, seen_rels = self._names_in_scope(pattern.scope)
        unknown = sorted(lb for lb in labels if lb is not None and lb not in seen_labels)
        if unknown:
            known = ", ".join(sorted(seen_labels)[:20])
            out.append(
                f"pattern '{pattern.pattern_id}': label(s) {unknown} not in the graph (labels: {known})"
            )
        unknown = sorted(r for r in rels if r not in seen_rels)
        if unknown:
            known = ", ".join(sorted(seen_rels)[:30])
            out.append(
                f"pattern '{pattern.pattern_id}': relation(s) {unknown} not in the graph (relations: {known})"
            )
        return out

    def _names_in_scope(self, scope: str) -> tuple[set[str], set[str]]:
        """Labels and relation names (with inverse names) of live records of ``scope`` or of none."""
        g = self.graph
        code = g.scopes.get(scope)
        allowed = [-1] if code is None else [-1, code]
        n, m = len(g.node_ids), len(g.edge_ids)
        nodes = g.visible_nodes([scope])
        edges = g.e_alive.view[:m] & np.isin(g.e_scope.view[:m], allowed)
        labels = {g.labels.names[c] for c in np.unique(g.node_label.view[:n][nodes])}
        rels = {g.relations.names[c] for c in np.unique(g.e_rel.view[:m][edges])}
        rels |= {rt.inverse for name in list(rels) if (rt := g.rel_types.get(name)) and rt.inverse}
        return labels, rels

    # ------------------------------------------------------------------ results
    def _materialize(
        self, groups: Sequence[MatchGroup], ranked: list[tuple[int, int, float]], scorer: GroupScorer
    ) -> list[MatchedPath]:
        if not ranked:
            return []
        g = self.graph
        every = npx.unique(np.concatenate([groups[gi].nodes[r] for gi, r, _ in ranked]))
        props = dict(zip(every.tolist(), self.nodes.properties(every), strict=True))
        label_names, node_label = g.labels.names, g.node_label.view
        weights, confs = g.e_weight.view, g.e_conf.view
        explainers: dict[int, PathExplainer] = {}
        out = []
        for gi, r, s in ranked:
            grp = groups[gi]
            assert grp.comps is not None
            if gi not in explainers:
                explainers[gi] = PathExplainer(grp.segments)
            nodes = grp.nodes[r]
            edges = grp.edges[r]
            node_list = nodes.tolist()
            names = [_name(props.get(n), g.node_ids[n]) for n in node_list]
            labels = [label_names[c] for c in node_label[nodes].tolist()]
            rels = [
                g.relation_name(e, f) for e, f in zip(edges.tolist(), grp.forward[r].tolist(), strict=True)
            ]
            comp = grp.comps.row(r)
            w = weights[edges].astype(np.float64)
            c = confs[edges].astype(np.float64)
            out.append(
                MatchedPath(
                    pattern_id=grp.pattern_id,
                    node_ids=[g.node_ids[n] for n in node_list],
                    edge_ids=[g.edge_ids[e] for e in edges.tolist()],
                    relation_types=rels,
                    node_labels=labels,
                    node_names=names,
                    score=s,
                    score_components=comp,
                    properties={
                        "hops": float(len(edges)),
                        "weight_sum": float(w.sum()),
                        "weight_product": float(w.prod()),
                        "confidence_product": float(c.prod()),
                    },
                    explanation=explainers[gi].describe(labels, names, rels, scorer.strategy, s, comp),
                )
            )
        return out

    def _finish(self, result: PatternResult, raise_on_timeout: bool) -> PatternResult:
        if result.timed_out:  # never a silent partial answer
            note = (
                f"time limit reached after {result.elapsed_ms:.0f} ms: the search stopped early, "
                f"{len(result.paths)} path(s) found so far (raise time_limit_ms for all of them)"
            )
            result = result.model_copy(update={"warnings": [*result.warnings, note]})
        if result.timed_out and raise_on_timeout:
            raise PatternTimeoutError(
                f"pattern search exceeded its time limit after {result.elapsed_ms:.1f} ms "
                f"({len(result.paths)} path(s) found so far; see .partial)",
                result,
            )
        return result


def _name(props: object, default: str) -> str:
    if isinstance(props, dict | Mapping):
        for key in NAME_KEYS:
            v = props.get(key)
            if isinstance(v, str) and v:
                return v
    return default
