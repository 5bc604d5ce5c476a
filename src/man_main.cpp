// stackpin-man-page FILE: writes stackpin(1) to FILE (the build runs it; see src/CMakeLists.txt).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cli/man.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: stackpin-man-page FILE\n";
    return 2;
  }
  std::ostringstream page;
  cli::write_man_page(page);
  std::string target = argv[1];
  std::string part = target + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << page.str();
    out.close();
    if (!out) {
      std::cerr << "stackpin-man-page: cannot write " << part << "\n";
      std::remove(part.c_str());
      return 1;
    }
  }
  if (std::rename(part.c_str(), target.c_str()) != 0) {
    std::cerr << "stackpin-man-page: cannot rename " << part << " to " << target << "\n";
    std::remove(part.c_str());
    return 1;
  }
  return 0;
}
