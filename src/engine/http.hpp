#pragma once
// HTTP over libcurl with RAII handles and named timeouts; TCP (http/https) or a UNIX
// socket (the Docker Engine API). Transport failures are Errors; any HTTP status is a
// Response for the caller to judge. Only http and https are ever spoken (also after a
// redirect), and a request header with a control character is never sent.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace td::engine {

struct HttpTimeouts {
    std::chrono::milliseconds connect{5000};
    std::chrono::milliseconds total{30000};  // whole request; 0 = none (streams)
};

// Connections, DNS answers and TLS sessions kept between requests (a libcurl share
// object): many small requests to one host then cost one handshake, not one each.
// Thread-safe; must outlive the requests that use it.
class HttpSession {
  public:
    HttpSession();
    ~HttpSession();
    HttpSession(const HttpSession&) = delete;
    HttpSession& operator=(const HttpSession&) = delete;
    void* handle() const;  // the CURLSH*
    struct Impl;           // defined in http.cpp

  private:
    std::unique_ptr<Impl> m_impl;
};

struct HttpRequest {
    std::string method = "GET";        // GET, HEAD, POST, DELETE
    std::string url;                   // for a UNIX socket: http://localhost/v1.41/...
    std::vector<std::string> headers;  // "Name: value"
    std::string body;
    std::string unix_socket;  // non-empty: talk to this socket
    HttpTimeouts timeouts;
    // Streaming: called with each chunk of the body as it arrives (the body is then not kept).
    std::function<void(const std::string& chunk)> on_data;
    // Non-zero: stop reading the body past this many bytes (the response is then
    // `truncated`), so a hostile or broken server cannot fill memory.
    std::size_t max_body = 0;
    // Redirects followed (0: none; a 3xx is then the response). Never to another protocol
    // than `protocols` allows.
    long max_redirects = 0;
    // Protocols curl may use, for the URL and for redirects: "http,https" or "https".
    std::string protocols = "http,https";
    // Sent and completed even after Ctrl-C (removing containers on the way out); any other
    // request is aborted at once when an interrupt arrives.
    bool cleanup = false;
    HttpSession* session = nullptr;  // reuse connections across requests (optional)
    // https with client certificates (a TLS engine): the CA that must have signed the
    // server's certificate (when `tls_verify`), and the client's certificate and key.
    std::string tls_ca_file, tls_cert_file, tls_key_file;
    bool tls_verify = true;
};

struct HttpResponse {
    long status = 0;
    std::map<std::string, std::string> headers;  // names lowercased; last value wins
    // Every header line of the final response in order (names lowercased), repeats kept.
    std::vector<std::pair<std::string, std::string>> header_lines;
    std::string body;
    bool truncated = false;  // the body went past max_body; what was read is in `body`
    std::string header(const std::string& lowercase_name) const;
    // Every value of a header, in the order sent (a header may be repeated).
    std::vector<std::string> header_values(const std::string& lowercase_name) const;
};

// ErrorKind::Environment for connection problems (refused, no socket, permission,
// DNS, TLS), ErrorKind::Timeout for timeouts; the message names the URL and curl's reason.
Result<HttpResponse> http_request(const HttpRequest& req);

}  // namespace td::engine
