"""A producer/consumer mbarrier ring written directly against the machine API.

The producer TMA-loads A and B k-tiles into S stages (full[s] armed with expect_tx);
the consumer waits full[s], issues a wgmma, and releases the stage on empty[s].
`bug` seeds the classic mistakes:
  "early_release": arrive empty[s] before the wgmma that reads stage s has retired;
  "parity":        phase computed as k & 1 instead of (k // S) & 1.
`overlap=True` keeps one wgmma group in flight (wait_group 1, release the previous stage).
"""

import numpy as np

from argus.interp.machine import GlobalTensor, Machine, round_to_bf16


def make_inputs(rng, m, n, k):
    a = round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((k, n)).astype(np.float32))
    return a, b


def run_ring_gemm(a, b, seed, stages=2, bk=16, bug=None, overlap=False, detect_races=True):
    """Run the ring on one Machine; return (result, C or None)."""
    M, K = a.shape
    N = b.shape[1]
    m = Machine(seed=seed, detect_races=detect_races)
    ga = GlobalTensor.from_values("A", a, "bf16")
    gb = GlobalTensor.from_values("B", b, "bf16")
    sa = m.smem.alloc("smem_a", "bf16", (M, bk), stages=stages)
    sb = m.smem.alloc("smem_b", "bf16", (bk, N), stages=stages)
    full = m.mbarriers("full", stages, count=1)
    empty = m.mbarriers("empty", stages, count=1)
    acc = m.fragment("acc", (M, N), owner="consumer")
    k_tiles = -(-K // bk)
    out = {}

    def phase(k):
        return (k & 1) if bug == "parity" else (k // stages) & 1

    def producer():
        for k in range(k_tiles):
            s = k % stages
            yield m.wait(empty[s], phase(k) ^ 1)
            yield m.arrive(full[s], expect_tx=sa.stage_bytes + sb.stage_bytes)
            yield m.tma_load(ga, (0, k * bk), sa.stage(s), full[s])
            yield m.tma_load(gb, (k * bk, 0), sb.stage(s), full[s])

    def consumer():
        yield m.wgmma_fence()
        for k in range(k_tiles):
            s = k % stages
            yield m.wait(full[s], phase(k))
            yield m.wgmma(acc, sa.stage(s), sb.stage(s))
            yield m.wgmma_commit()
            if bug == "early_release":
                yield m.arrive(empty[s])
                if overlap:
                    yield m.wgmma_wait(1)
            elif overlap:
                yield m.wgmma_wait(1)
                if k > 0:
                    yield m.arrive(empty[(k - 1) % stages])
            else:
                yield m.wgmma_wait(0)
                yield m.arrive(empty[s])
        yield m.wgmma_wait(0)
        if overlap and bug != "early_release":
            yield m.arrive(empty[(k_tiles - 1) % stages])
        out["C"] = acc.read()

    m.spawn("producer", producer())
    m.spawn("consumer", consumer())
    result = m.run()
    return result, out.get("C")
