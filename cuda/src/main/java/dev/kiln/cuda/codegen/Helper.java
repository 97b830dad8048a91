package dev.kiln.cuda.codegen;

import java.util.EnumSet;
import java.util.List;

/**
 * The device functions a generated module may need for the interpreter's semantics where C's
 * differ: integer division by zero (reported, never undefined), floor division, the one
 * overflowing quotient, saturating float-to-integer conversion, float min/max that propagate NaN
 * and order -0 below +0, and integer abs that wraps. A module contains only the helpers it uses,
 * in this enum's order (a helper's dependencies come before it).
 */
enum Helper {
    /** Set to 1 by a division by zero; the host reads it after the launch and resets it. */
    ERROR_FLAG("""
            __device__ int kiln_error;
            """),
    DIV_I32(divisions("int", "unsigned", "i32")),
    DIV_I64(divisions("long long", "unsigned long long", "i64")),
    FMINMAX("""
            __device__ __forceinline__ float kiln_fmin(float a, float b) {
              if (a != a || b != b) return __int_as_float(0x7fc00000);
              return a < b ? a : b < a ? b : (__float_as_int(a) < 0 ? a : b);
            }
            __device__ __forceinline__ float kiln_fmax(float a, float b) {
              if (a != a || b != b) return __int_as_float(0x7fc00000);
              return a > b ? a : b > a ? b : (__float_as_int(a) < 0 ? b : a);
            }
            __device__ __forceinline__ double kiln_fmin(double a, double b) {
              if (a != a || b != b) return __longlong_as_double(0x7ff8000000000000LL);
              return a < b ? a : b < a ? b : (__double_as_longlong(a) < 0 ? a : b);
            }
            __device__ __forceinline__ double kiln_fmax(double a, double b) {
              if (a != a || b != b) return __longlong_as_double(0x7ff8000000000000LL);
              return a > b ? a : b > a ? b : (__double_as_longlong(a) < 0 ? b : a);
            }
            """),
    FLOAT_TO_INT("""
            // float to integer: truncate toward zero, saturate at the type's range, NaN gives 0
            __device__ __forceinline__ signed char kiln_f2i8(double x) {
              return x != x ? 0 : x <= -128.0 ? -128 : x >= 127.0 ? 127 : (signed char)x;
            }
            __device__ __forceinline__ short kiln_f2i16(double x) {
              return x != x ? 0 : x <= -32768.0 ? -32768 : x >= 32767.0 ? 32767 : (short)x;
            }
            __device__ __forceinline__ int kiln_f2i32(double x) {
              return x != x ? 0 : x <= -2147483648.0 ? (-2147483647 - 1) : x >= 2147483647.0 ? 2147483647 : (int)x;
            }
            __device__ __forceinline__ long long kiln_f2i64(double x) {
              return x != x ? 0 : x <= -9223372036854775808.0 ? (-9223372036854775807LL - 1)
                  : x >= 9223372036854775807.0 ? 9223372036854775807LL : (long long)x;
            }
            __device__ __forceinline__ unsigned char kiln_f2u8(double x) {
              return x != x ? 0 : x <= 0.0 ? 0 : x >= 255.0 ? 255 : (unsigned char)x;
            }
            """),
    ABS_INT("""
            __device__ __forceinline__ int kiln_abs_i32(int x) { return (int)(x < 0 ? 0u - (unsigned)x : (unsigned)x); }
            __device__ __forceinline__ long long kiln_abs_i64(long long x) {
              return (long long)(x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x);
            }
            """);

    private final String text;

    Helper(String text) {
        this.text = text;
    }

    /** The helpers this one calls. */
    List<Helper> requires() {
        return this == DIV_I32 || this == DIV_I64 ? List.of(ERROR_FLAG) : List.of();
    }

    /** The definitions of {@code used} and what they need, in order. */
    static String definitions(EnumSet<Helper> used) {
        EnumSet<Helper> all = EnumSet.copyOf(used);
        for (Helper h : used) all.addAll(h.requires());
        StringBuilder sb = new StringBuilder();
        for (Helper h : all) sb.append(h.text);
        return sb.toString();
    }

    /**
     * The four integer divisions of one type. A zero divisor sets {@code kiln_error} and gives 0;
     * MIN / -1 wraps to MIN (and its remainder is 0), as in the interpreter.
     */
    private static String divisions(String t, String u, String s) {
        return """
                __device__ __forceinline__ T kiln_floordiv_S(T a, T b) {
                  if (b == 0) { kiln_error = 1; return 0; }
                  if (b == -1) return (T)((U)0 - (U)a);
                  T q = a / b;
                  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
                }
                __device__ __forceinline__ T kiln_floormod_S(T a, T b) {
                  if (b == 0) { kiln_error = 1; return 0; }
                  if (b == -1) return 0;
                  T r = a % b;
                  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
                }
                __device__ __forceinline__ T kiln_truncdiv_S(T a, T b) {
                  if (b == 0) { kiln_error = 1; return 0; }
                  if (b == -1) return (T)((U)0 - (U)a);
                  return a / b;
                }
                __device__ __forceinline__ T kiln_truncmod_S(T a, T b) {
                  if (b == 0) { kiln_error = 1; return 0; }
                  if (b == -1) return 0;
                  return a % b;
                }
                """.replace("T ", t + " ")
                .replace("(T)", "(" + t + ")")
                .replace("(U)", "(" + u + ")")
                .replace("_S(", "_" + s + "(");
    }
}
