#pragma once
// Inside ErrorSignatures::parse_files: strict readers for the fields of one signature file
// (every key checked, with did-you-mean) and for a signature's derivations and checks.
// They throw FieldError{"$.path: message"}; parse_files turns it into an Error naming the
// file. Pure.
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/diagnose/explain.hpp"

namespace td::signature_fields {

struct FieldError {
    std::string message;
};

[[noreturn]] void fail(const std::string& path, const std::string& message);
void only_keys(const nlohmann::json& obj, const std::string& path,
               std::initializer_list<const char*> keys);
const nlohmann::json& need(const nlohmann::json& obj, const std::string& path, const char* key);
std::string need_string(const nlohmann::json& obj, const std::string& path, const char* key);
std::vector<std::string> string_list(const nlohmann::json& obj, const std::string& path,
                                     const char* key, bool required, bool non_empty);
std::vector<LineTemplate> template_list(const nlohmann::json& obj, const std::string& path,
                                        const char* key, bool required);
Derivation parse_derivation(const nlohmann::json& j, const std::string& path);
SignatureCheck parse_check(const nlohmann::json& j, const std::string& path);
// The facts a derivation adds.
std::vector<std::string> derivation_outputs(Derivation::Kind k);

}  // namespace td::signature_fields
