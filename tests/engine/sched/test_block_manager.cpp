// BlockManager: blocks are handed out and returned whole, a failed reservation changes
// nothing, and a shared block returns to the pool only with its last reference.
#include <QtTest>

#include <set>

#include "engine/sched/block_manager.h"

using niwa::sched::BlockManager;

class TestBlockManager : public QObject {
    Q_OBJECT

private slots:
    void reserve_and_release() {
        BlockManager m(8, 4);
        QCOMPARE(m.blocks_for(0), 0);
        QCOMPARE(m.blocks_for(4), 1);
        QCOMPARE(m.blocks_for(5), 2);
        std::vector<int32_t> a, b;
        QVERIFY(m.reserve(a, 9));  // 3 blocks
        QCOMPARE(int(a.size()), 3);
        QVERIFY(m.reserve(a, 12));  // still 3
        QCOMPARE(int(a.size()), 3);
        QVERIFY(m.reserve(b, 5));
        QCOMPARE(m.used(), 5);
        std::set<int32_t> distinct(a.begin(), a.end());
        distinct.insert(b.begin(), b.end());
        QCOMPARE(int(distinct.size()), 5);
        for (int32_t x : a) QCOMPARE(m.refs(x), 1);
        m.release(a);
        QVERIFY(a.empty());
        QCOMPARE(m.used(), 2);
        QCOMPARE(m.free(), 6);
    }

    void exhaustion_leaves_blocks_untouched() {
        BlockManager m(4, 16);
        std::vector<int32_t> a, b;
        QVERIFY(m.reserve(a, 48));
        QVERIFY(m.reserve(b, 10));
        const std::vector<int32_t> before = b;
        QVERIFY(!m.reserve(b, 40));  // needs 2 more, 0 free
        QCOMPARE(b, before);
        QCOMPARE(m.free(), 0);
        m.release(a);
        QVERIFY(m.reserve(b, 40));
        QCOMPARE(int(b.size()), 3);
    }

    void shared_block_lives_until_last_reference() {
        BlockManager m(2, 4);
        std::vector<int32_t> a;
        QVERIFY(m.reserve(a, 4));
        const int32_t blk = a[0];
        m.share(blk);
        QCOMPARE(m.refs(blk), 2);
        std::vector<int32_t> other{blk};
        m.release(a);
        QCOMPARE(m.refs(blk), 1);
        QCOMPARE(m.used(), 1);
        // A writer asking for fresh blocks never gets the shared one.
        std::vector<int32_t> w;
        QVERIFY(m.reserve(w, 4));
        QVERIFY(w[0] != blk);
        m.release(other);
        QCOMPARE(m.used(), 1);
        QCOMPARE(m.refs(blk), 0);
        std::vector<int32_t> again{blk};
        QVERIFY_THROWS_EXCEPTION(std::logic_error, m.release(again));
        QVERIFY_THROWS_EXCEPTION(std::logic_error, m.share(blk));
    }
};

QTEST_GUILESS_MAIN(TestBlockManager)
#include "test_block_manager.moc"
