# Sourced by the observed-evidence suite (tests/e2e/real_images_observed_e2e_test.sh): the
# layouts of ../shared/reports/real-images-3.md derived from the genuine torch 2.9.1 install
# tdreal/torch:uv (tests/e2e/lib/real_images.sh: one torch download shared by the suites),
# each tagged tdob/torch:<case>:
#
#   uvrun       a uv project over /app/.venv (pyproject pinned to its pip freeze, `uv lock`),
#               venv not on PATH, ENTRYPOINT ["uv", "run", "--frozen"]: healthy through it
#   poetryrun   a Poetry project in /srv/app whose venv Poetry keeps under
#               /root/.cache/pypoetry/virtualenvs (torch reached through a .pth into
#               /app/.venv, not a second 6 GB copy), ENTRYPOINT ["poetry", "run"]: healthy
#   target      torch 2.9.1 again with `pip install --no-deps --target /opt/pkgs`,
#               PYTHONPATH=/opt/pkgs: torch imports from /opt/pkgs and finds its nvidia-*
#               wheels in /app/.venv through sys.path (its RPATH misses them); RECORD's
#               ../../bin/torchrun rows are in /opt/pkgs/bin: healthy
#   tmpro       /tmp and /var/tmp mode 755, USER nobody: torch imports, torchvision and the
#               file rendezvous find no temporary directory
#   abi         the cp312 torch 2.9.1 wheel (`pip install --target --python-version 3.12`)
#               on PYTHONPATH under Python 3.11: "Failed to load PyTorch C extensions"
#   venvabi     the same files as a venv made by Python 3.12 (lib/python3.12, pyvenv.cfg)
#               whose python is the 3.11 of the stage it was copied into: no torch module
#   py313       report case 5: the uv image's /app (a Python 3.11 venv whose python links to
#               /usr/bin/python3) copied into Debian trixie (Python 3.13): no torch module
#   py313pp     report case 6: py313 with PYTHONPATH=its lib/python3.11/site-packages: torch's
#               cp311 _C under 3.13, "Failed to load PyTorch C extensions"
#   nocusparselt nvidia-cusparselt-cu12 uninstalled: libcusparseLt.so.0 does not load
#   uvruncmd    uvrun with no ENTRYPOINT and CMD ["uv", "run", ...]: `docker run IMAGE python`
#               has no torch (/usr/bin/python3 only), the CMD runs it through uv
#   pth         /app/.venv's site-packages reached by /usr/bin/python3 through a .pth file in
#               the system's dist-packages, the venv not on PATH: healthy
#   twice       torch 2.9.1 again (--no-deps) in a venv made with --system-site-packages over
#               that system, on PATH: torch from /opt/venv, its nvidia-* wheels found by torch
#               in the system's site directories through sys.path: healthy
#   nonvshmem   nvidia-nvshmem-cu12 uninstalled: libnvshmem_host.so.3 does not load
#   nonvidia    site-packages/nvidia removed ("CPU inference"), the dist-infos kept
#   ldlphuge    LD_LIBRARY_PATH of 50 entries (missing, empty and repeated ones); the 11th holds
#               cudart and nvJitLink 12.1 (PyPI 12.1.105 wheels): torch maps its own 12.8 copies
#   pinmoved    torch's pins moved both ways: triton 3.4.0 (torch pins 3.5.1), NCCL 2.32.3
#               (torch pins 2.27.5): torch imports and maps the newer NCCL
#   pypathtv    torchvision 0.23.0 (torch 2.8.0's) put first by PYTHONPATH=/opt/pkgs (`pip
#               install --target --no-deps`): torch 2.9.1 imports, torchvision does not
#   distroless  what a distroless image leaves: no shell, no dpkg database, no os-release, no
#               ld.so.cache (removed by python itself: exec-form RUN), USER 65532 with a
#               writable HOME, ENTRYPOINT ["/app/.venv/bin/python"]: healthy
#   numpyabi    pandas 2.1.4 (built against numpy 1.x) under numpy 2.4.6: torch and
#               torch.from_numpy work, `import pandas` fails (outside torch's stack)
OB_UV=0.13.8
OB_POETRY=2.2.1
OB_CUDA121=12.1.105  # PyPI nvidia-cuda-runtime-cu12 and nvidia-nvjitlink-cu12 of CUDA 12.1
OB_TRITON_OLD=3.4.0 OB_NCCL_NEW=2.32.3 OB_TORCHVISION_OLD=0.23.0 OB_PANDAS=2.1.4 OB_NUMPY1=1.26.4 OB_NUMPY2=2.4.6

