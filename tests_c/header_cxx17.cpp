// The header alone must compile as C++17 (see CMakeLists.txt for the flags), with C linkage.
#include "stream_alloc.h"

#include <type_traits>

static_assert(std::is_same<sa_status, int32_t>::value, "sa_status is int32_t");
static_assert(std::is_same<decltype(&sa_status_str), const char *(*)(sa_status)>::value, "C declaration");

int main() {
    return SA_OK;
}
