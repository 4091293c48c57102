# Sourced by the runtime suite (tests/e2e/real_images_runtime_e2e_test.sh): genuine torch
# 2.9.1 images (tdreal/torch:uv from tests/e2e/lib/real_images.sh, no second torch download)
# in the layouts and breakages of ../shared/reports/real-images-2.md: which python the image
# runs, what its ENTRYPOINT does, what LD_PRELOAD loads first, damaged and unreadable files,
# a torchvision that does not pair. Each is tagged tdrt/torch:<case>.
RT_SITE=/app/.venv/lib/python3.11/site-packages

rt_build() {  # rt_build CASE DOCKERFILE_TEXT
  local dir=$RT_WORK/$1
  mkdir -p "$dir" && printf '%s\n' "$2" >"$dir/Dockerfile"
  DOCKER_BUILDKIT=1 /usr/bin/docker build --network=host \
    --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt \
    -t "tdrt/torch:$1" "$dir" >"$dir/build.log" 2>&1 || { tail -20 "$dir/build.log"; return 1; }
}

build_runtime_images() {
  RT_WORK=$1
  local pip='pip install --disable-pip-version-check --cert /run/secrets/ca --default-timeout=180'
  # A second venv with torch but without its nvidia-* wheels (`pip install --no-deps torch`,
  # from the shared pip cache): `import torch` fails there. It comes first on PATH, while
  # CONDA_PREFIX still names the healthy /app/.venv.
  rt_build twopy "FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    python3 -m venv /opt/venv2 && /opt/venv2/bin/$pip --no-deps torch==2.9.1 filelock \\
      typing-extensions sympy mpmath networkx jinja2 MarkupSafe fsspec
ENV PATH=/opt/venv2/bin:\$PATH CONDA_PREFIX=/app/.venv" || return 1
  # The image runs /app/.venv's python; a leftover VIRTUAL_ENV names the broken one.
  rt_build stalevenv "FROM tdrt/torch:twopy
ENV PATH=/app/.venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CONDA_PREFIX= VIRTUAL_ENV=/opt/venv2" || return 1
  # torch only through the environment its ENTRYPOINT activates.
  rt_build entryact "FROM tdreal/torch:uv
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN printf '#!/bin/sh\\n. /app/.venv/bin/activate\\nexec \"\$@\"\\n' > /usr/local/bin/entrypoint.sh && chmod +x /usr/local/bin/entrypoint.sh
ENTRYPOINT [\"/usr/local/bin/entrypoint.sh\"]
CMD [\"python\"]" || return 1
  # A serving image: its ENTRYPOINT is the app and ignores its arguments.
  rt_build entryapp "FROM tdreal/torch:uv
RUN printf 'import http.server, socketserver\\nprint(\"serving on 8000\", flush=True)\\nsocketserver.TCPServer((\"\", 8000), http.server.SimpleHTTPRequestHandler).serve_forever()\\n' > /opt/serve.py
ENTRYPOINT [\"python\", \"/opt/serve.py\"]" || return 1
  # Distroless-style: no shell at all.
  rt_build noshell "FROM tdreal/torch:uv
RUN rm -f /bin/sh /bin/dash /bin/bash /usr/bin/sh /usr/bin/dash /usr/bin/bash
CMD [\"python\"]" || return 1
  # Damaged layers: an empty cuDNN engine library, a torch library cut in half, an empty
  # cuDNN graph library.
  rt_build engtrunc "FROM tdreal/torch:uv
RUN : > $RT_SITE/nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9" || return 1
  rt_build tornlib "FROM tdreal/torch:uv
RUN f=$RT_SITE/torch/lib/libc10_cuda.so && truncate -s \$((\$(stat -c %s \$f) / 2)) \$f" || return 1
  rt_build graphtrunc "FROM tdreal/torch:uv
RUN : > $RT_SITE/nvidia/cudnn/lib/libcudnn_graph.so.9" || return 1
  # torchvision 0.22.1 (released for torch 2.7) under torch 2.9.1.
  rt_build tvskew "FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip --no-deps torchvision==0.22.1 pillow==11.3.0" || return 1
  # Installed under umask 077 and run as another user.
  rt_build unreadable "FROM tdreal/torch:uv
RUN chmod 700 $RT_SITE/nvidia && useradd -m -u 1000 ml
USER ml" || return 1
  # An older nvJitLink preloaded ahead of torch's own.
  rt_build jitpreload "FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip --no-deps --target /opt/oldjit nvidia-nvjitlink-cu12==12.1.105
ENV LD_PRELOAD=/opt/oldjit/nvidia/nvjitlink/lib/libnvJitLink.so.12" || return 1
  rt_build novisible "FROM tdreal/torch:uv
ENV CUDA_VISIBLE_DEVICES=\"\"" || return 1
}

# ground_truth CASE: how `docker run IMAGE python -c 'import torch; ...'` ends, as the image
# runs it (its USER, ENTRYPOINT and ENV; an app ENTRYPOINT is replaced by python, as a user
# of a serving image would): "ok TORCH CUDNN" or "fail EXIT LAST-ERROR-LINE".
ground_truth() {
  local code='import torch; print("GT", torch.__version__, torch.backends.cudnn.version())
import importlib.util
if importlib.util.find_spec("torchvision"):
    import torchvision.ops, torch as t; torchvision.ops.nms(t.zeros(1, 4), t.ones(1), 0.5); print("GT torchvision ok")'
  local out rc
  if [ "$1" = entryapp ]; then
    out=$(/usr/bin/docker run --rm --network=none --entrypoint python "tdrt/torch:$1" -c "$code" 2>&1); rc=$?
  else
    out=$(/usr/bin/docker run --rm --network=none "tdrt/torch:$1" python -c "$code" 2>&1); rc=$?
  fi
  if [ $rc = 0 ]; then echo "ok $(grep '^GT ' <<<"$out" | head -1 | cut -d' ' -f2-)"
  else echo "fail $rc $(grep -v '^[[:space:]]' <<<"$out" | grep -v '^GT' | tail -1 | cut -c1-200)"; fi
}
