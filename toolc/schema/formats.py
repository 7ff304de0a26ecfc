"""``format`` values as anchored regular expressions (interegular syntax), each a subset of what
the named RFC allows, so whatever toolc accepts is a valid instance.

* ``date`` (RFC 3339 full-date): day ranges per month, 29 February only in leap years,
  year 0000 excluded (Python's ``date`` has no year 0).
* ``time``, ``date-time`` (RFC 3339): ``T``/``t`` and ``Z``/``z`` (RFC 3339 section 5.6 allows
  either case), seconds 00-59, an optional fraction, and ``Z`` or a ``+hh:mm``/``-hh:mm``
  offset. Leap seconds (second 60) only with the ``leap_seconds`` option
  (``--leap-seconds``), exactly as RFC 3339 and the JSON-Schema-Test-Suite have them: where
  the time adjusted to UTC by its offset is 23:59:60 (:func:`leap_seconds`). That set costs
  11,007 states per field against the 19 of ``time`` without it, and jsonschema's format
  checker (rfc3339-validator), Python's ``datetime`` and pydantic all reject it, so by
  default it is left out, a narrowing the header's notices repeat for each such field
  (:data:`NO_LEAP_SECOND_WHY`).
* ``duration`` (RFC 3339 appendix A): ``P`` with weeks, or years/months/days and a ``T``
  part with hours/minutes/seconds, each unit in order and the ones written contiguous.
* ``email`` (RFC 5321 mailbox): a dot-atom or a quoted-string local part (``"john doe"``,
  printable ASCII with ``\\`` pairs) ``@`` a hostname or an address literal (``[192.0.2.1]``,
  ``[IPv6:2001:db8::1]``).
* ``uuid`` (RFC 4122): 8-4-4-4-12 hex digits; ``uuid1``/``uuid3``/``uuid4``/``uuid5``
  (pydantic's ``UUID1``...): that version digit and the RFC 4122 variant (``8``-``b``).
* ``ipv4``: four decimal octets 0-255 without leading zeros.
* ``ipv6`` (RFC 4291): eight groups, or fewer around one ``::``, optionally ending in an IPv4
  address; no zone id.
* pydantic's ``ipvanyaddress`` (either address), ``ipv4interface``, ``ipv6interface`` and
  ``ipvanyinterface`` (an address with an optional ``/prefix`` of 0-32 or 0-128).
* pydantic's ``base64`` and ``base64url``: padded RFC 4648 base64 (``+/`` or ``-_``), as
  Python's ``base64`` module writes it.
* ``uri-reference`` (RFC 3986): a ``uri`` as above, or a relative reference built of the same
  parts (a first segment without ``:``).
* ``json-pointer`` (RFC 6901): ``/``-separated tokens, ``~`` only as ``~0`` or ``~1``.
* ``hostname`` (RFC 1123): dot-separated labels of 1-63 letters, digits and inner hyphens.
* ``uri`` (RFC 3986): scheme ``:`` then an authority path or a plain path, a query and a
  fragment, with percent-escapes; IP-literal hosts (``[...]``) are left out.
"""

from __future__ import annotations

import functools

_D = "[0-9]"
_YEAR = f"(?:000[1-9]|00[1-9]{_D}|0[1-9]{_D}{_D}|[1-9]{_D}{{3}})"
_MONTH_DAY = ("(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
              "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
              "|02-(?:0[1-9]|1[0-9]|2[0-8]))")
_LEAP_YEAR = (f"(?:{_D}{_D}(?:0[48]|[2468][048]|[13579][26])"
              "|(?:0[48]|[2468][048]|[13579][26])00)")
DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_OFFSET = "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
TIME = f"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.{_D}+)?{_OFFSET}"
DATE_TIME = f"{DATE}[Tt]{TIME}"

_N = f"{_D}+"
_DUR_TIME = f"T(?:{_N}H(?:{_N}M(?:{_N}S)?)?|{_N}M(?:{_N}S)?|{_N}S)"
_DUR_DATE = f"(?:{_N}Y(?:{_N}M(?:{_N}D)?)?|{_N}M(?:{_N}D)?|{_N}D)"
DURATION = f"P(?:{_N}W|{_DUR_DATE}(?:{_DUR_TIME})?|{_DUR_TIME})"

