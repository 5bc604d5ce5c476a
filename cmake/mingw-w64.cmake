# Cross-compiling for Windows x64 with Debian's mingw-w64 toolchain (the posix thread model, for
# std::thread and std::mutex). scripts/build-windows.sh passes this file and STACKPIN_WINDOWS_DEPS.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Tests built for Windows run under Wine (ctest -L windows).
find_program(STACKPIN_WINE wine)
if(STACKPIN_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${STACKPIN_WINE})
endif()
