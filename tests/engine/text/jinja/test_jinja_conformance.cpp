// The interpreter against Python's jinja2 configured as transformers configures it: small
// templates that each exercise one construct (constructs.json) and conversations rendered
// with the synthetic chat template (conversations.json). Output must match byte for byte;
// where jinja2 raises, we must raise too, with raise_exception's message verbatim.
#include <QFile>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/text/chat_template.h"
#include "engine/text/jinja/interpreter.h"
#include "engine/text/synthetic_template.h"
#include "reference_renderer.h"

using niwa::text::ChatRequestError;
using niwa::text::ChatTemplate;
using json = nlohmann::ordered_json;
namespace jinja = niwa::text::jinja;

namespace {

json load_cases(const char* file) {
    QFile f(QString(NIWA_SOURCE_DIR) + "/tests/engine/text/jinja/" + file);
    if (!f.open(QIODevice::ReadOnly)) return json();
    const QByteArray bytes = f.readAll();
    return json::parse(bytes.begin(), bytes.end());
}

// Renders one case as the engine would: plain templates with their context, requests
// through ChatTemplate. The answer has the reference's shape.
json render_ours(const json& c) {
    try {
        if (c.contains("request")) return {{"output", ChatTemplate(c["template"]).render(c["request"])}};
        const jinja::Template t(c["template"].get<std::string>());
        const json context = c.contains("context") ? c["context"] : json::object();
        return {{"output", t.render(jinja::Value::from_json(context).as_dict())}};
    } catch (const ChatRequestError& e) {
        return {{"error", e.what()}, {"raised", true}};
    } catch (const jinja::RaisedError& e) {
        return {{"error", e.what()}, {"raised", true}};
    } catch (const std::exception& e) {
        return {{"error", e.what()}, {"raised", false}};
    }
}

}  // namespace

class JinjaConformanceTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        constructs_ = load_cases("constructs.json");
        json conversations = load_cases("conversations.json");
        QVERIFY2(constructs_.is_object() && conversations.is_object(), "cannot read the case files");
        QVERIFY(constructs_["cases"].size() > 100);
        for (auto& c : conversations["cases"])
            c["template"] = std::string(niwa::text::synthetic_chat_template());
        conversations_ = conversations;

        json all = {{"cases", json::array()}};
        for (const auto& c : constructs_["cases"]) all["cases"].push_back(c);
        for (const auto& c : conversations_["cases"]) all["cases"].push_back(c);
        const niwa::test::ReferenceResult ref = niwa::test::render_with_jinja2(all);
        QVERIFY2(ref.ok, qPrintable(ref.error));
        reference_ = ref.answers;
    }

    void constructs_data() { add_rows(constructs_, 0); }
    void constructs() { compare_row(); }

    void synthetic_conversations_data() { add_rows(conversations_, constructs_["cases"].size()); }
    void synthetic_conversations() { compare_row(); }

    // The conversation cases must cover what they claim: raise_exception errors among them.
    void conversations_include_template_errors() {
        int raised = 0;
        for (size_t i = constructs_["cases"].size(); i < reference_.size(); ++i)
            raised += reference_[i].value("raised", false) ? 1 : 0;
        QVERIFY(raised >= 3);
    }

private:
    void add_rows(const json& cases, size_t offset) {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < cases["cases"].size(); ++i) {
            const std::string name = cases["cases"][i].value("name", std::to_string(i));
            QTest::newRow(name.c_str()) << static_cast<int>(offset + i);
        }
    }

    json case_at(size_t i) const {
        const size_t n = constructs_["cases"].size();
        return i < n ? constructs_["cases"][i] : conversations_["cases"][i - n];
    }

    void compare_row() {
        QFETCH(int, index);
        const json& want = reference_[static_cast<size_t>(index)];
        const json got = render_ours(case_at(static_cast<size_t>(index)));
        if (want.contains("output")) {
            QVERIFY2(got.contains("output"),
                     qPrintable("jinja2 rendered, we failed: " + QString::fromStdString(got.dump())));
            QCOMPARE(QString::fromStdString(got["output"]), QString::fromStdString(want["output"]));
            return;
        }
        QVERIFY2(got.contains("error"), qPrintable("jinja2 failed (" + QString::fromStdString(want["error"]) +
                                                   "), we rendered: " + QString::fromStdString(got.dump())));
        if (want["raised"].get<bool>()) {
            QVERIFY2(got["raised"].get<bool>(),
                     qPrintable("expected raise_exception, got " + QString::fromStdString(got.dump())));
            QCOMPARE(QString::fromStdString(got["error"]), QString::fromStdString(want["error"]));
        }
    }

    json constructs_;
    json conversations_;
    json reference_;
};

QTEST_GUILESS_MAIN(JinjaConformanceTest)
#include "test_jinja_conformance.moc"
