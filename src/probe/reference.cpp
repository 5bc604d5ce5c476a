// The reference is deliberately the plainest possible loop nest, computed in double: it is the
// ground truth every cuDNN algorithm is held to. Tolerances scale with the magnitude of the
// products that formed each output (not with the output itself, which cancellation can make
// arbitrarily small): float32 through TF32 tensor cores carries ~2^-11 relative error per
// product, float16 storage ~2^-11 per value, so a bound of a few times that on the summed
// magnitudes catches wrong results (a wrong index, a missing term) without flagging rounding.
#include "reference.hpp"

#include <cmath>
#include <cstring>

namespace probe::detail {

std::string ConvShape::text() const {
  return "n" + std::to_string(n) + " c" + std::to_string(c) + " " + std::to_string(h) + "x" + std::to_string(w) + " k" + std::to_string(k) +
         " " + std::to_string(r) + "x" + std::to_string(s) + " pad" + std::to_string(pad_h) + " stride" + std::to_string(stride_h) +
         " dil" + std::to_string(dil_h);
}

namespace {
inline std::size_t xi(const ConvShape& s, int n, int c, int h, int w) {
  return ((static_cast<std::size_t>(n) * s.c + c) * s.h + h) * s.w + w;
}
inline std::size_t wi(const ConvShape& s, int k, int c, int r, int q) {
  return ((static_cast<std::size_t>(k) * s.c + c) * s.r + r) * s.s + q;
}
inline std::size_t yi(const ConvShape& s, int n, int k, int p, int q) {
  return ((static_cast<std::size_t>(n) * s.k + k) * s.p() + p) * s.q() + q;
}

// Calls f(n, k, p, q, c, r, s, ih, iw) for every product term that lands inside the input.
template <class F>
void each_term(const ConvShape& s, F f) {
  for (int n = 0; n < s.n; ++n)
    for (int k = 0; k < s.k; ++k)
      for (int p = 0; p < s.p(); ++p)
        for (int q = 0; q < s.q(); ++q)
          for (int c = 0; c < s.c; ++c)
            for (int r = 0; r < s.r; ++r)
              for (int t = 0; t < s.s; ++t) {
                int ih = p * s.stride_h - s.pad_h + r * s.dil_h;
                int iw = q * s.stride_w - s.pad_w + t * s.dil_w;
                if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
                f(n, k, p, q, c, r, t, ih, iw);
              }
}
}  // namespace

void ref_forward(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w, std::vector<double>& y,
                 std::vector<double>& mag) {
  y.assign(s.y_size(), 0.0);
  mag.assign(s.y_size(), 0.0);
  each_term(s, [&](int n, int k, int p, int q, int c, int r, int t, int ih, int iw) {
    double v = static_cast<double>(x[xi(s, n, c, ih, iw)]) * w[wi(s, k, c, r, t)];
    y[yi(s, n, k, p, q)] += v;
    mag[yi(s, n, k, p, q)] += std::fabs(v);
  });
}

void ref_backward_data(const ConvShape& s, const std::vector<float>& w, const std::vector<float>& dy, std::vector<double>& dx,
                       std::vector<double>& mag) {
  dx.assign(s.x_size(), 0.0);
  mag.assign(s.x_size(), 0.0);
  each_term(s, [&](int n, int k, int p, int q, int c, int r, int t, int ih, int iw) {
    double v = static_cast<double>(dy[yi(s, n, k, p, q)]) * w[wi(s, k, c, r, t)];
    dx[xi(s, n, c, ih, iw)] += v;
    mag[xi(s, n, c, ih, iw)] += std::fabs(v);
  });
}

void ref_backward_filter(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& dy, std::vector<double>& dw,
                         std::vector<double>& mag) {
  dw.assign(s.w_size(), 0.0);
  mag.assign(s.w_size(), 0.0);
  each_term(s, [&](int n, int k, int p, int q, int c, int r, int t, int ih, int iw) {
    double v = static_cast<double>(dy[yi(s, n, k, p, q)]) * x[xi(s, n, c, ih, iw)];
    dw[wi(s, k, c, r, t)] += v;
    mag[wi(s, k, c, r, t)] += std::fabs(v);
  });
}

std::uint16_t float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf / nan
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {                                                      // subnormal or zero
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    std::uint32_t rem = mant & ((1u << shift) - 1);
    std::uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(half);
}

float half_to_float(std::uint16_t h) {
  std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::vector<float> pseudo_random(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t state = seed * 2654435761u + 1;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>((state >> 8) & 0xffffu) / 32768.0f - 1.0f;
  }
  return v;
}

}  // namespace probe::detail
