"""What loading an artifact may cost, checked before anything is allocated (numpy only).

A checksum proves that a file was not damaged in transit, not that it was written by toolc:
a forged artifact with a correct sha256 can declare 50,000 transition classes over one empty
mask row in 71 KB. So the loader prices every table it is about to build from the sizes the
file declares, and refuses the file (:class:`ArtifactError`) when the price exceeds a budget
set by the file's own size:

* the inflated body is at most ``MAX_INFLATION`` times the file plus ``INFLATION_SLACK``
  (toolc's artifacts inflate 3 to 4 times; zeros inflate 1000 times);
* loading may take at most ``BYTES_PER_BODY_BYTE`` bytes per byte of the body, plus
  ``FREE_ROWS`` rows of the vocabulary's width (``4 * ceil(logits / 32)`` bytes each: the
  tables any genuine artifact of that vocabulary needs, whatever its size) but never more
  than ``FREE_ROWS_CAP`` bytes for them, plus ``FIXED_BYTES``. Format 7 made genuine
  bodies several times smaller than their tables (a patched class's rows take 57 KB for a
  few bytes of body): tools80 in deepseek-v3.2's format costs 202 MB against 216 with 4,096
  free rows, so there are 8,192.

So a file of ``f`` bytes makes load allocate at most
``BYTES_PER_BODY_BYTE * (MAX_INFLATION * f + INFLATION_SLACK) + min(FREE_ROWS * row_bytes,
FREE_ROWS_CAP) + FIXED_BYTES``: ``768 f + 212 MiB`` for Qwen3's 151,936 logits, and
``768 f + 320 MiB`` whatever the header claims.

The price is a table, :data:`COSTS`: one line per table the loader builds, in bytes, as a
function of the declared sizes (:class:`Sizes`). A new section or table adds its line here
(and its counts to :class:`Sizes`), and its bound holds from then on. Each line is an upper
bound on what that table takes, temporaries included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArtifactError

MAX_INFLATION = 16
INFLATION_SLACK = 1 << 20
BYTES_PER_BODY_BYTE = 48
FREE_ROWS = 8192
FREE_ROWS_CAP = 256 << 20
FIXED_BYTES = 16 << 20
LIST, COMPLEMENT, BITMAP, DELTA = 0, 1, 2, 3


def max_body_bytes(file_bytes: int) -> int:
    """The most a body stored in ``file_bytes`` bytes may inflate to."""
    return MAX_INFLATION * file_bytes + INFLATION_SLACK


def row_bytes(logits_size: int) -> int:
    """One mask row of this many logits, in bytes."""
    return 4 * ((logits_size + 31) // 32)


def budget(body_bytes: int, logits_size: int) -> int:
    """The most loading a body of ``body_bytes`` bytes may allocate."""
    return (BYTES_PER_BODY_BYTE * body_bytes
            + min(FREE_ROWS * row_bytes(logits_size), FREE_ROWS_CAP) + FIXED_BYTES)


@dataclass
class Sizes:
    """The counts the costs are written in. Those known only once the sections are decoded
    (``narrow_keys``, ``wide``, ``plan_ids``) are 0 before."""
    n: int = 0              # states
    C: int = 0              # transition classes
    R: int = 0              # distinct mask rows
    dense: int = 0          # mask rows not stored as a list of ids
    E: int = 0              # exception entries
    T: int = 0              # exception targets
    D: int = 0              # mask row data entries
    derived: int = 0        # derived classes (format 4)
    row: int = 0            # bytes of one mask row
    buckets: int = 0        # exception buckets per wide class
    narrow_keys: int = 0    # entries of the narrow classes' dict
    wide: int = 0           # wide classes (two bit rows each)
    plan_ids: int = 0       # ids in the dense rows' apply plans
    counted: int = 0        # entries of the counted-region tables (phases x logits, format 6)
    items: int = 0          # entries of the counted-array tables (phases x logits + entries)
    runs: int = 0           # bytes of the run regions' facts, whole (classes x phases x 6 x L)
    merged: int = 0         # patched classes' bases' entries, and the patches' (format 7)


STAGES = ("decode", "tables")
#: (stage, table, bytes): "decode" is priced from the section sizes before they are read,
#: "tables" from the decoded sections before the per-token tables are built
COSTS = [
    ("decode", "state arrays and their checks", lambda s: 64 * s.n),
    ("decode", "exception and target checks", lambda s: 96 * (s.E + s.T)),
    ("decode", "mask row ids and their checks", lambda s: 64 * s.D),
    ("decode", "the mask rows", lambda s: (s.R + 2 * s.dense) * s.row),
    # bit rows of at most 128 derived classes at once (runtime/derived.py), four each
    ("decode", "derived classes' flags", lambda s: 4 * min(s.derived, 128) * s.row),
    ("decode", "counted tables", lambda s: 12 * s.counted + (64 * s.n if s.counted else 0)),
    ("decode", "counted item tables", lambda s: 4 * s.items + (32 * s.n if s.items else 0)),
    ("decode", "run tables", lambda s: 3 * s.runs + (32 * s.n if s.runs else 0)),
    ("tables", "per-state tables", lambda s: 384 * s.n),
    ("tables", "exceptions and targets", lambda s: 96 * (s.E + s.T)),
    ("tables", "narrow classes' dict", lambda s: 160 * s.narrow_keys),
    # the flags and the 16-bit rows (3 rows a class), and 128 classes' temporaries at once
    ("tables", "wide classes' bit rows", lambda s: 3 * s.wide * s.row
     + 4 * min(s.wide, 128) * s.row),
    ("tables", "wide classes' buckets", lambda s: 20 * s.wide * s.buckets),
    ("tables", "patched classes' merged buckets", lambda s: 96 * s.merged),
    ("tables", "apply plans", lambda s: 8 * (s.plan_ids + s.D)),
    ("tables", "counted tables as bytes", lambda s: 4 * s.counted),
    # the array and its bytes; where levels nest, K and X split apart too (runtime/nested.py)
    ("tables", "counted item tables as bytes", lambda s: 4 * s.items),
]


def check(stage: str, sizes: Sizes, body_bytes: int, logits_size: int, source: str) -> None:
    """Raise ArtifactError if the tables of ``stage`` and of the stages before it (they are
    all kept) would cost more than the budget."""
    have = budget(body_bytes, logits_size)
    upto = STAGES[:STAGES.index(stage) + 1]
    costs = [(name, f(sizes)) for st, name, f in COSTS if st in upto]
    total = sum(c for _, c in costs)
    if total > have:
        name, worst = max(costs, key=lambda c: c[1])
        raise ArtifactError(
            f"{source}: damaged or forged artifact (loading it would take {total:,} bytes, "
            f"{worst:,} of them for {name}, but a body of {body_bytes:,} bytes may take at "
            f"most {have:,})")


def section_sizes(header: dict, sections: dict, itemsize: dict) -> Sizes:
    """The counts priced at the "decode" stage, from the sections' lengths alone."""
    def count(name):
        raw = sections.get(name)
        return len(raw) // itemsize[name] if isinstance(raw, bytes) else 0

    derived = dense = 0
    kind = sections.get("row_kind")
    if isinstance(kind, bytes):
        dense = int(np.count_nonzero(np.frombuffer(kind, "u1")))
    raw = sections.get("class_base")
    if isinstance(raw, bytes):
        derived = int(np.count_nonzero(np.frombuffer(raw[:len(raw) // 4 * 4], "<i4") >= 0))
    logits = int(header["logits_size"])
    return Sizes(n=int(header["num_states"]), C=count("class_row"), R=count("row_kind"),
                 E=count("exc_tokens"), T=count("tgt"), D=count("row_data"), dense=dense,
                 derived=derived, row=row_bytes(logits), buckets=((logits - 1) >> 8) + 2,
                 counted=count("cnt_phases") * logits,
                 items=count("itm_kx") + 160 * count("itm_eq") + count("itn_kx")
                 + 160 * count("itn_eq"), runs=6 * logits * count("run_phases")
                 * (count("run_masks") // 16))


def table_sizes(sizes: Sizes, arrays: dict, logits: int, narrow_max: int) -> Sizes:
    """``sizes`` with the counts priced at the "tables" stage, from the decoded sections
    (``narrow_max``: the most tokens a narrow class's row lists)."""
    kind, count = arrays["row_kind"], arrays["row_count"]
    class_row = arrays["class_row"]
    base = arrays.get("class_base")
    shared = np.zeros(len(class_row), dtype=bool)
    if base is not None:
        shared[base[base >= 0]] = True
        shared |= base >= 0
    narrow = (kind[class_row] == LIST) & (count[class_row] <= narrow_max) & ~shared
    dense = kind != LIST
    forbidden = logits - count[dense]
    plans = np.where(kind[dense] == BITMAP, np.minimum(count[dense], forbidden), forbidden)
    sizes.narrow_keys = int(count[class_row[narrow]].sum())
    sizes.wide = int(len(class_row) - np.count_nonzero(narrow))
    sizes.plan_ids = int(plans.sum())
    if base is not None:
        sizes.merged = _merged_entries(arrays, base, sizes.buckets)
    return sizes


def _merged_entries(arrays: dict, base: np.ndarray, nb: int) -> int:
    """How many entries the patched classes' merged buckets hold: a bucket where a patch
    sets a code takes its base's entries there and the patch's (toolc.runtime.tables)."""
    ep = arrays["exc_ptr"].astype(np.int64)
    e_class = np.repeat(np.arange(len(ep) - 1), np.diff(ep))
    coded = (base[e_class] >= 0) & (arrays["exc_code"] > 0)
    if not coded.any():
        return 0
    tok = arrays["exc_tokens"].astype(np.int64) >> 8
    slots = np.unique(base[e_class[coded]] * nb + tok[coded])
    keys = e_class * nb + tok       # sorted: the decode checked the order
    return int((np.searchsorted(keys, slots, "right") - np.searchsorted(keys, slots)).sum()
               + coded.sum())
