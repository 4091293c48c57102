#!/usr/bin/env bash
# Images validated where no engine runs, and engines that are not a local socket:
#   * the sandbox tier against the engine: every genuine torch image of the real-image suites
#     (tdreal/, tdrt/, tdob/: tests/e2e/lib/*_images.sh) saved with `docker save` and validated
#     from the archive with no engine socket at all; the checks must agree with the engine's
#   * the transports: skopeo's OCI layout and archive, a registry with a login (the registry's
#     own htpasswd auth), mksquashfs of an exported root; refusals: a layer that writes through
#     a symbolic link, a tampered blob, no login, unknown transports
#   * node-check on a node with no engine, and `cache list|prune`
#   * remote engines: a second dockerd on 127.0.0.1 with TLS (certificates made by openssl),
#     the same engine through Debian's openssh-server (ssh://), and a Docker context; each
#     validate must agree with the engine's own socket
# Usage: sandbox_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /var/tmp/torchdock-sandbox-e2e-XXXXXX)
# The store below it must be reachable by an image's USER (the sandbox runs it as that user).
chmod 755 "$WORK"
SSHD_PID=
cleanup() {
  [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null
  services_stop
  rm -rf "$WORK"
}
trap cleanup EXIT
source "$ROOT/tests/e2e/lib/check.sh"
source "$ROOT/tests/e2e/lib/real_images.sh"
source "$ROOT/tests/e2e/lib/runtime_images.sh"
source "$ROOT/tests/e2e/lib/observed_images.sh"
ENGINE_HOST=$DOCKER_HOST
NO_ENGINE=unix:///nonexistent/torchdock-no-engine.sock
# Everything the sandbox tier reads or unpacks lives here: nothing is shared with the
# engine runs' file-probe cache.
export TORCHDOCK_CACHE_DIR=$WORK/cache
contains() { local text=$1; shift; for part in "$@"; do [[ $text == *"$part"* ]] || return 1; done; }
# sandboxed ARGS...: torchdock with no engine socket anywhere
sandboxed() { DOCKER_HOST=$NO_ENGINE "$TD" "$@" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; }
jfield() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# agree ENGINE_JSON OTHER_JSON [OTHER_TIER]: the checks of each image the same in both reports
# (image i of one is image i of the other), the second run in OTHER_TIER (default sandbox);
# prints the differences, one a line.
agree() {
  python3 - "$1" "$2" "${3:-sandbox}" <<'PY'
import json, re, sys
a = json.load(open(sys.argv[1]))["images"]; b = json.load(open(sys.argv[2]))["images"]
bad = 0
# An owner the sandbox's user namespace does not map reads as the kernel's overflow id (65534)
# there: the permission the kernel applies is the real owner's, only the number shown differs.
owners = lambda v: re.sub(r"owned by uid \d+(?: gid \d+)?", "owned by uid N", v) if isinstance(v, str) else v
if len(a) != len(b):
    print(f"{len(a)} images in the engine's report, {len(b)} in the sandbox's"); sys.exit(1)
for x, y in zip(a, b):
    if x["error"] or y["error"]:
        print(f"{x['image']}: error: engine {x['error']!r}, sandbox {y['error']!r}"); bad += 1; continue
    if y["runner"]["tier"] != sys.argv[3] or x["runner"]["tier"] != "engine":
        print(f"{x['image']}: runner tiers {x['runner']['tier']} / {y['runner']['tier']}"); bad += 1
    cx = {c["id"]: c for c in x["checks"]}; cy = {c["id"]: c for c in y["checks"]}
    for cid in sorted(set(cx) | set(cy)):
        p, q = cx.get(cid), cy.get(cid)
        if p is None or q is None:
            print(f"{x['image']} {cid}: only in one report"); bad += 1; continue
        # The GPU tier's skip names why each host has no GPU; the rest must be the same.
        keys = ["status"] if cid.startswith("TD14") and p["status"] == "skip" else \
               ["status", "observed", "expected", "message", "evidence_from"]
        for k in keys:
            if owners(p.get(k)) != owners(q.get(k)):
                print(f"{x['image']} {cid} {k}: engine {p.get(k)!r} / sandbox {q.get(k)!r}"); bad += 1
print(f"{len(a)} images compared, {bad} differences")
sys.exit(1 if bad else 0)
PY
}

services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
check "bubblewrap, skopeo, mksquashfs, sshd and htpasswd are installed" \
  bash -c 'command -v bwrap && command -v skopeo && command -v mksquashfs && test -x /usr/sbin/sshd && command -v htpasswd' >/dev/null

# --- the real torch images of the real-image suites, both tiers -------------------------------
start=$(date +%s)
build_real_images /var/tmp/torchdock/real-images && build_runtime_images "$WORK/rt" &&
  build_observed_images "$WORK/ob"
check "the real-image suites' images are built (or found in BuildKit's cache)" test $? = 0 ||
  { finish; exit 1; }
echo "# figure: images built (or found in the cache) in $(( $(date +%s) - start )) s"
# The images that add at most a few hundred MB to tdreal/torch:uv's 7.4 GB (configuration,
# a removed library, a wrapper, a .pth): one archive of them all is about 8 GB, and about as
# much again unpacked. The others carry a torch of their own (1 to 7 GB each: a cp312 wheel,
# a second install, another base); an archive with them would pass 25 GB, more than a CI
# disk holds beside the engine's images, so they are released from the engine first (this
# suite is the last user of them before e2e_real_images_release).
# tdob/torch:tmpro (/tmp mode 755, USER nobody) is saved and validated too, but not held to
# the engine: in the sandbox the torch probe's child finds no temporary directory and every
# torch check is an error there, where the engine's run imports torch and fails TD134 alone.
# A worse verdict, not a better one; the difference is open (see the issue's note).
COMPARED=(tdreal/torch:{uv,pythonpath,virtualenv,nonccl,cudart129}
          tdrt/torch:{engtrunc,entryact,entryapp,graphtrunc,jitpreload,noshell,novisible,tornlib,tvskew,unreadable}
          tdob/torch:{distroless,ldlphuge,nocusparselt,nonvidia,nonvshmem,numpyabi,poetryrun,pth,pypathtv,uvrun,uvruncmd})
KNOWN_WORSE=(tdob/torch:tmpro)
mapfile -t OTHERS < <(/usr/bin/docker images --format '{{.Repository}}:{{.Tag}}' | grep -E '^(tdreal|tdrt|tdob)/torch:' |
  grep -vxF -f <(printf '%s\n' "${COMPARED[@]}" "${KNOWN_WORSE[@]}"))
[ "${#OTHERS[@]}" -gt 0 ] && engine_release "${OTHERS[@]}"
echo "# not compared (a torch of their own; released to make room): ${OTHERS[*]}"
check "${#COMPARED[@]} real images to compare are in the engine" \
  /usr/bin/docker image inspect "${COMPARED[@]}" >/dev/null
start=$(date +%s.%N)
/usr/bin/docker save -o "$WORK/real.tar" "${COMPARED[@]}" "${KNOWN_WORSE[@]}"; r=$?
check "docker save of them all into one archive ($(du -BM "$WORK/real.tar" | cut -f1))" test "$r" = 0
echo "# figure: docker save of ${#COMPARED[@]} images: $(du -BM "$WORK/real.tar" | cut -f1) in $(echo "$(date +%s.%N) - $start" | bc) s"
SANDBOXED=()
for img in "${COMPARED[@]}"; do SANDBOXED+=("docker-archive:$WORK/real.tar:$img"); done
start=$(date +%s.%N)
"$TD" validate --probes "$PROBES" -j 2 --json="$WORK/engine.json" "${COMPARED[@]}" >"$WORK/engine.out" 2>&1
echo "# figure: engine validate of ${#COMPARED[@]} images (-j 2): $(echo "$(date +%s.%N) - $start" | bc) s"
start=$(date +%s.%N)
sandboxed validate --probes "$PROBES" -j 2 --json="$WORK/sandbox.json" "${SANDBOXED[@]}"
echo "# figure: sandbox validate of ${#COMPARED[@]} images (-j 2, cold: every layer unpacked, no file-probe cache): $(echo "$(date +%s.%N) - $start" | bc) s"
grep -h "unpacked [0-9]" "$WORK/err" | sed 's/^/# figure: /' | head -3
agree "$WORK/engine.json" "$WORK/sandbox.json" >"$WORK/agree.txt"; r=$?
check "every check of every compared image agrees between the engine and the sandbox ($(tail -1 "$WORK/agree.txt"))" \
  test "$r" = 0
[ "$r" = 0 ] || head -60 "$WORK/agree.txt"
check "the sandbox ran with no engine socket and says so in the report" \
  test "$(jfield "$WORK/sandbox.json" "sorted(set(i['runner']['tier'] for i in d['images']))")" = "['sandbox']"
sandboxed validate --probes "$PROBES" --json="$WORK/worse.json" "docker-archive:$WORK/real.tar:tdob/torch:tmpro"
check "tdob/torch:tmpro in the sandbox: not a pass (exit $(rc)), TD134 not passed ($(jfield "$WORK/worse.json" "[c['status'] for c in d['images'][0]['checks'] if c['id']=='TD134'][0]"))" \
  bash -c "test $(rc) = 1 && test '$(jfield "$WORK/worse.json" "[c['status'] for c in d['images'][0]['checks'] if c['id']=='TD134'][0]")' != pass"
start=$(date +%s.%N)
sandboxed validate --probes "$PROBES" --json="$WORK/warm.json" "docker-archive:$WORK/real.tar:tdreal/torch:uv"
echo "# figure: sandbox validate tdreal/torch:uv, warm (root and file probes cached): $(echo "$(date +%s.%N) - $start" | bc) s"
check "warm: the root is found in the store (exit $(rc))" \
  bash -c "test $(rc) = 0 && grep -q '(cached)' <<<'$(jfield "$WORK/warm.json" "d['images'][0]['runner']['detail']")'"

# --- node-check on a node with no engine -------------------------------------------------------
sandboxed node-check --probes "$PROBES" --json="$WORK/node.json" --deadline 55s "docker-archive:$WORK/real.tar:tdreal/torch:uv"
check "node-check with no engine: healthy from the sandbox (exit $(rc): $(head -1 "$WORK/out"))" \
  bash -c "test $(rc) = 0 && grep -q '^OK' '$WORK/out' && test '$(jfield "$WORK/node.json" "d['image']['engine']")' = 'sandbox (bubblewrap)'"

# --- an enroot .sqsh of the same root (mksquashfs), with its environment as enroot keeps it ------
ROOTFS=$(jfield "$WORK/warm.json" "d['images'][0]['runner']['detail'].split(' in ')[1].split(' ')[0]")
cp -al "$ROOTFS" "$WORK/sqroot" && rm -f "$WORK/sqroot/etc/environment" &&
  /usr/bin/docker inspect tdreal/torch:uv --format '{{range .Config.Env}}{{println .}}{{end}}' >"$WORK/sqroot/etc/environment" &&
  mksquashfs "$WORK/sqroot" "$WORK/uv.sqsh" -comp lz4 -quiet -no-progress >/dev/null 2>&1; r=$?
check "an enroot-style .sqsh of tdreal/torch:uv's root (mksquashfs, $(du -BM "$WORK/uv.sqsh" 2>/dev/null | cut -f1))" test "$r" = 0
rm -rf "$WORK/sqroot" "$WORK/real.tar"
sandboxed cache list --json="$WORK/cache.json"
check "cache list: the roots made here ($(tail -1 "$WORK/out"))" \
  test "$(jfield "$WORK/cache.json" "len(d['roots']) > 0")" = True
sandboxed cache prune --max-size 0
check "cache prune --max-size 0 empties the store (exit $(rc))" \
  bash -c "test $(rc) = 0 && test -z \"\$(ls '$TORCHDOCK_CACHE_DIR/images/roots')\""
sandboxed validate --probes "$PROBES" --json="$WORK/t.json" "squashfs:$WORK/uv.sqsh"
check "squashfs: exit $(rc); torch 2.9.1 imports through the environment enroot keeps ($(jfield "$WORK/t.json" "[c['message'] for c in d['images'][0]['checks'] if c['id']=='TD119'][0]"))" \
  bash -c "test $(rc) = 0 && test '$(jfield "$WORK/t.json" "[c['status'] for c in d['images'][0]['checks'] if c['id']=='TD119'][0]")' = pass"
sandboxed cache prune --max-size 0 >/dev/null
rm -f "$WORK/uv.sqsh"

# --- skopeo's OCI layout and archive (the registry's Debian base, small) -------------------------
BASE=$TD_REGISTRY/library/debian:bookworm
"$TD" validate --probes "$PROBES" --json="$WORK/base-engine.json" "$BASE" >/dev/null 2>&1
/usr/bin/docker save -o "$WORK/base.tar" "$BASE" &&
  skopeo copy --quiet "docker-archive:$WORK/base.tar" "oci:$WORK/layout:base" &&
  skopeo copy --quiet "oci:$WORK/layout:base" "oci-archive:$WORK/base-oci.tar"
check "skopeo copied $BASE to an OCI layout and an OCI archive" test $? = 0
for src in "oci:$WORK/layout:base" "oci-archive:$WORK/base-oci.tar"; do
  sandboxed validate --probes "$PROBES" --json="$WORK/t.json" "$src"
  agree "$WORK/base-engine.json" "$WORK/t.json" >"$WORK/agree.txt"; r=$?
  check "$src: the checks agree with the engine's ($(tail -1 "$WORK/agree.txt"))" test "$r" = 0
  [ "$r" = 0 ] || head -10 "$WORK/agree.txt"
done

# --- a registry with a login --------------------------------------------------------------------
AUTH_REG=127.0.0.1:5013
htpasswd -Bbn trainer s3cret >"$WORK/htpasswd"
mkdir -p "$WORK/reg"
cat >"$WORK/reg.yml" <<YML
version: 0.1
storage:
  filesystem:
    rootdirectory: $WORK/reg
http:
  addr: $AUTH_REG
auth:
  htpasswd:
    realm: torchdock-test
    path: $WORK/htpasswd
log:
  level: warn
YML
docker-registry serve "$WORK/reg.yml" >"$WORK/reg.log" 2>&1 &
TD_STARTED_PIDS+=($!)
for _ in $(seq 1 40); do curl -s -o /dev/null "http://$AUTH_REG/v2/" && break; sleep 0.25; done
check "the registry with htpasswd auth asks for a login (401)" \
  test "$(curl -s -o /dev/null -w '%{http_code}' "http://$AUTH_REG/v2/")" = 401
mkdir -p "$WORK/nologin" "$WORK/login"
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$AUTH_REG" "$(printf trainer:s3cret | base64)" >"$WORK/login/config.json"
/usr/bin/docker tag "$TD_REGISTRY/library/debian:bookworm" "$AUTH_REG/team/base:1" &&
  DOCKER_CONFIG=$WORK/login /usr/bin/docker push -q "$AUTH_REG/team/base:1" >/dev/null
check "an image pushed there with docker's login" test $? = 0
DOCKER_CONFIG=$WORK/nologin sandboxed validate --probes "$PROBES" "docker://$AUTH_REG/team/base:1"
check "docker:// without a login: exit $(rc), says to docker login" \
  bash -c "test $(rc) = 3 && grep -q 'docker login $AUTH_REG' '$WORK/out'"
DOCKER_CONFIG=$WORK/login sandboxed validate --probes "$PROBES" --json="$WORK/reg.json" "docker://$AUTH_REG/team/base:1"
"$TD" validate --probes "$PROBES" --json="$WORK/reg-engine.json" "$AUTH_REG/team/base:1" >/dev/null 2>&1
agree "$WORK/reg-engine.json" "$WORK/reg.json" >"$WORK/agree.txt"; r=$?
check "docker:// with the login: pulled, verified, unpacked; the checks agree with the engine's ($(tail -1 "$WORK/agree.txt"))" \
  test "$r" = 0
[ "$r" = 0 ] || head -10 "$WORK/agree.txt"

# --- refusals -------------------------------------------------------------------------------------
python3 - "$WORK/hostile" <<'PY'
import hashlib, io, json, os, sys, tarfile
out = sys.argv[1]; os.makedirs(out + "/blobs/sha256")
def blob(data):
    d = hashlib.sha256(data).hexdigest()
    open(f"{out}/blobs/sha256/{d}", "wb").write(data); return "sha256:" + d, len(data)
def layer(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, kind, data in members:
            i = tarfile.TarInfo(name)
            if kind == "l": i.type, i.linkname = tarfile.SYMTYPE, data
            else: i.size = len(data)
            t.addfile(i, io.BytesIO(data.encode()) if kind == "f" else None)
    return buf.getvalue()
l, ls = blob(layer([("etc", "l", "/tmp"), ("etc/written-through-the-link", "f", "x")]))
cfg, cs = blob(json.dumps({"architecture": "amd64", "os": "linux", "config": {}, "rootfs": {"type": "layers", "diff_ids": [l]}}).encode())
m, ms = blob(json.dumps({"schemaVersion": 2, "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfg, "size": cs},
                         "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": l, "size": ls}]}).encode())
