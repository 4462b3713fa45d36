"""schemathesis over the OpenAPI schema: no 5xx, documented status codes and content
types, and every JSON response matches its schema. Bounded so that it runs in seconds.

Under CI=true schemathesis must be installed: the import is not skipped there.

Positive-data acceptance is not checked: a schema cannot say that groups must divide
C, so valid-looking configs may rightly get a 422.
"""

from __future__ import annotations

import os

import pytest

if os.environ.get("CI") == "true":
    import schemathesis
else:
    schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402
from live_server import ONE_ADDRESS_CROWD  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.checks import allow_header_conformance, unsupported_method  # noqa: E402
from strategies import examples

from convscope.app import create_app  # noqa: E402
from convscope.settings import Settings  # noqa: E402

APP = create_app(Settings(max_tensor_elements=512, max_events=2000, **ONE_ADDRESS_CROWD))  # (one fuzzer, many requests)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)

# unsupported_method: a method the schema does not list gets 405 with Allow (ST205);
# allow_header_conformance: OPTIONS lists exactly the documented methods
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    unsupported_method,
    allow_header_conformance,
]


@schema.parametrize()
@settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case):
    case.call_and_validate(checks=CHECKS)
