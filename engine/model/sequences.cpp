#include "engine/model/sequences.h"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>

namespace niwa::model {

Sequences::Sequences(Model& m) : m_(m), blocks_(m.kv_blocks()), seqs_(size_t(m.config().max_seqs)) {}

int Sequences::add() {
    for (size_t i = 0; i < seqs_.size(); ++i) {
        if (seqs_[i].used) continue;
        seqs_[i] = Seq{true, 0, {}};
        m_.clear_slot(int(i));
        return int(i);
    }
    throw std::runtime_error("all " + std::to_string(seqs_.size()) + " sequence slots are in use");
}

void Sequences::remove(int id) {
    Seq& s = seqs_.at(size_t(id));
    for (int32_t b : s.blocks) blocks_.release(b);
    s = Seq{};
}

cache::ParkedSequence Sequences::park(int id) {
    const Seq& s = seqs_.at(size_t(id));
    if (!s.used) throw std::runtime_error("sequence " + std::to_string(id) + " was not added");
    cache::ParkedSequence p = m_.park(id, s.blocks, s.pos);
    remove(id);
    return p;
}

int Sequences::restore(const cache::ParkedSequence& parked) {
    const int id = add();
    Seq& s = seqs_[size_t(id)];
    const int bt = m_.config().block_tokens;
    while (int64_t(s.blocks.size()) * bt < parked.n_tokens) s.blocks.push_back(blocks_.allocate());
    m_.restore(parked, id, s.blocks);
    s.pos = parked.n_tokens;
    return id;
}

std::vector<std::vector<float>> Sequences::feed(const std::vector<Input>& inputs, bool all_logits) {
    const int64_t vocab = m_.hparams().n_vocab;
    const int bt = m_.config().block_tokens, budget = m_.config().max_step_tokens;
    std::vector<std::vector<float>> out(inputs.size());
    std::vector<size_t> done(inputs.size(), 0);  // tokens of each input already fed
    for (;;) {
        StepPlan step;
        std::vector<std::pair<size_t, int>> rows_of;  // (input, logit rows) in step order
        for (size_t i = 0; i < inputs.size() && step.n_tokens() < budget; ++i) {
            const Input& in = inputs[i];
            const size_t n = std::min(in.tokens.size() - done[i], size_t(budget - step.n_tokens()));
            if (n == 0) continue;
            Seq& s = seqs_.at(size_t(in.seq));
            if (!s.used) throw std::runtime_error("sequence " + std::to_string(in.seq) + " was not added");
            while (int64_t(s.blocks.size()) * bt < s.pos + int64_t(n)) s.blocks.push_back(blocks_.allocate());
            kernels::SeqInfo info;
            info.q_start = step.n_tokens();
            info.n_q = int32_t(n);
            info.pos0 = s.pos;
            info.state_slot = in.seq;
            info.table_start = int32_t(step.block_tables.size());
            step.block_tables.insert(step.block_tables.end(), s.blocks.begin(), s.blocks.end());
            for (size_t t = 0; t < n; ++t) {
                const int32_t pos = s.pos + int32_t(t);
                step.tokens.push_back(in.tokens[done[i] + t]);
                step.positions.push_back(pos);
                step.kv_slots.push_back(s.blocks[size_t(pos / bt)] * bt + pos % bt);
            }
            const bool last = done[i] + n == in.tokens.size();
            if (all_logits) {
                step.logit_rows.push_back({info.q_start, info.q_start + int64_t(n)});
                rows_of.push_back({i, int(n)});
            } else if (last) {
                step.logit_rows.push_back({info.q_start + int64_t(n) - 1, info.q_start + int64_t(n)});
                rows_of.push_back({i, 1});
            }
            step.seqs.push_back(info);
            s.pos += int32_t(n);
            done[i] += n;
        }
        if (step.n_tokens() == 0) break;
        const std::span<const float> logits = m_.step(step);
        size_t at = 0;
        for (auto [i, rows] : rows_of) {
            out[i].insert(out[i].end(), logits.begin() + int64_t(at) * vocab,
                          logits.begin() + int64_t(at + size_t(rows)) * vocab);
            at += size_t(rows);
        }
    }
    return out;
}

}  // namespace niwa::model
