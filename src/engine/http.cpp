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
    bool over_limit = false;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    sink->received += size * n;
    if (sink->request->max_body_bytes && sink->received > sink->request->max_body_bytes) {
        sink->over_limit = true;
        return 0;  // curl stops with CURLE_WRITE_ERROR
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
    } else if (line.rfind("HTTP/", 0) == 0) {
        sink->response->headers.clear();  // a new response (after a redirect or 100-continue)
    }
    return size * n;
}

int on_progress(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return interrupted() ? 1 : 0;
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

Result<HttpResponse> http_request(const HttpRequest& req) {
    static CurlGlobal global;
    std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
    if (!curl) return Error{ErrorKind::Environment, "curl_easy_init failed"};
    HttpResponse response;
    Sink sink{&response, &req};
    std::unique_ptr<curl_slist, SlistDeleter> headers;
    for (const auto& h : req.headers)
        headers.reset(curl_slist_append(headers.release(), h.c_str()));
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
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "torchdock/0.1");
    if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    if (!req.unix_socket.empty())
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, req.unix_socket.c_str());
    if (req.session && req.session->handle())
        curl_easy_setopt(c, CURLOPT_SHARE, req.session->handle());
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
    if (rc != CURLE_OK) {
        std::string where = req.unix_socket.empty() ? req.url : req.unix_socket;
        std::string reason = errbuf[0] ? errbuf : curl_easy_strerror(rc);
        if (rc == CURLE_ABORTED_BY_CALLBACK) return Error{ErrorKind::Environment, "interrupted"};
        if (sink.over_limit)
            return Error{ErrorKind::Environment, where + ": the answer is larger than " +
                                                     std::to_string(req.max_body_bytes) +
                                                     " bytes; refused"};
        if (rc == CURLE_OPERATION_TIMEDOUT) return Error{ErrorKind::Timeout, where + ": " + reason};
        return Error{ErrorKind::Environment, where + ": " + reason};
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
    return response;
}

}  // namespace td::engine
