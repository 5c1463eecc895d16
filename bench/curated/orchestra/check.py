#!/usr/bin/env python3
"""Standalone gold checker for the orchestra data set (needs only PyYAML)."""
import sys, yaml
from collections import Counter

TODAY = "2026-11-28"
g = yaml.safe_load(open("graph.yaml", encoding="utf-8"))
q = yaml.safe_load(open("questions.yaml", encoding="utf-8"))["questions"]
errors = []

nodes = {n["id"]: n for n in g["nodes"]}
chunks = {c["id"]: c for c in g["chunks"]}
rels = {r["name"]: r for r in g["relation_types"]}
inverse = {r["inverse"]: r["name"] for r in g["relation_types"]}
if set(rels) & set(inverse):
    errors.append(f"inverse names collide with forward names: {set(rels) & set(inverse)}")
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errors.append(f"relation {r} missing {k}")
if len(nodes) != len(g["nodes"]):
    errors.append("duplicate node ids")
if len(chunks) != len(g["chunks"]):
    errors.append("duplicate chunk ids")
for e in g["edges"]:
    if e["relation_type"] not in rels:
        errors.append(f"unknown relation in edge {e}")
    for end in ("source", "target"):
        if e[end] not in nodes:
            errors.append(f"unknown node {e[end]} in edge {e}")
for c in g["chunks"]:
    if c["node_id"] not in nodes:
        errors.append(f"chunk {c['id']} about unknown node {c['node_id']}")

def valid(e, date):
    vf, vt = e.get("valid_from"), e.get("valid_to")
    return (vf is None or str(vf) <= date) and (vt is None or date < str(vt))

def walk(anchor, path, date):
    frontier = {anchor}
    for step in path:
        nxt = set()
        if step in rels:
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

ids = Counter(x["id"] for x in q)
for k, v in ids.items():
    if v > 1:
        errors.append(f"duplicate question id {k}")
hops = Counter()
asof = 0
for x in q:
    qid = x["id"]
    if x["anchor"] not in nodes:
        errors.append(f"{qid}: unknown anchor"); continue
    props = nodes[x["anchor"]]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(n.lower() in x["question"].lower() for n in names):
        errors.append(f"{qid}: anchor name/alias not in question text")
    bad = [s for s in x["path"] if s not in rels and s not in inverse]
    if bad:
        errors.append(f"{qid}: unknown relation(s) in path {bad}"); continue
    for a in x["answers"]:
        if a not in nodes:
            errors.append(f"{qid}: unknown answer {a}")
    if not x.get("chunks"):
        errors.append(f"{qid}: no chunks")
    for c in x.get("chunks", []):
        if c not in chunks:
            errors.append(f"{qid}: unknown chunk {c}")
    date = str(x.get("as_of") or TODAY)
    got = walk(x["anchor"], x["path"], date)
    if got != set(x["answers"]):
        errors.append(f"{qid}: path gives {sorted(got)} but gold is {sorted(x['answers'])}")
    if x.get("as_of"):
        asof += 1
        now = walk(x["anchor"], x["path"], TODAY)
        if now == got:
            errors.append(f"{qid}: as_of answer equals today's answer")
    hops[len(x["path"])] += 1

print(f"nodes={len(nodes)} labels={len({n['label'] for n in g['nodes']})} relation_types={len(rels)} "
      f"edges={len(g['edges'])} chunks={len(chunks)} questions={len(q)} hops={dict(sorted(hops.items()))} as_of={asof}")
if errors:
    print("FAIL"); [print(" -", e) for e in errors]; sys.exit(1)
print("OK: all gold answers verified")
