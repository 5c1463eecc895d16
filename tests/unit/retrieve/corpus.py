"""A small multi-hop corpus written for the graph retrieval tests (fictional facts).

The two-hop question :data:`QUESTION` needs the passage about the work
(``tides``) and the passage about its composer (``varga``); distractor passages
share the question's words (symphony, composer, born, city) but not its chain.
"""

from __future__ import annotations

import json
from pathlib import Path

QUESTION = "In which city was the composer of Symphony of Tides born?"
GOLD = ("tides", "varga")

PASSAGES: list[dict[str, str]] = [
    {
        "id": "tides",
        "title": "Symphony of Tides",
        "text": "Symphony of Tides is an orchestral work by Elena Varga, first performed in 1931.",
    },
    {
        "id": "varga",
        "title": "Elena Varga",
        "text": "Elena Varga was a pianist and teacher. She was born in Szeged and later studied in Vienna.",
    },
    {
        "id": "winds",
        "title": "Symphony of Winds",
        "text": "Symphony of Winds is a symphony by the composer Lukas Brandt, who was born in the city of Graz.",
    },
    {
        "id": "brandt",
        "title": "Lukas Brandt",
        "text": "Lukas Brandt was an Austrian composer, born in the city of Graz, known for his symphonies.",
    },
    {
        "id": "overture",
        "title": "Tidal Overture",
        "text": "The Tidal Overture is a symphony about the tides by Marco Rossi, a composer born in the city of Genoa.",
    },
    {
        "id": "rossi",
        "title": "Marco Rossi",
        "text": "Marco Rossi was an Italian composer born in the city of Genoa who wrote music about the sea.",
    },
    {
        "id": "ocean",
        "title": "Ocean Suite",
        "text": "Ocean Suite is a symphony of waves and tides by a composer who was born in the coastal city of Bergen.",
    },
    {
        "id": "szeged",
        "title": "Szeged",
        "text": "Szeged is a city in southern Hungary on the Tisza river, famous for its paprika.",
    },
    {
        "id": "vienna",
        "title": "Vienna",
        "text": "Vienna is the capital of Austria and has been a centre of music for centuries.",
    },
    {
        "id": "graz",
        "title": "Graz",
        "text": "Graz is the second largest city of Austria, in the state of Styria.",
    },
    {"id": "genoa", "title": "Genoa", "text": "Genoa is a port city in northern Italy on the Ligurian Sea."},
    {
        "id": "bergen",
        "title": "Bergen",
        "text": "Bergen is a city on the west coast of Norway surrounded by mountains.",
    },
    {
        "id": "harbor",
        "title": "Harbor Hall",
        "text": "Harbor Hall is a concert venue by the sea where many symphonies premiered.",
    },
    {
        "id": "paprika",
        "title": "Paprika",
        "text": "Paprika is a spice made from dried peppers, produced mainly in Hungary and Spain.",
    },
    {
        "id": "tisza",
        "title": "Tisza",
        "text": "The Tisza is one of the main rivers of Central Europe, flowing through Hungary.",
    },
    {
        "id": "styria",
        "title": "Styria",
        "text": "Styria is a state in the southeast of Austria whose capital is Graz.",
    },
    {
        "id": "orchestra",
        "title": "City Symphony Orchestra",
        "text": "The City Symphony Orchestra performs works by composers born in the city every season.",
    },
    {
        "id": "conservatory",
        "title": "Vienna Conservatory",
        "text": "The Vienna Conservatory trained many pianists and composers in the nineteenth century.",
    },
    {"id": "norway", "title": "Norway", "text": "Norway is a Nordic country whose second city is Bergen."},
    {"id": "liguria", "title": "Liguria", "text": "Liguria is a region of Italy whose capital is Genoa."},
]


def write_corpus(path: Path) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in PASSAGES), encoding="utf-8")
    return path
