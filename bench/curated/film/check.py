#!/usr/bin/env python3
"""Standalone gold checker: python3 check.py (needs PyYAML)."""
import os, sys, datetime, collections, yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-27"
g = yaml.safe_load(open(os.path.join(HERE, "graph.yaml")))
q = yaml.safe_load(open(os.path.join(HERE, "questions.yaml")))
errs = []

def iso(s):
    datetime.date.fromisoformat(str(s)); return str(s)

rels = {r["name"]: r for r in g["relation_types"]}
fwd = set(rels); inv = {r["inverse"]: r["name"] for r in g["relation_types"]}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k): errs.append(f"relation {r} missing {k}")
    if r["semantics"] not in {"ASSOCIATION","HIERARCHY","CONTAINMENT","CLASSIFICATION","SEQUENCE","REFERENCE"}:
        errs.append(f"bad semantics {r}")
if fwd & set(inv): errs.append(f"inverse names collide with forward: {fwd & set(inv)}")
nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes: errs.append(f"dup node {n['id']}")
    nodes[n["id"]] = n
for e in g["edges"]:
    if e["relation_type"] not in rels: errs.append(f"edge bad rel {e}")
    for k in ("source", "target"):
        if e[k] not in nodes: errs.append(f"edge bad {k} {e}")
    for k in ("valid_from", "valid_to"):
        if k in e: iso(e[k])
chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks: errs.append(f"dup chunk {c['id']}")
    if c["node_id"] not in nodes: errs.append(f"chunk bad node {c}")
    chunks[c["id"]] = c

def valid(e, d):
    return str(e.get("valid_from", "0000-01-01")) <= d < str(e.get("valid_to", "9999-12-31"))

def step(frontier, rel, d):
    out = set()
    if rel in fwd:
        for e in g["edges"]:
            if e["relation_type"] == rel and e["source"] in frontier and valid(e, d): out.add(e["target"])
    elif rel in inv:
        base = inv[rel]
        for e in g["edges"]:
            if e["relation_type"] == base and e["target"] in frontier and valid(e, d): out.add(e["source"])
    else:
        errs.append(f"unknown relation in path: {rel}")
    return out

ids = set(); hops = collections.Counter(); asof = 0; multi = 0
for x in q["questions"]:
    if x["id"] in ids: errs.append(f"dup question {x['id']}")
    ids.add(x["id"])
    if x["anchor"] not in nodes: errs.append(f"{x['id']} bad anchor"); continue
    p = nodes[x["anchor"]]["properties"]
    names = [p["name"]] + list(p.get("aliases", []))
    if not any(nm.lower() in x["question"].lower() for nm in names):
        errs.append(f"{x['id']} question does not name anchor ({names})")
    for a in x["answers"]:
        if a not in nodes: errs.append(f"{x['id']} bad answer {a}")
    if not x.get("chunks"): errs.append(f"{x['id']} no chunks")
    for c in x.get("chunks", []):
        if c not in chunks: errs.append(f"{x['id']} bad chunk {c}")
    d = iso(x["as_of"]) if x.get("as_of") else TODAY
    f = {x["anchor"]}
    for r in x["path"]: f = step(f, r, d)
    if f != set(x["answers"]):
        errs.append(f"{x['id']} path reaches {sorted(f)} but gold is {sorted(x['answers'])}")
    if x.get("as_of"):
        asof += 1
        f2 = {x["anchor"]}
        for r in x["path"]: f2 = step(f2, r, TODAY)
        if f2 == f: errs.append(f"{x['id']} as_of answer equals today's answer")
    hops[len(x["path"])] += 1
    multi += len(x["answers"]) > 1

labels = {n["label"] for n in nodes.values()}
print(f"nodes={len(nodes)} labels={len(labels)} relation_types={len(rels)} edges={len(g['edges'])} chunks={len(chunks)}")
print(f"questions={len(ids)} hops={dict(sorted(hops.items()))} as_of={asof} multi_answer={multi}")
if errs:
    print("ERRORS:"); [print(" -", e) for e in errs]; sys.exit(1)
print("OK")
