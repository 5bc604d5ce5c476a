# cmake -DROOT=<src tree> -P run_check.cmake : fails (FATAL_ERROR) on a layering violation.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/check_layers.cmake)
stackpin_check_layers("${ROOT}")
message(STATUS "layering ok: ${ROOT}")