_HEX = "[0-9a-fA-F]"
UUID = f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"


def _uuid(version: int) -> str:
    return f"{_HEX}{{8}}-{_HEX}{{4}}-{version}{_HEX}{{3}}-[89abAB]{_HEX}{{3}}-{_HEX}{{12}}"


_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"


def _ipv6() -> str:
    h = f"{_HEX}{{1,4}}"
    forms = [f"(?:{h}:){{7}}{h}", f"(?:{h}:){{6}}{IPV4}"]
    for left in range(0, 8):
        lpart = "" if left == 0 else f"(?:{h}:){{{left - 1}}}{h}"
        room = 7 - left          # groups the right side may hold, '::' standing for >= 1
        rights = [""] + [f"(?:{h}:){{{r - 1}}}{h}" for r in range(1, room + 1)]
        rights += [f"(?:{h}:){{{r}}}{IPV4}" for r in range(0, room - 1)]
        forms.append(f"{lpart}::(?:{'|'.join(rights)})")
    return "(?:" + "|".join(forms) + ")"


IPV6 = _ipv6()
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
HOSTNAME = f"{_LABEL}(?:\\.{_LABEL})*"
_ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_QUOTED_LOCAL = '"(?:[ !#-\\[\\]-~]|\\\\[ -~])*"'
_ADDRESS_LITERAL = f"\\[(?:{IPV4}|IPv6:{IPV6})\\]"
EMAIL = f"(?:{_ATEXT}+(?:\\.{_ATEXT}+)*|{_QUOTED_LOCAL})@(?:{HOSTNAME}|{_ADDRESS_LITERAL})"
_B64 = "(?:[A-Za-z0-9{0}]{{4}})*(?:[A-Za-z0-9{0}]{{2}}==|[A-Za-z0-9{0}]{{3}}=)?"

_PCT = f"%{_HEX}{_HEX}"
_UNRESERVED_SUB = "[A-Za-z0-9._~!$&'()*+,;=-]"
_PCHAR = f"(?:{_UNRESERVED_SUB}|[:@]|{_PCT})"
_SEGMENT_NZ = f"{_PCHAR}+"
_AUTHORITY = (f"(?:(?:{_UNRESERVED_SUB}|:|{_PCT})*@)?(?:{_UNRESERVED_SUB}|{_PCT})*"
              f"(?::{_D}*)?")
_HIER = (f"(?://{_AUTHORITY}(?:/{_PCHAR}*)*"
         f"|/(?:{_SEGMENT_NZ}(?:/{_PCHAR}*)*)?"
         f"|{_SEGMENT_NZ}(?:/{_PCHAR}*)*"
         "|)")
_QUERY = f"(?:{_PCHAR}|[/?])*"
URI = f"[A-Za-z][A-Za-z0-9+.-]*:{_HIER}(?:\\?{_QUERY})?(?:#{_QUERY})?"
_SEGMENT_NZ_NC = f"(?:{_UNRESERVED_SUB}|@|{_PCT})+"       # a first segment without ':'
_RELATIVE_REF = (f"(?://{_AUTHORITY}(?:/{_PCHAR}*)*"
                 f"|/(?:{_SEGMENT_NZ}(?:/{_PCHAR}*)*)?"
                 f"|{_SEGMENT_NZ_NC}(?:/{_PCHAR}*)*"
                 f"|)(?:\\?{_QUERY})?(?:#{_QUERY})?")
URI_REFERENCE = f"{URI}|{_RELATIVE_REF}"
JSON_POINTER = "(?:/(?:[^~/]|~[01])*)*"

_IPV4_IF = f"{IPV4}(?:/(?:3[0-2]|[12]?[0-9]))?"
_IPV6_IF = f"{IPV6}(?:/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9]))?"

