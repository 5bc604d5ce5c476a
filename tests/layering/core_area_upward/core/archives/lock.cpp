// A lower area of core reaching up into apply, which sits above every other area: refused.
#include "core/apply/apply.hpp"
