#!/bin/bash
# Probe (issue 13): a conv/GEMM register tile of R pixels x C 16-lane vectors, K=64 reduction steps per call,
# everything in L1, one core. "plain": LLVM's broadcast into a register (what Kiln emits); "asm": the broadcast
# folded into each FMA as oneDNN's brgemm does (vfmadd231ps mem{1to16}, through inline asm). Built with the llc of
# Bytedeco's LLVM 20 (unpacked from its jar), -mcpu=znver5 in gen.py's attributes.
# LLC_DIR: the folder of llc and libLLVM.so from org/bytedeco/llvm/linux-x86_64/ in the llvm-20.1.7-1.5.12
# linux-x86_64 jar of ~/.m2 (libLLVM.so also linked as libLLVM.so.20.1). Usage: run.sh (prints GFLOP/s per tile).
set -e
D=${LLC_DIR:-/tmp/llc20/org/bytedeco/llvm/linux-x86_64}
export LD_LIBRARY_PATH=$D
here=$(cd "$(dirname "$0")" && pwd); B=$(mktemp -d); cd "$B"
for v in "14 2 plain" "14 2 asm" "7 4 plain" "7 4 asm" "6 4 plain" "6 4 asm" "7 3 plain" "7 3 asm" "4 4 plain"; do
  set -- $v; n=k_$1x$2_$3
  python3 "$here/gen.py" $1 $2 $3 > $n.ll; $D/llc -O3 -filetype=obj $n.ll -o $n.o; gcc -O2 "$here/harness.c" $n.o -o $n
  echo -n "$3 "; taskset -c 1 ./$n $1 $2
done
