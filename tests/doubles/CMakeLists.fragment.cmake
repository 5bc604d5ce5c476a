# Test doubles for the CUDA runtime and cuDNN: CPU stand-ins, NOT CUDA or cuDNN (see README.md
# beside this file). include() this from tests/CMakeLists.txt. It builds, as C shared libraries:
#   ${STACKPIN_DOUBLES_DIR}/cuda12-cudnn9/libcudart.so.12   (target stackpin_fake_cudart)
#   ${STACKPIN_DOUBLES_DIR}/cuda12-cudnn9/libcudnn.so.9     (target stackpin_fake_cudnn9)
#   ${STACKPIN_DOUBLES_DIR}/cudnn8/libcudnn.so.8            (target stackpin_fake_cudnn8)
# and the test doubles.selftest, which loads them and checks them against its own reference.

# The doubles are C; enabling it here (the tests/ directory scope) is enough, since no target
# outside tests/ uses them.
enable_language(C)

set(STACKPIN_DOUBLES_DIR "${CMAKE_CURRENT_BINARY_DIR}/doubles")
set(_stackpin_doubles_src "${CMAKE_CURRENT_LIST_DIR}")

function(stackpin_add_double target source output_name soversion version subdir)
  add_library(${target} SHARED "${_stackpin_doubles_src}/${source}")
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${output_name}
    SOVERSION ${soversion}
    VERSION ${version}
    # $<0:> keeps multi-config generators from appending a per-configuration folder.
    LIBRARY_OUTPUT_DIRECTORY "${STACKPIN_DOUBLES_DIR}/${subdir}$<0:>"
    C_STANDARD 11
    C_STANDARD_REQUIRED ON
    C_EXTENSIONS OFF
    C_VISIBILITY_PRESET hidden)  # only the API-marked entry points are exported
  target_link_libraries(${target} PRIVATE m ${CMAKE_DL_LIBS})
endfunction()

stackpin_add_double(stackpin_fake_cudart fake_cudart.c cudart 12 12.8.0 cuda12-cudnn9)
stackpin_add_double(stackpin_fake_cudnn9 fake_cudnn.c cudnn 9 9.19.0 cuda12-cudnn9)
stackpin_add_double(stackpin_fake_cudnn8 fake_cudnn.c cudnn 8 8.9.7 cudnn8)
target_compile_definitions(stackpin_fake_cudnn8 PRIVATE FAKE_CUDNN_MAJOR=8)

add_executable(stackpin_doubles_selftest "${_stackpin_doubles_src}/selftest.c")
set_target_properties(stackpin_doubles_selftest PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_link_libraries(stackpin_doubles_selftest PRIVATE m ${CMAKE_DL_LIBS})
add_dependencies(stackpin_doubles_selftest stackpin_fake_cudart stackpin_fake_cudnn9 stackpin_fake_cudnn8)
add_test(NAME doubles.selftest COMMAND stackpin_doubles_selftest "${STACKPIN_DOUBLES_DIR}")
set_tests_properties(doubles.selftest PROPERTIES LABELS unit)

# Packaging doubles: one tiny real ELF shared object per cuDNN 9 library stem, with NVIDIA's
# SONAME (lib<stem>.so.9, file lib<stem>.so.9.1.0), and a static library with real code, so that
# `stackpin deb` output can be checked by lintian and installed with dpkg (ldconfig lists only
# real shared objects). Laid out in ${STACKPIN_DOUBLES_DIR}/stems/.
set(STACKPIN_STEM_NAMES cudnn cudnn_adv cudnn_cnn cudnn_engines_precompiled cudnn_engines_runtime_compiled
    cudnn_graph cudnn_heuristic cudnn_ops)
set(STACKPIN_STEM_TARGETS)
foreach(stem IN LISTS STACKPIN_STEM_NAMES)
  add_library(stackpin_stem_${stem} SHARED "${_stackpin_doubles_src}/stem.c")
  set_target_properties(stackpin_stem_${stem} PROPERTIES
    OUTPUT_NAME ${stem} SOVERSION 9 VERSION 9.1.0
    LIBRARY_OUTPUT_DIRECTORY "${STACKPIN_DOUBLES_DIR}/stems$<0:>"
    C_STANDARD 11 C_VISIBILITY_PRESET hidden)
  target_compile_definitions(stackpin_stem_${stem} PRIVATE STEM_NAME="${stem}")
  target_link_libraries(stackpin_stem_${stem} PRIVATE m)
  list(APPEND STACKPIN_STEM_TARGETS stackpin_stem_${stem})
endforeach()
add_library(stackpin_stem_static STATIC "${_stackpin_doubles_src}/stem.c")
set_target_properties(stackpin_stem_static PROPERTIES
  OUTPUT_NAME stem_static ARCHIVE_OUTPUT_DIRECTORY "${STACKPIN_DOUBLES_DIR}/stems$<0:>" C_STANDARD 11
  POSITION_INDEPENDENT_CODE ON)
list(APPEND STACKPIN_STEM_TARGETS stackpin_stem_static)
