#!/usr/bin/env python3
"""Standalone gold checker for the firerescue set (PyYAML only)."""
import sys
from collections import Counter
from pathlib import Path
import yaml

HERE = Path(__file__).resolve().parent
TODAY = "2026-11-27"
g = yaml.safe_load((HERE / "graph.yaml").read_text())
q = yaml.safe_load((HERE / "questions.yaml").read_text())["questions"]
errors = []

rels = {r["name"]: r for r in g["relation_types"]}
inv = {r["inverse"]: r["name"] for r in g["relation_types"]}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errors.append(f"relation {r} missing {k}")
if set(rels) & set(inv):
    errors.append(f"inverse names collide with forward names: {set(rels) & set(inv)}")
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
        errors.append(f"edge with unknown relation {e}")
    for k in ("source", "target"):
        if e[k] not in nodes:
            errors.append(f"edge {e} unknown {k}")

def valid(e, date):
    vf, vt = e.get("valid_from"), e.get("valid_to")
    return (vf is None or str(vf) <= date) and (vt is None or date < str(vt))

def step(frontier, rel, date):
    out = set()
    for e in g["edges"]:
        if not valid(e, date):
            continue
        if e["relation_type"] == rel and e["source"] in frontier:
            out.add(e["target"])
        elif rel in inv and e["relation_type"] == inv[rel] and e["target"] in frontier:
            out.add(e["source"])
    return out

def walk(anchor, path, date):
    f = {anchor}
    for rel in path:
        f = step(f, rel, date)
    return f

hops = Counter()
ids = set()
for qq in q:
    qid = qq["id"]
    if qid in ids:
        errors.append(f"duplicate question id {qid}")
    ids.add(qid)
    if qq["anchor"] not in nodes:
        errors.append(f"{qid}: unknown anchor"); continue
    props = nodes[qq["anchor"]]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(n.lower() in qq["question"].lower() for n in names):
        errors.append(f"{qid}: anchor name/alias not in question text")
    for rel in qq["path"]:
        if rel not in rels and rel not in inv:
            errors.append(f"{qid}: unknown relation {rel}")
    for a in qq["answers"]:
        if a not in nodes:
            errors.append(f"{qid}: unknown answer {a}")
    if not qq.get("chunks"):
        errors.append(f"{qid}: no chunks")
    for c in qq.get("chunks", []):
        if c not in chunks:
            errors.append(f"{qid}: unknown chunk {c}")
    date = str(qq.get("as_of") or TODAY)
    got = walk(qq["anchor"], qq["path"], date)
    if got != set(qq["answers"]):
        errors.append(f"{qid}: walk gives {sorted(got)} but gold {sorted(qq['answers'])}")
    if qq.get("as_of"):
        now = walk(qq["anchor"], qq["path"], TODAY)
        if now == got:
            errors.append(f"{qid}: as_of answer equals today's answer")
    hops[len(qq["path"])] += 1

labels = Counter(n["label"] for n in g["nodes"])
print(f"nodes={len(nodes)} labels={len(labels)} relation_types={len(rels)} edges={len(g['edges'])} "
      f"chunks={len(chunks)} questions={len(q)} hops={dict(sorted(hops.items()))} "
      f"as_of={sum(1 for x in q if x.get('as_of'))}")
if errors:
    print("FAIL"); [print(" -", e) for e in errors]; sys.exit(1)
print("OK")
