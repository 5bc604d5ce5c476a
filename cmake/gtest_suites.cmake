# One CTest test per GoogleTest suite of a test program, instead of one per test.
#
# Each test of a program used to be its own process (gtest_discover_tests): under the
# sanitizers a test program needs a quarter of a second to load, relocate and register its globals
# before its first test runs, so the 600 unit tests, most of them milliseconds long, cost more to
# start than to run. A suite runs its tests in one process, as GoogleTest runs them anywhere else;
# one test is still run alone with the program's --gtest_filter (docs/tests.md).
#
# The suites are listed when ctest runs (as DISCOVERY_MODE PRE_TEST did), so the cases made from
# the files under tests/data/ follow those files without a rebuild. A suite whose every test
# skipped exits 77 (tests/support/test_main.cpp), which ctest reports as skipped; a suite where
# some skipped names them in its output.
#
#   stackpin_add_gtest_suites(TARGET LABEL [TIMEOUT seconds per test] [RESOURCE_LOCK name]
#                             [COST per test] [FIRST suite...])
#
# ctest -j starts the tests of highest COST first, and a fresh build has no record of earlier
# runs' durations: a suite's COST is its number of tests times the program's COST (the slow labels
# get a high one), and the suites named in FIRST (minutes long: crash loops, toolkit builds,
# image builds) come before everything, so that they do not start last and leave the run waiting
# on one of them at the end.

set(STACKPIN_GTEST_SUITES_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/gtest_suites.cmake")

function(stackpin_add_gtest_suites target label)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "TIMEOUT;RESOURCE_LOCK;COST" "FIRST")
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  if(NOT arg_COST)
    set(arg_COST 1)
  endif()
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  file(GENERATE OUTPUT "${include_file}" CONTENT
"# Written by cmake/gtest_suites.cmake: lists ${target}'s suites when ctest runs.
set(STACKPIN_SUITES_PROGRAM [==[$<TARGET_FILE:${target}>]==])
set(STACKPIN_SUITES_LABEL [==[${label}]==])
set(STACKPIN_SUITES_TIMEOUT ${arg_TIMEOUT})
set(STACKPIN_SUITES_LOCK [==[${arg_RESOURCE_LOCK}]==])
set(STACKPIN_SUITES_COST ${arg_COST})
set(STACKPIN_SUITES_FIRST [==[${arg_FIRST}]==])
set(STACKPIN_SUITES_DIR [==[${CMAKE_CURRENT_BINARY_DIR}]==])
include([==[${STACKPIN_GTEST_SUITES_SCRIPT}]==])
stackpin_list_gtest_suites()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()

# Run when ctest reads the include file above: ask the program for its tests and add one test per
# suite. A program that is missing or cannot list its tests becomes a test that fails saying so.
macro(stackpin_list_gtest_suites)
  get_filename_component(_sp_name "${STACKPIN_SUITES_PROGRAM}" NAME)
  if(NOT EXISTS "${STACKPIN_SUITES_PROGRAM}")
    add_test("${_sp_name}.not_built" "${CMAKE_COMMAND}" -E echo "${STACKPIN_SUITES_PROGRAM} is not built: build the tests first")
    set_tests_properties("${_sp_name}.not_built" PROPERTIES WILL_FAIL TRUE LABELS "${STACKPIN_SUITES_LABEL}")
  else()
    execute_process(COMMAND "${STACKPIN_SUITES_PROGRAM}" --gtest_list_tests WORKING_DIRECTORY "${STACKPIN_SUITES_DIR}"
      OUTPUT_VARIABLE _sp_out ERROR_VARIABLE _sp_err RESULT_VARIABLE _sp_rc TIMEOUT 120)
    if(NOT _sp_rc EQUAL 0)
      string(REPLACE ";" "," _sp_err "${_sp_err}")
      add_test("${_sp_name}.list_tests" "${CMAKE_COMMAND}" -E echo
        "${STACKPIN_SUITES_PROGRAM} --gtest_list_tests failed (${_sp_rc}): ${_sp_err}")
      set_tests_properties("${_sp_name}.list_tests" PROPERTIES WILL_FAIL TRUE LABELS "${STACKPIN_SUITES_LABEL}")
    else()
      # keep the lines as they are: a test's "# GetParam() = ..." comment may hold semicolons
      string(REPLACE ";" "\\;" _sp_out "${_sp_out}")
      string(REPLACE "\n" ";" _sp_lines "${_sp_out}")
      set(_sp_suites "")
      set(_sp_suite "")
      foreach(_sp_line IN LISTS _sp_lines)
        if(_sp_line MATCHES "^([^ #][^ ]*)\\.( +#.*)?$")
          set(_sp_suite "${CMAKE_MATCH_1}")
          list(APPEND _sp_suites "${_sp_suite}")
          set(_sp_count_${_sp_suite} 0)
        elseif(_sp_suite AND _sp_line MATCHES "^  [^ ]")
          math(EXPR _sp_count_${_sp_suite} "${_sp_count_${_sp_suite}} + 1")
        endif()
      endforeach()
      foreach(_sp_suite IN LISTS _sp_suites)
        math(EXPR _sp_timeout "${STACKPIN_SUITES_TIMEOUT} * ${_sp_count_${_sp_suite}}")
        math(EXPR _sp_cost "${STACKPIN_SUITES_COST} * ${_sp_count_${_sp_suite}}")
        # (ctest reads this file without the project's policies: no if(IN_LIST) here)
        list(FIND STACKPIN_SUITES_FIRST "${_sp_suite}" _sp_first)
        if(NOT _sp_first EQUAL -1)
          set(_sp_cost 1000000)
        endif()
        add_test("${_sp_suite}" "${STACKPIN_SUITES_PROGRAM}" "--gtest_filter=${_sp_suite}.*")
        set_tests_properties("${_sp_suite}" PROPERTIES LABELS "${STACKPIN_SUITES_LABEL}" TIMEOUT ${_sp_timeout}
          WORKING_DIRECTORY "${STACKPIN_SUITES_DIR}" SKIP_RETURN_CODE 77
          COST ${_sp_cost})
        if(STACKPIN_SUITES_LOCK)
          set_tests_properties("${_sp_suite}" PROPERTIES RESOURCE_LOCK "${STACKPIN_SUITES_LOCK}")
        endif()
      endforeach()
    endif()
  endif()
endmacro()
