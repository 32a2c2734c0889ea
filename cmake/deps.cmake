# deps.cmake - optional libraries of the specialised operators, found with
# pkg-config (Debian -dev packages installed by scripts/setup.sh). Each one
# found is compiled into the library objects with a macro ONNXC_HAVE_<NAME>
# and linked to libonnxc.so / libonnxc.a (cmake/library.cmake); without it the
# library still builds and the operator (or image format) reports a clear
# "not available in this build" error.
#
#   PCRE2    libpcre2-8   RegexFullMatch
#   UTF8PROC libutf8proc  StringNormalizer case mapping (else ASCII only)
#   JPEG     libjpeg      ImageDecoder JPEG
#   PNG      libpng       ImageDecoder PNG
#   TIFF     libtiff-4    ImageDecoder TIFF
#   WEBP     libwebp      ImageDecoder WebP
#   OPENJP2  libopenjp2   ImageDecoder JPEG 2000
#
# Results: ONNXC_OPTIONAL_FOUND (names), ONNXC_DEP_TARGETS (imported targets
# for the build tree), ONNXC_DEP_DEFINES (the ONNXC_HAVE_ macros),
# ONNXC_DEP_LIBS (plain library names, for the installed package and onnxc.pc).
option(ONNXC_OPTIONAL_DEPS "link the optional libraries of the specialised operators" ON)

if(ONNXC_OPTIONAL_DEPS)
  find_package(PkgConfig QUIET)
endif()

set(ONNXC_OPTIONAL_FOUND "")
set(ONNXC_DEP_TARGETS "")
set(ONNXC_DEP_DEFINES "")
set(ONNXC_DEP_LIBS "")
if(PKG_CONFIG_FOUND)
  foreach(dep PCRE2:libpcre2-8 UTF8PROC:libutf8proc JPEG:libjpeg PNG:libpng TIFF:libtiff-4
              WEBP:libwebp OPENJP2:libopenjp2)
    string(REPLACE ":" ";" pair "${dep}")
    list(GET pair 0 name)
    list(GET pair 1 module)
    pkg_check_modules(ONNXC_DEP_${name} QUIET IMPORTED_TARGET ${module})
    if(ONNXC_DEP_${name}_FOUND)
      list(APPEND ONNXC_OPTIONAL_FOUND ${name})
      list(APPEND ONNXC_DEP_TARGETS PkgConfig::ONNXC_DEP_${name})
      list(APPEND ONNXC_DEP_DEFINES ONNXC_HAVE_${name}=1)
      list(APPEND ONNXC_DEP_LIBS ${ONNXC_DEP_${name}_LIBRARIES})
    endif()
  endforeach()
endif()
message(STATUS "onnxc: optional libraries: ${ONNXC_OPTIONAL_FOUND}")

# The server of `onnxc serve` (src/serve/, linked into the tool only, not the
# library): libmicrohttpd for HTTP, jansson for JSON, GnuTLS (which
# libmicrohttpd-dev brings) for the reloadable certificate. Without them, the
# tool still builds and `onnxc serve` says that it was built without the server.
# The gRPC endpoint (--grpc-port) also needs gRPC's C core (libgrpc-dev);
# without it, the REST server is built alone and --grpc-port says so.
option(ONNXC_SERVE "build the HTTP server of onnxc serve (needs libmicrohttpd and jansson)" ON)
set(ONNXC_SERVE_FOUND FALSE)
if(ONNXC_SERVE AND NOT PKG_CONFIG_FOUND)
  find_package(PkgConfig QUIET)
endif()
if(ONNXC_SERVE AND PKG_CONFIG_FOUND)
  pkg_check_modules(ONNXC_SERVE_MHD QUIET IMPORTED_TARGET libmicrohttpd)
  pkg_check_modules(ONNXC_SERVE_JANSSON QUIET IMPORTED_TARGET jansson)
  pkg_check_modules(ONNXC_SERVE_GNUTLS QUIET IMPORTED_TARGET gnutls)
  if(ONNXC_SERVE_MHD_FOUND AND ONNXC_SERVE_JANSSON_FOUND AND ONNXC_SERVE_GNUTLS_FOUND)
    set(ONNXC_SERVE_FOUND TRUE)
  endif()
endif()
option(ONNXC_GRPC "build the gRPC endpoint of onnxc serve (needs libgrpc-dev)" ON)
set(ONNXC_GRPC_FOUND FALSE)
if(ONNXC_SERVE_FOUND AND ONNXC_GRPC)
  pkg_check_modules(ONNXC_SERVE_GRPC QUIET IMPORTED_TARGET grpc)
  if(ONNXC_SERVE_GRPC_FOUND)
    set(ONNXC_GRPC_FOUND TRUE)
  endif()
endif()
if(ONNXC_SERVE_FOUND)
  message(STATUS "onnxc: server (onnxc serve): libmicrohttpd ${ONNXC_SERVE_MHD_VERSION}, jansson ${ONNXC_SERVE_JANSSON_VERSION}, gnutls ${ONNXC_SERVE_GNUTLS_VERSION}")
  if(ONNXC_GRPC_FOUND)
    message(STATUS "onnxc: gRPC endpoint (onnxc serve --grpc-port): grpc core ${ONNXC_SERVE_GRPC_VERSION}")
  else()
    message(STATUS "onnxc: gRPC endpoint (onnxc serve --grpc-port): off (needs libgrpc-dev)")
  endif()
else()
  message(STATUS "onnxc: server (onnxc serve): off (needs libmicrohttpd-dev, libjansson-dev and libgnutls28-dev)")
endif()
