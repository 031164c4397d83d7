// Ops::download_rows' and download_rows_at's defaults (declared in kernels/ops.h): plain
// downloads, so a backend without a strided copy of its own (the CPU) needs nothing more; the
// rows listed go a run of consecutive rows at a time through download_rows.
#include "kernels/op_checks.h"
#include "kernels/ops.h"
#include "kernels/row_runs.h"

#include <string>

namespace niwa::kernels {

void Ops::download_rows(void* host_dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t row_bytes,
                        size_t rows) {
    check_download_rows(name(), dst_pitch, src_pitch, row_bytes);
    if (rows == 0 || row_bytes == 0) return;
    if (dst_pitch == row_bytes && src_pitch == row_bytes) {
        download(host_dst, src, rows * row_bytes);
        return;
    }
    for (size_t i = 0; i < rows; ++i)
        download(static_cast<char*>(host_dst) + i * dst_pitch, static_cast<const char*>(src) + i * src_pitch,
                 row_bytes);
}

void Ops::download_rows_at(void* host_dst, size_t dst_pitch, const void* src, size_t src_pitch,
                           size_t row_bytes, const int64_t* rows, size_t n) {
    check_download_rows(name(), dst_pitch, src_pitch, row_bytes);
    for (size_t i = 0; i < n; ++i)
        check_arg(name(), rows[i] >= 0, "download_rows_at", "row " + std::to_string(rows[i]));
    for_each_run(rows, n, [&](int64_t first, int64_t count) {
        download_rows(static_cast<char*>(host_dst) + size_t(first) * dst_pitch, dst_pitch,
                      static_cast<const char*>(src) + size_t(first) * src_pitch, src_pitch, row_bytes,
                      size_t(count));
    });
}

}  // namespace niwa::kernels
