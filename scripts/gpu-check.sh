#!/usr/bin/env bash
# Kiln's GPU check, for a machine with an NVIDIA GPU: builds Kiln, runs the CUDA tests (the device
# tests run only here), tunes a 4096 matmul, a conv2d layer, a float16 Tensor Core 4096 matmul and the
# conv2d layer as a float16 implicit GEMM on Tensor Cores (against cublasGemmEx) on a short budget, and ends with a
# table of GFLOP/s next to cuBLAS (and PyTorch, when it is installed) measured in the same run.
# The default budget (build ~2 min, tests ~1.5 min, 4 x 60 s of tuning, baselines) ends inside
# 10 minutes; every step after the build runs under a timeout.
#
#   scripts/gpu-check.sh [--dry-run] [--seconds S] [--skip-tests] [--prebuilt] [-- GpuCheck options]
#     --dry-run     no GPU needed: check the environment, build, then tune nothing (sample, lower,
#                   generate and compile the programs a real run would start from) and print the plan
#     --seconds S   tuning time per workload (default 60)
#     --skip-tests  do not run the test suite of the cuda module
#     --prebuilt    do not run Maven: use cuda/target/gpu-check/ made earlier by this script (or by
#                   --prepare) on a machine with Maven and network, e.g. for a GPU box without network
#     --prepare     only build and collect cuda/target/gpu-check/ (classes, test classes, jars), then stop
#     --cluster     also measure on a cluster: a loopback CUDA worker (./kiln worker --target cuda) and a short
#                   tune of a small matmul through it (./kiln tune --cluster); needs Maven (builds bench); only
#                   where a GPU is present (with --dry-run or without libcuda it prints the plan)
#   Options after -- go to dev.kiln.cuda.GpuCheck (--matmul N, --conv N,C,H,W,K,R,S,PAD, --trials N, --log F,
#   --tf32: also a float32 matmul on TF32 Tensor Cores against cublasGemmEx's CUBLAS_COMPUTE_32F_FAST_TF32).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
say() { printf '[gpu-check %4ds] %s\n' $((SECONDS - t0)) "$*"; }
die() { say "FAILED: $*"; exit 1; }

dry=0; seconds=60; tests=1; prebuilt=0; prepare=0; cluster=0; extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --seconds) seconds=$2; shift ;;
    --skip-tests) tests=0 ;;
    --prebuilt) prebuilt=1 ;;
    --prepare) prepare=1 ;;
    --cluster) cluster=1 ;;
    --) shift; extra=("$@"); break ;;
    *) die "unknown option $1 (see the comment at the top of $0)" ;;
  esac
  shift
done

out=cuda/target/gpu-check
junit_version=1.14.4

# ---- environment ------------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null 2>&1; then
  say "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
else
  say "GPU: nvidia-smi not found"
