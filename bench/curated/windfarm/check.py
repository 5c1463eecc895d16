#!/usr/bin/env python3
"""Standalone gold checker for the windfarm set (PyYAML only)."""
import sys
import yaml
from datetime import date

TODAY = "2026-11-28"

g = yaml.safe_load(open("graph.yaml", encoding="utf-8"))
q = yaml.safe_load(open("questions.yaml", encoding="utf-8"))
errors = []

rels = {r["name"]: r for r in g["relation_types"]}
inv = {}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errors.append(f"relation {r.get('name')} missing {k}")
    inv[r["inverse"]] = r["name"]
    if r["inverse"] in rels:
        errors.append(f"inverse {r['inverse']} clashes with a relation name")

nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes:
        errors.append(f"duplicate node {n['id']}")
    nodes[n["id"]] = n
    if not n.get("properties", {}).get("name"):
        errors.append(f"node {n['id']} has no name")

for e in g["edges"]:
    if e["relation_type"] not in rels:
        errors.append(f"edge uses unknown relation {e['relation_type']}")
    for end in ("source", "target"):
        if e[end] not in nodes:
            errors.append(f"edge {e} has unknown {end}")
    for k in ("valid_from", "valid_to"):
        if k in e:
            date.fromisoformat(str(e[k]))

chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks:
        errors.append(f"duplicate chunk {c['id']}")
    chunks[c["id"]] = c
    if c["node_id"] not in nodes:
        errors.append(f"chunk {c['id']} about unknown node {c['node_id']}")


def valid(e, d):
    vf = str(e.get("valid_from", "0000-01-01"))
    vt = str(e.get("valid_to", "9999-12-31"))
    return vf <= d < vt


def step(frontier, rel, d):
    out = set()
    if rel in rels:
        for e in g["edges"]:
            if e["relation_type"] == rel and e["source"] in frontier and valid(e, d):
                out.add(e["target"])
    elif rel in inv:
        base = inv[rel]
        for e in g["edges"]:
            if e["relation_type"] == base and e["target"] in frontier and valid(e, d):
                out.add(e["source"])
    else:
        errors.append(f"unknown relation in path: {rel}")
    return out


def walk(anchor, path, d):
    f = {anchor}
    for rel in path:
        f = step(f, rel, d)
    return f


ids = set()
hops = {}
as_of_n = 0
for qq in q["questions"]:
    qid = qq["id"]
    if qid in ids:
        errors.append(f"duplicate question id {qid}")
    ids.add(qid)
    a = qq["anchor"]
    if a not in nodes:
        errors.append(f"{qid}: unknown anchor {a}")
        continue
    props = nodes[a]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(str(nm).lower() in qq["question"].lower() for nm in names):
        errors.append(f"{qid}: anchor name/alias not in question text")
    for x in qq["answers"]:
        if x not in nodes:
            errors.append(f"{qid}: unknown answer {x}")
    if not qq.get("chunks"):
        errors.append(f"{qid}: no chunks")
    for c in qq.get("chunks", []):
        if c not in chunks:
            errors.append(f"{qid}: unknown chunk {c}")
    d = str(qq.get("as_of", TODAY))
    got = walk(a, qq["path"], d)
    if got != set(qq["answers"]):
        errors.append(f"{qid}: path gives {sorted(got)}, gold {sorted(qq['answers'])}")
    if "as_of" in qq:
        as_of_n += 1
        now = walk(a, qq["path"], TODAY)
        if now == got:
            errors.append(f"{qid}: as_of answer equals today's answer")
    hops[len(qq["path"])] = hops.get(len(qq["path"]), 0) + 1

labels = {n["label"] for n in g["nodes"]}
print(f"nodes={len(nodes)} node_types={len(labels)} relation_types={len(rels)} "
      f"edges={len(g['edges'])} chunks={len(chunks)} questions={len(q['questions'])} "
      f"by_hops={dict(sorted(hops.items()))} as_of={as_of_n}")
if errors:
    print("ERRORS:")
    for e in errors:
        print("  " + e)
    sys.exit(1)
print("OK: all gold answers verified")
