#!/usr/bin/env python3
"""Benchmark of the graph pattern engine (cef.patterns) on a generated 100K-node / 500K-edge graph.

The graph is generated with numpy and bulk-loaded into a GraphIndex: five
labels (Person, Company, Product, City, Topic), eight relation types (some
bidirectional, some with inverse names), random weights and confidences,
validity windows on WORKS_AT, numeric and string properties. It then times:

* 5-hop patterns from one entry node, with node and edge constraints
  (target p95 <= 50 ms);
* an INTERSECTION of 5 patterns (persons meeting five criteria, each a 1- to
  3-hop pattern from its own anchor; target p95 <= 100 ms);
* for information, a 5-hop pattern started from a filtered label (hundreds of
  start nodes).

    .venv/bin/python bench/bench_patterns.py [--nodes 100000] [--edges 500000] [--runs 200] [--seed 1]

Runs in well under two minutes on two cores.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cef.graph.index import GraphIndex
from cef.model import RelationType
from cef.patterns import GraphPattern, InMemoryNodeLookup, PatternExecutor, QueryCombinator

LABEL_SHARE = {"Person": 0.4, "Company": 0.2, "Product": 0.2, "City": 0.1, "Topic": 0.1}
# relation, source label, target label, share of the edges
RELATIONS = [
    ("KNOWS", "Person", "Person", 0.30),
    ("WORKS_AT", "Person", "Company", 0.08),
    ("BUYS", "Person", "Product", 0.24),
    ("MADE_BY", "Product", "Company", 0.04),
    ("LOCATED_IN", "Person", "City", 0.08),
    ("LOCATED_IN", "Company", "City", 0.04),
    ("ABOUT", "Product", "Topic", 0.08),
    ("RELATED_TO", "Topic", "Topic", 0.04),
    ("COMPETES_WITH", "Company", "Company", 0.10),
]
RELATION_TYPES = [
    RelationType(name="KNOWS", bidirectional=True),
    RelationType(name="WORKS_AT", inverse="EMPLOYS"),
    RelationType(name="BUYS", inverse="BOUGHT_BY"),
    RelationType(name="MADE_BY", inverse="MAKES"),
    RelationType(name="LOCATED_IN", inverse="HOSTS"),
    RelationType(name="ABOUT", inverse="TOPIC_OF"),
    RelationType(name="RELATED_TO", bidirectional=True),
    RelationType(name="COMPETES_WITH", bidirectional=True),
]
TIERS = ["bronze", "silver", "gold"]


@dataclass
class Generated:
    graph: GraphIndex
    lookup: InMemoryNodeLookup
    ranges: dict[str, tuple[int, int]]  # label -> [start, end) positions
    src: np.ndarray
    dst: np.ndarray
    rel: np.ndarray  # index into RELATIONS


def generate(n_nodes: int, n_edges: int, seed: int) -> Generated:
    rng = np.random.default_rng(seed)
    ranges: dict[str, tuple[int, int]] = {}
    labels: list[str] = []
    start = 0
    for label, share in LABEL_SHARE.items():
        count = int(n_nodes * share)
        ranges[label] = (start, start + count)
        labels.extend([label] * count)
        start += count
    n = len(labels)
    ids = [f"{lb[:2].lower()}{i}" for i, lb in enumerate(labels)]
    props: list[dict[str, Any]] = []
    tiers = rng.integers(0, 3, n)
    numbers = rng.random(n)
    for i, lb in enumerate(labels):
        p: dict[str, Any] = {"name": f"{lb} {i}", "tier": TIERS[tiers[i]]}
        if lb == "Person":
            p["age"] = int(18 + numbers[i] * 72)
        elif lb == "Company":
            p["revenue"] = round(float(numbers[i]) * 1e9, 2)
        elif lb == "Product":
            p["price"] = round(float(numbers[i]) * 1000, 2)
        elif lb == "City":
            p["population"] = int(numbers[i] * 5e6)
        props.append(p)

    srcs, dsts, rels = [], [], []
    for r, (_, a, b, share) in enumerate(RELATIONS):
        count = int(n_edges * share)
        lo_a, hi_a = ranges[a]
        lo_b, hi_b = ranges[b]
        srcs.append(rng.integers(lo_a, hi_a, count))
        dsts.append(rng.integers(lo_b, hi_b, count))
        rels.append(np.full(count, r))
    src, dst, rel = np.concatenate(srcs), np.concatenate(dsts), np.concatenate(rels)
    m = len(src)
    valid_from = np.full(m, -math.inf)
    valid_to = np.full(m, math.inf)
    works = rel == 1
    years = rng.integers(1990, 2020, int(works.sum()))
    valid_from[works] = [time.mktime((int(y), 1, 1, 0, 0, 0, 0, 1, 0)) for y in years]

    graph = GraphIndex()
    graph.set_relation_types(RELATION_TYPES)
    graph.add_node_arrays(ids, labels, [None] * n)
    names = [RELATIONS[r][0] for r in range(len(RELATIONS))]
    graph.add_edge_arrays(
        [f"e{i}" for i in range(m)],
        [ids[s] for s in src.tolist()],
        [ids[t] for t in dst.tolist()],
        [names[r] for r in rel.tolist()],
        rng.uniform(0.1, 2.0, m).tolist(),
        rng.uniform(0.3, 1.0, m).tolist(),
        valid_from.tolist(),
        valid_to.tolist(),
        [0.0] * m,
        [None] * m,
    )
    graph.compact()
    return Generated(graph, InMemoryNodeLookup.from_positions(graph, props), ranges, src, dst, rel)


# ---------------------------------------------------------------------------- patterns
def five_hop_light(person: str) -> GraphPattern:
    """Friends over 30 -> their employer (not bronze) -> competitors -> city -> people under 40 there."""
    return GraphPattern.model_validate(
        {
            "pattern_id": "five_hop_light",
            "start": {"node_ids": [person]},
            "steps": [
                {"relation_type": "KNOWS", "target_label": "Person",
                 "constraints": [{"type": "GREATER_THAN", "property": "age", "value": 30}]},
                {"relation_type": "WORKS_AT", "target_label": "Company",
                 "constraints": [{"type": "NOT_IN", "property": "tier", "value": ["bronze"]}]},
                {"relation_type": "COMPETES_WITH"},
                {"relation_type": "LOCATED_IN", "target_label": "City"},
                {"relation_type": "HOSTS", "target_label": "Person",
                 "constraints": [{"type": "LESS_THAN", "property": "age", "value": 40}]},
            ],
            "constraints": [{"type": "GREATER_THAN_EQUALS", "target": "EDGE", "property": "confidence", "value": 0.4}],
            "max_paths": 50,
        }
    )  # fmt: skip


def five_hop_heavy(person: str) -> GraphPattern:
    """Friends of friends -> what they buy (under 500) -> its maker -> silver/gold competitors."""
    return GraphPattern.model_validate(
        {
            "pattern_id": "five_hop_heavy",
            "start": {"node_ids": [person]},
            "steps": [
                {"relation_type": "KNOWS"},
                {"relation_type": "KNOWS"},
                {"relation_type": "BUYS",
                 "constraints": [{"type": "LESS_THAN", "property": "price", "value": 500}]},
                {"relation_type": "MADE_BY"},
                {"relation_type": "COMPETES_WITH",
                 "constraints": [{"type": "PROPERTY_IN", "property": "tier", "value": ["silver", "gold"]}]},
            ],
            "constraints": [{"type": "GREATER_THAN_EQUALS", "target": "EDGE", "property": "confidence", "value": 0.4}],
            "max_paths": 50,
        }
    )  # fmt: skip


def five_hop_wide(person: str) -> GraphPattern:
    """Friends to the third degree (both ways) over 30 -> what they buy -> its topics (not bronze)."""
    return GraphPattern.model_validate(
        {
            "pattern_id": "five_hop_wide",
            "start": {"node_ids": [person]},
            "steps": [
                {"relation_type": "KNOWS"},
                {"relation_type": "KNOWS"},
                {"relation_type": "KNOWS", "constraints": [{"type": "GREATER_THAN", "property": "age", "value": 30}]},
                {"relation_type": "BUYS"},
                {"relation_type": "ABOUT", "target_label": "Topic",
                 "constraints": [{"type": "NOT_IN", "property": "tier", "value": ["bronze"]}]},
            ],
            "max_paths": 50,
        }
    )  # fmt: skip


def five_hop_label_start(min_revenue: float) -> GraphPattern:
    """From gold companies above a revenue -> products -> buyers over 50 -> friends -> city -> companies."""
    return GraphPattern.model_validate(
        {
            "pattern_id": "five_hop_label_start",
            "start": {"label": "Company", "properties": {"tier": "gold"},
                      "constraints": [{"type": "GREATER_THAN", "property": "revenue", "value": min_revenue}]},
            "steps": [
                {"relation_type": "MAKES"},
                {"relation_type": "BOUGHT_BY",
                 "constraints": [{"type": "GREATER_THAN", "property": "age", "value": 50}]},
                {"relation_type": "KNOWS"},
                {"relation_type": "LOCATED_IN"},
                {"relation_type": "HOSTS", "target_label": "Company"},
            ],
            "constraints": [{"type": "GREATER_THAN_EQUALS", "target": "EDGE", "property": "confidence", "value": 0.5}],
            "max_paths": 50,
        }
    )  # fmt: skip


def five_wide_criteria(i: int) -> QueryCombinator:
    """Persons meeting five broad criteria, each a pattern from hundreds or thousands of label-matched starts."""

    def pat(pid: str, start: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
        return {"pattern_id": pid, "start": start, "steps": steps, "max_paths": 50}

    gt = "GREATER_THAN"
    return QueryCombinator.model_validate(
        {
            "type": "INTERSECTION",
            "max_paths": 50,
            "patterns": [
                pat("big_city", {"label": "City", "constraints": [
                    {"type": gt, "property": "population", "value": 4.0e6 + 1e4 * i}]},
                    [{"relation_type": "HOSTS", "target_label": "Person"}]),
                pat("cheap_buyer", {"label": "Product", "constraints": [
                    {"type": "LESS_THAN", "property": "price", "value": 300}]},
                    [{"relation_type": "BOUGHT_BY"}]),
                pat("rich_employer", {"label": "Company", "properties": {"tier": "gold"}},
                    [{"relation_type": "EMPLOYS"}]),
                pat("topic_buyer", {"label": "Topic", "properties": {"tier": "silver"}},
                    [{"relation_type": "TOPIC_OF"}, {"relation_type": "BOUGHT_BY"}]),
                pat("knows_senior", {"label": "Person", "constraints": [{"type": gt, "property": "age", "value": 75}]},
                    [{"relation_type": "KNOWS"}]),
            ],
        }
    )  # fmt: skip


def five_criteria(gen: Generated, rng: np.random.Generator) -> tuple[QueryCombinator, str]:
    """Persons meeting five criteria, anchored so that one chosen person meets all of them."""
    g = gen.graph
    src, dst, rel = gen.src, gen.dst, gen.rel
    lo, hi = gen.ranges["Person"]

    def out(node: int, r: int) -> np.ndarray:
        return dst[(src == node) & (rel == r)]

    def both(node: int, r: int) -> np.ndarray:
        return np.concatenate([dst[(src == node) & (rel == r)], src[(dst == node) & (rel == r)]])

    while True:
        x = int(rng.integers(lo, hi))
        city, bought, friends, employer = out(x, 4), out(x, 2), both(x, 0), out(x, 1)
        if not (len(city) and len(bought) and len(friends) and len(employer)):
            continue
        fof = np.concatenate([both(int(f), 0) for f in friends])
        fof = fof[fof != x]
        rivals = both(int(employer[0]), 8)
        topics = np.concatenate([out(int(p), 6) for p in bought])
        if len(fof) and len(rivals) and len(topics):
            break
    ident = g.node_ids

    def pat(pid: str, anchor: int, steps: list[dict[str, Any]]) -> dict[str, Any]:
        return {"pattern_id": pid, "start": {"node_ids": [ident[anchor]]}, "steps": steps, "max_paths": 50}

    person = {"target_label": "Person"}
    comb = QueryCombinator.model_validate(
        {
            "type": "INTERSECTION",
            "max_paths": 50,
            "patterns": [
                pat("lives_in_city", int(city[0]), [{"relation_type": "HOSTS", **person}]),
                pat("bought_product", int(bought[0]), [{"relation_type": "BOUGHT_BY", **person}]),
                pat("friend_of_friend", int(fof[0]), [{"relation_type": "KNOWS"}, {"relation_type": "KNOWS", **person}]),
                pat("works_at_rival", int(rivals[0]), [
                    {"relation_type": "COMPETES_WITH"},
                    {"relation_type": "EMPLOYS", **person,
                     "constraints": [{"type": "GREATER_THAN_EQUALS", "property": "age", "value": 18}]}]),
                pat("bought_on_topic", int(topics[0]), [
                    {"relation_type": "TOPIC_OF"},
                    {"relation_type": "BOUGHT_BY", **person}]),
            ],
        }
    )  # fmt: skip
    return comb, ident[x]


# ---------------------------------------------------------------------------- timing
@dataclass
class Row:
    name: str
    target_ms: float | None
    times: list[float]
    paths: list[int]
    candidates: list[int]
    timeouts: int

    def p(self, q: float) -> float:
        s = sorted(self.times)
        return s[min(len(s) - 1, math.ceil(q * len(s)) - 1)]


def measure(
    name: str, target: float | None, runs: int, make: Callable[[int], Any], run: Callable[[Any], Any]
) -> Row:
    for i in range(3):  # warm up
        run(make(10_000 + i))
    times, paths, candidates, timeouts = [], [], [], 0
    for i in range(runs):
        query = make(i)
        t = time.perf_counter()
        result = run(query)
        times.append((time.perf_counter() - t) * 1000)
        paths.append(len(result.paths))
        candidates.append(sum(s.paths for s in result.stats))
        timeouts += result.timed_out
    return Row(name, target, times, paths, candidates, timeouts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--edges", type=int, default=500_000)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    t0 = time.perf_counter()
    gen = generate(args.nodes, args.edges, args.seed)
    g = gen.graph
    print(f"graph: {g.node_count:,} nodes, {g.edge_count:,} edges, built in {time.perf_counter() - t0:.1f} s")
    ex = PatternExecutor(g, gen.lookup)
    lo, hi = gen.ranges["Person"]
    rng = np.random.default_rng(args.seed + 1)
    people = [g.node_ids[int(p)] for p in rng.integers(lo, hi, args.runs + 10_010)]

    def person(i: int) -> str:
        return people[i % len(people)]

    rows = [
        measure("5-hop, entry node (light)", 50, args.runs, lambda i: five_hop_light(person(i)), ex.execute),
        measure("5-hop, entry node (medium)", 50, args.runs, lambda i: five_hop_heavy(person(i)), ex.execute),
        measure("5-hop, entry node (wide)", 50, args.runs, lambda i: five_hop_wide(person(i)), ex.execute),
    ]
    combos: dict[int, QueryCombinator] = {}
    anchors: dict[int, str] = {}

    def combo(i: int) -> QueryCombinator:
        if i not in combos:
            combos[i], anchors[i] = five_criteria(gen, np.random.default_rng(args.seed * 1000 + i))
        return combos[i]

    for i in range(args.runs):
        combo(i)
    found = []

    def run_combo(c: QueryCombinator) -> Any:
        result = ex.execute_combinator(c)
        found.append(result)
        return result

    rows.append(measure("INTERSECTION of 5 patterns", 100, args.runs, combo, run_combo))
    hits = sum(anchors[i] in r.end_node_ids for i, r in enumerate(found[3:]))
    label_runs = max(10, args.runs // 10)
    rows.append(
        measure(
            "INTERSECTION of 5, label starts", None, label_runs, five_wide_criteria, ex.execute_combinator
        )
    )
    revenue = [9.5e8 - 1e7 * (i % 10) for i in range(label_runs + 3)]
    rows.append(
        measure(
            "5-hop, label start (info)",
            None,
            label_runs,
            lambda i: five_hop_label_start(revenue[i % 10]),
            ex.execute,
        )
    )

    print()
    print(
        f"{'query':<34} {'runs':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'found p50':>11} "
        f"{'returned':>9} {'timeouts':>8}  target"
    )
    for r in rows:
        verdict = (
            ""
            if r.target_ms is None
            else (f"p95 <= {r.target_ms:g} ms: {'met' if r.p(0.95) <= r.target_ms else 'MISSED'}")
        )
        print(
            f"{r.name:<34} {len(r.times):>5} {statistics.median(r.times):>8.2f} {r.p(0.95):>8.2f} "
            f"{max(r.times):>8.2f} {statistics.median(r.candidates):>11.0f} {statistics.median(r.paths):>9.0f} "
            f"{r.timeouts:>8}  {verdict}"
        )
    print(f"\nintersection: the anchored person was found in {hits}/{len(found) - 3} runs")
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
