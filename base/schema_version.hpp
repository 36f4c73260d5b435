// The knowledge base's schema version: written by kbc (PRAGMA user_version,
// meta.schema_version), required by kbq and `kbc dump`. It must equal the
// PRAGMA user_version line of base/schema.sql (a test checks).
#pragma once

namespace kb {
constexpr int kSchemaVersion = 16;
}