json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": m, "size": ms}]},
          open(out + "/index.json", "w"))
open(out + "/oci-layout", "w").write('{"imageLayoutVersion":"1.0.0"}')
PY
sandboxed validate --probes "$PROBES" "oci:$WORK/hostile"
check "a layer that writes through its own symbolic link (etc -> /tmp): refused by name (exit $(rc))" \
  bash -c "test $(rc) = 2 && grep -q 'symbolic link or not a directory' '$WORK/out'"
check "... and nothing was written outside the root" test ! -e /tmp/written-through-the-link
cp -r "$WORK/layout" "$WORK/tampered"
big=$(ls -S "$WORK/tampered/blobs/sha256" | head -1)
printf 'tampered' | dd of="$WORK/tampered/blobs/sha256/$big" bs=1 seek=100000 conv=notrunc 2>/dev/null
rm -rf "$TORCHDOCK_CACHE_DIR/images/roots"
sandboxed validate --probes "$PROBES" "oci:$WORK/tampered:base"
check "a tampered layer blob: refused as corrupt or substituted (exit $(rc))" \
  bash -c "test $(rc) = 2 && grep -q 'corrupt or substituted' '$WORK/out'"
sandboxed validate --probes "$PROBES" "dir:$WORK/layout"
check "an unknown transport: exit 2 naming the accepted ones" \
  bash -c "test $(rc) = 2 && grep -q 'oci-archive:' '$WORK/err'"
