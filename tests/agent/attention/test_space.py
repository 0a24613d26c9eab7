"""The attention knob space: admissible values per shape, each static refusal with its
reason, canonical configurations, the build probe's refusals (a fake builder here; one real
build when a CUDA compiler is present), and what argus.ops.attention runs by default."""
import pytest

from argus.agent.attention.config import AttentionConfig
from argus.agent.attention.space import (AttentionSpace, build_spec, compiler_available,
                                         register_estimate, specialisation, static_rule)
from argus.agent.attention.task import AttentionTask

D128 = AttentionTask(4, 16, 16, 4096, 4096, 128)
D64 = AttentionTask(16, 16, 16, 1024, 1024, 64)


def space():
    return AttentionSpace(build_check=False)


def test_admissible_values_depend_on_the_head_dim():
    v128, v64 = space().values(D128), space().values(D64)
    assert v128["BN"] == v64["BN"] == (32, 64, 128)      # 256 spills, 176 and 192 fail
    assert space().values(AttentionTask(1, 1, 1, 128, 128, 64))["S"] == (2, 3, 4)
    assert v128["S"] == (2, 3, 4) and v128["MASK"] == ("edge", "all")
    assert all(v128[k] == (0, 1) for k in ("SPLIT_KV", "FOLD_SCALE", "OVERLAP", "LPT"))


@pytest.mark.parametrize("cfg, task, rule, words", [
    (AttentionConfig(BN=176), D64, "bn-power-of-two", "BN=176 is not a power of two"),
    (AttentionConfig(BN=192), D128, "bn-power-of-two", "does not compile"),
    (AttentionConfig(BN=128, S=4), D128, "shared-memory", "over the 232448 B"),
    (AttentionConfig(BN=256, S=2), D128, "shared-memory", "2 stages of K and V 256x128"),
    (AttentionConfig(BN=128, OVERLAP=1), D128, "registers", "about 224 registers"),
    (AttentionConfig(BN=256, S=2), D64, "registers", "use a smaller BN"),
    (AttentionConfig(S=5), D64, "knob-table", "S=5 is not a value"),
    (AttentionConfig(MASK="none"), D64, "knob-table", "MASK='none'"),
])
def test_static_refusals_name_the_rule_and_the_fix(cfg, task, rule, words):
    got_rule, why = static_rule(cfg, task)
    assert got_rule == rule and words in why
    assert not space().accepts(cfg, task)
    assert space().why_invalid(cfg, task) == ("refused", [why])


def test_the_shipped_configurations_are_accepted():
    for task in (D128, D64, AttentionTask(1, 2, 2, 64, 64, 64, True)):
        default = space().library_default(task)
        assert space().accepts(default, task), default
    assert space().library_default(D128) == AttentionConfig(BN=128, S=3)
    assert space().library_default(D64) == AttentionConfig(BN=128, S=3)
    decode = AttentionTask(4, 32, 8, 16, 4096, 128, False)
    assert space().library_default(decode) == AttentionConfig(BN=128, S=3, WGS=1)
    assert space().accepts(AttentionConfig(BN=128, S=3, WGS=1), decode)
    assert not space().accepts(AttentionConfig(BN=128, S=3, WGS=1), D128)


def test_register_estimate_counts_the_second_accumulator_of_overlap():
    assert register_estimate(AttentionConfig(BN=128), D128) == 64 + 64 + 32
    assert register_estimate(AttentionConfig(BN=128, OVERLAP=1), D128) == 224


def test_overlap_configurations_are_one_kernel_whatever_mask_says():
    s = space()
    a = s.canonical(AttentionConfig(BN=64, OVERLAP=1, MASK="all"), D128)
    assert a == AttentionConfig(BN=64, OVERLAP=1, MASK="edge")
    keys = [c.key() for c in s.all_accepted(D128)]
    assert len(keys) == len(set(keys)) == 176
    assert not any(c.OVERLAP and c.MASK == "all" for c in s.all_accepted(D128))
    # every knob combination three times over HEAD_GROUP (1, 4, 8); a head group is refused
    # on this persistent (non-causal) shape, so the rules after it count HEAD_GROUP = 1 only
    assert s.refusals(D128) == {"decode-tile": 1728, "head-group": 1152, "bn-power-of-two": 192,
                                "shared-memory": 128, "registers": 32}


def test_a_head_group_is_a_causal_bhsd_knob_that_divides_the_heads():
    """HEAD_GROUP (g heads' query blocks interleaved on grid x) takes the grid of one tile a
    block (causal: the persistent grid is not), the bhsd layout and a head count it divides."""
    s = space()
    causal = AttentionTask(4, 16, 16, 4096, 4096, 128, True)
    assert s.accepts(AttentionConfig(S=3, LPT=1, HEAD_GROUP=8), causal)
    assert s.values(causal)["HEAD_GROUP"] == (1, 4, 8)
    assert "PERSIST)" in s.refusal(AttentionConfig(S=3, HEAD_GROUP=4), D128)   # persistent
    bshd = AttentionTask(4, 16, 16, 4096, 4096, 128, True, layout="bshd")
    assert s.refusal(AttentionConfig(S=3, HEAD_GROUP=4), bshd)
    odd = AttentionTask(1, 12, 12, 4096, 4096, 128, True)                        # 12 heads
    assert s.accepts(AttentionConfig(S=3, HEAD_GROUP=4), odd)
    assert s.refusal(AttentionConfig(S=3, HEAD_GROUP=8), odd)


