# find_cuobjdump: prints the path of a cuobjdump (the fatbin oracle of the kernel-audit
# tests): $CUOBJDUMP, then PATH, then the PyPI wheel nvidia-cuda-cuobjdump in any of
# python3's site directories (it installs nvidia/cu13/bin/cuobjdump, not on PATH), then
# the toolkit. Fails (status 1) when there is none.
find_cuobjdump() {
  local c
  if [ -n "${CUOBJDUMP:-}" ] && [ -x "$CUOBJDUMP" ]; then echo "$CUOBJDUMP"; return 0; fi
  if c=$(command -v cuobjdump 2>/dev/null); then echo "$c"; return 0; fi
  c=$(python3 - <<'PY' 2>/dev/null
import glob, site, sys
dirs = list(site.getsitepackages()) + [site.getusersitepackages()] + sys.path
for d in dirs:
    for hit in sorted(glob.glob(d + "/nvidia/cu*/bin/cuobjdump")):
        print(hit)
        sys.exit(0)
sys.exit(1)
PY
) && [ -x "$c" ] && { echo "$c"; return 0; }
  for c in /usr/local/cuda/bin/cuobjdump; do [ -x "$c" ] && { echo "$c"; return 0; }; done
  return 1
}
