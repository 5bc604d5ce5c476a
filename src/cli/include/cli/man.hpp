#pragma once
// stackpin(1): the man page, written from the command definitions behind `stackpin --help`.
#include <iosfwd>

namespace cli {

// Writes the whole page as roff (man(7) macros) to `out`: every command and subcommand with its
// help text, options and positionals, the exit codes and the environment.
void write_man_page(std::ostream& out);

}  // namespace cli