sandboxed validate --probes "$PROBES" tdreal/torch:uv
check "an engine image with no engine: exit 3, the engine named ($(head -c 120 "$WORK/err"))" \
  bash -c "test $(rc) = 3 && grep -q 'nonexistent' '$WORK/err'"

rm -rf "$WORK/layout" "$WORK/tampered" "$WORK/base.tar" "$WORK/base-oci.tar"

# --- remote engines: TLS, ssh, a context -----------------------------------------------------------
TLS=$WORK/tls
mkdir -p "$TLS"
( cd "$TLS" &&
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=torchdock test CA" -keyout ca-key.pem -out ca.pem &&
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server-key.pem -out server.csr &&
  printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.cnf &&
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 -extfile server.cnf -out server-cert.pem &&
  openssl req -newkey rsa:2048 -nodes -subj "/CN=client" -keyout key.pem -out client.csr &&
  printf 'extendedKeyUsage=clientAuth\n' >client.cnf &&
  openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 -extfile client.cnf -out cert.pem
) >/dev/null 2>&1
check "openssl made a CA, the engine's certificate and a client certificate" test -s "$TLS/cert.pem"
TLS_PORT=23761
engine_serve tls-engine -H "tcp://127.0.0.1:$TLS_PORT" --tlsverify --tlscacert "$TLS/ca.pem" \
  --tlscert "$TLS/server-cert.pem" --tlskey "$TLS/server-key.pem"
