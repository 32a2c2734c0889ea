# install.cmake - `cmake --install build --prefix P` (and `make install
# PREFIX=P`): the two libraries, onnxc.h, the onnxc tool, onnxc.pc and the
# CMake package onnxc (find_package(onnxc) gives onnxc::onnxc, shared, and
# onnxc::onnxc_static). Both package files locate the prefix from their own
# place, so the tree may be installed anywhere and moved.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ONNXC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/onnxc)
set(ONNXC_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS onnxc onnxc_shared EXPORT onnxcTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS onnxc_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES include/onnxc.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT onnxcTargets NAMESPACE onnxc:: DESTINATION ${ONNXC_CMAKE_DIR})
configure_package_config_file(cmake/onnxcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/onnxcConfig.cmake
                              INSTALL_DESTINATION ${ONNXC_CMAKE_DIR})
# 0.x: a new minor version may change the API
write_basic_package_version_file(${PROJECT_BINARY_DIR}/onnxcConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/onnxcConfig.cmake
              ${PROJECT_BINARY_DIR}/onnxcConfigVersion.cmake
        DESTINATION ${ONNXC_CMAKE_DIR})

# onnxc.pc: prefix relative to the .pc file (${pcfiledir}); Libs.private are
# what a static link needs besides libonnxc.a.
file(RELATIVE_PATH ONNXC_PC_TO_PREFIX /prefix/${ONNXC_PKGCONFIG_DIR} /prefix)
string(REGEX REPLACE "/$" "" ONNXC_PC_TO_PREFIX "${ONNXC_PC_TO_PREFIX}")
set(ONNXC_PC_LIBS_PRIVATE "-lm -lpthread")
foreach(lib IN LISTS ONNXC_DEP_LIBS)
  string(APPEND ONNXC_PC_LIBS_PRIVATE " -l${lib}")
endforeach()
configure_file(cmake/onnxc.pc.in ${PROJECT_BINARY_DIR}/onnxc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/onnxc.pc DESTINATION ${ONNXC_PKGCONFIG_DIR})
