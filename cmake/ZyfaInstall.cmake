# Installation of libzyfa: the header, the shared library with its SONAME chain
# (libzyfa.so -> libzyfa.so.0 -> libzyfa.so.0.1.0), a CMake package exporting zyfa::zyfa, and
# zyfa.pc. GPU runtimes are loaded with dlopen at run time, so neither the CMake package nor
# zyfa.pc names one as a dependency. The static zyfa_internal archive is for tests only and is
# never installed.
include(CMakePackageConfigHelpers)

set(ZYFA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/zyfa)

install(TARGETS zyfa EXPORT zyfaTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The include directory reaches zyfa::zyfa through the target's $<INSTALL_INTERFACE:...> entry.
install(FILES ${PROJECT_SOURCE_DIR}/include/zyfa.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# --- CMake package: find_package(zyfa) + target_link_libraries(app PRIVATE zyfa::zyfa) ---------
install(EXPORT zyfaTargets NAMESPACE zyfa:: FILE zyfaTargets.cmake
        DESTINATION ${ZYFA_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/zyfaConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/zyfaConfig.cmake
                              INSTALL_DESTINATION ${ZYFA_INSTALL_CMAKEDIR})
# Before 1.0 a minor release may change the ABI (the SONAME then changes too), so a request for
# 0.1 accepts only 0.1.x; from 1.0 on, any later release of the same major is compatible.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(ZYFA_VERSION_COMPATIBILITY SameMinorVersion)
else()
  set(ZYFA_VERSION_COMPATIBILITY SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/zyfaConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY ${ZYFA_VERSION_COMPATIBILITY})
install(FILES ${PROJECT_BINARY_DIR}/zyfaConfig.cmake ${PROJECT_BINARY_DIR}/zyfaConfigVersion.cmake
        DESTINATION ${ZYFA_INSTALL_CMAKEDIR})

# --- pkg-config: zyfa.pc -------------------------------------------------------------------------
# Written at install time, not configure time, so that `cmake --install <dir> --prefix <p>` gets
# a zyfa.pc naming <p> rather than the prefix the tree was configured with. The first block
# carries configure-time values into the install script; the second runs there, where
# CMAKE_INSTALL_PREFIX is the prefix actually used. file(INSTALL) honours DESTDIR and records
# the file in install_manifest.txt.
install(CODE "
  set(ZYFA_PC_TEMPLATE [[${PROJECT_SOURCE_DIR}/zyfa.pc.in]])
  set(ZYFA_PC_STAGING_DIR [[${PROJECT_BINARY_DIR}/pkgconfig-install]])
  set(ZYFA_PC_LIBDIR_SETTING [[${CMAKE_INSTALL_LIBDIR}]])
  set(ZYFA_PC_INCLUDEDIR_SETTING [[${CMAKE_INSTALL_INCLUDEDIR}]])
  set(PROJECT_VERSION [[${PROJECT_VERSION}]])
  set(PROJECT_DESCRIPTION [[${PROJECT_DESCRIPTION}]])
")
install(CODE [[
  set(ZYFA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  # GNUInstallDirs values are relative to the prefix unless the user gave absolute ones.
  foreach(kind LIBDIR INCLUDEDIR)
    if(IS_ABSOLUTE "${ZYFA_PC_${kind}_SETTING}")
      set(ZYFA_PC_${kind} "${ZYFA_PC_${kind}_SETTING}")
    else()
      set(ZYFA_PC_${kind} "\${prefix}/${ZYFA_PC_${kind}_SETTING}")
    endif()
  endforeach()
  if(IS_ABSOLUTE "${ZYFA_PC_LIBDIR_SETTING}")
    set(ZYFA_PC_DESTINATION "${ZYFA_PC_LIBDIR_SETTING}/pkgconfig")
  else()
    set(ZYFA_PC_DESTINATION "${CMAKE_INSTALL_PREFIX}/${ZYFA_PC_LIBDIR_SETTING}/pkgconfig")
  endif()
  configure_file("${ZYFA_PC_TEMPLATE}" "${ZYFA_PC_STAGING_DIR}/zyfa.pc" @ONLY)
  file(INSTALL "${ZYFA_PC_STAGING_DIR}/zyfa.pc" DESTINATION "${ZYFA_PC_DESTINATION}")
]])

# --- the Python wheel: only libzyfa, as zyfa/libzyfa.so.0 ------------------------------------------
# bindings/python/pyproject.toml (scikit-build-core) installs just this component into the wheel's
# platlib, next to the package's .py files, where bindings/python/zyfa/_lib.py looks for it. One
# real file under the SONAME: a wheel cannot hold symlinks, so the libzyfa.so -> .so.0 -> .so.0.1.0
# chain would become three copies. EXCLUDE_FROM_ALL: a plain `cmake --install` never installs it.
install(FILES $<TARGET_FILE:zyfa> DESTINATION zyfa RENAME libzyfa.so.${PROJECT_VERSION_MAJOR}
        COMPONENT python_wheel EXCLUDE_FROM_ALL)
