"""The JSON-Schema-Test-Suite (draft 2020-12) against toolc's argument automata.

The suite ships inside the ``jsonschema`` source distribution; the first run downloads it with
pip into a cache directory (``$TOOLC_TEST_CACHE``, else ``~/.cache/toolc-tests``) and skips,
saying why, when it cannot. Each group's schema is compiled alone (compact whitespace) and each
instance written compactly, numbers in their canonical spelling (``1.0`` as ``1``):

* a group toolc refuses is fine (exact or refused), provided the refusal is a toolc error;
* every group toolc compiles is sound: an instance it accepts is valid;
* and complete (a valid instance is accepted) unless docs/json-schema.md lists the group
  among the exclusions, with the reason (the closed-object ones apply to
  ``--additional-properties closed`` only: the test runs both modes); a listed group that
  is in fact complete fails the test, so the list never goes stale.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from toolc.errors import ToolcError
from toolc.fsm import compile_expr
from toolc.schema import SchemaCompiler, SchemaOptions
from toolc.schema.strings import expanded_lengths
from toolc.schema.uris import localized

VERSION = "4.26.0"
ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "json-schema.md"
SUITE_FILES = [
    "additionalProperties", "allOf", "anyOf", "boolean_schema", "const", "contains",
    "default", "dependentRequired", "dependentSchemas", "enum", "exclusiveMaximum",
    "exclusiveMinimum", "format", "if-then-else", "items", "maxContains", "maxItems",
    "maxLength", "maxProperties", "maximum", "minContains", "minItems", "minLength",
    "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern", "patternProperties",
    "prefixItems", "properties", "propertyNames", "required", "type", "uniqueItems",
    # references: in-document ones resolved, remote ones and $dynamicRef refused
    "ref", "anchor", "defs", "content", "infinite-loop-detection", "refRemote", "dynamicRef",
    # 2019-09/2020-12 annotation-dependent keywords
    "unevaluatedItems", "unevaluatedProperties",
]


def fetch_suite(draft: str = "draft2020-12") -> Path:
    """The suite's directory for one draft (``draft2020-12``, ``draft7``, ...), fetched on
    first use; skips, saying why, when it cannot be fetched."""
    cache = Path(os.environ.get("TOOLC_TEST_CACHE", Path.home() / ".cache" / "toolc-tests"))
    name = f"json-schema-test-suite-{VERSION}"
    target = cache / (name if draft == "draft2020-12" else f"{name}-{draft}")
    if (target / "oneOf.json").exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    sdist = cache / f"jsonschema-{VERSION}.tar.gz"
    if not sdist.exists():
        got = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary",
                              ":all:", "--no-deps", f"jsonschema=={VERSION}", "-d", str(cache)],
                             capture_output=True, text=True, timeout=300)
        if got.returncode != 0 or not sdist.exists():
            pytest.skip(f"cannot fetch the JSON-Schema-Test-Suite (jsonschema=={VERSION} "
                        f"sdist): {(got.stderr or got.stdout).strip()[-200:]}")
    prefix = f"jsonschema-{VERSION}/json/tests/{draft}/"
    tmp = cache / f"suite-{draft}-{os.getpid()}"
    tmp.mkdir(exist_ok=True)
    with tarfile.open(sdist) as tar:
        for m in tar.getmembers():
            if m.isfile() and m.name.startswith(prefix) and "/" not in m.name[len(prefix):]:
                (tmp / m.name[len(prefix):]).write_bytes(tar.extractfile(m).read())
    try:
        tmp.rename(target)
    except OSError:         # another run got there first
        pass
    return target


@pytest.fixture(scope="module")
def suite_dir() -> Path:
    return fetch_suite()


def exclusions() -> dict[tuple[str, str], str]:
    """(file, group) -> reason, from the exclusions table of docs/json-schema.md (a file of
    an older draft is named with its directory: ``draft7/dependencies``)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- suite-exclusions -->")
    end = text.index("<!-- /suite-exclusions -->")
    out = {}
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].endswith(".json") and cells[0] != "file":
            out[(cells[0][:-len(".json")], cells[1].replace("\\|", "|"))] = cells[2]
    return out


