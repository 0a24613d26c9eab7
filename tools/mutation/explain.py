"""Why a mutant is missed (verifier clean, interpreter wrong) or flagged while the
interpreter ran correctly: rules matched against a report row (benchmarks/mutation_report.py
JSON), each naming its kind:

- "not modelled": the soundness statement (docs/design/verifier.md) says the verifier does
  not check this, so a clean verdict claims nothing about it;
- "verifier gap": the verifier should have caught it; a bug to fix (listed in the report);
- "not exercised": the verifier is right, the interpreter's shapes/seeds did not show it;
- "false alarm": the mutant is correct and the verifier says otherwise (a bug to fix).

A row that no rule matches is "unexplained" (the report fails on a missed one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Rule:
    kind: str
    applies: Callable[[dict], bool]
    why: str


LIBRARY = ("gemm_nt", "gemm_nn", "gemm_nn_cluster", "gemm_nt_chunks")
UNMODELLED = ("tag.not-modelled", "protocol.unmodelled", "tag.assert-undischarged",
              "protocol.stages")


def _text(row: dict) -> str:
    return f"{row['before']} -> {row['after']}"


def _missed(row: dict) -> bool:
    return row["class"] == "missed"


def _flagged(row: dict) -> bool:
    return row["class"] == "flagged-interpreter-correct"


def _errors(row: dict, check: str) -> bool:
    return any(e.startswith(check) for e in row["verifier_errors"])


def _new_warning(row: dict, *checks: str) -> bool:
    return any(w.split(" at ")[0] in checks for w in row.get("new_warnings", []))


def _library_release(row: dict) -> bool:
    """The mutant touches the library GEMM's release of `empty`: its arrives (one step
    late under `if k > 0`, and after the loop), their elect_one, the `if`, or the count."""
    t = _text(row)
    return row["target"] in LIBRARY and (
        "arrive(empty" in t or "mbarrier_init(empty" in t or row["before"] == "if k > 0:")


RULES: list[Rule] = [
    # ---- missed bugs (verifier clean, interpreter wrong)
    Rule("warned: not modelled (documented)", lambda r: _missed(r) and _library_release(r)
         and _new_warning(r, "protocol.unmodelled"),
         "A release of `empty` whose stage is no longer the pipelined release's X % S (e.g. "
         "the tail release of step KT - 1 taken modulo S - 1): docs/design/"
         "verifier-protocol.md, 'What is not checked': split releases other than the "
         "pipelined one are reported as protocol.unmodelled (the new warnings here), their "
         "arrival counts not checked. Gap to close: relate any affine stage index of a "
         "split release to the steps (or make an index not of the form X % S an error)."),
    Rule("not modelled (documented)", lambda r: _missed(r) and _library_release(r),
         "The library GEMM releases each stage in two places (one step late under `if k > "
         "0`, so one wgmma stays in flight, and once after the k loop), so the protocol "
         "pass neither counts the arrivals on `empty` nor checks their stage: "
         "docs/design/verifier-protocol.md, 'What is not checked': arrival counts split over "
         "several places are a protocol.unmodelled warning, which the unmutated kernel "
         "already carries (line 73 / 129). A release of the wrong stage, a wrong init count, "
         "a dropped or unelected release or a wrong `if` then deadlocks or over-arrives "
         "with no error. Gap to close: model the one-step-late release (stage (n - 1) % S at "
         "step n > 0, plus the tail release of step KT - 1) and count arrivals per phase "
         "across both sites (protocol.stage, protocol.arrival-count)."),
    Rule("verifier gap", lambda r: _missed(r) and r["operator"] == "stage_count"
         and "smem(" in r["before"] and "stages=(S - 1)" in r["after"],
         "The buffer has S - 1 stages but the ring indexes it with g % S, so stage S - 1 is "
         "out of range (the interpreter faults). No check compares a buffer's stage count "
         "with the stage indices used on it: protocol.stage relates stage indices to the "
         "barrier ring only, and the tag pass trusts the subscript. Should be caught by "
         "protocol.stage (or a resources bound check): every `buf[s]` needs s < stages."),
    Rule("verifier gap", lambda r: _missed(r) and r["operator"] == "drop_stmt"
         and r["before"].startswith('with elect_one("block")'),
         "Without elect_one(\"block\") every thread of the block runs mbarrier_init on the "
         "same barriers (the interpreter faults: initialised twice). The protocol pass "
         "checks the fence and the sync after the inits, not that each barrier is "
         "initialised once by one thread. Should be caught by a protocol.mbarrier-init "
         "check (init under elect_one, once per barrier)."),
    Rule("verifier gap", lambda r: _missed(r) and r["operator"] == "loop_bound"
         and r["before"].startswith("for s in range(S)"),
         "The init loop covers S + 1 or S - 1 barriers: an init past the array's end (the "
         "interpreter: mbarrier index out of range) or a barrier used without ever being "
         "initialised (the interpreter: try_wait before mbarrier.init). No check bounds "
         "barrier indices by the array length or requires every used barrier to be "
         "initialised. Should be caught by protocol.mbarrier-init-* (or a resources bound "
         "check)."),
    Rule("not modelled (documented)", lambda r: _missed(r) and r["operator"] == "drop_stmt"
         and r["before"].startswith("store("),
         "The only store of the output is gone, so the kernel writes nothing. The verifier "
         "does not know which tensors are outputs: store coverage is proved for tensors "
         "that are stored to (soundness statement: 'every element of a tensor that is stored "
         "to is meant to be written'), and a tensor with no store is not checked. Gap to "
         "close: report a tensor parameter that is neither read nor written."),
    Rule("warned: not modelled", lambda r: _missed(r) and r["target"] in LIBRARY + ("gemm",)
         and "wgmma(acc, tile(a_s" in r["after"],
         "The consumer's A sub-tile of the stage moved (another warpgroup's rows, a column "
         "offset, or out of the buffer). The tag pass cannot place the sub-tile and says so "
         "(a new tag.not-modelled warning at the wgmma, tag.assert-undischarged at the "
         "store), so the kernel is not verified, but nothing is an error. Gap: a sub-tile "
         "of a shared-memory buffer is not checked to lie inside the buffer (the interpreter "
         "rejects it), and a sub-tile coordinate the pass cannot model should be an error "
         "for the wgmma k/row checks rather than a warning."),
    Rule("warned: not modelled (documented)", lambda r: _missed(r)
         and r["operator"] in ("loop_bound", "index_arith")
         and ("schedule(" in r["before"] or r["before"].startswith("for "))
         and _new_warning(r, "protocol.unmodelled"),
         "Producer and consumer walk different numbers of tiles or key blocks, so the "
         "ring's roles run different numbers of steps. docs/design/verifier-protocol.md, "
         "'What is not checked': 'Liveness beyond parity: a ring whose roles run different "
         "numbers of steps is reported only as protocol.unmodelled' (the new warnings "
         "here). Gap to close: make unequal trip counts of the roles of one ring an error "
         "(a deadlock or an unread fill) unless proved equal."),
    Rule("verifier gap", lambda r: _missed(r) and r["target"] == "moe_grouped"
         and r["operator"] == "stage_index" and not r.get("new_warnings")
         and ("full[((s + 1) % S)]" in r["after"] or "empty[((s + 1) % S)]" in r["after"]),
         "In the MoE's filtered loop (the ring ops sit under `if w % BLOCKS == bid`) an "
         "expect_tx or TMA load names the barrier of the next stage, and the transaction "
         "bytes land on the wrong barrier (the interpreter: tx-count underflow). The protocol "
         "pass trusts the user's step `g` only for ops whose stage is written `g % S`; for "
         "other waits it promises protocol.unmodelled, but this expect_tx/TMA barrier index "
         "is skipped silently: no error, no warning. Should be caught by protocol.stage (or "
         "at least a protocol.unmodelled warning) on every ring op of a filtered loop."),
    Rule("warned: not modelled (documented)", lambda r: _missed(r)
         and r["target"] == "moe_grouped" and r["operator"] in ("stage_index", "stage_count")
         and _new_warning(r, "protocol.unmodelled"),
         "A ring op of the MoE's filtered loop uses a stage not written `g % S` (or the ring "
         "is shorter than S): docs/design/verifier-protocol.md, 'Filtered loops trust the "
         "user's step': such a wait is reported protocol.unmodelled (the new warning), its "
         "dependent checks skipped. Gap: a barrier subscript that can reach the array's "
         "length (mbarrier index out of range in the interpreter) is not an error."),
    Rule("assumed (documented)", lambda r: _missed(r) and r["target"] == "moe_grouped"
         and r["operator"] == "loop_bound" and not r["before"].startswith("for s in range(S)"),
         "One role of the MoE's ring walks more or fewer experts, m-tiles, n-tiles or "
         "k-steps than the other, so fills and waits stop matching (the interpreter "
         "deadlocks). In filtered loops the protocol pass takes the user's `g` as the step "
         "and trusts it 'to count the steps that run, in the same order in every role' "
         "(docs/design/verifier-protocol.md, 'What is assumed'), so nothing compares the "
         "two roles' loop nests and no warning is given. Gap to close: require the roles of "
         "one ring to have the same loop nest (or warn), as for unfiltered loops."),
    Rule("not modelled (documented)", lambda r: _missed(r)
         and r["target"] in ("flash_fwd", "moe_grouped") and r["operator"] == "layout"
         and "swizzle='none'" in r["after"],
         "An unswizzled stage read by wgmma: no descriptor reads that tile (the interpreter's "
         "exact mode faults; value mode cannot tell). For the GEMMs the tag pass's descriptor "
         "check catches this mutation (tag.descriptor), but on attention and MoE the tag "
         "pass stops at the ops it does not model (the unmutated kernel's warnings), so the "
         "check does not run. Gap: descriptor legality is a layout fact independent of the "
         "data flow and could be checked in the resource pass for every wgmma operand."),
    Rule("frontend gap", lambda r: _missed(r) and r["operator"] == "reduction"
         and r["after"].startswith("assign(") and any(
             "not a register fragment" in x["detail"] for x in r["runs"]),
         "assign() into a value that is not a fragment (an expression result) is accepted "
         "by the frontend and fails only in the interpreter; the frontend's typing rule of "
         "assign should reject it with the user's line."),
    Rule("not modelled (documented)", lambda r: _missed(r) and r["target"] == "flash_fwd",
         "The tag pass does not verify flash attention: row reductions, layout conversions, "
         "wgmma with A from registers and the online-softmax state are not modelled "
         "(soundness statement, 'Not checked / not modelled'; the unmutated kernel already "
         "carries those tag.not-modelled and tag.assert-undischarged warnings), and the "
         "attention invariants of issue 7 item 1 are not built. A clean verdict on this "
         "kernel covers only the protocol and resource checks, so a wrong K/V/Q tile, a "
         "wrong reduction, a stale max or a dropped rescale is not seen."),
    Rule("not modelled (documented)", lambda r: _missed(r) and r["target"] == "moe_grouped",
         "The tag pass does not verify the grouped MoE GEMM: index vectors, prefix sums and "
         "the data-dependent routing are not modelled (soundness statement; the unmutated "
         "kernel already carries tag.not-modelled warnings), and the MoE invariants of "
         "issue 7 item 2 are not built. A clean verdict covers only the protocol and "
         "resource checks."),
    # ---- flagged, every run correct
    Rule("not exercised (real bug)", lambda r: _flagged(r) and _errors(r, "protocol.stage")
         and r["operator"] == "stage_index",
         "A wait/arrive/TMA of the ring uses another stage than its step's, so a stage can "
         "be refilled before its release or read before its fill. The three interpreter "
         "schedules did not interleave the roles so that the early refill lands before the "
         "read; the verifier's counterexample names the step where it can."),
    Rule("not exercised (real bug)", lambda r: _flagged(r)
         and _errors(r, "protocol.arrival-count") and "arrive(empty" in _text(r),
         "A release of `empty` frees the stage of another step: one phase of the barrier "
         "gets its arrivals twice and another never, so the producer may refill a stage a "
         "wgmma is still reading (or wait forever at other trip counts). The interpreter's "
         "schedules did not interleave the roles so that the early refill lands before the "
         "read; the verifier's counterexample names the step."),
    Rule("not exercised (real bug)", lambda r: _flagged(r) and r["operator"] == "drop_stmt"
         and r["before"].startswith("with elect_one") and "tma_store(" in r["after"]
         and _errors(r, "tag.store-race"),
         "Without elect_one() every thread of the warpgroup issues the TMA store of the "
         "tile: 128 bulk stores write the same elements (the invariant 'no two threads "
         "write one element', tag.store-race), and the elected tma_store_wait retires only "
         "one thread's, so the others may still read the epilogue buffer when the next "
         "tile overwrites it. The interpreter's runs wrote identical data each time."),
    Rule("not exercised (assertion only)", lambda r: _flagged(r)
         and r["target"] in ("gemm_nn_cluster", "gemm_nt_chunks")
         and r["after"].startswith("dst = tile(C") and _errors(r, "tag.assert")
         and all(e.startswith(("tag.assert", "resources.index-overflow"))
                 for e in r["verifier_errors"]),
         "In the TMA-store epilogues `dst` feeds only the tag_assert (the tile goes to C "
         "through shared memory and TMA stores, whole or in 64-column blocks), so the "
         "mutated `dst` changes no write: the output stays right, and the user's assertion "
         "about `dst` is false, which is what the verifier reports (with, for coordinates "
         "that grow, resources.index-overflow on `dst`'s own elements near 2^31)."),
    Rule("not exercised (hardware ordering)", lambda r: _flagged(r)
         and _errors(r, "protocol.cluster-exit-sync"),
         "Without the final cluster_sync() a block may exit while its peer still "
         "multicasts into its shared memory or arrives on its barriers: undefined on the "
         "GPU (the peer's shared memory may already belong to another block), but the "
         "interpreter keeps every block's shared memory alive until the kernel ends, so "
         "its runs cannot show it."),
    Rule("not exercised (other inputs)", lambda r: _flagged(r) and r["target"] == "flash_fwd"
         and _errors(r, "tag.softmax-exp"),
         "The running max is taken over the unmasked scores (masked keys included), so p "
         "stays at most 1 but is no longer relative to the max of the values it "
         "exponentiates: a row whose masked-out keys score far above its visible ones "
         "underflows to an all-zero p and 0 / 0. Random normal inputs never do that; the "
         "verifier's tag.softmax-exp states the invariant."),
    Rule("not exercised (wasted work)", lambda r: _flagged(r) and r["target"] == "flash_fwd"
         and _errors(r, "tag.mask-block"),
         "The key loop visits one block past the diagonal, whose keys are all masked for "
         "every row (and, for the last query block, lie past T: TMA reads zeros): the "
         "output is unchanged, the work wasted. tag.mask-block requires the causal loop to "
         "skip exactly the fully masked blocks, so this is reported by design."),
    Rule("not exercised (other sizes)", lambda r: _flagged(r) and r["target"] == "moe_grouped"
         and r["operator"] == "coord_name" and "bid" in r["after"],
         "The n-tile coordinate became the block id. At the interpreter's sizes N / BN == "
         "BLOCKS == 2 and the grouped loop gives block b exactly the tiles with tn == b, "
         "so the two agree; at other sizes (N = 384, or another block count) the wrong "
         "columns are read or written, which the verifier shows symbolically."),
    Rule("not exercised (verification statement)", lambda r: _flagged(r)
         and r["target"] == "moe_grouped" and r["operator"] == "loop_bound"
         and _errors(r, "tag.routing"),
         "The loop that states the routing's guarantees (`assume(tag(...).expert == e)`, "
         "no generated code) now skips the last expert: the kernel is unchanged, so every "
         "run is correct, but the verifier is told less and can no longer prove that each "
         "expert's rows meet only its own weights (tag.routing)."),
    Rule("false alarm", lambda r: _flagged(r) and r["operator"] == "stage_count"
         and "mbarrier((S + 1))" in r["after"] and _errors(r, "protocol.stage"),
         "The barrier array has one unused extra barrier; every op still uses g % S with "
         "parity (g // S) & 1 on an S-ring, which is correct. protocol.stage takes the "
         "ring's size from the length of the mbarrier array instead of from the stage "
         "expression. Harmless in practice (nobody allocates an unused barrier) but a "
         "false alarm: the check should take the ring size as the modulus of the stage "
         "expression, or warn that the array is larger than the ring."),
    Rule("not exercised (hardware ordering)", lambda r: _flagged(r)
         and _errors(r, "protocol.mbarrier-init"),
         "Dropping fence_mbarrier_init() after the inits is a real bug on the GPU (the "
         "async proxy, i.e. TMA completing transactions, may see an uninitialised "
         "barrier), but the interpreter makes every init visible at once "
         "(argus/interp/ops/sync.py), so its runs cannot show it; the verifier is right."),
    Rule("not exercised (other sizes)", lambda r: _flagged(r)
         and (_errors(r, "resources.index-overflow") or _errors(r, "tag.store-coverage")),
         "The changed tile count is wrong only at other sizes: an extra tile row past M "
         "(its loads read zeros, its stores are dropped; resources.index-overflow is right "
         "that its coordinates can wrap int32 near M = 2^31), or a missing last tile row "
         "when M % BM is 1 (tag.store-coverage's counterexample, e.g. M = 129). The "
         "interpreter's M = 200 shows neither; the verifier's sizes do."),
]


def explain(row: dict) -> Rule | None:
    for rule in RULES:
        if rule.applies(row):
            return rule
    return None
