"""The alternative in-thread fold of a row reduction for the A/B of
scripts/device_attention_fold_ab.sh (spliced over argus/codegen/lower/exchange.py's _fold by
scripts/ab/splice.py): four interleaved chains, then a pairwise fold of the four (depth 9
for 32 registers instead of the chain's 31, four accumulators a row, which ptxas can still
interleave with the exp2s). Not measured yet."""


def _fold(em, src, comb, lists, bits, var: str) -> None:
    """argus_r = the fold of registers lists[var, :] of src (in a loop over `var`, opened
    by the caller), then a butterfly over the lane bits `bits`. A chain, in register order:
    a pairwise fold (5 dependent steps for 32 registers instead of 31) was measured slower
    in the attention softmax, 1-23% with the persistent grid (H100, 2026-12-06;
    docs/perf-log.md, twentieth session): ptxas interleaves the chain with the exp2s."""
    n = lists.shape[1]
    k = 4 if n >= 8 else 1          # four interleaved chains, then a pairwise fold of them
    if k == 1:
        em.line(f"float argus_r = {src.reg(index_expr(lists[:, 0], var))};")
        if n > 1:
            at = index_expr(lists.reshape(-1), f"({var} * {n} + argus_i)")
            em.line("#pragma unroll")
            em.line(f"for (int argus_i = 1; argus_i < {n}; ++argus_i) argus_r = "
                    f"{comb.format(a='argus_r', b=src.reg(at))};")
    else:
        at = index_expr(lists.reshape(-1), f"({var} * {n} + argus_i)")
        em.line(f"float argus_t[{k}];")
        em.line("#pragma unroll")
        em.line(f"for (int argus_i = 0; argus_i < {k}; ++argus_i) argus_t[argus_i] = "
                f"{src.reg(at)};")
        em.line("#pragma unroll")
        em.line(f"for (int argus_i = {k}; argus_i < {n}; ++argus_i) argus_t[argus_i % {k}] = "
                f"{comb.format(a=f'argus_t[argus_i % {k}]', b=src.reg(at))};")
        em.line(f"argus_t[0] = {comb.format(a='argus_t[0]', b='argus_t[1]')};")
        em.line(f"argus_t[2] = {comb.format(a='argus_t[2]', b='argus_t[3]')};")
        em.line(f"float argus_r = {comb.format(a='argus_t[0]', b='argus_t[2]')};")
    for b in bits:
        em.line(f"argus_r = {comb.format(a='argus_r', b=f'argus::shfl_xor(argus_r, {1 << b})')};")
