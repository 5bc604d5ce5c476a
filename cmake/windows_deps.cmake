# The Windows build's dependencies, from the prefix scripts/build-windows.sh fills: static
# libarchive, liblzma and zlib cross-built from Debian's source packages, and the header-only
# toml++, CLI11 and nlohmann-json copied from their Debian packages. Imported targets with the
# names the Linux build's find_package() calls give, so src/CMakeLists.txt does not branch on them.
set(STACKPIN_WINDOWS_DEPS "" CACHE PATH "prefix with the cross-built Windows dependencies (scripts/build-windows.sh)")
if(NOT EXISTS "${STACKPIN_WINDOWS_DEPS}/VERSIONS")
  message(FATAL_ERROR "STACKPIN_WINDOWS_DEPS (${STACKPIN_WINDOWS_DEPS}) holds no cross-built dependencies: build with scripts/build-windows.sh")
endif()
set(_deps "${STACKPIN_WINDOWS_DEPS}")

function(_sp_static_import target file)
  add_library(${target} STATIC IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${_deps}/lib/${file}"
                                             INTERFACE_INCLUDE_DIRECTORIES "${_deps}/include")
endfunction()
_sp_static_import(ZLIB::ZLIB libz.a)
_sp_static_import(LibLZMA::LibLZMA liblzma.a)
set_property(TARGET LibLZMA::LibLZMA PROPERTY INTERFACE_COMPILE_DEFINITIONS LZMA_API_STATIC)
_sp_static_import(LibArchive::LibArchive libarchive.a)
set_property(TARGET LibArchive::LibArchive PROPERTY INTERFACE_COMPILE_DEFINITIONS LIBARCHIVE_STATIC)
# libarchive's own Windows code hashes through CNG and reads the console code page
set_property(TARGET LibArchive::LibArchive PROPERTY INTERFACE_LINK_LIBRARIES LibLZMA::LibLZMA ZLIB::ZLIB bcrypt)

foreach(t tomlplusplus::tomlplusplus CLI11::CLI11 nlohmann_json::nlohmann_json)
  add_library(${t} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_deps}/include")
endforeach()
# <windows.h> without the rarely used APIs and without its min/max macros, everywhere alike.
add_compile_definitions(WIN32_LEAN_AND_MEAN NOMINMAX)
# The C and C++ runtimes go into the executables, so they import only Windows' own DLLs.
add_link_options(-static -static-libgcc -static-libstdc++ $<$<CONFIG:Release>:-s>)
