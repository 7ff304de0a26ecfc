"""One measurement in a fresh process:
``worker.py PEER SET CORPUS TOKENIZER_JSON OUT [--check ART]``.

In order: import the peer, load its tokenizer, compile the set, make a matcher and fill the
first mask (the wall-clock time of that moment is reported, so the driver can tell "tools file
to first mask" from the process's spawn), record the size, walk the first corpus answer (the
first request), walk the whole corpus once to warm up and once timed, then record peak RSS.
With ``--check``, the masks are then compared step by step with toolc's artifact ``ART``.
Prints one JSON object.
"""

from __future__ import annotations

import importlib
import json
import resource
import sys
import time

import numpy as np

from common import SPECIALS, VOCAB, WORDS, load_tools, stats, tools_path


def walk(peer, grammar, tok, buf, ids, timed: bool):
    """Walk one answer; (mask µs, advance µs, first rejected step or -1, done, new matcher µs)."""
    clock = time.perf_counter_ns
    t0 = clock()
    m = peer.new_matcher(grammar, tok, buf)
    new_us = (clock() - t0) / 1e3
    masks, advances = [], []
    for step, t in enumerate(ids):
        a = clock()
        m.fill()
        b = clock()
        ok = m.advance(t)
        c = clock()
        if timed:
            masks.append((b - a) / 1e3)
            advances.append((c - b) / 1e3)
        if not ok:
            return masks, advances, step, False, new_us
    return masks, advances, -1, m.done(), new_us


def check(peer, grammar, tok, buf, corpus, art_path):
    """Compare the peer's masks with toolc's along the corpus (not timed)."""
    import toolc
    art = toolc.load(art_path)
    special_ids = np.array(sorted(SPECIALS.values()))
    names = {v: k for k, v in SPECIALS.items()}
    ordinary = np.zeros(WORDS * 32, dtype=bool)
    ordinary[:VOCAB] = True
    extra_steps = missing_steps = steps = 0
    extra_tokens = missing_tokens = 0
    special_inside: dict[str, int] = {}
    example = None
    examples: dict = {}
    for entry in corpus:
        m = peer.new_matcher(grammar, tok, buf)
        ref = art.matcher()
        inside = set(entry["inside"])
        for step, t in enumerate(entry["ids"]):
            m.fill()
            mine = np.unpackbits(buf.view(np.uint8), bitorder="little").astype(bool) & ordinary
            theirs = np.unpackbits(ref.mask().view(np.uint8), bitorder="little").astype(bool)
            extra, missing = mine & ~theirs, theirs & ~mine
            steps += 1
            if extra.any():
                extra_steps += 1
                extra_tokens += int(extra.sum())
                _keep(examples, "extra", art, entry, step, step in inside, extra)
            if missing.any():
                missing_steps += 1
                missing_tokens += int(missing.sum())
                _keep(examples, "missing", art, entry, step, step in inside, missing)
            if step in inside:
                for s in special_ids[mine[special_ids]]:
                    special_inside[names[int(s)]] = special_inside.get(names[int(s)], 0) + 1
                    if example is None:
                        example = entry["text"][:160]
            if not m.advance(t) or not ref.accepts(t):
                break
            ref.advance(t)
    return {"steps": steps, "extra_steps": extra_steps, "extra_tokens": extra_tokens,
            "missing_steps": missing_steps, "missing_tokens": missing_tokens,
            "special_inside": special_inside, "special_example": example,
            "examples": examples}


def _keep(examples: dict, kind: str, art, entry, step, inside: bool, where,
          limit: int = 3) -> None:
    """Up to ``limit`` samples of each kind of disagreement, inside arguments and outside."""
    got = examples.setdefault(f"{kind}_{'inside' if inside else 'outside'}", [])
    if len(got) < limit:
        got.append(_example(art, entry, step, where))


def _example(art, entry, step, where) -> dict:
    """A readable sample of a disagreement: the text so far and a few of the tokens."""
    from toolc.tokenizer import load_vocabulary
    vocab = load_vocabulary("qwen")
    done = vocab.decode_bytes(entry["ids"][:step]).decode("utf-8", "replace")
    toks = np.flatnonzero(where)
    sample = [repr(vocab.token_bytes[t]) if t < VOCAB else str(t) for t in toks[:8]]
    return {"after": done[-60:], "count": int(len(toks)), "tokens": sample}


def peak_rss_mb() -> float:
    """This process's peak resident set since its exec (``VmHWM``).

    Not ``ru_maxrss``: Linux keeps that across ``execve``, so a worker would report at least
    the RSS of the driver it was forked from.
    """
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv) -> int:
    peer_name, set_name, corpus_path, tokenizer_json, out_path = argv[:5]
    check_art = argv[argv.index("--check") + 1] if "--check" in argv else None
    save_art = argv[argv.index("--save") + 1] if "--save" in argv else None
    t0 = time.perf_counter()
    peer = importlib.import_module(f"peer_{peer_name}")
    t_import = time.perf_counter()
    tok = peer.load_tokenizer(tokenizer_json)
    t_tok = time.perf_counter()
    source = tools_path(set_name) if peer_name == "toolc" else load_tools(set_name)
    grammar = peer.compile(source, tok)
    t_compile = time.perf_counter()
    buf = np.zeros(WORDS, dtype=np.int32)
    m = peer.new_matcher(grammar, tok, buf)
    m.fill()
    first_mask_wall = time.time()
    size = peer.size_bytes(grammar)
    if save_art:
        grammar.save(save_art)
    with open(corpus_path, encoding="utf-8") as fh:
        corpus = json.load(fh)[set_name]

    first = walk(peer, grammar, tok, buf, corpus[0]["ids"], timed=True)
    for entry in corpus:                       # warm-up pass
        walk(peer, grammar, tok, buf, entry["ids"], timed=False)
    masks, advances, new_us, rejected, unfinished = [], [], [], [], 0
    for k, entry in enumerate(corpus):
        mk, ad, bad, done, nu = walk(peer, grammar, tok, buf, entry["ids"], timed=True)
        masks += mk
        advances += ad
        new_us.append(nu)
        if bad >= 0:
            ids = entry["ids"]
            rejected.append({"answer": k, "step": bad, "token": ids[bad],
                             "context": entry["text"][:200]})
        elif not done:
            unfinished += 1
    res = {
        "peer": peer.NAME, "set": set_name,
        "import_s": t_import - t0, "tokenizer_s": t_tok - t_import,
        "compile_s": t_compile - t_tok, "first_mask_wall": first_mask_wall,
        "bytes": size, "peak_rss_mb": peak_rss_mb(),
        "mask": stats(masks), "advance": stats(advances), "new_matcher": stats(new_us),
        "first_mask": stats(first[0]), "first_advance": stats(first[1]),
        "answers": len(corpus), "rejected": rejected, "unfinished": unfinished,
    }
    if peer_name == "toolc":
        view = []
        for entry in corpus:
            mt = grammar.matcher()
            for t in entry["ids"]:
                a = time.perf_counter_ns()
                mt.mask()
                view.append((time.perf_counter_ns() - a) / 1e3)
                mt.advance(t)
        res["mask_view"] = stats(view)
    if check_art:
        res["check"] = check(peer, grammar, tok, buf, corpus, check_art)
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(res, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
