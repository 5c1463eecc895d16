#!/usr/bin/env python3
"""Standalone gold checker for the hospital data set (needs only PyYAML)."""
import os
import sys
from collections import Counter, defaultdict

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-27"

with open(os.path.join(HERE, "graph.yaml")) as f:
    g = yaml.safe_load(f)
with open(os.path.join(HERE, "questions.yaml")) as f:
    q = yaml.safe_load(f)

errors = []
warnings = []

rels = {r["name"]: r for r in g["relation_types"]}
inverse_of = {}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errors.append(f"relation type {r} missing {k}")
    if r["semantics"] not in {"ASSOCIATION", "HIERARCHY", "CONTAINMENT", "CLASSIFICATION", "SEQUENCE", "REFERENCE"}:
        errors.append(f"bad semantics {r['semantics']}")
    inv = r["inverse"]
    if inv in rels or inv in inverse_of:
        errors.append(f"inverse name {inv} collides")
    inverse_of[inv] = r["name"]

nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes:
        errors.append(f"duplicate node {n['id']}")
    nodes[n["id"]] = n
    if not n.get("properties", {}).get("name"):
        errors.append(f"node {n['id']} has no name")

for e in g["edges"]:
    if e["relation_type"] not in rels:
        errors.append(f"edge uses unknown relation {e['relation_type']}")
    for end in ("source", "target"):
        if e[end] not in nodes:
            errors.append(f"edge {e} has unknown {end}")
    vf, vt = e.get("valid_from"), e.get("valid_to")
    if vf and vt and not str(vf) < str(vt):
        errors.append(f"edge {e} has valid_from >= valid_to")

chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks:
        errors.append(f"duplicate chunk {c['id']}")
    chunks[c["id"]] = c
    if c["node_id"] not in nodes:
        errors.append(f"chunk {c['id']} about unknown node {c['node_id']}")


def valid(e, date):
    vf = e.get("valid_from")
    vt = e.get("valid_to")
    if vf and str(vf) > date:
        return False
    if vt and not date < str(vt):
        return False
    return True


def step(frontier, rel, date):
    out = set()
    if rel in rels:
        for e in g["edges"]:
            if e["relation_type"] == rel and e["source"] in frontier and valid(e, date):
                out.add(e["target"])
    elif rel in inverse_of:
        fwd = inverse_of[rel]
        for e in g["edges"]:
            if e["relation_type"] == fwd and e["target"] in frontier and valid(e, date):
                out.add(e["source"])
    else:
        errors.append(f"unknown relation in path: {rel}")
    return out


def walk(anchor, path, date):
    frontier = {anchor}
    for rel in path:
        frontier = step(frontier, rel, date)
    return frontier


ids = set()
hops = Counter()
as_of_count = 0
multi = 0
for item in q["questions"]:
    qid = item["id"]
    if qid in ids:
        errors.append(f"duplicate question id {qid}")
    ids.add(qid)
    anchor = item["anchor"]
    if anchor not in nodes:
        errors.append(f"{qid}: unknown anchor {anchor}")
        continue
    props = nodes[anchor]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(n.lower() in item["question"].lower() for n in names):
        errors.append(f"{qid}: anchor name/alias not in question text ({names})")
    for a in item["answers"]:
        if a not in nodes:
            errors.append(f"{qid}: unknown answer {a}")
    if not item.get("chunks"):
        errors.append(f"{qid}: no chunks")
    for c in item.get("chunks", []):
        if c not in chunks:
            errors.append(f"{qid}: unknown chunk {c}")
    for rel in item["path"]:
        if rel not in rels and rel not in inverse_of:
            errors.append(f"{qid}: unknown relation {rel}")
    date = str(item["as_of"]) if item.get("as_of") else TODAY
    got = walk(anchor, item["path"], date)
    if got != set(item["answers"]):
        errors.append(f"{qid}: gold {sorted(item['answers'])} but walk gives {sorted(got)} at {date}")
    if item.get("as_of"):
        as_of_count += 1
        now = walk(anchor, item["path"], TODAY)
        if now == got:
            errors.append(f"{qid}: as_of answer equals today's answer {sorted(now)}")
    hops[len(item["path"])] += 1
    if len(item["answers"]) >= 2:
        multi += 1

# connectivity (undirected)
adj = defaultdict(set)
for e in g["edges"]:
    adj[e["source"]].add(e["target"])
    adj[e["target"]].add(e["source"])
start = next(iter(nodes))
seen = {start}
stack = [start]
while stack:
    x = stack.pop()
    for y in adj[x]:
        if y not in seen:
            seen.add(y)
            stack.append(y)
if seen != set(nodes):
    errors.append(f"graph not connected; unreachable: {sorted(set(nodes) - seen)}")

labels = Counter(n["label"] for n in g["nodes"])
size = {
    "nodes": len(nodes), "node_types": len(labels), "relation_types": len(rels),
    "edges": len(g["edges"]), "chunks": len(chunks), "questions": len(q["questions"]),
}
mins = {"nodes": 45, "node_types": 6, "relation_types": 9, "edges": 80, "chunks": 45, "questions": 28}
for k, v in mins.items():
    if size[k] < v:
        errors.append(f"too few {k}: {size[k]} < {v}")
if as_of_count < 4:
    errors.append("fewer than 4 as_of questions")
nodes_without_chunk = sorted(set(nodes) - {c["node_id"] for c in chunks.values()})
if nodes_without_chunk:
    warnings.append(f"nodes without a chunk: {nodes_without_chunk}")

print("sizes:", size)
print("node labels:", dict(labels))
print("questions by hops:", dict(sorted(hops.items())), "as_of:", as_of_count, "multi-answer:", multi)
for w in warnings:
    print("WARNING:", w)
if errors:
    for e in errors:
        print("ERROR:", e)
    sys.exit(1)
print("OK: all checks passed")
