// draw_token (sample_draw.h). A token's probability is exp((logit - max) / T), unnormalised (only
// ratios matter), computed as 2^t: t = (logit - max) log2(e) / T in double, split exactly into
// the nearest integer n and f in [-1/2, 1/2], 2^f by Cephes' exp2f polynomial in float, times 2^n
// through its exponent bits. Within 2e-7 of exp in double; 0 once t <= -125.5 (1e-38 of the most
// likely token). Every weight goes through one loop of IEEE operations over a fixed-size block (a
// short one padded), which the compiler vectorises: the same bits for every caller. The total is
// summed in double per chunk, in kLanes interleaved partial sums, and the chunks in order: the
// same bits on any number of threads. Then a descending prefix of the probabilities is grown on
// demand by selection, over what top_p or the draw can reach, binned out first on a large row.
// top_k's candidates come from the row in place, by an integer key with the logits' order: the
// blocks' maxima give a floor under the k-th largest, a radix select over the few keys above the
// floor finds it, and only the blocks that reach it are read again.
#include "kernels/sample_draw.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "kernels/rank_key.h"

namespace niwa::kernels {

namespace {

using Weighted = std::pair<float, int32_t>;  // unnormalised probability, token id

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

// The pass over every candidate runs in chunks of this many, their sums added in chunk order:
// the same bits on any number of threads.
constexpr int64_t kChunk = 16384;

// Within a chunk, blocks of this many: loops of a fixed length over plain arrays, which GCC
// vectorises at -O2. Partial sums and maxima run in kLanes interleaved lanes.
constexpr int kBlock = 256;
constexpr int kLanes = 8;

// The logits from `begin` as a full block: in place, or the short last one copied into `pad`
// behind -inf (weight 0, which changes no sum).
const float* block_at(const float* logits, int64_t begin, int64_t end, float* pad) {
    const int64_t len = end - begin;
    if (len >= kBlock) return logits + begin;
    std::copy_n(logits + begin, len, pad);
    std::fill(pad + len, pad + kBlock, -INFINITY);
    return pad;
}

// The largest of x[0, N) (N a multiple of kLanes), in kLanes lanes that start from -inf: a loop
// of fixed length GCC vectorises at -O2. A NaN is passed over (its comparisons are false); -inf
// when every value is NaN or -inf.
template <int N>
float lanes_max(const float* __restrict x) {
    float m[kLanes];
    for (int j = 0; j < kLanes; ++j) m[j] = -INFINITY;
    for (int i = 0; i < N; i += kLanes)
        for (int j = 0; j < kLanes; ++j) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
    float r = -INFINITY;
    for (int j = 0; j < kLanes; ++j) r = m[j] > r ? m[j] : r;
    return r;
}

float block_max(const float* __restrict x) {
    return lanes_max<kBlock>(x);
}

// t = (logit - max) log2(e) / T. `floor` is the logit - max where t = -126 (weight 0), to which
// lower ones are raised: a variable, as a constant would let the compiler branch on it.
struct Exponent {
    double max_logit, scale, floor;
};

Exponent exponent_of(float max_logit, float temperature) {
    const double scale = 1.4426950408889634 / temperature;
    return {max_logit, scale, -126.0 / scale};
}

// One block's weights, as the file comment says.
void block_weights(const float* __restrict logits, float* __restrict w, const Exponent& e) {
    for (int i = 0; i < kBlock; ++i) {
        double d = static_cast<double>(logits[i]) - e.max_logit;
        d = d > e.floor ? d : e.floor;               // a NaN or -inf logit too
        const double t = d * e.scale;                // in [-126, 0]
        const double n = (t + 0x1.8p52) - 0x1.8p52;  // the nearest integer
        const auto f = static_cast<float>(t - n);    // t - n is exact
        float p = 1.535336188319500e-4f;
        p = p * f + 1.339887440266574e-3f;
        p = p * f + 9.618437357674640e-3f;
        p = p * f + 5.550332471162809e-2f;
        p = p * f + 2.402264791363012e-1f;
        p = p * f + 6.931472028550421e-1f;
        p = p * f + 1.0f;
        // 2^(n - 1) by its exponent bits, 0 at n = -126: no result is subnormal.
        const int32_t bits = (static_cast<int32_t>(n) + 126) << 23;
        float half_scale;
        std::memcpy(&half_scale, &bits, sizeof half_scale);
        w[i] = (p + p) * half_scale;
    }
}

void add_to_lanes(const float* __restrict w, double* __restrict lanes) {
    double s[kLanes];
    for (int j = 0; j < kLanes; ++j) s[j] = lanes[j];
    for (int i = 0; i < kBlock; i += kLanes)
        for (int j = 0; j < kLanes; ++j) s[j] += w[i + j];
    for (int j = 0; j < kLanes; ++j) lanes[j] = s[j];
}

// Sums by float exponent (bins to be), in four interleaved copies: a run of equal exponents is
// then not one chain of additions through memory.
using ExponentSums = double[4][256];

void add_by_exponent(const float* __restrict w, ExponentSums& sums) {
    for (int i = 0; i < kBlock; i += 4)
        for (int j = 0; j < 4; ++j) {
            uint32_t bits;
            std::memcpy(&bits, &w[i + j], sizeof bits);
            sums[j][(bits >> 23) & 0xff] += w[i + j];
        }
}

// Candidates [begin, end) of a chunk: their weights into w, each block's largest into
// `block_maxima`, and into `sums` their total, then (if binned) their bins.
void weigh_chunk(const Candidates& cand, int64_t begin, int64_t end, const Exponent& e, bool binned, float* w,
                 float* block_maxima, double* sums) {
    double lanes[kLanes] = {};
    ExponentSums by_exponent = {};
    for (int64_t b = begin; b < end; b += kBlock) {
        float pad[kBlock], block[kBlock];
        block_weights(block_at(cand.logits, b, end, pad), block, e);
        add_to_lanes(block, lanes);
        if (binned) add_by_exponent(block, by_exponent);
        block_maxima[b / kBlock] = block_max(block);
        std::copy_n(block, std::min<int64_t>(kBlock, end - b), w + b);
    }
    sums[0] = 0.0;
    for (double lane : lanes) sums[0] += lane;
    std::fill(sums + 1, sums + 1 + kBins, 0.0);
    for (int exponent = 0; exponent < 256; ++exponent) {
        const int bin = std::clamp(127 - exponent, 0, kBins - 1);  // 127: [1, 2)
        for (const auto& copy : by_exponent) sums[1 + bin] += copy[exponent];
    }
}

// Replaces p by the candidates whose weight is at least `least`, passing over blocks below it.
void gather(const Candidates& cand, const float* w, const float* block_maxima, float least,
            std::vector<Weighted>& p) {
    p.clear();
    for (int64_t b = 0; b < cand.size; b += kBlock) {
        if (block_maxima[b / kBlock] < least) continue;
        for (int64_t i = b; i < std::min(cand.size, b + kBlock); ++i)
            if (w[i] >= least) p.emplace_back(w[i], cand.ids ? cand.ids[i] : static_cast<int32_t>(i));
    }
}

// top_k's one full pass over a row takes the largest key of each block of this many.
constexpr int kKeyBlock = 64;

// The largest key of row[begin, end), found as its largest logit (lanes_max over a full block;
// comparisons pass over NaN). Below -inf only NaN is left, whose key is the lowest: the result
// is always some token's key.
uint32_t block_key_max(const float* row, int64_t begin, int64_t end) {
    float m = -INFINITY;
    if (end - begin == kKeyBlock)
        m = lanes_max<kKeyBlock>(row + begin);
    else
        for (int64_t i = begin; i < end; ++i) m = row[i] > m ? row[i] : m;
    if (m > -INFINITY) return rank_key(m);
    for (int64_t i = begin; i < end; ++i)
        if (row[i] == -INFINITY) return rank_key(-INFINITY);
    return 0;  // every logit NaN
}

// The k-th largest of keys[0, n) (0 < k <= n), by radix: 11 bits at a time from the highest bit
// where the keys still differ, each round keeping only the keys whose bits so far are the k-th
// largest's (keys is reordered and overwritten), until those left are equal. `ties` becomes how
// many keys equal to it the k largest hold.
uint32_t kth_largest(uint32_t* keys, int64_t n, int64_t k, int64_t& ties) {
    uint32_t lo = keys[0], hi = keys[0];
    for (int64_t i = 1; i < n; ++i) {
        lo = std::min(lo, keys[i]);
        hi = std::max(hi, keys[i]);
    }
    while (lo != hi) {
        const int shift = std::max(0, 31 - std::countl_zero(lo ^ hi) - 10);
        uint32_t count[0x800] = {};
        for (int64_t i = 0; i < n; ++i) ++count[(keys[i] >> shift) & 0x7ff];
        uint32_t bin = 0x7ff;
        for (; k > count[bin]; --bin) k -= count[bin];
        int64_t kept = 0;
        lo = ~0u;
        hi = 0;
        for (int64_t i = 0; i < n; ++i) {
            const uint32_t key = keys[i];
            const bool in = ((key >> shift) & 0x7ff) == bin;
            keys[kept] = key;
            kept += in;
            lo = in && key < lo ? key : lo;
            hi = in && key > hi ? key : hi;
        }
        n = kept;
    }
    ties = k;
    return lo;
}

// The rule after the weights: p[0, n) holds the n largest weights of `size` candidates (any
// order), `total` the mass of all of them. top_k, top_p and min_p cut a descending prefix, then
// one draw by inverse CDF; -1 when the rule reaches past p (n < size), so more candidates are
// needed. The mass each step renormalises by: the kept prefix's, summed in descending order once
// a filter has cut it (then any two callers agree to the bit), else `total`.
int32_t walk(std::vector<Weighted>& p, int64_t n, int64_t size, double total, const SampleParams& sp) {
    DescendingPrefix order(p, n);
    int64_t kept = size;
    double mass = total;
    auto prefix_mass = [&](int64_t m) {
        double sum = 0.0;
        for (int64_t i = 0; i < m; ++i) sum += order.at(i).first;
        return sum;
    };
    if (sp.top_k > 0 && sp.top_k <= size) {
        if (sp.top_k > n) return -1;
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
        if (cum < sp.top_p && m == n && n < kept) return -1;
        kept = m;
        mass = prefix_mass(kept);
    }
    if (sp.min_p > 0.0f) {
        if (n == 0) return -1;
        const double floor = sp.min_p * order.at(0).first;
        int64_t m = 1;  // the most likely token always stays
        while (m < std::min(kept, n) && order.at(m).first >= floor) ++m;
        if (m == n && n < kept) return -1;
        kept = m;
        mass = prefix_mass(kept);
    }
    const double target = static_cast<double>(sp.uniform) * mass;
    double cum = 0.0;
    for (int64_t i = 0; i < std::min(kept, n); ++i) {
        cum += order.at(i).first;
        if (target < cum) return order.at(i).second;
    }
    if (n < kept) return -1;
    return order.at(kept - 1).second;  // rounding put the target at the very top
}

}  // namespace

void top_k_candidates(const float* row, int64_t n, int64_t k, std::vector<float>& logits,
                      std::vector<int32_t>& ids) {
    const int64_t n_blocks = (n + kKeyBlock - 1) / kKeyBlock;
    thread_local std::vector<uint32_t> block_maxima, key_buffer;
    std::vector<uint32_t>& maxima = block_maxima;
    std::vector<uint32_t>& keys = key_buffer;
    maxima.resize(static_cast<size_t>(n_blocks));
    keys.resize(std::max(keys.size(), static_cast<size_t>(n)));  // grows only: no clearing
    for (int64_t b = 0; b < n_blocks; ++b)
        maxima[size_t(b)] = block_key_max(row, b * kKeyBlock, std::min(n, (b + 1) * kKeyBlock));
    // A floor under the k-th largest key: the k-th largest block maximum (k blocks reach it, so
    // k tokens do), or with fewer blocks than k the lowest key.
    int64_t ties = 0;
    uint32_t floor = 0;
    if (k <= n_blocks) {
        std::copy(maxima.begin(), maxima.end(), keys.begin());
        floor = kth_largest(keys.data(), n_blocks, k, ties);
    }
    // The keys above the floor, from the blocks that pass it: about k on a usual row. If they
    // are fewer than k, the floor is the k-th largest key (a row of many equal logits, or of few
    // above -inf, ends here).
    int64_t above = 0;
    for (int64_t b = 0; b < n_blocks; ++b) {
        if (maxima[size_t(b)] <= floor) continue;
        const int64_t end = std::min(n, (b + 1) * kKeyBlock);
        for (int64_t i = b * kKeyBlock; i < end; ++i) {
            const uint32_t key = rank_key(row[i]);
            keys[size_t(above)] = key;  // written always, kept if above: no branch on the data
            above += key > floor;
        }
    }
    uint32_t threshold = floor;
    ties = k - above;
    if (above >= k) threshold = kth_largest(keys.data(), above, k, ties);
    // Every token above the threshold, and the lowest ids of those at it: from the blocks that
    // pass it, and those that reach it until the ties are taken.
    logits.resize(static_cast<size_t>(k + 1));
    ids.resize(static_cast<size_t>(k + 1));
    int64_t taken = 0;
    for (int64_t b = 0; b < n_blocks && taken < k; ++b) {
        if (maxima[size_t(b)] < threshold || (maxima[size_t(b)] == threshold && ties == 0)) continue;
        const int64_t end = std::min(n, (b + 1) * kKeyBlock);
        for (int64_t i = b * kKeyBlock; i < end; ++i) {
            const uint32_t key = rank_key(row[i]);
            const bool tie = (key == threshold) & (ties > 0);
            logits[size_t(taken)] = row[i];
            ids[size_t(taken)] = static_cast<int32_t>(i);
            taken += (key > threshold) | tie;
            ties -= tie;
        }
    }
    logits.resize(static_cast<size_t>(k));
    ids.resize(static_cast<size_t>(k));
}

void sample_weights(const float* logits, int64_t n, float max_logit, float temperature, float* w) {
    const Exponent e = exponent_of(max_logit, temperature);
    for (int64_t b = 0; b < n; b += kBlock) {
        float pad[kBlock], block[kBlock];
        block_weights(block_at(logits, b, n, pad), block, e);
        std::copy_n(block, std::min<int64_t>(kBlock, n - b), w + b);
    }
}

int32_t draw_token(const Candidates& cand, const SampleParams& sp, const ForRanges& for_ranges) {
    const int64_t size = cand.size;
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
        for (int64_t c = c0; c < c1; ++c) {
            const int64_t end = std::min(size, (c + 1) * kChunk);
            for (int64_t b = c * kChunk; b < end; b += kBlock) {
                float pad[kBlock];
                const float m = block_max(block_at(cand.logits, b, end, pad));
                cmax[size_t(c)] = m > cmax[size_t(c)] ? m : cmax[size_t(c)];
            }
        }
    });
    float max_logit = -INFINITY;
    for (float m : cmax) max_logit = std::max(max_logit, m);
    const Exponent e = exponent_of(max_logit, sp.temperature);

    thread_local std::vector<float> weights, maxima;
    std::vector<float>& w = weights;
    std::vector<float>& block_maxima = maxima;
    w.resize(static_cast<size_t>(size));
    block_maxima.resize(static_cast<size_t>((size + kBlock - 1) / kBlock));
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
    sums.resize(static_cast<size_t>(n_chunks * (kBins + 1)));
    over_chunks([&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c)
            weigh_chunk(cand, c * kChunk, std::min(size, (c + 1) * kChunk), e, binned, w.data(),
                        block_maxima.data(), &sums[size_t(c * (kBins + 1))]);
    });
    double total = 0.0, bins[kBins] = {};
    for (int64_t c = 0; c < n_chunks; ++c) {
        const double* cs = &sums[size_t(c * (kBins + 1))];
        total += cs[0];
        for (int b = 0; b < kBins; ++b) bins[b] += cs[1 + b];
    }
    // p[0, n) holds every token the filters can keep (the nucleus's bins, or every candidate).
    thread_local std::vector<Weighted> probabilities;
    std::vector<Weighted>& p = probabilities;
    float least = 0.0f;
    if (binned) {
        double cum = 0.0;
        int last = 0;
        while (last < kBins - 1 && (cum += bins[last]) <= reach * total) ++last;
        last = std::min(last + 1, kBins - 1);
        if (last < kBins - 1) least = std::ldexp(1.0f, -last);
    }
    gather(cand, w.data(), block_maxima.data(), least, p);
    int32_t token = walk(p, static_cast<int64_t>(p.size()), size, total, sp);
    if (token < 0) {  // the rule ran past the bins: all of them
        gather(cand, w.data(), block_maxima.data(), 0.0f, p);
        token = walk(p, size, size, total, sp);
    }
    return token;
}

