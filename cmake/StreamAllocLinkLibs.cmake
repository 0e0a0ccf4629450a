# The system libraries a Rust staticlib needs on Linux (`rustc --print native-static-libs`:
# -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc). Shared by the build tree and the installed
# package config.
find_package(Threads REQUIRED)
set(STREAM_ALLOC_STATIC_LINK_LIBS Threads::Threads ${CMAKE_DL_LIBS} m rt util gcc_s)
