"""The vocabulary of a knowledge base: what its nodes and edges may be and mean (``kb.schema``).

- :mod:`cef.schema.textgraph` — the built-in text-graph vocabulary ingest writes
  (``Entity``, ``Passage``, ``MENTIONS``, ``CO_OCCURS_WITH``, ``SYNONYM``) and its ids
- :mod:`cef.schema.kinds` — the universal node kinds and relation types of the semantic memory
- :mod:`cef.schema.specs` — the specs a domain registers (node, edge, property, vocabulary, pipeline)
- :mod:`cef.schema.pipelines` — the ports of an ingestion pipeline (parser, decomposer, context)
- :mod:`cef.schema.lookups` — the registry's state and its read-only lookups
- :mod:`cef.schema.checks` — the one check of every write (run by the engine's indexer)
- :mod:`cef.schema.registry` — the schema registry of a knowledge base, ``kb.schema`` (persisted
  in the store's meta table; the memory's extensions register into it)
- :mod:`cef.schema.discovery` — schema discovery from a live graph and change tracking
"""
