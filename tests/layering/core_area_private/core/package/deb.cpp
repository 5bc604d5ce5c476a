// An area of core using provision's private header instead of its public one: refused.
#include "core/provision/stage.hpp"
#include "provision/state.hpp"
