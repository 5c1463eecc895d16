#!/usr/bin/env python3
"""Standalone gold checker for the container-port data set (needs only PyYAML)."""
import os, sys, yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-27"

g = yaml.safe_load(open(os.path.join(HERE, "graph.yaml")))
q = yaml.safe_load(open(os.path.join(HERE, "questions.yaml")))
errors = []

nodes = {n["id"]: n for n in g["nodes"]}
chunks = {c["id"]: c for c in g["chunks"]}
rels = {r["name"]: r for r in g["relation_types"]}
fwd = set(rels)
inv = {r["inverse"]: r["name"] for r in g["relation_types"]}
if len(nodes) != len(g["nodes"]): errors.append("duplicate node ids")
if len(chunks) != len(g["chunks"]): errors.append("duplicate chunk ids")
if fwd & set(inv): errors.append(f"inverse names clash with forward names: {fwd & set(inv)}")
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k): errors.append(f"relation {r} missing {k}")
for e in g["edges"]:
    if e["relation_type"] not in rels: errors.append(f"edge with unknown relation {e}")
    for end in ("source", "target"):
        if e[end] not in nodes: errors.append(f"edge endpoint missing {e}")
for c in g["chunks"]:
    if c["node_id"] not in nodes: errors.append(f"chunk {c['id']} about missing node")

def valid(e, date):
    vf, vt = e.get("valid_from"), e.get("valid_to")
    return (vf is None or str(vf) <= date) and (vt is None or date < str(vt))

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
        errors.append(f"unknown relation in path: {rel}")
    return out

ids = set()
hops = {}
for qq in q["questions"]:
    qid = qq["id"]
    if qid in ids: errors.append(f"duplicate question id {qid}")
    ids.add(qid)
    a = qq["anchor"]
    if a not in nodes:
        errors.append(f"{qid}: anchor {a} missing"); continue
    props = nodes[a]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(str(nm).lower() in qq["question"].lower() for nm in names):
        errors.append(f"{qid}: anchor name/alias not in question text")
    for x in qq["answers"]:
        if x not in nodes: errors.append(f"{qid}: answer {x} missing")
    if not qq.get("chunks"): errors.append(f"{qid}: no chunks")
    for c in qq.get("chunks", []):
        if c not in chunks: errors.append(f"{qid}: chunk {c} missing")
    date = str(qq.get("as_of", TODAY))
    frontier = {a}
    for rel in qq["path"]:
        frontier = step(frontier, rel, date)
    if frontier != set(qq["answers"]):
        errors.append(f"{qid}: path gives {sorted(frontier)} but gold is {sorted(qq['answers'])}")
    if "as_of" in qq:
        now = {a}
        for rel in qq["path"]:
            now = step(now, rel, TODAY)
        if now == frontier:
            errors.append(f"{qid}: as_of answer equals today's answer")
    hops[len(qq["path"])] = hops.get(len(qq["path"]), 0) + 1

labels = {n["label"] for n in g["nodes"]}
print(f"nodes={len(nodes)} node_types={len(labels)} relation_types={len(rels)} "
      f"edges={len(g['edges'])} chunks={len(chunks)} questions={len(q['questions'])} "
      f"hops={dict(sorted(hops.items()))} as_of={sum(1 for x in q['questions'] if 'as_of' in x)}")
if errors:
    print("ERRORS:"); [print(" -", e) for e in errors]; sys.exit(1)
print("OK: all gold answers verified")
