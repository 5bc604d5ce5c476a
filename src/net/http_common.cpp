// What both transports share: reading response headers and Retry-After.
#include <cctype>
#include <ctime>
#include <string_view>

#include "net/download.hpp"

namespace net {

std::optional<std::string> Response::header(const std::string& name) const {
  for (const auto& [n, v] : headers)
    if (n == name) return v;
  return std::nullopt;
}

namespace {

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110's IMF-fixdate, the form servers send) as Unix time.
std::optional<long long> imf_fixdate(std::string_view s) {
  static const char* const k_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (s.size() != 29 || s[3] != ',' || s.substr(26) != "GMT") return std::nullopt;
  auto num = [&](std::size_t at, std::size_t n) -> std::optional<int> {
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  auto day = num(5, 2), year = num(12, 4), hour = num(17, 2), minute = num(20, 2), second = num(23, 2);
  int month = -1;
  for (int i = 0; i < 12; ++i)
    if (s.substr(8, 3) == k_months[i]) month = i;
  if (!day || !year || !hour || !minute || !second || month < 0 || s[19] != ':' || s[22] != ':') return std::nullopt;
  // days from the civil date (proleptic Gregorian), so that no time zone of this machine enters
  int y = *year - (month < 2 ? 1 : 0);
  int era = (y >= 0 ? y : y - 399) / 400;
  int yoe = y - era * 400;
  int mp = (month + 10) % 12;  // March = 0 (month counts from January = 0)
  int doy = (153 * mp + 2) / 5 + *day - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  long long days = static_cast<long long>(era) * 146097 + doe - 719468;
  return days * 86400 + *hour * 3600 + *minute * 60 + *second;
}

}  // namespace

std::optional<long> retry_after_seconds(const std::string& value, long long now_unix) {
  std::string_view v = value;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  if (v.empty()) return std::nullopt;
  if (std::isdigit(static_cast<unsigned char>(v.front()))) {
    long n = 0;
    for (char c : v) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
      if (n > 86400L * 366) return n;  // absurd, but a number: the caller caps it
      n = n * 10 + (c - '0');
    }
    return n;
  }
  auto at = imf_fixdate(v);
  if (!at) return std::nullopt;
  return *at > now_unix ? static_cast<long>(*at - now_unix) : 0L;
}

}  // namespace net
