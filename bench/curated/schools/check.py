#!/usr/bin/env python3
"""Standalone gold checker for the school-district set (needs only PyYAML)."""
import sys
from datetime import date
import yaml

TODAY = "2026-11-28"
g = yaml.safe_load(open("graph.yaml"))
q = yaml.safe_load(open("questions.yaml"))["questions"]
errs = []

nodes = {n["id"]: n for n in g["nodes"]}
if len(nodes) != len(g["nodes"]):
    errs.append("duplicate node ids")
rels = {r["name"]: r for r in g["relation_types"]}
fwd = set(rels)
inv = {r["inverse"]: r["name"] for r in g["relation_types"]}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errs.append(f"relation {r.get('name')} missing {k}")
    if r["semantics"] not in {"ASSOCIATION", "HIERARCHY", "CONTAINMENT", "CLASSIFICATION", "SEQUENCE", "REFERENCE"}:
        errs.append(f"bad semantics {r['name']}")
if fwd & set(inv):
    errs.append(f"inverse names clash with forward names: {fwd & set(inv)}")

def d(s):
    return date.fromisoformat(str(s))

for e in g["edges"]:
    if e["relation_type"] not in rels:
        errs.append(f"edge unknown relation {e}")
    for k in ("source", "target"):
        if e[k] not in nodes:
            errs.append(f"edge unknown node {e[k]}")
    if e.get("valid_from") and e.get("valid_to") and d(e["valid_from"]) >= d(e["valid_to"]):
        errs.append(f"bad validity {e}")

chunks = {c["id"]: c for c in g["chunks"]}
if len(chunks) != len(g["chunks"]):
    errs.append("duplicate chunk ids")
for c in g["chunks"]:
    if c["node_id"] not in nodes:
        errs.append(f"chunk {c['id']} unknown node {c['node_id']}")

# connectivity (undirected)
adj = {n: set() for n in nodes}
for e in g["edges"]:
    adj[e["source"]].add(e["target"]); adj[e["target"]].add(e["source"])
start = next(iter(nodes)); seen = {start}; stack = [start]
while stack:
    for m in adj[stack.pop()]:
        if m not in seen:
            seen.add(m); stack.append(m)
if len(seen) != len(nodes):
    errs.append(f"graph not connected: {set(nodes) - seen}")

def valid(e, at):
    at = d(at)
    if e.get("valid_from") and d(e["valid_from"]) > at:
        return False
    if e.get("valid_to") and not at < d(e["valid_to"]):
        return False
    return True

def walk(anchor, path, at):
    cur = {anchor}
    for step in path:
        nxt = set()
        if step in fwd:
            for e in g["edges"]:
                if e["relation_type"] == step and e["source"] in cur and valid(e, at):
                    nxt.add(e["target"])
        elif step in inv:
            base = inv[step]
            for e in g["edges"]:
                if e["relation_type"] == base and e["target"] in cur and valid(e, at):
                    nxt.add(e["source"])
        else:
            errs.append(f"unknown path step {step}")
        cur = nxt
    return cur

ids = set()
hops = {}
for x in q:
    qid = x["id"]
    if qid in ids:
        errs.append(f"duplicate question id {qid}")
    ids.add(qid)
    if x["anchor"] not in nodes:
        errs.append(f"{qid}: unknown anchor"); continue
    p = nodes[x["anchor"]]["properties"]
    names = [p["name"]] + list(p.get("aliases", []))
    if not any(nm.lower() in x["question"].lower() for nm in names):
        errs.append(f"{qid}: anchor name/alias not in question text")
    for a in x["answers"]:
        if a not in nodes:
            errs.append(f"{qid}: unknown answer {a}")
    if not x.get("chunks"):
        errs.append(f"{qid}: no chunks")
    for c in x.get("chunks", []):
        if c not in chunks:
            errs.append(f"{qid}: unknown chunk {c}")
    at = x.get("as_of", TODAY)
    got = walk(x["anchor"], x["path"], at)
    if got != set(x["answers"]):
        errs.append(f"{qid}: walk gives {sorted(got)} != gold {sorted(x['answers'])}")
    if "as_of" in x:
        now = walk(x["anchor"], x["path"], TODAY)
        if now == got:
            errs.append(f"{qid}: as_of answer equals today's answer")
    hops[len(x["path"])] = hops.get(len(x["path"]), 0) + 1

labels = {n["label"] for n in g["nodes"]}
print(f"nodes={len(nodes)} labels={len(labels)} relation_types={len(rels)} edges={len(g['edges'])} "
      f"chunks={len(chunks)} questions={len(q)} by_hops={dict(sorted(hops.items()))} "
      f"as_of={sum(1 for x in q if 'as_of' in x)} multi_answer={sum(1 for x in q if len(x['answers']) > 1)}")
if errs:
    print("FAIL"); [print(" -", e) for e in errs]; sys.exit(1)
print("OK")