int32_t draw_token(const std::vector<std::pair<float, int32_t>>& cand, const SampleParams& sp,
                   const ForRanges& for_ranges) {
    thread_local std::vector<float> logits;
    thread_local std::vector<int32_t> ids;
    logits.resize(cand.size());
    ids.resize(cand.size());
    for (size_t i = 0; i < cand.size(); ++i) {
        logits[i] = cand[i].first;
        ids[i] = cand[i].second;
    }
    return draw_token(Candidates{logits.data(), ids.data(), static_cast<int64_t>(cand.size())}, sp,
                      for_ranges);
}

namespace {

// Candidates before b: descending logit (a NaN below every number), then ascending id.
bool logit_before(float la, int32_t ia, float lb, int32_t ib) {
    const uint32_t ka = rank_key(la), kb = rank_key(lb);
    return ka > kb || (ka == kb && ia < ib);
}

}  // namespace

TopAsk top_ask(const SampleParams& sp) {
    if (sp.temperature <= 0.0f || sp.top_k == 1) return TopAsk{1, 0.0f};
    if (sp.top_k > 0) return TopAsk{std::min(sp.top_k, kMaxTopAsk), sp.temperature};
    return TopAsk{kDrawCandidates, sp.temperature};
}

void top_logits_row(const float* row, int64_t n, const TopAsk& ask, TopLogits& out) {
    out.size = n;
    out.logits.clear();
    out.ids.clear();
    out.max_logit = -INFINITY;
    for (int64_t i = 0; i < n; ++i) out.max_logit = row[i] > out.max_logit ? row[i] : out.max_logit;
    out.mass = 0.0;
    if (ask.temperature > 0.0f && std::isfinite(out.max_logit)) {
        float w[kBlock];
        for (int64_t b = 0; b < n; b += kBlock) {
            const int64_t len = std::min<int64_t>(kBlock, n - b);
            sample_weights(row + b, len, out.max_logit, ask.temperature, w);
            for (int64_t i = 0; i < len; ++i) out.mass += w[i];
        }
    }
    if (ask.k <= 0 || n == 0) {
        out.floor = INFINITY;  // no candidates: nothing is known to be among them
        return;
    }
    uint32_t threshold = 0;  // every key: the whole row
    out.floor = -INFINITY;
    if (ask.k < n) {
        thread_local std::vector<float> top;
        thread_local std::vector<int32_t> top_ids;
        top_k_candidates(row, n, ask.k, top, top_ids);
        threshold = ~0u;
        for (float x : top) threshold = std::min(threshold, rank_key(x));
        float at = top[0];
        for (float x : top)
            if (rank_key(x) == threshold) at = x;
        out.floor = threshold == 0 ? -INFINITY : at;  // the k-th a NaN: every token is kept
    }
    for (int64_t i = 0; i < n; ++i)
        if (rank_key(row[i]) >= threshold) {
            out.logits.push_back(row[i]);
            out.ids.push_back(static_cast<int32_t>(i));
        }
}

