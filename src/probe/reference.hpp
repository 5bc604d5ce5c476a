#pragma once
// The CPU reference for the convolution test: NCHW cross-correlation with padding, stride and
// dilation, in double, and IEEE binary16 conversion. Each output also gets the sum of the
// magnitudes of the products that formed it, which scales the tolerance (reference.cpp).
#include <cstdint>
#include <string>
#include <vector>

namespace probe::detail {

struct ConvShape {
  int n = 1, c = 1, h = 1, w = 1;  // input
  int k = 1, r = 1, s = 1;         // filters: k of c x r x s
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int p() const { return (h + 2 * pad_h - dil_h * (r - 1) - 1) / stride_h + 1; }
  int q() const { return (w + 2 * pad_w - dil_w * (s - 1) - 1) / stride_w + 1; }
  std::size_t x_size() const { return static_cast<std::size_t>(n) * c * h * w; }
  std::size_t w_size() const { return static_cast<std::size_t>(k) * c * r * s; }
  std::size_t y_size() const { return static_cast<std::size_t>(n) * k * p() * q(); }
  double flops() const { return 2.0 * n * k * p() * q() * c * r * s; }
  std::string text() const;
};

// out[i] = value, mag[i] = sum of |terms| (for tolerances)
void ref_forward(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w, std::vector<double>& y,
                 std::vector<double>& mag);
void ref_backward_data(const ConvShape& s, const std::vector<float>& w, const std::vector<float>& dy, std::vector<double>& dx,
                       std::vector<double>& mag);
void ref_backward_filter(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& dy, std::vector<double>& dw,
                         std::vector<double>& mag);

std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);

// Deterministic values in [-1, 1).
std::vector<float> pseudo_random(std::size_t n, std::uint32_t seed);

}  // namespace probe::detail
