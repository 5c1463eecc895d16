import sys, yaml
from collections import Counter
TODAY = "2026-11-27"
g = yaml.safe_load(open("graph.yaml")); q = yaml.safe_load(open("questions.yaml"))["questions"]
err = []
nodes = {n["id"]: n for n in g["nodes"]}
rels = {r["name"]: r for r in g["relation_types"]}
inv = {r["inverse"]: r["name"] for r in g["relation_types"]}
chunks = {c["id"]: c for c in g["chunks"]}
for c in g["chunks"]:
    if c["node_id"] not in nodes: err.append(f"chunk {c['id']} bad node")
for e in g["edges"]:
    if e["relation_type"] not in rels: err.append(f"edge rel {e}")
    for k in ("source", "target"):
        if e[k] not in nodes: err.append(f"edge node {e}")
def valid(e, d):
    return str(e.get("valid_from", "0000")) <= d < str(e.get("valid_to", "9999"))
def walk(start, path, d):
    cur = {start}
    for step in path:
        nxt = set()
        for e in g["edges"]:
            if not valid(e, d): continue
            if step in rels and e["relation_type"] == step and e["source"] in cur: nxt.add(e["target"])
            elif step in inv and e["relation_type"] == inv[step] and e["target"] in cur: nxt.add(e["source"])
        cur = nxt
    return cur
ids = Counter(x["id"] for x in q)
for k, v in ids.items():
    if v > 1: err.append(f"dup qid {k}")
hops = Counter(); asof = 0
for x in q:
    if x["anchor"] not in nodes: err.append(f"{x['id']} anchor"); continue
    for s in x["path"]:
        if s not in rels and s not in inv: err.append(f"{x['id']} bad step {s}")
    for a in x["answers"]:
        if a not in nodes: err.append(f"{x['id']} bad answer {a}")
    if not x.get("chunks"): err.append(f"{x['id']} no chunks")
    for c in x.get("chunks", []):
        if c not in chunks: err.append(f"{x['id']} bad chunk {c}")
    p = nodes[x["anchor"]]["properties"]
    names = [p["name"]] + list(p.get("aliases", []))
    if not any(n.lower() in x["question"].lower() for n in names): err.append(f"{x['id']} anchor name not in question")
    d = str(x.get("as_of", TODAY))
    got = walk(x["anchor"], x["path"], d)
    if got != set(x["answers"]): err.append(f"{x['id']} gold {sorted(x['answers'])} != walked {sorted(got)}")
    if "as_of" in x:
        asof += 1
        if walk(x["anchor"], x["path"], TODAY) == got: err.append(f"{x['id']} as_of answer same as today")
    hops[len(x["path"])] += 1
print(f"nodes={len(nodes)} labels={len(set(n['label'] for n in g['nodes']))} relation_types={len(rels)} edges={len(g['edges'])} chunks={len(chunks)} questions={len(q)} hops={dict(sorted(hops.items()))} as_of={asof} multi_answer={sum(len(x['answers'])>1 for x in q)}")
if err:
    print("\n".join(err)); sys.exit(1)
print("OK")
