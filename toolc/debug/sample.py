"""``toolc sample``: random valid outputs of an artifact, so a user sees the exact format it
enforces. Each output is a token sequence the artifact accepts, ending with EOS."""

from __future__ import annotations

import random

from .explore import distance_to_end, random_output
from ..runtime import Artifact


def sample_outputs(art: Artifact, n: int = 3, seed: int = 0, budget: int = 60,
                   leave_bias: float = 0.7) -> list[list[int]]:
    """``n`` random accepted token sequences (deterministic for a given ``seed``).

    The format's special tokens other than EOS (its call trigger and markers, whatever the
    format) are taken half the time they are allowed, so most samples show calls.
    """
    rng = random.Random(seed)
    dist = distance_to_end(art)
    trigger = tuple(sorted({t for name, ids in art.header.get("special_tokens", {}).items()
                            if name != "EOS" for t in ids} - set(art.eos_token_ids)))
    return [random_output(art, rng, dist, budget=budget, leave_bias=leave_bias, prefer=trigger)
            for _ in range(n)]
