source scripts/device_env.sh
nvcc -O3 -arch=sm_90a -Iargus/codegen/include -o /tmp/mu tests/codegen/math_ulp.cu && (time timeout 150 /tmp/mu) > $OUT/math_ulp.txt 2>&1; tail -3 $OUT/math_ulp.txt; grep exp2 $OUT/math_ulp.txt
timeout 330 python3 benchmarks/attention_sweep.py --out $OUT/sweep-poly-d64.json --shapes 16x16x16x1024x1024x64,4x16x16x4096x4096x64,8x16x16x2048x2048x64c --variants default,poly2,poly4,poly8,persist_wgs3,persist_wgs3_poly4 2>&1 | grep -o '"shape[^}]*variant": "[a-z0-9_]*"\|"correct": [a-z]*\|ratio_cudnn": [0-9.]*\|"error.*'
timeout 100 python3 benchmarks/attention_sweep.py --out $OUT/sweep-poly-d128.json --shapes 4x16x16x4096x4096x128 --variants default,poly4,poly8 2>&1 | grep -o '"shape[^}]*variant": "[a-z0-9_]*"\|"correct": [a-z]*\|ratio_cudnn": [0-9.]*\|"error.*'
