/* A tiny real shared object standing in for one of cuDNN's libraries in packaging tests (not
 * cuDNN: it only carries NVIDIA's SONAME, links the C library and math library as cuDNN does, and
 * exports one function). Built once per library stem by CMakeLists.fragment.cmake. */
#include <math.h>
#include <stdio.h>

#ifndef STEM_NAME
#define STEM_NAME "stem"
#endif

__attribute__((visibility("default"))) int stackpin_stem_describe(char *buf, unsigned long size, double x) {
    return snprintf(buf, size, "%s %.3f", STEM_NAME, sqrt(x));
}
