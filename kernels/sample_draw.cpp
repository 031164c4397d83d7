// draw_token (sample_draw.h): probabilities as exp((logit - max) / T) in double, unnormalised
// (only ratios matter); a descending prefix of them grown on demand by selection.
#include "kernels/sample_draw.h"

#include <algorithm>
#include <cmath>

namespace niwa::kernels {

namespace {

using Weighted = std::pair<double, int32_t>;  // unnormalised probability, token id

// Descending probability, then ascending id: a strict total order, so any prefix is the same
// whichever way it was found.
bool before(const Weighted& a, const Weighted& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// The first `sorted` entries of `p` are the largest in descending order; grow() extends that.
class DescendingPrefix {
public:
    explicit DescendingPrefix(std::vector<Weighted>& p) : p_(p) {}
    int64_t size() const { return static_cast<int64_t>(p_.size()); }
    // Makes at least the first min(m, size) entries sorted; returns how many are.
    int64_t grow(int64_t m) {
        m = std::min(m, size());
        if (m <= sorted_) return sorted_;
        const auto first = p_.begin() + sorted_, nth = p_.begin() + m;
        if (m < size()) std::nth_element(first, nth, p_.end(), before);
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
    int64_t sorted_ = 0;
};

}  // namespace

int32_t draw_token(std::vector<std::pair<float, int32_t>>& cand, const SampleParams& sp) {
    float max_logit = -INFINITY;
    for (const auto& c : cand) max_logit = std::max(max_logit, c.first);
    thread_local std::vector<Weighted> p;
    p.resize(cand.size());
    double total = 0.0;
    for (size_t i = 0; i < cand.size(); ++i) {
        p[i] = {std::exp((static_cast<double>(cand[i].first) - max_logit) / sp.temperature), cand[i].second};
        total += p[i].first;
    }
    DescendingPrefix order(p);
    // The mass each step renormalises by: the kept prefix's, summed in descending order once a
    // filter has cut it (then any two callers agree to the bit), else the whole candidates'.
    int64_t kept = order.size();
    double mass = total;
    auto prefix_mass = [&](int64_t n) {
        double m = 0.0;
        for (int64_t i = 0; i < n; ++i) m += order.at(i).first;
        return m;
    };
    if (sp.top_k > 0 && sp.top_k <= kept) {
        kept = order.grow(sp.top_k);
        mass = prefix_mass(kept);
    }
    if (sp.top_p < 1.0f) {
        double cum = 0.0;
        int64_t n = 0;
        while (n < kept) {
            cum += order.at(n++).first / mass;
            if (cum >= sp.top_p) break;
        }
        kept = n;
        mass = prefix_mass(kept);
    }
    if (sp.min_p > 0.0f) {
        const double floor = sp.min_p * order.at(0).first;
        int64_t n = 1;  // the most likely token always stays
        while (n < kept && order.at(n).first >= floor) ++n;
        kept = n;
        mass = prefix_mass(kept);
    }
    const double target = static_cast<double>(sp.uniform) * mass;
    double cum = 0.0;
    for (int64_t i = 0; i < kept; ++i) {
        cum += order.at(i).first;
        if (target < cum) return order.at(i).second;
    }
    return order.at(kept - 1).second;  // rounding put the target at the very top
}

}  // namespace niwa::kernels
