#!/usr/bin/env python3
"""Standalone gold check for the farm co-op set (needs only PyYAML)."""
import sys, yaml
from pathlib import Path

HERE = Path(__file__).resolve().parent
TODAY = "2026-11-28"
g = yaml.safe_load(open(HERE / "graph.yaml"))
q = yaml.safe_load(open(HERE / "questions.yaml"))
errs = []

def s(v):
    return None if v is None else str(v)

nodes = {n["id"]: n for n in g["nodes"]}
chunks = {c["id"]: c for c in g["chunks"]}
fwd = {r["name"]: r for r in g["relation_types"]}
inv = {r["inverse"]: r["name"] for r in g["relation_types"]}
if len(nodes) != len(g["nodes"]): errs.append("duplicate node ids")
if len(chunks) != len(g["chunks"]): errs.append("duplicate chunk ids")
if set(fwd) & set(inv): errs.append(f"name/inverse clash {set(fwd) & set(inv)}")
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k): errs.append(f"relation {r} missing {k}")
for e in g["edges"]:
    if e["relation_type"] not in fwd: errs.append(f"unknown relation {e}")
    for k in ("source", "target"):
        if e[k] not in nodes: errs.append(f"unknown node {e[k]} in edge {e}")
for c in g["chunks"]:
    if c["node_id"] not in nodes: errs.append(f"chunk {c['id']} -> unknown node")

def valid(e, d):
    vf, vt = s(e.get("valid_from")), s(e.get("valid_to"))
    return (vf is None or vf <= d) and (vt is None or d < vt)

def step(frontier, rel, d):
    out = set()
    if rel in fwd:
        for e in g["edges"]:
            if e["relation_type"] == rel and e["source"] in frontier and valid(e, d):
                out.add(e["target"])
    elif rel in inv:
        for e in g["edges"]:
            if e["relation_type"] == inv[rel] and e["target"] in frontier and valid(e, d):
                out.add(e["source"])
    else:
        errs.append(f"unknown path relation {rel}")
    return out

def names(n):
    p = nodes[n]["properties"]
    return [p["name"]] + list(p.get("aliases") or [])

ids = set(); hops = {}
for qq in q["questions"]:
    qid = qq["id"]
    if qid in ids: errs.append(f"dup question id {qid}")
    ids.add(qid)
    a = qq["anchor"]
    if a not in nodes: errs.append(f"{qid}: unknown anchor"); continue
    if not any(nm.lower() in qq["question"].lower() for nm in names(a)):
        errs.append(f"{qid}: anchor name/alias not in question text")
    for x in qq["answers"]:
        if x not in nodes: errs.append(f"{qid}: unknown answer {x}")
    if not qq.get("chunks"): errs.append(f"{qid}: no chunks")
    for c in qq.get("chunks", []):
        if c not in chunks: errs.append(f"{qid}: unknown chunk {c}")
    d = s(qq.get("as_of")) or TODAY
    fr = {a}
    for rel in qq["path"]:
        fr = step(fr, rel, d)
    if fr != set(qq["answers"]):
        errs.append(f"{qid}: walked {sorted(fr)} != gold {sorted(qq['answers'])}")
    if qq.get("as_of"):
        fr2 = {a}
        for rel in qq["path"]:
            fr2 = step(fr2, rel, TODAY)
        if fr2 == fr: errs.append(f"{qid}: as_of answer equals today's answer")
    hops[len(qq["path"])] = hops.get(len(qq["path"]), 0) + 1

# connectivity
adj = {n: set() for n in nodes}
for e in g["edges"]:
    adj[e["source"]].add(e["target"]); adj[e["target"]].add(e["source"])
seen = set(); st = [next(iter(nodes))]
while st:
    n = st.pop()
    if n in seen: continue
    seen.add(n); st.extend(adj[n] - seen)
if len(seen) != len(nodes): errs.append(f"graph not connected: {set(nodes) - seen}")

print(f"nodes={len(nodes)} labels={len({n['label'] for n in g['nodes']})} relation_types={len(fwd)} "
      f"edges={len(g['edges'])} chunks={len(chunks)} questions={len(q['questions'])} "
      f"hops={dict(sorted(hops.items()))} as_of={sum(1 for x in q['questions'] if x.get('as_of'))}")
if errs:
    print("FAIL"); [print(" -", e) for e in errs]; sys.exit(1)
print("OK")
