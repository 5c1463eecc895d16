import sys, yaml
from collections import deque
g = yaml.safe_load(open('graph.yaml')); q = yaml.safe_load(open('questions.yaml'))['questions']
TODAY = "2026-11-27"; err = []
nodes = {n['id']: n for n in g['nodes']}
rels = {r['name']: r for r in g['relation_types']}
inv = {r['inverse']: r['name'] for r in g['relation_types']}
chunks = {c['id']: c for c in g['chunks']}
for r in g['relation_types']:
    for k in ('name', 'semantics', 'inverse', 'description'):
        if not r.get(k): err.append(f"reltype {r} missing {k}")
for e in g['edges']:
    if e['relation_type'] not in rels: err.append(f"edge bad rel {e}")
    for k in ('source', 'target'):
        if e[k] not in nodes: err.append(f"edge bad {k} {e}")
for c in g['chunks']:
    if c['node_id'] not in nodes: err.append(f"chunk bad node {c['id']}")
def valid(e, d):
    return str(e.get('valid_from', '0000')) <= d and (not e.get('valid_to') or d < str(e['valid_to']))
def step(cur, rel, d):
    out = set()
    for e in g['edges']:
        if not valid(e, d): continue
        if rel in rels and e['relation_type'] == rel and e['source'] in cur: out.add(e['target'])
        elif rel in inv and e['relation_type'] == inv[rel] and e['target'] in cur: out.add(e['source'])
    return out
ids = set(); hops = {}
for x in q:
    if x['id'] in ids: err.append(f"dup id {x['id']}")
    ids.add(x['id'])
    if x['anchor'] not in nodes: err.append(f"{x['id']} bad anchor"); continue
    p = nodes[x['anchor']]['properties']; names = [p['name']] + p.get('aliases', [])
    if not any(n.lower() in x['question'].lower() for n in names): err.append(f"{x['id']} anchor name not in question")
    for r in x['path']:
        if r not in rels and r not in inv: err.append(f"{x['id']} bad rel {r}")
    for a in x['answers']:
        if a not in nodes: err.append(f"{x['id']} bad answer {a}")
    if not x.get('chunks'): err.append(f"{x['id']} no chunks")
    for c in x.get('chunks', []):
        if c not in chunks: err.append(f"{x['id']} bad chunk {c}")
    d = str(x.get('as_of', TODAY)); cur = {x['anchor']}
    for r in x['path']: cur = step(cur, r, d)
    if cur != set(x['answers']): err.append(f"{x['id']} got {sorted(cur)} want {sorted(x['answers'])}")
    if 'as_of' in x:
        now = {x['anchor']}
        for r in x['path']: now = step(now, r, TODAY)
        if now == cur: err.append(f"{x['id']} as_of answer same as today")
    hops[len(x['path'])] = hops.get(len(x['path']), 0) + 1
# connectivity
adj = {n: set() for n in nodes}
for e in g['edges']: adj[e['source']].add(e['target']); adj[e['target']].add(e['source'])
seen = {next(iter(nodes))}; dq = deque(seen)
while dq:
    n = dq.popleft()
    for m in adj[n] - seen: seen.add(m); dq.append(m)
if len(seen) != len(nodes): err.append(f"graph not connected: {set(nodes)-seen}")
print(f"nodes={len(nodes)} labels={len({n['label'] for n in g['nodes']})} reltypes={len(rels)} edges={len(g['edges'])} chunks={len(chunks)} questions={len(q)} hops={dict(sorted(hops.items()))} as_of={sum('as_of' in x for x in q)}")
if err:
    print("\n".join(err)); sys.exit(1)
print("OK")
