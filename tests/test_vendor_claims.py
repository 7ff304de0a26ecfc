"""What ``toolc formats`` claims as a vendor-parser proof is what tests/test_vendor_parsers.py
checks: every registered format whose pairing says "vendor parser" has a case there, against
vLLM's or SGLang's own parser (tests/vendor_cases.py). Runs without the vendors' packages."""

from __future__ import annotations

import pytest

from toolc.formats import FORMATS
from toolc.pairing import PAIRINGS, VENDOR_PARSER

from vendor_cases import FORMS, SGLANG, VLLM

PROVED = {FORMS[c][0] for c in (*VLLM, *SGLANG)}


@pytest.mark.parametrize("fmt", sorted(f for f in FORMATS if PAIRINGS[f].proof == VENDOR_PARSER))
def test_a_vendor_parser_claim_has_a_vendor_parser_test(fmt):
    assert fmt in PROVED, f"{fmt} claims a vendor-parser proof; add its case to vendor_cases.py"


def test_every_case_names_a_registered_format_and_a_parser():
    assert {FORMS[c][0] for c in FORMS} <= set(FORMATS)
    assert set(VLLM) | set(SGLANG) == set(FORMS)
    assert all(VLLM.get(c, ()) or SGLANG.get(c, ()) for c in FORMS)
