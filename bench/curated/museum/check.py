#!/usr/bin/env python3
"""Standalone consistency check for graph.yaml + questions.yaml (needs only PyYAML).

Checks ids, relation types/inverses, edge dates, chunks, and walks every gold path
from its anchor (edges valid at as_of, or at TODAY when no as_of; valid_from <= d < valid_to)
and requires the reached node set to equal the gold answers exactly.
"""
import os
import re
import sys
from collections import Counter, defaultdict

import yaml

TODAY = "2026-11-27"
SEMANTICS = {"ASSOCIATION", "HIERARCHY", "CONTAINMENT", "CLASSIFICATION", "SEQUENCE", "REFERENCE"}
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")
CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")

HERE = os.path.dirname(os.path.abspath(__file__))
errors = []


def err(msg):
    errors.append(msg)


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def norm_date(v, where):
    if v is None:
        return None
    s = str(v)
    if not DATE_RE.match(s):
        err(f"{where}: bad ISO date {v!r}")
    return s


graph = load("graph.yaml")
qdoc = load("questions.yaml")

for key in ("relation_types", "nodes", "edges", "chunks"):
    if not isinstance(graph.get(key), list):
        err(f"graph.yaml: top-level list '{key}' missing")
if errors:
    print("\n".join(errors))
    sys.exit(1)

# ---- relation types -------------------------------------------------------
forward = {}   # name -> rt
inverse = {}   # inverse name -> forward name
for rt in graph["relation_types"]:
    n, inv = rt.get("name"), rt.get("inverse")
    if not n or not UPPER_SNAKE.match(n):
        err(f"relation type name invalid: {n!r}")
    if not inv or not UPPER_SNAKE.match(inv):
        err(f"relation type {n}: inverse invalid: {inv!r}")
    if rt.get("semantics") not in SEMANTICS:
        err(f"relation type {n}: semantics {rt.get('semantics')!r} not allowed")
    if not rt.get("description"):
        err(f"relation type {n}: description missing")
    if n in forward or n in inverse:
        err(f"relation name {n} duplicated")
    forward[n] = rt
    if inv in forward or inv in inverse:
        err(f"inverse name {inv} duplicated")
    inverse[inv] = n
for n in forward:
    if n in inverse:
        err(f"{n} is both a relation name and an inverse name")

# ---- nodes ----------------------------------------------------------------
nodes = {}
for nd in graph["nodes"]:
    nid = nd.get("id")
    if not nid or nid in nodes:
        err(f"node id missing/duplicate: {nid!r}")
    nodes[nid] = nd
    if not nd.get("label") or not CAMEL.match(nd["label"]):
        err(f"node {nid}: label invalid {nd.get('label')!r}")
    props = nd.get("properties") or {}
    if not props.get("name"):
        err(f"node {nid}: properties.name missing")
    if "aliases" in props and not isinstance(props["aliases"], list):
        err(f"node {nid}: aliases must be a list")

# ---- edges ----------------------------------------------------------------
edges = []
seen_edges = set()
used_types = Counter()
for i, e in enumerate(graph["edges"]):
    where = f"edge #{i} {e.get('relation_type')} {e.get('source')}->{e.get('target')}"
    rt = e.get("relation_type")
    if rt not in forward:
        err(f"{where}: unknown relation type")
    for end in ("source", "target"):
        if e.get(end) not in nodes:
            err(f"{where}: {end} node does not exist")
    vf = norm_date(e.get("valid_from"), where)
    vt = norm_date(e.get("valid_to"), where)
    if vf and vt and not vf < vt:
        err(f"{where}: valid_from >= valid_to")
    c = e.get("confidence")
    if c is not None and not (0 <= float(c) <= 1):
        err(f"{where}: confidence out of range")
    key = (rt, e.get("source"), e.get("target"), vf, vt)
    if key in seen_edges:
        err(f"{where}: duplicate edge")
    seen_edges.add(key)
    used_types[rt] += 1
    edges.append((rt, e.get("source"), e.get("target"), vf, vt))
for n in forward:
    if used_types[n] == 0:
        err(f"relation type {n} has no edges")
temporal = [x for x in edges if x[3] or x[4]]
if not any(x[4] for x in edges):
    err("no edge ever ends (valid_to) -- relations must change over time")

# ---- chunks ---------------------------------------------------------------
chunks = {}
chunks_by_node = defaultdict(list)
for ch in graph["chunks"]:
    cid = ch.get("id")
    if not cid or cid in chunks:
        err(f"chunk id missing/duplicate: {cid!r}")
    if ch.get("node_id") not in nodes:
        err(f"chunk {cid}: node_id {ch.get('node_id')!r} does not exist")
    if not (ch.get("content") or "").strip():
        err(f"chunk {cid}: empty content")
    chunks[cid] = ch
    chunks_by_node[ch.get("node_id")].append(cid)


def names_of(nid):
    p = nodes[nid]["properties"]
    return [p["name"]] + list(p.get("aliases") or [])


