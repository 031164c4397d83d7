#!/usr/bin/env bash
# Stages, from this (Debian) machine, the headers and libraries the engine needs that the GPU
# machine's image lacks (PCRE2, utf8proc, cpp-httplib) into .deps/, which travels with `carry`.
set -euo pipefail
cd "$(dirname "$0")/../.."
lib=/usr/lib/x86_64-linux-gnu
mkdir -p .deps/include .deps/lib
cp /usr/include/pcre2.h /usr/include/utf8proc.h /usr/include/httplib.h .deps/include/
cp -L "$lib/libpcre2-8.so.0" "$lib/libutf8proc.so.2" "$lib/libcpp-httplib.so.0.11" .deps/lib/
ln -sf libpcre2-8.so.0 .deps/lib/libpcre2-8.so
ln -sf libutf8proc.so.2 .deps/lib/libutf8proc.so
ln -sf libcpp-httplib.so.0.11 .deps/lib/libcpp-httplib.so
du -sh .deps
