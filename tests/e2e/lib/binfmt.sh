# binfmt_misc's qemu-aarch64 handler, set up and put back by the suites that need it in a
# known state (sourced). Debian's qemu-user-static (scripts/install-deps.sh) ships the handler
# as /usr/lib/binfmt.d/qemu-aarch64.conf with the F flag: the kernel opens the interpreter at
# registration, so it also runs arm64 binaries inside containers, BuildKit's RUN steps too.
# Nothing here is left changed: binfmt_restore puts back what binfmt_aarch64 found.
BINFMT_DIR=/proc/sys/fs/binfmt_misc
BINFMT_WAS=""  # absent | enabled | disabled: the handler before binfmt_aarch64 / binfmt_no_aarch64

binfmt_state() {
  if [ ! -e "$BINFMT_DIR/qemu-aarch64" ]; then echo absent; else head -1 "$BINFMT_DIR/qemu-aarch64"; fi
}

binfmt_mount() {
  [ -e "$BINFMT_DIR/register" ] || mount -t binfmt_misc binfmt_misc "$BINFMT_DIR" 2>/dev/null
  [ -e "$BINFMT_DIR/register" ]
}

# binfmt_aarch64: the qemu-aarch64 handler registered and enabled. Status 1, with the reason on
# stdout, when it cannot be (no qemu-user-static, binfmt_misc not mountable).
binfmt_aarch64() {
  local conf=/usr/lib/binfmt.d/qemu-aarch64.conf
  [ -r "$conf" ] || { echo "no $conf (Debian's qemu-user-static is not installed)"; return 1; }
  binfmt_mount || { echo "binfmt_misc cannot be mounted at $BINFMT_DIR"; return 1; }
  BINFMT_WAS=$(binfmt_state)
  case "$BINFMT_WAS" in
    absent) cat "$conf" >"$BINFMT_DIR/register" || { echo "registering $conf failed"; return 1; } ;;
    disabled) echo 1 >"$BINFMT_DIR/qemu-aarch64" ;;
  esac
  [ "$(binfmt_state)" = enabled ] || { echo "the qemu-aarch64 handler is not enabled"; return 1; }
}

# binfmt_no_aarch64: no enabled qemu-aarch64 handler (disabled when there is one).
binfmt_no_aarch64() {
  BINFMT_WAS=$(binfmt_state)
  [ "$BINFMT_WAS" = enabled ] && echo 0 >"$BINFMT_DIR/qemu-aarch64"
  [ "$(binfmt_state)" != enabled ]
}

# binfmt_restore: the handler as it was before binfmt_aarch64 or binfmt_no_aarch64.
binfmt_restore() {
  local now
  now=$(binfmt_state)
  case "$BINFMT_WAS" in
    absent) [ "$now" = absent ] || echo -1 >"$BINFMT_DIR/qemu-aarch64" ;;
    enabled) [ "$now" = disabled ] && echo 1 >"$BINFMT_DIR/qemu-aarch64" ;;
    disabled) [ "$now" = enabled ] && echo 0 >"$BINFMT_DIR/qemu-aarch64" ;;
  esac
  BINFMT_WAS=""
  return 0
}
