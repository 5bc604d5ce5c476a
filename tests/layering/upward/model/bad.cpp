// Test fixture: the model layer must not include core (a layer above it).
#include "core/check/check.hpp"
