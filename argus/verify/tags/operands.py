"""Reading a wgmma shared-memory operand: which producer step filled the stage, and which
tensor element each (row, k) of every instruction reads.

Pipelines. A consumer read of stage s_c of buffer X must be preceded (in its own loop
iteration, or outside its loop) by a wait on the barrier array that X's TMA writer
completes on, at index x_c. Three equalities are proved for every value of every
variable: writer stage == writer barrier index, x_c == s_c, and s_c == the writer's stage
at the same step. Loops of the same shape share their counters across roles, so the
last equality says that the consumer's step reads the fill of the producer's step with
the same counters: the n-th wait on a stage then meets the n-th fill, provided the
barrier phases are right, which the protocol pass checks (the parity of the wait).

Layout. For instruction j (K of one wgmma: 32 bytes of k) the descriptor is the one the
backend builds: `descriptor_for` of the view's operand layout (tma.StageLayout.operand,
the backend's convention) at k0 = j * K_instr; `read_layout` says which byte the hardware
reads for (mn, kk); inverting the stage layout gives the (row, col) that byte holds. It
must be the element the operand means: (mn, kk) of a K-major view, (kk, mn) of an
MN-major one. An unswizzled buffer (which the backend refuses for wgmma) is read the way
a descriptor of that mode reads: 8 x 16-byte core matrices.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import z3

from argus.layout.hopper import (DescriptorError, SmemLayoutError, descriptor_for,
                                 instruction_k, read_layout, smem_operand)
from argus.verify.finding import ElementTag, Finding
from argus.verify.smt import bv, concrete, holds, narrow, value

from . import heads, meet, report, segments, symmetric
from .tma import stage_layout
from .values import SmemView, Writer


@dataclass
class OperandTags:
    """Per instruction j: terms over (mn var, kk var) and the scope."""
    tensor: str
    mn: list
    k: list
    inside: list          # the element lies inside the tensor (else TMA filled a zero)
    k_extent: object
    kinstr: int
    fields: list = field(default_factory=list)   # per j: routing fields (meet.py) and live
    mn_real: object = None  # the mn coordinate is a real row/column of the tensor (no kk)
    k_window: object = None  # MN-major: the segment window of the k axis (rows), if any


def read(w, op, view: SmemView, major: str, mn_extent: int, k_total: int, name: str,
         mn_var) -> OperandTags | None:
    from . import bands
    if bands.needed(w, view):      # bands, multicast, several loads: bands.py
        return bands.read(w, op, view, major, mn_extent, k_total, name, mn_var)
    writer = _writer(w, op, view, name)
    if writer is None or not _stage_ok(w, op, view, writer, name):
        return None
    return _layout(w, op, view, writer, major, mn_extent, k_total, name, mn_var)


def _writer(w, op, view, name) -> Writer | None:
    writers = [x for x in w.writers if x.view.buffer.name == view.buffer.name]
    if len(writers) != 1:
        why = ("no TMA load writes it" if not writers else
               f"{len(writers)} TMA loads write it (one writer per buffer is modelled)")
        w.not_modelled(op, f"operand {name} reads {view.buffer.name}: {why}")
        return None
    x = writers[0]
    if x.view.offset != (0, 0) or x.view.shape != x.view.buffer.shape:
        w.not_modelled(op, "TMA loads into part of a stage")
        return None
    if not set(x.scope) <= set(w.scope_vars()):
        w.not_modelled(op, f"the loops around the TMA load at line {x.loc.line} do not match "
                           "the loops around the read")
        return None
    return x


def _stage_ok(w, op, view, writer, name) -> bool:
    buf = view.buffer.name
    scope = w.scope_vars()
    if not meet.same_filter(w, op, writer, name):
        return False
    # the writer: the stage it fills is the one its barrier stands for
    model = None
    if not holds(w.ctx, bv(writer.view.stage) == bv(writer.barrier.index), w.path):
        model = report.find(w, bv(writer.view.stage) != bv(writer.barrier.index), writer.scope)
    if model is not None:
        cex = report.counterexample(w, model, writer.scope)
        w.report(Finding(
            "tag.stage", "error",
            f"the TMA load fills stage {value(model, writer.view.stage)} of {buf} but "
            f"completes {writer.barrier.array}[{value(model, writer.barrier.index)}]",
            writer.loc, "tma_load",
            f"index the buffer and its barrier with the same stage: "
            f"tma_load({buf}[s], ..., {writer.barrier.array}[s])", cex))
        return False
    waited = w.waits_on(writer.barrier.array)
    if waited is None:
        w.report(Finding(
            "tag.stage", "error",
            f"wgmma reads {buf} (operand {name}) without a wait on {writer.barrier.array}, "
            f"the barrier its TMA load (line {writer.loc.line}) completes", op.loc, "wgmma",
            f"wait({writer.barrier.array}[s], phase) before reading {buf}[s]"))
        return False
    bar, wloc = waited
    checks = ((bv(view.stage) == bv(bar.index),
               lambda m: (f"wgmma reads stage {value(m, view.stage)} of {buf} (operand {name}) "
                          f"but the wait at line {wloc.line} was on "
                          f"{bar.array}[{value(m, bar.index)}]"),
               f"read {buf}[s] with the s of the wait at line {wloc.line}"),
              (bv(view.stage) == bv(writer.view.stage),
               lambda m: (f"wgmma reads stage {value(m, view.stage)} of {buf} (operand {name}) "
                          f"but at this step the producer (line {writer.loc.line}) fills "
                          f"stage {value(m, writer.view.stage)}"),
               "compute the stage from the same step counter in producer and consumer"))
    for claim, say, hint in checks:
        if holds(w.ctx, claim, w.path):
            continue
        model = report.find(w, z3.Not(claim), scope)
        if model is None:
            continue
        cex = report.counterexample(w, model, scope, warpgroup=w.role.warpgroup if w.role else None,
                                    barrier=f"{bar.array}[{value(model, bar.index)}]")
        w.report(Finding("tag.stage", "error", f"{say(model)}",
                         op.loc, "wgmma", hint, cex))
        return False
    return True


def _descriptor_operand(stage, row0, rows, major):
    """The operand the descriptor describes, and a note when it is not the backend's."""
    if stage.swizzle != "none":
        return stage.operand(row0, rows, major), None
    # the backend does not generate unswizzled operands; a descriptor of that mode reads
    # the canonical layout of 8 x 16-byte core matrices
    mn, k = (rows, stage.cols) if major == "K" else (stage.cols, rows)
    try:
        return (smem_operand(mn, k, stage.element_bytes, major, "none", base=row0 * stage.span),
                "the backend does not generate unswizzled wgmma operands either")
    except SmemLayoutError as err:
        return None, str(err)


