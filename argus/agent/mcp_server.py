"""The agent's tools over the Model Context Protocol (stdio), with the official mcp SDK.

Register with a client, e.g. `claude mcp add argus -- argus mcp`, or an "mcpServers"
entry {"command": "argus", "args": ["mcp"]}. Nothing but protocol goes to stdout: tools
that run the compiler capture its output in a child process. Every path a client gives is
confined to the workspace folder (argus/agent/workspace.py): a path outside it is refused
with {"ok": false, "error": ...} and touches nothing.
"""
from __future__ import annotations

from typing import Any

from argus.agent import tools
from argus.agent.workspace import OutsideWorkspace, Workspace

INSTRUCTIONS = ("Argus: a tile DSL for NVIDIA Hopper whose compiler verifies data-flow "
                "invariants. Tools: check/compile/run_interpret a DSL kernel file "
                "(FILE.py::KERNEL), draw layouts, search the Hopper optimisation knowledge "
                "base, predict a GEMM configuration's resources and speed without a GPU, "
                "run the optimisation planner, and benchmark on a GPU when one is present.")


def refused(tool: str, err: OutsideWorkspace) -> dict[str, Any]:
    return {"tool": tool, "ok": False, "error": str(err)}


def build_server(workspace: Workspace | None = None):
    space = workspace or Workspace()
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        raise RuntimeError("argus mcp needs the mcp SDK 2.x: pip install 'argus-kernels[agent]'"
                           ) from None
    server = MCPServer("argus", instructions=INSTRUCTIONS)

    @server.tool()
    def check(target: str) -> dict[str, Any]:
        """Verify FILE.py[::KERNEL]: parsing, IR well-formedness and barrier checks."""
        try:
            return tools.check(space.target(target))
        except OutsideWorkspace as err:
            return refused("check", err)

    @server.tool()
    def compile(target: str, emit: str = "ir", locs: bool = False) -> dict[str, Any]:
        """Show FILE.py::KERNEL after a compiler stage (emit: ir; later cuda/ptx/sass)."""
        try:
            return tools.compile_kernel(space.target(target), emit, locs)
        except OutsideWorkspace as err:
            return refused("compile", err)

    @server.tool()
    def run_interpret(target: str, shape: str = "", seed: int = 0) -> dict[str, Any]:
        """Run FILE.py::KERNEL on the CPU interpreter against its NumPy reference.
        shape binds symbols, e.g. 'M=128,N=256,K=64'."""
        try:
            return tools.run_interpret(space.target(target), shape, seed)
        except OutsideWorkspace as err:
            return refused("run_interpret", err)

    @server.tool()
    def layout_show(layout: str, output: str = "", thread: int | None = None) -> dict[str, Any]:
        """Draw a layout in CuTe notation ('(4,8):(8,1)') or a Hopper atom to an SVG file
        (output: a path inside the workspace; empty: a new temporary file)."""
        try:
            return tools.layout_show(layout, str(space.path(output, "output")) if output else "",
                                     thread)
        except OutsideWorkspace as err:
            return refused("layout_show", err)

    @server.tool()
    def knowledge_search(query: str = "", op: str = "", shape: str = "",
                         signals: list[str] | None = None, top_k: int = 5) -> dict[str, Any]:
        """Ranked Hopper optimisation techniques (op: gemm|attention|moe; shape: MxNxK;
        signals: profile symptoms such as latency-bound, wave-quantisation)."""
        return tools.knowledge_search(query, op, shape, signals, top_k)

    @server.tool()
    def knowledge_get(technique_id: str) -> dict[str, Any]:
        """One technique in full: sources, preconditions, pitfalls, invariants, knob moves."""
        return tools.knowledge_get(technique_id)

    @server.tool()
    def cost_model(shape: str, config: dict[str, Any] | None = None,
                   dtype: str = "bfloat16") -> dict[str, Any]:
        """Static H200 cost model of a GEMM configuration (knobs: BM, BN, BK, stages,
        consumers, warp_specialized, cluster_m, cluster_n, raster, group, persistent,
        split_k, epilogue): shared memory, registers, occupancy, waves, bound, TFLOP/s."""
        return tools.cost_model(shape, config, dtype)

    @server.tool()
    def optimize(shape: str, budget: int = 24, provider: str = "embedded", model: str = "",
                 base_url: str = "", evaluator: str = "cpu", out_dir: str = "") -> dict[str, Any]:
        """Run the ICRL planner on a GEMM shape MxNxK; returns the trajectory summary."""
        try:
            out_dir = str(space.path(out_dir, "out_dir")) if out_dir else ""
        except OutsideWorkspace as err:
            return refused("optimize", err)
        return tools.optimize(shape, budget, provider, model, base_url, evaluator, out_dir)

    @server.tool()
    def bench(shape: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """Measure a GEMM configuration on the GPU against torch.matmul (needs CUDA and the
        GPU backend; otherwise says so with available=false)."""
        return tools.bench(shape, config)

    @server.tool()
    def profile(shape: str, config: dict[str, Any] | None = None, kernel: str = "",
                metrics: list[str] | None = None) -> dict[str, Any]:
        """Profile a GEMM candidate (knobs, or a DSL kernel FILE.py): ncu metrics and derived
        signals when ncu and a GPU exist, else a GPU timing breakdown, else kind=unavailable."""
        try:
            kernel = str(space.path(kernel, "kernel")) if kernel else ""
        except OutsideWorkspace as err:
            return refused("profile", err)
        return tools.profile(shape, config, kernel, metrics)

    @server.tool()
    def dsl_guide(max_chars: int = 16000) -> dict[str, Any]:
        """A compact guide to the Argus DSL (every surface function, verified examples),
        generated from the code; read it before writing a kernel."""
        return tools.dsl_guide(max_chars)

    return server


def serve_stdio() -> None:
    build_server().run("stdio")
