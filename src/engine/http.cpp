#include "engine/http.hpp"

#include <curl/curl.h>

#include <memory>
#include <mutex>

#include "engine/interrupt.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace {

struct CurlGlobal {
    CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
    ~CurlGlobal() { curl_global_cleanup(); }
};

struct CurlDeleter {
    void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

struct Sink {
    HttpResponse* response;
    const HttpRequest* request;
    std::size_t received = 0;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    sink->received += size * n;
    if (sink->request->max_body && sink->received > sink->request->max_body) {
        sink->response->truncated = true;
        return 0;  // curl stops the transfer (CURLE_WRITE_ERROR)
    }
    if (sink->request->on_data)
        sink->request->on_data(std::string(data, size * n));
    else
        sink->response->body.append(data, size * n);
    return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    std::string line(data, size * n);
    auto colon = line.find(':');
    if (colon != std::string::npos) {
        std::string name = to_lower(line.substr(0, colon));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
        while (!value.empty() &&
               (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
            value.pop_back();
        sink->response->headers[name] = value;
        sink->response->header_lines.emplace_back(name, value);
    } else if (line.rfind("HTTP/", 0) == 0) {
        // a new response (after a redirect or 100-continue)
        sink->response->headers.clear();
        sink->response->header_lines.clear();
    }
    return size * n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    const auto* sink = static_cast<const Sink*>(user);
    return interrupted() && !sink->request->cleanup ? 1 : 0;
}

}  // namespace

struct HttpSession::Impl {
    CURLSH* share = nullptr;
    std::mutex locks[CURL_LOCK_DATA_LAST];
};

namespace {
void share_lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<HttpSession::Impl*>(user)->locks[data].lock();
}
void share_unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<HttpSession::Impl*>(user)->locks[data].unlock();
}
}  // namespace

HttpSession::HttpSession() : m_impl(std::make_unique<Impl>()) {
    curl_global_init(CURL_GLOBAL_DEFAULT);  // reference-counted; paired below
    m_impl->share = curl_share_init();
    if (!m_impl->share) return;
    curl_share_setopt(m_impl->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(m_impl->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(m_impl->share, CURLSHOPT_USERDATA, m_impl.get());
    for (curl_lock_data d :
         {CURL_LOCK_DATA_CONNECT, CURL_LOCK_DATA_DNS, CURL_LOCK_DATA_SSL_SESSION})
        curl_share_setopt(m_impl->share, CURLSHOPT_SHARE, d);
}

HttpSession::~HttpSession() {
    if (m_impl->share) curl_share_cleanup(m_impl->share);
    curl_global_cleanup();
}

void* HttpSession::handle() const { return m_impl->share; }

std::string HttpResponse::header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
}

std::vector<std::string> HttpResponse::header_values(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& [n, v] : header_lines)
        if (n == name) out.push_back(v);
    return out;
}

Result<HttpResponse> http_request(const HttpRequest& req) {
    static CurlGlobal global;
    std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
    if (!curl) return Error{ErrorKind::Environment, "curl_easy_init failed"};
    HttpResponse response;
    Sink sink{&response, &req};
    std::unique_ptr<curl_slist, SlistDeleter> headers;
    for (const auto& h : req.headers) {
        // A CR or LF would end the header and start another one of the sender's choosing.
        for (char ch : h)
            if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
                return Error{
                    ErrorKind::Environment,
                    "refusing to send a request header with a control character to " + req.url};
        headers.reset(curl_slist_append(headers.release(), h.c_str()));
    }
    char errbuf[CURL_ERROR_SIZE] = {};
    CURL* c = curl.get();
    curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.timeouts.connect.count()));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeouts.total.count()));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &sink);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &sink);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "torchdock/0.1");
    // Never file://, dict://, gopher:// ... whatever a URL, a token realm or a redirect says.
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85.0 added the _STR options
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, req.protocols.c_str());
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, req.protocols.c_str());
#else
    long allowed = req.protocols == "https" ? CURLPROTO_HTTPS : CURLPROTO_HTTP | CURLPROTO_HTTPS;
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, allowed);
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, allowed);
#endif
    if (req.max_redirects > 0) {
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(c, CURLOPT_MAXREDIRS, req.max_redirects);
    }
    if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    if (!req.unix_socket.empty())
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, req.unix_socket.c_str());
    if (req.session && req.session->handle())
        curl_easy_setopt(c, CURLOPT_SHARE, req.session->handle());
    if (!req.tls_ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, req.tls_ca_file.c_str());
    if (!req.tls_cert_file.empty()) curl_easy_setopt(c, CURLOPT_SSLCERT, req.tls_cert_file.c_str());
    if (!req.tls_key_file.empty()) curl_easy_setopt(c, CURLOPT_SSLKEY, req.tls_key_file.c_str());
    if (!req.tls_verify) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }

    if (req.method == "HEAD") {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (req.method != "GET") {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
        if (req.method == "POST" || !req.body.empty()) {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.c_str());
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(req.body.size()));
        }
    }
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_WRITE_ERROR && response.truncated) {
        // Stopped on purpose at max_body: the status and headers are there, the body is cut.
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
        return response;
    }
    if (rc != CURLE_OK) {
        std::string where = req.unix_socket.empty() ? req.url : req.unix_socket;
        std::string reason = errbuf[0] ? errbuf : curl_easy_strerror(rc);
        if (rc == CURLE_ABORTED_BY_CALLBACK) return Error{ErrorKind::Environment, "interrupted"};
        if (rc == CURLE_OPERATION_TIMEDOUT) return Error{ErrorKind::Timeout, where + ": " + reason};
        return Error{ErrorKind::Environment, where + ": " + reason};
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
    return response;
}

}  // namespace td::engine