check "a second dockerd listening on 127.0.0.1:$TLS_PORT with TLS" test $? = 0
REMOTE_SOCK=$TD_SERVED_HOST
/usr/bin/docker save "$BASE" | DOCKER_HOST=$REMOTE_SOCK /usr/bin/docker load -q >/dev/null
check "the Debian base loaded into that engine" test $? = 0
IMG=$BASE
DOCKER_HOST=$REMOTE_SOCK "$TD" validate --probes "$PROBES" --json="$WORK/local.json" "$IMG" >/dev/null 2>&1
DOCKER_HOST=tcp://127.0.0.1:$TLS_PORT DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$TLS \
  "$TD" validate --probes "$PROBES" --json="$WORK/remote.json" "$IMG" >"$WORK/out" 2>&1
agree "$WORK/local.json" "$WORK/remote.json" engine >"$WORK/agree.txt" 2>&1; r=$?
check "tcp:// with TLS: the probes reach it as a volume, the checks agree with its own socket ($(tail -1 "$WORK/agree.txt"))" \
  test "$r" = 0
[ "$r" = 0 ] || { head -10 "$WORK/agree.txt"; tail -5 "$WORK/out"; }
check "... the probes' volume is on that engine" \
  bash -c "DOCKER_HOST=$REMOTE_SOCK /usr/bin/docker volume ls -q | grep -q '^torchdock-probes-'"
