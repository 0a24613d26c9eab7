"""The embedded planner for the library flash attention (argus/kernels/attention.py):
`argus optimize attention --shape B,HQ,HK,SQ,SK,D` searches the kernel's compile-time knobs
for one shape, on the CPU by the cost model, on a GPU by measurement, and writes the winner
into the tuned cache argus.ops.attention reads.

task.py the problem; config.py a configuration (the knobs); space.py what the library
kernel admits, with the reason for each refusal; cost_model.py the CPU estimate that ranks;
policy.py the planner; evaluators.py the CPU and GPU evaluators (gpu_worker.py is the GPU
child); optimize.py one episode end to end."""
