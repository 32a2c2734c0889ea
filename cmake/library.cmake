# library.cmake - libonnxc.a and libonnxc.so from the objects of
# onnxc_objects (CMakeLists.txt). The optional libraries of cmake/deps.cmake
# are linked through their pkg-config targets in the build tree and by plain
# name in the installed package (the paths of this machine do not belong in
# it).
target_compile_definitions(onnxc_objects PRIVATE ${ONNXC_DEP_DEFINES})
target_link_libraries(onnxc_objects PRIVATE ${ONNXC_DEP_TARGETS})

set(ONNXC_INCLUDE_INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                            $<INSTALL_INTERFACE:include>)

# Static: what the tool and the tests link (they use internal symbols too).
add_library(onnxc STATIC $<TARGET_OBJECTS:onnxc_objects>)
set_target_properties(onnxc PROPERTIES EXPORT_NAME onnxc_static)
target_include_directories(onnxc PUBLIC ${ONNXC_INCLUDE_INTERFACE})
target_compile_definitions(onnxc PUBLIC "$<BUILD_INTERFACE:${ONNXC_DEP_DEFINES}>")
target_link_libraries(onnxc PUBLIC Threads::Threads m)
target_link_libraries(onnxc PUBLIC "$<BUILD_INTERFACE:${ONNXC_DEP_TARGETS}>"
                                   "$<INSTALL_INTERFACE:${ONNXC_DEP_LIBS}>")

# Shared: versioned soname (libonnxc.so.MAJOR), only the onnxc_* API exported.
add_library(onnxc_shared SHARED $<TARGET_OBJECTS:onnxc_objects>)
set_target_properties(onnxc_shared PROPERTIES
  OUTPUT_NAME onnxc EXPORT_NAME onnxc
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
target_include_directories(onnxc_shared PUBLIC ${ONNXC_INCLUDE_INTERFACE})
target_link_libraries(onnxc_shared PRIVATE Threads::Threads m ${ONNXC_DEP_TARGETS})
target_link_options(onnxc_shared PRIVATE
                    -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/onnxc.map)
set_property(TARGET onnxc_shared APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/onnxc.map)
if(NOT ONNXC_SANITIZE AND NOT ONNXC_FUZZ AND NOT ONNXC_TSAN)
  # every symbol resolved at link time (the sanitizer runtimes are not linked
  # into shared libraries, so not in those builds)
  target_link_options(onnxc_shared PRIVATE -Wl,--no-undefined)
endif()
