#!/usr/bin/env python3
"""Standalone gold checker for the restaurants set (needs only PyYAML)."""
import sys
from datetime import date
import yaml

TODAY = "2026-11-27"


def d(s):
    return date.fromisoformat(str(s))


def main():
    g = yaml.safe_load(open("graph.yaml"))
    qs = yaml.safe_load(open("questions.yaml"))["questions"]
    errs = []
    rels = {r["name"]: r for r in g["relation_types"]}
    inv = {}
    for r in g["relation_types"]:
        for k in ("name", "semantics", "inverse", "description"):
            if not r.get(k):
                errs.append(f"relation {r.get('name')} missing {k}")
        inv[r["inverse"]] = r["name"]
    nodes = {n["id"]: n for n in g["nodes"]}
    if len(nodes) != len(g["nodes"]):
        errs.append("duplicate node ids")
    chunks = {c["id"]: c for c in g["chunks"]}
    if len(chunks) != len(g["chunks"]):
        errs.append("duplicate chunk ids")
    for c in g["chunks"]:
        if c["node_id"] not in nodes:
            errs.append(f"chunk {c['id']} -> unknown node {c['node_id']}")
    for e in g["edges"]:
        if e["relation_type"] not in rels:
            errs.append(f"edge with unknown relation {e['relation_type']}")
        for k in ("source", "target"):
            if e[k] not in nodes:
                errs.append(f"edge {e} unknown {k}")

    def active(e, day):
        if e.get("valid_from") and d(e["valid_from"]) > day:
            return False
        if e.get("valid_to") and not day < d(e["valid_to"]):
            return False
        return True

    def step(frontier, rel, day):
        out = set()
        if rel in rels:
            for e in g["edges"]:
                if e["relation_type"] == rel and e["source"] in frontier and active(e, day):
                    out.add(e["target"])
        elif rel in inv:
            base = inv[rel]
            for e in g["edges"]:
                if e["relation_type"] == base and e["target"] in frontier and active(e, day):
                    out.add(e["source"])
        else:
            errs.append(f"unknown relation in path: {rel}")
        return out

    ids = set()
    hops = {}
    for q in qs:
        qid = q["id"]
        if qid in ids:
            errs.append(f"duplicate question id {qid}")
        ids.add(qid)
        if q["anchor"] not in nodes:
            errs.append(f"{qid}: unknown anchor {q['anchor']}")
            continue
        for a in q["answers"]:
            if a not in nodes:
                errs.append(f"{qid}: unknown answer {a}")
        if not q.get("chunks"):
            errs.append(f"{qid}: no chunks")
        for c in q.get("chunks", []):
            if c not in chunks:
                errs.append(f"{qid}: unknown chunk {c}")
        p = nodes[q["anchor"]]["properties"]
        names = [p["name"]] + list(p.get("aliases") or [])
        if not any(n.lower() in q["question"].lower() for n in names):
            errs.append(f"{qid}: anchor name/alias not in question text")
        day = d(q.get("as_of", TODAY))
        frontier = {q["anchor"]}
        for rel in q["path"]:
            frontier = step(frontier, rel, day)
        if frontier != set(q["answers"]):
            errs.append(f"{qid}: path reaches {sorted(frontier)} but gold is {sorted(q['answers'])}")
        if "as_of" in q:
            now = {q["anchor"]}
            for rel in q["path"]:
                now = step(now, rel, d(TODAY))
            if now == frontier:
                errs.append(f"{qid}: as_of answer equals today's answer")
        hops[len(q["path"])] = hops.get(len(q["path"]), 0) + 1

    print(f"nodes={len(nodes)} labels={len({n['label'] for n in g['nodes']})} "
          f"relation_types={len(rels)} edges={len(g['edges'])} chunks={len(chunks)} "
          f"questions={len(qs)} by_hops={dict(sorted(hops.items()))} "
          f"as_of={sum(1 for q in qs if 'as_of' in q)}")
    if errs:
        print("FAIL")
        for e in errs:
            print("  " + e)
        sys.exit(1)
    print("OK: all gold answers verified")


if __name__ == "__main__":
    main()
