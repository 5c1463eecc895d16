"""Graph databases speaking Cypher: one shared dialect (:class:`CypherGraphStore`) and thin drivers.

``FalkorDBDriver`` needs the ``falkordb`` extra, ``Neo4jDriver`` the ``neo4j``
extra; each imports its client only when constructed.
"""

from cef.store.cypher.dialect import CypherDriver, CypherGraphStore
from cef.store.cypher.falkordb import FalkorDBDriver
from cef.store.cypher.neo4j import Neo4jDriver

__all__ = ["CypherDriver", "CypherGraphStore", "FalkorDBDriver", "Neo4jDriver"]
