#pragma once
// The nccl probe's watchdog: a SIGALRM timer that, when a stage does not finish in time,
// kills the probe's children and writes a prepared closing JSON line (status "fail",
// reason "... did not complete within N s (hang)") and _exits. The line is rendered when
// the watchdog is armed, so the signal handler only calls kill(2), write(2) and _exit(2).
#include <signal.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace ncclprobe {

class Watchdog {
  public:
    static void install() {
        struct sigaction sa {};
        sa.sa_handler = &Watchdog::on_alarm;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        ::sigaction(SIGALRM, &sa, nullptr);
    }
    // (Re)starts the timer; `line` is what gets printed if it runs out (with a newline).
    static void arm(double seconds, const std::string& line) {
        disarm();
        state_line() = line + "\n";
        s_state.store(kArmed);
        struct itimerval t {};
        long whole = static_cast<long>(seconds);
        t.it_value.tv_sec = whole;
        t.it_value.tv_usec = static_cast<long>((seconds - static_cast<double>(whole)) * 1e6);
        if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
        ::setitimer(ITIMER_REAL, &t, nullptr);
    }
    // Stops the timer. If it has just fired, the handler owns the exit: wait for it.
    static void disarm() {
        struct itimerval zero {};
        ::setitimer(ITIMER_REAL, &zero, nullptr);
        if (s_state.exchange(kIdle) == kFired)
            for (;;) ::pause();
    }
    // Children to SIGKILL when the timer fires (and, via kill_children, on other aborts).
    static void add_child(pid_t pid) {
        int n = s_children.load();
        if (n < kMaxChildren) {
            s_pids[n] = pid;
            s_children.store(n + 1);
        }
    }
    static void kill_children() {
        int n = s_children.load();
        for (int i = 0; i < n; ++i)
            if (s_pids[i] > 0) ::kill(s_pids[i], SIGKILL);
    }
    static void forget_children() { s_children.store(0); }

  private:
    enum { kIdle = 0, kArmed = 1, kFired = 2 };
    static constexpr int kMaxChildren = 1024;

    static void on_alarm(int) {
        int armed = kArmed;
        if (!s_state.compare_exchange_strong(armed, kFired)) return;
        kill_children();
        const std::string& line = state_line();
        const char* p = line.data();
        size_t n = line.size();
        while (n > 0) {
            ssize_t w = ::write(1, p, n);
            if (w <= 0) break;
            p += w;
            n -= static_cast<size_t>(w);
        }
        ::_exit(1);  // status "fail"
    }
    static std::string& state_line() { return s_line; }

    static inline std::string s_line;
    static inline std::atomic<int> s_state{kIdle};
    static inline std::atomic<int> s_children{0};
    static inline pid_t s_pids[kMaxChildren] = {};
};

}  // namespace ncclprobe
