"""Warm an artifact's per-token path when it is built, so that the first request after a load
or a compile costs what later ones do.

Freshly built tables are out of the processor's caches and the interpreter has not yet
specialised the matcher's code: the first request's slowest ``advance`` took 9 to 11 µs where
later requests' took 2 to 3 (tools10 and tools80, Qwen3, the slowest call of the first walk
that makes a call, median over 7 loads). In an A/B in one process, reading every table once
(a byte per cache line) and running the matcher a few tokens into a call brought it to 2 to 4
µs, for 0.4 to 1 ms more per load. Measured on the shared 2-core machine under load; the
runtime_micro "first request" column there moved within its noise (3.9 against 7.6 µs for
tools80, 7.4 against 6.3 for tools10): measure again on a quiet machine.
"""

from __future__ import annotations


def warm(artifact) -> None:
    """Touch every table the per-token calls read and run those calls on a probe matcher."""
    t = artifact._t
    for arr in (t.st, t.next, t.etok, t.ecode, t.ebkt):
        memoryview(arr).cast("B")[::64].tobytes()
    memoryview(t.wbits)[::64].tobytes()
    for _ in t.codes.values():
        pass
    specials = sorted({int(i) for ids in artifact.header.get("special_tokens", {}).values()
                       for i in ids})
    probe = [0, 1, t.logits - 1] + specials
    m = artifact.matcher()
    for _ in range(4):      # a few tokens into a call: the forced ones, else a probe token
        for _ in range(24):
            m.mask()
            m.is_accepting()
            forced = t.only[m._q]
            tok = next((x for x in ([forced] if forced >= 0 else probe[::-1])
                        if m.accepts(x)), None)
            if tok is None or m.is_terminated():
                break
            m.advance(tok)
        m.reset()
