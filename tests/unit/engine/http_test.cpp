// engine/http: only http and https are spoken (D7), request headers with control
// characters are never sent (D15), bodies stop at max_body (D6, D13), repeated headers are
// all kept (two Docker-Content-Digest headers), redirects are bounded. A one-shot loopback
// server answers with canned bytes; nothing leaves the machine.
#include "engine/http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace td;
using namespace td::engine;
using Catch::Matchers::ContainsSubstring;

namespace {

// Answers each connection with the next of `answers` (raw HTTP), then closes it.
class CannedServer {
  public:
    explicit CannedServer(std::vector<std::string> answers) : m_answers(std::move(answers)) {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        socklen_t len = sizeof addr;
        ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&addr), &len);
        m_port = ntohs(addr.sin_port);
        ::listen(m_fd, 8);
        m_thread = std::thread([this] {
            for (const auto& answer : m_answers) {
                int c = ::accept(m_fd, nullptr, nullptr);
                if (c < 0) return;
                char buf[4096];
                std::string request;
                while (request.find("\r\n\r\n") == std::string::npos) {
                    auto n = ::read(c, buf, sizeof buf);
                    if (n <= 0) break;
                    request.append(buf, static_cast<std::size_t>(n));
                }
                for (std::size_t sent = 0; sent < answer.size();) {
                    auto n = ::send(c, answer.data() + sent, answer.size() - sent, MSG_NOSIGNAL);
                    if (n <= 0) break;  // the client stopped reading
                    sent += static_cast<std::size_t>(n);
                }
                ::close(c);
            }
        });
    }
    ~CannedServer() {
        ::shutdown(m_fd, SHUT_RDWR);
        ::close(m_fd);
        m_thread.join();
    }
    std::string url(const std::string& path = "/v2/x/manifests/1") const {
        return "http://127.0.0.1:" + std::to_string(m_port) + path;
    }

  private:
    int m_fd = -1;
    int m_port = 0;
    std::vector<std::string> m_answers;
    std::thread m_thread;
};

HttpRequest get(const std::string& url) {
    HttpRequest req;
    req.url = url;
    req.timeouts.connect = std::chrono::milliseconds(2000);
    req.timeouts.total = std::chrono::milliseconds(5000);
    return req;
}

}  // namespace

TEST_CASE("http: file://, dict:// and other protocols are never used") {
    char tmpl[] = "/tmp/torchdock-http-XXXXXX";
    int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    ::close(fd);
    std::ofstream(tmpl) << "secret";
    for (const std::string& url :
         {std::string("file://") + tmpl, std::string("dict://127.0.0.1:1/x"),
          std::string("gopher://127.0.0.1:1/x")}) {
        INFO(url);
        auto r = http_request(get(url));
        CHECK_FALSE(r);
        if (r) CHECK(r->body.find("secret") == std::string::npos);
    }
    std::filesystem::remove(tmpl);
    // protocols = "https": not even plain http.
    auto req = get("http://127.0.0.1:1/x");
    req.protocols = "https";
    auto r = http_request(req);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, ContainsSubstring("http"));
}

TEST_CASE("http: a redirect to file:// is refused; redirect loops end") {
    CannedServer server(
        {"HTTP/1.1 302 Found\r\nLocation: file:///etc/hostname\r\n"
         "Content-Length: 0\r\n\r\n"});
    auto req = get(server.url());
    req.max_redirects = 5;
    CHECK_FALSE(http_request(req));

    std::vector<std::string> loop(7,
                                  "HTTP/1.1 302 Found\r\nLocation: /v2/x/manifests/1\r\n"
                                  "Content-Length: 0\r\nConnection: close\r\n\r\n");
    CannedServer looping(loop);
    auto lreq = get(looping.url());
    lreq.max_redirects = 5;
    auto l = http_request(lreq);
    REQUIRE_FALSE(l);
    CHECK_THAT(l.error().message, ContainsSubstring("redirect"));
}

TEST_CASE("http: a request header with CR, LF or another control character is not sent") {
    for (const std::string& h : {std::string("Authorization: Bearer abc\r\nX-Injected: yes"),
                                 std::string("X: a\nb"), std::string("X: a\x01")}) {
        auto req = get("http://127.0.0.1:1/x");
        req.headers = {h};
        auto r = http_request(req);
        REQUIRE_FALSE(r);
        CHECK_THAT(r.error().message, ContainsSubstring("control character"));
    }
}

TEST_CASE("http: the body stops at max_body; repeated headers are all kept") {
    std::string body(1 << 20, 'x');
    CannedServer server(
        {"HTTP/1.1 200 OK\r\nDocker-Content-Digest: sha256:a\r\n"
         "Docker-Content-Digest: sha256:b\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body});
    auto req = get(server.url());
    req.max_body = 1000;
    auto r = http_request(req);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->truncated);
    CHECK(r->body.size() <= 1000);
    CHECK(r->header_values("docker-content-digest") ==
          std::vector<std::string>{"sha256:a", "sha256:b"});
    CHECK(r->header("docker-content-digest") == "sha256:b");
}
