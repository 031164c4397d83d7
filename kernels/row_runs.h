// Runs of consecutive row indices in a list, so that rows listed together can be handled a run at
// a time (one download, one call of an op over a view of the run's rows).
#pragma once

#include <cstddef>

namespace niwa::kernels {

// f(first, count) for each maximal run rows[a], rows[a] + 1, ... of rows[0, n), in list order.
template <typename Index, typename F>
void for_each_run(const Index* rows, size_t n, F&& f) {
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && rows[b] == rows[b - 1] + 1) ++b;
        f(rows[a], static_cast<Index>(b - a));
        a = b;
    }
}

}  // namespace niwa::kernels
