"""LLVM IR of one register tile: R pixels x C 16-lane float vectors, a reduction loop of K steps.

Each step loads C weight vectors and, per pixel, one input scalar used by C multiply-adds (the shape of Kiln's
conv and GEMM micro-kernels). Modes:
  plain  the scalar broadcast into a register by a splat, then llvm.fmuladd (what Kiln's LLVM backend emits);
  inv    the same with every load marked !invariant.load (does LLVM rematerialise the broadcast instead of
         spilling? it does not);
  asm    each multiply-add an inline-asm vfmadd231ps with the input scalar as a {1to16} memory operand, the form
         oneDNN's brgemm kernels use, so the tile needs no broadcast register.
Usage: gen.py R C plain|inv|asm > tile.ll   (pixels are 80 floats apart, so no 4 KB aliasing)
"""
import sys

R, C, MODE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if MODE not in ("plain", "inv", "asm"):
    sys.exit("mode must be plain, inv or asm")
md = ", !invariant.load !0" if MODE == "inv" else ""
PIXEL_STRIDE = 80

L = ["define void @k(ptr noalias %out, ptr noalias readonly %inp, ptr noalias readonly %w, i64 %K) #0 {",
     "entry:\n  br label %loop\nloop:",
     "  %k = phi i64 [0, %entry], [%kn, %loop]"]
for r in range(R):
    for c in range(C):
        L.append(f"  %a{r}_{c} = phi <16 x float> [zeroinitializer, %entry], [%n{r}_{c}, %loop]")
for c in range(C):
    L.append(f"  %wo{c} = mul i64 %k, {16 * C}\n  %wo{c}b = add i64 %wo{c}, {16 * c}")
    L.append(f"  %wp{c} = getelementptr inbounds float, ptr %w, i64 %wo{c}b")
    L.append(f"  %wv{c} = load <16 x float>, ptr %wp{c}, align 4{md}")
for r in range(R):
    L.append(f"  %io{r} = add i64 %k, {r * PIXEL_STRIDE}\n  %ip{r} = getelementptr inbounds float, ptr %inp, i64 %io{r}")
    if MODE != "asm":
        L.append(f"  %x{r} = load float, ptr %ip{r}, align 4{md}")
        L.append(f"  %xi{r} = insertelement <16 x float> poison, float %x{r}, i64 0")
        L.append(f"  %xs{r} = shufflevector <16 x float> %xi{r}, <16 x float> poison, <16 x i32> zeroinitializer")
    for c in range(C):
        if MODE == "asm":
            L.append(f'  %n{r}_{c} = call <16 x float> asm "vfmadd231ps $2{{1to16}}, $1, $0", "=v,v,*m,0"'
                     f"(<16 x float> %wv{c}, ptr elementtype(float) %ip{r}, <16 x float> %a{r}_{c})")
        else:
            L.append(f"  %n{r}_{c} = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %xs{r}, "
                     f"<16 x float> %wv{c}, <16 x float> %a{r}_{c})")
L.append("  %kn = add i64 %k, 1\n  %done = icmp eq i64 %kn, %K\n  br i1 %done, label %exit, label %loop\nexit:")
for r in range(R):
    for c in range(C):
        L.append(f"  %op{r}_{c} = getelementptr inbounds float, ptr %out, i64 {(r * C + c) * 16}")
        L.append(f"  store <16 x float> %n{r}_{c}, ptr %op{r}_{c}, align 4")
L += ["  ret void\n}",
      "declare <16 x float> @llvm.fmuladd.v16f32(<16 x float>, <16 x float>, <16 x float>)",
      'attributes #0 = { "prefer-vector-width"="512" "target-cpu"="znver5" }',
      "!0 = !{}"]
print("\n".join(L))
