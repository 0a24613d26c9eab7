"""The MoE layer's host path per call (argus.ops.moe): what a call checks, looks up,
allocates and launches, worked out once per layer and reused.

A decode layer is bound by the host, not the GPU: on an H100 machine (2026-12-07) a T = 1
call of the fine-grained layer took ~300 us of host time for 119 us of GPU time
(benchmarks/results/moe-decode-diag-20261207-s28-h100.json): the dispatcher, the checks
twice, six kernel lookups, nine allocations and six launches that each re-read every
tensor's address, shape and strides. Here:

- `Plan`, one per layer: the tensors' shapes, strides, dtypes and device, top_k, the flags
  and the switches that choose the kernels (`plan_key`; a new key runs `check_layer`,
  everything it reads is in the key), and the launchers (five or six), looked up once.
- The intermediates (expert choices, counts, slots, H, the down projection's rows): a
  decode batch's (T <= DECODE_T: at most a few MB) are kept per (plan, stream, thread) and
  reused by the next call there, whose kernels the stream runs after the previous call's
  (two threads on one stream would interleave their launches: each has its own set);
  a prefill call, or one being captured into a CUDA graph (which must own its memory),
  allocates its own.
- The launches: `Launcher.launch_keyed` with a key of the plan, the kept buffers' tag
  and the addresses of the call's own tensors that the launch reads or writes, which fix
  all that the launcher's own signature would read (the plan fixes shapes, strides, dtypes
  and device; the tag, the buffers' addresses). Calls on fresh buffers launch with the
  launcher's own checks.
"""

from __future__ import annotations

import itertools
import threading

DECODE_T = 64                 # up to this many tokens: a decode batch (argus.ops.moe)
PLAN_LIMIT = 256              # plans kept (layers x switch settings), oldest dropped first
KEPT_LIMIT = 16               # buffer sets kept (plans x streams x threads), likewise
_lock = threading.Lock()
_plans: dict[tuple, "Plan"] = {}
_kept: dict[tuple, "Buffers"] = {}
_tags = itertools.count(1)


def plan_key(x, router_logits, w13, w2, top_k, renormalize, deterministic, switches):
    """Everything check_layer reads of a call (shape, strides, dtype, device of each tensor;
    top_k's type and value), the flags and `switches` (what else decides the kernels);
    None when an argument is not a tensor."""
    import torch

    key = [type(top_k), top_k, bool(renormalize), bool(deterministic), switches]
    for t in (x, router_logits, w13, w2):
        if type(t) is not torch.Tensor:
            return None
        # is_cuda and get_device() name the device (device.type would build a torch.device
        # per tensor per call: 0.3 us each)
        key += (t.shape, t.stride(), t.dtype, t.is_cuda, t.get_device())
    return tuple(key)


def plan_for(key, build) -> "Plan":
    """The Plan under `key` (plan_key's), or `build()`'s, kept under it (a None key: a call
    whose arguments the checks will refuse, never kept)."""
    plan = _plans.get(key) if key is not None else None
    if plan is None:
        plan = build()
        if key is not None:
            with _lock:
                if len(_plans) >= PLAN_LIMIT:
                    _plans.pop(next(iter(_plans)))
                _plans[key] = plan
    return plan


class Buffers:
    """The intermediates of one call: expert choices and their weights, counts per expert,
    the slots sorted by expert (ids: token of each slot; slots: the sorted position of each
    (choice, token); wsorted: the weight of each sorted slot), H and the down projection's
    rows; the router's fp32 logits when the given ones are of another dtype; the atomic
    combine's fp32 sum. `tag` is unique to this set (keys of keyed launches)."""

    def __init__(self, plan, device):
        import torch

        p, e = plan.t * plan.top_k, plan.e
        i32 = {"dtype": torch.int32, "device": device}
        f32 = {"dtype": torch.float32, "device": device}
        self.experts = torch.empty(p, **i32)
        self.gates = torch.empty(p, **f32)
        self.counts = torch.empty(e, **i32)
        self.ids = torch.empty(p, **i32)
        self.slots = torch.empty(p, **i32)
        self.wsorted = torch.empty(p, **f32)
        self.h = torch.empty((p, plan.inter), dtype=plan.torch_dtype, device=device)
        self.yd = torch.empty((p, plan.hidden), dtype=plan.torch_dtype, device=device)
        self.logits = None if plan.logits_ready else torch.empty((plan.t, e), **f32)
        self.acc = None if plan.deterministic else torch.empty((plan.t, plan.hidden), **f32)
        self.tag = next(_tags)
        self.graphs = None            # a kept set's moe_graphs.Graphs, made on first use

    def named(self) -> dict:
        """{name: tensor} of the intermediates (a diagnosis checks each launch's output)."""
        return {name: getattr(self, name) for name in
                ("experts", "gates", "counts", "ids", "slots", "wsorted", "h", "yd")}


