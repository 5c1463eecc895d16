"""Fit the calibration of relevance (:attr:`cef.retrieve.presets.RelevanceSettings.calibration`) on
the verdicts ``bench/bench_relevance_pool.py --out`` wrote, and report it leave-one-domain-out: each
knowledge base's figures come from a fit on the other domains only.

    python bench/bench_relevance_pool.py --out runs/rel --metaqa 100 --locomo conv-26 --locomo conv-30
    python bench/fit_relevance.py runs/rel --lexical                  # the shipped calibration
    python bench/fit_relevance.py runs/rel --lexical --features rule,named,unnamed_absent
    python bench/fit_relevance.py runs/rel --lexical --features rule,named,absent,vouched --hold-out set

The model is logistic over the question's features (``metadata["relevance"]["features"]``):
``rule`` (the best result's rule relevance; the shipped calibration reads only it), ``named`` (the
best link confidence of a thing the question names), ``absent`` (the weighted share of what is asked
that the knowledge base holds nowhere), ``unnamed_absent`` (``(1 - named) x absent``), ``support`` (semantic support,
in verdicts of ``bench_relevance_pool.py --support``; :mod:`cef.retrieve.support`), any product of
two (``rule*support``) and ``dense``
(the best chunk's cosine with the question, in verdicts that carry it: the product no longer
computes it; ``--lexical`` leaves it out). Per knowledge base, its on-topic questions weigh ``--cost`` (a wrong "nothing matched" hides
answers), the off-topic ones written for it ``--own`` and the other domains' questions 1, each group
shared among its questions (the many cross-domain questions do not drown the few written for it).
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

LEXICAL: tuple[str, ...] = ("rule",)
#: the weight of the off-topic questions written for a knowledge base, against its cross-domain ones
OWN = 2.0
DENSE: tuple[str, ...] = (*LEXICAL, "dense")


def rows_of(folder: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def feature(r: dict[str, Any], name: str) -> float:
    f = r["features"]
    if "*" in name:  # a product of features ("rule*support")
        a, b = name.split("*", 1)
        return feature(r, a) * feature(r, b)
    if name == "unnamed_absent":  # what a question that names nothing asks, held nowhere
        return (1.0 - float(f["named"])) * float(f["absent"])
    return float(f.get(name, 0.0))


def matrix(rows: list[dict[str, Any]], names: tuple[str, ...]) -> np.ndarray:
    return np.array([[feature(r, n) for n in names] for r in rows], dtype=np.float64)


def weights(rows: list[dict[str, Any]], cost: float) -> np.ndarray:
    groups: dict[tuple[str, str], int] = defaultdict(int)
    for r in rows:
        groups[(r["kb"], r["kind"])] += 1
    share = {"on": cost, "off-own": OWN, "off-cross": 1.0}
    return np.array([share[r["kind"]] / groups[(r["kb"], r["kind"])] for r in rows])


def fit(
    rows: list[dict[str, Any]], names: tuple[str, ...], cost: float, c: float
) -> tuple[float, np.ndarray]:
    x, y = matrix(rows, names), np.array([r["kind"] == "on" for r in rows], dtype=int)
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(x, y, sample_weight=weights(rows, cost) * len(rows))
    return float(model.intercept_[0]), model.coef_[0]


def prob(rows: list[dict[str, Any]], names: tuple[str, ...], b0: float, b: np.ndarray) -> np.ndarray:
    z = b0 + matrix(rows, names) @ b
    return 1.0 / (1.0 + np.exp(-z))


def model_for(row: dict[str, Any]) -> tuple[str, ...]:
    return DENSE if "dense" in row["features"] else LEXICAL


def table(rows: list[dict[str, Any]], abstains: list[bool], title: str, by: str = "kb") -> None:
    """Each knowledge base's figures (``by`` "kb") or each question set's ("set": the written sets,
    "shipped", "curated", …), and all of them together."""
    print(f"\n{title}")
    head = "knowledge base" if by == "kb" else "question set"
    print(f"{head:16} {'on':>5} {'wrongly':>8} {'off own':>8} {'nothing':>8} {'off cross':>9} {'nothing':>8}")
    per: dict[str, list[int]] = defaultdict(lambda: [0] * 6)
    for r, a in zip(rows, abstains, strict=True):
        i = {"on": 0, "off-own": 2, "off-cross": 4}[r["kind"]]
        for kb in (str(r.get(by, "")), "all"):
            per[kb][i] += 1
            per[kb][i + 1] += int(a)
    for kb, c in per.items():
        cells = [f"{c[i]:>5}" if i == 0 else f"{c[i]:>8}" if i == 2 else f"{c[i]:>9}" for i in (0, 2, 4)]
        pct = [f"{100 * c[i + 1] / c[i]:7.1f}%" if c[i] else "       -" for i in (0, 2, 4)]
        print(f"{kb:16} {cells[0]} {pct[0]} {cells[1]} {pct[1]} {cells[2]} {pct[2]}")


def main() -> None:
    global LEXICAL, DENSE, OWN
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "folder", type=Path, help="the verdicts bench_relevance_pool.py --out wrote (one <domain>.jsonl each)"
    )
    ap.add_argument("--cost", type=float, default=3.0, help="a wrong abstention weighs this many missed ones")
    ap.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the logistic fit")
    ap.add_argument(
        "--own", type=float, default=2.0, help="weight of the off-topic questions written for a KB"
    )
    ap.add_argument("--lexical", action="store_true", help="leave the dense feature out everywhere")
    ap.add_argument(
        "--features",
        default=",".join(LEXICAL),
        help="the lexical features, comma-separated (rule,named,absent)",
    )
    ap.add_argument(
        "--hold-out",
        choices=("kb", "set"),
        default="kb",
        help="what each held-out figure leaves out of its fit: a knowledge base, or a written question set",
    )
    args = ap.parse_args()
    LEXICAL = tuple(args.features.split(","))
    OWN = args.own
    DENSE = (*LEXICAL, "dense")
    rows = rows_of(args.folder)
    if args.lexical:
        for r in rows:
            r["features"].pop("dense", None)
    table(rows, [bool(r["nothing_matched"]) for r in rows], "as run (the verdicts in the files)")
    key = args.hold_out  # "kb": leave one knowledge base out; "set": one written question set
    domains = sorted({str(r.get(key, "")) for r in rows})
    held_out: list[bool] = [False] * len(rows)
    for d in domains:
        train = [r for r in rows if str(r.get(key, "")) != d]
        for names in (LEXICAL, DENSE):
            usable = [r for r in train if model_for(r) == names or names == LEXICAL]
            if not usable:
                continue
            b0, b = fit(usable, names, args.cost, args.c)
            for i, r in enumerate(rows):
                if str(r.get(key, "")) == d and model_for(r) == names:
                    held_out[i] = bool(prob([r], names, b0, b)[0] < 0.5)
    title = f"leave-one-{'domain' if key == 'kb' else 'set'}-out fit (cost {args.cost})"
    table(rows, held_out, title)
    if key == "set":  # what the next unseen set would likely show: each set's figures from a fit without it
        table(rows, [bool(r["nothing_matched"]) for r in rows], "as run, by question set", by="set")
        table(rows, held_out, f"{title}, by question set", by="set")
    print("\nfitted on every domain:")
    for names in (LEXICAL, DENSE):
        usable = [r for r in rows if model_for(r) == names or names == LEXICAL]
        if not usable:
            continue
        b0, b = fit(usable, names, args.cost, args.c)
        print(
            f"  {'+'.join(names):24} intercept {b0:+.3f} "
            + " ".join(f"{n} {v:+.3f}" for n, v in zip(names, b, strict=True))
        )
        p = prob(usable, names, b0, b)
        on = [pi for pi, r in zip(p, usable, strict=True) if r["kind"] == "on"]
        print(f"    on-topic below 0.5: {sum(x < 0.5 for x in on)}/{len(on)}; "
              f"log-loss {-np.mean([math.log(max(pi if r['kind'] == 'on' else 1 - pi, 1e-9)) for pi, r in zip(p, usable, strict=True)]):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
