// EngineForm (the Engine page's draft of the knobs) over a real Settings file and StatsModel,
// and the advice shown next to an engine failure.
#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

#include "gui/app/engine_advice.h"
#include "gui/app/engine_form.h"
#include "gui/core/settings.h"
#include "gui/core/stats_model.h"
#include "support/temp_dir.h"

using namespace niwa::gui;

class TestEngineForm : public QObject {
    Q_OBJECT

    niwa::test::TempDir* dir_ = nullptr;
    Settings* settings_ = nullptr;
    StatsModel* stats_ = nullptr;
    QString model_;

private slots:
    void init() {
        dir_ = new niwa::test::TempDir;
        settings_ = new Settings(dir_->file(QStringLiteral("settings.ini")));
        stats_ = new StatsModel;
        model_ = dir_->file(QStringLiteral("model.gguf"));
        QFile f(model_);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("GGUF");
    }
    void cleanup() {
        delete stats_;
        delete settings_;
        delete dir_;
    }

    void startsFromSettingsAndNeedsAModel() {
        EngineForm form(settings_, stats_, false);
        QCOMPARE(form.port(), Settings::kDefaultPort);
        QCOMPARE(form.maxSeqs(), Settings::kDefaultMaxSeqs);
        QCOMPARE(form.kvFormat(), QStringLiteral("k3v2"));
        QVERIFY(!form.valid());
        QVERIFY(form.errors().contains(QStringLiteral("modelPath")));
        QVERIFY(!form.apply());
    }

    void eachBadFieldSaysWhy() {
        EngineForm form(settings_, stats_, false);
        form.setModelPath(model_);
        QVERIFY2(form.valid(), qPrintable(form.errors().keys().join(',')));
        form.setPort(80);
        form.setMemFraction(1.5);
        form.setMaxSeqs(0);
        form.setContextLength(1 << 20);
        form.setKvFormat(QStringLiteral("q9"));
        form.setBackend(QStringLiteral("metal"));
        form.setMmprojPath(dir_->file(QStringLiteral("missing.gguf")));
        const QVariantMap e = form.errors();
        for (const char* field :
             {"port", "memFraction", "maxSeqs", "contextLength", "kvFormat", "backend", "mmprojPath"})
            QVERIFY2(!e.value(QLatin1String(field)).toString().isEmpty(), field);
        QVERIFY(!e.contains(QStringLiteral("modelPath")));
        form.setModelPath(dir_->file(QStringLiteral("model.bin")));
        QVERIFY(
            form.errors().value(QStringLiteral("modelPath")).toString().contains(QStringLiteral(".gguf")));
    }

    void applyWritesSettingsOnce() {
        EngineForm form(settings_, stats_, false);
        form.setModelPath(model_);
        form.setBackend(QStringLiteral("cpu"));
        form.setPort(9123);
        form.setMaxSeqs(8);
        form.setContextLength(8192);
        form.setKvFormat(QStringLiteral("f16"));
        QVERIFY(form.dirty());
        QSignalSpy changed(settings_, &Settings::changed);
        QVERIFY(form.apply());
        QCOMPARE(changed.count(), 1);
        QVERIFY(!form.dirty());
        const EngineSettings s = settings_->engineSettings();
        QCOMPARE(s.modelPath, model_);
        QCOMPARE(s.backend, QStringLiteral("cpu"));
        QCOMPARE(s.port, 9123);
        QCOMPARE(s.maxSeqs, 8);
        QCOMPARE(s.maxContext, 8192);
        QCOMPARE(s.kvFormat, QStringLiteral("f16"));
        form.setPort(9124);
        form.revert();
        QCOMPARE(form.port(), 9123);
    }

    void estimateFollowsTheKnobsAndTheGpusSeen() {
        EngineForm form(settings_, stats_, false);
        form.setModelPath(model_);
        QVERIFY(!form.estimate().value(QStringLiteral("known")).toBool());
        QJsonObject gpu{{QStringLiteral("index"), 0},
                        {QStringLiteral("name"), QStringLiteral("RTX")},
                        {QStringLiteral("vram_total_bytes"), 64.0 * 1024 * 1024 * 1024},
                        {QStringLiteral("vram_used_bytes"), 0},
                        {QStringLiteral("vram_engine_bytes"), 0}};
        QSignalSpy changed(&form, &EngineForm::changed);
        stats_->update(QJsonObject{{QStringLiteral("gpus"), QJsonArray{gpu}}});
        QCOMPARE(changed.count(), 1);
        QVariantMap e = form.estimate();
        QVERIFY(e.value(QStringLiteral("known")).toBool());
        QCOMPARE(e.value(QStringLiteral("devices")).toInt(), 1);
        // The model file here is 4 bytes: all but the workspace is free for caches.
        const int users = e.value(QStringLiteral("users")).toInt();
        QCOMPARE(users, Settings::kDefaultMaxSeqs);
        form.setMaxSeqs(1000);
        e = form.estimate();
        QVERIFY(!e.value(QStringLiteral("fits")).toBool());
        QVERIFY(e.value(QStringLiteral("users")).toInt() < 1000);
        form.setBackend(QStringLiteral("cpu"));  // GPUs do not count on the CPU backend
        QVERIFY(!form.estimate().value(QStringLiteral("known")).toBool());
    }

    void wslPathsAreNotCheckedHere() {
        EngineForm form(settings_, stats_, true);
        form.setModelPath(QStringLiteral("/home/niwa/models/bonsai.gguf"));
        QVERIFY(!form.errors().contains(QStringLiteral("modelPath")));
        form.setDistro(QStringLiteral("Ubuntu 24.04"));
        QVERIFY(form.errors().contains(QStringLiteral("distro")));
    }

    void adviceForCommonFailures() {
        QVERIFY(engineFixFor({}).isEmpty());
        QVERIFY(engineFixFor(QStringLiteral("could not start /x/niwa-engine: No such file"))
                    .contains(QStringLiteral("setup")));
        QVERIFY(engineFixFor(QStringLiteral("niwa-engine exited with code 1: bind: Address already in use"))
                    .contains(QStringLiteral("port")));
        QVERIFY(engineFixFor(QStringLiteral("niwa-engine exited with code 1: CUDA out of memory"))
                    .contains(QStringLiteral("context length")));
        QVERIFY(engineFixFor(QStringLiteral("exited with code 1: --model /m.gguf: no such file"))
                    .contains(QStringLiteral("model file is missing")));
        QVERIFY(engineFixFor(QStringLiteral("exited with code 1: something else"))
                    .contains(QStringLiteral("log")));
        // The quoted command line (paths, flags) does not count: this is a memory failure.
        QVERIFY(engineFixFor(
                    QStringLiteral("niwa-engine exited with code 1: $ niwa-engine serve --model /m/x.gguf "
                                   "--backend cuda\nniwa-engine serve: error: std::bad_alloc"))
                    .contains(QStringLiteral("ran out of memory")));
    }
};

QTEST_GUILESS_MAIN(TestEngineForm)
#include "test_engine_form.moc"
