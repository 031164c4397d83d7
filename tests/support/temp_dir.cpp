#include "support/temp_dir.h"

namespace niwa::test {

TempDir::TempDir() : dir_(QDir::tempPath() + "/niwa-test-XXXXXX") {
    dir_.setAutoRemove(qEnvironmentVariableIntValue("NIWA_KEEP_TEMP") == 0);
}

}  // namespace niwa::test
