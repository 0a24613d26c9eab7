"""`argus bench moe [...]`: the MoE layer against torch._grouped_mm and a cuBLAS loop
(argus.bench.moe_bench). `argus bench gemm [--correctness|--timing] [--shapes MxNxK,... | --random N --seed S] [--layouts kn,nk]
[--dtypes bf16,fp16]`: the DSL GEMM against torch.matmul on this GPU (argus.bench.gemm_bench);
results JSON under benchmarks/results/. Without a GPU it says so and measures nothing.
`argus bench attention [--correctness|--timing] [--shapes ...]`: the DSL flash attention
against SDPA's cuDNN and flash backends (argus.bench.attention_bench); without a GPU it
says so in one line and exits 2."""

from __future__ import annotations

import argparse

BENCHES = ("gemm", "attention", "moe")


def register(subparsers) -> None:
    parser = subparsers.add_parser("bench", help="benchmark a library kernel against its peer",
                                   description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=BENCHES, help="which benchmark")
    parser.add_argument("rest", nargs=argparse.REMAINDER,
                        help="its options (argus bench gemm --help)")
    parser.set_defaults(run=run_bench)


def run_bench(args) -> int:
    if args.what == "attention":
        from argus.bench.attention_bench import main
    elif args.what == "moe":
        from argus.bench.moe_bench import main
    else:
        from argus.bench.gemm_bench import main
    return main(args.rest, prog=f"argus bench {args.what}")
