"""toolc/schema/formats.py: every enforced format is sound (random strings from its automaton
pass jsonschema's format checker and, for pydantic's names, pydantic itself) and complete on
real values (lower-case t/z, quoted local parts, address literals, uuid4, base64 ...);
plain-string formats admit any string; unknown formats are annotations, recorded."""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import uuid

import jsonschema
import pytest

from schema_cases import ByteLang
from toolc.schema.formats import FORMATS, PLAIN_STRING_FORMATS, read_format
from toolc.schema.vocabulary import prepare

pydantic = pytest.importorskip("pydantic")

CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER


def _pydantic_types() -> dict:
    from datetime import date, datetime

    from pydantic import (UUID1, UUID3, UUID4, UUID5, Base64Bytes, Base64UrlBytes,
                          IPvAnyAddress, IPvAnyInterface)
    return {"uuid1": UUID1, "uuid3": UUID3, "uuid4": UUID4, "uuid5": UUID5,
            "ipvanyaddress": IPvAnyAddress, "ipvanyinterface": IPvAnyInterface,
            "ipv4interface": ipaddress.IPv4Interface, "ipv6interface": ipaddress.IPv6Interface,
            "base64": Base64Bytes, "base64url": Base64UrlBytes, "date-time": datetime,
            "date": date, "uuid": uuid.UUID}


_LANGS: dict = {}


def lang(fmt: str) -> ByteLang:
    if fmt not in _LANGS:
        _LANGS[fmt] = ByteLang({"type": "string", "format": fmt})
    return _LANGS[fmt]


def valid(fmt: str, value: str) -> bool:
    if not CHECKER.conforms(value, fmt):
        return False
    kind = _pydantic_types().get(fmt)
    if kind is None:
        return True
    try:
        pydantic.TypeAdapter(kind).validate_python(value)
    except pydantic.ValidationError:
        return False
    return True


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_random_strings_of_every_format_validate(fmt):
    rng = random.Random(fmt)
    bl = lang(fmt)
    for _ in range(150):
        value = json.loads(bl.walk(rng, budget=rng.choice([5, 20, 60])))
        assert valid(fmt, value), (fmt, value)


def _examples() -> list[tuple[str, str]]:
    rng = random.Random(7)
    out = [("date-time", "2024-02-29t12:30:00z"), ("date-time", "2024-02-29T12:30:00.5+05:30"),
           ("time", "23:59:59z"),
           ("email", '"john doe"@example.com'), ("email", '"a\\"b"@example.com'),
           ("email", "user@[192.0.2.1]"), ("email", "user@[IPv6:2001:db8::1]"),
           ("email", "first.last+tag@sub.example.org"),
           ("ipvanyaddress", "10.0.0.1"), ("ipvanyaddress", "::1"),
           ("ipvanyinterface", "10.0.0.1/24"), ("ipvanyinterface", "2001:db8::1/64"),
           ("ipv4interface", "192.168.0.1"), ("ipv6interface", "fe80::1/128"),
           ("uri-reference", "../a/b?c#d"), ("uri-reference", "//host:8/p"),
           ("uri-reference", ""), ("uri-reference", "https://x.org/"),
           ("json-pointer", ""), ("json-pointer", "/a~1b/0/~0/é")]
    for _ in range(20):
        out.append(("uuid4", str(uuid.uuid4())))
        out.append(("uuid1", str(uuid.uuid1())))
        out.append(("uuid", str(uuid.uuid4()).upper()))
        raw = rng.randbytes(rng.randrange(0, 12))
        out.append(("base64", base64.b64encode(raw).decode()))
        out.append(("base64url", base64.urlsafe_b64encode(raw).decode()))
    out += [("uuid3", str(uuid.uuid3(uuid.NAMESPACE_DNS, "x"))),
            ("uuid5", str(uuid.uuid5(uuid.NAMESPACE_DNS, "x")))]
    return out


@pytest.mark.parametrize("fmt, value", _examples())
def test_real_values_are_accepted(fmt, value):
    assert CHECKER.conforms(value, fmt) or fmt == "email"
    assert lang(fmt).accepts(json.dumps(value, ensure_ascii=False)), (fmt, value)


@pytest.mark.parametrize("fmt, value", [
    ("uuid4", str(uuid.uuid1())), ("uuid4", "123e4567-e89b-42d3-c456-426614174000"),
    ("base64", "YWI"), ("base64", "YW-="), ("base64url", "YW+="),
    ("ipvanyinterface", "10.0.0.1/33"), ("ipvanyaddress", "10.0.0.256"),
    ("date-time", "2016-12-31T23:59:60Z"),     # leap second: see the module docstring
    ("email", '"unclosed@example.com'), ("email", "user@[300.0.0.1]"),
    ("json-pointer", "a/b"), ("json-pointer", "/a~2"), ("uri-reference", "a b"),
    ("uri-reference", "a:b/c d"),
])
def test_invalid_values_are_rejected(fmt, value):
    assert not lang(fmt).accepts(json.dumps(value))


@pytest.mark.parametrize("fmt, value", [("date-time", "1998-12-31T23:59:60Z"),
                                        ("date-time", "1998-12-31T15:59:60.123-08:00"),
                                        ("time", "23:59:60Z"), ("time", "01:29:60+01:30")])
def test_leap_seconds_are_a_documented_exclusion_the_header_repeats(fmt, value):
    """The suite calls these valid; toolc leaves them out (jsonschema's checker, datetime and
    pydantic refuse them; the exact set costs about 11,000 states) and says so per field."""
    assert not lang(fmt).accepts(json.dumps(value))
    ready = prepare({"type": "object", "properties": {"at": {"type": "string",
                                                              "format": fmt}}})
    assert [(n["pointer"], n["keyword"]) for n in ready.notices] == [
        ("/properties/at/format", "format")]
    assert "leap seconds" in ready.notices[0]["message"]


@pytest.mark.parametrize("fmt", sorted(PLAIN_STRING_FORMATS))
def test_plain_string_formats_admit_any_string(fmt):
    ready = prepare({"type": "string", "format": fmt})
    assert ready.schema == {"type": "string"} and ready.dropped == []
    assert "any string" in ready.notices[0]["message"]
    assert read_format(fmt) == "plain"


@pytest.mark.parametrize("fmt", ["color", "iri", "regex", "ipvanynetwork", "phone"])
def test_unknown_formats_are_annotations_recorded(fmt):
    ready = prepare({"type": "object", "properties": {"x": {"type": "string", "format": fmt}}})
    assert ready.schema["properties"]["x"] == {"type": "string"}
    assert [(d["pointer"], d["keyword"]) for d in ready.dropped] == [("/properties/x/format",
                                                                      "format")]
    assert repr(fmt) in ready.dropped[0]["why"]