ob_build() {  # ob_build CASE DOCKERFILE_TEXT [FILE...]: FILEs are copied into the context
  local name=$1 dir=$OB_WORK/$1 text=$2
  shift 2
  mkdir -p "$dir" && printf '%s\n' "$text" >"$dir/Dockerfile"
  [ $# -gt 0 ] && cp "$@" "$dir/"
  DOCKER_BUILDKIT=1 /usr/bin/docker build --network=host \
    --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt \
    -t "tdob/torch:$name" "$dir" >"$dir/build.log" 2>&1 || { tail -20 "$dir/build.log"; return 1; }
}

build_observed_images() {
  OB_WORK=$1
  mkdir -p "$OB_WORK"
  local pip='pip install --disable-pip-version-check --cert /run/secrets/ca --default-timeout=180'
  local base=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  # The uv project pins exactly what pip installed in /app/.venv, so `uv run --frozen` finds
  # the environment in sync and installs nothing (the probes run without a network).
  /usr/bin/docker run --rm --network=none tdreal/torch:uv cat /opt/pip-freeze.txt >"$OB_WORK/freeze.txt" || return 1
  {
    printf '[project]\nname = "app"\nversion = "0"\nrequires-python = ">=3.11"\ndependencies = [\n'
    grep '==' "$OB_WORK/freeze.txt" | sed 's/.*/  "&",/'
    printf ']\n\n[tool.uv]\npackage = false\nenvironments = ["sys_platform == '"'"'linux'"'"' and platform_machine == '"'"'x86_64'"'"'"]\n'
  } >"$OB_WORK/uv.pyproject.toml"
  printf 'import torch\nprint(torch.__version__)\n' >"$OB_WORK/main.py"
  ob_build uvrun "FROM tdreal/torch:uv
ENV PATH=$base
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    python3 -m venv /opt/uv && /opt/uv/bin/$pip uv==$OB_UV && ln -s /opt/uv/bin/uv /usr/local/bin/uv
WORKDIR /app
COPY uv.pyproject.toml /app/pyproject.toml
COPY main.py /app/main.py
RUN --mount=type=secret,id=ca SSL_CERT_FILE=/run/secrets/ca uv lock \\
 && uv run --frozen --offline python -c 'import torch'
ENTRYPOINT [\"uv\", \"run\", \"--frozen\"]
CMD [\"python\", \"main.py\"]" "$OB_WORK/uv.pyproject.toml" "$OB_WORK/main.py" || return 1
  printf '[project]\nname = "app"\nversion = "0"\nrequires-python = ">=3.11"\ndependencies = []\n\n[tool.poetry]\npackage-mode = false\n' \
    >"$OB_WORK/poetry.pyproject.toml"
  ob_build poetryrun "FROM tdreal/torch:uv
ENV PATH=$base
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    python3 -m venv /opt/poetry && /opt/poetry/bin/$pip poetry==$OB_POETRY \\
 && ln -s /opt/poetry/bin/poetry /usr/local/bin/poetry
WORKDIR /srv/app
COPY poetry.pyproject.toml /srv/app/pyproject.toml
COPY main.py /srv/app/main.py
RUN poetry env use /usr/bin/python3 \\
 && venv=\$(poetry env info -p) && case \"\$venv\" in /root/.cache/pypoetry/virtualenvs/app-*) ;; *) exit 1;; esac \\
 && echo /app/.venv/lib/python3.11/site-packages > \"\$venv/lib/python3.11/site-packages/app-deps.pth\" \\
 && poetry run python -c 'import torch'
ENTRYPOINT [\"poetry\", \"run\"]
CMD [\"python\", \"main.py\"]" "$OB_WORK/poetry.pyproject.toml" "$OB_WORK/main.py" || return 1
  ob_build target "FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip --no-deps --target /opt/pkgs torch==$REAL_TORCH
ENV PYTHONPATH=/opt/pkgs" || return 1
  ob_build tmpro "FROM tdreal/torch:uv
RUN chmod 755 /tmp /var/tmp
USER nobody" || return 1
  ob_build abi "FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip --no-deps --only-binary=:all: --python-version 3.12 --target /opt/venv/lib/python3.12/site-packages torch==$REAL_TORCH
ENV PYTHONPATH=/opt/venv/lib/python3.12/site-packages" || return 1
  # A venv made by Python 3.12 (its pyvenv.cfg, lib/python3.12), whose bin/python is the
  # /usr/bin/python3 of the stage it was copied into: 3.11 here.
  ob_build venvabi "FROM tdob/torch:abi
ENV PYTHONPATH=
RUN mkdir -p /opt/venv/bin && ln -s /usr/bin/python3 /opt/venv/bin/python \\
 && ln -s python /opt/venv/bin/python3 \\
 && printf 'home = /usr/bin\\ninclude-system-site-packages = false\\nversion = 3.12.12\\n' > /opt/venv/pyvenv.cfg
ENV PATH=/opt/venv/bin:$base VIRTUAL_ENV=/opt/venv" || return 1
  # A debootstrapped trixie with its python3 (the base is a tdob/torch image: released with them).
  if ! /usr/bin/docker image inspect tdob/torch:trixie-python3 >/dev/null 2>&1; then
    local trixie
    trixie=$(debian_rootfs_tarball trixie "" "" python3) &&
      /usr/bin/docker import -c 'CMD ["bash"]' "$trixie" tdob/torch:trixie-python3 >/dev/null || return 1
  fi
  ob_build py313 "FROM tdreal/torch:uv AS built
FROM tdob/torch:trixie-python3
COPY --from=built /app /app
ENV PATH=/app/.venv/bin:$base" || return 1
  ob_build py313pp "FROM tdob/torch:py313
ENV PYTHONPATH=/app/.venv/lib/python3.11/site-packages" || return 1
  ob_build nocusparselt "FROM tdreal/torch:uv
RUN pip uninstall -y nvidia-cusparselt-cu12" || return 1
  ob_build uvruncmd "FROM tdob/torch:uvrun
ENTRYPOINT []
CMD [\"uv\", \"run\", \"--frozen\", \"python\", \"main.py\"]" || return 1
  local site=/app/.venv/lib/python3.11/site-packages
  ob_build pth "FROM tdreal/torch:uv
ENV PATH=$base
RUN echo $site > /usr/lib/python3/dist-packages/app.pth
CMD [\"python3\", \"-c\", \"import torch\"]" || return 1
  ob_build twice "FROM tdreal/torch:uv
ENV PATH=$base
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    echo $site > /usr/lib/python3/dist-packages/app.pth \\
 && python3 -m venv --system-site-packages /opt/venv \\
 && /opt/venv/bin/$pip --no-deps --ignore-installed torch==$REAL_TORCH
ENV PATH=/opt/venv/bin:$base VIRTUAL_ENV=/opt/venv" || return 1
  ob_build nonvshmem "FROM tdreal/torch:uv
RUN pip uninstall -y nvidia-nvshmem-cu12" || return 1
  ob_build nonvidia "FROM tdreal/torch:uv
RUN rm -rf $site/nvidia" || return 1
  local ldlp="" i
  for i in $(seq 1 50); do
    case $i in
      11) ldlp+=/usr/local/cuda-12.1/lib64: ;;
      20) ldlp+=: ;;
      30 | 40) ldlp+=/usr/local/cuda-12.1/lib64: ;;
      *) ldlp+=/opt/missing/lib$i: ;;
    esac
  done
  ob_build ldlphuge "FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip --no-deps --target /tmp/cuda121 nvidia-cuda-runtime-cu12==$OB_CUDA121 nvidia-nvjitlink-cu12==$OB_CUDA121 \\
 && mkdir -p /usr/local/cuda-12.1/lib64 \\
 && cp -a /tmp/cuda121/nvidia/cuda_runtime/lib/libcudart.so.12 /tmp/cuda121/nvidia/nvjitlink/lib/libnvJitLink.so.12 /usr/local/cuda-12.1/lib64/ \\
 && rm -rf /tmp/cuda121
ENV LD_LIBRARY_PATH=${ldlp%:}" || return 1
  ob_build pinmoved "FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip --no-deps triton==$OB_TRITON_OLD nvidia-nccl-cu12==$OB_NCCL_NEW" || return 1
  ob_build pypathtv "FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip --no-deps --target /opt/pkgs torchvision==$OB_TORCHVISION_OLD
ENV PYTHONPATH=/opt/pkgs" || return 1
  ob_build distroless "FROM tdreal/torch:uv
RUN mkdir -p /home/nonroot && chown 65532:65532 /home/nonroot
RUN [\"/usr/bin/python3\", \"-c\", \"import os, shutil; [os.remove(f) for f in ('/usr/bin/sh', '/usr/bin/bash', '/usr/bin/rbash', '/usr/bin/dash', '/etc/os-release', '/usr/lib/os-release', '/etc/ld.so.cache') if os.path.lexists(f)]; shutil.rmtree('/var/lib/dpkg')\"]
USER 65532:65532
ENV HOME=/home/nonroot
ENTRYPOINT [\"/app/.venv/bin/python\"]" || return 1
  ob_build numpyabi "FROM tdreal/torch:uv
RUN --mount=type=cache,target=/root/.cache/pip --mount=type=secret,id=ca \\
    $pip pandas==$OB_PANDAS numpy==$OB_NUMPY1 && $pip numpy==$OB_NUMPY2" || return 1
}

# ob_truth CASE [PYTHON_CODE]: what `docker run IMAGE python -c CODE` does, with the image's
# own USER, ENTRYPOINT and environment: "ok <its output>" or "fail <rc> <last line>".
# OB_PYTHON: the program instead of `python` (an image whose PATH has python3 only).
ob_truth() {
  local code=${2:-'import torch; print("GT", torch.__version__, torch.backends.cudnn.version())'}
  local out rc
  out=$(/usr/bin/docker run --rm --network=none "tdob/torch:$1" "${OB_PYTHON:-python}" -c "$code" 2>&1); rc=$?
  if [ $rc = 0 ]; then echo "ok $(grep '^GT ' <<<"$out" | head -1 | cut -d' ' -f2-)"
  else echo "fail $rc $(grep -v '^[[:space:]]' <<<"$out" | grep -v '^GT' | tail -1 | cut -c1-200)"; fi
}

# ob_error_log CASE CODE FILE: the error text `docker run IMAGE python -c CODE` prints, for explain
ob_error_log() {
  /usr/bin/docker run --rm --network=none "tdob/torch:$1" python -c "$2" >"$3" 2>&1
}
