# SPDX-License-Identifier: Apache-2.0
# Cross build for 64-bit ARM Linux (aarch64-linux-gnu) on Debian, with the
# cross compiler of crossbuild-essential-arm64 and the :arm64 dev packages
# installed side by side through multiarch:
#
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install crossbuild-essential-arm64 libusb-1.0-0-dev:arm64 \
#       libssl-dev:arm64 zlib1g-dev:arm64 [libsodium-dev:arm64]
#   cmake -S . -B build-arm64 \
#       -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#
# scripts/cross-test builds with it and runs the result under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(ADBC_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${ADBC_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ADBC_CROSS_TRIPLE}-g++)
# Debian multiarch: arm64 libraries in /usr/lib/aarch64-linux-gnu, headers
# in /usr/include (arch-specific ones under /usr/include/aarch64-linux-gnu),
# the cross C library in /usr/aarch64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE ${ADBC_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH /usr/${ADBC_CROSS_TRIPLE} /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config must see the arm64 .pc files only, never the host's.
find_program(ADBC_CROSS_PKG_CONFIG ${ADBC_CROSS_TRIPLE}-pkg-config)
if(ADBC_CROSS_PKG_CONFIG)
  set(PKG_CONFIG_EXECUTABLE ${ADBC_CROSS_PKG_CONFIG} CACHE FILEPATH "pkg-config for ${ADBC_CROSS_TRIPLE}")
else()
  set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${ADBC_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
  set(ENV{PKG_CONFIG_PATH} "")
endif()

# Lets ctest and try_run run target programs through qemu-user. No -L: the
# programs load the multiarch arm64 C library (libc6:arm64, brought by the
# :arm64 dev packages) with its own loader, /lib/ld-linux-aarch64.so.1.
# Taking the loader from libc6-arm64-cross instead (-L /usr/aarch64-linux-gnu)
# mixes two glibc builds when their versions differ, and threads hang.
find_program(ADBC_CROSS_QEMU NAMES qemu-aarch64-static qemu-aarch64)
if(ADBC_CROSS_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ADBC_CROSS_QEMU})
endif()
