// ChatTemplate: what a request becomes in the template's variables, and how failures are
// reported (TemplateError with line and column for the template's faults, ChatRequestError
// for the request's, raise_exception's message verbatim).
#include <QFile>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/gguf/reader.h"
#include "engine/gguf/writer.h"
#include "engine/text/chat_template.h"
#include "engine/text/synthetic_template.h"
#include "support/temp_dir.h"

using niwa::text::ChatRequestError;
using niwa::text::ChatTemplate;
using niwa::text::TemplateError;
using json = nlohmann::ordered_json;

namespace {

json user_request(const std::string& text) {
    return {{"messages", json::array({{{"role", "user"}, {"content", text}}})}};
}

template <typename E>
QString error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const E& e) {
        return QString::fromUtf8(e.what());
    }
    return QStringLiteral("<no error>");
}

}  // namespace

class ChatTemplateTest : public QObject {
    Q_OBJECT

private slots:
    void tool_call_arguments_arrive_as_objects() {
        const ChatTemplate t(
            "{% for c in messages[1].tool_calls %}{{ c.function.arguments is mapping }} {{ "
            "c.function.arguments.city }} "
            "{{ c.function.arguments|tojson }}{% endfor %}");
        json req = user_request("x");
        req["messages"].push_back(
            {{"role", "assistant"},
             {"content", ""},
             {"tool_calls",
              json::array(
                  {{{"type", "function"},
                    {"function", {{"name", "w"}, {"arguments", R"({"zone": 9, "city": "Paris"})"}}}}})}});
        // Keys keep the client's order (zone before city), as Python's json.loads keeps them.
        QCOMPARE(QString::fromStdString(t.render(req)),
                 QString(R"(True Paris {"zone": 9, "city": "Paris"})"));
    }

    void invalid_arguments_name_the_message() {
        const ChatTemplate t("{{ messages|length }}");
        json req = user_request("x");
        req["messages"].push_back(
            {{"role", "assistant"},
             {"tool_calls", json::array({{{"function", {{"name", "w"}, {"arguments", "{oops"}}}}})}});
        const QString err = error_of<ChatRequestError>([&] { t.render(req); });
        QVERIFY2(err.contains("messages[1].tool_calls[0].function.arguments is not valid JSON"),
                 qPrintable(err));
    }

    void raise_exception_is_a_request_error_with_the_message() {
        const ChatTemplate t(
            "{% if messages[0].role != 'system' %}{{ raise_exception('need a system message: ' ~ 1) }}{% "
            "endif %}");
        QCOMPARE(error_of<ChatRequestError>([&] { t.render(user_request("x")); }),
                 QString("need a system message: 1"));
    }

    void request_shape_errors() {
        const ChatTemplate t("x");
        QVERIFY(error_of<ChatRequestError>([&] {
                    t.render(json::object());
                }).contains("'messages' must be an array"));
        QVERIFY(error_of<ChatRequestError>([&] {
                    t.render(json{{"messages", json::array({1})}});
                }).contains("messages[0] must be an object"));
    }

    void variables_follow_transformers() {
        const ChatTemplate t(
            "{{ add_generation_prompt }}|{{ bos_token }}|{{ eos_token }}|{{ tools }}|{{ reasoning_effort is "
            "defined }}|"
            "{{ enable_thinking is defined }}|{{ custom }}");
        QCOMPARE(QString::fromStdString(t.render(user_request("x"))),
                 QString("True|<|endoftext|>|<|im_end|>|None|False|False|"));
        json req = user_request("x");
        req["add_generation_prompt"] = false;
        req["reasoning_effort"] = "low";
        req["chat_template_kwargs"] = {{"enable_thinking", false}, {"custom", "c"}};
        req["tools"] = json::array({{{"type", "function"}, {"function", {{"name", "f"}}}}});
        QCOMPARE(QString::fromStdString(t.render(req)),
                 QString("False|<|endoftext|>|<|im_end|>|[{'type': 'function', 'function': {'name': "
                         "'f'}}]|True|True|c"));
    }

    void plain_json_requests_render_too() {
        const ChatTemplate t("{{ messages[0].content }}");
        const nlohmann::json plain = {{"messages", {{{"role", "user"}, {"content", "hé"}}}}};
        QCOMPARE(QString::fromStdString(t.render(plain)), QString("hé"));
    }

    void syntax_errors_have_line_and_column() {
        const QString err = error_of<TemplateError>([] { ChatTemplate("line one\n  {% if %}x{% endif %}"); });
        QVERIFY2(err.contains("line 2, column"), qPrintable(err));
        const QString tag = error_of<TemplateError>([] { ChatTemplate("{% include 'x' %}"); });
        QVERIFY2(tag.contains("line 1, column 4") && tag.contains("'include'"), qPrintable(tag));
        const QString filter = error_of<TemplateError>([] { ChatTemplate("\n\n{{ x | frobnicate }}"); });
        QVERIFY2(filter.contains("line 3, column 8") && filter.contains("frobnicate"), qPrintable(filter));
        const QString unclosed = error_of<TemplateError>([] { ChatTemplate("{% for m in messages %}x"); });
        QVERIFY2(unclosed.contains("endfor"), qPrintable(unclosed));
    }

    void runtime_errors_have_line_and_column() {
        const ChatTemplate t("ok\n{{ messages[0].content + 1 }}");
        const QString err = error_of<TemplateError>([&] { t.render(user_request("x")); });
        QVERIFY2(err.contains("line 2") && err.contains("can only concatenate str"), qPrintable(err));
        const ChatTemplate u("{{ nothing.attr }}");
        const QString undef = error_of<TemplateError>([&] { u.render(user_request("x")); });
        QVERIFY2(undef.contains("'nothing' is undefined"), qPrintable(undef));
        // Python's ints are unbounded; ours stop at 64 bits with an error, never a wrapped number.
        const ChatTemplate big("{{ 10 ** 20 }}");
        const QString overflow = error_of<TemplateError>([&] { big.render(user_request("x")); });
        QVERIFY2(overflow.contains("64 bits"), qPrintable(overflow));
    }

    void from_file_and_from_gguf() {
        niwa::test::TempDir dir;
        const std::string tpl_path = dir.file("t.jinja").toStdString();
        {
            QFile f(QString::fromStdString(tpl_path));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{{ messages[0].content }}!\n");
        }
        QCOMPARE(QString::fromStdString(ChatTemplate::from_file(tpl_path).render(user_request("a"))),
                 QString("a!"));
        QVERIFY(error_of<std::runtime_error>([&] {
                    ChatTemplate::from_file(dir.file("missing").toStdString());
                }).contains("cannot read chat template"));

        const std::string with = dir.file("with.gguf").toStdString();
        const std::string without = dir.file("without.gguf").toStdString();
        niwa::gguf::Writer w1;
        w1.add_string("general.architecture", "qwen35");
        w1.add_string("tokenizer.chat_template", std::string(niwa::text::synthetic_chat_template()));
        w1.write(with);
        niwa::gguf::Writer w2;
        w2.add_string("general.architecture", "qwen35");
        w2.write(without);

        const std::string prompt =
            ChatTemplate::from_gguf(niwa::gguf::Reader::open(with)).render(user_request("hi"));
        QVERIFY2(prompt.find("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n") !=
                     std::string::npos,
                 prompt.c_str());
        const QString err =
            error_of<TemplateError>([&] { ChatTemplate::from_gguf(niwa::gguf::Reader::open(without)); });
        QVERIFY2(err.contains("has no chat template") && err.contains("--chat-template FILE"),
                 qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(ChatTemplateTest)
#include "test_chat_template.moc"
