#!/usr/bin/env bash
# Builds the Kubernetes control plane that internal/k8s's end-to-end test
# starts for real: etcd, kube-apiserver, kube-controller-manager and kwok
# (which stands in for kubelets), all from the Go module proxy — no container
# runtime, no GitHub downloads. Binaries and kwok's stage files go to
#   ${PLATEAU_K8S_CACHE:-$HOME/.cache/plateau-k8s}/k8s-<K8S_VERSION>/
# and a second run with the same versions returns at once. Cold, on 2 cores,
# this takes about 20 minutes and ~1.2 GB of module downloads (the
# kube-apiserver dominates); the Go module and build caches make later
# rebuilds of other versions shorter.
#
# Usage: scripts/build-k8s-test-bins.sh        (prints the cache directory)
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.36.3}   # k8s.io/kubernetes; verified with this machine's Go
ETCD_VERSION=${ETCD_VERSION:-3.7.3}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}
CACHE=${PLATEAU_K8S_CACHE:-$HOME/.cache/plateau-k8s}
OUT="$CACHE/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=-buildvcs=false CGO_ENABLED=0

log() { echo "build-k8s-test-bins: $*" >&2; }

if [ -f "$OUT/.complete" ]; then
  echo "$OUT"
  exit 0
fi
mkdir -p "$OUT/bin" "$OUT/stages"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)

# etcd: a three-line main around etcdmain (the module has no installable
# command without replace directives).
if [ ! -x "$OUT/bin/etcd" ]; then
  log "etcd v$ETCD_VERSION"
  mkdir -p "$work/etcd"
  cat >"$work/etcd/main.go" <<'EOF'
// Command etcd runs the etcd server.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
  (cd "$work/etcd" && go mod init plateau.local/etcd >/dev/null 2>&1 &&
    go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >/dev/null 2>&1 &&
    go mod tidy >/dev/null 2>&1 &&
    go build -trimpath -o "$OUT/bin/etcd.tmp" . && mv "$OUT/bin/etcd.tmp" "$OUT/bin/etcd")
fi

# kube-apiserver and kube-controller-manager: k8s.io/kubernetes replaces its
# staging modules with local directories, so `go install` refuses it; a
# wrapper module points every staging module at its published v0.x.y.
if [ ! -x "$OUT/bin/kube-apiserver" ] || [ ! -x "$OUT/bin/kube-controller-manager" ]; then
  log "kube-apiserver, kube-controller-manager v$K8S_VERSION"
  gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
  staging=${K8S_VERSION/#1./0.}
  mkdir -p "$work/kube"
  {
    echo "module plateau.local/kube"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    echo "replace ("
    grep -E '^[[:space:]]*k8s\.io/[A-Za-z0-9._-]+ => \./staging/' "$gomod" |
      awk -v v="v$staging" '{print "\t" $1 " => " $1 " " v}'
    echo ")"
  } >"$work/kube/go.mod"
  cat >"$work/kube/tools.go" <<'EOF'
//go:build tools

// Package tools pins the commands this module builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
EOF
  (cd "$work/kube" && go mod tidy >/dev/null &&
    go build -trimpath -o "$OUT/bin/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager)
fi

# kwok: fake kubelets; it needs stage definitions, which ship in its module.
if [ ! -x "$OUT/bin/kwok" ]; then
  log "kwok v$KWOK_VERSION"
  GOBIN="$OUT/bin" go install -trimpath "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
fi
kwokdir="$(go env GOMODCACHE)/sigs.k8s.io/kwok@v$KWOK_VERSION/kustomize/stage"
for s in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml \
  pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  if [ -f "$kwokdir/$s" ]; then
    cp "$kwokdir/$s" "$OUT/stages/$(echo "$s" | tr / -)"
  fi
done
for d in node/fast node/heartbeat pod/fast; do
  [ -d "$kwokdir/$d" ] || continue
  for f in "$kwokdir/$d"/*.yaml; do
    case "$(basename "$f")" in kustomization.yaml) continue ;; esac
    cp "$f" "$OUT/stages/$(echo "$d" | tr / -)-$(basename "$f")"
  done
done
chmod -R u+w "$OUT/stages"
ls "$OUT/stages"/*.yaml >/dev/null

touch "$OUT/.complete"
log "done in $(($(date +%s) - start)) s: $OUT"
echo "$OUT"
