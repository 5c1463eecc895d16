#!/usr/bin/env python3
"""Standalone gold check for graph.yaml / questions.yaml (needs only PyYAML)."""
import sys, datetime, yaml

TODAY = "2026-11-27"
g = yaml.safe_load(open("graph.yaml"))
q = yaml.safe_load(open("questions.yaml"))["questions"]
errors = []

def d(s):
    return datetime.date.fromisoformat(str(s))

nodes = {n["id"]: n for n in g["nodes"]}
chunks = {c["id"]: c for c in g["chunks"]}
fwd, inv = {}, {}
for rt in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not rt.get(k):
            errors.append(f"relation type missing {k}: {rt}")
    fwd[rt["name"]] = rt["name"]
    inv[rt["inverse"]] = rt["name"]
if len(set(fwd) | set(inv)) != len(fwd) + len(inv):
    errors.append("relation names and inverses collide")
if len(nodes) != len(g["nodes"]): errors.append("duplicate node ids")
if len(chunks) != len(g["chunks"]): errors.append("duplicate chunk ids")
for e in g["edges"]:
    if e["relation_type"] not in fwd: errors.append(f"unknown relation {e}")
    for k in ("source", "target"):
        if e[k] not in nodes: errors.append(f"edge {k} missing: {e}")
for c in g["chunks"]:
    if c["node_id"] not in nodes: errors.append(f"chunk node missing: {c['id']}")

def valid(e, at):
    if e.get("valid_from") and d(e["valid_from"]) > at: return False
    if e.get("valid_to") and not (at < d(e["valid_to"])): return False
    return True

def walk(anchor, path, at):
    cur = {anchor}
    for step in path:
        nxt = set()
        for e in g["edges"]:
            if not valid(e, at): continue
            if step in fwd and e["relation_type"] == step and e["source"] in cur:
                nxt.add(e["target"])
            elif step in inv and e["relation_type"] == inv[step] and e["target"] in cur:
                nxt.add(e["source"])
        cur = nxt
    return cur

ids = set()
for x in q:
    qid = x["id"]
    if qid in ids: errors.append(f"duplicate question id {qid}")
    ids.add(qid)
    if x["anchor"] not in nodes:
        errors.append(f"{qid}: anchor missing"); continue
    for step in x["path"]:
        if step not in fwd and step not in inv: errors.append(f"{qid}: unknown path step {step}")
    for a in x["answers"]:
        if a not in nodes: errors.append(f"{qid}: answer {a} missing")
    if not x.get("chunks"): errors.append(f"{qid}: no chunks")
    for c in x.get("chunks", []):
        if c not in chunks: errors.append(f"{qid}: chunk {c} missing")
    props = nodes[x["anchor"]]["properties"]
    names = [props["name"]] + list(props.get("aliases") or [])
    if not any(n.lower() in x["question"].lower() for n in names):
        errors.append(f"{qid}: anchor name/alias not in question")
    at = d(x.get("as_of") or TODAY)
    got = walk(x["anchor"], x["path"], at)
    if got != set(x["answers"]):
        errors.append(f"{qid}: gold {sorted(x['answers'])} != walked {sorted(got)}")
    if x.get("as_of"):
        now = walk(x["anchor"], x["path"], d(TODAY))
        if now == got: errors.append(f"{qid}: as_of answer equals today's answer")

hops = {}
for x in q:
    hops[len(x["path"])] = hops.get(len(x["path"]), 0) + 1
print(f"nodes={len(nodes)} labels={len({n['label'] for n in g['nodes']})} relation_types={len(fwd)} "
      f"edges={len(g['edges'])} chunks={len(chunks)} questions={len(q)} hops={dict(sorted(hops.items()))} "
      f"as_of={sum(1 for x in q if x.get('as_of'))}")
if errors:
    print("\n".join(errors)); sys.exit(1)
print("OK")
