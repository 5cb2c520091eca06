# SPDX-License-Identifier: GPL-2.0
#
# BPF objects and libbpf skeletons:
#   mroce_bpf_skeleton(<target> <file.bpf.c> [DEPENDS header...])
# compiles <file>.bpf.c with clang -target bpf and turns the object into
# <file>.skel.h (bpftool gen skeleton) in the current binary dir; <target>
# is an INTERFACE library that puts that dir on the include path and links
# libbpf. Sets MROCE_BPF_FOUND when clang, bpftool and libbpf are all there,
# and MROCE_BPF_MISSING to what is not.

find_program(MROCE_BPF_CLANG NAMES clang clang-14 clang-15 clang-16)
find_program(MROCE_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin /usr/local/sbin)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(LIBBPF QUIET IMPORTED_TARGET libbpf>=0.8)
endif()

set(MROCE_BPF_MISSING "")
if(NOT MROCE_BPF_CLANG)
  list(APPEND MROCE_BPF_MISSING clang)
endif()
if(NOT MROCE_BPFTOOL)
  list(APPEND MROCE_BPF_MISSING bpftool)
endif()
if(NOT LIBBPF_FOUND)
  list(APPEND MROCE_BPF_MISSING libbpf-dev)
endif()
if(MROCE_BPF_MISSING)
  set(MROCE_BPF_FOUND OFF)
else()
  set(MROCE_BPF_FOUND ON)
endif()

function(mroce_bpf_skeleton target src)
  cmake_parse_arguments(ARG "" "" "DEPENDS" ${ARGN})
  get_filename_component(abs ${src} ABSOLUTE)
  get_filename_component(dir ${abs} DIRECTORY)
  get_filename_component(base ${abs} NAME)
  string(REGEX REPLACE "\\.bpf\\.c$" "" name ${base})
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
  set(skel ${CMAKE_CURRENT_BINARY_DIR}/${name}.skel.h)
  # <asm/types.h> lives under the multiarch directory on Debian.
  set(arch_inc /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
  add_custom_command(OUTPUT ${obj}
    COMMAND ${MROCE_BPF_CLANG} -g -O2 -target bpf -Wall -Werror
            -I${arch_inc} -I${dir} -c ${abs} -o ${obj}
    DEPENDS ${abs} ${ARG_DEPENDS}
    COMMENT "BPF ${base}"
    VERBATIM)
  add_custom_command(OUTPUT ${skel}
    COMMAND sh -c "${MROCE_BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}.tmp && mv ${skel}.tmp ${skel}"
    DEPENDS ${obj}
    COMMENT "skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(${target}_gen DEPENDS ${skel})
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_gen)
  target_include_directories(${target} INTERFACE ${CMAKE_CURRENT_BINARY_DIR})
  target_link_libraries(${target} INTERFACE PkgConfig::LIBBPF)
endfunction()
