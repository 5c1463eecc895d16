"""Example domain extensions (the five test cases of the universal memory design).

Each is vocabulary only — node types, edge types, synonyms and, for code, an
ingestion pipeline — registered through the same registry any application
uses. Their datasets live in ``examples/memory/``.
"""

from cef.memory.extensions.code import CodeExtension, PythonASTParser
from cef.memory.extensions.education import EducationExtension
from cef.memory.extensions.fitness import FitnessExtension
from cef.memory.extensions.pharma import PharmaExtension
from cef.memory.extensions.rpg import RPGExtension
from cef.schema.specs import SemanticMemoryExtension

#: the example extensions by name
EXTENSIONS: dict[str, type[SemanticMemoryExtension]] = {
    "rpg": RPGExtension,
    "code": CodeExtension,
    "pharma": PharmaExtension,
    "fitness": FitnessExtension,
    "education": EducationExtension,
}

__all__ = [
    "EXTENSIONS",
    "CodeExtension",
    "EducationExtension",
    "FitnessExtension",
    "PharmaExtension",
    "PythonASTParser",
    "RPGExtension",
]
