// A scratch folder for one test, removed when the test ends (kept with NIWA_KEEP_TEMP=1).
#pragma once

#include <QString>
#include <QTemporaryDir>

namespace niwa::test {

class TempDir {
public:
    TempDir();
    QString path() const { return dir_.path(); }
    QString file(const QString& name) const { return dir_.filePath(name); }

private:
    QTemporaryDir dir_;
};

}  // namespace niwa::test
