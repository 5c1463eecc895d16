#!/usr/bin/env python3
"""Standalone gold check for spaceprog (PyYAML only)."""
import sys, os, collections
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-27"
g = yaml.safe_load(open(os.path.join(HERE, "graph.yaml")))
q = yaml.safe_load(open(os.path.join(HERE, "questions.yaml")))
errs = []

rels = {r["name"]: r for r in g["relation_types"]}
inv = {}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errs.append(f"relation {r} missing {k}")
    if r["inverse"] in rels or r["inverse"] in inv:
        errs.append(f"inverse name collision {r['inverse']}")
    inv[r["inverse"]] = r["name"]

nodes = {n["id"]: n for n in g["nodes"]}
if len(nodes) != len(g["nodes"]):
    errs.append("duplicate node ids")
for e in g["edges"]:
    if e["relation_type"] not in rels:
        errs.append(f"unknown relation {e}")
    for k in ("source", "target"):
        if e[k] not in nodes:
            errs.append(f"unknown node in edge {e}")
chunks = {c["id"]: c for c in g["chunks"]}
if len(chunks) != len(g["chunks"]):
    errs.append("duplicate chunk ids")
for c in g["chunks"]:
    if c["node_id"] not in nodes:
        errs.append(f"chunk {c['id']} about unknown node")

def valid(e, d):
    vf, vt = e.get("valid_from"), e.get("valid_to")
    return (vf is None or str(vf) <= d) and (vt is None or d < str(vt))

def walk(anchor, path, d):
    cur = {anchor}
    for step in path:
        nxt = set()
        if step in rels:
            for e in g["edges"]:
                if e["relation_type"] == step and e["source"] in cur and valid(e, d):
                    nxt.add(e["target"])
        elif step in inv:
            base = inv[step]
            for e in g["edges"]:
                if e["relation_type"] == base and e["target"] in cur and valid(e, d):
                    nxt.add(e["source"])
        else:
            errs.append(f"unknown path step {step}")
        cur = nxt
    return cur

hops = collections.Counter()
ids = set()
for qq in q["questions"]:
    qid = qq["id"]
    if qid in ids:
        errs.append(f"dup question id {qid}")
    ids.add(qid)
    a = qq["anchor"]
    if a not in nodes:
        errs.append(f"{qid}: unknown anchor"); continue
    names = [nodes[a]["properties"]["name"]] + nodes[a]["properties"].get("aliases", [])
    if not any(n.lower() in qq["question"].lower() for n in names):
        errs.append(f"{qid}: anchor name/alias not in question")
    for x in qq["answers"]:
        if x not in nodes:
            errs.append(f"{qid}: unknown answer {x}")
    if not qq.get("chunks"):
        errs.append(f"{qid}: no chunks")
    for c in qq.get("chunks", []):
        if c not in chunks:
            errs.append(f"{qid}: unknown chunk {c}")
    d = str(qq.get("as_of", TODAY))
    got = walk(a, qq["path"], d)
    if got != set(qq["answers"]):
        errs.append(f"{qid}: walk gives {sorted(got)} != gold {sorted(qq['answers'])}")
    if "as_of" in qq:
        now = walk(a, qq["path"], TODAY)
        if now == got:
            errs.append(f"{qid}: as_of answer equals today's answer")
    hops[len(qq["path"])] += 1

# connectivity
adj = collections.defaultdict(set)
for e in g["edges"]:
    adj[e["source"]].add(e["target"]); adj[e["target"]].add(e["source"])
seen, stack = set(), [next(iter(nodes))]
while stack:
    n = stack.pop()
    if n in seen: continue
    seen.add(n); stack.extend(adj[n] - seen)
if seen != set(nodes):
    errs.append(f"graph not connected: {sorted(set(nodes) - seen)}")

labels = {n["label"] for n in g["nodes"]}
print(f"nodes={len(nodes)} node_types={len(labels)} relation_types={len(rels)} edges={len(g['edges'])} "
      f"chunks={len(chunks)} questions={len(q['questions'])} by_hops={dict(sorted(hops.items()))} "
      f"as_of={sum('as_of' in x for x in q['questions'])}")
if errs:
    print("ERRORS:"); [print(" -", e) for e in errs]; sys.exit(1)
print("OK")
