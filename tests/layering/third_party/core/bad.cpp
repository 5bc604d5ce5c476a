// Test fixture: only the format layer may include toml++.
#include <toml++/toml.h>
