"""Human-readable text: why a path matched, and why a pattern matched nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cef.model.patterns import ConstraintTarget, GraphPattern, RankingStrategy
from cef.patterns.traverse import Found


def _start_conditions(p: GraphPattern) -> list[str]:
    out = []
    label = p.start.label or p.steps[0].source_label
    if p.start.node_ids:
        out.append("given start node")
    if label:
        out.append(f"label {label}")
    out.extend(c.describe() for c in p.start.all_constraints())
    return out


@dataclass
class _StepText:
    walk: str  # e.g. "(Patient)-[TAKES]->(Drug)"
    checks: list[tuple[str, str | None, bool]]  # (text, node label it is limited to, is an edge check)


@dataclass
class _SegmentText:
    head: str
    start: str
    steps: list[_StepText]


class PathExplainer:
    """Explanations for paths of one pattern (or one SEQUENTIAL chain); the fixed text is built once."""

    def __init__(self, segments: Sequence[GraphPattern]) -> None:
        self.segments: list[_SegmentText] = []
        for p in segments:
            head = f"pattern '{p.pattern_id}'" + (f" ({p.description})" if p.description else "")
            cond = _start_conditions(p)
            steps = [
                _StepText(
                    step.describe(),
                    [
                        (c.describe(), c.node_label, c.target is ConstraintTarget.EDGE)
                        for c in p.constraints_at(j)
                    ],
                )
                for j, step in enumerate(p.steps)
            ]
            self.segments.append(_SegmentText(head, f" [{'; '.join(cond)}]" if cond else "", steps))

    def describe(
        self,
        labels: Sequence[str],
        names: Sequence[str],
        relations: Sequence[str],
        strategy: RankingStrategy,
        score: float,
        components: dict[str, float],
    ) -> str:
        """``pattern 'p': start Patient 'Ann' [label Patient]; step 1 -[TAKES]-> Drug 'X' (...) [met: ...]; ranked by ...``"""
        parts: list[str] = []
        col = 0
        for seg in self.segments:
            parts.append(f"{seg.head}: start {labels[col]} '{names[col]}'{seg.start}")
            for j, st in enumerate(seg.steps):
                node = col + j + 1
                met = [text for text, only, edge in st.checks if edge or only is None or only == labels[node]]
                text = f"step {j + 1} -[{relations[node - 1]}]-> {labels[node]} '{names[node]}' ({st.walk})"
                parts.append(text + (f" [met: {'; '.join(met)}]" if met else ""))
            col += len(seg.steps)
        shown = ", ".join(
            f"{k} {v:.3g}"
            for k, v in components.items()
            if k != "hops" or strategy is not RankingStrategy.HYBRID
        )
        parts.append(f"ranked by {strategy.value}: score {score:.4g} ({shown})")
        return "; ".join(parts)


def diagnose(pattern: GraphPattern, found: Found) -> str | None:
    """Where a pattern that matched nothing lost its last paths (None if it had no start to lose)."""
    pid = pattern.pattern_id
    if found.start_candidates == 0:
        return f"pattern '{pid}': no start node (check start.node_ids / start.label)"
    if found.start_matched == 0:
        return f"pattern '{pid}': none of {found.start_candidates} start node(s) met the start conditions"
    for i, st in enumerate(found.steps):
        if st.paths:
            continue
        step = pattern.steps[i]
        if st.moves == 0:
            return (
                f"pattern '{pid}': step {i + 1} {step.describe()} found no edge to walk "
                "(check relation_type, direction, valid_at, scope)"
            )
        reasons = []
        if st.pruned_by_edge:
            reasons.append(f"{st.pruned_by_edge} by edge constraints")
        if st.pruned_by_node:
            reasons.append(f"{st.pruned_by_node} by target label / node constraints")
        if st.pruned_cycles:
            reasons.append(f"{st.pruned_cycles} as cycles (allow_cycles=false)")
        return f"pattern '{pid}': step {i + 1} {step.describe()} had {st.moves} move(s), pruned " + ", ".join(
            reasons
        )
    return None
