# What `cmake --install BUILD --prefix P` and `cpack -G DEB` put under the
# prefix (docs/install.md): the tools (each registered by sprof_tool() in
# its own CMakeLists.txt), libsprof.so and libsprof_rt.a (runtime-stub/),
# the headers, sprof.pc and the man pages (docs/man/).
configure_file(${CMAKE_CURRENT_LIST_DIR}/sprof.pc.in ${CMAKE_BINARY_DIR}/install-files/sprof.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install-files/sprof.pc DESTINATION lib/pkgconfig)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION share/doc/sprof)

# ---- Debian package: cpack -G DEB -> sprof_<version>_amd64.deb ----
set(CPACK_PACKAGE_NAME sprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "sprof maintainers <sprof@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "sampling profiler for Ruby programs compiled to C by Spinel")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # sprof_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Shared-library dependencies (libelf, libdwarf, jansson, zlib) from the
# binaries themselves, as dpkg-shlibdeps finds them.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "graphviz, gcc | c-compiler, pkg-config") # dot for --svg; sprof-cc runs cc
include(CPack)
