#!/usr/bin/env python3
"""Standalone gold checker for the research-papers KG question set (needs only PyYAML)."""
import sys
from datetime import date
import yaml

TODAY = "2026-11-27"
g = yaml.safe_load(open("graph.yaml", encoding="utf-8"))
q = yaml.safe_load(open("questions.yaml", encoding="utf-8"))
errors = []

rels = {r["name"]: r for r in g["relation_types"]}
inverse = {}
for r in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not r.get(k):
            errors.append(f"relation {r} missing {k}")
    inverse[r["inverse"]] = r["name"]
    if r["inverse"] in rels:
        errors.append(f"inverse name {r['inverse']} clashes with a relation name")

nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes:
        errors.append(f"duplicate node {n['id']}")
    nodes[n["id"]] = n
    if not n.get("properties", {}).get("name"):
        errors.append(f"node {n['id']} has no name")

def d(s):
    return date.fromisoformat(str(s))

for i, e in enumerate(g["edges"]):
    if e["relation_type"] not in rels:
        errors.append(f"edge {i} unknown relation {e['relation_type']}")
    for k in ("source", "target"):
        if e[k] not in nodes:
            errors.append(f"edge {i} unknown {k} {e[k]}")
    for k in ("valid_from", "valid_to"):
        if k in e:
            d(e[k])

chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks:
        errors.append(f"duplicate chunk {c['id']}")
    chunks[c["id"]] = c
    if c["node_id"] not in nodes:
        errors.append(f"chunk {c['id']} about unknown node {c['node_id']}")

def valid(e, at):
    if "valid_from" in e and d(e["valid_from"]) > at:
        return False
    if "valid_to" in e and not at < d(e["valid_to"]):
        return False
    return True

def step(frontier, rel, at):
    out = set()
    if rel in rels:
        for e in g["edges"]:
            if e["relation_type"] == rel and e["source"] in frontier and valid(e, at):
                out.add(e["target"])
    elif rel in inverse:
        fwd = inverse[rel]
        for e in g["edges"]:
            if e["relation_type"] == fwd and e["target"] in frontier and valid(e, at):
                out.add(e["source"])
    else:
        raise KeyError(rel)
    return out

def walk(anchor, path, at):
    fr = {anchor}
    for rel in path:
        fr = step(fr, rel, at)
    return fr

ids = set()
hops = {}
n_asof = 0
for qq in q["questions"]:
    qid = qq["id"]
    if qid in ids:
        errors.append(f"duplicate question id {qid}")
    ids.add(qid)
    for k in ("question", "anchor", "path", "answers", "chunks"):
        if k not in qq or qq[k] in (None, []):
            errors.append(f"{qid}: missing {k}")
    if qq["anchor"] not in nodes:
        errors.append(f"{qid}: unknown anchor {qq['anchor']}")
        continue
    a = nodes[qq["anchor"]]["properties"]
    names = [a["name"]] + list(a.get("aliases", []))
    if not any(nm.lower() in qq["question"].lower() for nm in names):
        errors.append(f"{qid}: anchor name/alias not in question text")
    bad = [r for r in qq["path"] if r not in rels and r not in inverse]
    if bad:
        errors.append(f"{qid}: unknown relation(s) in path {bad}")
        continue
    for x in qq["answers"]:
        if x not in nodes:
            errors.append(f"{qid}: unknown answer {x}")
    for c in qq["chunks"]:
        if c not in chunks:
            errors.append(f"{qid}: unknown chunk {c}")
    at = d(qq.get("as_of", TODAY))
    got = walk(qq["anchor"], qq["path"], at)
    if got != set(qq["answers"]):
        errors.append(f"{qid}: gold {sorted(qq['answers'])} != walked {sorted(got)}")
    if len(qq["answers"]) != len(set(qq["answers"])):
        errors.append(f"{qid}: duplicate answers")
    if "as_of" in qq:
        n_asof += 1
        now = walk(qq["anchor"], qq["path"], d(TODAY))
        if now == got:
            errors.append(f"{qid}: as_of answer equals today's answer")
    hops[len(qq["path"])] = hops.get(len(qq["path"]), 0) + 1

# connectivity
adj = {n: set() for n in nodes}
for e in g["edges"]:
    adj[e["source"]].add(e["target"]); adj[e["target"]].add(e["source"])
start = next(iter(nodes)); seen = {start}; stack = [start]
while stack:
    for m in adj[stack.pop()]:
        if m not in seen:
            seen.add(m); stack.append(m)
if len(seen) != len(nodes):
    errors.append(f"graph not connected: unreachable {sorted(set(nodes) - seen)}")

labels = {n["label"] for n in g["nodes"]}
print(f"nodes={len(nodes)} labels={len(labels)} relation_types={len(rels)} edges={len(g['edges'])} "
      f"chunks={len(chunks)} questions={len(q['questions'])} hops={dict(sorted(hops.items()))} as_of={n_asof} "
      f"multi_answer={sum(1 for x in q['questions'] if len(x['answers'])>1)}")
if errors:
    print("ERRORS:"); [print("  " + e) for e in errors]; sys.exit(1)
print("OK: all gold answers verified")
