# The system libraries the static library needs on Linux (`rustc --print native-static-libs`:
# -lstdc++ -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc). libstdc++ is for the library's C++ unit
# (GE's allocator classes), so a C-only program linking the static library needs it too.
# Shared by the build tree and the installed package config.
find_package(Threads REQUIRED)
set(STREAM_ALLOC_STATIC_LINK_LIBS stdc++ Threads::Threads ${CMAKE_DL_LIBS} m rt util gcc_s)
