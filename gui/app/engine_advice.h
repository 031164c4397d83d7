// What to do about an engine failure: the launcher's reason (the engine's exit code and last
// log lines) matched against the failures users meet, turned into one sentence with the fix.
#pragma once

#include <QString>

namespace niwa::gui {

// Empty when nothing more useful than the reason itself can be said.
QString engineFixFor(const QString& reason);

}  // namespace niwa::gui