def canonical(v):
    """Integral floats as integers: how a model writes the value ``1.0``."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        return int(v)
    if isinstance(v, list):
        return [canonical(x) for x in v]
    if isinstance(v, dict):
        return {k: canonical(x) for k, x in v.items()}
    return v


def compiled(schema, mode: str = "closed"):
    """The schema's DFA (compiled alone, as any subschema is, its references through ``$id``
    and anchors first written as pointers), or the toolc error."""
    sc = SchemaCompiler(SchemaOptions(whitespace="compact", additional_properties=mode))
    schema = sc.root = localized(schema)
    try:
        with expanded_lengths():       # lengths as states: counters are the runtime's
            return compile_expr(sc._schema(schema, ""))
    except ToolcError as e:
        return e


def accepts(dfa, value) -> bool:
    text = json.dumps(canonical(value), ensure_ascii=False, separators=(",", ":")).encode()
    q = dfa.step_bytes(0, text)
    return q >= 0 and bool(dfa.final[q])


def test_exclusions_are_listed_with_reasons():
    ex = exclusions()
    assert ex and all(reason for reason in ex.values())
    assert {f for f, _ in ex if "/" not in f} <= set(SUITE_FILES)


@pytest.mark.parametrize("mode", ["closed", "schema"])
@pytest.mark.parametrize("name", SUITE_FILES)
def test_suite_file(suite_dir, name, mode):
    """Both --additional-properties modes; the exclusions for closed objects hold in closed
    mode only."""
    groups = json.loads((suite_dir / f"{name}.json").read_text(encoding="utf-8"))
    ex = {k: why for k, why in exclusions().items()
          if mode == "closed" or "closed by default" not in why}
    problems = []
    for g in groups:
        dfa = compiled(g["schema"], mode)
        if isinstance(dfa, ToolcError):
            continue        # refused, with a toolc error: exact or refused
        narrow = []
        for t in g["tests"]:
            ok = accepts(dfa, t["data"])
            if ok and not t["valid"]:
                problems.append(f"UNSOUND {g['description']!r}: {t['description']!r} accepted")
            if t["valid"] and not ok:
                narrow.append(t["description"])
        key = (name, g["description"])
        if narrow and key not in ex:
            problems.append(f"{g['description']!r}: valid {narrow} rejected (fix it, or list "
                            "the group among the exclusions in docs/json-schema.md)")
        if not narrow and key in ex:
            problems.append(f"{g['description']!r} is listed as an exclusion but gets every "
                            "label right: remove it from the list")
    assert not problems, "\n".join(problems)


def optional_format_groups(fmt: str, draft: str = "draft2020-12") -> list:
    """The groups of the suite's ``optional/format/<fmt>.json`` (read from the sdist)."""
    fetch_suite(draft)
    cache = Path(os.environ.get("TOOLC_TEST_CACHE", Path.home() / ".cache" / "toolc-tests"))
    sdist = cache / f"jsonschema-{VERSION}.tar.gz"
    if not sdist.exists():
        pytest.skip(f"the jsonschema=={VERSION} sdist is not in {cache}")
    with tarfile.open(sdist) as tar:
        member = tar.extractfile(f"jsonschema-{VERSION}/json/tests/{draft}/optional/format/"
                                 f"{fmt}.json")
        return json.loads(member.read())


@pytest.mark.parametrize("draft", ["draft2020-12", "draft2019-09", "draft7"])
@pytest.mark.parametrize("fmt", ["time", "date-time"])
def test_optional_format_times_get_every_label_right_with_leap_seconds(fmt, draft):
    """With ``leap_seconds`` every label of the suite's time and date-time tests is right;
    without, the one difference is the valid leap seconds, rejected (a narrowing)."""
    for g in optional_format_groups(fmt, draft):
        for leap in (True, False):
            sc = SchemaCompiler(SchemaOptions(whitespace="compact", leap_seconds=leap))
            sc.root = g["schema"]
            dfa = compile_expr(sc._schema(g["schema"], ""))
            for t in g["tests"]:
                want = t["valid"] and (leap or ":60" not in str(t["data"]))
                assert accepts(dfa, t["data"]) == want, (leap, t["description"], t["data"])
