// Shard plans cover every head and channel exactly once (row-parallel side) on Hadamard-block
// boundaries, for the 27B geometry and small ones, at several world sizes.
#include <QtTest>

#include <numeric>
#include <set>

#include "engine/model/shard.h"

using namespace niwa;

namespace {

model::HParams geometry_27b() {
    model::HParams hp;
    hp.n_layer = 64, hp.n_embd = 5120, hp.n_ff = 17408, hp.n_vocab = 248320;
    hp.n_head = 24, hp.n_head_kv = 4, hp.head_dim = 256, hp.n_rot = 64, hp.rope_theta = 1e7f;
    hp.ssm_conv_kernel = 4, hp.ssm_d_state = 128, hp.ssm_n_k_heads = 16, hp.ssm_n_v_heads = 48,
    hp.ssm_d_inner = 6144;
    return hp;
}

}  // namespace

class TestShardPlan : public QObject {
    Q_OBJECT

private slots:
    void split_even_covers_everything() {
        for (int n : {1, 7, 17, 100})
            for (int w = 1; w <= 5; ++w) {
                int64_t at = 0;
                for (int r = 0; r < w; ++r) {
                    const model::Range g = model::split_even(n, w, r);
                    QCOMPARE(g.begin, at);
                    QVERIFY(g.size() == n / w || g.size() == n / w + 1);
                    at = g.end;
                }
                QCOMPARE(at, int64_t(n));
            }
    }

    void ffn_down_splits_9_and_8_blocks_on_two_ranks() {
        const auto hp = geometry_27b();
        const auto a = model::ShardPlan::make(hp, 1024, true, 0, 2),
                   b = model::ShardPlan::make(hp, 1024, true, 1, 2);
        QCOMPARE(a.ffn.size(), int64_t(9 * 1024));
        QCOMPARE(b.ffn.size(), int64_t(8 * 1024));
        QCOMPARE(a.q_heads.size(), int64_t(12));
        QCOMPARE(a.kv_heads.size(), int64_t(2));
        QCOMPARE(b.kv_heads.begin, int64_t(2));
    }

    void every_value_head_once_with_its_key_head() {
        const auto hp = geometry_27b();
        for (bool grouped : {true, false})
            for (int world : {1, 2, 3, 4}) {
                std::set<int32_t> seen;
                for (int r = 0; r < world; ++r) {
                    const auto p = model::ShardPlan::make(hp, 1024, grouped, r, world);
                    QCOMPARE((p.v_in.begin * 128) % 1024, int64_t(0));
                    QCOMPARE(p.v_tiled.size(), size_t(p.v_in.size()));
                    for (size_t i = 0; i < p.v_tiled.size(); ++i) {
                        const int32_t t = p.v_tiled[i];
                        QVERIFY(seen.insert(t).second);
                        // Tiled head t uses key head t % 16 (MODEL.md).
                        QCOMPARE(p.k_heads[size_t(p.v_key[i])], t % 16);
                        if (grouped) {  // position q in ssm_out's input is grouped head q
                            const int64_t j = p.v_in.begin + int64_t(i);
                            QCOMPARE(int64_t(t), (j % 3) * 16 + j / 3);
                        }
                    }
                }
                QCOMPARE(seen.size(), size_t(48));
            }
    }

    void query_heads_map_to_their_kv_heads() {
        const auto hp = geometry_27b();
        for (int world : {1, 2, 3, 4, 6}) {
            int64_t covered = 0;
            for (int r = 0; r < world; ++r) {
                const auto p = model::ShardPlan::make(hp, 1024, true, r, world);
                QCOMPARE((p.q_heads.begin * 256) % 1024, int64_t(0));
                covered += p.q_heads.size();
                for (int64_t h = p.q_heads.begin; h < p.q_heads.end; ++h)
                    QCOMPARE(p.kv_heads.begin + p.kv_of_q[size_t(h - p.q_heads.begin)], h / 6);
            }
            QCOMPARE(covered, int64_t(24));
        }
    }
};

QTEST_APPLESS_MAIN(TestShardPlan)
#include "test_shard_plan.moc"
