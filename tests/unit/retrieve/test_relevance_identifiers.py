""" "The ICD-10 *code*": an identifier noun the knowledge base never writes is held right after a word
naming one of its property keys (``icd10``); after any other word it is a thing the knowledge base
lacks. Keys and names are generated, so no rule leans on one data set's vocabulary."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cef
from cef.retrieve.relevance_vocab import words_of_key
from tests.conftest import nothing_matched

_KEYS = st.builds(
    lambda stem, digits: stem + str(digits),
    st.text(alphabet="bdfgkmnprstvz", min_size=3, max_size=4),
    st.integers(min_value=2, max_value=99),
)


def test_a_key_is_written_as_a_question_writes_it() -> None:
    assert words_of_key("icd10") == ["icd10", "icd-10", "icd 10"]
    assert words_of_key("trackingNumber") == ["tracking number"]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=_KEYS, value=st.text(alphabet="ABCDEFGH0123456789", min_size=3, max_size=5))
def test_an_identifier_after_a_property_key_is_held(tmp_path_factory: object, key: str, value: str) -> None:
    root = tmp_path_factory.mktemp("ids")  # type: ignore[attr-defined]
    with cef.open(root / "kb.db", embedder=None) as kb:
        kb.index_batch(
            cef.Batch.model_validate(
                {
                    "relation_types": [{"name": "TREATS", "description": "a drug treats a condition"}],
                    "nodes": [
                        {"id": "c1", "label": "Condition", "properties": {"name": "Gout", key: value}},
                        {"id": "m1", "label": "Drug", "properties": {"name": "Colchicine"}},
                    ],
                    "edges": [{"relation_type": "TREATS", "source": "m1", "target": "c1"}],
                    "chunks": [
                        {"id": "k1", "node_id": "c1", "content": "Gout is a form of arthritis of the joints."}
                    ],
                }
            )
        )
        written = key[:-2] + "-" + key[-2:] if key[-2].isdigit() else key[:-1] + "-" + key[-1:]
        assert not nothing_matched(kb, f"What is the {written.upper()} code for gout?")
        assert nothing_matched(kb, "What is the postal code for gout?")
