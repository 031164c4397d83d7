// draw_token (sample_draw.h): probabilities as exp((logit - max) / T) in double, unnormalised
// (only ratios matter); a descending prefix of them grown on demand by selection, over what
// top_p or the draw can reach, binned out first on a large row.
#include "kernels/sample_draw.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace niwa::kernels {

namespace {

using Weighted = std::pair<double, int32_t>;  // unnormalised probability, token id

// Descending probability, then ascending id: a strict total order, so any prefix is the same
// whichever way it was found.
bool before(const Weighted& a, const Weighted& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// The first `sorted` entries of p[0, n) are the largest in descending order; grow() extends that.
class DescendingPrefix {
public:
    DescendingPrefix(std::vector<Weighted>& p, int64_t n) : p_(p), n_(n) {}
    int64_t size() const { return n_; }
    // Makes at least the first min(m, size) entries sorted; returns how many are.
    int64_t grow(int64_t m) {
        m = std::min(m, size());
        if (m <= sorted_) return sorted_;
        const auto first = p_.begin() + sorted_, nth = p_.begin() + m, end = p_.begin() + n_;
        if (m < size()) std::nth_element(first, nth, end, before);
        std::sort(first, nth, before);
        sorted_ = m;
        return sorted_;
    }
    // Entry i of the descending order, sorting further as needed.
    const Weighted& at(int64_t i) {
        if (i >= sorted_) grow(std::max<int64_t>(2 * sorted_, i + 256));
        return p_[static_cast<size_t>(i)];
    }

private:
    std::vector<Weighted>& p_;
    int64_t n_;
    int64_t sorted_ = 0;
};

// top_p's nucleus (or, with no filter, the draw's target) lies among the largest
// probabilities: binned by their power of two (bin b holds p in [2^-b, 2^(1-b)), the last bin
// everything smaller), the bins from the top whose mass first passes that share of the total,
// and one more for rounding, hold it. Their tokens are all the filters and the draw then need
// sorted; with a peaked row that is a few hundred of 248K, and the whole row is never sorted.
// (If rounding ever ran past them, the draw starts again over every candidate: the result is
// the same either way.)
constexpr int kBins = 64;

int bin_of(double p) {  // p in [0, 1]
    uint64_t bits;
    std::memcpy(&bits, &p, sizeof bits);
    const int exponent = static_cast<int>((bits >> 52) & 0x7ff);  // 1023 for [1, 2)
    return std::clamp(1023 - exponent, 0, kBins - 1);
}

}  // namespace

// The pass over every candidate runs in chunks of this many, their sums added in chunk order:
// the same bits on any number of threads.
constexpr int64_t kChunk = 16384;

int32_t draw_token(std::vector<std::pair<float, int32_t>>& cand, const SampleParams& sp,
                   const ForRanges& for_ranges) {
    const auto size = static_cast<int64_t>(cand.size());
    const int64_t n_chunks = (size + kChunk - 1) / kChunk;
    auto over_chunks = [&](const std::function<void(int64_t, int64_t)>& fn) {
        if (for_ranges && n_chunks > 1)
            for_ranges(n_chunks, fn);
        else
            fn(0, n_chunks);
    };
    thread_local std::vector<float> chunk_max;
    std::vector<float>& cmax = chunk_max;  // this thread's, named for the workers
    cmax.assign(static_cast<size_t>(n_chunks), -INFINITY);
    over_chunks([&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c)
            for (int64_t i = c * kChunk; i < std::min(size, (c + 1) * kChunk); ++i)
                cmax[size_t(c)] = std::max(cmax[size_t(c)], cand[size_t(i)].first);
    });
    float max_logit = -INFINITY;
    for (float m : cmax) max_logit = std::max(max_logit, m);

