"""The encoder's derived classes (format 4): a bounded string's classes whose exceptions
are an earlier class's, restricted to their own mask row, stored without them."""

from __future__ import annotations

import numpy as np

from . import budget
from .runtime.arrays import expand_runs, ptr_of

# a class with at least this many exceptions may be stored as derived from an earlier one
DERIVE_MIN = 4096
DERIVE_TRIES = 8       # earlier classes tried as the base of one, largest first


def _derive_classes(x_class, x_tok, x_code, C: int, allowed, whole=None):
    """Classes whose exceptions are exactly an earlier class's, restricted to their own mask
    row, with the codes renamed one to one (the entries grouped by class, each class's in
    one order that all classes share, e.g. trie position): ``(base, sigma)``, ``base[c]``
    the class that ``c`` derives from (-1: none) and ``sigma[c]`` its code renaming
    (``sigma[c][k]`` is the base's code for ``c``'s code ``k``), or None when no class
    derives.

    A bounded string is where this pays: each character position is a state whose tokens
    lead, by length, to the positions after it, so its class holds 100k+ exceptions, and
    the positions near the bound, which allow fewer lengths, each had a class of their own
    that repeated the others' exceptions (maxLength 100: 168 classes, 11M entries). Only
    classes of DERIVE_MIN exceptions or more are looked at, so ordinary tool sets (string
    interiors: 1,540) are stored as they were. The classes ``whole`` (patched classes'
    bases) may be bases but are never derived themselves."""
    ptr = ptr_of(x_class, C)
    size = np.diff(ptr)
    cand = np.flatnonzero(size >= DERIVE_MIN).tolist()
    never = set() if whole is None else set(np.asarray(whole).tolist())
    if len(cand) < 2:
        return None
    base = np.full(C, -1, dtype=np.int64)
    sigma: dict[int, np.ndarray] = {}
    bases: list[int] = []           # classes that stay whole, largest first
    for b in cand:
        budget.check("encoding the artifact")
        eb, cb = x_tok[ptr[b]:ptr[b + 1]], x_code[ptr[b]:ptr[b + 1]]
        ok = None
        row = None
        for a in [] if b in never else bases[:DERIVE_TRIES]:
            if size[a] < size[b]:
                break
            if row is None:
                row = allowed(b)
            ea = x_tok[ptr[a]:ptr[a + 1]]
            sel = row[ea]
            if int(sel.sum()) != len(eb) or not np.array_equal(ea[sel], eb):
                continue
            ca = x_code[ptr[a]:ptr[a + 1]][sel]
            sg = np.zeros(int(cb.max()) + 1, dtype=np.int64)
            sg[cb] = ca
            # one base code per code of b, and no two codes of b on one base code
            if np.array_equal(sg[cb], ca) and len(np.unique(sg[1:])) == len(sg) - 1 \
                    and np.all(sg[1:] > 0):
                ok = (a, sg)
                break
        if ok is None:
            bases.append(b)
            bases.sort(key=lambda c: (-int(size[c]), c))
        else:
            base[b], sigma[b] = ok
    if not sigma:
        return None
    return base, sigma


def _apply_derivation(derivation, x_class, x_tok, x_code, class_of, tgt, tgt_ptr):
    """Drop the derived classes' exceptions and rename their states' targets to the base's
    codes: code ``k`` of a derived class becomes its base's ``sigma[k]``, so a state's target
    list is laid out by the base's codes, as long as the base's (slots no token of the class
    uses hold the state's first target: a valid state that nothing reads). Every code of the
    base is then within the list, which is what the loader checks."""
    base, sigma = derivation
    ptr = ptr_of(x_class, len(base))
    full = {c: int(x_code[ptr[base[c]]:ptr[base[c] + 1]].max()) for c in sigma}
    keep = base[x_class] < 0
    x_class, x_tok, x_code = x_class[keep], x_tok[keep], x_code[keep]
    n = len(class_of)
    lens = np.diff(tgt_ptr)
    new_len = lens.copy()
    for c in sigma:
        new_len[class_of == c] = full[c]
    new_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(new_len, out=new_ptr[1:])
    new_tgt = np.empty(int(new_ptr[-1]), dtype=np.int64)
    plain = np.ones(n, dtype=bool)
    for c, sg in sigma.items():
        qs = np.flatnonzero(class_of == c)
        plain[qs] = False
        m = len(sg) - 1
        old = tgt[tgt_ptr[qs][:, None] + np.arange(m)[None, :]]
        new = np.repeat(old[:, :1], full[c], axis=1)
        new[:, sg[1:] - 1] = old
        new_tgt[(new_ptr[qs][:, None] + np.arange(new.shape[1])[None, :]).ravel()] = new.ravel()
    qs = np.flatnonzero(plain)
    _, src = expand_runs(tgt_ptr[qs], tgt_ptr[qs + 1])
    _, dst = expand_runs(new_ptr[qs], new_ptr[qs + 1])
    new_tgt[dst] = tgt[src]
    return x_class, x_tok, x_code, new_tgt, new_ptr
