"""The counted-region sections of an artifact file (format 6), decoded and checked (numpy
only; :mod:`toolc.runtime.fileformat` reads the rest of the file, :mod:`toolc.walk.counts`
writes these, :mod:`toolc.runtime.counted` uses them).

A counted region is a bounded string built once, unbounded, plus a counter (see
:mod:`toolc.runtime.counted`). For ``T`` distinct bounds and ``P`` lexer phases with tables:

    cnt_tag     int32[n]       each state's bound (index into cnt_lo/cnt_hi), -1 outside
    cnt_phase   int8[n]        the lexer phase of counted states and of the states that open
                               a counted string, -1 elsewhere
    cnt_dmin    int32[n]       characters a counted state must still start before its string
                               can close (its pattern's shortest way out; 0 elsewhere)
    cnt_lo      int64[T]       minimum characters
    cnt_hi      int64[T]       maximum characters, -1 for none
    cnt_phases  int8[P]        the phases that have tables, increasing
    cnt_kn      uint8[L/2]     ``K`` of the first phase (between characters): the characters a
                               token starts in its first string, two tokens a byte (the low
                               nibble first), 15 standing for 15 or more
    cnt_kbv     uint8[...]     for each token whose nibble is 15, in token order, its value
                               less 15
    cnt_kd      uint8[P]       each phase's offset: its row is the first row plus this (mod 256)
    cnt_kp, cnt_kv             the entries that differ from that, as flat positions
                int32, uint8   (``row * L + token``, increasing, as gaps) and what to add
                               (mod 256)
    cnt_xp      int32[...]     flat positions (as gaps) of the tokens that leave their first
                               string
    cnt_sp, cnt_sv             flat positions (as gaps) and values: characters of the counted
                int32, uint8   string a token opens (none elsewhere)

Entries no state reads are left out (or hold what the rule above gives them; the first row's
are chosen to cost least, :mod:`toolc.walk.countcode`), so the body inflates no more than
the rest of a file's. Format 5 stored the first row a byte a token and
the other rows' non-zero entries: 91 KB over an unbounded string for Qwen3, 64 KB now.
"""

from __future__ import annotations

import numpy as np

from .arrays import typed_sections

COUNTED_SECTIONS = {"cnt_tag": "<i4", "cnt_phase": "i1", "cnt_dmin": "<i4",
                    "cnt_lo": "<i8", "cnt_hi": "<i8",
                    "cnt_phases": "i1", "cnt_kn": "u1", "cnt_kbv": "u1",
                    "cnt_kd": "u1", "cnt_kp": "<i4", "cnt_kv": "u1",
                    "cnt_xp": "<i4", "cnt_sp": "<i4", "cnt_sv": "u1"}
NUM_PHASES = 17         # the lexer phases of toolc.walk.counts


def decode_counted(sections: dict, n: int, logits_size: int, damaged) -> dict:
    """The counted-region sections, with their sizes and ranges checked, and the per-phase
    tables made whole (``cnt_k``, ``cnt_x``, ``cnt_s1``: uint8[phases, logits], the last
    holding S + 1)."""
    c = typed_sections(sections, COUNTED_SECTIONS, damaged)
    T, P = len(c["cnt_lo"]), len(c["cnt_phases"])
    sizes = {"cnt_tag": n, "cnt_phase": n, "cnt_dmin": n, "cnt_hi": T,
             "cnt_kn": (logits_size + 1) // 2 if P else 0, "cnt_kd": P,
             "cnt_kv": len(c["cnt_kp"]),
             "cnt_sv": len(c["cnt_sp"])}
    for k, size in sizes.items():
        if len(c[k]) != size:
            raise damaged(f"section {k} has {len(c[k])} entries, expected {size}")
    for k in ("cnt_kp", "cnt_xp", "cnt_sp"):      # gaps: the first >= 0, the others >= 1
        g = c[k]
        if len(g) and (g[0] < 0 or np.any(g[1:] < 1)):
            raise damaged(f"counted entries {k} out of order")
        c[k] = np.cumsum(g, dtype=np.int64)
        if len(g) and c[k][-1] >= P * logits_size:
            raise damaged(f"counted entries {k} out of range")
    ph = c["cnt_phases"]
    if P > NUM_PHASES or (P and (ph.min() < 0 or ph.max() >= NUM_PHASES
                                 or np.any(ph[1:] <= ph[:-1]))):
        raise damaged("counted phases")
    tag, phase = c["cnt_tag"], c["cnt_phase"]
    if n and (tag.min() < -1 or tag.max() >= T or phase.min() < -1
              or phase.max() >= NUM_PHASES):
        raise damaged("counted state tags or phases out of range")
    if n and c["cnt_dmin"].min() < 0:
        raise damaged("counted distances")
    if np.any((tag >= 0) & ~np.isin(phase, ph)):
        raise damaged("a counted state without a phase table")
    if T and (c["cnt_lo"].min() < 0 or c["cnt_hi"].min() < -1
              or np.any((c["cnt_hi"] >= 0) & (c["cnt_hi"] < c["cnt_lo"]))):
        raise damaged("counted bounds")
    kn = c["cnt_kn"]
    k0 = np.empty(2 * len(kn), dtype=np.uint8)
    k0[0::2], k0[1::2] = kn & 15, kn >> 4
    k0 = k0[:logits_size if P else 0]
    big = np.flatnonzero(k0 == 15)
    if len(big) != len(c["cnt_kbv"]):
        raise damaged(f"section cnt_kbv has {len(c['cnt_kbv'])} entries, expected {len(big)}")
    k0[big] += c["cnt_kbv"]                 # uint8: mod 256, as every value here
    k = (k0[None, :] + c["cnt_kd"][:, None]).reshape(-1)
    k[c["cnt_kp"]] += c["cnt_kv"]
    x = np.zeros(P * logits_size, dtype=np.uint8)
    x[c["cnt_xp"]] = 1
    s1 = np.zeros(P * logits_size, dtype=np.uint8)      # S + 1: 0 where a token opens none
    s1[c["cnt_sp"]] = c["cnt_sv"] + np.uint8(1)
    return {"cnt_tag": tag, "cnt_phase": phase, "cnt_dmin": c["cnt_dmin"],
            "cnt_lo": c["cnt_lo"], "cnt_hi": c["cnt_hi"],
            "cnt_phases": ph, "cnt_k": k.reshape(P, logits_size),
            "cnt_x": x.reshape(P, logits_size), "cnt_s1": s1.reshape(P, logits_size)}
