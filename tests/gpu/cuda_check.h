// CHECK(call): the GPU machine's stand-alone measurement programs (read_pattern.cu, icache.cu)
// stop with the file, line and CUDA's message at the first failed runtime call.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                           \
    do {                                                                                   \
        cudaError_t e = (x);                                                               \
        if (e != cudaSuccess) {                                                            \
            std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)
