#!/usr/bin/env python3
"""Standalone gold check for the league data set (needs only PyYAML)."""
import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
TODAY = "2026-11-27"
SEMANTICS = {"ASSOCIATION", "HIERARCHY", "CONTAINMENT", "CLASSIFICATION", "SEQUENCE", "REFERENCE"}

g = yaml.safe_load(open(HERE / "graph.yaml"))
q = yaml.safe_load(open(HERE / "questions.yaml"))
errors = []


def err(msg):
    errors.append(msg)


# ---- graph structure
rtypes = {r["name"]: r for r in g["relation_types"]}
forward = set(rtypes)
inverse = {r["inverse"]: r["name"] for r in g["relation_types"]}
for r in g["relation_types"]:
    if r.get("semantics") not in SEMANTICS:
        err(f"relation {r['name']}: bad semantics {r.get('semantics')}")
    if not r.get("inverse") or not r.get("description"):
        err(f"relation {r['name']}: missing inverse/description")
if forward & set(inverse):
    err(f"names used both as relation and inverse: {forward & set(inverse)}")

nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes:
        err(f"duplicate node id {n['id']}")
    nodes[n["id"]] = n
    if "name" not in n.get("properties", {}):
        err(f"node {n['id']} has no name")

for e in g["edges"]:
    if e["relation_type"] not in rtypes:
        err(f"edge uses unknown relation {e['relation_type']}")
    for end in ("source", "target"):
        if e[end] not in nodes:
            err(f"edge {e} has unknown {end}")
    if "confidence" in e and not (0 <= e["confidence"] <= 1):
        err(f"edge {e} bad confidence")
    if e.get("valid_from") and e.get("valid_to") and not e["valid_from"] < e["valid_to"]:
        err(f"edge {e} has valid_from >= valid_to")

chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks:
        err(f"duplicate chunk id {c['id']}")
    chunks[c["id"]] = c
    if c["node_id"] not in nodes:
        err(f"chunk {c['id']} about unknown node {c['node_id']}")

# connectivity (undirected)
adj = defaultdict(set)
for e in g["edges"]:
    adj[e["source"]].add(e["target"])
    adj[e["target"]].add(e["source"])
start = next(iter(nodes))
seen, stack = {start}, [start]
while stack:
    for m in adj[stack.pop()]:
        if m not in seen:
            seen.add(m)
            stack.append(m)
if seen != set(nodes):
    err(f"graph not connected; unreachable: {sorted(set(nodes) - seen)}")


# ---- path walking
def valid(e, date):
    vf, vt = e.get("valid_from"), e.get("valid_to")
    if vf and not str(vf) <= date:
        return False
    if vt and not date < str(vt):
        return False
    return True


def walk(anchor, path, date):
    frontier = {anchor}
    for step in path:
        nxt = set()
        if step in forward:
            for e in g["edges"]:
                if e["relation_type"] == step and e["source"] in frontier and valid(e, date):
                    nxt.add(e["target"])
        elif step in inverse:
            base = inverse[step]
            for e in g["edges"]:
                if e["relation_type"] == base and e["target"] in frontier and valid(e, date):
                    nxt.add(e["source"])
        else:
            raise KeyError(step)
        frontier = nxt
    return frontier


hops = Counter()
as_of_count = 0
multi = 0
qids = set()
for item in q["questions"]:
    qid = item["id"]
    if qid in qids:
        err(f"duplicate question id {qid}")
    qids.add(qid)
    anchor = item["anchor"]
    if anchor not in nodes:
        err(f"{qid}: unknown anchor {anchor}")
        continue
    props = nodes[anchor]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(str(nm).lower() in item["question"].lower() for nm in names):
        err(f"{qid}: question does not mention anchor name/alias {names}")
    bad_steps = [s for s in item["path"] if s not in forward and s not in inverse]
    if bad_steps:
        err(f"{qid}: unknown relation(s) in path {bad_steps}")
        continue
    for a in item["answers"]:
        if a not in nodes:
            err(f"{qid}: unknown answer id {a}")
    if not item.get("chunks"):
        err(f"{qid}: no chunks")
    for c in item.get("chunks", []):
        if c not in chunks:
            err(f"{qid}: unknown chunk {c}")
    date = str(item.get("as_of", TODAY))
    got = walk(anchor, item["path"], date)
    if got != set(item["answers"]):
        err(f"{qid}: gold {sorted(item['answers'])} but walk gives {sorted(got)} at {date}")
    if "as_of" in item:
        as_of_count += 1
        now = walk(anchor, item["path"], TODAY)
        if now == got:
            err(f"{qid}: as_of answer equals today's answer {sorted(now)}")
    hops[len(item["path"])] += 1
    if len(item["answers"]) > 1:
        multi += 1

labels = Counter(n["label"] for n in g["nodes"])
print(f"nodes={len(nodes)} labels={len(labels)} {dict(labels)}")
print(f"relation_types={len(rtypes)} edges={len(g['edges'])} chunks={len(chunks)}")
print(f"questions={len(q['questions'])} by_hops={dict(sorted(hops.items()))} as_of={as_of_count} multi_answer={multi}")

# size requirements from the brief
if len(nodes) < 45: err("fewer than 45 nodes")
if len(labels) < 6: err("fewer than 6 node types")
if len(rtypes) < 9: err("fewer than 9 relation types")
if len(g["edges"]) < 80: err("fewer than 80 edges")
if len(chunks) < 45: err("fewer than 45 chunks")
if len(q["questions"]) < 28: err("fewer than 28 questions")
if as_of_count < 4: err("fewer than 4 as_of questions")

if errors:
    print("\nFAILED:")
    for m in errors:
        print("  -", m)
    sys.exit(1)
print("OK: all checks passed")
