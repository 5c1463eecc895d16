#!/usr/bin/env python3
"""Standalone gold checker for the contracts domain (needs only PyYAML)."""
import os
import sys
from collections import Counter, defaultdict

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-27"

with open(os.path.join(HERE, "graph.yaml"), encoding="utf-8") as f:
    g = yaml.safe_load(f)
with open(os.path.join(HERE, "questions.yaml"), encoding="utf-8") as f:
    qs = yaml.safe_load(f)["questions"]

errors = []
warnings = []

# ---- relation types ----
rels = {}
inverse_of = {}  # inverse name -> forward name
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errors.append(f"relation type {r} missing {k}")
    if r["name"] in rels or r["name"] in inverse_of:
        errors.append(f"duplicate relation name {r['name']}")
    rels[r["name"]] = r
for r in g["relation_types"]:
    inv = r["inverse"]
    if inv in rels or inv in inverse_of:
        errors.append(f"inverse name {inv} clashes")
    inverse_of[inv] = r["name"]
VALID_SEM = {"ASSOCIATION", "HIERARCHY", "CONTAINMENT", "CLASSIFICATION", "SEQUENCE", "REFERENCE"}
for r in g["relation_types"]:
    if r["semantics"] not in VALID_SEM:
        errors.append(f"bad semantics {r['semantics']}")

# ---- nodes ----
nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes:
        errors.append(f"duplicate node {n['id']}")
    nodes[n["id"]] = n
    if not n.get("properties", {}).get("name"):
        errors.append(f"node {n['id']} has no name")

# ---- edges ----
used_rel = set()
fwd = defaultdict(list)  # (src, rel) -> [(tgt, from, to)]
bwd = defaultdict(list)  # (tgt, rel) -> [(src, from, to)]
adj = defaultdict(set)
for e in g["edges"]:
    rt = e["relation_type"]
    if rt not in rels:
        errors.append(f"edge uses unknown relation {rt}")
    for end in ("source", "target"):
        if e[end] not in nodes:
            errors.append(f"edge {rt} {e['source']}->{e['target']}: unknown {end}")
    vf, vt = e.get("valid_from"), e.get("valid_to")
    if vf and vt and not str(vf) < str(vt):
        errors.append(f"edge {e} has valid_from >= valid_to")
    used_rel.add(rt)
    fwd[(e["source"], rt)].append((e["target"], vf, vt))
    bwd[(e["target"], rt)].append((e["source"], vf, vt))
    adj[e["source"]].add(e["target"])
    adj[e["target"]].add(e["source"])

for r in rels:
    if r not in used_rel:
        warnings.append(f"relation type {r} has no edges")


def valid(vf, vt, date):
    return (vf is None or str(vf) <= date) and (vt is None or date < str(vt))


def walk(anchor, path, date):
    frontier = {anchor}
    for step in path:
        nxt = set()
        if step in rels:
            for n in frontier:
                for t, vf, vt in fwd[(n, step)]:
                    if valid(vf, vt, date):
                        nxt.add(t)
        elif step in inverse_of:
            base = inverse_of[step]
            for n in frontier:
                for s, vf, vt in bwd[(n, base)]:
                    if valid(vf, vt, date):
                        nxt.add(s)
        else:
            raise KeyError(step)
        frontier = nxt
    return frontier


# connectivity
start = next(iter(nodes))
seen, stack = {start}, [start]
while stack:
    for m in adj[stack.pop()]:
        if m not in seen:
            seen.add(m)
            stack.append(m)
if len(seen) != len(nodes):
    errors.append(f"graph not connected; unreachable: {sorted(set(nodes) - seen)}")

# ---- chunks ----
chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks:
        errors.append(f"duplicate chunk {c['id']}")
    chunks[c["id"]] = c
    if c["node_id"] not in nodes:
        errors.append(f"chunk {c['id']} about unknown node {c['node_id']}")
    if not c.get("content"):
        errors.append(f"chunk {c['id']} empty")

# ---- questions ----
qids = set()
hops = Counter()
n_asof = 0
for q in qs:
    qid = q["id"]
    if qid in qids:
        errors.append(f"duplicate question id {qid}")
    qids.add(qid)
    for k in ("question", "anchor", "path", "answers", "chunks"):
        if not q.get(k):
            errors.append(f"{qid}: missing {k}")
    a = q["anchor"]
    if a not in nodes:
        errors.append(f"{qid}: unknown anchor {a}")
        continue
    props = nodes[a]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(str(nm).lower() in q["question"].lower() for nm in names):
        errors.append(f"{qid}: anchor name/alias not in question text ({names})")
    bad = False
    for step in q["path"]:
        if step not in rels and step not in inverse_of:
            errors.append(f"{qid}: unknown relation {step} in path")
            bad = True
    for ans in q["answers"]:
        if ans not in nodes:
            errors.append(f"{qid}: unknown answer node {ans}")
    for cid in q["chunks"]:
        if cid not in chunks:
            errors.append(f"{qid}: unknown chunk {cid}")
    if bad:
        continue
    date = str(q["as_of"]) if q.get("as_of") else TODAY
    got = walk(a, q["path"], date)
    if got != set(q["answers"]):
        errors.append(f"{qid}: gold {sorted(q['answers'])} != walked {sorted(got)} at {date}")
    if len(q["answers"]) != len(set(q["answers"])):
        errors.append(f"{qid}: duplicate answers")
    if q.get("as_of"):
        n_asof += 1
        now = walk(a, q["path"], TODAY)
        if now == got:
            errors.append(f"{qid}: as_of answer equals today's answer {sorted(now)}")
    else:
        hops[len(q["path"])] += 1
    # answers' own chunks should normally be present
    for ans in q["answers"]:
        own = [c for c in chunks.values() if c["node_id"] == ans]
        if own and not any(c["id"] in q["chunks"] for c in own):
            warnings.append(f"{qid}: no chunk about answer {ans} listed")

labels = Counter(n["label"] for n in nodes.values())
print(f"nodes: {len(nodes)}  node types: {len(labels)} {dict(labels)}")
print(f"relation types: {len(rels)}  edges: {len(g['edges'])}  chunks: {len(chunks)}")
print(f"questions: {len(qs)}  by hop (non-as_of): {dict(sorted(hops.items()))}  as_of: {n_asof}")
print(f"multi-answer questions: {sum(1 for q in qs if len(q['answers']) > 1)}")
print(f"temporal edges: {sum(1 for e in g['edges'] if e.get('valid_from') or e.get('valid_to'))}")

# size requirements
if len(nodes) < 45: errors.append("fewer than 45 nodes")
if len(labels) < 6: errors.append("fewer than 6 node types")
if len(rels) < 9: errors.append("fewer than 9 relation types")
if len(g["edges"]) < 80: errors.append("fewer than 80 edges")
if len(chunks) < 45: errors.append("fewer than 45 chunks")
if len(qs) < 28: errors.append("fewer than 28 questions")

for w in warnings:
    print("WARN:", w)
for e in errors:
    print("ERROR:", e)
if errors:
    sys.exit(1)
print("OK: all checks passed")
