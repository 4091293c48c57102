#pragma once
// Dotted numeric versions ("550.54.15", "2.4.1", "3.10") compared component by component.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace td {

class Version {
  public:
    // Accepts 1 to 4 dot-separated decimal components, nothing else.
    static std::optional<Version> parse(std::string_view text);

    const std::vector<int>& parts() const { return m_parts; }
    int major() const { return m_parts[0]; }
    int minor() const { return m_parts.size() > 1 ? m_parts[1] : 0; }
    std::string str() const;
    // "12.4.1" -> "12.4"
    std::string major_minor() const;

    // Missing components compare as 0: 12.4 == 12.4.0.
    friend int compare(const Version& a, const Version& b);
    friend bool operator==(const Version& a, const Version& b) { return compare(a, b) == 0; }
    friend bool operator<(const Version& a, const Version& b) { return compare(a, b) < 0; }
    friend bool operator<=(const Version& a, const Version& b) { return compare(a, b) <= 0; }

  private:
    std::vector<int> m_parts;
};

// CUDA's integer versions (cudaRuntimeGetVersion, cudnnGetCudartVersion): 12040 -> "12.4".
std::string cuda_version_from_int(long long v);
// cuDNN's integer versions: 90100 -> "9.1.0" (cuDNN 9+: major*10000), 8902 -> "8.9.2"
// (cuDNN 8 and older: major*1000). Negative or absurd values give "".
std::string cudnn_version_from_int(long long v);

}  // namespace td