def test_the_specialisation_is_the_ops_one():
    module, name, constants = specialisation(AttentionConfig(BN=64, S=3), D128)
    c = dict(constants)
    assert (module, name) == ("attention", "attention_bhsd")
    assert c["BN"] == 64 and c["S"] == 3 and c["HD"] == 128 and c["G"] == 1 and c["CAUSAL"] == 0
    assert c["SCALE_LOG2"] == (1.0 / 128 ** 0.5) * 1.4426950408889634
    assert c["PERSIST"] == 1                          # the shape class's structural knob


@pytest.mark.parametrize("task", [D128, D64, AttentionTask(2, 16, 16, 2048, 2048, 64, True),
                                  AttentionTask(4, 32, 8, 16, 4096, 128, False),
                                  AttentionTask(4, 16, 16, 4096, 4096, 128, True)])
def test_the_library_default_builds_what_the_op_runs(monkeypatch, task):
    """The planner's library default and argus.ops.attention's plan specialise the same
    kernel with the same constants, the structural knobs (persistent grid, blocks an SM)
    included."""
    import importlib

    op = importlib.import_module("argus.ops.attention")
    seen = {}
    monkeypatch.setattr(op, "library_kernel", lambda module, name, **kw: seen.update(kw))
    problem = op.Problem(task.b, task.hq, task.hk, task.sq, task.sk, task.d, task.dtype,
                         task.layout)
    op.plan(problem, task.causal, task.scale, task.sk, task.sq, knobs={})
    _, name, constants = specialisation(space().library_default(task), task)
    from argus.ops.library import kernel_ir

    # the same kernel: every module constant alike (the planner names some defaults the op
    # leaves to the module)
    assert kernel_ir("attention", name, **dict(constants)).constants == \
        kernel_ir("attention", name, **seen).constants


def test_the_build_probe_refuses_with_ptxas_reason_and_is_memoised():
    calls = []

    def builder(spec):
        calls.append(spec)
        spills = dict(spec[2])["OVERLAP"] == 1
        return {"errors": ["ptxas spills 52 B of registers"] if spills else [], "spilled": 52}

    s = AttentionSpace(build_check=True, builder=builder)
    bad = AttentionConfig(BN=128, S=3, OVERLAP=1)
    assert s.why_invalid(bad, D64) == ("unbuildable", ["ptxas spills 52 B of registers"])
    assert s.valid(AttentionConfig(BN=128, S=3), D64)
    s.why_invalid(bad, D64)
    assert len(calls) == 2                            # each specialisation built once
    valid = s.all_valid(D64)
    assert valid and not any(c.OVERLAP for c in valid)


@pytest.mark.skipif(not compiler_available(), reason="no CUDA compiler (NVRTC or nvcc) here")
def test_a_real_build_reports_spills(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))
    ok = build_spec(specialisation(AttentionConfig(BN=64, S=2), D64))
    # 64 x 256 fp32 scores per consumer warpgroup next to the output: ptxas spills (60-80 B
    # since the producer's loop went inside one elect_one; BN=128 with OVERLAP=1 fits now)
    spill = build_spec(specialisation(AttentionConfig(BN=256, S=2), D64))
    assert ok["errors"] == [] and ok["spilled"] == 0
    assert spill["spilled"] > 0 and "spills" in spill["errors"][0]


def test_the_probe_builds_the_source_the_op_launches(monkeypatch):
    """The prefetched builds are the op's own (one disk-cache entry): the same CUDA source."""
    import importlib

    from argus.ops.library import generated

    op = importlib.import_module("argus.ops.attention")
    seen = []
    monkeypatch.setattr(op, "library_kernel", lambda module, name, **kw: seen.append(
        (module, name, kw)))
    monkeypatch.delenv("ARGUS_ATTENTION_CONFIG", raising=False)
    task = AttentionTask(2, 4, 2, 300, 300, 64, causal=True)
    cfg = AttentionConfig(BN=64, S=3, SPLIT_KV=0, FOLD_SCALE=1, LPT=1)
    p = op.Problem(task.b, task.hq, task.hk, task.sq, task.sk, task.d, task.dtype, task.layout)
    op.plan(p, task.causal, task.scale, task.sk, task.sq, knobs=cfg.to_json())
    module, name, kw = seen[-1]
    spec = specialisation(cfg, task)
    assert (module, name) == spec[:2] and kw == dict(spec[2])
    assert generated(module, name, **kw).source == generated(*spec[:2], **dict(spec[2])).source
