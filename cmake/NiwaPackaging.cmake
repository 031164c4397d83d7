# Install rules and CPack: a DEB (Linux: the engine, the app, a .desktop entry and icon, the
# wsl/ scripts) and a per-user NSIS installer (Windows: the app, the Linux engine build and
# the wsl/ scripts for provisioning the distro). See installer/README.md.
#   cpack -G DEB     (Linux)        cpack -G NSIS    (makensis; any host)
include(GNUInstallDirs)

set(NIWA_LINUX_ENGINE "" CACHE FILEPATH
    "Windows packages: the Linux niwa-engine build to bundle (built in WSL2 or on Linux)")

if(WIN32)
  # Windows: everything under one folder, %LOCALAPPDATA%\Programs\Niwa.
  set(NIWA_SHARE_DIR ".")
  set(NIWA_DOC_DIR "doc")
  if(NIWA_LINUX_ENGINE)
    install(PROGRAMS "${NIWA_LINUX_ENGINE}" DESTINATION engine RENAME niwa-engine)
  endif()
else()
  set(NIWA_SHARE_DIR "${CMAKE_INSTALL_DATADIR}/niwa")
  set(NIWA_DOC_DIR "${CMAKE_INSTALL_DOCDIR}")
  install(FILES "${PROJECT_SOURCE_DIR}/installer/linux/niwa.desktop" DESTINATION "${CMAKE_INSTALL_DATADIR}/applications")
  install(FILES "${PROJECT_SOURCE_DIR}/resources/icons/niwa.svg"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps")
endif()

if(TARGET niwa)
  install(TARGETS niwa RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  if(WIN32 AND COMMAND qt_generate_deploy_qml_app_script)
    # windeployqt: the Qt DLLs, plugins and QML modules next to niwa.exe.
    qt_generate_deploy_qml_app_script(TARGET niwa OUTPUT_SCRIPT NIWA_DEPLOY_SCRIPT)
    install(SCRIPT "${NIWA_DEPLOY_SCRIPT}")
  endif()
endif()

# The provisioning scripts keep their relative places: wsl/linux/install.sh finds
# install-deps.sh at ../../ and the bundled engine at ../../engine/ (Windows) or ../../../../bin/ (Linux).
install(PROGRAMS "${PROJECT_SOURCE_DIR}/wsl/linux/install.sh" "${PROJECT_SOURCE_DIR}/wsl/linux/check-gpu.sh"
                 "${PROJECT_SOURCE_DIR}/wsl/linux/niwa-enginectl" DESTINATION "${NIWA_SHARE_DIR}/wsl/linux")
install(FILES "${PROJECT_SOURCE_DIR}/wsl/windows/niwa-lan.ps1" DESTINATION "${NIWA_SHARE_DIR}/wsl/windows")
install(PROGRAMS "${PROJECT_SOURCE_DIR}/install-deps.sh" DESTINATION "${NIWA_SHARE_DIR}")
install(FILES "${PROJECT_SOURCE_DIR}/docs/USER_GUIDE.md" "${PROJECT_SOURCE_DIR}/docs/USER_GUIDE.ja.md"
              "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${NIWA_DOC_DIR}")

set(CPACK_PACKAGE_NAME "niwa")
set(CPACK_PACKAGE_VENDOR "Niwa")
set(CPACK_PACKAGE_CONTACT "Niwa maintainers <niwa@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "Niwa")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "DEB")
if(WIN32)
  set(CPACK_GENERATOR "NSIS")
endif()

# DEB: dependencies from the binaries' libraries (dpkg-shlibdeps).
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ca-certificates")
if(TARGET niwa)
  # Loaded at run time (QML modules, plugins), so dpkg-shlibdeps cannot see them.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "qml6-module-qtquick, qml6-module-qtquick-controls, qml6-module-qtquick-layouts, qml6-module-qtquick-window, qml6-module-qtquick-templates, qml6-module-qtquick-dialogs, qml6-module-qtqml-workerscript, qml6-module-qt-labs-platform, qt6-qpa-plugins, libqt6sql6-sqlite, libqt6svg6")
endif()
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${PROJECT_DESCRIPTION}
 Runs Ternary-Bonsai-2-27B for a whole office on one PC with consumer GPUs and serves it
 on the LAN through an OpenAI-compatible API: niwa-engine (the server) and Niwa (the
 desktop app).")

# NSIS: our own template (installer/windows/NSIS.template.in): per-user, no administrator.
list(APPEND CMAKE_MODULE_PATH "${PROJECT_SOURCE_DIR}/installer/windows")
set(CPACK_NSIS_PACKAGE_NAME "Niwa")
set(CPACK_NSIS_DISPLAY_NAME "Niwa ${PROJECT_VERSION}")
set(CPACK_PACKAGE_INSTALL_REGISTRY_KEY "Niwa")
set(CPACK_NSIS_COMPRESSOR "/SOLID lzma")

include(CPack)
