#pragma once
// Renders one resolved variant as a Dockerfile: BuildKit syntax, cache mounts for apt
// and pip (nothing cached left in layers), exact pins, layers ordered from least to most
// often changed, labels that later commands read back. Deterministic: same variant,
// same bytes. Every manifest value used here was grammar-checked when parsed.
#include <string>

#include "core/render/variant.hpp"

namespace td {

std::string render_dockerfile(const Variant& v);

// Quotes a value for a Dockerfile LABEL/ENV: double quotes, with \, " and $ escaped so
// the value is taken literally.
std::string dockerfile_quote(const std::string& value);

// Shortest "%g" form of a threshold: 250, 0.5.
std::string format_number(double x);

}  // namespace td