def _layout(w, op, view, writer, major, mn_extent, k_total, name, mn_var) -> OperandTags | None:
    buf = view.buffer
    stage = stage_layout(buf)
    # the band's first row: a constant, or (one walk for every warpgroup, symmetric.py)
    # a term of the warpgroup index: its layout claims are proved at each index's row
    bands = symmetric.instances(w, view.offset[0])
    if stage is None or bands is None or concrete(view.offset[1]) != 0 \
            or view.shape[1] != buf.shape[1]:
        w.not_modelled(op, f"operand {name}: a view that is not a band of whole rows at a "
                           f"static row, or a stage of {buf.name} that is not whole chunks")
        return None
    rows = view.shape[0]
    for wg, row0 in bands:
        if not _band_layout(w, op, stage, buf, writer.src, row0, rows, major, mn_extent,
                            k_total, name, mn_var, wg):
            return None
    row0 = concrete(view.offset[0])
    row0 = view.offset[0] if row0 is None else row0
    kinstr = instruction_k(buf.element_bytes)
    kk = w.pos["kk"]
    src = writer.src
    mn_terms, k_terms, inb_terms, fields = [], [], [], []
    for j in range(k_total // kinstr):
        k0 = j * kinstr
        want_r, want_c = ((row0 + mn_var, k0 + kk) if major == "K" else (row0 + k0 + kk, mn_var))
        t0 = segments.row_at(src, want_r)
        t1 = bv(src.origin[1]) + bv(want_c)
        tag1 = heads.tile_column(w, src, want_c)    # a declared head's: its KV head's column
        mn_terms.append(t0 if major == "K" else tag1)
        k_terms.append(tag1 if major == "K" else t0)
        inb_terms.append(segments.inside(src, (t0, t1), w))
        fields.append(meet.operand_fields(w, src, want_r, t0, t1))
    k_extent = heads.extent(w, src.tensor, 1, src.extents[1]) if major == "K" else \
        src.extents[0]
    return OperandTags(src.tensor, mn_terms, k_terms, inb_terms, k_extent, kinstr, fields,
                       _mn_real(w, src, major, row0 + mn_var if major == "K" else None,
                                mn_terms[0] if mn_terms else None),
                       getattr(src, "window", None) if major == "MN" else None)


def _band_layout(w, op, stage, buf, src, row0: int, rows, major, mn_extent, k_total, name,
                 mn_var, wg) -> bool:
    """Every k-step's descriptor reads, for (mn, kk), the element (row0 + mn, k0 + kk) of
    the stage (K-major; MN-major transposed): proved, else reported (False). `wg`: the
    warpgroup index this band's row belongs to when the walk stands for every warpgroup."""
    eb = buf.element_bytes
    operand, note = _descriptor_operand(stage, row0, rows, major)
    if operand is None:
        w.not_modelled(op, note)
        return False
    kinstr = instruction_k(eb)
    kk = w.pos["kk"]
    proved = w.__dict__.setdefault("_descriptor_proofs", set())
    _prove_all_steps(w, stage, operand, buf, row0, rows, major, mn_extent, k_total, kinstr,
                     eb, mn_var, proved)
    for j in range(k_total // kinstr):
        k0 = j * kinstr
        want_r, want_c = ((row0 + mn_var, k0 + kk) if major == "K" else (row0 + k0 + kk, mn_var))
        # a layout fact: proved once per walker for every read of the same band
        key = _proof_key(w, buf, row0, rows, major, mn_extent, j, mn_var)
        free = _proof_key(w, buf, row0, rows, major, mn_extent, j, mn_var, path=False)
        if key in proved or free in proved:
            continue
        try:
            read_at = read_layout(descriptor_for(operand, k0), eb, major, mn_extent)
        except (DescriptorError, SmemLayoutError, ValueError) as err:
            w.not_modelled(op, f"the descriptor of operand {name}: {err}")
            return False
        addr = bv(read_at((narrow(mn_var, 16), narrow(kk, 16))))
        r, c, fits = stage.element_at(addr)
        ok = z3.And(fits, z3.ULT(r, stage.rows), r == bv(want_r), c == bv(want_c))
        bounds = [z3.ULT(mn_var, mn_extent), z3.ULT(kk, kinstr)]
        if _proved(w, ok, bounds, ([free], [key]), proved):
            continue
        model = report.find(w, z3.Not(ok), w.scope_vars(), bounds, minimise_first=(mn_var, kk))
        if model is None:
            continue
        mn_v, kk_v = value(model, mn_var), value(model, kk)
        got = (value(model, r), value(model, c))
        want = (value(model, want_r), value(model, want_c))
        byte = value(model, addr)
        o0, o1 = value(model, bv(src.origin[0])), value(model, bv(src.origin[1]))
        exp = {"row": o0 + want[0], "col": o1 + want[1]}
        act = {"row": o0 + got[0], "col": o1 + got[1]}
        group = None if not w.role else \
            w.role.warpgroup if wg is None else symmetric.warpgroup(w.role.warpgroups, wg)
        cex = report.counterexample(
            w, model, w.scope_vars(), warpgroup=group, smem_byte=byte,
            elements=(ElementTag(f"{buf.name}[stage]", want, act, exp),),
            extra_iter={"instruction": j})
        detail = f"; {note}" if note else ""
        w.report(Finding(
            "tag.descriptor", "error",
            f"wgmma operand {name} ({major}-major, {buf.swizzle} swizzle) reads "
            f"{src.tensor}[{act['row']}, {act['col']}] at {buf.name} byte {byte} where it "
            f"means {src.tensor}[{exp['row']}, {exp['col']}] (element ({mn_v}, {kk_v}) of "
            f"k-step {j}): the TMA box and the descriptor disagree on the layout{detail}",
            op.loc, "wgmma", _hint(buf, major, name), cex))
        return False
    return True


def _mn_real(w, src, major, box_row, mn):
    """The operand's mn coordinate names a real row (K-major: inside the tensor and its
    segment, or a live gathered row) or a real column (MN-major: inside the tensor), with
    kk at 0 (the mn coordinate does not move with kk)."""
    if mn is None:
        return None
    kk0 = [(w.pos["kk"], z3.BitVecVal(0, 64))]
    if major == "K" and segments.padded(src):
        # a live gathered row, or a row of the segment's window: a segment lies inside its
        # tensor (within.py proves start + rows <= the tensor's rows, else reports it)
        real = segments.live(src, box_row, mn)
    elif major == "K":
        real = z3.ULT(bv(mn), bv(src.extents[0]))
    else:
        real = z3.ULT(bv(mn), bv(src.extents[1]))
    return z3.substitute(real, *kk0)


def _proof_key(w, buf, row0, rows, major, mn_extent, j, mn_var, path=True) -> tuple:
    """What a proved layout claim of k-step j depends on: the stage's layout (shape,
    element size, swizzle: tma.stage_layout), the band and the step, and the path (by its
    s-expressions: z3's pretty printer, str(), is slow on the MoE's routing terms) unless
    the claim was proved without it (then it holds on every path, for every buffer of
    that layout)."""
    key = (buf.shape, buf.element_bytes, buf.swizzle, row0, rows, major, mn_extent, j,
           str(mn_var))
    return (buf.name, *key, _path_key(w)) if path else key


def _path_key(w) -> tuple:
    """The path's conditions by their s-expressions, each printed once per walker."""
    memo = w.__dict__.setdefault("_sexpr_of", {})
    out = []
    for p in w.path:
        got = memo.get(p.get_id())
        if got is None:
            got = memo[p.get_id()] = (p, p.sexpr())    # p kept alive: its id stays its own
        out.append(got[1])
    return tuple(out)


def _proved(w, claim, bounds, keys, proved) -> bool:
    """The layout claim holds: first on its own (for every path: the keys without the
    path are then proved), else under the path."""
    free, on_path = keys
    if holds(w.ctx, claim, bounds):
        proved.update(free)
        return True
    if holds(w.ctx, claim, [*w.path, *bounds]):
        proved.update(on_path)
        return True
    return False


def _prove_all_steps(w, stage, operand, buf, row0, rows, major, mn_extent, k_total, kinstr,
                     eb, mn_var, proved) -> None:
    """The layout claims of every k-step of the wgmma in one query (adding their keys to
    `proved`); the caller checks the steps one by one only when this does not go through,
    to name the step that fails."""
    kk = w.pos["kk"]
    keys, frees, claims = [], [], []
    for j in range(k_total // kinstr):
        key = _proof_key(w, buf, row0, rows, major, mn_extent, j, mn_var)
        free = _proof_key(w, buf, row0, rows, major, mn_extent, j, mn_var, path=False)
        if key in proved or free in proved:
            continue
        k0 = j * kinstr
        try:
            read_at = read_layout(descriptor_for(operand, k0), eb, major, mn_extent)
        except (DescriptorError, SmemLayoutError, ValueError):
            return                      # the step-by-step loop reports it
        want_r, want_c = ((row0 + mn_var, k0 + kk) if major == "K" else (row0 + k0 + kk, mn_var))
        r, c, fits = stage.element_at(bv(read_at((narrow(mn_var, 16), narrow(kk, 16)))))
        claims.append(z3.And(fits, z3.ULT(r, stage.rows), r == bv(want_r), c == bv(want_c)))
        keys.append(key)
        frees.append(free)
    if len(claims) > 1:
        _proved(w, z3.And(*claims), [z3.ULT(mn_var, mn_extent), z3.ULT(kk, kinstr)],
                (frees, keys), proved)


def _hint(buf, major, name) -> str:
    rows, cols = buf.shape
    row_bytes = cols * buf.element_bytes
    fit = {16: "none", 32: "32B", 64: "64B", 128: "128B"}.get(row_bytes)
    if major == "MN" and name == "b":
        return ("the tile was written K-major (N x K rows of k); pass b_major='k', or load "
                "a K x N tile for b_major='mn'")
    if fit and fit != buf.swizzle:
        return (f"{buf.name} rows are {row_bytes} bytes: declare it with swizzle=\"{fit}\" so "
                f"the TMA box and the wgmma descriptor use one layout")
    return "make the smem tile a whole number of swizzle atoms of its swizzle mode"
