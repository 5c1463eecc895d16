#!/usr/bin/env python3
"""Standalone gold checker for the festival data set (needs only PyYAML)."""
import os, sys, collections
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-27"

g = yaml.safe_load(open(os.path.join(HERE, "graph.yaml")))
q = yaml.safe_load(open(os.path.join(HERE, "questions.yaml")))
errors = []

nodes = {n["id"]: n for n in g["nodes"]}
if len(nodes) != len(g["nodes"]):
    errors.append("duplicate node ids")
rels = {}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errors.append(f"relation {r} missing {k}")
    rels[r["name"]] = r
inverse_of = {r["inverse"]: r["name"] for r in g["relation_types"]}
chunks = {c["id"]: c for c in g["chunks"]}
if len(chunks) != len(g["chunks"]):
    errors.append("duplicate chunk ids")
for c in g["chunks"]:
    if c["node_id"] not in nodes:
        errors.append(f"chunk {c['id']} about unknown node {c['node_id']}")
for e in g["edges"]:
    if e["relation_type"] not in rels:
        errors.append(f"edge with unknown relation {e}")
    for end in ("source", "target"):
        if e[end] not in nodes:
            errors.append(f"edge endpoint unknown: {e}")

def valid(e, date):
    vf, vt = e.get("valid_from"), e.get("valid_to")
    return (vf is None or str(vf) <= date) and (vt is None or date < str(vt))

def walk(anchor, path, date):
    cur = {anchor}
    for step in path:
        nxt = set()
        if step in rels:
            for e in g["edges"]:
                if e["relation_type"] == step and e["source"] in cur and valid(e, date):
                    nxt.add(e["target"])
        elif step in inverse_of:
            fwd = inverse_of[step]
            for e in g["edges"]:
                if e["relation_type"] == fwd and e["target"] in cur and valid(e, date):
                    nxt.add(e["source"])
        else:
            errors.append(f"unknown path step {step}")
        cur = nxt
    return cur

hops = collections.Counter()
as_of_n = 0
ids = set()
for qq in q["questions"]:
    qid = qq["id"]
    if qid in ids:
        errors.append(f"duplicate question id {qid}")
    ids.add(qid)
    if qq["anchor"] not in nodes:
        errors.append(f"{qid}: unknown anchor"); continue
    a = nodes[qq["anchor"]]["properties"]
    names = [a["name"]] + list(a.get("aliases", []))
    if not any(n.lower() in qq["question"].lower() for n in names):
        errors.append(f"{qid}: anchor name/alias not in question")
    for x in qq["answers"]:
        if x not in nodes:
            errors.append(f"{qid}: unknown answer {x}")
    if not qq.get("chunks"):
        errors.append(f"{qid}: no chunks")
    for c in qq.get("chunks", []):
        if c not in chunks:
            errors.append(f"{qid}: unknown chunk {c}")
    date = str(qq["as_of"]) if qq.get("as_of") else TODAY
    got = walk(qq["anchor"], qq["path"], date)
    if got != set(qq["answers"]):
        errors.append(f"{qid}: walk gives {sorted(got)} but gold {sorted(qq['answers'])}")
    if qq.get("as_of"):
        as_of_n += 1
        now = walk(qq["anchor"], qq["path"], TODAY)
        if now == got:
            errors.append(f"{qid}: as_of answer same as today's")
    hops[len(qq["path"])] += 1

# connectivity
adj = collections.defaultdict(set)
for e in g["edges"]:
    adj[e["source"]].add(e["target"]); adj[e["target"]].add(e["source"])
start = next(iter(nodes)); seen = {start}; stack = [start]
while stack:
    for m in adj[stack.pop()]:
        if m not in seen:
            seen.add(m); stack.append(m)
if seen != set(nodes):
    errors.append(f"graph not connected: {sorted(set(nodes) - seen)}")

labels = {n["label"] for n in g["nodes"]}
print(f"nodes={len(nodes)} labels={len(labels)} relation_types={len(rels)} edges={len(g['edges'])} "
      f"chunks={len(chunks)} questions={len(q['questions'])} hops={dict(sorted(hops.items()))} as_of={as_of_n}")
if errors:
    print("ERRORS:"); [print(" -", e) for e in errors]; sys.exit(1)
print("OK")
