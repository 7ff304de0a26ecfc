"""The counted-array sections of an artifact file (format 5), decoded and checked (numpy
only; :mod:`toolc.walk.itemcounts` writes them, :mod:`toolc.runtime.counters` uses them).

A counted array is an array built once, unbounded, the inside of its brackets tagged, plus a
counter of the items started in it. For ``T`` distinct bounds and ``P`` lexer phases:

    itm_tag     int32[n]       each state's bound (index into itm_lo/itm_hi), -1 outside
    itm_phase   int8[n]        the phase of tagged states relative to their array, -1 elsewhere
                               (``4 * depth + mode``; mode 0 before an item / nested, 1 in
                               an item, 2 in a string, 3 after its backslash; plus 36 for
                               an object's members, counted regions of kind "props")
    itm_dmin    int32[n]       items a counted state must still start before its array can
                               close (1 after a separator, else 0)
    itm_lo      int64[T]       minimum items
    itm_hi      int64[T]       maximum items, -1 for none
    itm_phases  int8[P]        the phases that have tables, increasing
    itm_kx      uint8[P, L]    per token: the items it starts before it leaves the array (low
                               seven bits) and whether it leaves it (the eighth)
    itm_eq, itm_et, itm_ev     the tokens that enter a counted array: from state itm_eq,
                int32, int32,  token itm_et ends inside a counted array having started
                int64          itm_ev items in it; sorted by (state, token)

``itn_*``, the same ten sections, describe the counted arrays and objects nested in a counted
array's items or a counted object's members (a second level): their states have an ``itm_tag`` of
their outer region and an ``itn_tag`` of their own, and the runtime keeps a counter for each.
"""

from __future__ import annotations

import numpy as np

from .arrays import typed_sections

MAX_ITEM_DEPTH = 8                          # nesting inside an item the lexer follows
# the phases of arrays' items, then the same for objects' members (``}`` closes them)
HALF = 4 * (MAX_ITEM_DEPTH + 1)
NUM_ITEM_PHASES = 2 * HALF
LEFT, LOST = NUM_ITEM_PHASES, NUM_ITEM_PHASES + 1     # lexer sinks: left the array, lost

ITEM_SECTIONS = {"itm_tag": "<i4", "itm_phase": "i1", "itm_dmin": "<i4", "itm_lo": "<i8",
                 "itm_hi": "<i8", "itm_phases": "i1", "itm_kx": "u1", "itm_eq": "<i4",
                 "itm_et": "<i4", "itm_ev": "<i8"}
# the same for the counted arrays nested in a counted array's items (one level)
INNER_ITEM_SECTIONS = {"itn_" + k[4:]: v for k, v in ITEM_SECTIONS.items()}


def decode_items(sections: dict, n: int, logits_size: int, damaged, prefix: str = "itm_"
                 ) -> dict:
    """The counted-array sections (``itm_*``, or ``itn_*`` for the nested level), with
    sizes, ranges and order checked."""
    if prefix != "itm_":
        if "itm_tag" not in sections:
            raise damaged("nested counted arrays without outer ones")
        got = {"itm_" + k[4:]: v for k, v in sections.items() if k.startswith(prefix)}
        return {prefix + k[4:]: v for k, v in decode_items(got, n, logits_size, damaged).items()}
    c = typed_sections(sections, ITEM_SECTIONS, damaged)
    T, P, E = len(c["itm_lo"]), len(c["itm_phases"]), len(c["itm_eq"])
    sizes = {"itm_tag": n, "itm_phase": n, "itm_dmin": n, "itm_hi": T, "itm_kx": P * logits_size,
             "itm_et": E, "itm_ev": E}
    for k, size in sizes.items():
        if len(c[k]) != size:
            raise damaged(f"section {k} has {len(c[k])} entries, expected {size}")
    ph = c["itm_phases"]
    if P > NUM_ITEM_PHASES or (P and (ph.min() < 0 or ph.max() >= NUM_ITEM_PHASES
                                      or np.any(ph[1:] <= ph[:-1]))):
        raise damaged("counted item phases")
    tag, phase = c["itm_tag"], c["itm_phase"]
    if n and (tag.min() < -1 or tag.max() >= T or phase.min() < -1
              or phase.max() >= NUM_ITEM_PHASES):
        raise damaged("counted item tags or phases out of range")
    if n and (c["itm_dmin"].min() < 0 or c["itm_dmin"].max() > 1 << 20):
        raise damaged("counted item distances")
    if np.any((tag >= 0) & ~np.isin(phase, ph)):
        raise damaged("a counted array's state without a phase table")
    if T and (c["itm_lo"].min() < 0 or c["itm_hi"].min() < -1
              or np.any((c["itm_hi"] >= 0) & (c["itm_hi"] < c["itm_lo"]))):
        raise damaged("counted item bounds")
    eq, et, ev = c["itm_eq"], c["itm_et"], c["itm_ev"]
    if E and (eq.min() < 0 or eq.max() >= n or et.min() < 0 or et.max() >= logits_size
              or ev.min() < 0):
        raise damaged("counted array entries out of range")
    key = eq.astype(np.int64) * logits_size + et
    if E and np.any(key[1:] <= key[:-1]):
        raise damaged("counted array entries out of order")
    out = dict(c)
    out["itm_kx"] = c["itm_kx"].reshape(P, logits_size)
    return out
