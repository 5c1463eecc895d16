"""Every MCP tool's published input schema is the contract: any argument set it accepts is accepted.

Arguments are generated from each tool's ``inputSchema`` (as ``tools/list`` publishes it) by
schemathesis's JSON Schema generator (the one its REST run uses) and validated the way a call is (:func:`cef.server.tools.parse_tool_arguments`);
a ValidationError for a schema-valid argument set is a failure (a rule the schema does not state). The
one rule stated only in words, as on the REST side (``tests/support/schemathesis_hooks.py``): an edge's
``valid_to`` is not before its ``valid_from`` (JSON Schema cannot compare two fields).
``retrieve_knowledge`` arguments with graph patterns are also run against the clinical example: they
answer (possibly with no paths and a warning), never with an error.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from functools import partial
from typing import Any

import anyio
import jsonschema
import jsonschema_rs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from schemathesis.core.jsonschema import CANONICALIZE_DRAFT_BY_VALIDATOR
from schemathesis.generation.jsonschema.builder import build
from schemathesis.specs.openapi.formats import format_lengths_for, get_default_format_strategies, regex_values

import cef
from cef.context.request import ContextRequest
from cef.server.service import CefService
from cef.server.settings import ServerSettings
from cef.server.tools import parse_tool_arguments, tool_definitions, tool_spec
from tests.conftest import clinical_batch

SETTINGS = ServerSettings(writable=True)
DEFINITIONS = {
    d.name: d for d in tool_definitions(None, SETTINGS, writable=True, context_model=ContextRequest)
}
EXAMPLES = int(os.environ.get("CEF_SCHEMA_EXAMPLES", "50"))

pytestmark = pytest.mark.slow


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values ``schema`` admits (JSON Schema 2020-12, with the standard string formats and ``regex``)."""
    formats = {**get_default_format_strategies(), "regex": regex_values(st.characters(codec="utf-8"))}
    return build(
        schema,
        draft=CANONICALIZE_DRAFT_BY_VALIDATOR[jsonschema_rs.Draft202012Validator],
        formats=formats,
        format_lengths=format_lengths_for(formats),
    )


def window_ok(edge: dict[str, Any]) -> bool:
    start, end = edge.get("valid_from"), edge.get("valid_to")
    if not (isinstance(start, str) and isinstance(end, str)):
        return True
    moments = [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (start, end)]
    first, last = (m if m.tzinfo else m.replace(tzinfo=UTC) for m in moments)  # naive times are UTC
    return last >= first


def check(name: str, arguments: dict[str, Any]) -> Any:
    schema = DEFINITIONS[name].input_schema
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    jsonschema.Draft202012Validator(schema, format_checker=checker).validate(arguments)  # schema-valid
    spec = tool_spec(name, context_model=ContextRequest)
    assert spec is not None
    return parse_tool_arguments(spec, arguments, SETTINGS)  # a ValidationError here fails the test


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_schema_valid_arguments_are_accepted(name: str) -> None:
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(from_schema(DEFINITIONS[name].input_schema))
    def accepted(arguments: dict[str, Any]) -> None:
        assume(all(window_ok(e) for e in arguments.get("edges", [])))
        check(name, arguments)

    accepted()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Any:
    kb = cef.open(tmp_path_factory.mktemp("schemas") / "clinical.db", embedder=None)
    kb.index_batch(clinical_batch())
    svc = CefService(kb, ServerSettings(graph_timeout_ms=0, cache_ttl_seconds=0), context=False)
    yield svc
    svc.close()
    kb.close()


def test_schema_valid_patterns_run(service: CefService) -> None:
    """Schema-valid graph patterns answer: paths or none, with warnings for parts that check nothing."""
    schema = DEFINITIONS["retrieve_knowledge"].input_schema
    patterns_only = {**schema, "required": ["query", "patterns"]}
    patterns_only["properties"] = {
        "query": {"enum": ["warfarin", "John Miller"]},
        "patterns": {**schema["properties"]["patterns"], "minItems": 1, "maxItems": 2},
        "top_k": {"const": 3},
    }
    ran: list[int] = []

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(from_schema(patterns_only))
    def runs(arguments: dict[str, Any]) -> None:
        check("retrieve_knowledge", arguments)
        result = anyio.run(partial(service.call_tool, "retrieve_knowledge", arguments, writable=False))
        assert result.metadata.get("patterns") is not None  # type: ignore[attr-defined]
        ran.append(len(arguments["patterns"]))

    runs()
    assert len(ran) >= EXAMPLES // 2, len(ran)
