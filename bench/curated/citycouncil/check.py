#!/usr/bin/env python3
"""Standalone gold check for graph.yaml / questions.yaml (PyYAML only)."""
import sys, os, re, datetime
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-28"

g = yaml.safe_load(open(os.path.join(HERE, "graph.yaml")))
q = yaml.safe_load(open(os.path.join(HERE, "questions.yaml")))
errs = []

def d(s):
    return datetime.date.fromisoformat(str(s))

rels = {r["name"]: r for r in g["relation_types"]}
fwd = set(rels)
inv = {r["inverse"]: r["name"] for r in g["relation_types"]}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errs.append(f"relation {r} missing {k}")
    if r["semantics"] not in {"ASSOCIATION", "HIERARCHY", "CONTAINMENT", "CLASSIFICATION", "SEQUENCE", "REFERENCE"}:
        errs.append(f"bad semantics {r['name']}")
if set(inv) & fwd:
    errs.append(f"inverse names clash with forward names: {set(inv) & fwd}")

nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes:
        errs.append(f"duplicate node {n['id']}")
    nodes[n["id"]] = n
chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks:
        errs.append(f"duplicate chunk {c['id']}")
    chunks[c["id"]] = c
    if c["node_id"] not in nodes:
        errs.append(f"chunk {c['id']} -> unknown node {c['node_id']}")

for e in g["edges"]:
    if e["relation_type"] not in fwd:
        errs.append(f"edge uses unknown relation {e}")
    for k in ("source", "target"):
        if e[k] not in nodes:
            errs.append(f"edge {e} unknown {k}")
    for k in ("valid_from", "valid_to"):
        if k in e:
            d(e[k])

# connectivity
adj = {n: set() for n in nodes}
for e in g["edges"]:
    adj[e["source"]].add(e["target"]); adj[e["target"]].add(e["source"])
start = next(iter(nodes)); seen = {start}; stack = [start]
while stack:
    x = stack.pop()
    for y in adj[x]:
        if y not in seen:
            seen.add(y); stack.append(y)
if len(seen) != len(nodes):
    errs.append(f"graph not connected; unreachable: {sorted(set(nodes) - seen)}")

def valid(e, date):
    if "valid_from" in e and d(e["valid_from"]) > date:
        return False
    if "valid_to" in e and not (date < d(e["valid_to"])):
        return False
    return True

def step(frontier, rel, date):
    out = set()
    if rel in fwd:
        for e in g["edges"]:
            if e["relation_type"] == rel and e["source"] in frontier and valid(e, date):
                out.add(e["target"])
    elif rel in inv:
        base = inv[rel]
        for e in g["edges"]:
            if e["relation_type"] == base and e["target"] in frontier and valid(e, date):
                out.add(e["source"])
    else:
        errs.append(f"unknown relation in path: {rel}")
    return out

def names(n):
    p = nodes[n]["properties"]
    return [p["name"]] + list(p.get("aliases", []))

ids = set()
hops = {}
for qq in q["questions"]:
    qid = qq["id"]
    if qid in ids:
        errs.append(f"duplicate question id {qid}")
    ids.add(qid)
    a = qq["anchor"]
    if a not in nodes:
        errs.append(f"{qid}: unknown anchor {a}"); continue
    if not any(nm.lower() in qq["question"].lower() for nm in names(a)):
        errs.append(f"{qid}: anchor name/alias not in question text")
    for x in qq["answers"]:
        if x not in nodes:
            errs.append(f"{qid}: unknown answer {x}")
    if not qq.get("chunks"):
        errs.append(f"{qid}: no chunks")
    for c in qq.get("chunks", []):
        if c not in chunks:
            errs.append(f"{qid}: unknown chunk {c}")
    date = d(qq["as_of"]) if "as_of" in qq else d(TODAY)
    fr = {a}
    for rel in qq["path"]:
        fr = step(fr, rel, date)
    if fr != set(qq["answers"]):
        errs.append(f"{qid}: path gives {sorted(fr)} but gold {sorted(qq['answers'])}")
    if "as_of" in qq:
        now = {a}
        for rel in qq["path"]:
            now = step(now, rel, d(TODAY))
        if now == fr:
            errs.append(f"{qid}: as_of answer equals today's answer")
    h = len(qq["path"]); key = f"{h}-hop" + (" as_of" if "as_of" in qq else "")
    hops[key] = hops.get(key, 0) + 1

labels = {n["label"] for n in g["nodes"]}
print(f"nodes={len(nodes)} node_types={len(labels)} relation_types={len(rels)} edges={len(g['edges'])} chunks={len(chunks)} questions={len(q['questions'])}")
print("questions by hops:", dict(sorted(hops.items())))
if errs:
    print("ERRORS:")
    for e in errs:
        print("  -", e)
    sys.exit(1)
print("OK: all gold answers verified")
