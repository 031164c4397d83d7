// Debian's /usr/bin/python3 is used on purpose: the python3 first on PATH may be another
// install without jinja2. A missing jinja2 is a failure with a clear message, never a skip.
#include "reference_renderer.h"

#include <QFile>
#include <QProcess>

#include "support/temp_dir.h"

namespace niwa::test {

ReferenceResult render_with_jinja2(const nlohmann::ordered_json& cases) {
    ReferenceResult r;
    const QString python = "/usr/bin/python3";
    const QString script = QString(NIWA_SOURCE_DIR) + "/tests/engine/text/jinja/render_reference.py";
    if (!QFile::exists(python)) {
        r.error = python + " not found: install Debian's python3 and python3-jinja2";
        return r;
    }
    TempDir dir;
    const QString path = dir.file("cases.json");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        r.error = "cannot write " + path;
        return r;
    }
    const std::string text = cases.dump();
    f.write(text.data(), static_cast<qint64>(text.size()));
    f.close();

    QProcess p;
    p.start(python, {script, path});
    if (!p.waitForFinished(120000)) {
        r.error = "render_reference.py did not finish: " + p.errorString();
        return r;
    }
    const QString err = QString::fromUtf8(p.readAllStandardError());
    if (p.exitCode() == 3) {
        r.error = "python3-jinja2 is missing for " + python + " (apt-get install python3-jinja2): " + err;
        return r;
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        r.error = "render_reference.py failed (exit " + QString::number(p.exitCode()) + "): " + err;
        return r;
    }
    const QByteArray out = p.readAllStandardOutput();
    try {
        r.answers = nlohmann::ordered_json::parse(out.begin(), out.end());
    } catch (const std::exception& e) {
        r.error = QString("render_reference.py printed something that is not JSON: ") + e.what();
        return r;
    }
    if (!r.answers.is_array() || r.answers.size() != cases["cases"].size()) {
        r.error = "render_reference.py answered a different number of cases";
        return r;
    }
    r.ok = true;
    return r;
}

}  // namespace niwa::test