mkdir -p "$WORK/otherca" && ( cd "$WORK/otherca" &&
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=another CA" -keyout k.pem -out ca.pem ) >/dev/null 2>&1 &&
  cp "$TLS/cert.pem" "$TLS/key.pem" "$WORK/otherca/"
DOCKER_HOST=tcp://127.0.0.1:$TLS_PORT DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$WORK/otherca "$TD" validate "$IMG" >"$WORK/out" 2>&1
check "an engine certificate another CA signed: refused (exit $?, $(grep -o 'SSL certificate problem[^)]*' "$WORK/out" | head -1))" \
  grep -q 'SSL certificate problem' "$WORK/out"
DOCKER_HOST=tcp://127.0.0.1:$TLS_PORT "$TD" validate "$IMG" >"$WORK/out" 2>&1
check "plain tcp:// without asking: exit $? naming TORCHDOCK_ENGINE_PLAIN_TCP" grep -q 'TORCHDOCK_ENGINE_PLAIN_TCP=1' "$WORK/out"

SSH=$WORK/ssh
mkdir -p "$SSH" /run/sshd
ssh-keygen -q -t ed25519 -N "" -f "$SSH/hostkey" && ssh-keygen -q -t ed25519 -N "" -f "$SSH/userkey"
echo "environment=\"DOCKER_HOST=$REMOTE_SOCK\" $(cat "$SSH/userkey.pub")" >"$SSH/authorized_keys"
SSH_PORT=22213
cat >"$SSH/sshd_config" <<EOF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $SSH/hostkey
AuthorizedKeysFile $SSH/authorized_keys
PermitUserEnvironment yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile $SSH/sshd.pid
EOF
cat >"$SSH/ssh_config" <<EOF
Host 127.0.0.1
  IdentityFile $SSH/userkey
  UserKnownHostsFile $SSH/known_hosts
  StrictHostKeyChecking accept-new
EOF
/usr/sbin/sshd -D -f "$SSH/sshd_config" -E "$SSH/sshd.log" &
SSHD_PID=$!
for _ in $(seq 1 20); do (exec 3<>/dev/tcp/127.0.0.1/$SSH_PORT) 2>/dev/null && break; sleep 0.25; done
DOCKER_HOST=ssh://$(id -un)@127.0.0.1:$SSH_PORT TORCHDOCK_SSH_CONFIG=$SSH/ssh_config \
  "$TD" validate --probes "$PROBES" --json="$WORK/ssh.json" "$IMG" >"$WORK/out" 2>&1
agree "$WORK/local.json" "$WORK/ssh.json" engine >"$WORK/agree.txt" 2>&1; r=$?
check "ssh:// through openssh-server and docker system dial-stdio: the checks agree ($(tail -1 "$WORK/agree.txt"))" \
  test "$r" = 0
[ "$r" = 0 ] || { head -10 "$WORK/agree.txt"; tail -5 "$WORK/out"; }
DOCKER_HOST=ssh://nobody-here@127.0.0.1:$SSH_PORT TORCHDOCK_SSH_CONFIG=$SSH/ssh_config "$TD" validate "$IMG" >"$WORK/out" 2>&1
check "ssh:// with a login ssh cannot make: exit $? with ssh's own message" \
  bash -c "grep -q 'Permission denied' '$WORK/out' && grep -q 'dial-stdio' '$WORK/out'"

export DOCKER_CONFIG=$WORK/dockercfg
DOCKER_HOST= /usr/bin/docker context create tdtls --docker \
  "host=tcp://127.0.0.1:$TLS_PORT,ca=$TLS/ca.pem,cert=$TLS/cert.pem,key=$TLS/key.pem" >/dev/null 2>&1
DOCKER_HOST= DOCKER_CONTEXT=tdtls "$TD" validate --probes "$PROBES" --json="$WORK/ctx.json" "$IMG" >"$WORK/out" 2>&1
agree "$WORK/local.json" "$WORK/ctx.json" engine >"$WORK/agree.txt" 2>&1; r=$?
check "a Docker context (docker context create, its TLS material): the checks agree ($(tail -1 "$WORK/agree.txt"))" \
  test "$r" = 0
[ "$r" = 0 ] || { head -10 "$WORK/agree.txt"; tail -5 "$WORK/out"; }
DOCKER_HOST= DOCKER_CONTEXT=nosuch "$TD" validate "$IMG" >"$WORK/out" 2>&1
check "a context that does not exist: exit $? naming it" grep -q 'context "nosuch" does not exist' "$WORK/out"
unset DOCKER_CONFIG
finish
