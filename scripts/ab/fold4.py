"""The alternative in-thread fold of a row reduction for the A/B of
scripts/device_attention_fold_ab.sh (spliced over argus/codegen/lower/exchange.py's _fold by
scripts/ab/splice.py): four interleaved chains, then a pairwise fold of the four (depth 9
for 32 registers instead of the chain's 31, four accumulators a row, which ptxas can still
interleave with the exp2s). Not measured yet."""


def _fold(em, src, comb, lists, bits, var: str) -> None:
    """argus_r = the fold of registers lists[var, :] of src (in a loop over `var`, opened
    by the caller), then a butterfly over the lane bits `bits`: min(4, n) chains over the
    registers in turn (register i into chain i % 4), their partials folded pairwise."""
    n = lists.shape[1]
    k = min(4, n)
    at = index_expr(lists.reshape(-1), f"({var} * {n} + argus_i)")
    em.line(f"float argus_t[{k}];")
    em.line("#pragma unroll")
    em.line(f"for (int argus_i = 0; argus_i < {k}; ++argus_i) argus_t[argus_i] = "
            f"{src.reg(at)};")
    if n > k:
        em.line("#pragma unroll")
        em.line(f"for (int argus_i = {k}; argus_i < {n}; ++argus_i) argus_t[argus_i % {k}] = "
                f"{comb.format(a=f'argus_t[argus_i % {k}]', b=src.reg(at))};")
    step = 1
    while step < k:
        for i in range(0, k - step, 2 * step):
            em.line(f"argus_t[{i}] = {comb.format(a=f'argus_t[{i}]', b=f'argus_t[{i + step}]')};")
        step *= 2
    em.line("float argus_r = argus_t[0];")
    for b in bits:
        em.line(f"argus_r = {comb.format(a='argus_r', b=f'argus::shfl_xor(argus_r, {1 << b})')};")