for cid, ch in chunks.items():
    nid = ch.get("node_id")
    if nid in nodes:
        text = ch["content"].lower()
        if not any(n.lower() in text for n in names_of(nid)):
            err(f"chunk {cid}: does not mention its node's name/alias")

# ---- size / connectivity --------------------------------------------------
labels = Counter(nd["label"] for nd in nodes.values())
if len(nodes) < 45:
    err(f"only {len(nodes)} nodes (< 45)")
if len(labels) < 6:
    err(f"only {len(labels)} node types (< 6)")
if len(forward) < 9:
    err(f"only {len(forward)} relation types (< 9)")
if len(edges) < 80:
    err(f"only {len(edges)} edges (< 80)")
if len(chunks) < 45:
    err(f"only {len(chunks)} chunks (< 45)")

adj = defaultdict(set)
for rt, s, t, vf, vt in edges:
    adj[s].add(t)
    adj[t].add(s)
start = next(iter(nodes))
seen = {start}
stack = [start]
while stack:
    cur = stack.pop()
    for nb in adj[cur]:
        if nb not in seen:
            seen.add(nb)
            stack.append(nb)
if len(seen) != len(nodes):
    err(f"graph not connected: unreachable {sorted(set(nodes) - seen)}")


# ---- path walking ---------------------------------------------------------
def valid(vf, vt, day):
    return (vf is None or vf <= day) and (vt is None or day < vt)


def walk(anchor, path, day):
    frontier = {anchor}
    for step in path:
        nxt = set()
        if step in forward:
            for rt, s, t, vf, vt in edges:
                if rt == step and s in frontier and valid(vf, vt, day):
                    nxt.add(t)
        elif step in inverse:
            base = inverse[step]
            for rt, s, t, vf, vt in edges:
                if rt == base and t in frontier and valid(vf, vt, day):
                    nxt.add(s)
        else:
            raise KeyError(step)
        frontier = nxt
    return frontier


questions = qdoc.get("questions") or []
qids = set()
hops = Counter()
as_of_n = 0
multi_answer = 0
for q in questions:
    qid = q.get("id")
    where = f"question {qid}"
    if not qid or qid in qids:
        err(f"{where}: id missing/duplicate")
    qids.add(qid)
    text = q.get("question") or ""
    anchor = q.get("anchor")
    if anchor not in nodes:
        err(f"{where}: anchor {anchor!r} does not exist")
        continue
    if anchor in text:
        err(f"{where}: question text uses the anchor id")
    if not any(n.lower() in text.lower() for n in names_of(anchor)):
        err(f"{where}: question does not name its anchor ({names_of(anchor)})")
    path = q.get("path") or []
    if not path:
        err(f"{where}: empty path")
    bad = [p for p in path if p not in forward and p not in inverse]
    if bad:
        err(f"{where}: unknown relation(s) in path {bad}")
        continue
    answers = q.get("answers") or []
    if not answers:
        err(f"{where}: no answers")
    for a in answers:
        if a not in nodes:
            err(f"{where}: answer {a!r} does not exist")
    if len(set(answers)) != len(answers):
        err(f"{where}: duplicate answers")
    cks = q.get("chunks") or []
    if not cks:
        err(f"{where}: no chunks")
    for c in cks:
        if c not in chunks:
            err(f"{where}: chunk {c!r} does not exist")
    for a in answers:
        if a in nodes and not any(c in cks for c in chunks_by_node.get(a, [])):
            err(f"{where}: no chunk listed for answer {a}")
    as_of = q.get("as_of")
    day = norm_date(as_of, where) if as_of else TODAY
    got = walk(anchor, path, day)
    if got != set(answers):
        err(f"{where}: walk@{day} gives {sorted(got)} but gold is {sorted(answers)}")
    if as_of:
        as_of_n += 1
        if not day < TODAY:
            err(f"{where}: as_of is not in the past")
        now = walk(anchor, path, TODAY)
        if now == got:
            err(f"{where}: as_of answer equals today's answer {sorted(now)}")
    hops[len(path)] += 1
    if len(answers) > 1:
        multi_answer += 1

if len(questions) < 28:
    err(f"only {len(questions)} questions (< 28)")
if hops[1] < 6 or hops[2] < 10 or hops[3] < 5:
    err(f"hop mix too thin: {dict(hops)}")
if as_of_n < 4:
    err(f"only {as_of_n} as_of questions (< 4)")
if multi_answer < 3:
    err(f"only {multi_answer} questions with several answers")

print(f"nodes={len(nodes)} node_types={len(labels)} relation_types={len(forward)} "
      f"edges={len(edges)} (temporal={len(temporal)}) chunks={len(chunks)}")
print(f"questions={len(questions)} by_hops={dict(sorted(hops.items()))} as_of={as_of_n} "
      f"multi_answer={multi_answer}")
print("labels:", dict(labels))
if errors:
    print(f"\nFAIL: {len(errors)} problem(s)")
    for m in errors:
        print(" -", m)
    sys.exit(1)
print("OK: all gold paths reach exactly the gold answers")
