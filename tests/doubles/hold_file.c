/* A program that holds a file the way the programs users run do, for the `windows` tests of
 * stackpin's "file in use" refusal (Windows only; tests/CMakeLists.txt builds it as hold-file.exe):
 *   hold-file load FILE READY   loads FILE as a DLL, as a Python that imported a CUDA framework does
 *   hold-file open FILE READY   opens FILE for reading without sharing delete, as an editor might
 * then creates READY and waits (at most 10 minutes) until it is killed. */
#include <windows.h>

#include <stdio.h>
#include <wchar.h>

int wmain(int argc, wchar_t **argv) {
    if (argc != 4 || (wcscmp(argv[1], L"load") != 0 && wcscmp(argv[1], L"open") != 0)) {
        fputs("usage: hold-file load|open FILE READY\n", stderr);
        return 2;
    }
    if (wcscmp(argv[1], L"load") == 0) {
        if (!LoadLibraryW(argv[2])) {
            fprintf(stderr, "hold-file: LoadLibraryW failed: %lu\n", GetLastError());
            return 1;
        }
    } else if (CreateFileW(argv[2], GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, 0, NULL) ==
               INVALID_HANDLE_VALUE) {
        fprintf(stderr, "hold-file: CreateFileW failed: %lu\n", GetLastError());
        return 1;
    }
    HANDLE ready = CreateFileW(argv[3], GENERIC_WRITE, 0, NULL, CREATE_NEW, 0, NULL);
    if (ready == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "hold-file: cannot create the READY file: %lu\n", GetLastError());
        return 1;
    }
    CloseHandle(ready);
    Sleep(10 * 60 * 1000);
    return 0;
}