TopLogits merge_top_logits(const std::vector<TopLogits>& parts, const std::vector<int32_t>& offsets,
                           float temperature) {
    TopLogits m;
    m.floor = -INFINITY;
    for (const TopLogits& p : parts) {
        m.size += p.size;
        m.max_logit = p.max_logit > m.max_logit ? p.max_logit : m.max_logit;
        // A part with no candidates vouches for none of its tokens; NaN never passes a floor.
        m.floor = std::isnan(p.floor) || p.floor > m.floor ? p.floor : m.floor;
    }
    if (std::isnan(m.floor)) m.floor = INFINITY;
    for (size_t i = 0; i < parts.size(); ++i) {
        const TopLogits& p = parts[i];
        if (temperature > 0.0f && p.mass > 0.0)
            m.mass += p.mass * std::exp2((double(p.max_logit) - double(m.max_logit)) * 1.4426950408889634 /
                                         double(temperature));
        for (size_t c = 0; c < p.logits.size(); ++c)
            if (p.logits[c] >= m.floor || m.floor == -INFINITY) {
                m.logits.push_back(p.logits[c]);
                m.ids.push_back(p.ids[c] + offsets[i]);
            }
    }
    return m;
}

int32_t draw_from_top(const TopLogits& top, const SampleParams& sp) {
    if (top.size == 0) return 0;
    // The candidates the whole row's order begins with: those at or above the floor.
    const bool all = top.floor == -INFINITY;
    if (sp.temperature <= 0.0f || sp.top_k == 1) {
        int64_t best = -1;
        for (size_t c = 0; c < top.logits.size(); ++c)
            if ((all || top.logits[c] >= top.floor) &&
                (best < 0 ||
                 logit_before(top.logits[c], top.ids[c], top.logits[size_t(best)], top.ids[size_t(best)])))
                best = int64_t(c);
        if (best < 0) return -1;
        return std::isnan(top.logits[size_t(best)]) ? 0 : top.ids[size_t(best)];  // every logit NaN: 0
    }
    thread_local std::vector<float> logits, w;
    thread_local std::vector<int32_t> ids;
    thread_local std::vector<Weighted> p;
    logits.clear();
    ids.clear();
    for (size_t c = 0; c < top.logits.size(); ++c)
        if (all || top.logits[c] >= top.floor) {
            logits.push_back(top.logits[c]);
            ids.push_back(top.ids[c]);
        }
    const auto n = static_cast<int64_t>(logits.size());
    if (all && n != top.size) return -1;  // not the whole row after all
    w.resize(logits.size());
    sample_weights(logits.data(), n, top.max_logit, sp.temperature, w.data());
    p.clear();
    for (int64_t i = 0; i < n; ++i) p.emplace_back(w[size_t(i)], ids[size_t(i)]);
    // The whole row: the walk's mass is its own sum in draw_token's order; here, the reduction's.
    return walk(p, n, top.size, top.mass, sp);
}

