"""Small kernels for the evaluator's per-family tests, compiled from source text."""

from argus.frontend.parse import parse_source

HEADER = "from argus.lang import *\n\n"


def compile_kernel(source: str, name: str = "k"):
    return parse_source(HEADER + source, "interp_kernel.py")[name]


MATH = '''
@kernel(grid=("M // 64",), block=128)
def k(X: Tensor["M", 64, fp32], Y: Tensor["M", 64, fp32], R: Tensor["M", 64, fp32],
      C: Tensor["M", 64, bf16]):
    bx = block_id("x")
    x = load(tile(X, (64, 64), (bx, 0)), "blocked")
    relu = select(x > 0.0, x, 0.0)
    store(tile(Y, (64, 64), (bx, 0)), exp2(relu) - maximum(x, 0.0) * 2.0)
    rows = row_max(x) + row_sum(x * 0.0 + 1.0)
    store(tile(R, (64, 64), (bx, 0)), x * 0.0 + rows + cast(col_of(x) - row_of(x), fp32))
    store(tile(C, (64, 64), (bx, 0)), cast(x, bf16))
'''

TMA_STORE = '''
@kernel(grid=("M // 64",), block=128)
def k(X: Tensor["M", 64, bf16], Y: Tensor["M", 64, bf16]):
    bx = block_id("x")
    buf = smem(bf16, (64, 64))
    x = load(tile(X, (64, 64), (bx, 0)), "blocked")
    store(buf[0], x)
    fence_proxy_async()
    tma_store(tile(Y, (64, 64), (bx, 0)), buf[0])
    tma_store_commit()
    tma_store_wait(0)
'''

SCHEDULE = '''
@kernel(grid=(3,), block=128)
def k(X: Tensor["M", "N", fp32], Y: Tensor["M", "N", fp32]):
    for i, tm, tn in schedule(M // 64, N // 64, order="ORDER"GROUP):
        x = load(tile(X, (64, 64), (tm, tn)), "blocked")
        if (tm + tn) % 2 == 0:
            store(tile(Y, (64, 64), (tm, tn)), x)
        else:
            store(tile(Y, (64, 64), (tm, tn)), x * -1.0)
'''

ROLES = '''
@kernel(grid=(1,), block=256)
def k(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32]):
    buf = smem(fp32, (64, 64))
    with role("writer", warpgroups=(0,), regs=40):
        store(buf[0], load(tile(X, (64, 64), (0, 0)), "blocked"))
        named_barrier(1, 256)
    with role("reader", warpgroups=(1,), regs=232):
        named_barrier(1, 256)
        store(tile(Y, (64, 64), (0, 0)), load(buf[0], "blocked") + 1.0)
'''

CLUSTER = '''
@kernel(grid=(2,), block=256)
def k(X: Tensor[128, 64, fp32], Y: Tensor[128, 64, fp32]):
    bx = block_id("x") + cluster_rank()
    buf = smem(fp32, (64, 64))
    with role("writer", warpgroups=(0,), regs=40):
        store(buf[0], load(tile(X, (64, 64), (bx, 0)), "blocked"))
    cluster_sync()
    with role("reader", warpgroups=(1,), regs=232):
        store(tile(Y, (64, 64), (bx, 0)), load(buf[0], "blocked") * 2.0)
'''

PREFIX_SUM = '''
@kernel(grid=(1,), block=128)
def k(I: Tensor[64, int32]):
    s = prefix_sum(load_indices(tile(I, (64,), (0,))))'''

GATHER_SCATTER = '''
@kernel(grid=("C // 64",), block=128)
def k(X: Tensor["R", "C", fp32], I: Tensor[64, int32], Y: Tensor["R", "C", fp32],
      Z: Tensor[64, "C", fp32]):
    bc = block_id("x")
    rows = load_indices(tile(I, (64,), (0,)))
    g = gather(X, rows, bc, 64, "blocked")
    scatter(Y, rows, bc, g * 2.0)
    atomic_add(tile(Z, (64, 64), (0, bc)), g)
    atomic_add(tile(Z, (64, 64), (0, bc)), g)'''

GATHER_TMA = '''
@kernel(grid=(1,), block=128)
def k(X: Tensor["R", 64, bf16], I: Tensor[64, int32], Y: Tensor[64, 64, bf16]):
    buf = smem(bf16, (64, 64))
    bar = mbarrier(1)
    with elect_one("block"):
        mbarrier_init(bar[0], 1)
    fence_mbarrier_init()
    rows = load_indices(tile(I, (64,), (0,)))
    with elect_one():
        expect_tx(bar[0], nbytes(buf[0]))
        gather_tma(buf[0], X, rows, 0, bar[0])
    wait(bar[0], 0)
    store(tile(Y, (64, 64), (0, 0)), load(buf[0], "blocked"))
'''

UNINITIALISED = '''
@kernel(grid=(1,), block=128)
def k(Y: Tensor[64, 64, fp32]):
    acc = fragment(fp32, (64, 64), "wgmma_acc_m64n64")
    store(tile(Y, (64, 64), (0, 0)), acc + 1.0)
'''
