"""toolc/schema/formats.py: every enforced format is sound (random strings from its automaton
pass jsonschema's format checker and, for pydantic's names, pydantic itself) and complete on
real values (lower-case t/z, quoted local parts, address literals, uuid4, base64 ...);
plain-string formats admit any string; unknown formats are annotations, recorded. Leap
seconds (``leap_seconds=True``) are checked against an RFC 3339 reference written here:
jsonschema's checker, datetime and pydantic all reject second 60, so they cannot judge them."""

from __future__ import annotations

import base64
import ipaddress
import json
import random
import re
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


def lang(fmt: str, leap_seconds: bool = False) -> ByteLang:
    if (fmt, leap_seconds) not in _LANGS:
        _LANGS[fmt, leap_seconds] = ByteLang({"type": "string", "format": fmt},
                                             leap_seconds=leap_seconds)
    return _LANGS[fmt, leap_seconds]


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
    for _ in range(20):     # from the seeded generator: the same test ids in every process
        out.append(("uuid4", str(uuid.UUID(int=rng.getrandbits(128), version=4))))
        out.append(("uuid1", str(uuid.UUID(int=rng.getrandbits(128), version=1))))
        out.append(("uuid", str(uuid.UUID(int=rng.getrandbits(128), version=4)).upper()))
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
    ("uuid4", str(uuid.UUID(int=0x5EED, version=1))),
    ("uuid4", "123e4567-e89b-42d3-c456-426614174000"),
    ("base64", "YWI"), ("base64", "YW-="), ("base64url", "YW+="),
    ("ipvanyinterface", "10.0.0.1/33"), ("ipvanyaddress", "10.0.0.256"),
    ("date-time", "2016-12-31T23:59:60Z"),     # leap second: see the module docstring
    ("email", '"unclosed@example.com'), ("email", "user@[300.0.0.1]"),
    ("json-pointer", "a/b"), ("json-pointer", "/a~2"), ("uri-reference", "a b"),
    ("uri-reference", "a:b/c d"),
])
def test_invalid_values_are_rejected(fmt, value):
    assert not lang(fmt).accepts(json.dumps(value))


LEAP_EXAMPLES = [("date-time", "1998-12-31T23:59:60Z"),
                 ("date-time", "1998-12-31T15:59:60.123-08:00"),
                 ("time", "23:59:60Z"), ("time", "23:59:60z"), ("time", "01:29:60+01:30"),
                 ("time", "23:59:60-00:00"), ("time", "00:29:60-23:30")]


@pytest.mark.parametrize("fmt, value", LEAP_EXAMPLES)
def test_leap_seconds_are_left_out_by_default_and_the_header_says_so(fmt, value):
    """The suite calls these valid; by default toolc leaves them out (jsonschema's checker,
    datetime and pydantic refuse them; the exact set costs 11,007 states a field) and says so
    per field; ``leap_seconds=True`` admits them, and the notice goes."""
    assert not lang(fmt).accepts(json.dumps(value))
    assert lang(fmt, leap_seconds=True).accepts(json.dumps(value))
    schema = {"type": "object", "properties": {"at": {"type": "string", "format": fmt}}}
    ready = prepare(schema)
    assert [(n["pointer"], n["keyword"]) for n in ready.notices] == [
        ("/properties/at/format", "format")]
    assert "leap seconds" in ready.notices[0]["message"]
    assert prepare(schema, leap_seconds=True).notices == []


# RFC 3339 section 5.6, written out: partial-time, time-offset, and section 5.7's rule that
# second 60 is a leap second only where the time adjusted to UTC is 23:59:60
_RFC3339_TIME = re.compile(r"(\d\d):(\d\d):(\d\d)(?:\.\d+)?([Zz]|([+-])(\d\d):(\d\d))")
_RFC3339_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt]")


def rfc3339_time(text: str) -> bool:
    m = _RFC3339_TIME.fullmatch(text)
    if m is None:
        return False
    hh, mm, ss = int(m[1]), int(m[2]), int(m[3])
    if hh > 23 or mm > 59 or ss > 60:
        return False
    offset = 0
    if m[5]:
        oh, om = int(m[6]), int(m[7])
        if oh > 23 or om > 59:
            return False
        offset = (oh * 60 + om) * (1 if m[5] == "+" else -1)
    return ss < 60 or (hh * 60 + mm - offset) % 1440 == 23 * 60 + 59


def rfc3339_date_time(text: str) -> bool:
    from datetime import date
    m = _RFC3339_DATE.match(text)
    if m is None:
        return False
    try:
        date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return rfc3339_time(text[m.end():])


RFC3339 = {"time": rfc3339_time, "date-time": rfc3339_date_time}


def test_the_reference_agrees_with_jsonschema_off_second_60():
    rng = random.Random(3)
    for _ in range(300):
        text = (f"{rng.randrange(30):02d}:{rng.randrange(70):02d}:{rng.randrange(70):02d}"
                + rng.choice(["Z", "z", "", ".5Z", f"+{rng.randrange(30):02d}:"
                              f"{rng.randrange(70):02d}", "-00:00"]))
        if ":60" not in text[5:8]:
            assert rfc3339_time(text) == CHECKER.conforms(text, "time"), text
    assert not CHECKER.conforms("23:59:60Z", "time") and rfc3339_time("23:59:60Z")


@pytest.mark.parametrize("fmt", sorted(RFC3339))
def test_leap_second_languages_are_sound_against_the_rfc(fmt):
    """Random strings of the language with leap seconds, steered into second 60 half the
    time, are valid by the reference."""
    rng = random.Random(fmt)
    bl = lang(fmt, leap_seconds=True)
    leaps = 0
    for _ in range(400):
        value = json.loads(bl.walk(rng, budget=rng.choice([12, 25, 40])))
        assert RFC3339[fmt](value), (fmt, value)
        leaps += ":60" in value[-15:] and not CHECKER.conforms(value, fmt)
    assert leaps > 0        # the walks did reach leap seconds


def _hh_mm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def test_every_leap_second_is_accepted_and_no_other_second_60():
    """All 1,440 local minutes with each of the 2,880 offsets (and Z): exactly the pairs that
    are 23:59 UTC are accepted."""
    bl = lang("time", leap_seconds=True)
    offsets = ["Z", "z"] + [f"{s}{_hh_mm(m)}" for s in "+-" for m in range(1440)]
    rng = random.Random(5)
    for local in range(1440):
        picks = offsets if local % 97 == 0 or local == 1439 else rng.sample(offsets, 40) + [
            f"+{_hh_mm((local + 1) % 1440)}", f"-{_hh_mm(1439 - local)}"]
        for off in picks:
            text = f"{_hh_mm(local)}:60{rng.choice(['', '.0', '.123'])}{off}"
            assert bl.accepts(json.dumps(text)) == rfc3339_time(text), text


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
