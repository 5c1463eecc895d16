#!/usr/bin/env python3
"""Standalone gold checker for the vet-clinics set (uses only PyYAML)."""
import sys
import yaml

TODAY = "2026-11-27"
g = yaml.safe_load(open("graph.yaml"))
q = yaml.safe_load(open("questions.yaml"))["questions"]
errs = []

nodes = {n["id"]: n for n in g["nodes"]}
chunks = {c["id"]: c for c in g["chunks"]}
fwd, inv = {}, {}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errs.append(f"relation type missing {k}: {r}")
    fwd[r["name"]] = r
    inv[r["inverse"]] = r["name"]
if len(nodes) != len(g["nodes"]):
    errs.append("duplicate node ids")
if len(chunks) != len(g["chunks"]):
    errs.append("duplicate chunk ids")
for c in g["chunks"]:
    if c["node_id"] not in nodes:
        errs.append(f"chunk {c['id']} -> unknown node {c['node_id']}")
for e in g["edges"]:
    if e["relation_type"] not in fwd:
        errs.append(f"unknown relation {e['relation_type']}")
    for end in ("source", "target"):
        if e[end] not in nodes:
            errs.append(f"edge {e} unknown {end}")


def valid(e, d):
    vf, vt = e.get("valid_from"), e.get("valid_to")
    return (vf is None or str(vf) <= d) and (vt is None or d < str(vt))


def step(frontier, rel, d):
    out = set()
    if rel in fwd:
        for e in g["edges"]:
            if e["relation_type"] == rel and e["source"] in frontier and valid(e, d):
                out.add(e["target"])
    elif rel in inv:
        base = inv[rel]
        for e in g["edges"]:
            if e["relation_type"] == base and e["target"] in frontier and valid(e, d):
                out.add(e["source"])
    else:
        errs.append(f"unknown relation in path: {rel}")
    return out


ids = set()
hops = {}
for x in q:
    qid = x["id"]
    if qid in ids:
        errs.append(f"duplicate question id {qid}")
    ids.add(qid)
    if x["anchor"] not in nodes:
        errs.append(f"{qid}: unknown anchor")
        continue
    p = nodes[x["anchor"]]["properties"]
    names = [p["name"]] + list(p.get("aliases", []))
    if not any(n.lower() in x["question"].lower() for n in names):
        errs.append(f"{qid}: anchor name/alias not in question")
    for a in x["answers"]:
        if a not in nodes:
            errs.append(f"{qid}: unknown answer {a}")
    if not x.get("chunks"):
        errs.append(f"{qid}: no chunks")
    for c in x.get("chunks", []):
        if c not in chunks:
            errs.append(f"{qid}: unknown chunk {c}")
    d = str(x.get("as_of", TODAY))
    fr = {x["anchor"]}
    for rel in x["path"]:
        fr = step(fr, rel, d)
    if fr != set(x["answers"]):
        errs.append(f"{qid}: walked {sorted(fr)} != gold {sorted(x['answers'])}")
    if "as_of" in x:
        now = {x["anchor"]}
        for rel in x["path"]:
            now = step(now, rel, TODAY)
        if now == fr:
            errs.append(f"{qid}: as_of answer equals today's answer")
    hops[len(x["path"])] = hops.get(len(x["path"]), 0) + 1

print(f"nodes={len(nodes)} types={len({n['label'] for n in g['nodes']})} relation_types={len(fwd)} "
      f"edges={len(g['edges'])} chunks={len(chunks)} questions={len(q)} hops={dict(sorted(hops.items()))} "
      f"as_of={sum('as_of' in x for x in q)}")
if errs:
    print("\n".join(errs))
    sys.exit(1)
print("OK")
