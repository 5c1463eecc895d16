#!/usr/bin/env python3
"""Standalone gold check for the airline set (needs only PyYAML)."""
import re, sys, yaml
from pathlib import Path

HERE = Path(__file__).resolve().parent
TODAY = "2026-11-27"
g = yaml.safe_load((HERE / "graph.yaml").read_text())
q = yaml.safe_load((HERE / "questions.yaml").read_text())
errs = []

rts = {r["name"]: r for r in g["relation_types"]}
inv = {r["inverse"]: r["name"] for r in g["relation_types"]}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k): errs.append(f"relation {r} missing {k}")
    if r["semantics"] not in {"ASSOCIATION","HIERARCHY","CONTAINMENT","CLASSIFICATION","SEQUENCE","REFERENCE"}:
        errs.append(f"bad semantics {r}")
if set(rts) & set(inv): errs.append(f"inverse names collide with forward names: {set(rts) & set(inv)}")
if len(inv) != len(g["relation_types"]): errs.append("duplicate inverse names")
for name in list(rts) + list(inv):
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name): errs.append(f"not UPPER_SNAKE: {name}")

nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes: errs.append(f"duplicate node {n['id']}")
    nodes[n["id"]] = n
    if not n.get("properties", {}).get("name"): errs.append(f"node without name {n['id']}")
labels = {n["label"] for n in g["nodes"]}

def s(d): return None if d is None else str(d)
for e in g["edges"]:
    if e["relation_type"] not in rts: errs.append(f"edge unknown relation {e}")
    for k in ("source", "target"):
        if e[k] not in nodes: errs.append(f"edge unknown {k} {e}")
    vf, vt = s(e.get("valid_from")), s(e.get("valid_to"))
    if vf and vt and not vf < vt: errs.append(f"bad validity {e}")
    if "confidence" in e and not (0 <= e["confidence"] <= 1): errs.append(f"bad confidence {e}")

chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks: errs.append(f"duplicate chunk {c['id']}")
    chunks[c["id"]] = c
    if c["node_id"] not in nodes: errs.append(f"chunk {c['id']} unknown node")

# connectivity
adj = {i: set() for i in nodes}
for e in g["edges"]:
    adj[e["source"]].add(e["target"]); adj[e["target"]].add(e["source"])
start = next(iter(nodes)); seen = {start}; stack = [start]
while stack:
    for m in adj[stack.pop()]:
        if m not in seen: seen.add(m); stack.append(m)
if len(seen) != len(nodes): errs.append(f"graph not connected: {set(nodes) - seen}")

def valid(e, date):
    vf, vt = s(e.get("valid_from")), s(e.get("valid_to"))
    return (vf is None or vf <= date) and (vt is None or date < vt)

def walk(anchor, path, date):
    cur = {anchor}
    for step in path:
        nxt = set()
        if step in rts:
            for e in g["edges"]:
                if e["relation_type"] == step and e["source"] in cur and valid(e, date): nxt.add(e["target"])
        elif step in inv:
            fwd = inv[step]
            for e in g["edges"]:
                if e["relation_type"] == fwd and e["target"] in cur and valid(e, date): nxt.add(e["source"])
        else:
            errs.append(f"unknown path step {step}")
        cur = nxt
    return cur

hops = {}
ids = set()
for x in q["questions"]:
    qid = x["id"]
    if qid in ids: errs.append(f"duplicate question id {qid}")
    ids.add(qid)
    a = x["anchor"]
    if a not in nodes: errs.append(f"{qid}: unknown anchor {a}"); continue
    props = nodes[a]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(nm.lower() in x["question"].lower() for nm in names):
        errs.append(f"{qid}: anchor name/alias not in question text")
    for ans in x["answers"]:
        if ans not in nodes: errs.append(f"{qid}: unknown answer {ans}")
    if not x.get("chunks"): errs.append(f"{qid}: no chunks")
    for c in x.get("chunks", []):
        if c not in chunks: errs.append(f"{qid}: unknown chunk {c}")
    date = str(x["as_of"]) if x.get("as_of") else TODAY
    got = walk(a, x["path"], date)
    if got != set(x["answers"]):
        errs.append(f"{qid}: path gives {sorted(got)} but gold is {sorted(x['answers'])}")
    if x.get("as_of"):
        now = walk(a, x["path"], TODAY)
        if now == got: errs.append(f"{qid}: as_of answer equals today's answer {sorted(now)}")
        key = "as_of"
    else:
        key = f"{len(x['path'])}-hop"
    hops[key] = hops.get(key, 0) + 1

print(f"nodes={len(nodes)} labels={len(labels)} relation_types={len(rts)} edges={len(g['edges'])} "
      f"chunks={len(chunks)} questions={len(q['questions'])} by_kind={dict(sorted(hops.items()))}")
if len(nodes) < 45 or len(labels) < 6 or len(rts) < 9 or len(g["edges"]) < 80 or len(chunks) < 45:
    errs.append("size minimums not met")
if errs:
    print("FAIL"); [print(" -", m) for m in errs]; sys.exit(1)
print("OK")
