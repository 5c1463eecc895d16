#!/usr/bin/env python3
"""Standalone gold checker for the campus data set (needs only PyYAML)."""
import os
import sys
from collections import Counter, defaultdict

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = "2026-11-27"
errors = []


def err(msg):
    errors.append(msg)


g = yaml.safe_load(open(os.path.join(HERE, "graph.yaml"), encoding="utf-8"))
qs = yaml.safe_load(open(os.path.join(HERE, "questions.yaml"), encoding="utf-8"))["questions"]

SEMANTICS = {"ASSOCIATION", "HIERARCHY", "CONTAINMENT", "CLASSIFICATION", "SEQUENCE", "REFERENCE"}

# relation types
forward, backward = {}, {}
for rt in g["relation_types"]:
    for k in ("name", "semantics", "inverse", "description"):
        if not rt.get(k):
            err(f"relation type missing {k}: {rt}")
    if rt["semantics"] not in SEMANTICS:
        err(f"bad semantics {rt}")
    if rt["name"] in forward or rt["name"] in backward:
        err(f"duplicate relation name {rt['name']}")
    if rt["inverse"] in forward or rt["inverse"] in backward:
        err(f"duplicate inverse name {rt['inverse']}")
    forward[rt["name"]] = rt["inverse"]
    backward[rt["inverse"]] = rt["name"]
if set(forward) & set(backward):
    err(f"names used both as relation and inverse: {set(forward) & set(backward)}")

# nodes
nodes = {}
for n in g["nodes"]:
    if n["id"] in nodes:
        err(f"duplicate node {n['id']}")
    if not n.get("label") or not n.get("properties", {}).get("name"):
        err(f"node missing label/name {n['id']}")
    nodes[n["id"]] = n

# edges
adj_out, adj_in = defaultdict(list), defaultdict(list)
for e in g["edges"]:
    if e["relation_type"] not in forward:
        err(f"unknown relation type in edge {e}")
    for end in ("source", "target"):
        if e[end] not in nodes:
            err(f"unknown node {e[end]} in edge {e}")
    vf, vt = e.get("valid_from"), e.get("valid_to")
    if vf and vt and not vf < vt:
        err(f"bad validity interval {e}")
    adj_out[(e["source"], e["relation_type"])].append(e)
    adj_in[(e["target"], e["relation_type"])].append(e)

# connectivity
und = defaultdict(set)
for e in g["edges"]:
    und[e["source"]].add(e["target"])
    und[e["target"]].add(e["source"])
start = next(iter(nodes))
seen, stack = {start}, [start]
while stack:
    for m in und[stack.pop()]:
        if m not in seen:
            seen.add(m)
            stack.append(m)
if seen != set(nodes):
    err(f"graph not connected; unreachable: {sorted(set(nodes) - seen)}")

# chunks
chunks = {}
for c in g["chunks"]:
    if c["id"] in chunks:
        err(f"duplicate chunk {c['id']}")
    if c["node_id"] not in nodes:
        err(f"chunk {c['id']} about unknown node {c['node_id']}")
    if not c.get("content"):
        err(f"empty chunk {c['id']}")
    chunks[c["id"]] = c


def valid(e, date):
    vf, vt = e.get("valid_from"), e.get("valid_to")
    return (vf is None or str(vf) <= date) and (vt is None or date < str(vt))


def walk(anchor, path, date):
    frontier = {anchor}
    for rel in path:
        nxt = set()
        for n in frontier:
            if rel in forward:
                nxt |= {e["target"] for e in adj_out[(n, rel)] if valid(e, date)}
            elif rel in backward:
                nxt |= {e["source"] for e in adj_in[(n, backward[rel])] if valid(e, date)}
        frontier = nxt
    return frontier


qids = set()
hops = Counter()
n_asof = 0
for q in qs:
    qid = q.get("id")
    if qid in qids:
        err(f"duplicate question id {qid}")
    qids.add(qid)
    for k in ("question", "anchor", "path", "answers", "chunks"):
        if not q.get(k):
            err(f"{qid}: missing {k}")
    a = q["anchor"]
    if a not in nodes:
        err(f"{qid}: unknown anchor {a}")
        continue
    props = nodes[a]["properties"]
    names = [props["name"]] + list(props.get("aliases", []))
    if not any(nm.lower() in q["question"].lower() for nm in names):
        err(f"{qid}: anchor name/alias not in question ({names})")
    bad_rel = [r for r in q["path"] if r not in forward and r not in backward]
    if bad_rel:
        err(f"{qid}: unknown relations {bad_rel}")
        continue
    for x in q["answers"]:
        if x not in nodes:
            err(f"{qid}: unknown answer {x}")
    for c in q["chunks"]:
        if c not in chunks:
            err(f"{qid}: unknown chunk {c}")
    date = str(q["as_of"]) if q.get("as_of") else TODAY
    got = walk(a, q["path"], date)
    if got != set(q["answers"]):
        err(f"{qid}: gold {sorted(q['answers'])} != walked {sorted(got)} at {date}")
    if q.get("as_of"):
        n_asof += 1
        now = walk(a, q["path"], TODAY)
        if now == got:
            err(f"{qid}: as_of answer equals today's answer {sorted(now)}")
    else:
        hops[len(q["path"])] += 1
    if len(q["answers"]) != len(set(q["answers"])):
        err(f"{qid}: duplicate answers")

labels = Counter(n["label"] for n in nodes.values())
print(f"nodes={len(nodes)} node_types={len(labels)} {dict(labels)}")
print(f"relation_types={len(forward)} edges={len(g['edges'])} chunks={len(chunks)}")
print(f"questions={len(qs)} by hops (no as_of)={dict(sorted(hops.items()))} as_of={n_asof} "
      f"multi-answer={sum(1 for q in qs if len(q['answers']) > 1)}")
if errors:
    print("FAILED:")
    for m in errors:
        print("  -", m)
    sys.exit(1)
print("OK: all checks passed")