namespace {

// The first index of the maximum; a NaN ranks below every number (0 when every logit is NaN).
int32_t argmax(const float* x, int64_t n) {
    int64_t best = 0;
    while (best + 1 < n && std::isnan(x[best])) ++best;
    for (int64_t i = best + 1; i < n; ++i)
        if (x[i] > x[best]) best = i;
    return std::isnan(x[best]) ? 0 : static_cast<int32_t>(best);
}

// A row through draw_token with only the tokens it needs: a top_k's candidates by logit (the
// probabilities' order: exp is monotonic; top_k_candidates reads the row in place), or with only
// min_p the tokens within T ln(min_p) of the maximum (a little more, for rounding: draw_token
// applies the exact rule), else the whole row, read in place. Only then are exponentials taken,
// and only of those.
int32_t draw_row(const float* row, int64_t vocab, const SampleParams& sp, const ForRanges& for_ranges) {
    thread_local std::vector<float> logits;
    thread_local std::vector<int32_t> ids;
    if (sp.top_k > 0 && sp.top_k < vocab) {
        top_k_candidates(row, vocab, sp.top_k, logits, ids);
        return draw_token(Candidates{logits.data(), ids.data(), static_cast<int64_t>(logits.size())}, sp,
                          for_ranges);
    }
    if (sp.top_p >= 1.0f && sp.min_p > 0.0f) {
        logits.clear();
        ids.clear();
        const float max_logit = row[argmax(row, vocab)];
        if (std::isnan(max_logit)) return 0;  // every logit NaN, as greedy answers
        const double floor = max_logit + sp.temperature * std::log(static_cast<double>(sp.min_p)) - 1e-3;
        for (int64_t i = 0; i < vocab; ++i)
            if (row[i] >= floor) {
                logits.push_back(row[i]);
                ids.push_back(static_cast<int32_t>(i));
            }
        return draw_token(Candidates{logits.data(), ids.data(), static_cast<int64_t>(logits.size())}, sp,
                          for_ranges);
    }
    return draw_token(Candidates{row, nullptr, vocab}, sp, for_ranges);
}

}  // namespace

int32_t sample_row(const float* row, int64_t n, const SampleParams& sp, const ForRanges& for_ranges) {
    if (sp.temperature <= 0.0f || sp.top_k == 1) return argmax(row, n);
    return draw_row(row, n, sp, for_ranges);
}

}  // namespace niwa::kernels
