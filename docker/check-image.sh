#!/usr/bin/env bash
# Builds the runtime image from a release binary without a container engine or a registry, then
# starts the server from the unpacked image and checks /health over TLS:
#
#   1. a Debian bookworm root from apt's mirror (debootstrap), imported as the base image;
#   2. `podman build` of docker/Dockerfile's runtime stage (vfs storage, chroot isolation) with
#      the given binary (BINARY_STAGE=prebuilt), tagged localhost/rooftop-server:check;
#   3. the image copied to an OCI layout (skopeo) and unpacked (umoci);
#   4. the server started from the unpacked root (chroot, as the image's user 10001, with the
#      image's entrypoint, command and environment), /health fetched over TLS trusting the
#      development CA it wrote into its volume, then SIGTERM: it must exit 0.
#
#   swift build -c release --product rooftop-server --static-swift-stdlib --build-path .build-static
#   docker/check-image.sh .build-static/release/rooftop-server
#
# Needs root and Debian's debootstrap, podman, skopeo, umoci, curl and jq. The Debian root is kept
# in $ROOFTOP_IMAGE_CACHE (default /var/cache/rooftop-image) and reused.
set -euo pipefail
cd "$(dirname "$0")/.."

binary="${1:?usage: docker/check-image.sh PATH-TO-rooftop-server (built with --static-swift-stdlib)}"
[ -x "$binary" ] || { echo "check-image: $binary is not an executable" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "check-image: needs root (debootstrap, chroot)" >&2; exit 1; }
for tool in debootstrap podman skopeo umoci curl jq strip; do
    command -v "$tool" >/dev/null || { echo "check-image: $tool is missing (apt-get install $tool)" >&2; exit 1; }
done

cache="${ROOFTOP_IMAGE_CACHE:-/var/cache/rooftop-image}"
work="$(mktemp -d /tmp/rooftop-image-XXXXXX)"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid" 2>/dev/null || true; fi
    for mount in "$work/bundle/rootfs/proc" "$work/bundle/rootfs/dev"; do
        if mountpoint -q "$mount"; then umount -l "$mount" || true; fi
    done
    rm -rf "$work"
}
trap cleanup EXIT
podman=(podman --storage-driver=vfs)

echo "== 1. the base: Debian bookworm from apt's mirror"
mirror="$(sed -n 's/^URIs: //p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
mirror="${mirror:-http://deb.debian.org/debian}"
if [ ! -x "$cache/root/usr/bin/apt-get" ]; then
    rm -rf "$cache/root"
    mkdir -p "$cache"
    debootstrap --variant=minbase bookworm "$cache/root" "$mirror" >"$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
fi
# Without the downloaded packages debootstrap leaves behind (a slim base, like Debian's own).
tar -C "$cache/root" --exclude='./var/cache/apt/archives/*.deb' --exclude='./var/lib/apt/lists/*' -c . \
    | "${podman[@]}" import --quiet - localhost/rooftop-debian:bookworm >/dev/null

echo "== 2. the image: docker/Dockerfile, runtime stage, with the prebuilt binary"
mkdir -p "$work/context"
cp docker/Dockerfile "$work/context/Dockerfile"
cp "$binary" "$work/context/rooftop-server"
strip --strip-debug "$work/context/rooftop-server"  # as the Dockerfile's build stage does
echo "binary: $(du -h "$work/context/rooftop-server" | cut -f1), loads $(ldd "$work/context/rooftop-server" | awk '/=>/ {print $1}' | tr '\n' ' ')"
"${podman[@]}" build --isolation=chroot --format docker --quiet \
    --build-arg BINARY_STAGE=prebuilt --build-arg RUNTIME_IMAGE=localhost/rooftop-debian:bookworm \
    --target runtime -t localhost/rooftop-server:check "$work/context" >/dev/null
"${podman[@]}" image inspect localhost/rooftop-server:check \
    --format 'image: user {{.Config.User}}, entrypoint {{.Config.Entrypoint}}, cmd {{.Config.Cmd}}, volumes {{.Config.Volumes}}, stop signal {{.Config.StopSignal}}'
echo "healthcheck: $("${podman[@]}" image inspect localhost/rooftop-server:check --format '{{.Config.Healthcheck.Test}}' 2>/dev/null || echo none)"

echo "== 3. unpacked: skopeo to an OCI layout, umoci unpack"
skopeo copy --quiet "containers-storage:[vfs@/var/lib/containers/storage+/run/containers/storage]localhost/rooftop-server:check" \
    "oci:$work/oci:check"
umoci unpack --image "$work/oci:check" "$work/bundle" >/dev/null
config="$work/bundle/config.json"
echo "size of the unpacked root: $(du -sh "$work/bundle/rootfs" | cut -f1)"

echo "== 4. started from the unpacked root"
root="$work/bundle/rootfs"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
user="$(jq -r '.process.user | "\(.uid):\(.gid)"' "$config")"
mapfile -t arguments < <(jq -r '.process.args[]' "$config")
mapfile -t environment < <(jq -r '.process.env[]' "$config")
data="$(jq -r '.process.cwd' "$config")"
# The image's environment, with the port moved to a free one on the loopback.
env -i "${environment[@]}" ROOFTOP_HOST=127.0.0.1 ROOFTOP_PORT="$port" \
    chroot --userspec="$user" "$root" "${arguments[@]}" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do
    grep -q "listening on" "$work/server.log" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
    sleep 0.1
done
grep -q "listening on" "$work/server.log" || { cat "$work/server.log" >&2; echo "check-image: no start in 20 s" >&2; exit 1; }
grep -E "listening on|development CA" "$work/server.log"
health="$(curl --silent --show-error --fail --max-time 5 --cacert "$root$data/tls/ca.pem" "https://127.0.0.1:$port/health")"
echo "GET /health over TLS (development CA from the volume): $health"
echo "$health" | jq -e '.status == "ok"' >/dev/null
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
echo "after SIGTERM the server exited with status $status"
[ "$status" -eq 0 ]
echo "== the image works"
