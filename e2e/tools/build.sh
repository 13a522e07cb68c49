#!/usr/bin/env bash
# Builds the real runtime the end-to-end tests use, from source, downloading
# nothing but Go modules (and Debian packages the machine lacks):
#   OUTDIR/ollama     Ollama v0.17.4 built from its Go module (cgo: it embeds
#                     llama.cpp and ggml's CPU backend)
#   OUTDIR/tiny.gguf  a tiny random-weight llama GGUF from e2e/tools/tinygguf
#
# Usage:   e2e/tools/build.sh OUTDIR
#          eval "$(e2e/tools/build.sh OUTDIR)"   # exports RUCKUS_OLLAMA, RUCKUS_TINY_GGUF
# Idempotent: each output is rebuilt only when it is missing or the hash of
# its inputs (this module's go.mod/go.sum, the stub headers or tinygguf's
# sources, the Go version) changed; otherwise this returns in well under a
# second. Go's own build cache (GOCACHE) is used, so a rebuild on the same
# machine is quick too. Messages go to stderr; stdout carries only the
# `export ...` lines.
set -euo pipefail

say() { echo "tools/build: $*" >&2; }
die() { say "error: $*"; exit 1; }

if [ $# -ne 1 ] || [ -z "$1" ]; then die "usage: $0 OUTDIR"; fi
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m -- "$1")
case "$out" in /) die "refusing to use / as OUTDIR" ;; esac
GO=${GO:-go}
command -v "$GO" >/dev/null || die "go not found (set GO=/path/to/go)"
mkdir -p "$out"

# One build at a time per OUTDIR (the lock lives outside the work tree).
if command -v flock >/dev/null; then
	lock="${TMPDIR:-/tmp}/ruckus-tools-$(printf %s "$out" | cksum | cut -d' ' -f1).lock"
	exec 9>"$lock"
	flock 9
fi

# hash_of FILE... — one hash of the files' contents, this script's build
# settings and the Go toolchain.
hash_of() {
	{
		sha256sum "$@"
		"$GO" version
		"$GO" env GOOS GOARCH CC CXX
		echo "$ollama_ldflags|$cgo_opt|${CGO_CPPFLAGS:-}|${CGO_CFLAGS:-}|${CGO_CXXFLAGS:-}"
	} | sha256sum | cut -d' ' -f1
}
fresh() { # OUTPUT STAMP HASH
	[ -s "$1" ] && [ -f "$2" ] && [ "$(cat "$2")" = "$3" ]
}

ollama_version=$("$GO" list -C "$here" -m -f '{{.Version}}' github.com/ollama/ollama)
# Stripped (35 MB), and reporting its version as a release build does.
ollama_ldflags="-s -w -X github.com/ollama/ollama/version.Version=${ollama_version#v}"
cgo_opt=-O2            # cgo's default without -g: faster to build, stripped anyway
ollama_hash=$(hash_of "$here/go.mod" "$here/go.sum" $(find "$here/include" -type f | sort))
gguf_hash=$(hash_of "$here/go.mod" "$here/go.sum" "$here"/tinygguf/*.go)

# --- Debian packages that Ollama's cgo build needs ------------------------
# llama.cpp includes nlohmann/json (sampling with JSON schemas) and
# stb_image (image input); Go module zips leave out vendor directories, so
# they come from Debian. miniaudio is not packaged: include/ has a stub.
. "$here/../apt-install.sh"

build_ollama() {
	local need=()
	[ -f /usr/include/nlohmann/json.hpp ] || need+=(nlohmann-json3-dev)
	[ -f /usr/include/stb/stb_image.h ] || need+=(libstb-dev)
	command -v "$("$GO" env CC)" >/dev/null || need+=(gcc)
	command -v "$("$GO" env CXX)" >/dev/null || need+=(g++)
	[ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"

	# The stub headers go to a path that depends only on their contents:
	# the include path is part of every cgo compile's cache key, so a
	# checkout elsewhere on the same machine (CI's fresh clone) then reuses
	# Go's build cache instead of compiling llama.cpp again.
	local inc
	inc="${XDG_CACHE_HOME:-$HOME/.cache}/ruckus-e2e/include-$(cat $(find "$here/include" -type f | sort) | sha256sum | cut -c1-16)"
	mkdir -p "$(dirname "$inc")"
	if [ ! -d "$inc" ]; then
		rm -rf "$inc.new.$$"
		cp -R "$here/include" "$inc.new.$$"
		mv -T "$inc.new.$$" "$inc" 2>/dev/null || rm -rf "$inc.new.$$"
	fi

	say "building ollama $ollama_version into $out/ollama (about 5 minutes on 2 cores the first time)"
	local start=$SECONDS
	CGO_ENABLED=1 \
		CGO_CPPFLAGS="-I$inc${CGO_CPPFLAGS:+ $CGO_CPPFLAGS}" \
		CGO_CFLAGS="${CGO_CFLAGS:-$cgo_opt}" CGO_CXXFLAGS="${CGO_CXXFLAGS:-$cgo_opt}" \
		"$GO" build -C "$here" -trimpath -ldflags="$ollama_ldflags" -o "$out/ollama.new" github.com/ollama/ollama
	mv -f "$out/ollama.new" "$out/ollama"
	"$out/ollama" --help >/dev/null 2>&1 || die "$out/ollama does not run"
	echo "$ollama_hash" >"$out/.ollama.stamp"
	say "ollama built in $((SECONDS - start))s ($(du -h "$out/ollama" | cut -f1))"
}

build_gguf() {
	say "generating $out/tiny.gguf"
	"$GO" build -C "$here" -trimpath -o "$out/tinygguf" ./tinygguf
	"$out/tinygguf" -o "$out/tiny.gguf"
	echo "$gguf_hash" >"$out/.gguf.stamp"
}

fresh "$out/ollama" "$out/.ollama.stamp" "$ollama_hash" || build_ollama
fresh "$out/tiny.gguf" "$out/.gguf.stamp" "$gguf_hash" || build_gguf

say "ollama:    $out/ollama"
say "tiny GGUF: $out/tiny.gguf"
echo "export RUCKUS_OLLAMA=$out/ollama"
echo "export RUCKUS_TINY_GGUF=$out/tiny.gguf"
