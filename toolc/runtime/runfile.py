"""The run-region sections of an artifact file (:mod:`toolc.runtime.runcount` reads them):
their layout, checked at load. Numpy only."""

from __future__ import annotations

import numpy as np

from .arrays import typed_sections

LEAD, BEST, TRAIL, FLAGS, OMAX, OTRAIL = range(6)
NUM_FACTS = 6
KEEPS, LEAVES, OPENS = 1, 2, 4     # KEEPS: no character outside the class
FAR = 256               # facts fit in a byte: a counter this far from m cannot reach it
NUM_PHASES = 17         # the lexer phases of toolc.walk.counts
OUT_PHASE = 16

RUN_SECTIONS = {"run_tag": "<i4", "run_phase": "i1", "run_lo": "<i8", "run_cls": "<i4",
                "run_masks": "u1", "run_phases": "i1", "run_fp": "<i4", "run_fv": "u1"}


def decode_runs(sections: dict, n: int, logits_size: int, damaged) -> dict:
    """The run-region sections, with their sizes and ranges checked::

        run_tag     int32[n]          each state's run region (index into run_lo), -1 outside
        run_phase   int8[n]           the lexer phase of the region's states and of the
                                      states that open one, else -1
        run_lo      int64[T]          each region's run length m (>= 1)
        run_cls     int32[T]          each region's class (index into run_masks)
        run_masks   uint8[C * 16]     each class's ASCII characters, a 128-bit set
        run_phases  int8[P]           the phases that have facts, increasing
        run_fp      int32[E]          the entries (class, phase, token) whose facts are not
                                      all 0, as flat positions in C*P*L, first then gaps
        run_fv      uint8[E * 6]      their six facts each (see toolc.runtime.runcount)

    Most tokens' facts are all 0 (no class character, a break: the counter becomes 0), so
    only the others are stored; the runtime gets the facts whole (``run_facts``:
    uint8[C*P, 6, L]).
    """
    c = typed_sections(sections, RUN_SECTIONS, damaged)
    T, P = len(c["run_lo"]), len(c["run_phases"])
    C = len(c["run_masks"]) // 16
    sizes = {"run_tag": n, "run_phase": n, "run_cls": T, "run_masks": 16 * C,
             "run_fv": NUM_FACTS * len(c["run_fp"])}
    for k, size in sizes.items():
        if len(c[k]) != size:
            raise damaged(f"section {k} has {len(c[k])} entries, expected {size}")
    ph = c["run_phases"]
    if P > NUM_PHASES or (P and (ph.min() < 0 or ph.max() >= NUM_PHASES
                                 or np.any(ph[1:] <= ph[:-1]))):
        raise damaged("run phases")
    tag, phase = c["run_tag"], c["run_phase"]
    if n and (tag.min() < -1 or tag.max() >= T or phase.min() < -1
              or phase.max() >= NUM_PHASES):
        raise damaged("run tags or phases out of range")
    if T and (c["run_lo"].min() < 1 or c["run_cls"].min() < 0 or c["run_cls"].max() >= C):
        raise damaged("run lengths or classes out of range")
    inside = phase[tag >= 0]
    if len(inside) and ((inside < 0) | (inside == OUT_PHASE)
                        | ~np.isin(inside, ph)).any():
        raise damaged("a run region's state without an in-string phase that has facts")
    if n and (~np.isin(phase[phase >= 0], ph)).any():
        raise damaged("a run phase without facts")
    g = c["run_fp"]
    if len(g) and (g[0] < 0 or np.any(g[1:] < 1)):
        raise damaged("run entries out of order")
    pos = np.cumsum(g, dtype=np.int64)
    if len(pos) and pos[-1] >= C * P * logits_size:
        raise damaged("run entries out of range")
    facts = np.zeros((NUM_FACTS, C * P * logits_size), dtype=np.uint8)
    facts[:, pos] = c["run_fv"].reshape(-1, NUM_FACTS).T
    out = {k: v for k, v in c.items() if k not in ("run_fp", "run_fv")}
    out["run_facts"] = facts.reshape(NUM_FACTS, C * P, logits_size).transpose(1, 0, 2)
    return out
