"""The forged-artifact fuzzer: files with valid checksums and forged sizes, counts, rows,
classes and header types (tests/forge.py), each loaded under a memory cap set at the bound
``toolc.runtime.limits`` states for its size. Every case must be refused with a clean
ArtifactError or load as a consistent artifact.

CI-sized here; ``make fuzz`` runs it long (TOOLC_FUZZ_ARTIFACTS cases, the tally logged to
TOOLC_FUZZ_LOG).
"""

from __future__ import annotations

import os
from collections import Counter

from forge import cases, run_cases

COUNT = int(os.environ.get("TOOLC_FUZZ_ARTIFACTS", "60"))


def test_forged_artifacts_are_refused_or_consistent(weather_file, tmp_path):
    genuine = weather_file.read_bytes()
    files = []
    for seed in range(max(1, COUNT // 60)):
        for name, data in cases(seed, min(COUNT, 60), genuine):
            path = tmp_path / name
            path.write_bytes(data)
            files.append(str(path))
    got = run_cases(files)
    failed = {k: v for k, v in got.items() if v.startswith("FAIL")}
    tally = Counter(v.split(":")[0] for v in got.values())
    log = os.environ.get("TOOLC_FUZZ_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"forged artifacts: {len(got)} cases, {dict(tally)}\n")
    assert not failed, failed
    assert tally["refused"] and tally["consistent"], tally     # both kinds were drawn
