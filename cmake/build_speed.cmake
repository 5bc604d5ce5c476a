# How stackpin's builds are made fast and strict (docs/tests.md, "What CI runs, and what it costs").
#
#   STACKPIN_CCACHE  every compile goes through ccache when it is installed (scripts/install-deps.sh
#                    installs it); the cache lives outside the checkout, in STACKPIN_CCACHE_DIR
#                    (default: $CCACHE_DIR, else ~/.cache/stackpin/ccache), and paths inside the
#                    checkout are hashed relative to it, so a second clone elsewhere on the same
#                    machine hits the objects the first one compiled.
#   STACKPIN_LLD     links with lld where the compiler can use it: the 100+ MB test programs link
#                    several times faster than with GNU ld.
#   STACKPIN_CI      (default: the CI environment variable) warnings are errors, and debug
#                    information is line tables only (-g1): enough for every backtrace and
#                    sanitizer report, at a fraction of the compile, link and cache cost of -g.
option(STACKPIN_CCACHE "Compile through ccache when it is installed" ON)
set(_sp_ci_default OFF)
if("$ENV{CI}" MATCHES "^(1|[Tt][Rr][Uu][Ee]|[Yy][Ee][Ss]|[Oo][Nn])$")
  set(_sp_ci_default ON)
endif()
option(STACKPIN_CI "CI build: warnings are errors, line-table debug information" ${_sp_ci_default})
option(STACKPIN_LLD "Link with lld when it is installed" ON)

if(STACKPIN_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(STACKPIN_CCACHE_PROGRAM ccache)
  if(STACKPIN_CCACHE_PROGRAM)
    if(DEFINED ENV{CCACHE_DIR} AND NOT "$ENV{CCACHE_DIR}" STREQUAL "")
      set(_sp_ccache_default "$ENV{CCACHE_DIR}")
    elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
      set(_sp_ccache_default "$ENV{XDG_CACHE_HOME}/stackpin/ccache")
    else()
      set(_sp_ccache_default "$ENV{HOME}/.cache/stackpin/ccache")
    endif()
    set(STACKPIN_CCACHE_DIR "${_sp_ccache_default}" CACHE PATH "ccache's directory for stackpin's builds")
    # BASEDIR: paths under the checkout are hashed relative to it; NOHASHDIR: the working
    # directory (in -g's output) is not part of the hash. Three builds (g++, clang with the
    # sanitizers, mingw-w64) fit in the size below with room for a second configuration.
    set(_sp_launcher ${CMAKE_COMMAND} -E env "CCACHE_DIR=${STACKPIN_CCACHE_DIR}" "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}"
                     CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=8G CCACHE_COMPRESS=true ${STACKPIN_CCACHE_PROGRAM})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_sp_launcher})
    set(CMAKE_C_COMPILER_LAUNCHER ${_sp_launcher})
    message(STATUS "compiling through ccache (${STACKPIN_CCACHE_DIR})")
  else()
    message(STATUS "ccache not found: every build compiles from scratch (scripts/install-deps.sh installs it)")
  endif()
endif()

if(STACKPIN_LLD AND NOT WIN32 AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  find_program(STACKPIN_LLD_PROGRAM ld.lld)
  if(STACKPIN_LLD_PROGRAM)
    add_link_options(-fuse-ld=lld)
    message(STATUS "linking with lld (${STACKPIN_LLD_PROGRAM})")
  endif()
endif()

if(STACKPIN_CI AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  add_compile_options(-Werror)
  foreach(_sp_config RELWITHDEBINFO DEBUG)
    foreach(_sp_lang C CXX)
      string(REGEX REPLACE "(^| )-g( |$)" "\\1-g1\\2" CMAKE_${_sp_lang}_FLAGS_${_sp_config} "${CMAKE_${_sp_lang}_FLAGS_${_sp_config}}")
    endforeach()
  endforeach()
  message(STATUS "CI build: warnings are errors, -g1")
endif()

# Unity builds (STACKPIN_UNITY, on in CI): each layer's sources are compiled in batches of
# STACKPIN_UNITY_BATCH, so the heavy headers (the standard library, nlohmann-json, toml++, CLI11)
# are parsed and their templates instantiated once per batch instead of once per file. CMake's own
# UNITY_BUILD writes absolute paths into its batch files, which would tie every cached object to
# one checkout; these batches include their members by paths relative to the build folder, so a
# second clone still hits the compiler cache. Generated sources (the embedded data) stay apart, and
# so do the files listed in STACKPIN_UNITY_APART (src/CMakeLists.txt says why).
# Each file must also compile alone: a developer's build (no CI) compiles every file on its own.
option(STACKPIN_UNITY "Compile each layer's sources in batches" ${STACKPIN_CI})
set(STACKPIN_UNITY_BATCH 8 CACHE STRING "Sources per unity batch")

function(stackpin_unity target)
  if(NOT STACKPIN_UNITY)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  get_target_property(binary_dir ${target} BINARY_DIR)
  set(unity_dir "${binary_dir}/unity")
  set(members "")
  set(batch "")
  set(content "")
  set(index 0)
  foreach(s IN LISTS sources)
    if(NOT s MATCHES "\\.cpp$")
      continue()
    endif()
    get_filename_component(abs "${s}" ABSOLUTE BASE_DIR "${source_dir}")
    string(FIND "${abs}" "${CMAKE_BINARY_DIR}/" in_build)
    file(RELATIVE_PATH from_src "${PROJECT_SOURCE_DIR}/src" "${abs}")
    if(in_build EQUAL 0 OR from_src IN_LIST STACKPIN_UNITY_APART)
      continue()
    endif()
    file(RELATIVE_PATH rel "${unity_dir}" "${abs}")
    string(APPEND content "#include \"${rel}\"\n")
    list(APPEND members "${abs}")
    list(APPEND batch "${abs}")
    list(LENGTH batch n)
    if(n EQUAL STACKPIN_UNITY_BATCH)
      _stackpin_unity_write("${unity_dir}/${target}_${index}.cpp" "${content}")
      target_sources(${target} PRIVATE "${unity_dir}/${target}_${index}.cpp")
      math(EXPR index "${index} + 1")
      set(batch "")
      set(content "")
    endif()
  endforeach()
  if(batch)
    _stackpin_unity_write("${unity_dir}/${target}_${index}.cpp" "${content}")
    target_sources(${target} PRIVATE "${unity_dir}/${target}_${index}.cpp")
  endif()
  set_source_files_properties(${members} PROPERTIES HEADER_FILE_ONLY ON)
endfunction()

function(_stackpin_unity_write path content)
  file(WRITE "${path}.tmp" "// Written by cmake/build_speed.cmake (stackpin_unity): one batch of a target's sources.\n${content}")
  file(COPY_FILE "${path}.tmp" "${path}" ONLY_IF_DIFFERENT)
  file(REMOVE "${path}.tmp")
endfunction()
