"""``format`` values as anchored regular expressions (interegular syntax), each a subset of what
the named RFC allows, so whatever toolc accepts is a valid instance.

* ``date`` (RFC 3339 full-date): day ranges per month, 29 February only in leap years,
  year 0000 excluded (Python's ``date`` has no year 0).
* ``time``, ``date-time`` (RFC 3339): upper-case ``T`` and ``Z``, seconds 00-59 (no leap
  second), an optional fraction, and ``Z`` or a ``+hh:mm``/``-hh:mm`` offset.
* ``duration`` (RFC 3339 appendix A): ``P`` with weeks, or years/months/days and a ``T``
  part with hours/minutes/seconds, each unit in order and the ones written contiguous.
* ``email``: a dot-atom local part (RFC 5322) ``@`` a hostname.
* ``uuid`` (RFC 4122): 8-4-4-4-12 hex digits.
* ``ipv4``: four decimal octets 0-255 without leading zeros.
* ``ipv6`` (RFC 4291): eight groups, or fewer around one ``::``, optionally ending in an IPv4
  address; no zone id.
* ``hostname`` (RFC 1123): dot-separated labels of 1-63 letters, digits and inner hyphens.
* ``uri`` (RFC 3986): scheme ``:`` then an authority path or a plain path, a query and a
  fragment, with percent-escapes; IP-literal hosts (``[...]``) are left out.
"""

from __future__ import annotations

_D = "[0-9]"
_YEAR = f"(?:000[1-9]|00[1-9]{_D}|0[1-9]{_D}{_D}|[1-9]{_D}{{3}})"
_MONTH_DAY = ("(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
              "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
              "|02-(?:0[1-9]|1[0-9]|2[0-8]))")
_LEAP_YEAR = (f"(?:{_D}{_D}(?:0[48]|[2468][048]|[13579][26])"
              "|(?:0[48]|[2468][048]|[13579][26])00)")
DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_OFFSET = "(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
TIME = f"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.{_D}+)?{_OFFSET}"
DATE_TIME = f"{DATE}T{TIME}"

_N = f"{_D}+"
_DUR_TIME = f"T(?:{_N}H(?:{_N}M(?:{_N}S)?)?|{_N}M(?:{_N}S)?|{_N}S)"
_DUR_DATE = f"(?:{_N}Y(?:{_N}M(?:{_N}D)?)?|{_N}M(?:{_N}D)?|{_N}D)"
DURATION = f"P(?:{_N}W|{_DUR_DATE}(?:{_DUR_TIME})?|{_DUR_TIME})"

_HEX = "[0-9a-fA-F]"
UUID = f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"

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
EMAIL = f"{_ATEXT}+(?:\\.{_ATEXT}+)*@{HOSTNAME}"

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

# every pattern is anchored at both ends
FORMATS = {name: f"^(?:{rx})$" for name, rx in {
    "date": DATE, "time": TIME, "date-time": DATE_TIME, "duration": DURATION,
    "email": EMAIL, "uuid": UUID, "ipv4": IPV4, "ipv6": IPV6, "hostname": HOSTNAME,
    "uri": URI,
}.items()}
