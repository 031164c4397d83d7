// `niwa-engine template`: prints exactly what ChatTemplate renders, errors go to stderr
// with exit status 1.
#include <QFile>
#include <QProcess>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/gguf/writer.h"
#include "engine/text/chat_template.h"
#include "engine/text/synthetic_template.h"
#include "support/temp_dir.h"

using json = nlohmann::ordered_json;

namespace {

void write_file(const QString& path, const std::string& text) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text.data(), static_cast<qint64>(text.size()));
}

struct Run {
    int status;
    QByteArray out;
    QByteArray err;
};

Run engine(const QStringList& args) {
    QProcess p;
    p.start(NIWA_ENGINE_PATH, args);
    p.waitForFinished(60000);
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

}  // namespace

class CmdTemplateTest : public QObject {
    Q_OBJECT

private slots:
    void prints_the_rendered_prompt() {
        niwa::test::TempDir dir;
        const QString model = dir.file("m.gguf");
        niwa::gguf::Writer w;
        w.add_string("general.architecture", "qwen35");
        w.add_string("tokenizer.chat_template", std::string(niwa::text::synthetic_chat_template()));
        w.write(model.toStdString());
        const json request = {{"messages", json::array({{{"role", "system"}, {"content", "Be brief."}},
                                                        {{"role", "user"}, {"content", "Hi 😀"}}})},
                              {"reasoning_effort", "low"}};
        write_file(dir.file("req.json"), request.dump());

        const Run r = engine({"template", "--model", model, "--request", dir.file("req.json")});
        QVERIFY2(r.status == 0, r.err.constData());
        const std::string want =
            niwa::text::ChatTemplate(std::string(niwa::text::synthetic_chat_template())).render(request);
        QCOMPARE(r.out, QByteArray::fromStdString(want));
    }

    void chat_template_file_overrides() {
        niwa::test::TempDir dir;
        write_file(dir.file("t.jinja"), "{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}");
        write_file(dir.file("req.json"), R"({"messages": [{"role": "user", "content": "x"}]})");
        const Run r =
            engine({"template", "--chat-template", dir.file("t.jinja"), "--request", dir.file("req.json")});
        QCOMPARE(r.status, 0);
        QCOMPARE(r.out, QByteArray("[user:x]"));
    }

    void template_errors_exit_1_on_stderr() {
        niwa::test::TempDir dir;
        write_file(dir.file("t.jinja"), std::string(niwa::text::synthetic_chat_template()));
        write_file(
            dir.file("req.json"),
            R"({"messages": [{"role": "user", "content": "x"}, {"role": "system", "content": "late"}]})");
        const Run r =
            engine({"template", "--chat-template", dir.file("t.jinja"), "--request", dir.file("req.json")});
        QCOMPARE(r.status, 1);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.contains("The system message must be the first message."), r.err.constData());

        write_file(dir.file("bad.json"), "{not json");
        const Run bad =
            engine({"template", "--chat-template", dir.file("t.jinja"), "--request", dir.file("bad.json")});
        QCOMPARE(bad.status, 1);
        QVERIFY2(bad.err.contains("not valid JSON"), bad.err.constData());
    }
};

QTEST_GUILESS_MAIN(CmdTemplateTest)
#include "test_cmd_template.moc"
