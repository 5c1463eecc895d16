#!/usr/bin/env python3
"""Standalone gold checker for graph.yaml / questions.yaml (needs only PyYAML)."""
import sys, datetime, yaml, os

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-28"

def load(name):
    with open(os.path.join(HERE, name)) as f:
        return yaml.safe_load(f)

g = load("graph.yaml"); q = load("questions.yaml")
errors = []
def err(m): errors.append(m)

def iso(s, where):
    try:
        datetime.date.fromisoformat(str(s)); return str(s)
    except Exception:
        err(f"bad date {s!r} in {where}"); return None

nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes: err(f"duplicate node {n['id']}")
    nodes[n["id"]] = n
    if not n.get("properties", {}).get("name"): err(f"node {n['id']} has no name")
fwd, inv = {}, {}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k): err(f"relation {r} missing {k}")
    if r["semantics"] not in {"ASSOCIATION","HIERARCHY","CONTAINMENT","CLASSIFICATION","SEQUENCE","REFERENCE"}:
        err(f"bad semantics {r['semantics']}")
    fwd[r["name"]] = r["inverse"]; inv[r["inverse"]] = r["name"]
if set(fwd) & set(inv): err(f"names used both as relation and inverse: {set(fwd)&set(inv)}")
for i, e in enumerate(g["edges"]):
    if e["relation_type"] not in fwd: err(f"edge {i}: unknown relation {e['relation_type']}")
    for end in ("source", "target"):
        if e[end] not in nodes: err(f"edge {i}: unknown {end} {e[end]}")
    for k in ("valid_from", "valid_to"):
        if k in e: iso(e[k], f"edge {i}")
chunk_ids = set()
for c in g["chunks"]:
    if c["id"] in chunk_ids: err(f"duplicate chunk {c['id']}")
    chunk_ids.add(c["id"])
    if c["node_id"] not in nodes: err(f"chunk {c['id']}: unknown node {c['node_id']}")

def valid(e, date):
    vf = str(e.get("valid_from", "0000-01-01")); vt = str(e.get("valid_to", "9999-12-31"))
    return vf <= date < vt

def step(frontier, rel, date):
    out = set()
    for e in g["edges"]:
        if not valid(e, date): continue
        if rel in fwd and e["relation_type"] == rel and e["source"] in frontier: out.add(e["target"])
        elif rel in inv and e["relation_type"] == inv[rel] and e["target"] in frontier: out.add(e["source"])
    return out

hops = {}; qids = set(); n_asof = 0
for x in q["questions"]:
    qid = x["id"]
    if qid in qids: err(f"duplicate question id {qid}")
    qids.add(qid)
    a = x["anchor"]
    if a not in nodes: err(f"{qid}: unknown anchor {a}"); continue
    names = [nodes[a]["properties"]["name"]] + list(nodes[a]["properties"].get("aliases", []))
    if not any(str(nm).lower() in x["question"].lower() for nm in names):
        err(f"{qid}: anchor name/alias not in question text")
    for rel in x["path"]:
        if rel not in fwd and rel not in inv: err(f"{qid}: unknown relation {rel} in path")
    for ans in x["answers"]:
        if ans not in nodes: err(f"{qid}: unknown answer {ans}")
    if not x.get("chunks"): err(f"{qid}: no chunks")
    for c in x.get("chunks", []):
        if c not in chunk_ids: err(f"{qid}: unknown chunk {c}")
    date = TODAY
    if x.get("as_of"):
        date = iso(x["as_of"], qid) or TODAY; n_asof += 1
    frontier = {a}
    for rel in x["path"]:
        frontier = step(frontier, rel, date)
    if frontier != set(x["answers"]):
        err(f"{qid}: path gives {sorted(frontier)} but gold is {sorted(x['answers'])}")
    if x.get("as_of"):
        now = {a}
        for rel in x["path"]:
            now = step(now, rel, TODAY)
        if now == frontier: err(f"{qid}: as_of answer equals today's answer")
    hops[len(x["path"])] = hops.get(len(x["path"]), 0) + 1

# connectivity
adj = {n: set() for n in nodes}
for e in g["edges"]:
    adj[e["source"]].add(e["target"]); adj[e["target"]].add(e["source"])
seen = set(); stack = [next(iter(nodes))]
while stack:
    n = stack.pop()
    if n in seen: continue
    seen.add(n); stack.extend(adj[n] - seen)
if seen != set(nodes): err(f"graph not connected: unreachable {sorted(set(nodes)-seen)}")

print(f"nodes={len(nodes)} labels={len({n['label'] for n in nodes.values()})} relation_types={len(fwd)} "
      f"edges={len(g['edges'])} chunks={len(chunk_ids)} questions={len(qids)} hops={dict(sorted(hops.items()))} as_of={n_asof}")
if errors:
    print("FAIL"); [print("  -", m) for m in errors]; sys.exit(1)
print("OK")