fi
if ! (ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'); then
  [ $dry = 1 ] || [ $prepare = 1 ] || die "no libcuda.so.1 (the NVIDIA driver) on this machine; use --dry-run to check everything else"
  say "no libcuda.so.1 here: fine for --dry-run/--prepare"
fi
command -v nvcc >/dev/null 2>&1 && say "nvcc: $(nvcc --version | tail -1)" || say "nvcc: not on the PATH (NVRTC is what Kiln uses)"

# ---- build ------------------------------------------------------------------------------------
if [ $prebuilt = 0 ]; then
  say "building Kiln (the cuda module and what it needs) ..."
  rm -rf "$out"
  ./kiln mvn -q package -pl cuda -am -DskipTests -Pgpu-check || die "build"
  say "built; $(ls "$out"/lib | wc -l) jars in $out/lib"
fi
[ -d "$out/lib" ] && [ -d cuda/target/classes ] || die "$out is missing: run without --prebuilt (or with --prepare) where Maven works"
[ $prepare = 1 ] && { say "prepared $out; copy the repository (with cuda/target) to the GPU machine and run with --prebuilt"; exit 0; }

# a JDK 22+ (Panama): JAVA_HOME if it qualifies, else the newest under /usr/lib/jvm (as ./kiln does)
java_major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | cut -d. -f1; }
jdk=""
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && [ "$(java_major "$JAVA_HOME")" -ge 22 ] 2>/dev/null; then jdk=$JAVA_HOME; fi
if [ -z "$jdk" ]; then
  best=0
  for d in /usr/lib/jvm/*/; do
    d=${d%/}; [ -L "$d" ] || [ ! -x "$d/bin/java" ] && continue
    m=$(java_major "$d"); [ -n "$m" ] && [ "$m" -gt "$best" ] && { best=$m; jdk=$d; }
  done
  [ "$best" -ge 22 ] || die "no JDK 22+ (JAVA_HOME=${JAVA_HOME:-unset}, /usr/lib/jvm)"
fi
java=$jdk/bin/java
say "java: $("$java" -version 2>&1 | head -1)"
cp="cuda/target/classes:$out/lib/*"
jvm=(--enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -Djava.io.tmpdir="${TMPDIR:-/tmp}")

# ---- tests ------------------------------------------------------------------------------------
if [ $tests = 1 ]; then
  say "running the cuda module's tests (device tests included: they run only with a GPU) ..."
  launcher=$(ls "$out"/tools/junit-platform-console-standalone-*.jar 2>/dev/null | head -1)
  [ -n "$launcher" ] || die "no JUnit console launcher in $out/tools"
  jars=$(ls "$PWD/$out"/lib/*.jar | tr '\n' ':')
  (cd cuda && timeout 420 "$java" "${jvm[@]}" -jar "../$launcher" execute --disable-banner --details=summary \
      --class-path "target/test-classes:target/classes:$jars" --select-package dev.kiln.cuda \
      --reports-dir target/gpu-check-reports) || die "the CUDA tests failed (reports: cuda/target/gpu-check-reports)"
  skipped=$(grep -ho '<skipped' cuda/target/gpu-check-reports/*.xml 2>/dev/null | wc -l || true)
  say "tests passed ($skipped skipped; on a GPU machine only the no-driver checks should be)"
fi

# ---- tuning and the table ---------------------------------------------------------------------
rm -f cuda/target/kiln-gpu-check.jsonl   # a fresh search every run (the log is kept afterwards for reading)
args=(--seconds "$seconds" --log cuda/target/kiln-gpu-check.jsonl)
[ $dry = 1 ] && args+=(--dry-run)
say "running dev.kiln.cuda.GpuCheck ${args[*]} ${extra[*]:-}"
timeout $((5 * ${seconds%.*} + 180)) "$java" "${jvm[@]}" -cp "$cp" dev.kiln.cuda.GpuCheck "${args[@]}" "${extra[@]}" \
    || die "GpuCheck (exit $?)"

# ---- PyTorch, when the machine has it ---------------------------------------------------------
if [ $dry = 0 ] && command -v python3 >/dev/null 2>&1 && python3 -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  say "PyTorch found: timing torch.mm 4096 and the conv2d layer (cuDNN) in the same run"
  timeout 60 python3 - <<'PY' || say "PyTorch timing failed (ignored)"
import torch
def t(f, n=20):
    for _ in range(3): f()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n): f()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / n
torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
a, b = torch.rand(4096, 4096, device="cuda"), torch.rand(4096, 4096, device="cuda")
ms = t(lambda: a @ b); print(f"{'PyTorch matmul 4096 (fp32, no TF32)':40s} {2*4096**3/ms/1e6:12.1f} GFLOP/s")
x, w = torch.rand(16, 64, 56, 56, device="cuda"), torch.rand(64, 64, 3, 3, device="cuda")
ms = t(lambda: torch.nn.functional.conv2d(x, w, padding=1)); print(f"{'PyTorch conv2d N16 64x56x56->64 k3 p1':40s} {2*16*64*56*56*64*9/ms/1e6:12.1f} GFLOP/s")
PY
fi
# ---- cluster (--cluster): a loopback CUDA worker and a short tune through it -------------------
if [ $cluster = 1 ]; then
  plan="build bench; ./kiln cluster-keys; ./kiln worker --target cuda on 127.0.0.1; ./kiln tune --op GMM"
  plan="$plan --config 1,256,256,256 --target <the worker's target> --trials 16 --cluster 127.0.0.1:PORT --json"
  if [ $dry = 1 ] || ! (ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'); then
    say "cluster step, not run (no GPU or --dry-run): $plan"
  elif [ $prebuilt = 1 ]; then
    say "cluster step skipped: it builds bench with Maven, which --prebuilt does not run"
  else
    say "cluster step: $plan"
    ./kiln mvn -q install -DskipTests || die "cluster step: build"
    ccp="bench/target/classes:$(cat bench/target/classpath.txt)"
    cjvm=("${jvm[@]}" --sun-misc-unsafe-memory-access=allow)
    cdir=$(mktemp -d); export KILN_CLUSTER_PASSWORD=gpu-check-$RANDOM$RANDOM
    "$java" "${cjvm[@]}" -cp "$ccp" dev.kiln.bench.cluster.ClusterCli keys "$cdir" >/dev/null || die "cluster keys"
    port=$(( 20000 + RANDOM % 20000 ))
    "$java" "${cjvm[@]}" -cp "$ccp" dev.kiln.bench.cluster.ClusterCli worker --target cuda --port "$port" \
        --keystore "$cdir/kiln-cluster.p12" > "$cdir/worker.log" 2>&1 &
    wpid=$!
    trap 'kill $wpid 2>/dev/null || true' EXIT
    for _ in $(seq 120); do grep -q '^kiln worker ready' "$cdir/worker.log" && break; sleep 1; done
    ready=$(grep '^kiln worker ready' "$cdir/worker.log" | head -1) || { cat "$cdir/worker.log"; die "the CUDA worker did not start"; }
    say "$ready"
    wtarget=$(sed -n 's/^kiln worker ready [^ ]* target \([^(]*\) (.*$/\1/p' <<<"$ready")
    timeout 600 "$java" "${cjvm[@]}" -cp "$ccp" dev.kiln.bench.cli.KilnCli tune --op GMM --config 1,256,256,256 \
        --target "$wtarget" --trials 16 --per-round 8 --log "$cdir/cluster.jsonl" --progress none --json \
        --cluster "127.0.0.1:$port" --keystore "$cdir/kiln-cluster.p12" > "$cdir/tune.json" \
        || { tail -20 "$cdir/worker.log"; die "the tune through the cluster failed"; }
    python3 - "$cdir/tune.json" <<'PY' || die "the cluster tune's result"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cluster"]
print(f"  cluster tune: {r['trials']} trials, {r['errors']} errors, best {r['rate']:.1f} {r['unit']}, "
      f"measured by {c['byWorker']}, faults {c['faults']}")
sys.exit(0 if r["trials"] > 0 and c["completed"] > 0 and not c["faults"] and r["errors"] < r["trials"] else 1)
PY
    kill $wpid 2>/dev/null || true
    say "cluster step passed (log $cdir/cluster.jsonl)"
  fi
fi
say "done in $((SECONDS - t0)) s"
