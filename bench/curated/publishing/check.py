#!/usr/bin/env python3
"""Standalone gold check for the publishing set (PyYAML only)."""
import sys, os
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-27"

def load(name):
    with open(os.path.join(HERE, name)) as f:
        return yaml.safe_load(f)

g = load("graph.yaml")
q = load("questions.yaml")
errors = []

rels = {r["name"]: r for r in g["relation_types"]}
fwd = set(rels)
inv = {r["inverse"]: r["name"] for r in g["relation_types"]}
if fwd & set(inv):
    errors.append(f"relation name/inverse clash: {fwd & set(inv)}")
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errors.append(f"relation {r} missing {k}")

nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes:
        errors.append(f"duplicate node {n['id']}")
    nodes[n["id"]] = n
for e in g["edges"]:
    if e["relation_type"] not in fwd:
        errors.append(f"edge with unknown relation {e}")
    for k in ("source", "target"):
        if e[k] not in nodes:
            errors.append(f"edge endpoint missing {e[k]}")
chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks:
        errors.append(f"duplicate chunk {c['id']}")
    chunks[c["id"]] = c
    if c["node_id"] not in nodes:
        errors.append(f"chunk {c['id']} about missing node {c['node_id']}")

def valid(e, date):
    vf, vt = e.get("valid_from"), e.get("valid_to")
    return (vf is None or str(vf) <= date) and (vt is None or date < str(vt))

def walk(anchor, path, date):
    cur = {anchor}
    for step in path:
        nxt = set()
        if step in fwd:
            for e in g["edges"]:
                if e["relation_type"] == step and e["source"] in cur and valid(e, date):
                    nxt.add(e["target"])
        elif step in inv:
            base = inv[step]
            for e in g["edges"]:
                if e["relation_type"] == base and e["target"] in cur and valid(e, date):
                    nxt.add(e["source"])
        else:
            raise KeyError(step)
        cur = nxt
    return cur

ids = set()
hops = {}
for qu in q["questions"]:
    qid = qu["id"]
    if qid in ids:
        errors.append(f"duplicate question id {qid}")
    ids.add(qid)
    if qu["anchor"] not in nodes:
        errors.append(f"{qid}: anchor missing"); continue
    props = nodes[qu["anchor"]]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(nm.lower() in qu["question"].lower() for nm in names):
        errors.append(f"{qid}: anchor name/alias not in question text")
    bad = [s for s in qu["path"] if s not in fwd and s not in inv]
    if bad:
        errors.append(f"{qid}: unknown path steps {bad}"); continue
    for a in qu["answers"]:
        if a not in nodes:
            errors.append(f"{qid}: answer {a} missing")
    if not qu.get("chunks"):
        errors.append(f"{qid}: no chunks")
    for c in qu.get("chunks", []):
        if c not in chunks:
            errors.append(f"{qid}: chunk {c} missing")
    date = str(qu.get("as_of") or TODAY)
    got = walk(qu["anchor"], qu["path"], date)
    if got != set(qu["answers"]):
        errors.append(f"{qid}: walk gives {sorted(got)} but gold {sorted(qu['answers'])}")
    if qu.get("as_of"):
        now = walk(qu["anchor"], qu["path"], TODAY)
        if now == got:
            errors.append(f"{qid}: as_of answer equals today's answer")
    hops[len(qu["path"])] = hops.get(len(qu["path"]), 0) + 1

# connectivity
adj = {n: set() for n in nodes}
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
      f"chunks={len(chunks)} questions={len(ids)} hops={dict(sorted(hops.items()))} "
      f"as_of={sum(1 for x in q['questions'] if x.get('as_of'))}")
if errors:
    print("FAIL"); [print(" -", e) for e in errors]; sys.exit(1)
print("OK")
