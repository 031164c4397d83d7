#!/usr/bin/env bash
# Stages, from this (Debian) machine, the headers and libraries the engine needs that the GPU
# machine's image lacks (PCRE2, utf8proc, cpp-httplib) into .deps/, which travels with `carry`,
# and Qt Core + Test (for the gpu-labelled Qt Test executables) as the Debian packages' files
# in .deps/qt-stage.tar.xz, which run.sh unpacks over the image's / (nothing there is replaced).
set -euo pipefail
cd "$(dirname "$0")/../.."
lib=/usr/lib/x86_64-linux-gnu
mkdir -p .deps/include .deps/lib
cp /usr/include/pcre2.h /usr/include/utf8proc.h /usr/include/httplib.h .deps/include/
cp -L "$lib/libpcre2-8.so.0" "$lib/libutf8proc.so.2" "$lib/libcpp-httplib.so.0.11" .deps/lib/
ln -sf libpcre2-8.so.0 .deps/lib/libpcre2-8.so
ln -sf libutf8proc.so.2 .deps/lib/libutf8proc.so
ln -sf libcpp-httplib.so.0.11 .deps/lib/libcpp-httplib.so
qt_packages=(libqt6core6 libqt6test6 libicu72 libdouble-conversion3 libb2-1 libpcre2-16-0 qt6-base-dev-tools qmake6 qmake6-bin libglib2.0-0
  qt6-base-dev)
for p in "${qt_packages[@]}"; do dpkg -L "$p"; done | grep -v -E '^/usr/share/(doc|man|lintian)/' | sort -u |
  while read -r f; do if [ -f "$f" ] || [ -L "$f" ]; then echo "${f#/}"; fi; done >.deps/qt-stage.list
tar cJf .deps/qt-stage.tar.xz -C / --no-recursion -T .deps/qt-stage.list
rm .deps/qt-stage.list
du -sh .deps
