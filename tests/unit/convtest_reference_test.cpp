// The CPU reference the conv test holds cuDNN to: hand-computed results, identities that tie the
// three operations together, and the float16 conversion.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "../../src/probe/reference.hpp"

namespace convtest_reference_test {

using probe::detail::ConvShape;

TEST(ConvReference, HandComputedForward) {
  // x = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,0],[0,-1]], no padding: y = x[i][j] - x[i+1][j+1]
  ConvShape s;
  s.h = s.w = 3;
  s.r = s.s = 2;
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8, 9}, w{1, 0, 0, -1};
  std::vector<double> y, mag;
  probe::detail::ref_forward(s, x, w, y, mag);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_DOUBLE_EQ(y[0], 1 - 5);
  EXPECT_DOUBLE_EQ(y[1], 2 - 6);
  EXPECT_DOUBLE_EQ(y[2], 4 - 8);
  EXPECT_DOUBLE_EQ(y[3], 5 - 9);
  EXPECT_DOUBLE_EQ(mag[0], 1 + 5);
}

TEST(ConvReference, PaddingStrideAndDilationShapes) {
  ConvShape s;
  s.h = 7;
  s.w = 9;
  s.r = s.s = 3;
  s.pad_h = s.pad_w = 1;
  EXPECT_EQ(s.p(), 7);
  EXPECT_EQ(s.q(), 9);
  s.stride_h = s.stride_w = 2;
  EXPECT_EQ(s.p(), 4);
  EXPECT_EQ(s.q(), 5);
  s.stride_h = s.stride_w = 1;
  s.dil_h = s.dil_w = 2;
  s.pad_h = s.pad_w = 2;
  EXPECT_EQ(s.p(), 7);
}

TEST(ConvReference, CentredUnitFilterIsTheIdentity) {
  ConvShape s;
  s.n = 2;
  s.c = 1;
  s.h = 5;
  s.w = 4;
  s.k = 1;
  s.r = s.s = 3;
  s.pad_h = s.pad_w = 1;
  auto x = probe::detail::pseudo_random(s.x_size(), 7);
  std::vector<float> w(9, 0.0f);
  w[4] = 1.0f;
  std::vector<double> y, mag;
  probe::detail::ref_forward(s, x, w, y, mag);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_DOUBLE_EQ(y[i], x[i]);
}

namespace {
double dot(const std::vector<double>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
}  // namespace

TEST(ConvReference, BackwardPassesAreTheAdjointsOfForward) {
  // <conv(x, w), dy> == <x, bwd_data(w, dy)> == <w, bwd_filter(x, dy)> for any x, w, dy
  ConvShape s;
  s.n = 2;
  s.c = 3;
  s.h = 9;
  s.w = 7;
  s.k = 4;
  s.r = 3;
  s.s = 2;
  s.pad_h = 1;
  s.pad_w = 2;
  s.stride_h = 2;
  s.stride_w = 1;
  s.dil_h = 1;
  s.dil_w = 2;
  auto x = probe::detail::pseudo_random(s.x_size(), 1);
  auto w = probe::detail::pseudo_random(s.w_size(), 2);
  auto dy = probe::detail::pseudo_random(s.y_size(), 3);
  std::vector<double> y, dx, dw, mag;
  probe::detail::ref_forward(s, x, w, y, mag);
  probe::detail::ref_backward_data(s, w, dy, dx, mag);
  probe::detail::ref_backward_filter(s, x, dy, dw, mag);
  double a = dot(y, dy), b = dot(dx, x), c = dot(dw, w);
  EXPECT_NEAR(a, b, 1e-9 * (1 + std::fabs(a)));
  EXPECT_NEAR(a, c, 1e-9 * (1 + std::fabs(a)));
  EXPECT_NE(a, 0.0);
}

TEST(ConvReference, HalfConversion) {
  using probe::detail::float_to_half;
  using probe::detail::half_to_float;
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);                          // rounds to infinity
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);             // smallest subnormal
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie to even (down)
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie to even (up)
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(half_to_float(0x7c00)));
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaN payloads
    EXPECT_EQ(float_to_half(half_to_float(static_cast<std::uint16_t>(h))), h) << std::hex << h;
  }
}

}  // namespace convtest_reference_test