    thread_local std::vector<Weighted> probabilities;
    std::vector<Weighted>& p = probabilities;
    p.resize(cand.size());
    const bool top_k_cuts = sp.top_k > 0 && sp.top_k <= size;
    // How far down the descending order the rule can reach, as a share of the total mass: top_p,
    // or with no filter the draw's own target. Large rows bin out that much (kBins).
    double reach = 1.0;
    if (!top_k_cuts && size > 4096) {
        if (sp.top_p < 1.0f)
            reach = sp.top_p;
        else if (sp.min_p <= 0.0f)
            reach = sp.uniform;
    }
    const bool binned = reach < 1.0;
    thread_local std::vector<double> chunk_sums;  // per chunk: its total, then its bins
    std::vector<double>& sums = chunk_sums;
    sums.assign(static_cast<size_t>(n_chunks * (kBins + 1)), 0.0);
    over_chunks([&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
            double chunk_total = 0.0, chunk_bins[kBins] = {};
            for (int64_t i = c * kChunk; i < std::min(size, (c + 1) * kChunk); ++i) {
                const double w =
                    std::exp((static_cast<double>(cand[size_t(i)].first) - max_logit) / sp.temperature);
                p[size_t(i)] = {w, cand[size_t(i)].second};
                chunk_total += w;
                if (binned) chunk_bins[bin_of(w)] += w;
            }
            double* cs = &sums[size_t(c * (kBins + 1))];
            cs[0] = chunk_total;
            for (int b = 0; b < kBins; ++b) cs[1 + b] = chunk_bins[b];
        }
    });
    double total = 0.0, bins[kBins] = {};
    for (int64_t c = 0; c < n_chunks; ++c) {
        const double* cs = &sums[size_t(c * (kBins + 1))];
        total += cs[0];
        for (int b = 0; b < kBins; ++b) bins[b] += cs[1 + b];
    }
    // Candidates [0, n) hold every token the filters can keep (the nucleus's bins first).
    int64_t n = size;
    if (binned) {
        double cum = 0.0;
        int last = 0;
        while (last < kBins - 1 && (cum += bins[last]) <= reach * total) ++last;
        last = std::min(last + 1, kBins - 1);
        if (last < kBins - 1)
            n = std::partition(p.begin(), p.end(),
                               [&](const Weighted& w) { return bin_of(w.first) <= last; }) -
                p.begin();
    }
    for (;;) {
        DescendingPrefix order(p, n);
        // The mass each step renormalises by: the kept prefix's, summed in descending order once
        // a filter has cut it (then any two callers agree to the bit), else the whole candidates'.
        int64_t kept = static_cast<int64_t>(p.size());
        double mass = total;
        auto prefix_mass = [&](int64_t m) {
            double sum = 0.0;
            for (int64_t i = 0; i < m; ++i) sum += order.at(i).first;
            return sum;
        };
        if (top_k_cuts) {
            kept = order.grow(sp.top_k);
            mass = prefix_mass(kept);
        }
        if (sp.top_p < 1.0f) {
            double cum = 0.0;
            int64_t m = 0;
            while (m < std::min(kept, n)) {
                cum += order.at(m++).first / mass;
                if (cum >= sp.top_p) break;
            }
            if (cum < sp.top_p && m == n && n < kept) {  // ran past the bins: all of them
                n = kept;
                continue;
            }
            kept = m;
            mass = prefix_mass(kept);
        }
        if (sp.min_p > 0.0f) {
            const double floor = sp.min_p * order.at(0).first;
            int64_t m = 1;  // the most likely token always stays
            while (m < kept && order.at(m).first >= floor) ++m;
            kept = m;
            mass = prefix_mass(kept);
        }
        const double target = static_cast<double>(sp.uniform) * mass;
        double cum = 0.0;
        for (int64_t i = 0; i < std::min(kept, n); ++i) {
            cum += order.at(i).first;
            if (target < cum) return order.at(i).second;
        }
        if (n < kept) {  // an unfiltered draw ran past the bins: all of them
            n = kept;
            continue;
        }
        return order.at(kept - 1).second;  // rounding put the target at the very top
    }
}

}  // namespace niwa::kernels
