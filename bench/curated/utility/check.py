#!/usr/bin/env python3
"""Standalone gold checker for graph.yaml / questions.yaml (needs only PyYAML)."""
import os, sys, collections
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-27"

g = yaml.safe_load(open(os.path.join(HERE, "graph.yaml")))
q = yaml.safe_load(open(os.path.join(HERE, "questions.yaml")))
errors = []

rels = {r["name"]: r for r in g["relation_types"]}
inverse = {r["inverse"]: r["name"] for r in g["relation_types"]}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errors.append(f"relation {r} missing {k}")
nodes = {n["id"]: n for n in g["nodes"]}
if len(nodes) != len(g["nodes"]):
    errors.append("duplicate node ids")
chunks = {c["id"]: c for c in g["chunks"]}
if len(chunks) != len(g["chunks"]):
    errors.append("duplicate chunk ids")
for c in g["chunks"]:
    if c["node_id"] not in nodes:
        errors.append(f"chunk {c['id']} -> unknown node {c['node_id']}")
for e in g["edges"]:
    if e["relation_type"] not in rels:
        errors.append(f"edge uses unknown relation {e['relation_type']}")
    for end in ("source", "target"):
        if e[end] not in nodes:
            errors.append(f"edge {e} unknown {end}")

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
        elif step in inverse:
            fwd = inverse[step]
            for e in g["edges"]:
                if e["relation_type"] == fwd and e["target"] in cur and valid(e, date):
                    nxt.add(e["source"])
        else:
            errors.append(f"unknown path step {step}")
        cur = nxt
    return cur

ids = set()
hops = collections.Counter()
n_asof = 0
for qq in q["questions"]:
    qid = qq["id"]
    if qid in ids:
        errors.append(f"duplicate question id {qid}")
    ids.add(qid)
    if qq["anchor"] not in nodes:
        errors.append(f"{qid}: unknown anchor"); continue
    for a in qq["answers"]:
        if a not in nodes:
            errors.append(f"{qid}: unknown answer {a}")
    if not qq.get("chunks"):
        errors.append(f"{qid}: no chunks")
    for c in qq.get("chunks", []):
        if c not in chunks:
            errors.append(f"{qid}: unknown chunk {c}")
    p = nodes[qq["anchor"]]["properties"]
    names = [p["name"]] + list(p.get("aliases", []))
    if not any(n.lower() in qq["question"].lower() for n in names):
        errors.append(f"{qid}: anchor name/alias not in question text")
    date = str(qq.get("as_of") or TODAY)
    got = walk(qq["anchor"], qq["path"], date)
    if got != set(qq["answers"]):
        errors.append(f"{qid}: walk gives {sorted(got)} but gold is {sorted(qq['answers'])}")
    if qq.get("as_of"):
        n_asof += 1
        now = walk(qq["anchor"], qq["path"], TODAY)
        if now == got:
            errors.append(f"{qid}: as_of answer equals today's answer")
    hops[len(qq["path"])] += 1

# connectivity
adj = collections.defaultdict(set)
for e in g["edges"]:
    adj[e["source"]].add(e["target"]); adj[e["target"]].add(e["source"])
start = next(iter(nodes)); seen = {start}; stack = [start]
while stack:
    x = stack.pop()
    for y in adj[x]:
        if y not in seen:
            seen.add(y); stack.append(y)
if seen != set(nodes):
    errors.append(f"graph not connected: {sorted(set(nodes) - seen)}")

print(f"nodes={len(nodes)} labels={len({n['label'] for n in g['nodes']})} "
      f"relation_types={len(rels)} edges={len(g['edges'])} chunks={len(chunks)} "
      f"questions={len(q['questions'])} hops={dict(sorted(hops.items()))} as_of={n_asof}")
if errors:
    print("ERRORS:"); [print(" -", e) for e in errors]; sys.exit(1)
print("OK: all gold answers verified")