class Plan:
    """One layer: its sizes, its launchers, and the launches of a call."""

    def __init__(self, sizes, top_k, deterministic, torch_dtype, logits_ready, specs,
                 graphs=False):
        """sizes: (T, H, E, I) as check_layer found them; specs: kernels_for's (module,
        kernel, overrides) of each role; logits_ready: the router logits are fp32; graphs:
        a decode call's launches before the combine replayed as a CUDA graph
        (moe_graphs.py)."""
        from .library import library_kernel

        self.t, self.hidden, self.e, self.inter = sizes
        self.graphs = bool(graphs)
        self.top_k, self.deterministic = top_k, bool(deterministic)
        self.torch_dtype = torch_dtype
        self.logits_ready = logits_ready
        self.decode = self.t <= DECODE_T
        self.id = next(_tags)
        self.launch = {role: library_kernel(module, name, **ov)
                       for role, (module, name, ov) in specs.items()}

    # ---- a call ----------------------------------------------------------------------
    def buffers(self, x) -> tuple["Buffers", bool]:
        """(the call's intermediates, whether they are kept): a decode batch's kept set for
        the current stream, unless the stream is being captured; else a fresh set."""
        if not self.decode:
            return Buffers(self, x.device), False
        stream = None               # the interpreter runs each launch to its end
        if x.is_cuda:
            import torch

            if torch.cuda.is_current_stream_capturing():
                return Buffers(self, x.device), False
            from argus.runtime.launch import current_stream_handle
            stream = current_stream_handle(torch)
        key = (self.id, stream, threading.get_ident())   # a thread's launches in order
        kept = _kept.get(key)
        if kept is None:
            kept = Buffers(self, x.device)
            with _lock:
                if len(_kept) >= KEPT_LIMIT:
                    _kept.pop(next(iter(_kept)))
                _kept[key] = kept
        return kept, True

    def steps(self, x, router_logits, w13, w2, bufs: "Buffers", keyed: bool, out):
        """[(role, launch)]: the call's launches in order, each a no-argument callable on the
        current stream; keyed launches when `bufs` is a kept set."""
        e, hidden, inter = self.e, self.hidden, self.inter
        b = bufs
        if b.logits is not None:
            logits_in, logits = router_logits, b.logits
        else:
            logits_in, logits = None, router_logits

        keys = None
        if keyed:       # each launch's key: the plan, the kept set, the call's own tensors
            base = ("moe", self.id, b.tag)
            keys = {"topk": base + ("topk", logits.data_ptr()), "count": base + ("count",),
                    "place": base + ("place",),
                    "gate_up": base + ("gate_up", x.data_ptr(), w13.data_ptr()),
                    "down": base + ("down", w2.data_ptr()),
                    "combine": base + ("combine", out.data_ptr())}

        def run(role, tensors):
            """The launch of `role` on tensors(), under its key when the set is kept."""
            launcher = self.launch[role]
            if keys is not None:
                key = keys[role]
                return lambda: launcher.launch_keyed(key, tensors)
            return lambda: launcher(*tensors())

        def w1():
            return w13[0].view(e * inter, hidden)

        def w3():
            return w13[1].view(e * inter, hidden)

        topk = run("topk", lambda: (logits, b.experts, b.gates))
        if logits_in is not None:           # the router reads fp32 logits
            route = topk

            def topk():
                logits.copy_(logits_in)
                route()
        # a decode batch's place counts the entries itself (argus.ops.moe.counts_in_place)
        count = [("count", run("count", lambda: (b.experts, b.counts)))] \
            if "count" in self.launch else []
        steps = [("topk", topk), *count,
                 ("place", run("place", lambda: (b.experts, b.gates, b.counts, b.ids, b.slots,
                                                 b.wsorted))),
                 ("gate_up", run("gate_up", lambda: (x, w1(), w3(), b.ids, b.counts, b.h))),
                 ("down", run("down", lambda: (b.h, w2.view(e * hidden, inter), b.counts,
                                               b.wsorted, b.yd)))]
        if self.deterministic:
            steps.append(("combine", run("combine", lambda: (b.yd, b.slots, out))))
        else:
            add = run("combine", lambda: (b.yd, b.slots, b.acc))

            def combine():          # fp32 atomic adds into a zeroed buffer, then rounded
                b.acc.zero_()
                add()
                out.copy_(b.acc)
            steps.append(("combine", combine))
        return steps

    def run(self, x, router_logits, w13, w2):
        """The layer's output, its launches enqueued on the current stream."""
        out = x.new_empty((self.t, self.hidden))
        if self.t == 0:
            return out
        bufs, keyed = self.buffers(x)
        steps = self.steps(x, router_logits, w13, w2, bufs, keyed, out)
        if keyed and self.graphs and x.is_cuda:
            # everything but the combine (it writes this call's fresh output) as one graph,
            # keyed by the addresses of the inputs those launches read
            if bufs.graphs is None:
                from .moe_graphs import Graphs, cuda_capture
                bufs.graphs = Graphs(cuda_capture)
            head = [step for role, step in steps if role != "combine"]
            key = (x.data_ptr(), router_logits.data_ptr(), w13.data_ptr(), w2.data_ptr())
            bufs.graphs.run(key, lambda: [step() for step in head])
            steps = [(role, step) for role, step in steps if role == "combine"]
        for _, step in steps:
            step()
        return out
