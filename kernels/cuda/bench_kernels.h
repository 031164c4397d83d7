// Timing of single CUDA ops for `niwa-engine bench` (benchmarks are programs, never tests).
// Only in builds with the CUDA backend (NIWA_HAVE_CUDA).
#pragma once

#include "kernels/ops.h"

namespace niwa::kernels {

struct KernelTiming {
    double seconds;  // per call
    double bytes;    // moved per call: the weight once, x read, y written
    double flops;    // 2 * n_rows * in * out
};

// Times ops.matmul(w, x, y) on `ops` (a CUDA backend; anything else throws) for x of n_rows
// random rows, with CUDA events on the backend's stream, after a warm-up; `iters` calls back
// to back, the mean returned. The calls go round copies of w that fill twice the L2, so each
// reads its weight from DRAM as in a step. w must live in the backend's memory.
KernelTiming time_matmul(Ops& ops, const Weight& w, int n_rows, int iters);

}  // namespace niwa::kernels