# every pattern is anchored at both ends
FORMATS = {name: f"^(?:{rx})$" for name, rx in {
    "date": DATE, "time": TIME, "date-time": DATE_TIME, "duration": DURATION,
    "email": EMAIL, "uuid": UUID, "ipv4": IPV4, "ipv6": IPV6, "hostname": HOSTNAME,
    "uri": URI, "uri-reference": URI_REFERENCE, "json-pointer": JSON_POINTER,
    # pydantic's names (pydantic.networks, pydantic.types), read as pydantic validates them
    "uuid1": _uuid(1), "uuid3": _uuid(3), "uuid4": _uuid(4), "uuid5": _uuid(5),
    "ipvanyaddress": f"{IPV4}|{IPV6}", "ipv4interface": _IPV4_IF, "ipv6interface": _IPV6_IF,
    "ipvanyinterface": f"{_IPV4_IF}|{_IPV6_IF}",
    "base64": _B64.format("+/"), "base64url": _B64.format("_-"),
}.items()}

#: the formats that have leap seconds (:func:`leap_seconds`: an Expr, not a regex), left out
#: unless asked for (a narrower language, said in the header's notices)
LEAP_SECOND_FORMATS = frozenset({"date-time", "time"})


def _hh_mm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


@functools.lru_cache(maxsize=None)
def leap_seconds(format: str):
    """The leap-second times of ``format`` (``time``, or ``date-time`` with its date): RFC 3339
    section 5.7 allows second 60 where the time, adjusted to UTC by its offset, is 23:59:60.
    For a local ``hh:mm`` of ``L`` minutes the offsets that put it at 23:59 UTC are ``+``
    (L + 1 minute) and ``-`` (23:59 - L), modulo a day; ``23:59`` also takes ``Z``/``z``.
    So the language is, for each of the 1,440 local minutes, ``hh:mm:60``, an optional
    fraction and one of its two (three) offsets. Its minimal DFA has 11,007 states, and no
    exact automaton has fewer than 10,080: after ``hh:mm``, ``hh:mm:``, ``hh:mm:6``,
    ``hh:mm:60``, ``hh:mm:60.``, the fraction's digits, and a sign, what may follow differs
    for each of the 1,440 local minutes (Myhill-Nerode; a ``+`` state of one minute and a
    ``-`` state of another may merge). The cost is per field: the DFA must also remember
    which field it is in, so fields cannot share one copy."""
    from ..fsm import Bytes, alt, byte_range, byte_set, lit, opt, plus, seq
    digits = plus(Bytes(byte_range(0x30, 0x39)))
    frac = opt(seq(lit("."), digits))
    zulu = Bytes(byte_set("Zz"))
    times = []
    for local in range(1440):
        offsets = [lit("+" + _hh_mm((local + 1) % 1440)), lit("-" + _hh_mm(1439 - local))]
        if local == 1439:
            offsets.append(zulu)
        times.append(seq(lit(_hh_mm(local) + ":60"), frac, alt(*offsets)))
    out = alt(*times)
    if format == "date-time":
        from .strings import pattern_expr
        out = seq(pattern_expr(f"^(?:{DATE}[Tt])$", "/format"), out)
    return out


NO_LEAP_SECOND_WHY = ("written without leap seconds (second 60): RFC 3339 allows 23:59:60 UTC, "
                      "but jsonschema's checker, Python's datetime and pydantic reject it "
                      "(leap_seconds=True / --leap-seconds admits them exactly)")

#: formats that say how a string is used, not what it holds (pydantic's ``SecretStr``,
#: ``bytes``, ``Path`` types): any string is one, so they constrain nothing
PLAIN_STRING_FORMATS = frozenset({"password", "binary", "path", "file-path",
                                  "directory-path", "new-path", "socket-path"})


def read_format(name) -> str:
    """How toolc reads a ``format`` value: ``"enforced"`` (a pattern in :data:`FORMATS`),
    ``"plain"`` (any string, :data:`PLAIN_STRING_FORMATS`) or ``"unknown"`` (an annotation,
    as 2020-12 makes unknown formats; listed in the header's ``not_enforced``)."""
    if not isinstance(name, str):
        return "unknown"
    if name in FORMATS:
        return "enforced"
    return "plain" if name in PLAIN_STRING_FORMATS else "unknown"
